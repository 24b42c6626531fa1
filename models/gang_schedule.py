"""Exact models of the memory-feasible gang schedule (``sim.problems.gang_schedule``).

What is reused, and why:

- ``"rows"`` by CP-SAT **is** the slot-assignment model of ``models.slots`` (spec 2.7 M4):
  a job is an application of demand 1, no free slots, round at most ``max_rows``; the
  minimal round is the minimal number of rows. :func:`solve_cpsat` converts the problem
  and calls ``models.slots.solve_cpsat`` (its symmetry breaking and heuristic hint come
  along), then re-checks the rows with this family's own ``check`` and objective.
- The CBC bound reader of ``models.slots`` is reused for the ILP.
- The set-partitioning machinery of ``models.grouping`` (enumerate every feasible group,
  then pick a partition) is **not** reused: a group here is an independent set of the
  conflict graph, and at 30 jobs on 32 nodes with narrow jobs there are far more of them
  than that enumeration's cap; its slice costs (Suh's miss-rate model under a processor
  capacity) are not this problem's either. The compact assignment model below is small
  (``jobs x rows`` booleans) and proves the benchmark sizes.

Assignment model (CP-SAT for ``"weighted"``, CBC ILP for both): ``x[j, r]`` = job ``j``
in row ``r``; ``sum_r x[j, r] = 1``; for each node and row, at most one of the node's jobs
(memory fits by the input check, see the family docstring). ``"rows"``: ``u_r >= u_{r+1}``,
``x[j, r] <= u_r``, minimise ``sum u_r``; the first job of the busiest node is fixed in row
0 (symmetry). ``"weighted"``: minimise ``sum w_j (r + 1) x[j, r]``; in an optimal solution
a job in row ``r`` has a neighbour in every row below (else moving it down improves), so
``r <= degree(j)`` and rows ``> max degree`` are not created.

Under ``memory = "resident"`` (the CSM paper's eq. 4: every task mapped to a node is
resident) the memory condition does not depend on the rows: both exact models first
test it per node (:func:`sim.problems.gang_schedule.resident_overload`) and report
INFEASIBLE (proved: no assignment changes the sum) when a node is over ``mem``;
otherwise the problem is the ``"row"`` one. Brute force enumerates every row assignment
(tiny instances) and checks each with the family's checker, which sums the resident
pages itself. Every solver ends with
``sim.result.build``: OPTIMAL only when proved; no times except ``time_limit`` (seconds).
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

from models import cbc
from models.deadline import Deadline, TimeUp
from models.interrupt import run_cpsat
from sim.problems import checker
from sim.problems import gang_schedule as gs
from sim.problems.gang_schedule import GangProblem
from sim.problems.slots import MAX_APPS
from sim.result import Result, Status, build

__all__ = ["solve_cpsat", "solve_ilp", "solve_brute", "to_slots"]


def _result(name: str, problem: GangProblem, rows: list[list[str]] | None, status: Status,
            bound: float | None, t0: float, seed: int, params: dict[str, Any],
            note: str = "") -> Result:
    if rows is not None:
        rows = [r for r in rows if r]  # an empty row only adds to either objective
    return build(solver=name, status=status, solution=rows,
                 check=checker(problem),
                 objective=lambda s: gs.objective(problem, s), bound=bound,
                 runtime=time.perf_counter() - t0, seed=seed, params=params, note=note)


MAX_VARS = 150_000
"""Most ``x[j, r]`` variables the assignment models (ILP; CP-SAT ``"weighted"``) are built
with; a larger model is refused (ValueError)."""

_BUILDING = "stopped by the time limit while building the model"
_NO_ROWS = "the solver stopped without rows"


def _fallback(problem: GangProblem) -> list[list[str]] | None:
    """The colouring heuristic's rows (``heuristics.gang_schedule``), or None."""
    from heuristics.gang_schedule import coloring

    r = coloring(problem)
    return r.solution if r.solution is not None else None


