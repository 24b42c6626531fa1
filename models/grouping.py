"""Exact memory-aware time-slice grouping: set partitioning over enumerated groups.

A *group* is a non-empty set of jobs that fits in one slice (``sum Q <= P``). Every
feasible group is enumerated and costed at once with the vectorised eq. 4 slice cost of
``sim.problems.grouping`` (``GroupingProblem.group_costs``). A schedule is a set of groups covering
every job exactly once:

    min  sum_g c'_g y_g + const      s.t.  sum_{g ∋ j} y_g = 1  (every job j),
                                            sum_g y_g <= S      (S fixed only),

with ``c'_g = c_g`` and ``const = 0`` when ``S`` is free, and ``c'_g = c_g - P T``,
``const = S P T`` when ``S`` is fixed (the slices left empty cost ``P T`` each).

Solvers (each ``solve(problem, *, time_limit=None, seed=0, **params) -> Result``):

- :func:`solve_ilp`: PuLP with its bundled CBC (one thread), costs scaled so the largest
  is ``1e6`` (CBC's absolute tolerances of about ``1e-6`` otherwise let it stop at a
  schedule ``1e-7`` relative worse than the optimum). CBC reports "Optimal" in
  ``LpStatus`` even when stopped on time with a solution; we read ``prob.sol_status``
  instead: ``LpSolutionOptimal`` -> OPTIMAL, ``LpSolutionIntegerFeasible`` (stopped) ->
  FEASIBLE with the LP-relaxation bound (solved separately, a valid lower bound).
- :func:`solve_cpsat`: CP-SAT, one worker, ``random_seed = seed`` (deterministic). CP-SAT
  needs integer costs: ``c'_g`` are scaled so the largest is ``1e9`` and rounded; the
  optimum is proved for the rounded costs, so it is exact up to ``J / 2e9`` of the
  largest group cost (well below any difference this model can resolve). The objective
  reported is recomputed from the chosen groups.
- :func:`solve_exhaustive`: every partition of the jobs into feasible groups (restricted
  growth strings, at most ``S`` blocks when ``S`` is fixed), for tiny cases and as a
  cross-check. :func:`count_partitions` tells how many there are.

All report the objective recomputed by ``GroupingProblem.objective``.
"""

from __future__ import annotations

import itertools
import time
import warnings
from typing import Any

import numpy as np

from sim.problems.grouping import GroupingProblem
from sim.result import Result, Status

__all__ = [
    "enumerate_groups",
    "group_table",
    "count_partitions",
    "solve_ilp",
    "solve_cpsat",
    "solve_exhaustive",
]


def enumerate_groups(problem: GroupingProblem) -> np.ndarray:
    """All non-empty job sets within ``P`` processors, as a bool matrix (G, J).

    Rows are in order of size, then lexicographic job order.
    """
    Q = problem.demand
    P = problem.processors
    J = len(Q)
    rows = []
    for size in range(1, min(J, P) + 1):
        for combo in itertools.combinations(range(J), size):
            if Q[list(combo)].sum() <= P:
                rows.append(combo)
    out = np.zeros((len(rows), J), dtype=bool)
    for g, combo in enumerate(rows):
        out[g, list(combo)] = True
    return out


def group_table(problem: GroupingProblem) -> tuple[np.ndarray, np.ndarray]:
    """``(members, cost)``: every feasible group and its eq. 4 slice cost."""
    members = enumerate_groups(problem)
    _, cost = problem.group_costs(members)
    return members, cost


def _coefficients(problem: GroupingProblem, cost: np.ndarray) -> tuple[np.ndarray, float]:
    if problem.slices is None:
        return cost, 0.0
    empty = problem.processors * problem.slice_length
    return cost - empty, problem.slices * empty


def _solution(problem: GroupingProblem, members: np.ndarray, chosen: list[int]) -> list[list[str]]:
    names = problem.names
    groups = [[names[j] for j in np.flatnonzero(members[g])] for g in chosen]
    if problem.slices is not None:
        groups += [[] for _ in range(problem.slices - len(groups))]
    return problem.canonical(groups)


