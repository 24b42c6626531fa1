"""Exact memory-aware time-slice grouping: set partitioning over enumerated groups.

A *group* is a non-empty set of jobs that fits in one slice (``sum Q <= P``). Every
feasible group is enumerated and costed at once with the vectorised eq. 4 slice cost of
``sim.problems.grouping`` (``GroupingProblem.group_costs``). A schedule is a set of groups covering
every job exactly once:

    min  sum_g c'_g y_g + const      s.t.  sum_{g ∋ j} y_g = 1  (every job j),
                                            sum_g y_g <= S      (S fixed only),

with ``c'_g = c_g`` and ``const = 0`` when ``S`` is free, and ``c'_g = c_g - P T``,
``const = S P T`` when ``S`` is fixed (the slices left empty cost ``P T`` each).

Solvers (each ``solve(problem, *, time_limit=None, seed=0) -> Result``):

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

All report the objective recomputed by ``GroupingProblem.objective`` through the one
result builder ``sim.result.build`` (a bound on the wrong side of the solution is dropped,
OPTIMAL needs its bound to meet the objective).

Exact range of the ILP: the backends solve in doubles with absolute tolerances, so a
slice cost far below the largest one is invisible to them; :func:`solve_ilp` refuses a
problem whose cost spread exceeds :data:`SPREAD_LIMIT` of its backend (one line naming
the field and the backend).

Limits: every solver checks ``time_limit`` (seconds) during the group
enumeration, the costing (in chunks), the model building and the search, and returns its
best solution when stopped (FEASIBLE, or UNKNOWN without one; a stopped solver never
claims OPTIMAL). A problem with more than :data:`MAX_GROUPS` feasible groups is refused
up front with a one-line ``ValueError`` (its table and model would not fit in memory); the
count stops as soon as it passes the cap, so the refusal is immediate.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from models import mip
from models.deadline import limit_of
from models.interrupt import run_cpsat
from sim.problems import checker, scorer
from sim.problems.grouping import GroupingProblem, check, objective
from sim.result import Result, Status, build

SPREAD_LIMIT: dict[str, float] = {"cbc": 1e5, "highs": 1e6, "scip": 1e8}
"""Largest cost spread (:func:`cost_spread`) :func:`solve_ilp` takes on each backend.
The ILP scales its costs so that the largest is ``1e6``, and the backends' absolute
tolerances on those scaled costs (about ``1e-6`` for CBC, ``1e-7`` for HiGHS, ``1e-9``
for SCIP) hide any smaller difference between two schedules: a worse schedule is then
proved optimal. A difference of ``1e-6`` of ``max(1, optimum)`` (the tolerance of a
proof, ``sim.result.build``) stays above those tolerances while the spread is at most
``1e6``, ``1e7`` and ``1e9``; each limit is a decade below. Measured against exhaustive
search (``sim/experiments/engine/mip_range.py``, entry ``grouping:wide``: two jobs whose
slice together thrashes beside two cheap jobs whose pairing decides the optimum, where
the schedules differ by about a third of the optimum): every answer right up to a
spread of 1.2e13 on CBC and HiGHS and 4.3e18 on SCIP, false optima by 6.0e14 and
4.4e19 (``results/mip_range.md``). The bundled case-study and generated instances have
spreads of at most 13."""

MAX_GROUPS = 100_000
"""Most feasible groups an exact model takes (its table and model stay well under 1 GB)."""
_CHUNK = 2048  # groups costed per call between two checks of the time limit


class _Deadline:
    """Wall-clock deadline ``t0 + time_limit`` (seconds); never passed when no limit."""

    def __init__(self, t0: float, time_limit: float | None) -> None:
        self.t0 = t0
        time_limit = limit_of(time_limit)
        self.end = None if time_limit is None else t0 + time_limit

    def passed(self) -> bool:
        return self.end is not None and time.perf_counter() >= self.end

    def left(self) -> float | None:
        return None if self.end is None else max(0.0, self.end - time.perf_counter())

__all__ = [
    "enumerate_groups",
    "group_table",
    "count_partitions",
    "cost_spread",
    "check_spread",
    "SPREAD_LIMIT",
    "solve_ilp",
    "solve_cpsat",
    "solve_exhaustive",
]


def _group_rows(problem: GroupingProblem, limit: int | None,
                deadline: _Deadline | None = None) -> list[tuple[int, ...]] | None:
    """Feasible groups as sorted index tuples, by depth-first search over the jobs in order
    of demand (every prefix of a feasible group is feasible, and the children of a group
    stop at the first job that does not fit, so the work is linear in the groups found).
    None when the deadline passed; ValueError as soon as there are more than ``limit``."""
    Q = problem.demand.tolist()
    P = problem.processors
    J = len(Q)
    order = sorted(range(J), key=lambda i: (Q[i], i))
    q = [Q[i] for i in order]
    found: list[tuple[int, ...]] = []
    stack: list[tuple[tuple[int, ...], int, int]] = [((), 0, 0)]  # (group, next pos, used)
    steps = 0
    while stack:
        steps += 1
        group, nxt, used = stack.pop()
        for x in range(nxt, J):
            if used + q[x] > P:
                break
            g = (*group, x)
            found.append(g)
            stack.append((g, x + 1, used + q[x]))
        if limit is not None and len(found) > limit:
            raise ValueError(
                f"grouping problem{' ' + repr(problem.name) if problem.name else ''}: "
                f"more than {limit} "
                f"feasible groups of its {J} jobs; the exact models cannot hold them in "
                "memory: use a heuristic (greedy, footprint, knee)")
        if deadline is not None and steps % 256 == 0 and deadline.passed():
            return None
    rows = [tuple(sorted(order[x] for x in g)) for g in found]
    rows.sort(key=lambda r: (len(r), r))
    return rows


def enumerate_groups(problem: GroupingProblem, *, limit: int | None = MAX_GROUPS) -> np.ndarray:
    """All non-empty job sets within ``P`` processors, as a bool matrix (G, J).

    Rows are in order of size, then lexicographic job order. ValueError when there are
    more than ``limit`` (None: no cap).
    """
    rows = _group_rows(problem, limit)
    assert rows is not None
    return _members(rows, len(problem.jobs))


def _members(rows: list[tuple[int, ...]], J: int) -> np.ndarray:
    out = np.zeros((len(rows), J), dtype=bool)
    for g, combo in enumerate(rows):
        out[g, list(combo)] = True
    return out


def group_table(problem: GroupingProblem, *, limit: int | None = MAX_GROUPS,
                deadline: _Deadline | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(members, cost)``: every feasible group and its eq. 4 slice cost.

    ValueError (up front) with more than ``limit`` groups; None when ``deadline`` passed
    before the table was complete.
    """
    rows = _group_rows(problem, limit, deadline)
    if rows is None:
        return None
    members = _members(rows, len(problem.jobs))
    cost = np.empty(len(rows))
    for a in range(0, len(rows), _CHUNK):
        if deadline is not None and deadline.passed():
            return None
        cost[a:a + _CHUNK] = problem.group_costs(members[a:a + _CHUNK])[1]
    return members, cost


