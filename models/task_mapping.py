"""Exact memory-balanced task mapping (CSM spec 3.8, M6): CP-SAT, ILP and brute force.

Variables ``x[j, t, k]`` = task t of job j on node k. Constraints: every task on exactly
one node; at most one task of a job per node. Node memory ``N_k = base_k + sum m x``
(pages). Objective "max": minimise ``z >= N_k``; "overload": minimise ``sum_k o_k`` with
``o_k >= N_k - M``, ``o_k >= 0``. Symmetry: nodes with equal base memory are
interchangeable, so their loads are ordered non-increasingly (valid for both objectives).
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

from models.deadline import Deadline, TimeUp
from models.interrupt import run_cpsat
from sim.problems import checker, scorer
from sim.problems.task_mapping import TaskMapping, least_loaded, objective
from sim.result import Result, Status, build

MAX_VARS_CPSAT = 250_000
"""Largest number of assignment variables ``x[j, t, k]`` (tasks x nodes) CP-SAT is given;
beyond it the model does not fit in 1 GB / builds for minutes, and is refused."""
MAX_VARS_ILP = 100_000
"""The same for the PuLP/CBC model (PuLP objects take more memory per variable)."""
MAX_PLACEMENTS = 2_000_000
"""Largest number of placements brute force enumerates."""
_STOPPED = ("stopped by the time limit while building the model: the greedy warm start "
            "(bound: the load lower bound)")


def _size(p: TaskMapping) -> int:
    return sum(len(job) for job in p.jobs) * p.n_nodes


def _refuse(name: str, p: TaskMapping, max_vars: int) -> None:
    n = _size(p)
    if n > max_vars:
        raise ValueError(f"task_mapping {name}: {n} assignment variables ({n // p.n_nodes} "
                         f"tasks x {p.n_nodes} nodes) > max_vars = {max_vars}; use the "
                         f"greedy heuristic")


def _stopped(name: str, p: TaskMapping, dl: Deadline, seed: int,
             params: dict[str, Any], note: str = _STOPPED) -> Result:
    """The greedy mapping, FEASIBLE, when the limit ran out before the solver ran or
    found a solution."""
    return build(solver=name, status=Status.FEASIBLE, solution=_greedy_sorted(p),
                 check=checker(p), objective=scorer(p), bound=p.lower_bound(),
                 runtime=dl.elapsed(), seed=seed, params=params, note=note)


_NO_SOLUTION = ("the solver stopped without a solution: the greedy mapping (bound: the load "
                "lower bound)")


def _sym_pairs(p: TaskMapping) -> list[tuple[int, int]]:
    b = p.base_mem
    return [(k, k + 1) for k in range(p.n_nodes - 1) if b[k] == b[k + 1]]


def _greedy_sorted(p: TaskMapping) -> list[list[int]]:
    """The least-loaded mapping, nodes relabelled so that identical-base nodes have
    non-increasing loads."""
    sol, load = least_loaded(p)
    relabel: dict[int, int] = {}
    # only runs of equal base adjacent in index order are symmetric (see _sym_pairs)
    k = 0
    while k < p.n_nodes:
        e = k
        while e + 1 < p.n_nodes and p.base_mem[e + 1] == p.base_mem[k]:
            e += 1
        run = list(range(k, e + 1))
        for new, old in zip(run, sorted(run, key=lambda q: (-load[q], q)), strict=True):
            relabel[old] = new
        k = e + 1
    return [[relabel[q] for q in nodes] for nodes in sol]


def _decode(p: TaskMapping, val) -> list[list[int]]:
    return [[next(k for k in range(p.n_nodes) if val(j, t, k)) for t in range(len(job))]
            for j, job in enumerate(p.jobs)]


def solve_cpsat(problem: TaskMapping, *, time_limit: float | None = None, seed: int = 0,
                max_vars: int = MAX_VARS_CPSAT) -> Result:
    """CP-SAT, one worker, ``random_seed = seed``; ``time_limit`` in seconds (model
    building included). Refuses (ValueError) more than ``max_vars`` assignment variables;
    when the limit runs out while building, returns the greedy warm start (FEASIBLE)."""
    from ortools.sat.python import cp_model

    dl = Deadline(time_limit)
    t0 = dl.t0
    params: dict[str, Any] = {"max_vars": max_vars}
    _refuse("cpsat", problem, max_vars)
    p = problem
    n = p.n_nodes
    try:
        md = cp_model.CpModel()
        x = {}
        # one job may hold all max_vars variables (tasks x nodes): the clock at every task
        # and node row, not once per job
        for j, job in enumerate(p.jobs):
            for t in range(len(job)):
                dl.check()
                for k in range(n):
                    x[j, t, k] = md.new_bool_var(f"x{j}_{t}_{k}")
        for j, job in enumerate(p.jobs):
            for t in range(len(job)):
                dl.check()
                md.add_exactly_one(x[j, t, k] for k in range(n))
            for k in range(n):
                dl.check()
                md.add_at_most_one(x[j, t, k] for t in range(len(job)))
        cap = sum(p.base_mem) + sum(sum(j) for j in p.jobs)
        load = []
        for k in range(n):
            dl.check()
            v = md.new_int_var(0, cap, f"N{k}")
            md.add(v == p.base_mem[k] + sum(m * x[j, t, k] for j, job in enumerate(p.jobs)
                                            for t, m in enumerate(job)))
            load.append(v)
        for a, b in _sym_pairs(p):
            md.add(load[a] >= load[b])
        if p.objective == "max":
            z = md.new_int_var(int(p.lower_bound()), cap, "z")
            md.add_max_equality(z, load)
            md.minimize(z)
        else:
            over = [md.new_int_var(0, cap, f"o{k}") for k in range(n)]
            for k in range(n):
                md.add(over[k] >= load[k] - p.mem_pages)
            md.minimize(sum(over))
        # warm start: the greedy mapping with its nodes relabelled to respect the symmetry
        # breaking (sort identical-base nodes by load)
        hint = _greedy_sorted(p)
        for j, nodes in enumerate(hint):
            for t, kk in enumerate(nodes):
                dl.check()
                for k in range(n):
                    md.add_hint(x[j, t, k], 1 if k == kk else 0)
        dl.check()
    except TimeUp:
        return _stopped("cpsat", p, dl, seed, params)
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = int(seed)
    if dl.limit is not None:  # a limit over MAX_SECONDS is none (models.deadline)
        s.parameters.max_time_in_seconds = dl.left()
    st = run_cpsat(s, md)
    rt = time.perf_counter() - t0
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _stopped("cpsat", p, dl, seed, params, _NO_SOLUTION)
    sol = _decode(p, lambda j, t, k: s.value(x[j, t, k]))
    return build(solver="cpsat", status=Status.OPTIMAL if st == cp_model.OPTIMAL
                 else Status.FEASIBLE, solution=sol, check=checker(p), objective=scorer(p),
                 bound=s.best_objective_bound, runtime=rt, seed=seed, params=params)


def solve_ilp(problem: TaskMapping, *, time_limit: float | None = None, seed: int = 0,
              max_vars: int = MAX_VARS_ILP, backend: str = "cbc") -> Result:
    """The same model with PuLP on ``backend`` (``"cbc"``, ``"highs"`` or ``"scip"``,
    :mod:`models.mip`; one thread); ``time_limit`` in seconds (model building
    included), ``seed`` recorded only. Refuses (ValueError) more than ``max_vars``
    assignment variables; when the limit runs out while building, returns the greedy
    mapping (FEASIBLE). A stopped run (its limit, Ctrl-C) answers the better of the
    backend's incumbent and the greedy mapping; its bound: the backend's (SCIP, CBC's
    log) or the load lower bound, whichever is larger, dropped by ``build`` when a
    solution is below it."""

    import pulp

    from models import mip
    from models.cbc import variable

    mip.check_backend(backend)
    dl = Deadline(time_limit)
    t0 = dl.t0
    params: dict[str, Any] = {"max_vars": max_vars, "backend": backend}
    _refuse("ilp", problem, max_vars)
    p = problem
    n = p.n_nodes
    try:
        lp = pulp.LpProblem("task_mapping", pulp.LpMinimize)
        x = {}
        for j, job in enumerate(p.jobs):  # the clock at every task (module's cpsat)
            for t in range(len(job)):
                dl.check()
                for k in range(n):
                    x[j, t, k] = variable(lp, f"x_{j}_{t}_{k}", "Binary")
        load = []
        for k in range(n):
            dl.check()
            load.append(p.base_mem[k] + pulp.lpSum(m * x[j, t, k] for j, job in enumerate(p.jobs)
                                                   for t, m in enumerate(job)))
        if p.objective == "max":
            z = variable(lp, "z", "Continuous", low=p.lower_bound())
            lp += z
            for k in range(n):
                lp += load[k] <= z
        else:
            over = [variable(lp, f"o{k}", "Continuous", low=0) for k in range(n)]
            lp += pulp.lpSum(over)
            for k in range(n):
                lp += over[k] >= load[k] - p.mem_pages
        dl.check()
        for j, job in enumerate(p.jobs):
            for t in range(len(job)):
                dl.check()
                lp += pulp.lpSum(x[j, t, k] for k in range(n)) == 1
            for k in range(n):
                dl.check()
                lp += pulp.lpSum(x[j, t, k] for t in range(len(job))) <= 1
        for a, b in _sym_pairs(p):
            lp += load[a] >= load[b]
        dl.check()
    except TimeUp:
        return _stopped("ilp", p, dl, seed, params)
    outcome, found = mip.solve_logged(lp, backend=backend, time_limit=dl.left(), grace=0.2,
                                      prefix="cbc_tm_", data=problem)
    if outcome == "stopped":  # killed past the limit or by Ctrl-C: no answer read
        return _stopped("ilp", p, dl, seed, params,
                        f"{mip.killed_note(backend, lp)}: the greedy mapping (bound: the "
                        "load lower bound)")
    rt = time.perf_counter() - t0
    try:
        sol = _decode(p, lambda j, t, k: (x[j, t, k].value() or 0) > 0.5)
    except StopIteration:
        sol = None
    if sol is None:
        return _stopped("ilp", p, dl, seed, params, _NO_SOLUTION)
    proved = outcome == "optimal"
    bound = lp.objective.value() if proved else max(
        [p.lower_bound()] + ([found] if found is not None else []))
    note = ""
    if not proved:  # a stopped solver's incumbent or the greedy mapping, the better
        greedy = _greedy_sorted(p)
        if scorer(p)(greedy) < scorer(p)(sol):
            sol, note = greedy, (f"the greedy mapping: better than the incumbent of "
                                 f"{mip.NAMES[backend]}, stopped")
    return build(solver="ilp", status=Status.OPTIMAL if proved else Status.FEASIBLE,
                 solution=sol, check=checker(p), objective=scorer(p), bound=bound,
                 runtime=rt, seed=seed, params=params, note=note)


def solve_brute(problem: TaskMapping, *, time_limit: float | None = None, seed: int = 0,
                max_placements: int = MAX_PLACEMENTS) -> Result:
    """Every injective placement of every job (tiny instances only). Refuses
    (ValueError) more than ``max_placements`` placements before enumerating; stopped by
    ``time_limit`` (seconds), returns the best so far (FEASIBLE, bound the load lower
    bound). ``seed`` recorded only."""
    dl = Deadline(time_limit)
    p = problem
    params: dict[str, Any] = {"max_placements": max_placements}
    count = 1
    for job in p.jobs:
        count *= math.perm(p.n_nodes, len(job))
        if count > max_placements:
            raise ValueError(f"task_mapping brute: more than {max_placements} placements "
                             f"(max_placements) for {len(p.jobs)} jobs on {p.n_nodes} "
                             f"nodes")
    choices = [list(itertools.permutations(range(p.n_nodes), len(job))) for job in p.jobs]
    best = best_v = None
    for i, combo in enumerate(itertools.product(*choices)):
        if i % 256 == 0 and best is not None and dl.expired():
            return build(solver="brute", status=Status.FEASIBLE, solution=best,
                         check=checker(p), objective=scorer(p), bound=p.lower_bound(),
                         runtime=dl.elapsed(), seed=seed, params=params,
                         note="stopped by the time limit")
        sol = [list(c) for c in combo]
        v = objective(p, sol)
        if best_v is None or v < best_v:
            best, best_v = sol, v
    return build(solver="brute", status=Status.OPTIMAL, solution=best, check=checker(p),
                 objective=scorer(p), bound=best_v, runtime=dl.elapsed(),
                 seed=seed, params=params)