def _finish(name: str, problem: GroupingProblem, status: Status, sol: list[list[str]] | None,
            bound: float | None, t0: float, seed: int, params: dict[str, Any]) -> Result:
    obj = problem.objective(sol) if sol is not None else None
    if status is Status.OPTIMAL:
        bound = obj
    return Result(name, status, obj, bound, time.perf_counter() - t0, sol, seed, params)


def _cover(members: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(members[:, j]) for j in range(members.shape[1])]


def solve_ilp(problem: GroupingProblem, *, time_limit: float | None = None, seed: int = 0,
              **params: Any) -> Result:
    """Set partitioning ILP with PuLP/CBC. See the module docstring for the statuses."""
    import pulp

    t0 = time.perf_counter()
    members, cost = group_table(problem)
    coef, const = _coefficients(problem, cost)
    # CBC's absolute tolerances (about 1e-6) decide near-ties: scale the costs so that the
    # largest is 1e6 and those tolerances are 1e-12 of it.
    top = float(np.max(np.abs(coef))) if coef.size else 0.0
    scale = 1e6 / top if top > 0 else 1.0

    def build(cat: str) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
        prob = pulp.LpProblem("grouping", pulp.LpMinimize)
        y = [prob.add_variable(f"y{g}", lowBound=0, upBound=1, cat=cat)
             for g in range(len(coef))]
        prob += pulp.lpSum(float(c * scale) * v for c, v in zip(coef, y, strict=True))
        for j, gs in enumerate(_cover(members)):
            prob += pulp.lpSum(y[g] for g in gs) == 1, f"job{j}"
        if problem.slices is not None:
            prob += pulp.lpSum(y) <= problem.slices, "slices"
        return prob, y

    def cbc(limit: int | None = None) -> Any:
        with warnings.catch_warnings():  # PuLP 3.x announces the PuLP 4 API; keep quiet
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.PULP_CBC_CMD(msg=False, timeLimit=limit, threads=1)

    prob, y = build(pulp.LpBinary)
    limit = None if time_limit is None else max(1, int(np.ceil(time_limit)))
    prob.solve(cbc(limit))
    if prob.sol_status == pulp.LpSolutionInfeasible:
        return _finish("exact-ilp", problem, Status.INFEASIBLE, None, None, t0, seed, params)
    chosen = [g for g, v in enumerate(y) if v.varValue is not None and v.varValue > 0.5]
    if prob.sol_status == pulp.LpSolutionOptimal:
        return _finish("exact-ilp", problem, Status.OPTIMAL,
                       _solution(problem, members, chosen), None, t0, seed, params)
    lp, _ = build(pulp.LpContinuous)
    lp.solve(cbc())
    bound = (float(pulp.value(lp.objective)) / scale + const
             if lp.status == pulp.LpStatusOptimal else None)
    if prob.sol_status == pulp.LpSolutionIntegerFeasible and chosen:
        sol = _solution(problem, members, chosen)
        if problem.is_feasible(sol):
            return _finish("exact-ilp", problem, Status.FEASIBLE, sol, bound, t0, seed, params)
    return _finish("exact-ilp", problem, Status.UNKNOWN, None, bound, t0, seed, params)


