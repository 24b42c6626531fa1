"""The time-indexed insertion MIP (``ti``) and the ``cpsat+ti`` portfolio: brute force
agrees on random small instances, the safe bound is never above the optimum, bad data is
refused, the time limit holds."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from models import slack_insertion as si
from models.slack_insertion.timeindexed import solve_ti
from models.slack_insertion.tiportfolio import solve_cpsat_ti
from sim import registry
from sim.problems import insertion as ins
from sim.result import Status

SNAPSHOTS = Path(__file__).resolve().parents[2] / "instances" / "data" / "slack_snapshots"


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
    with pytest.raises(ValueError, match="capacity = 20000000"):
        solve_ti(big)
    solve_ti(big, backend="scip", time_limit=20)  # SCIP's range is larger


def test_a_model_beyond_max_nonzeros_is_refused():
    with pytest.raises(ValueError, match="max_nonzeros=10"):
        solve_ti(small(0), max_nonzeros=10)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        solve_ti(small(0), backend="cbc")


@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan")])
def test_bad_time_limit_is_a_clear_error(bad):
    for fn in (solve_ti, solve_cpsat_ti):
        with pytest.raises(ValueError, match="time_limit"):
            fn(small(0), time_limit=bad)


@pytest.mark.timed
@pytest.mark.parametrize("name", ["ti", "cpsat+ti"])
def test_time_limit_holds_on_an_open_snapshot(name):
    """``kth-1997-02-remove-13402954-k29`` needs about 15 s of HiGHS at load 10: a 3 s
    limit stops it (the worker is killed), FEASIBLE, bound below the price."""
    pb = ins.load(SNAPSHOTS / "kth-1997-02-remove-13402954-k29.json")
    t0 = time.perf_counter()
    r = registry.solver("slack_insertion", name)(pb, time_limit=3)
    assert time.perf_counter() - t0 < 3 + 2.0
    assert r.status is Status.FEASIBLE
    assert ins.check(pb, r.solution) == []
    assert r.bound is None or r.bound <= r.objective


@pytest.mark.timed
def test_portfolio_runs_cpsat_on_when_the_mip_refuses(monkeypatch):
    """A MIP refusal (too large, beyond its range) is no answer of the portfolio: CP-SAT
    runs on the time left from its first schedule, and the note says why."""
    from models.slack_insertion import tiportfolio

    def refuse(*args, **kwargs):
        raise ValueError("ti: too large")

    monkeypatch.setattr(tiportfolio, "solve_stages", refuse)
    monkeypatch.setattr(tiportfolio, "CPSAT_SHARE", 1e-4)
    pb = ins.load(SNAPSHOTS / "kth-1997-02-remove-13402954-k29.json")
    t0 = time.perf_counter()
    r = solve_cpsat_ti(pb, time_limit=4)
    assert time.perf_counter() - t0 < 4 + 2.0
    assert "MIP refused: ti: too large" in r.note and "CP-SAT on the time left" in r.note
    assert r.params["cpsat_status"] == "FEASIBLE"
    assert ins.check(pb, r.solution) == []


def test_portfolio_runs_cpsat_alone_when_the_mip_model_is_too_large(monkeypatch):
    from models.slack_insertion import tiportfolio

    monkeypatch.setattr(tiportfolio, "MAX_NONZEROS", 1)
    pb = small(0)
    ref = si.solve_brute(pb)
    r = solve_cpsat_ti(pb, time_limit=20)
    assert "CP-SAT alone" in r.note and r.params["ti_size"][1] > 1
    assert r.status is Status.OPTIMAL
    assert_agrees(pb, r, ref)
