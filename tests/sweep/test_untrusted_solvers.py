"""A user's solver is untrusted: whatever it returns passes the family's check and
objective before ``solve`` prints it or ``bench`` counts it; one that raises, exits,
crashes or runs past its time limit is a failed run with the reason, and the bench goes
on; two proofs that contradict each other are an error in the report."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sim.cli import main
from sim.sweep.bench import bench

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"  # optimum: 2 epochs

GARBAGE = textwrap.dedent('''
    from sim.result import Result, Status

    FCFS = [[0, 1], [2], [3, 4], [5]]  # feasible, 4 epochs

    def _r(status, objective, bound, solution, **kw):
        return Result("mine", status, objective, bound, 0.01, solution, **kw)

    def infeasible(problem, *, time_limit=None, seed=0):  # every job in one epoch
        return _r(Status.OPTIMAL, 1.0, 1.0, [[0, 1, 2, 3, 4, 5]])

    def wrong_objective(problem, *, time_limit=None, seed=0):
        return _r(Status.FEASIBLE, 1.0, None, FCFS)

    def wrong_bound(problem, *, time_limit=None, seed=0):
        return _r(Status.FEASIBLE, 4.0, 5.0, FCFS)

    def optimal_with_gap(problem, *, time_limit=None, seed=0):
        return _r(Status.OPTIMAL, 4.0, 2.0, FCFS)

    def not_a_result(problem, *, time_limit=None, seed=0):
        return {"status": "OPTIMAL", "objective": 1}

    def bad_status(problem, *, time_limit=None, seed=0):
        return _r("GREAT", 4.0, None, FCFS)

    def text_objective(problem, *, time_limit=None, seed=0):
        return _r(Status.FEASIBLE, "4", None, FCFS)

    def not_a_solution(problem, *, time_limit=None, seed=0):
        return _r(Status.FEASIBLE, 4.0, None, 42)

    def opaque(problem, *, time_limit=None, seed=0):
        return _r(Status.FEASIBLE, 4.0, None, object())

    def false_proof(problem, *, time_limit=None, seed=0):  # feasible, said optimal: a lie
        return _r(Status.OPTIMAL, 4.0, 4.0, FCFS)

    def impostor(problem, *, time_limit=None, seed=0):  # names itself the project's cpsat
        return Result("cpsat", Status.FEASIBLE, 4.0, None, 0.01, FCFS)

    def quick_claim(problem, *, time_limit=None, seed=0):  # takes a second, claims 0.001 s
        import time
        time.sleep(1.0)
        return Result("mine", Status.FEASIBLE, 4.0, None, 0.001, FCFS)

    def chatty(problem, *, time_limit=None, seed=0):  # prints, by Python and by its fd
        import os
        print("chatty solver here", flush=True)
        os.write(1, b"chatty fd 1" + bytes([10]))
        return _r(Status.FEASIBLE, 4.0, None, FCFS)
''')

CRASHING = textwrap.dedent('''
    import ctypes, os, sys, time

    def raises(problem, *, time_limit=None, seed=0):
        raise KeyError("boom")

    def exits(problem, *, time_limit=None, seed=0):
        sys.exit(3)

    def hard_exit(problem, *, time_limit=None, seed=0):
        os._exit(9)

    def segfault(problem, *, time_limit=None, seed=0):
        ctypes.string_at(0)

    def endless(problem, *, time_limit=None, seed=0):
        while True:  # ignores its time limit and swallows every exception
            try:
                time.sleep(0.05)
            except BaseException:
                pass
''')

#: (function, what the error must say)
KINDS = [
    ("infeasible", "infeasible solution"),
    ("wrong_objective", "objective 1.0 claimed, its solution's objective is 4.0"),
    ("wrong_bound", "bound 5.0 on the wrong side"),
    ("optimal_with_gap", "status OPTIMAL with a gap"),
    ("not_a_result", "a dict, not a sim.result.Result"),
    ("bad_status", "status 'GREAT' is not one of"),
    ("text_objective", "objective '4' is not a finite number"),
    ("not_a_solution", "must be a list of epochs"),
    ("opaque", "not JSON data"),
]


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's folder, current, with the garbage and crashing solvers."""
    (tmp_path / "garbage_solvers.py").write_text(GARBAGE)
    (tmp_path / "crashing_solvers.py").write_text(CRASHING)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.timed