def solve_cpsat(problem: GroupingProblem, *, time_limit: float | None = None, seed: int = 0,
                **params: Any) -> Result:
    """Set partitioning with CP-SAT (one worker, ``random_seed = seed``)."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    members, cost = group_table(problem)
    coef, const = _coefficients(problem, cost)
    top = float(np.max(np.abs(coef))) if coef.size else 0.0
    scale = 1e9 / top if top > 0 else 1.0
    icoef = np.rint(coef * scale).astype(np.int64)
    model = cp_model.CpModel()
    y = [model.new_bool_var(f"y{g}") for g in range(len(coef))]
    for gs in _cover(members):
        model.add_exactly_one(y[g] for g in gs)
    if problem.slices is not None:
        model.add(sum(y) <= problem.slices)
    model.minimize(sum(int(c) * v for c, v in zip(icoef, y, strict=True)))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = float(time_limit)
    st = solver.solve(model)
    if st == cp_model.INFEASIBLE:
        return _finish("exact-cpsat", problem, Status.INFEASIBLE, None, None, t0, seed, params)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _finish("exact-cpsat", problem, Status.UNKNOWN, None, None, t0, seed, params)
    chosen = [g for g, v in enumerate(y) if solver.value(v)]
    sol = _solution(problem, members, chosen)
    status = Status.OPTIMAL if st == cp_model.OPTIMAL else Status.FEASIBLE
    # bound on the rounded objective, widened by the rounding of at most J groups
    slack = 0.5 * len(problem.jobs)
    bound = (solver.best_objective_bound - slack) / scale + const
    return _finish("exact-cpsat", problem, status, sol, bound, t0, seed, params)


def count_partitions(problem: GroupingProblem) -> int:
    """Number of partitions of the jobs into feasible groups (ignoring a fixed ``S``).

    Dynamic programme over job subsets (``2^J`` states): the group holding the lowest
    remaining job, times the partitions of the rest.
    """
    members = enumerate_groups(problem)
    J = members.shape[1]
    bits = members.astype(np.int64) @ (1 << np.arange(J, dtype=np.int64))
    low = np.argmax(members, axis=1)
    by_low: list[list[int]] = [[] for _ in range(J)]
    for b, lo in zip(bits.tolist(), low.tolist(), strict=True):
        by_low[lo].append(b)
    f = [0] * (1 << J)
    f[0] = 1
    for mask in range(1, 1 << J):
        lo = (mask & -mask).bit_length() - 1
        f[mask] = sum(f[mask ^ b] for b in by_low[lo] if b & mask == b)
    return f[(1 << J) - 1]


def solve_exhaustive(problem: GroupingProblem, *, time_limit: float | None = None,
                     seed: int = 0, **params: Any) -> Result:
    """Enumerate every partition into feasible groups; OPTIMAL when it finishes."""
    t0 = time.perf_counter()
    members, cost = group_table(problem)
    coef, const = _coefficients(problem, cost)
    J = members.shape[1]
    bits = (members.astype(np.int64) @ (1 << np.arange(J, dtype=np.int64))).tolist()
    table = dict(zip(bits, coef.tolist(), strict=True))
    Q = problem.demand.tolist()
    P = problem.processors
    S = problem.slices
    best: list[Any] = [np.inf, None]
    count = [0]
    stopped = [False]

    def rec(j: int, blocks: list[int], used: list[int]) -> None:
        if stopped[0]:
            return
        if j == J:
            count[0] += 1
            if time_limit is not None and count[0] % 4096 == 0 and \
                    time.perf_counter() - t0 > time_limit:
                stopped[0] = True
            val = sum(table[b] for b in blocks)
            if val < best[0]:
                best[0], best[1] = val, list(blocks)
            return
        for i in range(len(blocks)):
            if used[i] + Q[j] <= P:
                blocks[i] |= 1 << j
                used[i] += Q[j]
                rec(j + 1, blocks, used)
                blocks[i] ^= 1 << j
                used[i] -= Q[j]
        if S is None or len(blocks) < S:
            blocks.append(1 << j)
            used.append(Q[j])
            rec(j + 1, blocks, used)
            blocks.pop()
            used.pop()

    rec(0, [], [])
    # the number of partitions visited is reported with the parameters
    params = {**params, "partitions": count[0]}
    if best[1] is None:
        status = Status.UNKNOWN if stopped[0] else Status.INFEASIBLE
        return _finish("exhaustive", problem, status, None, None, t0, seed, params)
    index = {b: g for g, b in enumerate(bits)}
    sol = _solution(problem, members, [index[b] for b in best[1]])
    status = Status.FEASIBLE if stopped[0] else Status.OPTIMAL
    return _finish("exhaustive", problem, status, sol, None, t0, seed, params)