def _coefficients(problem: GroupingProblem, cost: np.ndarray) -> tuple[np.ndarray, float]:
    if problem.slices is None:
        return cost, 0.0
    empty = problem.processors * problem.slice_length
    return cost - empty, problem.slices * empty


def cost_spread(members: np.ndarray, cost: np.ndarray, coef: np.ndarray) -> tuple[float, float]:
    """``(top, low)``: the largest absolute cost coefficient of the ILP (``coef``, in
    processor-seconds) and a lower bound on the optimum, ``sum_j min_{g ∋ j} c_g / |g|``
    (a schedule's cost is the sum of its slices' costs, each shared out among its jobs;
    a slice left empty costs ``P T >= 0``). The spread is ``top / max(1, low)``: the
    ratio of the largest number the backend must hold to the smallest difference a proof
    must see (``sim.result.build`` compares relative to ``max(1, |value|)``)."""
    if not coef.size:
        return 0.0, 0.0
    sizes = members.sum(axis=1)
    share = cost / sizes
    low = sum(float(np.min(share[members[:, j]])) for j in range(members.shape[1]))
    return float(np.max(np.abs(coef))), max(0.0, low)


def check_spread(problem: GroupingProblem, members: np.ndarray, cost: np.ndarray,
                 coef: np.ndarray, backend: str) -> None:
    """Refuse (ValueError, one line naming the field and the backend) a cost spread
    (:func:`cost_spread`) beyond :data:`SPREAD_LIMIT` of ``backend``."""
    top, low = cost_spread(members, cost, coef)
    limit = SPREAD_LIMIT[backend]
    if top <= limit * max(1.0, low):
        return
    g = int(np.argmax(np.abs(coef)))
    misses = problem.group_costs(members[g:g + 1])[0][0]
    if problem.latency * misses >= abs(coef[g]) / 2:
        j = max(np.flatnonzero(members[g]), key=lambda i: problem.jobs[i].refs)
        field = f"field 'jobs[{j}].refs' = {problem.jobs[j].refs:.15g} (latency " \
                f"{problem.latency:.15g} s)"
    else:
        field = f"field 'slice_length' = {problem.slice_length:.15g}"
    raise ValueError(f"{field}: slice costs up to {top:.3g} processor-seconds against a "
                     f"lower bound of {low:.3g} on the optimum; the {mip.NAMES[backend]} "
                     f"backend proves only schedules whose largest slice cost is at most "
                     f"{limit:.0e} times max(1, that bound); use --solver exact-cpsat or "
                     f"exhaustive" + ("" if backend == "scip" else ", or --backend scip"))


