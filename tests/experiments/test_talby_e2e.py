"""Talby's end-to-end runs and gaps table (``talby.gaps``) under CP-SAT's deterministic
limit: the same month (the same snapshot set) gives the same schedules (the same table)
twice, and its record says which limit it ran under."""

from __future__ import annotations

import re

import pytest

from sim.experiments.talby import gaps


def _bare(rec: dict) -> dict:
    """The record without its timings (the only machine-dependent fields)."""
    out = {**rec, "AST": dict(rec["AST"]), "optimal": dict(rec["optimal"]),
           "optimal_calls": dict(rec["optimal_calls"])}
    for part in ("AST", "optimal"):
        out[part].pop("sim_seconds")
    out["optimal_calls"].pop("seconds")
    return out


@pytest.mark.study
def test_an_e2e_month_under_a_deterministic_limit_is_the_same_twice() -> None:
    # a tiny budget, so that some calls are stopped by it rather than proved
    first, second = (gaps.e2e_month("1996-12", 60.0, dtime=0.001, max_jobs=200)
                     for _ in range(2))
    assert _bare(first) == _bare(second)
    assert first["dtime"] == 0.001 and "commit" in first and "command" in first
    assert first["optimal_calls"]["FEASIBLE"] > 0, "no call stopped: the test tests nothing"
    assert gaps._limit(first) == "det. 0.001 (guard 60 s reached 0x)"
    assert gaps._limit({"time_limit": 1.0}) == "wall 1 s"


@pytest.mark.parametrize("args", [["--dtime", "0"], ["--time-limit", "-1"]])
def test_e2e_refuses_a_limit_that_is_not_positive(args: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as e:
        gaps.main(["e2e", "--months", "1996-12", *args])
    assert e.value.code == 2 and "must be > 0" in capsys.readouterr().err


def _untimed(text: str) -> str:
    """The gaps table without its run-time line (the only machine-dependent one)."""
    return "\n".join(x for x in text.splitlines() if not x.startswith("Run time:"))


@pytest.mark.study
def test_the_gaps_table_under_a_deterministic_limit_is_the_same_twice(tmp_path,
                                                                     monkeypatch) -> None:
    monkeypatch.setattr(gaps, "RESULTS", tmp_path)
    # a tiny budget, so that some problems are stopped by it rather than proved
    first, second = (gaps.gaps(12, 60.0, exhaustive_k=3, dtime=0.002) for _ in range(2))
    assert _untimed(first) == _untimed(second)
    assert "--time-limit 60 --dtime 0.002 --compress hold` at commit" in first
    assert "deterministic time 0.002 per stage, with a wall-clock guard of 60 s reached " \
           "by 0 problems" in first
    proved = re.search(r"CP-SAT proved (\d+) of (\d+) problems", first)
    assert 0 < int(proved[1]) < int(proved[2]), "all or none proved: the test tests nothing"
    assert (tmp_path / "slack_gaps.md").read_text() == second


def test_gaps_refuses_a_limit_that_is_not_positive(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        gaps.main(["gaps", "--dtime", "0"])
    assert e.value.code == 2 and "must be > 0" in capsys.readouterr().err


def test_a_gaps_run_off_its_full_configuration_leaves_the_committed_table(
        tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(gaps, "RESULTS", tmp_path / "committed")
    monkeypatch.setattr(gaps, "PARTIAL_DIR", tmp_path / "partial")
    assert gaps.main(["gaps", "--kmax", "1", "--dtime", "0.01"]) == 0
    assert not (tmp_path / "committed" / "slack_gaps.md").exists()
    assert "--kmax 1 --time-limit 120 --dtime 0.01" in \
        (tmp_path / "partial" / "slack_gaps.md").read_text()
    assert "not the full configuration" in capsys.readouterr().err