@pytest.mark.parametrize("fn, message", KINDS, ids=[k for k, _ in KINDS])
def test_solve_refuses_each_kind_of_garbage_from_a_user_solver(user, capsys, fn, message):
    code = main(["solve", str(FIG1), "--solver", f"garbage_solvers:{fn}"])
    out, err = capsys.readouterr()
    assert code == 2 and "OPTIMAL" not in out
    assert message in err and "garbage_solvers:" in err and len(err.strip().splitlines()) == 1


@pytest.mark.timed
def test_bench_fails_each_garbage_result_and_keeps_cpsat_proved(user):
    solvers = ["cpsat"] + [f"garbage_solvers:{fn}" for fn, _ in KINDS]
    s = bench([FIG1], user / "out", solvers=solvers, time_limit=10, plots=False)
    by = {r["solver"]: r for r in s.runs}
    assert by["cpsat"]["status"] == "OPTIMAL" and by["cpsat"]["gap_to_best"] == 0.0
    assert all(r["best_known"] == 2.0 and r["best_proved"] is True for r in s.runs)
    for fn, message in KINDS:
        row = by[f"garbage_solvers:{fn}"]
        assert row["status"] == "FAILED" and message in row["error"], row
    assert not s.issues


@pytest.mark.timed
def test_two_contradicting_proofs_are_an_error_in_the_report(user):
    s = bench([FIG1], user / "out", solvers=["cpsat", "garbage_solvers:false_proof"],
              time_limit=10, plots=False)
    by = {r["solver"]: r for r in s.runs}
    assert by["garbage_solvers:false_proof"]["status"] == "OPTIMAL"  # it passed the check
    # the lie is an error in the report; CP-SAT's proof, which no solution contradicts,
    # stands
    assert by["cpsat"]["best_known"] == 2.0 and by["cpsat"]["best_proved"] is True
    assert any("contradiction" in i and "false_proof proved 4.0 optimal" in i
               for i in s.issues), s.issues
    report = (user / "out" / "report.md").read_text()
    assert "Contradictions" in report and "ERROR:" in report
    assert "ERROR" in s.text()


@pytest.mark.timed
def test_bench_survives_solvers_that_raise_exit_crash_or_never_stop(user):
    kinds = {"raises": "raised KeyError", "exits": "called sys.exit(3)",
             "hard_exit": "exited with code 9", "segfault": "crashed (SIGSEGV)",
             "endless": "time limit exceeded"}
    t0 = time.monotonic()
    s = bench([FIG1], user / "out", solvers=[f"crashing_solvers:{k}" for k in kinds]
              + ["cpsat"], time_limit=1, plots=False)
    took = time.monotonic() - t0
    by = {r["solver"]: r for r in s.runs}
    for k, message in kinds.items():
        row = by[f"crashing_solvers:{k}"]
        assert row["status"] == "FAILED" and message in row["error"], row
    assert by["cpsat"]["status"] == "OPTIMAL"  # the bench went on after every crash
    assert (user / "out" / "runs.csv").read_text().count("FAILED") == len(kinds)
    assert took < 30, took  # the endless solver was killed at 1 s plus the grace