def _solution(problem: GroupingProblem, members: np.ndarray, chosen: list[int]) -> list[list[str]]:
    names = problem.names
    groups = [[names[j] for j in np.flatnonzero(members[g])] for g in chosen]
    if problem.slices is not None:
        groups += [[] for _ in range(problem.slices - len(groups))]
    return problem.canonical(groups)


def _finish(name: str, problem: GroupingProblem, status: Status, sol: list[list[str]] | None,
            bound: float | None, t0: float, seed: int, params: dict[str, Any],
            note: str = "") -> Result:
    return build(solver=name, status=status, solution=sol, check=checker(problem),
                 objective=scorer(problem), bound=bound, runtime=time.perf_counter() - t0,
                 seed=seed, params=params, note=note)


_STOPPED = "stopped by the time limit before the group table was complete"
_STOPPED_BUILD = "stopped by the time limit while building the model"


class _Stopped(Exception):
    """The deadline passed while building a model."""


def _cover(members: np.ndarray) -> list[np.ndarray]:
    return [np.flatnonzero(members[:, j]) for j in range(members.shape[1])]


def solve_ilp(problem: GroupingProblem, *, time_limit: float | None = None,
              seed: int = 0, backend: str = "cbc") -> Result:
    """Set partitioning ILP with PuLP on ``backend`` (``"cbc"``, ``"highs"`` or
    ``"scip"``, :mod:`models.mip`). See the module docstring for the statuses;
    ``time_limit`` in seconds, ``seed`` recorded only."""
    mip.check_backend(backend)
    t0 = time.perf_counter()
    params: dict[str, Any] = {"backend": backend}
    deadline = _Deadline(t0, time_limit)
    table = group_table(problem, deadline=deadline)  # refuses a too large problem first
    if table is None:
        return _finish("exact-ilp", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       _STOPPED)
    import pulp

    members, cost = table
    coef, const = _coefficients(problem, cost)
    check_spread(problem, members, cost, coef, backend)
    # CBC's absolute tolerances (about 1e-6) decide near-ties: scale the costs so that the
    # largest is 1e6 and those tolerances are 1e-12 of it.
    top = float(np.max(np.abs(coef))) if coef.size else 0.0
    scale = 1e6 / top if top > 0 else 1.0

    def build(cat: str) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
        prob = pulp.LpProblem("grouping", pulp.LpMinimize)
        y = []
        for g in range(len(coef)):
            if g % 4096 == 0 and deadline.passed():
                raise _Stopped
            y.append(prob.add_variable(f"y{g}", lowBound=0, upBound=1, cat=cat))
        prob += pulp.LpAffineExpression(
            [(v, float(c * scale)) for c, v in zip(coef, y, strict=True)])
        for j, gs in enumerate(_cover(members)):
            if deadline.passed():
                raise _Stopped
            prob += pulp.LpAffineExpression([(y[g], 1) for g in gs]) == 1, f"job{j}"
        if problem.slices is not None:
            prob += pulp.lpSum(y) <= problem.slices, "slices"
        return prob, y

    def solve(lp: pulp.LpProblem, limit: float | None) -> bool:
        """The backend with ``limit`` seconds, stopped ``overhead`` + 0.2 s past it
        (``models.mip.solve``); False when stopped without an answer."""
        return mip.solve(lp, backend=backend, time_limit=limit, grace=overhead + 0.2,
                         data=problem)

    t_build = time.perf_counter()
    try:
        prob, y = build(pulp.LpBinary)
    except _Stopped:
        return _finish("exact-ilp", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       _STOPPED_BUILD)
    # CBC's time limit does not count PuLP writing the model and CBC reading it: about
    # three times the build time (measured); keep that much of the limit for them
    overhead = (3.0 if backend == "cbc" else 1.0) * (time.perf_counter() - t_build) + 0.2
    left = deadline.left()
    if left is not None and left <= overhead:
        return _finish("exact-ilp", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       f"stopped by the time limit: too little time left for "
                       f"{mip.NAMES[backend]} to load the model (about {overhead:.1f} s)")
    if not solve(prob, None if left is None else max(0.1, left - overhead)):
        return _finish("exact-ilp", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       mip.killed_note(backend))
    if prob.sol_status == pulp.LpSolutionInfeasible:
        return _finish("exact-ilp", problem, Status.INFEASIBLE, None, None, t0, seed, params)
    chosen = [g for g, v in enumerate(y) if v.varValue is not None and v.varValue > 0.5]
    if prob.sol_status == pulp.LpSolutionOptimal:
        return _finish("exact-ilp", problem, Status.OPTIMAL,
                       _solution(problem, members, chosen), None, t0, seed, params)
    bound = None
    left = deadline.left()
    if left is None or left > 2 * overhead:  # the LP relaxation's optimum: a lower bound
        try:
            lp, _ = build(pulp.LpContinuous)
        except _Stopped:
            lp = None
        left = deadline.left()
        if lp is not None and (left is None or left > overhead):
            if not solve(lp, None if left is None else max(0.1, left - overhead)):
                lp = None
        if lp is not None:
            if lp.status == pulp.LpStatusOptimal and lp.sol_status == pulp.LpSolutionOptimal:
                bound = float(pulp.value(lp.objective)) / scale + const
    if prob.sol_status == pulp.LpSolutionIntegerFeasible and chosen:
        sol = _solution(problem, members, chosen)
        if not check(problem, sol):
            return _finish("exact-ilp", problem, Status.FEASIBLE, sol, bound, t0, seed, params)
    return _finish("exact-ilp", problem, Status.UNKNOWN, None, bound, t0, seed, params,
                   f"stopped by the time limit before {mip.NAMES[backend]} found a solution")


