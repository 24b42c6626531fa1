"""Task mapping solvers obey their time limit and refuse what cannot fit (issue 14 item 6)."""

from __future__ import annotations

import time

import pytest

from models import task_mapping as tm
from sim.problems import ensure_feasible
from sim.problems.task_mapping import random_problem
from sim.result import Status


@pytest.mark.parametrize("solve", [tm.solve_cpsat, tm.solve_ilp])
def test_medium_instance_stops_at_the_limit(solve) -> None:
    p = random_problem(64, 60, 1)  # ~40 000 assignment variables
    t = time.perf_counter()
    r = solve(p, time_limit=0.5)
    assert time.perf_counter() - t < 2.5
    assert r.status == Status.FEASIBLE
    ensure_feasible(p, r.solution)
    assert r.bound <= r.objective


@pytest.mark.parametrize(("solve", "name"), [(tm.solve_cpsat, "cpsat"), (tm.solve_ilp, "ilp")])
def test_too_large_model_is_refused_up_front(solve, name) -> None:
    p = random_problem(1024, 500, 1)
    t = time.perf_counter()
    with pytest.raises(ValueError, match=f"task_mapping {name}: .* assignment variables"):
        solve(p, time_limit=1.0)
    assert time.perf_counter() - t < 1.0


def test_brute_refuses_before_enumerating() -> None:
    p = random_problem(1024, 500, 1)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="more than 2000000 placements"):
        tm.solve_brute(p, time_limit=1.0)
    assert time.perf_counter() - t < 1.0


def test_brute_stopped_returns_best_so_far() -> None:
    p = random_problem(6, 4, 2, sizes=(2, 3))
    r = tm.solve_brute(p, time_limit=0.05, max_placements=10**9)
    assert r.status == Status.FEASIBLE
    ensure_feasible(p, r.solution)
    full = tm.solve_brute(random_problem(4, 2, 1, sizes=(1, 2)))
    assert full.status == Status.OPTIMAL


def test_ilp_cbc_killed_past_its_limit() -> None:
    """CBC overruns ``-sec`` in its root preprocessing on this size (measured 1.6 s for a
    0.57 s limit); the watchdog of ``models.cbc.solve_guarded`` ends it."""
    p = random_problem(64, 35, 1)  # ~18 500 assignment variables: built in time
    t = time.perf_counter()
    r = tm.solve_ilp(p, time_limit=1.0)
    assert time.perf_counter() - t < 2.0
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    ensure_feasible(p, r.solution)
