"""The time-indexed insertion MIP (``ti``) and the ``cpsat+ti`` portfolio: brute force
agrees on random small instances, the safe bound is never above the optimum, bad data is
refused, the time limit holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from models import slack_insertion as si
from models.deadline import Deadline
from models.slack_insertion.timeindexed import solve_ti
from models.slack_insertion.tiportfolio import solve_cpsat_ti
from sim import registry
from sim.problems import insertion as ins
from sim.result import Status

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"


def small(seed: int) -> ins.InsertionProblem:
    """Random problems of 2-4 waiting jobs (finite slacks); every third with ``alpha_t = 0.5`` (the
    price is then concave in the delay: CP-SAT cannot run, the MIP can)."""
    pb = ins.random_problem(seed, 2 + seed % 3, capacity=6, max_t=4, max_slack=8,
                            inf_slack=0.0, new=seed % 4 != 1)
    return replace(pb, alpha_t=0.5) if seed % 3 == 2 else pb


def assert_agrees(pb: ins.InsertionProblem, r, ref) -> None:
    """``r`` is feasible, its price within the tie of brute force's optimum, its bound
    never above that optimum, and an OPTIMAL ``r`` moves as few jobs as brute force."""
    assert ins.check(pb, r.solution) == []
    p = ref.objective
    assert abs(r.objective - p) <= ins.price_tolerance(p), (r.objective, p, r.note)
    assert r.bound is None or r.bound <= p, (r.bound, p)
    if r.status is Status.OPTIMAL:
        assert ins.moved(pb, r.solution) == ins.moved(pb, ref.solution)


@pytest.mark.parametrize("seed", range(18))
@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_ti_agrees_with_brute_force(seed, backend):
    pb = small(seed)
    ref = si.solve_brute(pb)
    assert ref.status is Status.OPTIMAL
    r = solve_ti(pb, backend=backend, time_limit=20)
    assert r.bound is not None, r.note  # both stages ran to an answer on these
    assert_agrees(pb, r, ref)


@pytest.mark.parametrize("seed", range(12))
def test_portfolio_agrees_with_brute_force(seed):
    pb = small(seed)
    ref = si.solve_brute(pb)
    r = registry.solver("slack_insertion", "cpsat+ti")(pb, time_limit=20)
    assert_agrees(pb, r, ref)
    if pb.alpha_t == 1.0:
        assert r.status is Status.OPTIMAL and "CP-SAT" in r.note


@pytest.mark.parametrize("seed", range(20))
def test_ti_on_exact_price_ties(seed):
    """The tie instances of the exactness tests (non-dyadic weights, exact swap ties):
    price within the tie of brute force's, bound never above it. Their prices are small,
    so the safe bound's margin exceeds the tie width: never OPTIMAL, said in the note."""
    from test_slack_exactness import tie_problem

    pb = tie_problem(seed)
    ref = si.solve_brute(pb)
    r = solve_ti(pb, time_limit=20)
    assert_agrees(pb, r, ref)
    assert r.status is Status.FEASIBLE and "tolerances" in r.note


def test_ti_with_an_incumbent_keeps_the_optimum():
    """The incumbent (here brute force's optimum itself) shrinks the domains without
    cutting off the optimum or its ties."""
    for seed in range(6):
        pb = small(seed)
        ref = si.solve_brute(pb)
        r = solve_ti(pb, incumbent=ref.solution, time_limit=20)
        assert_agrees(pb, r, ref)


def test_a_snapshot_is_proved_and_agrees_with_cpsat():
    """On a KTH snapshot CP-SAT proves, the MIP (from CP-SAT's schedule, as in the
    portfolio) proves the price within the tie tolerance of its safe bound and the
    fewest moved jobs, and agrees with CP-SAT."""
    pb = ins.load(SNAPSHOTS / "kth-1996-11-insert-4587267-k12.json")
    ref = si.solve_cpsat(pb, time_limit=60)
    assert ref.status is Status.OPTIMAL
    r = solve_ti(pb, time_limit=60, incumbent=ref.solution)
    assert r.status is Status.OPTIMAL, r.note
    assert abs(r.objective - ref.objective) <= ins.price_tolerance(ref.objective)
    assert r.bound <= ref.objective
    assert ins.moved(pb, r.solution) == ins.moved(pb, ref.solution)
    r = solve_ti(pb, time_limit=60, incumbent=ref.solution, tie_break=False)
    assert r.status is Status.FEASIBLE and "fewest moved jobs not proved" in r.note