def solve_cpsat(problem: GroupingProblem, *, time_limit: float | None = None,
                seed: int = 0) -> Result:
    """Set partitioning with CP-SAT (one worker, ``random_seed = seed``; ``time_limit``
    in seconds)."""
    t0 = time.perf_counter()
    params: dict[str, Any] = {}
    deadline = _Deadline(t0, time_limit)
    table = group_table(problem, deadline=deadline)  # refuses a too large problem first
    if table is None:
        return _finish("exact-cpsat", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       _STOPPED)
    from ortools.sat.python import cp_model

    members, cost = table
    coef, const = _coefficients(problem, cost)
    top = float(np.max(np.abs(coef))) if coef.size else 0.0
    scale = 1e9 / top if top > 0 else 1.0
    icoef = np.rint(coef * scale).astype(np.int64)
    model = cp_model.CpModel()
    y = []
    for g in range(len(coef)):
        if g % 4096 == 0 and deadline.passed():
            break
        y.append(model.new_bool_var(f"y{g}"))
    for gs in _cover(members):
        if deadline.passed():
            break
        model.add_exactly_one(y[g] for g in gs)
    if problem.slices is not None:
        model.add(cp_model.LinearExpr.sum(y) <= problem.slices)
    if deadline.passed():
        return _finish("exact-cpsat", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       _STOPPED_BUILD)
    model.minimize(cp_model.LinearExpr.weighted_sum(y, [int(c) for c in icoef]))
    if deadline.passed():
        return _finish("exact-cpsat", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       _STOPPED_BUILD)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed) % 2**31  # CP-SAT takes a 32-bit seed
    left = deadline.left()  # None without a limit, also one over MAX_SECONDS (limit_of)
    if left is not None:
        solver.parameters.max_time_in_seconds = max(0.01, left)
    st = run_cpsat(solver, model)
    if st == cp_model.INFEASIBLE:
        return _finish("exact-cpsat", problem, Status.INFEASIBLE, None, None, t0, seed, params)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _finish("exact-cpsat", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       "stopped by the time limit before CP-SAT found a solution")
    chosen = [g for g, v in enumerate(y) if solver.value(v)]
    sol = _solution(problem, members, chosen)
    status = Status.OPTIMAL if st == cp_model.OPTIMAL else Status.FEASIBLE
    # bound on the rounded objective, widened by the rounding of at most J groups
    slack = 0.5 * len(problem.jobs)
    bound = (solver.best_objective_bound - slack) / scale + const
    if status is Status.OPTIMAL and \
            objective(problem, sol) - bound <= 1e-6 * max(1.0, abs(bound)):
        bound = None  # optimal within the rounding: the builder sets bound = objective
    return _finish("exact-cpsat", problem, status, sol, bound, t0, seed, params)


