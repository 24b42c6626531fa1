"""Exact models of the slot-assignment problem (``sim.problems.slots``): CP-SAT, ILP, brute force.

Variables ``x[a, s]`` (application ``a`` owns slot ``s`` on all its nodes). Constraints
(spec 2.7 M4): ``sum_s x[a, s] = d_a``; for every node ``k`` and slot ``s``,
``sum_{a : k in N_a} x[a, s] <= 1`` (times ``u_s`` below); free slots per node.

- ``"round"``: slots ``s < n_slots`` with ``u_s`` = slot s belongs to the round, ``u_s >=
  u_{s+1}``; ``x[a, s] <= u_s``; ``load_k + F_k <= sum_s u_s``; minimise ``sum_s u_s``.
  Symmetry (slots of a round are interchangeable): the first application, the one of
  largest demand, owns slots ``0 .. d - 1``.
- ``"gap"``: round fixed at ``S = n_slots``; position variables: ``z[a, j, s]`` = the
  ``j``-th slot of application ``a`` is ``s`` (``sum_s z = 1``), ``p[a, j] = sum_s s
  z[a, j, s]``, ``x[a, s] = sum_j z[a, j, s]``; ``p[a, j] + 1 <= p[a, j + 1]``,
  ``p[a, j + 1] - p[a, j] <= G`` and ``p[a, 0] + S - p[a, d - 1] <= G``; minimise the
  integer ``G >= LB``. Symmetry (rotation): the first application's first slot is 0.

Both objectives are recomputed from the table by the shared problem code
(``sim.result.build``); OPTIMAL only when proved.
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

from models.deadline import Deadline, TimeUp
from models.interrupt import run_cpsat
from sim import collector
from sim.problems import checker
from sim.problems import slots as sp
from sim.problems.slots import SlotProblem
from sim.result import Result, Status, build

__all__ = ["solve_cpsat", "solve_ilp", "solve_brute", "solve_placement"]

MAX_PLACEMENT_CANDIDATES = 200_000

MAX_PLACEMENT_WORK = 10**7
"""Most slot-steps (:func:`sim.problems.placement.work`) an exhaustive placement search
without a time limit may simulate."""
"""Candidate placements ``solve_placement`` enumerates without a time limit (each is a
simulation of tens of ms)."""


def _result(name: str, problem: SlotProblem, table: list[list[str]] | None, status: Status,
            bound: float | None, t0: float, seed: int, params: dict[str, Any],
            note: str = "") -> Result:
    return build(solver=name, status=status, solution=table,
                 check=checker(problem),
                 objective=lambda t: sp.objective(problem, t), bound=bound,
                 runtime=time.perf_counter() - t0, seed=seed, params=params, note=note)


def _order(problem: SlotProblem) -> list[int]:
    """Application indices, largest demand first (the symmetry anchor is first)."""
    return sorted(range(len(problem.apps)), key=lambda i: (-problem.apps[i].demand, i))


def _best_heuristic(problem: SlotProblem) -> list[list[str]] | None:
    from heuristics.slots import coloring, round_robin
    best = None
    for r in (round_robin(problem), coloring(problem)):
        if r.solution is not None and (best is None or r.objective < best.objective):
            best = r
    return None if best is None else best.solution


MAX_VARS_CPSAT = 400_000
"""Most 0-1 variables (``x`` and, for ``"gap"``, ``z``) the CP-SAT model is built with."""
MAX_VARS_ILP = 150_000
"""The same for the PuLP/CBC model."""


def _n_vars(problem: SlotProblem) -> int:
    n = len(problem.apps) * problem.n_slots
    if problem.objective == "gap":
        n += sum(a.demand for a in problem.apps) * problem.n_slots
    return n


def _refuse(name: str, problem: SlotProblem, max_vars: int) -> None:
    n = _n_vars(problem)
    if n > max_vars:
        raise ValueError(f"slot_assignment {name}: {n} 0-1 variables ({len(problem.apps)} "
                         f"applications x {problem.n_slots} slots) > max_vars = {max_vars}; "
                         f"use round-robin or coloring")


def _stopped(name: str, problem: SlotProblem, t0: float, seed: int,
             params: dict[str, Any], why: str, table: list[list[str]] | None) -> Result:
    """The better heuristic ``table`` (FEASIBLE, bound: the load lower bound) when the
    time limit ran out before the solver produced a table; UNKNOWN without one."""
    if table is None:
        return _result(name, problem, None, Status.UNKNOWN, None, t0, seed, params, why)
    return _result(name, problem, table, Status.FEASIBLE, float(sp.lower_bound(problem)),
                   t0, seed, params, why + ": the better heuristic table (bound: the load "
                   "lower bound)")


_BUILDING = "stopped by the time limit while building the model"
_NO_TABLE = "the solver stopped without a table"


def _trivially_infeasible(problem: SlotProblem) -> str | None:
    lb = max(problem.load_of(k) + problem.free[k] for k in range(problem.n_nodes))
    if lb > problem.n_slots:
        return f"a node needs {lb} slots (load + free) > n_slots = {problem.n_slots}"
    return None


def solve_cpsat(problem: SlotProblem, *, time_limit: float | None = None, seed: int = 0,
                workers: int = 1, symmetry: bool = True, hint: bool = True,
                linearization_level: int | None = None,
                max_vars: int = MAX_VARS_CPSAT) -> Result:
    """Optimal slot table by CP-SAT (see the module docstring).

    Parameters
    ----------
    time_limit : float, optional
        Seconds.
    seed : int
        CP-SAT ``random_seed``.
    workers : int
        CP-SAT ``num_workers`` (1 = deterministic).
    symmetry : bool
        Add the symmetry-breaking constraint (exact either way).
    hint : bool
        Start from the better of the two heuristic tables (``heuristics.slots``) as a
        solution hint (exact either way). With ``symmetry`` the hint may break the
        symmetry constraint; CP-SAT then repairs or drops it.
    linearization_level : int, optional
        CP-SAT ``linearization_level`` (None = CP-SAT's default; 2 adds the LP relaxation
        of every constraint, which proves the demand-1 tables of ``models.gang_schedule``
        in a fraction of a second where the default stalls at 60 s).
    max_vars : int
        Refuse (ValueError) a model with more 0-1 variables. The time limit covers model
        building: stopped there (or before CP-SAT finds a table), the better heuristic
        table is returned as FEASIBLE.
    """
    from ortools.sat.python import cp_model

    dl = Deadline(time_limit)
    t0 = dl.t0
    params: dict[str, Any] = {"time_limit": time_limit, "workers": workers,
                              "symmetry": symmetry, "hint": hint, "max_vars": max_vars}
    if linearization_level is not None:
        params["linearization_level"] = linearization_level
    why = _trivially_infeasible(problem)
    if why:
        return _result("cpsat", problem, None, Status.INFEASIBLE, None, t0, seed, params, why)
    _refuse("cpsat", problem, max_vars)
    # the better heuristic table: the hint, and the answer if the limit runs out first
    fallback = _best_heuristic(problem)
    apps = problem.apps
    S = problem.n_slots
    if problem.objective == "round" and fallback is not None:
        # no optimal table is longer than the heuristic one: slots past it are never
        # used, so the model (and CP-SAT's fixed cost of loading it) shrinks; exact
        S = min(S, len(fallback))
        params["model_slots"] = S
    order = _order(problem)
    try:
        m = cp_model.CpModel()
        x = {}
        for a in range(len(apps)):
            dl.check(dl.reserve())
            for s in range(S):
                x[a, s] = m.NewBoolVar(f"x{a}_{s}")
        for a, app in enumerate(apps):
            dl.check(dl.reserve())
            m.Add(sum(x[a, s] for s in range(S)) == app.demand)
        on_node: list[list[int]] = [[] for _ in range(problem.n_nodes)]
        for a, app in enumerate(apps):
            for k in app.nodes:
                on_node[k].append(a)
        groups = {tuple(g) for g in on_node if g}
        lb = sp.lower_bound(problem)
        dl.check(dl.reserve())
        if problem.objective == "round":
            u = [m.NewBoolVar(f"u{s}") for s in range(S)]
            for s in range(S - 1):
                m.Add(u[s] >= u[s + 1])
            for g in groups:  # a group's rows may be 10^5 slots: the clock at every row
                for s in range(S):
                    dl.check(dl.reserve())
                    m.Add(sum(x[a, s] for a in g) <= u[s])
            total = sum(u)
            m.Add(total >= lb)
            if symmetry:
                a0 = order[0]
                for s in range(apps[a0].demand):
                    m.Add(x[a0, s] == 1)
            m.Minimize(total)
        else:
            for g in groups:
                for s in range(S):
                    dl.check(dl.reserve())
                    m.Add(sum(x[a, s] for a in g) <= 1)
            G = m.NewIntVar(lb, S, "G")
            for a, app in enumerate(apps):
                # one application's block holds up to max_vars variables (demand x slots):
                # the clock at every one of its positions and slots, not once per application
                d = app.demand
                z = {}
                for j in range(d):
                    dl.check(dl.reserve())
                    for s in range(S):
                        z[j, s] = m.NewBoolVar(f"z{a}_{j}_{s}")
                pos = [m.NewIntVar(j, S - d + j, f"p{a}_{j}") for j in range(d)]
                for j in range(d):
                    dl.check(dl.reserve())
                    m.AddExactlyOne(z[j, s] for s in range(S))
                    m.Add(pos[j] == sum(s * z[j, s] for s in range(S)))
                for s in range(S):
                    dl.check(dl.reserve())
                    m.Add(x[a, s] == sum(z[j, s] for j in range(d)))
                for j in range(d - 1):
                    m.Add(pos[j + 1] >= pos[j] + 1)
                    m.Add(pos[j + 1] - pos[j] <= G)
                m.Add(pos[0] + S - pos[d - 1] <= G)
                if symmetry and a == order[0]:
                    m.Add(pos[0] == 0)
            m.Minimize(G)
        if hint:
            h = fallback
            if h is not None:
                if problem.objective == "round":
                    for s in range(S):
                        m.AddHint(u[s], s < len(h))
                for s in range(S):
                    dl.check(dl.reserve())
                    names = h[s] if s < len(h) else []
                    for a, app in enumerate(apps):
                        m.AddHint(x[a, s], app.name in names)
    except TimeUp:
        return _stopped("cpsat", problem, t0, seed, params, _BUILDING, fallback)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    if linearization_level is not None:
        solver.parameters.linearization_level = linearization_level
    left = dl.solver_time()
    if left is not None and left <= 0:  # never start CP-SAT with nothing left
        return _stopped("cpsat", problem, t0, seed, params, _BUILDING, fallback)
    if left is not None:
        solver.parameters.max_time_in_seconds = left
    st = run_cpsat(solver, m)
    if st == cp_model.INFEASIBLE:
        return _result("cpsat", problem, None, Status.INFEASIBLE, None, t0, seed, params)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _stopped("cpsat", problem, t0, seed, params, _NO_TABLE, fallback)
    if problem.objective == "round":
        used = sum(1 for s in range(S) if solver.Value(u[s]))
        bound = float(solver.BestObjectiveBound())
    else:
        used = S
        bound = float(solver.BestObjectiveBound())
    table = [[apps[a].name for a in range(len(apps)) if solver.Value(x[a, s])]
             for s in range(used)]
    status = Status.OPTIMAL if st == cp_model.OPTIMAL else Status.FEASIBLE
    return _result("cpsat", problem, table, status, bound, t0, seed, params)


def solve_ilp(problem: SlotProblem, *, time_limit: float | None = None, seed: int = 0,
              symmetry: bool = True, max_vars: int = MAX_VARS_ILP,
              backend: str = "cbc") -> Result:
    """Optimal slot table by the same model as an ILP (PuLP with its bundled CBC, one
    thread). ``seed`` is recorded only; ``time_limit`` in seconds covers model building
    (stopped there, or before CBC finds a table, the better heuristic table is returned
    as FEASIBLE; CBC is killed past its limit, ``models.cbc.solve_guarded``). Refuses
    (ValueError) a model with more than ``max_vars`` 0-1 variables. ``backend``:
    ``"cbc"``, ``"highs"`` or ``"scip"`` (:mod:`models.mip`)."""
    import pulp

    from models import mip
    from models.cbc import variable

    mip.check_backend(backend)
    dl = Deadline(time_limit)
    t0 = dl.t0
    params: dict[str, Any] = {"time_limit": time_limit, "symmetry": symmetry,
                              "max_vars": max_vars, "backend": backend}
    why = _trivially_infeasible(problem)
    if why:
        return _result("ilp", problem, None, Status.INFEASIBLE, None, t0, seed, params, why)
    _refuse("ilp", problem, max_vars)
    fallback = _best_heuristic(problem)  # the answer if the limit runs out first
    apps = problem.apps
    S = problem.n_slots
    order = _order(problem)
    lb = sp.lower_bound(problem)
    try:
        prob = pulp.LpProblem("slot_assignment", pulp.LpMinimize)
        x = {}
        for a in range(len(apps)):
            dl.check()
            for s in range(S):
                x[a, s] = variable(prob, f"x_{a}_{s}", "Binary")
        for a, app in enumerate(apps):
            dl.check()
            prob += pulp.lpSum(x[a, s] for s in range(S)) == app.demand, f"demand_{a}"
        on_node: list[list[int]] = [[] for _ in range(problem.n_nodes)]
        for a, app in enumerate(apps):
            for k in app.nodes:
                on_node[k].append(a)
        groups = sorted({tuple(g) for g in on_node if g})
        dl.check()
        if problem.objective == "round":
            u = [variable(prob, f"u_{s}", "Binary") for s in range(S)]
            for s in range(S - 1):
                prob += u[s] >= u[s + 1], f"prefix_{s}"
            for gi, g in enumerate(groups):  # the clock at every row (10^5 slots a group)
                for s in range(S):
                    dl.check()
                    prob += pulp.lpSum(x[a, s] for a in g) <= u[s], f"node_{gi}_{s}"
            prob += pulp.lpSum(u) >= lb, "load"
            if symmetry:
                a0 = order[0]
                for s in range(apps[a0].demand):
                    prob += x[a0, s] == 1, f"sym_{s}"
            obj = pulp.lpSum(u)
        else:
            for gi, g in enumerate(groups):
                for s in range(S):
                    dl.check()
                    prob += pulp.lpSum(x[a, s] for a in g) <= 1, f"node_{gi}_{s}"
            G = variable(prob, "G", "Integer", low=lb, up=S)
            for a, app in enumerate(apps):
                # one application's block holds up to max_vars variables (demand x slots):
                # the clock at every one of its positions and slots, not once per application
                d = app.demand
                z = {}
                for j in range(d):
                    dl.check()
                    for s in range(S):
                        z[j, s] = variable(prob, f"z_{a}_{j}_{s}", "Binary")
                pos = []
                for j in range(d):
                    dl.check()
                    pos.append(pulp.lpSum(s * z[j, s] for s in range(S)))
                    prob += pulp.lpSum(z[j, s] for s in range(S)) == 1, f"one_{a}_{j}"
                for s in range(S):
                    dl.check()
                    prob += x[a, s] == pulp.lpSum(z[j, s] for j in range(d)), f"link_{a}_{s}"
                for j in range(d - 1):
                    prob += pos[j + 1] >= pos[j] + 1, f"order_{a}_{j}"
                    prob += pos[j + 1] - pos[j] <= G, f"gap_{a}_{j}"
                prob += pos[0] + S - pos[d - 1] <= G, f"wrap_{a}"
                if symmetry and a == order[0]:
                    prob += z[0, 0] == 1, "sym"
            obj = G
        prob += obj
        dl.check()
    except TimeUp:
        return _stopped("ilp", problem, t0, seed, params, _BUILDING, fallback)
    outcome, bound = mip.solve_logged(prob, backend=backend, time_limit=dl.left(), grace=0.2,
                                      prefix="cbc_slots_", data=problem)
    if outcome == "infeasible":
        return _result("ilp", problem, None, Status.INFEASIBLE, None, t0, seed, params)
    if outcome not in ("optimal", "feasible"):
        return _stopped("ilp", problem, t0, seed, params, _NO_TABLE, fallback)
    if problem.objective == "round":
        used = sum(1 for s in range(S) if (u[s].value() or 0) > 0.5)
    else:
        used = S
    table = [[apps[a].name for a in range(len(apps)) if (x[a, s].value() or 0) > 0.5]
             for s in range(used)]
    if outcome == "optimal":
        return _result("ilp", problem, table, Status.OPTIMAL, None, t0, seed, params)
    note = ""  # a stopped solver's table or the better heuristic's, the better
    if fallback is not None and sp.objective(problem, fallback) < sp.objective(problem, table):
        table, note = fallback, (f"the better heuristic table: better than the incumbent of "
                                 f"{mip.NAMES[backend]}, stopped")
    return _result("ilp", problem, table, Status.FEASIBLE, bound, t0, seed, params, note)


CHECK_SECONDS_PER_ENTRY = 1e-6
"""Seconds kept back at the end of a time limit per slot and per copy of a table, for
building, checking and scoring the answer (about 0.5 s per 10^6 slots measured)."""


def _count_tables(S: int, demands: list[int], cap: int) -> int:
    """``prod_a C(S, d_a)``, the candidate tables of round ``S``, or ``cap + 1`` as soon as
    the partial product exceeds ``cap`` (the product of 2,000 binomials of a 10^6 round
    is never formed)."""
    total = 1
    for d in demands:
        total *= math.comb(S, d)
        if total > cap:
            return cap + 1
    return total


def _choices(S: int, demands: list[int], dl: Deadline) -> list[list[tuple[int, ...]]] | None:
    """Every slot set of each application (``C(S, d_a)`` each, their product already
    bounded); None when ``dl`` expires while they are listed."""
    out: list[list[tuple[int, ...]]] = []
    for d in demands:
        sets: list[tuple[int, ...]] = []
        for i, c in enumerate(itertools.combinations(range(S), d)):
            if i % 4096 == 0 and dl.expired():
                return None
            sets.append(c)
        out.append(sets)
    return out


def _widest_gap(slots_: tuple[int, ...], S: int) -> int:
    """The largest cyclic gap between consecutive slots of the sorted ``slots_``."""
    return max([b - a for a, b in itertools.pairwise(slots_)] + [slots_[0] + S - slots_[-1]])


def _table(problem: SlotProblem, S: int, combo: tuple[tuple[int, ...], ...]
           ) -> list[list[str]]:
    """The table of round ``S`` in which application ``a`` owns the slots ``combo[a]``."""
    table: list[list[str]] = [[] for _ in range(S)]
    for a, slots_ in enumerate(combo):
        for s in slots_:
            table[s].append(problem.apps[a].name)
    return table


def solve_brute(problem: SlotProblem, *, time_limit: float | None = None, seed: int = 0,
                max_tables: int = 2_000_000) -> Result:
    """Exhaustive enumeration of every slot table (tiny instances only). Round lengths
    ``S`` are tried in increasing order for ``"round"``, from the load lower bound
    (:func:`sim.problems.slots.lower_bound`: no shorter table keeps every node's free
    slots); for ``"gap"`` only ``n_slots``. The candidate tables of a round,
    ``prod_a C(S, d_a)``, are counted before any is listed: more than ``max_tables`` is
    refused (ValueError naming ``n_slots`` and the demands). A candidate is scored from
    its slot sets (conflicting applications' sets disjoint; every node's free slots hold
    for every table of a round or for none), its table built only when it is the best so
    far. ``time_limit`` (s) is checked while the candidates are listed and before each
    one, :data:`CHECK_SECONDS_PER_ENTRY` kept back per slot and copy: stopped, the best
    table so far is FEASIBLE with the lower bound (OPTIMAL when it meets the bound), or
    UNKNOWN without one. Python's cycle collector is paused meanwhile
    (:func:`sim.collector.paused`: the candidates are tuples, and in a process with a large
    heap its scans took the run 1.6 s past a 3 s limit)."""
    with collector.paused():
        return _brute(problem, Deadline(time_limit), seed, max_tables)


def _brute(problem: SlotProblem, dl: Deadline, seed: int, max_tables: int) -> Result:
    """:func:`solve_brute` within ``dl``."""
    t0 = dl.t0
    apps = problem.apps
    demands = [a.demand for a in apps]
    params = {"max_tables": max_tables}
    lb = sp.lower_bound(problem)
    pairs = sp.conflicts(problem)
    sizes = range(min(lb, problem.n_slots + 1), problem.n_slots + 1) \
        if problem.objective == "round" else [problem.n_slots]
    best: list[list[str]] | None = None
    best_val = None
    for S in sizes:
        total = _count_tables(S, demands, max_tables)
        if total > max_tables:
            raise ValueError(f"slot_assignment brute: fields 'n_slots' and 'apps[*].demand' "
                             f"give more than max_tables = {max_tables} candidate tables "
                             f"(prod over applications of C({S}, demand)); use cpsat or ilp")
        if any(S - load < f for load, f in zip(problem.loads(), problem.free, strict=True)):
            continue  # a node cannot keep its free slots in any table of this round
        choices = _choices(S, demands, dl)
        # kept back for building, checking and scoring the answer's table of S rows
        margin = dl.reserve() + CHECK_SECONDS_PER_ENTRY * (S + sum(demands))
        for combo in () if choices is None else itertools.product(*choices):
            if dl.expired(margin):
                choices = None
                break
            if any(not set(combo[i]).isdisjoint(combo[j]) for i, j in pairs):
                continue
            val = float(S) if problem.objective == "round" else \
                float(max(_widest_gap(c, S) for c in combo))
            if best_val is None or val < best_val:
                best, best_val = _table(problem, S, combo), val
                if problem.objective == "round":
                    break  # every table of round S has the objective S
        if choices is None:  # stopped by the time limit
            if best is None:
                return _result("brute", problem, None, Status.UNKNOWN, None, t0, seed,
                               params, "stopped by the time limit")
            proved = best_val is not None and best_val <= lb  # the bound meets it
            return _result("brute", problem, best,
                           Status.OPTIMAL if proved else Status.FEASIBLE, float(lb), t0,
                           seed, params, "stopped by the time limit" + (
                               "; the table meets the lower bound" if proved else ""))
        if best is not None and problem.objective == "round":
            break
    if best is None:
        return _result("brute", problem, None, Status.INFEASIBLE, None, t0, seed, params)
    return _result("brute", problem, best, Status.OPTIMAL, best_val, t0, seed, params)


def solve_placement(problem: Any, *, time_limit: float | None = None, seed: int = 0,
                    max_candidates: int = MAX_PLACEMENT_CANDIDATES) -> Result:
    """Exhaustive slot placement for one BSP program (``sim.problems.placement``): every
    candidate placement is simulated (one per rotation class where rotations have the same
    objective, else all ``C(S, k)``: ``placement.iter_placements``); the best mean runtime
    (µs) wins (ties: the lexicographically smallest placement). OPTIMAL is claimed only
    when every candidate was evaluated, and it holds over every placement the objective
    defines. ``params["runtimes_us"]`` lists every class
    evaluated and ``params["contiguous_rank"]`` the rank (1 = best) of the contiguous
    default among them.

    The classes are generated one at a time, the clock read at every candidate (the
    search for the next class may skip many) and inside each measurement;
    ``time_limit`` (seconds) stops the enumeration with the best so far (FEASIBLE, no
    bound), or UNKNOWN when not one placement was measured in time. Without a time
    limit, more than ``max_candidates`` candidate placements (``C(n_slots - 1, k - 1)``)
    are refused up front (ValueError)."""
    from sim.problems import placement as pl
    from sim.timeshare.bsp import TimeUp

    dl = Deadline(time_limit)
    n_cand = pl.count_candidates(problem)
    if time_limit is None and n_cand > max_candidates:
        raise ValueError(f"slot_placement exhaustive: {n_cand} candidate placements "
                         f"(n_slots = {problem.n_slots}, k = {problem.k}) > max_candidates "
                         f"= {max_candidates}; give a time limit")
    if time_limit is None and pl.work(problem) > MAX_PLACEMENT_WORK:
        raise ValueError(f"slot_placement exhaustive: {n_cand} candidates x i x n x n_slots "
                         f"= {pl.work(problem):.3g} slot-steps to simulate, over "
                         f"{MAX_PLACEMENT_WORK:.0e}; give a time limit")
    deadline = None if dl.limit is None else dl.t0 + dl.limit
    means: dict[tuple[int, ...], float] = {}
    complete = True
    try:
        for c in pl.iter_placements(problem, deadline=deadline):
            means[c] = pl.measurement(problem, c, deadline=deadline)["mean_us"]
            if dl.expired():
                complete = False
                break
    except TimeUp:
        complete = False
    if not means:
        return build(solver="exhaustive", status=Status.UNKNOWN, solution=None,
                     check=lambda s: None, objective=lambda s: 0.0, runtime=dl.elapsed(),
                     seed=seed, params={"evaluated": 0, "candidates": n_cand},
                     note="the time limit ran out before the first placement was measured")
    best = min(means, key=lambda c: (means[c], c))
    contiguous = tuple(range(problem.k))
    ranked = sorted(means, key=lambda c: (means[c], c))
    params = {"classes": len(means) if complete else None, "evaluated": len(means),
              "candidates": n_cand, "max_candidates": max_candidates,
              "runtimes_us": {",".join(map(str, c)): means[c] for c in ranked},
              "contiguous_rank": ranked.index(contiguous) + 1 if contiguous in means else None,
              "contiguous_best": best == contiguous}
    return build(solver="exhaustive", status=Status.OPTIMAL if complete else Status.FEASIBLE,
                 solution=list(best), check=checker(problem),
                 objective=lambda s: means[tuple(s)], bound=means[best] if complete else None,
                 runtime=dl.elapsed(), seed=seed, params=params,
                 note=("exact over " + ("one placement per rotation class (every rotation has "
                                        "the same objective)" if pl.rotation_invariant(problem)
                                        else "every placement")
                       + " for the sampled mean of fixed seeds"
                       + ("" if complete else "; stopped by the time limit")))
