"""Task mapping solvers obey their time limit and refuse what cannot fit."""

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
    assert time.perf_counter() - t < 3.0  # limit + 2 s, the promise of ``limits_bench``
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL)
    ensure_feasible(p, r.solution)


def _sorted_least_loaded(problem):
    """The definition, one full sort of the nodes per job (the heap must agree)."""
    load = list(problem.base_mem)
    sol = []
    for job in problem.jobs:
        order = sorted(range(problem.n_nodes), key=lambda k: (load[k], k))[:len(job)]
        nodes = [0] * len(job)
        for slot, i in enumerate(sorted(range(len(job)), key=lambda i: (-job[i], i))):
            nodes[i] = order[slot]
            load[order[slot]] += job[i]
        sol.append(nodes)
    return sol, load


@pytest.mark.untimed
@pytest.mark.parametrize("seed", range(8))
def test_least_loaded_is_the_sorted_definition(seed: int) -> None:
    import random

    from sim.problems.task_mapping import TaskMapping, least_loaded

    rng = random.Random(seed)
    n = rng.randint(1, 12)
    jobs = tuple(tuple(rng.randint(1, 5) for _ in range(rng.randint(1, n)))
                 for _ in range(rng.randint(1, 15)))
    p = TaskMapping(n_nodes=n, mem_pages=5, jobs=jobs,
                    base=tuple(rng.randint(0, 3) for _ in range(n)))
    assert least_loaded(p) == _sorted_least_loaded(p)


def test_greedy_on_a_million_nodes_obeys_its_limit() -> None:
    from heuristics.task_mapping import greedy
    from sim.problems.task_mapping import TaskMapping

    p = TaskMapping(n_nodes=1_000_000, mem_pages=10, jobs=((1,) * 100_000,) * 40)
    t = time.perf_counter()
    r = greedy(p, time_limit=0.5)
    assert time.perf_counter() - t < 2.0
    assert r.status is Status.UNKNOWN and "time limit" in r.note