def count_partitions(problem: GroupingProblem) -> int:
    """Number of partitions of the jobs into feasible groups (ignoring a fixed ``S``).

    Dynamic programme over job subsets (``2^J`` states): the group holding the lowest
    remaining job, times the partitions of the rest.
    """
    J = len(problem.jobs)
    if J > 24:
        raise ValueError(f"count_partitions: {J} jobs; the dynamic programme over 2^J job "
                         "subsets is for at most 24")
    members = enumerate_groups(problem)
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
                     seed: int = 0) -> Result:
    """Enumerate every partition into feasible groups; OPTIMAL when it finishes
    (``time_limit`` in seconds, ``seed`` recorded only)."""
    t0 = time.perf_counter()
    params: dict[str, Any] = {}
    if len(problem.jobs) > 500:  # one recursion level per job
        raise ValueError(f"exhaustive: {len(problem.jobs)} jobs; the search over partitions "
                         "is for at most 500 (use exact-cpsat or a heuristic)")
    deadline = _Deadline(t0, time_limit)
    table = group_table(problem, deadline=deadline)
    if table is None:
        return _finish("exhaustive", problem, Status.UNKNOWN, None, None, t0, seed, params,
                       _STOPPED)
    members, cost = table
    coef, const = _coefficients(problem, cost)
    J = members.shape[1]
    # Python ints as bit sets (no int64 overflow beyond 63 jobs)
    bits = [sum(1 << int(j) for j in np.flatnonzero(row)) for row in members]
    table = dict(zip(bits, coef.tolist(), strict=True))
    Q = problem.demand.tolist()
    P = problem.processors
    S = problem.slices
    best: list[Any] = [np.inf, None]
    count = [0]
    nodes = [0]
    stopped = [False]

    def rec(j: int, blocks: list[int], used: list[int]) -> None:
        if stopped[0]:
            return
        nodes[0] += 1
        if nodes[0] % 4096 == 0 and deadline.passed():
            stopped[0] = True
            return
        if j == J:
            count[0] += 1
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