def _stopped(name: str, problem: GangProblem, rows: list[list[str]] | None, t0: float,
             seed: int, params: dict[str, Any], why: str) -> Result:
    """The heuristic ``rows`` (FEASIBLE, bound: the lower bound) when the limit ran out
    before the solver produced rows; UNKNOWN without them."""
    if rows is None:
        return _result(name, problem, None, Status.UNKNOWN, None, t0, seed, params, why)
    return _result(name, problem, rows, Status.FEASIBLE, gs.lower_bound(problem), t0, seed,
                   params, why + ": the colouring heuristic's rows (bound: the lower bound)")


def _overloaded(name: str, problem: GangProblem, t0: float, seed: int,
                params: dict[str, Any]) -> Result | None:
    """INFEASIBLE when ``memory = "resident"`` and a node's resident pages exceed
    ``mem`` (no schedule can change them), else None."""
    over = gs.resident_overload(problem)
    if not over:
        return None
    k, pages = over[0]
    return _result(name, problem, None, Status.INFEASIBLE, None, t0, seed, params,
                   f"memory 'resident' (eq. 4): {len(over)} node(s) over mem = {problem.mem}"
                   f", e.g. node {k} holds {pages} pages")


def _refuse(name: str, n_vars: int, max_vars: int) -> None:
    if n_vars > max_vars:
        raise ValueError(f"gang_schedule {name}: field 'jobs' gives {n_vars} row-assignment "
                         f"variables > max_vars = {max_vars}; use the coloring heuristic")


def to_slots(problem: GangProblem) -> Any:
    """The ``"rows"`` problem as a ``slot_assignment`` problem (demand 1, no free slots)."""
    from sim.problems.slots import SlotApp, SlotProblem

    apps = tuple(SlotApp(j.name, j.nodes, 1) for j in problem.jobs)
    # no schedule needs more rows than jobs (empty rows are dropped), so a larger
    # max_rows is the same problem with a smaller model
    return SlotProblem(problem.n_nodes, apps, min(problem.max_rows, len(problem.jobs)),
                       (0,) * problem.n_nodes, "round")


def _degrees(problem: GangProblem) -> list[int]:
    deg = gs.degrees(problem)
    assert deg is not None  # no deadline
    return deg


def _row_limit(problem: GangProblem) -> int:
    # no schedule needs more rows than jobs (empty rows are dropped)
    rows = min(problem.max_rows, len(problem.jobs))
    if problem.objective == "rows":
        return rows
    return min(rows, max(_degrees(problem)) + 1)


def _shared_rows(g: tuple[int, ...], rows_of: list[int]) -> int:
    """Rows ``r`` in which at least two jobs of the node group ``g`` have a variable
    (``r < rows_of[j]``): the second largest of their row counts (no other row needs an
    at-most-one)."""
    top = sorted((rows_of[j] for j in g), reverse=True)
    return top[1] if len(top) > 1 else 0


def _rows_of(x: dict[tuple[int, int], Any], value: Any, names: list[str],
             R: int) -> list[list[str]]:
    """The rows of a solved model: job ``j`` (its name) in row ``r`` when ``value(x[j,
    r])`` holds, in job order; read over the variables, not over jobs x rows (a job of
    small degree has few of the ``R`` rows)."""
    rows: list[list[str]] = [[] for _ in range(R)]
    for (j, r), v in x.items():  # keys in job order
        if value(v):
            rows[r].append(names[j])
    return rows


def _on_node(problem: GangProblem) -> list[tuple[int, ...]]:
    per: list[list[int]] = [[] for _ in range(problem.n_nodes)]
    for i, j in enumerate(problem.jobs):
        for k in j.nodes:
            per[k].append(i)
    return sorted({tuple(p) for p in per if len(p) > 1})


def _int_weights(problem: GangProblem) -> tuple[list[int], float]:
    """Integer weights for CP-SAT and the factor they were scaled by (1 when integral)."""
    ws = [j.weight for j in problem.jobs]
    scale = 1.0 if all(float(w).is_integer() for w in ws) else 1000.0
    return [int(round(w * scale)) for w in ws], scale


