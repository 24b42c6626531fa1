"""SCIP on the reduced-cost fixed time-indexed model of the offline response problem
(``models.kresource.fixedmip``): the brute-force optimum from any incumbent, a bound
never above it, nothing trusted from a schedule that fails the check, refusals beyond
its sizes and SCIP's exact range, its limit kept; the fast serial schedule equal to the
heuristics' one."""

from __future__ import annotations

import random
import time

import pytest
from random_kresource import response_with_weights, stage_from_list

from heuristics.kresource import serial_schedule, solve_list
from models import mip
from models.kresource import fixedmip
from models.kresource.bounds import BoundOptions, response_bound
from sim.problems.kresource import ResponseProblem, from_dict, objective
from sim.result import Status


@pytest.mark.parametrize("seed", range(30))
def test_the_serial_schedule_is_the_heuristics_one(seed):
    rng = random.Random(7100 + seed)
    p = response_with_weights(rng, rng.randint(1, 12), rng.randint(1, 4), tight=seed % 2 == 0)
    for _ in range(10):
        order = rng.sample(range(p.n), p.n)
        assert fixedmip.serial(p, order) == serial_schedule(p, order)


@pytest.mark.parametrize("seed", range(16))
def test_scip_on_the_fixed_starts_reaches_the_brute_force_optimum(seed):
    """From the list schedule: the optimum found when the list schedule is worse, the
    bound proved equal to the optimum (so never above it) either way."""
    opt, inc, found, proved, note = stage_from_list(fixedmip.solve_fixed, 7200 + seed,
                                                    seed % 2 == 0)
    assert proved == opt, note
    if inc.objective > opt:
        assert [r.objective for r in found] == [opt]
    else:
        assert found == []


@pytest.mark.parametrize("seed", range(8))
def test_a_stopped_run_bounds_below_every_schedule(seed):
    """Stopped early (0.3 s of SCIP on 14 jobs), its bound stays below the schedules
    every other way finds."""
    rng = random.Random(7300 + seed)
    p = response_with_weights(rng, 14, 3, tight=True)
    lb = response_bound(p, time_limit=20.0)
    inc = solve_list(p)
    found, proved, note = fixedmip.solve_fixed(p, lb, inc, time_limit=fixedmip.MIN_SECONDS)
    values = [inc.objective] + [r.objective for r in found]
    for _ in range(20):
        values.append(objective(p, serial_schedule(p, rng.sample(range(p.n), p.n))))
    assert proved is None or proved <= min(values), note


def _target(seed: int = 1) -> ResponseProblem:
    from sim.problems import generate

    return from_dict(generate.instance("kresource_response", seed, n=40, K=4, horizon=100))


@pytest.mark.timed
def test_its_limit_covers_the_worker():
    p = _target(1)
    lb = response_bound(p, options=BoundOptions(max_rounds=3))
    inc = solve_list(p)
    t0 = time.perf_counter()
    found, proved, note = fixedmip.solve_fixed(p, lb, inc, time_limit=2.0)
    assert time.perf_counter() - t0 <= 2.0 + fixedmip.GRACE + 0.3, note
    assert proved is None or proved <= inc.objective
    assert proved is None or proved > -1e6  # SCIP's infinity is no bound


def test_no_scip_beyond_its_sizes_or_its_exact_range():
    rng = random.Random(7400)
    p = response_with_weights(rng, 6, 2, tight=True)
    lb = response_bound(p)
    inc = solve_list(p)
    found, proved, note = fixedmip.solve_fixed(
        p, lb, inc, time_limit=5.0, options=fixedmip.FixedMipOptions(max_columns=1))
    assert (found, proved) == ([], None) and note.startswith(fixedmip.NOT_RUN)
    big = ResponseProblem((10**9, 10**9), (0, 0, 1), (2, 2, 1),
                          ((6 * 10**8, 1), (6 * 10**8, 1), (1, 1)))
    found, proved, note = fixedmip.solve_fixed(big, response_bound(big), solve_list(big),
                                               time_limit=5.0)
    assert (found, proved) == ([], None) and "exact range" in note
    with pytest.raises(ValueError, match="max_columns"):
        fixedmip.FixedMipOptions(max_columns=0)


def test_a_schedule_that_fails_the_check_is_dropped_with_its_bound(monkeypatch):
    """SCIP's values read back as every job at its first kept start: three jobs that
    cannot run two at a time, all at 0 (an overload); schedule and bound are dropped."""
    import numpy as np

    from sim.problems import checker

    p = ResponseProblem((10,), (0, 0, 0), (2, 2, 2), ((6,), (6,), (6,)))
    lb = response_bound(p)
    inc = solve_list(p)
    jobs = lb.job[lb.kept(inc.objective)]
    firsts = [int(np.nonzero(jobs == j)[0][0]) for j in range(p.n)]
    with pytest.raises(ValueError):
        checker(p)([int(lb.start[lb.kept(inc.objective)][i]) for i in firsts])

    def overloaded(model, backend, **kw):
        values = np.zeros(model.num_variables())
        values[firsts] = 1.0
        return {"status": "OPTIMAL", "has_solution": True, "objective": 0.0,
                "bound": 1e9, "values": values, "why": "", "interrupted": False}

    monkeypatch.setattr(mip, "run_worker", overloaded)
    found, proved, note = fixedmip.solve_fixed(p, lb, inc, time_limit=5.0)
    assert (found, proved) == ([], None) and "rejected" in note


def test_safe_bound_is_never_above_an_integer_the_float_bound_may_overshoot():
    assert fixedmip.safe_bound(450.0, 3000) == 450
    assert fixedmip.safe_bound(450.002, 3000) == 450  # within the margin of 450
    assert fixedmip.safe_bound(450.2, 3000) == 451
    assert fixedmip.safe_bound(-3.0000001, 10) == -3


def test_the_hint_search_is_a_feasible_schedule_no_worse_than_the_lp_order():
    from sim.problems import checker

    rng = random.Random(7600)
    p = response_with_weights(rng, 14, 3, tight=True)
    lb = response_bound(p, time_limit=20.0)
    s = fixedmip.lp_order_schedule(p, lb, seed=3, max_moves=500)
    checker(p)(s)
    order = sorted(range(p.n), key=lambda j: (lb.mean_start[j], j))
    assert objective(p, s) <= objective(p, serial_schedule(p, order))
    assert s == fixedmip.lp_order_schedule(p, lb, seed=3, max_moves=500)  # seeded


@pytest.mark.timed
def test_the_portfolio_result_counts_scip_s_schedule():
    """On a 40-job K = 4 instance the portfolio runs SCIP after the LP bound, within its
    limit; its answer passes the check and its bound stays below it (8 s: the LP cut
    short by its share, SCIP on about 4 s)."""
    from models.kresource import portfolio
    from sim.problems import checker

    p = _target(1)
    r = portfolio.solve_response(p, time_limit=8.0)
    assert r.runtime <= 8.0 + 0.5, r.note
    assert "SCIP on" in r.note and "LP bound" in r.note, r.note
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert r.bound is not None and r.bound <= r.objective
    checker(p)(r.solution)
    assert objective(p, r.solution) == r.objective
