"""Talby's end-to-end runs and gaps table (``talby.gaps``) under CP-SAT's deterministic
limit: the same month (the same snapshot set) gives the same schedules (the same table)
twice, and its record says which limit it ran under."""

from __future__ import annotations

import json
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


# ------------------------------------------------------------ differential priorities
def test_differential_priorities_reach_every_policy_of_the_run() -> None:
    """Table 3's table changes the heuristic and the optimal schedules of a month slice,
    and its groups are the log's every fifth job."""
    prio = gaps.e2e_prio_month("1996-12", 60.0, dtime=1.0, max_jobs=100)
    equal = gaps.e2e_month("1996-12", 60.0, dtime=1.0, max_jobs=100)
    assert prio["AST"]["avg_wait"] != equal["AST"]["avg_wait"]
    assert prio["optimal"]["avg_wait"] != equal["optimal"]["avg_wait"]
    assert prio["jobs"] == 100 and prio["high_jobs"] == 20  # 100 consecutive log positions
    for p in (*gaps.PRIO_ORDERS, "optimal"):
        r = prio[p]
        mixed = (20 * r["avg_wait_high"] + 80 * r["avg_wait_ordinary"]) / 100
        assert mixed == pytest.approx(r["avg_wait"], rel=1e-12)
    # the priorities favour the high-priority jobs in this slice under every policy
    assert all(prio[p]["avg_wait_high"] < prio[p]["avg_wait_ordinary"]
               for p in (*gaps.PRIO_ORDERS, "optimal"))
    calls = prio["optimal_calls"]
    assert calls["OPTIMAL"] > 0 and "seconds" not in calls  # no wall clock in the record


@pytest.mark.parametrize("args", [
    ["e2e", "--priorities", "unequal", "--months", "1996-12"],
    ["e2e", "--priorities", "differential", "--months", "1996-12", "1900-01"],
    ["e2e", "--months", "1996-13"],
    ["gaps", "--priorities", "differential"],
])
def test_e2e_refuses_a_bad_setting_with_one_line_writing_nothing(
        args: list[str], tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(gaps, "RESULTS", tmp_path / "results")
    with pytest.raises(SystemExit) as e:
        gaps.main(args)
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and len(err.splitlines()) == 1 and "error:" in err
    assert not (tmp_path / "results").exists()


def _slice(label: str, jobs: int = 120):
    """The first ``jobs`` jobs of a month, in place of the whole month."""
    from dataclasses import replace

    month = gaps._months()[label]
    return replace(month, jobs=tuple(month.jobs[:jobs]))


@pytest.mark.study
def test_a_differential_run_writes_its_own_files_the_same_twice(tmp_path, monkeypatch,
                                                                capsys) -> None:
    monkeypatch.setattr(gaps, "_month", _slice)
    written = []
    for run in ("a", "b"):
        out = tmp_path / run
        out.mkdir()
        (out / "slack_e2e_1997-03.json").write_text("equal month")
        (out / "slack_e2e.md").write_text("equal table")
        monkeypatch.setattr(gaps, "RESULTS", out)
        # a tiny deterministic budget, so that some calls are stopped by it
        assert gaps.main(["e2e", "--priorities", "differential", "--months", "1997-03",
                          "--dtime", "0.001", "--time-limit", "60"]) == 0
        written.append({f.name: f.read_bytes() for f in out.iterdir()})
        assert gaps._month_files("equal") == [out / "slack_e2e_1997-03.json"]
    first, second = written
    assert first == second  # byte for byte, the json and the table
    assert sorted(first) == ["slack_e2e.md", "slack_e2e_1997-03.json",
                             "slack_e2e_prio.md", "slack_e2e_prio_1997-03.json"]
    assert first["slack_e2e.md"] == b"equal table"
    assert first["slack_e2e_1997-03.json"] == b"equal month"
    rec = json.loads(first["slack_e2e_prio_1997-03.json"])
    assert rec["optimal_calls"]["FEASIBLE"] > 0, "no call stopped: determinism untested"
    assert rec["priorities"] == "differential" and rec["dtime"] == 0.001
    assert "| 1997-03 | 120 (24) |" in first["slack_e2e_prio.md"].decode()
    assert "load average" in capsys.readouterr().err  # the timing goes to the terminal only
