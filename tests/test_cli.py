"""The command line: output contracts, --by-month, --out, solve, and bad input."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from instances.swf import read_swf, write_swf
from instances.synthetic import random_workload
from sim.batch.runner import run
from sim.cli import main
from sim.registry import policy_spec

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"
GROUPING = ROOT / "instances" / "data" / "grouping"


@pytest.fixture
def small_swf(tmp_path: Path) -> Path:
    w = random_workload(300, (32,), seed=7, load=0.9)
    path = tmp_path / "small.swf"
    write_swf(path, w)
    return path


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_json_has_the_documented_fields_and_matches_the_api(small_swf, capsys):
    out = _json(capsys, ["simulate", str(small_swf), "--policy", "easy", "--json", "--quiet"])
    for key in ("policy", "jobs", "avg_wait", "avg_bounded_slowdown", "utilization",
                "makespan", "sim_seconds", "cleaning", "validated"):
        assert key in out, key
    assert out["policy"] == "easy" and out["jobs"] == 300 and out["validated"] is True
    api = run(read_swf(small_swf), policy_spec("easy"))
    assert out["avg_wait"] == pytest.approx(api["avg_wait"])
    assert out["makespan"] == api["makespan"]


def test_overrun_and_perfect_estimates_reach_the_simulation(small_swf, capsys):
    kill = _json(capsys, ["simulate", str(small_swf), "--policy", "conservative", "--json"])
    assert kill["killed"] > 0  # the generator makes some jobs underestimate
    ran = _json(capsys, ["simulate", str(small_swf), "--policy", "conservative", "--json",
                         "--overrun", "run"])
    assert ran["killed"] == 0 and ran["overrun"] == "run"
    perfect = _json(capsys, ["simulate", str(small_swf), "--policy", "easy", "--json",
                             "--perfect-estimates"])
    assert perfect["killed"] == 0
    assert perfect["cleaning"]["counts"].get("perfect_estimates", 0) > 0


def test_by_month_on_kth_gives_twelve_months_covering_every_job(capsys):
    out = _json(capsys, ["simulate", "KTH-SP2", "--procs", "128", "--policy", "easy",
                         "--by-month", "--json", "--quiet"])
    months = out["months"]
    assert [m["month"] for m in months][:2] == ["1996-09", "1996-10"]
    assert len(months) == 12
    assert sum(m["jobs"] for m in months) == out["jobs"] == 28475
    for m in months:
        assert {"month", "jobs", "avg_wait", "avg_bounded_slowdown", "utilization"} <= set(m)
    weighted = sum(m["avg_wait"] * m["jobs"] for m in months) / out["jobs"]
    assert out["avg_wait"] == pytest.approx(weighted)


def test_out_writes_an_swf_schedule_with_the_wait_field(small_swf, tmp_path, capsys):
    target = tmp_path / "schedule.swf.gz"
    assert main(["simulate", str(small_swf), "--policy", "conservative", "--out", str(target),
                 "--quiet"]) == 0
    capsys.readouterr()
    with gzip.open(target, "rt") as fh:
        rows = [line.split() for line in fh if line.strip() and not line.startswith(";")]
    w = read_swf(small_swf)
    api = run(w, policy_spec("conservative"))
    waits = [int(r[2]) for r in rows]
    assert len(waits) == len(w)
    assert sum(waits) / len(waits) == pytest.approx(api["avg_wait"])
    again = read_swf(target)  # other SWF tools (and ours) can read it back
    assert [j.submit for j in again.jobs] == [j.submit for j in w.jobs]


def test_compare_prints_one_row_per_policy(small_swf, capsys):
    out = _json(capsys, ["compare", str(small_swf), "--policies", "fcfs,easy,conservative",
                         "--json"])
    assert [r["policy"] for r in out["rows"]] == ["fcfs", "easy", "conservative"]
    assert main(["compare", str(small_swf), "--policies", "fcfs,easy", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "avg wait" in text and "easy" in text


@pytest.mark.parametrize("path,solver", [
    (GROUPING / "casestudy_16mb.json", "greedy"),
    (SNAPSHOTS / "kth-1996-09-insert-614487-k1.json", "AST"),
])
def test_solve_prints_the_result_contract(path, solver, capsys):
    out = _json(capsys, ["solve", str(path), "--solver", solver, "--json"])
    for key in ("solver", "status", "objective", "bound", "runtime", "solution"):
        assert key in out, key
    assert out["status"] in ("OPTIMAL", "FEASIBLE")


def test_bad_input_gets_a_clear_error(tmp_path, capsys):
    assert main(["simulate", str(tmp_path / "nope.swf"), "--policy", "easy"]) == 2
    assert "nope.swf" in capsys.readouterr().err

    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 8\n1 0 0 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1\n1 2 3\n")
    assert main(["simulate", str(bad), "--policy", "easy"]) == 2
    err = capsys.readouterr().err
    assert "bad.swf:3: expected 18 fields" in err

    js = tmp_path / "p.json"
    js.write_text('{"problem": "grouping",\n  oops}')
    assert main(["solve", str(js), "--solver", "greedy"]) == 2
    assert "p.json: line 2" in capsys.readouterr().err

    js.write_text('{"jobs": []}')
    assert main(["solve", str(js), "--solver", "greedy"]) == 2
    assert "'problem'" in capsys.readouterr().err

    assert main(["solve", str(GROUPING / "casestudy_8mb.json"), "--solver", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_unknown_policy_is_refused(small_swf, capsys):
    assert main(["compare", str(small_swf), "--policies", "easy,nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_policy_options_reach_only_the_policies_that_take_them(small_swf, capsys):
    out = _json(capsys, ["compare", str(small_swf), "--policies", "easy,slack", "--sf", "5",
                         "--json"])
    assert [r["policy"] for r in out["rows"]] == ["easy", "slack-AST"]
    assert main(["simulate", str(small_swf), "--policy", "easy", "--sf", "5"]) == 2
    assert "does not take option(s) ['sf']" in capsys.readouterr().err
    assert main(["compare", str(small_swf), "--policies", "easy,slack",
                 "--time-limit", "1"]) == 2
    assert "time_limit" in capsys.readouterr().err


def test_solve_prints_what_its_gap_is():
    from sim.cli.solve import _gap_text

    def d(status, obj, bound, gap):
        return {"status": status, "objective": obj, "bound": bound, "gap": gap}

    assert _gap_text(d("FEASIBLE", 10.0, 8.0, 0.2)) == \
        "20.00% (the solver's own optimality gap)"
    assert _gap_text(d("FEASIBLE", 5.0, None, None)) == "-"
    # a relative gap to an objective of 0 would be bound / 1e-9
    assert _gap_text(d("FEASIBLE", 0, -66033.8, 6.6e13)).startswith("- (no relative gap")
    # the price proved, the tie-break stage stopped: 0% is not a proof
    assert "the result is not proved" in _gap_text(d("FEASIBLE", -5.0, -5.0, 0.0))
    assert _gap_text(d("OPTIMAL", -5.0, -5.0, 0.0)) == \
        "0.00% (the solver's own optimality gap)"