def solve_cpsat(problem: GangProblem, *, time_limit: float | None = None, seed: int = 0,
                workers: int = 1, linearization_level: int = 2,
                max_vars: int = MAX_VARS) -> Result:
    """Optimal gang schedule by CP-SAT (``"rows"``: the ``models.slots`` model;
    ``"weighted"``: the assignment model). ``time_limit`` in seconds; ``workers`` is
    CP-SAT ``num_workers`` (1 = deterministic); ``linearization_level`` is CP-SAT's (2:
    full LP relaxation; with CP-SAT's default 1 neither objective closes its gap in
    60 s at 30 jobs on 32 nodes, see ``sim.experiments.gine.gang_bench``). Non-integral
    weights are scaled by 1000 and rounded for CP-SAT only (said in the note; the status
    is then FEASIBLE); the objective is recomputed exactly. The time limit covers model
    building; stopped before CP-SAT finds rows, the colouring heuristic's rows are
    returned (FEASIBLE). ``max_vars`` bounds the ``"weighted"`` model (``"rows"``: that
    of ``models.slots``)."""
    from ortools.sat.python import cp_model  # a one-time import, before the clock starts

    dl = Deadline(time_limit)
    t0 = dl.t0
    params: dict[str, Any] = {"time_limit": time_limit, "workers": workers,
                              "linearization_level": linearization_level}
    if (inf := _overloaded("cpsat", problem, t0, seed, params)) is not None:
        return inf
    lb = gs.lower_bound(problem)
    if problem.objective == "rows":
        from models import slots

        if lb > problem.max_rows:
            return _result("cpsat", problem, None, Status.INFEASIBLE, None, t0, seed, params,
                           f"a node holds {lb:.0f} jobs > max_rows")
        n = len(problem.jobs)
        if n > MAX_APPS:  # named here in this family's fields, not the slot problem's
            raise ValueError(f"gang_schedule cpsat: field 'jobs' holds {n} jobs, over the "
                             f"{MAX_APPS} the round model accepts; use the coloring heuristic")
        _refuse("cpsat", n * min(problem.max_rows, n), slots.MAX_VARS_CPSAT)
        # the slots model gets only the time left of this call's limit
        r = slots.solve_cpsat(to_slots(problem), time_limit=dl.left(0.0), seed=seed,
                              workers=workers, linearization_level=linearization_level)
        st = r.status if r.solution is not None or r.status is Status.INFEASIBLE \
            else Status.UNKNOWN
        return _result("cpsat", problem, r.solution, st, r.bound, t0, seed, params,
                       "models.slots round model (demand 1, no free slots)"
                       + (f"; {r.note}" if r.note else ""))

    n = len(problem.jobs)
    R = _row_limit(problem)
    deg = _degrees(problem)
    w, scale = _int_weights(problem)
    params["max_vars"] = max_vars
    _refuse("cpsat", sum(min(R, d + 1) for d in deg), max_vars)
    fallback = _fallback(problem)
    m = cp_model.CpModel()
    x = {}
    rows_of = [min(R, d + 1) for d in deg]
    try:  # the build's clock: Deadline.check at every job and every node row
        for j in range(n):
            dl.check(dl.reserve())
            for r in range(rows_of[j]):
                x[j, r] = m.NewBoolVar(f"x{j}_{r}")
            m.AddExactlyOne(x[j, r] for r in range(rows_of[j]))
        for g in _on_node(problem):
            # only the rows two of the group's jobs share (R may be 10^4, a group's jobs
            # mostly of small degree)
            for r in range(_shared_rows(g, rows_of)):
                dl.check(dl.reserve())
                vs = [x[j, r] for j in g if r < rows_of[j]]
                if len(vs) > 1:
                    m.AddAtMostOne(vs)
        m.Minimize(sum(w[j] * (r + 1) * v for (j, r), v in x.items()))
        dl.check(dl.reserve())  # never start CP-SAT with nothing left
    except TimeUp:
        return _stopped("cpsat", problem, fallback, t0, seed, params, _BUILDING)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    solver.parameters.linearization_level = linearization_level
    left = dl.solver_time()
    if left is not None:
        solver.parameters.max_time_in_seconds = left
    st = run_cpsat(solver, m)
    note = "" if scale == 1.0 else "weights scaled by 1000 and rounded for CP-SAT"
    if st == cp_model.INFEASIBLE:
        return _result("cpsat", problem, None, Status.INFEASIBLE, None, t0, seed, params, note)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _stopped("cpsat", problem, fallback, t0, seed, params, _NO_ROWS)
    rows = _rows_of(x, solver.Value, [job.name for job in problem.jobs], R)
    status = Status.OPTIMAL if st == cp_model.OPTIMAL and scale == 1.0 else Status.FEASIBLE
    bound = max(float(solver.BestObjectiveBound()) / scale, lb) if scale == 1.0 else lb
    return _result("cpsat", problem, rows, status, bound, t0, seed, params, note)


