"""The certified LP bound of slack insertion is never above the optimum, and the
portfolio that uses it keeps the honesty rules of the exact solvers."""

from __future__ import annotations

import pytest

from models import slack_insertion as si
from models.slack_insertion.bounds import insertion_bound
from models.slack_insertion.portfolio import solve_portfolio
from sim import registry
from sim.problems import insertion as ins
from sim.result import Status


def small(seed: int) -> ins.InsertionProblem:
    """Random small problems, crowded enough that the capacity rows bind."""
    k = 2 + seed % 3
    return ins.random_problem(seed, k, capacity=3 + seed % 2, max_t=4, max_slack=6,
                              new=seed % 4 != 0)


@pytest.mark.parametrize("seed", range(30))
def test_bound_is_never_above_the_brute_force_optimum(seed):
    pb = small(seed)
    opt = si.solve_brute(pb)
    assert opt.status is Status.OPTIMAL
    for incumbent in (None, opt.solution):  # the current schedule, the optimum itself
        b = insertion_bound(pb, incumbent=incumbent)
        assert b is not None
        assert b.bound <= opt.objective + 1e-9 * max(1.0, abs(opt.objective)), (b, opt)


def test_bound_meets_the_optimum_when_the_lp_is_integral():
    """Not a trivial bound: on instances whose capacity never binds the LP is the sum of
    the cheapest starts, which is the optimum."""
    closed = 0
    for seed in range(30):
        pb = small(seed)
        opt = si.solve_brute(pb).objective
        b = insertion_bound(pb).bound
        closed += abs(opt - b) <= 1e-6 * max(1.0, abs(opt))
    assert closed >= 10


def test_bound_with_no_time_is_none_not_wrong():
    pb = small(3)
    assert insertion_bound(pb, time_limit=0.0) is None


def test_infeasible_incumbent_is_a_clear_error():
    pb = small(1)
    cur = ins.current_schedule(pb)
    bad = ins.InsertionSchedule(cur.new_start, {j: pb.now - 10 for j in cur.starts})
    with pytest.raises(ValueError, match="incumbent"):
        insertion_bound(pb, incumbent=bad)


@pytest.mark.parametrize("seed", range(8))
def test_portfolio_agrees_with_brute_force(seed):
    pb = small(seed)
    rb = si.solve_brute(pb)
    rp = solve_portfolio(pb)
    assert rp.status is Status.OPTIMAL
    assert ins.check(pb, rp.solution) == []
    assert rp.objective == pytest.approx(rb.objective, abs=1e-6 * (1 + abs(rb.objective)))
    assert ins.moved(pb, rp.solution) == ins.moved(pb, rb.solution)
    assert registry.solver("slack_insertion", "portfolio") is solve_portfolio