def test_the_mip_proves_what_cpsat_leaves_open():
    """``kth-1996-11-remove-3806616-k14``: CP-SAT stops at 2 s above the optimum; the
    MIP from its schedule proves a lower price, and its bound is below every price."""
    pb = ins.load(SNAPSHOTS / "kth-1996-11-remove-3806616-k14.json")
    c = si.solve_cpsat(pb, time_limit=2)
    r = solve_ti(pb, time_limit=60, incumbent=c.solution)
    assert r.status is Status.OPTIMAL, r.note
    assert r.objective <= c.objective
    assert r.bound <= r.objective and (c.bound is None or c.bound <= r.objective)


def test_an_infeasible_incumbent_is_refused():
    pb = small(0)
    bad = ins.InsertionSchedule(pb.now - 1,
                                {w.id: w.te for w in pb.waiting})
    with pytest.raises(ValueError, match="incumbent"):
        solve_ti(pb, incumbent=bad)


def test_a_capacity_beyond_the_exact_range_is_refused():
    pb = small(0)
    big = replace(pb, capacity=2 * 10**7)
    with pytest.raises(ValueError, match="^field 'capacity' = 20000000: "):
        solve_ti(big)
    solve_ti(big, backend="scip", time_limit=20)  # SCIP's range is larger


def test_a_model_beyond_max_nonzeros_is_refused():
    with pytest.raises(ValueError, match="max_nonzeros=10"):
        solve_ti(small(0), max_nonzeros=10)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        solve_ti(small(0), backend="glpk")


def test_cbc_is_refused_with_its_reason_by_ti_and_the_portfolio():
    """The portfolio refuses it before CP-SAT runs (not a MIP refusal it would answer
    by CP-SAT alone, which would ignore the option)."""
    for fn in (solve_ti, solve_cpsat_ti):
        t0 = time.perf_counter()
        with pytest.raises(ValueError, match="backend 'cbc' refused: .* HiGHS or SCIP"):
            fn(small(0), backend="cbc", time_limit=20)
        assert time.perf_counter() - t0 < 1.0


def test_an_unknown_form_is_refused():
    for fn in (solve_ti, solve_cpsat_ti):
        with pytest.raises(ValueError, match="form must be one of start, step"):
            fn(small(0), form="steps")


def test_the_exact_range_is_the_mip_backends_one(monkeypatch):
    """The capacity rows' largest number is checked against ``models.mip.MAX_MAGNITUDE``
    of the backend (one table for every MIP of the toolkit)."""
    from models import mip

    pb = small(0)
    monkeypatch.setitem(mip.MAX_MAGNITUDE, "scip", pb.capacity - 1)
    with pytest.raises(ValueError, match=f"field 'capacity' = {pb.capacity}: .* SCIP"):
        solve_ti(pb, backend="scip")
    solve_ti(pb, backend="highs", time_limit=20)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_the_step_form_agrees_with_brute_force(seed, backend):
    """The "started by" form (``x = z[k] - z[k - 1]``) proves the same optimum, both
    stages."""
    pb = small(seed)
    ref = si.solve_brute(pb)
    r = solve_ti(pb, backend=backend, time_limit=20, form="step")
    assert r.params["model_form"] == "step" and r.bound is not None, r.note
    assert_agrees(pb, r, ref)


def test_the_step_form_fits_the_snapshot_the_start_form_is_refused_on():
    """``kth-1997-05-insert-21180393-k21``: 56.7 million row nonzeros per (job, start),
    beyond ``MAX_NONZEROS`` (refused); the step form has at most 2 per job per capacity
    row. (It proves less than the start form where both fit, so it is an option, not
    the default: module docstring.)"""
    from models.slack_insertion.common import Deadline
    from models.slack_insertion.timeindexed import MAX_NONZEROS, model_size

    pb = ins.load(SNAPSHOTS / "kth-1997-05-insert-21180393-k21.json")
    start = model_size(pb, Deadline(None))[1]
    step = model_size(pb, Deadline(None), form="step")[1]
    assert start > 25 * MAX_NONZEROS and step < MAX_NONZEROS / 10, (start, step)
    with pytest.raises(ValueError, match="max_nonzeros=2,000,000"):
        solve_ti(pb, time_limit=30)
    r = solve_ti(pb, time_limit=3, form="step")  # idle, the count takes about 0.3 s
    assert r.params["model_form"] == "step" and r.params["nonzeros"] == step, r.note
    assert ins.check(pb, r.solution) == []


