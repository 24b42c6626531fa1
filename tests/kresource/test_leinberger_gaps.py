"""Leinberger's gaps run is reproducible: CP-SAT's deterministic time limits every exact
call, the wall clock is only a guard the file reports, so one configuration writes the
same files twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.experiments.leinberger import figs

# tiny deterministic budgets, so that searches are stopped by them, not only proved
SMALL = {"K": [8], "gap_jobs": 400, "gap_queue": 32, "decision_dtime": 0.001,
         "decision_guard": 60.0, "epoch_instances": 12, "epoch_dtime": 0.001,
         "epoch_guard": 60.0}


def run_files(out: Path) -> dict[str, bytes]:
    figs.gaps(out, True, dict(SMALL))
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.suffix != ".png"}


@pytest.mark.study
def test_the_gaps_run_twice_gives_identical_files(tmp_path: Path) -> None:
    first = run_files(tmp_path / "out")
    second = run_files(tmp_path / "out")
    assert set(first) == {"gaps.md", "gaps.json"}
    assert first == second
    data = json.loads(first["gaps.json"])
    dec, ep = data["decisions"]["8"], data["epochs"]["8"]
    assert dec["not_proved"] > 0 and ep["proved"] < ep["instances"], \
        "no call was stopped by the deterministic limit: the test tests nothing"
    assert dec["wall_stopped"] == 0 and ep["wall_stopped"] == 0
    md = first["gaps.md"].decode()
    assert "**the wall-clock guard stopped no call**" in md
    assert f"K = 8: {dec['not_proved']};" in md
