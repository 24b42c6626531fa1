"""A problem file's ``best_known``, ``proved`` and ``certificate`` are claims: checked
against the family's range and its check and objective, never allowed to override a
solver's proof; a claim that does not hold is an error in the report. A run solves the
bytes whose SHA-256 keys it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.sweep.bench import bench

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"  # optimum: 2 epochs
OPTIMUM = [[0, 2, 4], [1, 3, 5]]


def lying(tmp_path: Path, **claims) -> Path:
    data = {**json.loads(FIG1.read_text()), **claims}
    path = tmp_path / "lies.json"
    path.write_text(json.dumps(data))
    return path


def test_a_false_proved_claim_does_not_make_the_optimum_look_worse(tmp_path):
    f = lying(tmp_path, best_known=1, proved=True)
    s = bench([f], tmp_path / "out", solvers=["cpsat", "fcfs"], time_limit=10, plots=False)
    by = {r["solver"]: r for r in s.runs}
    assert by["cpsat"]["status"] == "OPTIMAL" and by["cpsat"]["gap_to_best"] == 0.0
    assert by["cpsat"]["best_known"] == 2.0 and by["fcfs"]["gap_to_best"] == pytest.approx(1.0)
    assert any("false claim" in i and "best_known 1.0" in i for i in s.issues), s.issues


@pytest.mark.parametrize("claim, message", [
    (-5, "is negative"),
    (2.5, "is fractional"),
    ("two", "is not a number"),
])
def test_a_best_known_outside_the_family_range_is_reported_and_unused(tmp_path, claim,
                                                                      message):
    f = lying(tmp_path, best_known=claim)
    s = bench([f], tmp_path / "out", solvers=["fcfs"], time_limit=10, plots=False)
    (row,) = s.runs
    assert row["best_known"] == 4.0  # the heuristic's own value, not the claim
    assert any("best_known" in i and message in i for i in s.issues), s.issues


def test_an_infeasible_certificate_is_reported_and_unused(tmp_path):
    f = lying(tmp_path, best_known=1, certificate=[[0, 1, 2, 3, 4, 5]])
    s = bench([f], tmp_path / "out", solvers=["fcfs"], time_limit=10, plots=False)
    (row,) = s.runs
    assert row["best_known"] == 4.0
    assert any("certificate: infeasible" in i for i in s.issues), s.issues


def test_a_certificate_that_does_not_attain_best_known_is_reported(tmp_path):
    f = lying(tmp_path, best_known=1, certificate=OPTIMUM)
    s = bench([f], tmp_path / "out", solvers=["fcfs"], time_limit=10, plots=False)
    (row,) = s.runs
    assert row["best_known"] == 2.0  # what the certificate attains
    assert any("its objective is 2.0" in i for i in s.issues), s.issues


def test_a_verified_certificate_is_the_best_known_value(tmp_path):
    f = lying(tmp_path, best_known=2, certificate=OPTIMUM)
    s = bench([f], tmp_path / "out", solvers=["fcfs"], time_limit=10, plots=False)
    (row,) = s.runs
    assert row["best_known"] == 2.0 and row["gap_to_best"] == pytest.approx(1.0)
    assert not s.issues


def test_a_run_solves_the_bytes_whose_hash_keys_it(tmp_path, monkeypatch):
    """The file is swapped after the bench read it: the run refuses the new bytes
    instead of storing their answer under the old bytes' hash."""
    import sim.sweep.bench as bench_mod

    f = tmp_path / "p.json"
    f.write_text(FIG1.read_text())
    other = json.loads(FIG1.read_text())
    other["demands"][0] = [1, 1]
    original = bench_mod.run_bench_cell

    def swap_then_run(cell):
        f.write_text(json.dumps(other))
        return original(cell)

    monkeypatch.setattr(bench_mod, "run_bench_cell", swap_then_run)
    s = bench([f], tmp_path / "out", solvers=["cpsat"], time_limit=10, plots=False)
    (row,) = s.runs
    assert row["status"] == "FAILED" and "the file changed" in row["error"]
    monkeypatch.setattr(bench_mod, "run_bench_cell", original)
    again = bench([f], tmp_path / "out", solvers=["cpsat"], time_limit=10, plots=False)
    assert again.runs[0]["status"] == "OPTIMAL" and again.skipped == 0, again.runs


def test_a_bound_below_the_best_solution_is_a_gap_not_a_contradiction():
    from sim.sweep.bench import Claim, judge

    runs = [{"file": "f", "solver": "a", "status": "FEASIBLE", "objective": 5.0,
             "bound": 3.0},
            {"file": "f", "solver": "b", "status": "FEASIBLE", "objective": 4.0,
             "bound": None}]
    assert judge(runs, Claim(), "min") == (4.0, False, [])
    runs[0]["bound"] = 4.5  # excludes b's solution
    best, proved, issues = judge(runs, Claim(), "min")
    assert not proved and issues == ["f: contradiction: a's bound 4.5 excludes 4.0, which "
                                     "b's solution attains"]
    runs[0]["bound"] = 4.0
    assert judge(runs, Claim(best_known=3.0, proved=True), "min")[1:] == (
        True, ["f: false claim: the file claims best_known 3.0, a proved the bound 4.0"])


def test_bench_exits_3_on_a_false_claim_and_0_on_a_true_one(tmp_path, capsys):
    from sim.cli import main

    f = lying(tmp_path, best_known=1, proved=True)
    argv = ["bench", str(f), "--solvers", "cpsat,fcfs", "--time-limit", "10", "--quiet"]
    assert main([*argv, "--out", str(tmp_path / "lies")]) == 3
    assert "false claim" in capsys.readouterr().out
    f = lying(tmp_path, best_known=2, certificate=OPTIMUM)
    assert main([*argv, "--out", str(tmp_path / "truth")]) == 0


@pytest.mark.parametrize("claims, says", [
    ({"best_known": 1, "proved": True}, "false claim: the file claims best_known 1.0"),
    ({"certificate": [[0, 1, 2, 3, 4, 5]]}, "certificate: infeasible"),
    ({"best_known": 2, "certificate": OPTIMUM}, None),
], ids=["false-proof", "infeasible-certificate", "true"])
@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_solve_with_one_solver_checks_the_files_claims(tmp_path, capsys, claims, says,
                                                       json_out):
    """``solve FILE`` judges the file's claims against its one run as ``--solvers`` and
    ``bench`` do: a claim that does not hold is an ERROR line (an ``issues`` entry in
    JSON) and exit 3."""
    from sim.cli import main

    code = main(["solve", str(lying(tmp_path, **claims)), "--time-limit", "10",
                 *(["--json"] if json_out else [])])
    out = capsys.readouterr().out
    assert code == (0 if says is None else 3), out
    if json_out:
        issues = json.loads(out)["issues"]
        assert (issues == []) if says is None else any(says in i for i in issues), issues
    else:
        errors = [line for line in out.splitlines() if line.startswith("ERROR: ")]
        assert (errors == []) if says is None else any(says in e for e in errors), out
