"""The certified LP bound of slack insertion is never above the optimum, and the
portfolio that uses it keeps the honesty rules of the exact solvers."""

from __future__ import annotations

import functools

import pytest

from models import slack_insertion as si
from models.slack_insertion import portfolio
from models.slack_insertion.bounds import BoundOptions, insertion_bound
from models.slack_insertion.portfolio import solve_portfolio
from sim import registry
from sim.problems import insertion as ins
from sim.result import Status


def small(seed: int) -> ins.InsertionProblem:
    """Random small problems, crowded enough that the capacity rows bind."""
    k = 2 + seed % 3
    return ins.random_problem(seed, k, capacity=3 + seed % 2, max_t=4, max_slack=6,
                              new=seed % 4 != 0)


@functools.cache
def optimum(seed: int):
    """Brute force's result on ``small(seed)``, computed once per worker: several tests
    check bounds, fixing and other solvers against the same optima."""
    return si.solve_brute(small(seed))


@pytest.mark.parametrize("seed", range(30))
def test_bound_is_never_above_the_brute_force_optimum(seed):
    pb = small(seed)
    opt = optimum(seed)
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
        opt = optimum(seed).objective
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
    rb = optimum(seed)
    rp = solve_portfolio(pb)
    assert rp.status is Status.OPTIMAL
    assert ins.check(pb, rp.solution) == []
    assert rp.objective == pytest.approx(rb.objective, abs=1e-6 * (1 + abs(rb.objective)))
    assert ins.moved(pb, rp.solution) == ins.moved(pb, rb.solution)
    assert registry.solver("slack_insertion", "portfolio") is solve_portfolio


# ---- cardinality cuts and reduced-cost fixing


def big_jobs() -> ins.InsertionProblem:
    """Three waiting jobs of 6 processors on 10 free: no two run together, which the plain
    LP does not see (it runs each at 10/18) and a cardinality cut does."""
    waiting = [ins.WaitingJob(id=i, n=6, t=4, te=4 * i, s=8.0, s0=8.0, p=0.5, arrival=0)
               for i in range(3)]
    return ins.InsertionProblem(now=0, capacity=10, running=(), waiting=tuple(waiting),
                                new=ins.NewJob(id=9, n=6, t=4, p=0.5, arrival=0))


def test_cardinality_cuts_lift_the_bound_and_stay_below_the_optimum():
    pb = big_jobs()
    opt = si.solve_brute(pb).objective
    plain = insertion_bound(pb, options=BoundOptions(cuts=False))
    cut = insertion_bound(pb)
    assert cut.cuts > 0
    assert plain.bound < cut.bound <= opt + 1e-9 * max(1.0, abs(opt))


@pytest.mark.parametrize("seed", range(30))
def test_fixing_never_drops_a_start_of_the_optimum(seed):
    pb = small(seed)
    opt = optimum(seed)
    b = insertion_bound(pb, incumbent=opt.solution)
    drop = b.forbidden(opt.objective)
    sol = opt.solution
    pairs = list(sol.starts.items())
    if pb.new is not None:
        pairs.append((pb.new.id, sol.new_start))
    for jid, st in pairs:
        assert st not in drop.get(jid, ()), (jid, st, drop)


def test_fixing_drops_starts_on_crowded_instances():
    """Not vacuous: with the optimum as the incumbent, the reduced costs rule out starts."""
    dropped = 0
    for seed in range(30):
        pb = small(seed)
        opt = optimum(seed)
        dropped += sum(map(len, insertion_bound(pb, incumbent=opt.solution)
                           .forbidden(opt.objective).values()))
    assert dropped >= 30


@pytest.mark.parametrize("seed", range(20))
def test_cpsat_on_fixed_domains_finds_the_definitions_optimum(seed):
    pb = small(seed)
    opt = optimum(seed)
    start = ins.current_schedule(pb)
    drop = insertion_bound(pb, incumbent=start).forbidden(ins.objective(pb, start))
    r = si.solve_cpsat(pb, incumbent=start, forbidden=drop)
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(opt.objective, abs=1e-6 * (1 + abs(opt.objective)))
    assert ins.moved(pb, r.solution) == ins.moved(pb, opt.solution)


@pytest.mark.parametrize("seed", range(8))
def test_portfolio_proves_through_the_fixed_domains(seed, monkeypatch):
    """With the first CP-SAT run given no time, the proof comes from stage 3."""
    monkeypatch.setattr(portfolio, "SEARCH_SHARE", 0.0)
    pb = big_jobs() if seed == 0 else small(seed)
    rb = si.solve_brute(pb)
    rp = solve_portfolio(pb, time_limit=30)
    assert rp.status is Status.OPTIMAL, rp.note
    assert "fixed" in rp.note
    assert rp.objective == pytest.approx(rb.objective, abs=1e-6 * (1 + abs(rb.objective)))
    assert ins.moved(pb, rp.solution) == ins.moved(pb, rb.solution)


def test_an_infeasible_incumbent_for_cpsat_is_a_clear_error():
    pb = small(1)
    cur = ins.current_schedule(pb)
    bad = ins.InsertionSchedule(cur.new_start, {j: pb.now - 10 for j in cur.starts})
    with pytest.raises(ValueError, match="incumbent"):
        si.solve_cpsat(pb, incumbent=bad)


def test_forbidden_starts_of_an_unknown_job_are_refused():
    with pytest.raises(ValueError, match="not in the problem"):
        si.solve_cpsat(small(1), forbidden={10**6: {0}})
