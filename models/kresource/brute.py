"""Brute force for tiny K-resource instances (the cross-check of the CP-SAT and CBC
models). Each raises ValueError beyond its size limit; ``time_limit`` (seconds) stops
the enumeration and reports FEASIBLE with the best found (never OPTIMAL).

- :func:`solve_epochs`: every assignment of jobs to epochs as restricted growth strings,
  capacity pruned, branch and bound on the number of epochs (n <= 14).
- :func:`solve_selection`: every subset of the eligible candidates (<= 20).
- :func:`solve_response`: the serial schedule-generation scheme over every permutation
  (n <= 8): it generates every active schedule, and some active schedule is optimal for
  a regular objective such as the total weighted response time.
"""

from __future__ import annotations

import itertools
import time

from sim.problems import checker, scorer
from sim.problems.kresource import EpochProblem, ResponseProblem, SelectionProblem, objective
from sim.result import Result, Status, build


class _Stop(Exception):
    pass


def solve_epochs(problem: EpochProblem, *, time_limit: float | None = None, seed: int = 0,
                 max_jobs: int = 14) -> Result:
    """Minimum number of epochs by enumeration (module docstring)."""
    n, K, cap, dem = problem.n, problem.K, problem.capacity, problem.demands
    if n > max_jobs:
        raise ValueError(f"brute force: {n} jobs > max_jobs {max_jobs}")
    t0 = time.perf_counter()
    lb = problem.lower_bound()
    best: list = [n + 1, None]
    loads: list[list[int]] = []
    assign = [0] * n
    count = [0]

    def rec(j: int) -> None:
        count[0] += 1
        if time_limit is not None and count[0] % 4096 == 0 \
                and time.perf_counter() - t0 > time_limit:
            raise _Stop
        if len(loads) >= best[0]:
            return
        if j == n:
            best[0] = len(loads)
            best[1] = [[i for i in range(n) if assign[i] == e] for e in range(len(loads))]
            return
        for e, ld in enumerate(loads):
            if all(ld[k] + dem[j][k] <= cap[k] for k in range(K)):
                for k in range(K):
                    ld[k] += dem[j][k]
                assign[j] = e
                rec(j + 1)
                for k in range(K):
                    ld[k] -= dem[j][k]
                if best[0] == lb:
                    return
        if len(loads) + 1 < best[0]:
            loads.append(list(dem[j]))
            assign[j] = len(loads) - 1
            rec(j + 1)
            loads.pop()

    stopped = False
    try:
        rec(0)
    except _Stop:
        stopped = True
    status = Status.FEASIBLE if stopped else Status.OPTIMAL
    return build(solver="brute", status=status, solution=best[1],
                 bound=lb if stopped else None, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 params={"time_limit": time_limit})


def solve_selection(problem: SelectionProblem, *, time_limit: float | None = None,
                    seed: int = 0, max_candidates: int = 20) -> Result:
    """Optimal backfill selection by enumeration (module docstring)."""
    t0 = time.perf_counter()
    elig = [j for j in range(problem.n) if problem.eligible(j)]
    if len(elig) > max_candidates:
        raise ValueError(f"brute force: {len(elig)} eligible candidates > {max_candidates}")
    best, best_val, stopped = [], -1.0, False
    for r in range(len(elig) + 1):
        for sub in itertools.combinations(elig, r):
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                stopped = True
                break
            try:
                v = objective(problem, list(sub))
            except ValueError:
                continue
            if v > best_val:
                best, best_val = list(sub), v
        if stopped:
            break
    return build(solver="brute", status=Status.FEASIBLE if stopped else Status.OPTIMAL,
                 solution=best, check=checker(problem), objective=scorer(problem), sense="max",
                 runtime=time.perf_counter() - t0, seed=seed, params={"time_limit": time_limit})


def solve_response(problem: ResponseProblem, *, time_limit: float | None = None,
                   seed: int = 0, max_jobs: int = 8) -> Result:
    """Minimum total (weighted) response time by enumeration (module docstring)."""
    from heuristics.kresource import serial_schedule

    if problem.n > max_jobs:
        raise ValueError(f"brute force: {problem.n} jobs > max_jobs {max_jobs}")
    t0 = time.perf_counter()
    best, best_val, stopped = None, float("inf"), False
    for order in itertools.permutations(range(problem.n)):
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            stopped = True
            break
        s = serial_schedule(problem, order)
        v = objective(problem, s)
        if v < best_val:
            best, best_val = s, v
    # stopped before the first order: no schedule, so UNKNOWN (as every stopped solver)
    status = Status.OPTIMAL if not stopped else \
        Status.FEASIBLE if best is not None else Status.UNKNOWN
    return build(solver="brute", status=status,
                 solution=best, check=checker(problem), objective=scorer(problem),
                 runtime=time.perf_counter() - t0, seed=seed, params={"time_limit": time_limit})


def optimal_partitions(problem: EpochProblem, epochs: int) -> list[list[list[int]]]:
    """Every partition of the jobs into exactly ``epochs`` feasible epochs (unordered;
    each as sorted epochs ordered by their smallest job), for n <= 14."""
    n, K, cap, dem = problem.n, problem.K, problem.capacity, problem.demands
    if n > 14:
        raise ValueError(f"optimal_partitions: {n} jobs > 14")
    out: list[list[list[int]]] = []
    loads: list[list[int]] = []
    groups: list[list[int]] = []

    def rec(j: int) -> None:
        if j == n:
            if len(groups) == epochs:
                out.append([list(g) for g in groups])
            return
        for g, ld in zip(groups, loads, strict=True):
            if all(ld[k] + dem[j][k] <= cap[k] for k in range(K)):
                for k in range(K):
                    ld[k] += dem[j][k]
                g.append(j)
                rec(j + 1)
                g.pop()
                for k in range(K):
                    ld[k] -= dem[j][k]
        if len(groups) < epochs:
            groups.append([j])
            loads.append(list(dem[j]))
            rec(j + 1)
            groups.pop()
            loads.pop()

    rec(0)
    return out
