"""K-resource runs report the utilization of every resource, not of processors only."""

from __future__ import annotations

import json

import numpy as np
import pytest

from instances.kresource import KResourceSpec, generate, write_kswf
from sim.cli import main


def test_simulate_and_compare_report_every_resource(tmp_path, capsys):
    src = tmp_path / "w.kswf"
    w = generate(KResourceSpec(K=3, jobs=200, seed=2, rate=0.02))
    write_kswf(src, w)
    assert main(["simulate", str(src), "--policy", "easy", "--quiet", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    from heuristics.backfill import EASY
    from sim.batch.machine import simulate

    s = simulate(w, EASY())
    span = int(s.end.max() - min(j.submit for j in w.jobs))
    dem = np.array([j.demand for j in w.jobs])
    hand = [float((dem[:, k] * (s.end - s.start)).sum()) / (w.capacity[k] * span)
            for k in range(3)]
    assert row["utilization_per_resource"] == pytest.approx(hand)
    assert len(set(np.round(hand, 6))) == 3  # the resources differ: not resource 0 thrice
    assert main(["compare", str(src), "--policies", "fcfs,easy", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "/".join(f"{u:.3f}" for u in hand) in out and "r0/r1" in out
