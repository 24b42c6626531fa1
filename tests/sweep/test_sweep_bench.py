"""The sweep benchmark's split of the second worker's time: the pool's own cost measured
with every process on one core, and the machine's own scaling on the same work."""

from __future__ import annotations

import os

import pytest

from sim.experiments.engine import sweep_bench

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity"),
                                reason="needs Linux CPU affinity")


def test_the_pinned_runs_use_one_core_and_give_the_affinity_back(tmp_path, monkeypatch):
    seen = []
    real = sweep_bench.run_sweep

    def spy(spec, out, jobs):
        seen.append((jobs, os.sched_getaffinity(0)))
        return real(spec, out, jobs=jobs)

    monkeypatch.setattr(sweep_bench, "run_sweep", spy)
    before = os.sched_getaffinity(0)
    cpu = sweep_bench.pinned_pool_cpu(sweep_bench.overhead_spec(6), tmp_path)
    assert os.sched_getaffinity(0) == before
    assert [j for j, _ in seen] == [1, 2]
    assert all(a == {min(before)} for _, a in seen)
    assert cpu[1] > 0 and cpu[2] > 0


def test_the_pair_runs_two_copies_and_reports_each(tmp_path):
    alone, pair = sweep_bench.machine_pair(sweep_bench.overhead_spec(6), tmp_path)
    assert len(pair) == 2
    assert all(w > 0 and c > 0 for w, c in [alone, *pair])
    assert {p.name for p in tmp_path.glob("*.sqlite")} >= {"alone.sqlite", "pair1.sqlite",
                                                          "pair2.sqlite"}