def solve_ilp(problem: GangProblem, *, time_limit: float | None = None, seed: int = 0,
              max_vars: int = MAX_VARS, backend: str = "cbc") -> Result:
    """Optimal gang schedule by the assignment model as an ILP (PuLP, CBC one thread via
    ``models.cbc``). ``seed`` is recorded only; ``time_limit`` in seconds covers model
    building (stopped there, or before CBC finds rows, the colouring heuristic's rows
    are returned as FEASIBLE; CBC is killed past its limit, ``cbc.solve_guarded``).
    Refuses (ValueError) more than ``max_vars`` row-assignment variables. ``backend``:
    ``"cbc"``, ``"highs"`` or ``"scip"`` (:mod:`models.mip`)."""
    import pulp

    from models import mip

    mip.check_backend(backend)
    dl = Deadline(time_limit)
    t0 = dl.t0
    params: dict[str, Any] = {"time_limit": time_limit, "max_vars": max_vars,
                              "backend": backend}
    if (inf := _overloaded("ilp", problem, t0, seed, params)) is not None:
        return inf
    lb = gs.lower_bound(problem)
    if problem.objective == "rows" and lb > problem.max_rows:
        return _result("ilp", problem, None, Status.INFEASIBLE, None, t0, seed, params,
                       f"a node holds {lb:.0f} jobs > max_rows")
    n = len(problem.jobs)
    R = _row_limit(problem)
    deg = _degrees(problem)
    rows_of = [R if problem.objective == "rows" else min(R, d + 1) for d in deg]
    _refuse("ilp", sum(rows_of), max_vars)  # counted before any is listed
    prob = pulp.LpProblem("gang_schedule", pulp.LpMinimize)
    keys = [(j, r) for j in range(n) for r in range(rows_of[j])]
    fallback = _fallback(problem)
    x = {}
    try:  # the build's clock: Deadline.check at every variable, job and row
        for j, r in keys:
            dl.check()
            x[j, r] = cbc.variable(prob, f"x_{j}_{r}", "Binary")
        for j in range(n):  # over the job's own rows (R may be 10^4, most jobs have 2)
            dl.check()
            prob += pulp.lpSum(x[j, r] for r in range(rows_of[j])) == 1, f"one_{j}"
        groups = _on_node(problem)
        if problem.objective == "rows":
            u = [cbc.variable(prob, f"u_{r}", "Binary") for r in range(R)]
            for r in range(R - 1):
                prob += u[r] >= u[r + 1], f"prefix_{r}"
            for j, r in keys:
                dl.check()
                prob += x[j, r] <= u[r], f"use_{j}_{r}"
            for gi, g in enumerate(groups):
                dl.check()
                for r in range(R):
                    prob += pulp.lpSum(x[j, r] for j in g) <= 1, f"node_{gi}_{r}"
            prob += pulp.lpSum(u) >= lb, "clique"
            if groups:  # symmetry: the first job of the busiest node opens row 0
                busiest = max(groups, key=len)
                prob += x[busiest[0], 0] == 1, "sym"
            prob += pulp.lpSum(u)
        else:
            for gi, g in enumerate(groups):  # only the rows two of its jobs share
                for r in range(_shared_rows(g, rows_of)):
                    dl.check()
                    vs = [x[j, r] for j in g if r < rows_of[j]]
                    if len(vs) > 1:
                        prob += pulp.lpSum(vs) <= 1, f"node_{gi}_{r}"
            prob += pulp.lpSum(problem.jobs[j].weight * (r + 1) * v
                               for (j, r), v in x.items())
        dl.check()
    except TimeUp:
        return _stopped("ilp", problem, fallback, t0, seed, params, _BUILDING)
    outcome, found = mip.solve_logged(prob, backend=backend, time_limit=dl.left(), grace=0.2,
                                      prefix="cbc_gang_", data=problem)
    if outcome == "infeasible":
        return _result("ilp", problem, None, Status.INFEASIBLE, None, t0, seed, params)
    if outcome not in ("optimal", "feasible"):
        return _stopped("ilp", problem, fallback, t0, seed, params, _NO_ROWS)
    rows = _rows_of(x, lambda v: (v.value() or 0) > 0.5, [job.name for job in problem.jobs],
                    R)
    if outcome == "optimal":
        return _result("ilp", problem, rows, Status.OPTIMAL, None, t0, seed, params)
    bound = lb if found is None else max(found, lb)
    if problem.objective == "rows":
        bound = float(mip.ceil_bound(bound))
    note = ""  # a stopped solver's rows or the colouring heuristic's, the better
    if fallback is not None and gs.objective(problem, [r for r in fallback if r]) < \
            gs.objective(problem, [r for r in rows if r]):
        rows, note = fallback, (f"the colouring heuristic's rows: better than the incumbent "
                                f"of {mip.NAMES[backend]}, stopped")
    return _result("ilp", problem, rows, Status.FEASIBLE, bound, t0, seed, params, note)


