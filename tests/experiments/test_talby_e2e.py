"""Talby's end-to-end runs (``talby.gaps e2e``) under CP-SAT's deterministic limit: the
same month gives the same schedules twice, and its record says which limit it ran under."""

from __future__ import annotations

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
