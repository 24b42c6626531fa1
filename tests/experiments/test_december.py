"""Talby's December run is reproducible: CP-SAT's deterministic time limits every call, the
wall clock is only a reported guard, so the same command writes the same files twice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sim.experiments.talby import december


def run_files(out: Path, *args: str) -> dict[str, bytes]:
    assert december.main(["--quick", "--out", str(out), *args]) == 0
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.study
def test_the_quick_december_run_twice_gives_identical_files(tmp_path: Path) -> None:
    # a tiny deterministic budget, so that searches are stopped by it, not only proved
    args = ("--dtime", "0.001", "--time-limit", "60")
    first = run_files(tmp_path / "out", *args)
    second = run_files(tmp_path / "out", *args)
    assert set(first) == {"analysis.md", "starts.json"}
    assert first == second
    head = first["analysis.md"].decode()
    stopped = int(re.search(r"FEASIBLE (\d+)", head).group(1))
    assert stopped > 0, "no call was stopped by the deterministic limit: the test tests nothing"
    assert "reached the wall-clock guard (both CP-SAT runs): 0 " in head
    assert "PARTIAL" in head


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="dtime"):
        december.Limits(dtime=0.0)
    assert "no deterministic limit" in december.Limits(dtime=None, guard=1.0).describe()


def test_the_optimal_inserter_takes_a_deterministic_limit_for_cpsat_only() -> None:
    from models.slack_insertion import CpsatInserter, OptimalInsertionPolicy

    with pytest.raises(ValueError, match="dtime"):
        CpsatInserter(dtime=1.0, solver="ilp")
    with pytest.raises(ValueError, match="dtime"):
        CpsatInserter(dtime=-1.0)
    pol = OptimalInsertionPolicy(dtime=0.5, time_limit=20.0)
    assert pol.inserter.dtime == 0.5 and pol.inserter.stats["guard"] == 0


def test_the_committed_december_run_ran_under_deterministic_limits_and_no_guard_fired() -> None:
    import json

    head = (december.OUT / "analysis.md").read_text().split("\n## ", 1)[0]
    starts = json.loads((december.OUT / "starts.json").read_text())
    assert "PARTIAL" not in head and starts["jobs"] == len(december._month().jobs)
    assert starts["dtime"] is not None and starts["dtime"] > 0
    assert re.search(r"CP-SAT deterministic time [0-9.]+ per stage", head)
    assert starts["guard_reached"] == 0
    assert "reached the wall-clock guard (both CP-SAT runs): 0 " in head
    assert not re.search(r"--dtime[ =]0(?![.\d])", head + starts["command"])
    assert re.search(r"commit [0-9a-f]{7,40}[,;]", head) and "-dirty" not in head


def test_the_reading_says_how_much_of_the_loss_the_stopped_calls_explain() -> None:
    # best of both removes 0.1 of 3.6 points: little, not most
    assert "little" in december.reading(1000.0, 1036.0, 1035.0)
    assert "most of the degradation" in december.reading(1000.0, 1788.0, 1028.0)
    assert "within 1%" in december.reading(1000.0, 1300.0, 1005.0)
    assert december.reading(1000.0, 1005.0, 1050.0).startswith("even decisions")
    assert december.reading(1000.0, 990.0, 1001.0).startswith("neither run")