def _cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("name", ["kth-1997-03-remove-14098343-k11.json",
                                  "kth-1997-05-insert-20498535-k12.json"])
def test_scip_and_highs_prove_the_same_price_from_the_command_line(name):
    """``schedsearch solve F --solver ti --backend B``: both backends prove the price
    (about 1 s each at load 10) and agree within the tie tolerance."""
    prices = {}
    for backend in ("highs", "scip"):
        run = _cli("solve", str(SNAPSHOTS / name), "--solver", "ti", "--backend", backend,
                   "--time-limit", "30", "--json")
        assert run.returncode == 0, run.stderr
        d = json.loads(run.stdout)
        assert d["status"] == "OPTIMAL", d["note"]
        assert d["params"]["backend"] == backend
        prices[backend] = d["objective"]
    assert abs(prices["highs"] - prices["scip"]) <= ins.price_tolerance(prices["highs"])


def test_the_command_line_refuses_cbc_for_ti_in_one_line():
    for solver in ("ti", "cpsat+ti"):
        run = _cli("solve", str(SNAPSHOTS / "kth-1997-03-remove-14098343-k11.json"),
                   "--solver", solver, "--backend", "cbc", "--time-limit", "5")
        assert run.returncode == 2 and run.stdout == ""
        assert run.stderr.strip().splitlines() == [
            f"schedsearch: error: --backend cbc: solver {solver} runs on highs or scip only"]


@pytest.mark.timed
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_ctrl_c_stops_ti_with_the_best_schedule_so_far(tmp_path):
    """Ctrl-C during the MIP (``kth-1997-02-remove-13402954-k29``: HiGHS needs about 15 s
    at load 10): the worker is asked to stop and ends, the command prints the best
    schedule so far as FEASIBLE with the Ctrl-C said, within ``models.interrupt.GRACE``
    and a little; no process and no temporary file is left."""
    import signal

    from processes import gone
    from test_mip_kill import _wait_for_solver

    from models.interrupt import GRACE

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "solve",
         str(SNAPSHOTS / "kth-1997-02-remove-13402954-k29.json"), "--solver", "ti",
         "--time-limit", "120"], cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    kids = _wait_for_solver(proc, "highs")
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the whole group
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert time.monotonic() - sent < GRACE + 3.0
    assert "status: FEASIBLE" in out and "stopped by Ctrl-C" in out, out
    assert "Traceback" not in err
    for pid in kids:
        assert gone(pid, within=5.0)
    assert os.listdir(tmp) == []


def test_capacity_rows_and_nonzeros_read_the_clock(monkeypatch) -> None:
    """Finding the capacity rows and counting their nonzeros cost O(jobs) bisections per
    candidate start (10^6 candidates of 100 jobs: 2.6 s and 2.4 s of CPU): both read the
    clock every ``CLOCK_POINTS`` starts or rows. Counted on a clock that advances one
    microsecond per bisection, expiring half-way through the work."""
    from models.slack_insertion import timeindexed as ti

    pb = ins.random_problem(1, 30, capacity=16, max_t=100, max_slack=300)
    inc = ins.current_schedule(pb)
    calls = [0]
    bisect = ti.bisect_right

    def counted(*args):
        calls[0] += 1
        return bisect(*args)

    monkeypatch.setattr(ti, "bisect_right", counted)
    data = ti._data(pb, inc, Deadline(None), 200_000)
    rows_work = calls[0]
    calls[0] = 0
    ti._nonzeros(data, "start")
    count_work = calls[0]
    period = 2 * len(data.jobs) * 256  # bisections between two looks at the clock
    assert min(rows_work, count_work) > 8 * period  # enough work to see the period

    class Work(Deadline):
        def elapsed(self) -> float:
            return calls[0] * 1e-6

    for run, work in ((lambda d: ti._data(pb, inc, d, 200_000), rows_work),
                      (lambda d: ti._nonzeros(data, "start", d), count_work)):
        calls[0] = 0
        with pytest.raises(ti._Stopped):
            run(Work(work / 2 * 1e-6))
        assert calls[0] - work / 2 <= period