def solve_brute(problem: GangProblem, *, time_limit: float | None = None, seed: int = 0,
                max_assignments: int = 2_000_000) -> Result:
    """Every assignment of jobs to rows ``0 .. min(max_rows, jobs) - 1`` (tiny instances
    only; refuses more than ``max_assignments``). ``time_limit`` (s) ends it early with
    FEASIBLE (or UNKNOWN without a solution)."""
    t0 = time.perf_counter()
    params = {"max_assignments": max_assignments}
    n = len(problem.jobs)
    R = min(problem.max_rows, n)
    # the logarithm first: R^n is formed only when it is near max_assignments
    if n * math.log(R) > math.log(max_assignments) + 1.0 or R ** n > max_assignments:
        raise ValueError(f"gang_schedule brute: field 'jobs' holds {n} jobs: {R}^{n} row "
                         f"assignments exceed max_assignments = {max_assignments}")
    best: list[list[str]] | None = None
    best_val = math.inf
    for combo in itertools.product(range(R), repeat=n):
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            return _result("brute", problem, best, Status.FEASIBLE if best else
                           Status.UNKNOWN, None, t0, seed, params, "time limit")
        rows = [[problem.jobs[j].name for j in range(n) if combo[j] == r] for r in range(R)]
        if any(not row for row in rows[:max(combo) + 1]):
            continue  # rows must be used in order; a gap is another assignment's shift
        rows = rows[:max(combo) + 1]
        if gs.check(problem, rows):
            continue
        val = gs.objective(problem, rows)
        if val < best_val:
            best, best_val = rows, val
    if best is None:
        return _result("brute", problem, None, Status.INFEASIBLE, None, t0, seed, params)
    return _result("brute", problem, best, Status.OPTIMAL, best_val, t0, seed, params)