@pytest.mark.timed
def test_solve_stops_a_user_solver_at_its_time_limit(user, capsys):
    t0 = time.monotonic()
    code = main(["solve", str(FIG1), "--solver", "crashing_solvers:endless",
                 "--time-limit", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "time limit exceeded" in err
    assert time.monotonic() - t0 < 15


#: (solvers, exit code) of bench and solve --solvers: an ERROR in the report exits 3
ERROR_CASES = pytest.mark.parametrize("solvers, code", [
    ("cpsat,garbage_solvers:false_proof", 3),  # two proofs contradict each other
    ("cpsat,garbage_solvers:infeasible", 3),  # an answer that fails the family's check
    ("cpsat,fcfs,crashing_solvers:raises", 0),  # a failed run is data, not an error
], ids=["contradiction", "invalid-result", "clean"])


@pytest.mark.timed
@ERROR_CASES
def test_bench_exits_3_when_its_report_holds_an_error(user, capsys, solvers, code):
    got = main(["bench", str(FIG1), "--solvers", solvers, "--time-limit", "10",
                "--out", str(user / "out"), "--quiet"])
    out = capsys.readouterr().out
    assert got == code, out
    assert ("ERROR" in out) == (code == 3), out
    # a rerun that runs nothing (every run stored) says the same
    assert main(["bench", str(FIG1), "--solvers", solvers, "--time-limit", "10",
                 "--out", str(user / "out"), "--quiet"]) == code


@pytest.mark.timed
@pytest.mark.parametrize("solvers", [["--solver", "garbage_solvers:chatty"],
                                     ["--solvers", "fcfs,garbage_solvers:chatty"]],
                         ids=["solver", "solvers"])
def test_what_a_user_solver_prints_stays_out_of_the_json(user, solvers):
    """The solver's prints go to standard error: the ``--json`` output stays one JSON
    document a script can read."""
    run = subprocess.run([sys.executable, "-m", "sim.cli", "solve", str(FIG1), *solvers,
                          "--json"], capture_output=True, text=True, timeout=120, cwd=user)
    assert run.returncode == 0, run.stderr
    json.loads(run.stdout)
    assert "chatty solver here" in run.stderr and "chatty fd 1" in run.stderr


@pytest.mark.timed
@ERROR_CASES
@pytest.mark.parametrize("json_out", [False, True], ids=["table", "json"])
def test_solve_side_by_side_exits_3_when_it_prints_an_error(user, capsys, solvers, code,
                                                            json_out):
    """``solve --solvers`` judges its runs as ``bench`` does, and says an ERROR by its exit
    code as ``bench`` does: a script sees the contradiction without reading the table."""
    got = main(["solve", str(FIG1), "--solvers", solvers, "--time-limit", "10",
                *(["--json"] if json_out else [])])
    out = capsys.readouterr().out
    assert got == code, out
    if not json_out:
        assert ("ERROR" in out) == (code == 3), out


@pytest.mark.timed
def test_solve_side_by_side_exits_3_on_a_false_claim_of_the_file(user, capsys):
    data = {**json.loads(FIG1.read_text()), "best_known": 1, "proved": True}
    lies = user / "lies.json"
    lies.write_text(json.dumps(data))
    assert main(["solve", str(lies), "--solvers", "cpsat", "--time-limit", "10"]) == 3
    out = capsys.readouterr().out
    assert "ERROR:" in out and "false claim" in out


@pytest.mark.timed
def test_a_user_solvers_seconds_are_measured_not_its_claim(user, capsys):
    """The seconds a user's solver writes in its Result are a claim: solve and bench show
    the wall-clock time its call took."""
    assert main(["solve", str(FIG1), "--solver", "garbage_solvers:quick_claim",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runtime"] >= 1.0
    s = bench([FIG1], user / "out", solvers=["garbage_solvers:quick_claim"], time_limit=10,
              plots=False)
    assert s.runs[0]["seconds"] >= 1.0


def test_a_user_solver_is_shown_by_the_name_it_was_called_by(user, capsys):
    """A Result that names itself after a project solver is shown as the user's
    reference, not as that solver."""
    assert main(["solve", str(FIG1), "--solver", "garbage_solvers:impostor", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["solver"] == "garbage_solvers:impostor"


@pytest.mark.timed
@pytest.mark.parametrize("limit", ["1e10", "1e308"])
def test_a_huge_finite_time_limit_runs_a_user_solver(user, capsys, limit):
    """Any finite limit --time-limit accepts is a valid wait on the solver's worker (the
    operating system's poll takes a bounded timeout: 1e10 s overflowed it)."""
    assert main(["solve", str(FIG1), "--solver", "garbage_solvers:false_proof",
                 "--time-limit", limit, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["objective"] == 4.0
