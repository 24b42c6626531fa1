"""Bounds of the grouping solvers are never on the wrong side, and every
solver stays within its limit (item 6): a property test over small random problems, with
and without (short) time limits, and the large-problem refusal."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models import grouping as exact
from sim.problems import ensure_feasible, objective
from sim.problems.grouping import random_problem
from sim.registry import SOLVERS, solver
from sim.result import Status

NAMES = sorted(SOLVERS["grouping"])
EXACT = ("exact-ilp", "exact-cpsat", "exhaustive")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=st.integers(2, 7), procs=st.integers(1, 4), seed=st.integers(0, 10**6),
       fixed=st.booleans(), limit=st.sampled_from([None, 0.0, 0.01, 0.05]))
def test_no_bound_is_beaten_by_any_solution(jobs, procs, seed, fixed, limit):
    p = random_problem(jobs, procs + 1, seed=seed, max_procs=procs, memory=200)
    if fixed:
        p = random_problem(jobs, procs + 1, seed=seed, max_procs=procs, memory=200,
                           slices=min(jobs, p.min_slices + seed % 2))
    results = {n: solver("grouping", n)(p, time_limit=limit) for n in NAMES}
    found = []
    for n, r in results.items():
        if r.solution is not None:
            ensure_feasible(p, r.solution)  # every solution returned is feasible ...
            assert r.objective == objective(p, r.solution)  # ... and its objective recomputed
            assert r.status in (Status.OPTIMAL, Status.FEASIBLE), n
            found.append(r.objective)
        else:
            assert r.status in (Status.UNKNOWN, Status.INFEASIBLE) and r.objective is None
    for n, r in results.items():
        if r.bound is not None:
            for obj in found:  # a lower bound never above any feasible schedule's cost
                assert r.bound <= obj + 1e-6 * max(1.0, abs(obj)), (n, r.bound, obj)
        if r.status is Status.OPTIMAL:
            assert r.bound == r.objective
            assert all(r.objective <= obj + 1e-6 * max(1.0, abs(obj)) for obj in found), n
        if r.status is Status.INFEASIBLE:  # only a fixed S can be infeasible
            assert fixed
            if n in EXACT:  # proved: no solver finds a schedule (a heuristic's INFEASIBLE
                assert not found  # only says that it found none, as Status documents)


@pytest.mark.timed
def test_exact_models_refuse_a_problem_too_large_at_once():
    p = random_problem(60, 16, seed=2, max_procs=2, memory=100)
    for name in ("exact-ilp", "exact-cpsat", "exhaustive"):
        t = time.perf_counter()
        with pytest.raises(ValueError, match="more than 100000 feasible groups of its 60 jobs"):
            solver("grouping", name)(p, time_limit=30)
        assert time.perf_counter() - t < 5


@pytest.mark.timed
@pytest.mark.parametrize("name", NAMES)
def test_every_solver_stops_near_its_limit(name):
    # 30 jobs, P = 6: about 10^5 groups to enumerate and cost, far beyond 0.3 s
    p = random_problem(30, 6, seed=3, max_procs=3, memory=100)
    t = time.perf_counter()
    try:
        r = solver("grouping", name)(p, time_limit=0.3)
    except ValueError as exc:  # refused up front is within the limit too
        assert "feasible groups" in str(exc)
    else:
        assert r.status is not Status.OPTIMAL or r.bound == r.objective
        if r.status is Status.UNKNOWN:
            assert r.solution is None and r.note
    assert time.perf_counter() - t < 0.3 + 3.0  # generous: the machine is shared


def test_count_partitions_refuses_many_jobs():
    with pytest.raises(ValueError, match="at most 24"):
        exact.count_partitions(random_problem(30, 4, seed=0, max_procs=1))
