"""PuLP/CBC models of the K-resource problems (one thread; ``time_limit`` in seconds,
rounded up to whole seconds as CBC takes them).

- :func:`solve_epochs` (M1): the same formulation as the CP-SAT model (``x[j,e]`` with
  ``e <= j``, ``y[e]`` non-increasing, capacity per epoch and resource).
- :func:`solve_selection` (M2): the same knapsack with the EASY constraint.
- :func:`solve_response` (M3): time-indexed, ``x[j,t] = 1`` when job j starts at t, for
  ``t in [a_j, H - p_j]``; capacity per resource at every time unit. Small horizons only
  (the number of variables is about ``n H``).

CBC's ``LpStatus`` says "Optimal" even when it stopped on time with a solution, so we
read ``sol_status``: ``LpSolutionOptimal`` -> OPTIMAL; ``LpSolutionIntegerFeasible`` ->
FEASIBLE with the LP-relaxation bound (a valid bound, solved separately).

Model building reads the clock (``models.deadline.Deadline.check``) at every job and
row: epochs
stopped there return the greedy packing (FEASIBLE, bound ``lower_bound()``), response
UNKNOWN. An epochs model of more than :data:`MAX_EPOCH_VARIABLES` variables is not built
(the greedy packing, said in the note): its build ran until the limit, holding more
memory the longer the limit (1.1 GB at 16 s on 10^5 jobs).
"""

from __future__ import annotations

import time
from typing import Any

from models import mip
from models.cbc import solve_guarded, variable
from models.deadline import Deadline, TimeUp
from models.kresource.bounds import lp_size
from models.kresource.common import best_packing, epochs_variables, relabel
from sim.problems import checker, scorer
from sim.problems.kresource import EpochProblem, ResponseProblem, SelectionProblem
from sim.result import Result, Status, build


def _run(make: Any, time_limit: float | None, backend: str = "cbc",
         data: Any = None) -> tuple[Status, dict, float | None]:
    """Solve the binary model; returns (status, variable values, LP bound if stopped).
    The LP relaxation (for the bound) gets what is left of ``time_limit`` (seconds).
    CBC runs under ``models.cbc.solve_guarded``: it is killed shortly after the limit
    when it overruns it while reading the model or at the root (then UNKNOWN). Each CBC
    run starts only with at least the model's build time left (PuLP's writing of the
    model, which cannot be interrupted, takes about as long). A model beyond the
    backend's ``models.mip.MAX_MAGNITUDE`` is refused (ValueError naming ``data``'s
    largest field)."""
    import time

    import pulp

    def run(lp: Any, left: float | None) -> bool:
        if backend == "cbc":  # CBC itself, as models.mip runs it
            mip.check_magnitude(lp, backend, data)
            return solve_guarded(lp, time_limit=left, grace=0.2)
        return mip.solve(lp, backend=backend, time_limit=left, grace=0.2, data=data)

    t0 = time.perf_counter()
    dl = Deadline(time_limit, start=t0)
    prob, xs = make(pulp.LpBinary)
    # PuLP writes the model for CBC (it cannot be interrupted) in about the time it took
    # to build: CBC runs only with that much left
    t_write = time.perf_counter() - t0
    left = dl.left(0.0)
    if left is not None and left < max(0.05, t_write):
        return Status.UNKNOWN, {}, None
    if not run(prob, left):
        return Status.UNKNOWN, {}, None
    vals = {key: (v.varValue or 0.0) for key, v in xs.items()}
    if prob.sol_status == pulp.LpSolutionOptimal:
        return Status.OPTIMAL, vals, None
    if prob.sol_status == pulp.LpSolutionInfeasible:
        return Status.INFEASIBLE, {}, None
    left = dl.left(0.0)
    if left is not None and left < max(0.5, t_write):
        lp = None
    else:  # the same model relaxed (no rebuild)
        lp = prob
        for v in lp.variables():
            v.cat = pulp.LpContinuous
        if not run(lp, left):
            lp = None
    if lp is None:
        return (Status.FEASIBLE if prob.sol_status == pulp.LpSolutionIntegerFeasible
                else Status.UNKNOWN), vals, None
    bound = float(pulp.value(lp.objective)) if lp.status == pulp.LpStatusOptimal else None
    if prob.sol_status == pulp.LpSolutionIntegerFeasible:
        return Status.FEASIBLE, vals, bound
    return Status.UNKNOWN, {}, bound


MAX_EPOCH_VARIABLES = 500_000
"""Most ``x[j,e]`` variables of the epochs model the ILP builds (PuLP holds about 1 KB
per variable with its rows, CBC a copy; 10^5 jobs in 26,000 epochs would need 2.6 x 10^9,
and the build held 1.1 GB when a 16 s limit stopped it)."""


def solve_epochs(problem: EpochProblem, *, time_limit: float | None = None,
                 seed: int = 0, backend: str = "cbc") -> Result:
    """Minimum number of epochs with CBC, HiGHS or SCIP (``backend``, :mod:`models.mip`;
    module docstring)."""
    import pulp

    mip.check_backend(backend)
    t0 = time.perf_counter()
    dl = Deadline(time_limit, start=t0)
    ub_sol = best_packing(problem, time_limit)
    n, K, E = problem.n, problem.K, len(ub_sol)
    lb = problem.lower_bound()
    params = {"time_limit": time_limit, "backend": backend}
    if epochs_variables(n, E) > MAX_EPOCH_VARIABLES:  # proved only if it meets the bound
        return build(solver="ilp", status=Status.OPTIMAL if E == lb else Status.FEASIBLE,
                     solution=ub_sol, bound=lb, check=checker(problem),
                     objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                     params=params, note=f"model too large ({epochs_variables(n, E):,} "
                     f"variables > {MAX_EPOCH_VARIABLES:,}); the greedy packing")

    def make(cat: str) -> tuple[Any, dict]:
        prob = pulp.LpProblem("epochs", pulp.LpMinimize)
        x = {}
        for j in range(n):
            dl.check()
            for e in range(min(j + 1, E)):
                x[j, e] = variable(prob, f"x{j}_{e}", cat, low=0, up=1)
        y = {e: variable(prob, f"y{e}", cat, low=0, up=1) for e in range(E)}
        prob += pulp.lpSum(y.values())
        for j in range(n):  # as long as the variables' loop: the clock here too
            dl.check()
            prob += pulp.lpSum(x[j, e] for e in range(min(j + 1, E))) == 1
        for e in range(E):
            dl.check()
            for k in range(K):
                prob += pulp.lpSum(problem.demands[j][k] * x[j, e] for j in range(e, n)
                                   if problem.demands[j][k]) <= problem.capacity[k] * y[e]
            if e + 1 < E:
                prob += y[e] >= y[e + 1]
        prob += pulp.lpSum(y.values()) >= lb
        return prob, x

    try:
        status, vals, bound = _run(make, dl.left(0.0), backend, problem)
    except TimeUp:
        return build(solver="ilp", status=Status.FEASIBLE, solution=ub_sol, bound=lb,
                     check=checker(problem), objective=scorer(problem),
                     runtime=time.perf_counter() - t0, seed=seed,
                     params={"time_limit": time_limit, "backend": backend},
                     note="time limit reached while building; the greedy packing")
    sol = None
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        sol = relabel([[j for j in range(n) if vals.get((j, e), 0) > 0.5] for e in range(E)])
        if status is Status.FEASIBLE:
            bound = lb if bound is None else max(lb, mip.ceil_bound(bound))
    elif status is Status.UNKNOWN:
        sol, status, bound = ub_sol, Status.FEASIBLE, lb
    return build(solver="ilp", status=status, solution=sol, bound=bound, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 params={"time_limit": time_limit, "backend": backend})


def solve_selection(problem: SelectionProblem, *, time_limit: float | None = None,
                    seed: int = 0, backend: str = "cbc") -> Result:
    """Optimal backfill selection with CBC, HiGHS or SCIP (``backend``,
    :mod:`models.mip`; module docstring)."""
    import pulp

    mip.check_backend(backend)
    t0 = time.perf_counter()
    n, K, w = problem.n, problem.K, problem.weights
    elig = [j for j in range(n) if problem.eligible(j)]

    def make(cat: str) -> tuple[Any, dict]:
        prob = pulp.LpProblem("selection", pulp.LpMaximize)
        x = {j: variable(prob, f"x{j}", cat, low=0, up=1) for j in elig}
        prob += pulp.lpSum((w[j] * (n + 1) + 1) * x[j] for j in elig)
        for k in range(K):
            prob += pulp.lpSum(problem.demands[j][k] * x[j] for j in elig) <= problem.free[k]
            prob += pulp.lpSum(problem.demands[j][k] * x[j] for j in elig
                               if problem.late[j]) <= problem.extra[k]
        return prob, x

    if not elig:
        status, vals, bound = Status.OPTIMAL, {}, None
    else:
        status, vals, bound = _run(make, time_limit, backend, problem)
    sol = [j for j in elig if vals.get(j, 0) > 0.5] if status in (
        Status.OPTIMAL, Status.FEASIBLE) else None
    return build(solver="ilp", status=status, solution=sol, bound=bound, check=checker(problem),
                 objective=scorer(problem), sense="max", runtime=time.perf_counter() - t0,
                 seed=seed, params={"time_limit": time_limit, "backend": backend})


def solve_response(problem: ResponseProblem, *, time_limit: float | None = None,
                   seed: int = 0, max_vars: int = 50_000,
                   max_nonzeros: int = 150_000, backend: str = "cbc") -> Result:
    """Time-indexed ILP for the minimum total (weighted) response time (module
    docstring). Raises ValueError when it would need more than ``max_vars`` variables
    or ``max_nonzeros`` capacity-row coefficients (CBC's root processing of larger
    models does not stop at the time limit). ``backend``: ``"cbc"``, ``"highs"`` or
    ``"scip"`` (:mod:`models.mip`)."""
    import pulp

    mip.check_backend(backend)
    t0 = time.perf_counter()
    dl = Deadline(time_limit, start=t0)
    n, K = problem.n, problem.K
    H = problem.horizon()
    p, a, wt = problem.duration, problem.release, problem.weights
    nvars, nnz = lp_size(problem)
    if nvars > max_vars:
        raise ValueError(f"kresource_response ilp: {nvars} time-indexed variables > max_vars "
                         f"{max_vars}; scale time down or use cpsat")
    if nnz > max_nonzeros:
        raise ValueError(f"kresource_response ilp: {nnz} capacity coefficients > max_nonzeros "
                         f"{max_nonzeros}; scale time down or use cpsat")

    def make(cat: str) -> tuple[Any, dict]:
        prob = pulp.LpProblem("response", pulp.LpMinimize)
        x = {}
        for j in range(n):
            for t in range(a[j], H - p[j] + 1):  # at most max_vars: a look each
                dl.check()
                x[j, t] = variable(prob, f"x{j}_{t}", cat, low=0, up=1)
        prob += pulp.LpAffineExpression([(v, wt[j] * (t + p[j] - a[j]))
                                         for (j, t), v in x.items()])
        for j in range(n):
            prob += pulp.LpAffineExpression([(x[j, t], 1) for t in
                                             range(a[j], H - p[j] + 1)]) == 1
        for t in range(H):
            dl.check()
            for k in range(K):
                terms = [(x[j, u], problem.demands[j][k]) for j in range(n)
                         if problem.demands[j][k]
                         for u in range(max(a[j], t - p[j] + 1), min(t, H - p[j]) + 1)]
                if terms:
                    prob += pulp.LpAffineExpression(terms) <= problem.capacity[k]
        return prob, x

    try:
        status, vals, bound = _run(make, time_limit, backend, problem)
    except TimeUp:
        return build(solver="ilp", status=Status.UNKNOWN, solution=None, check=checker(problem),
                     objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                     params={"time_limit": time_limit, "backend": backend},
                     note="time limit reached while building")
    sol = None
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        sol = [next(t for t in range(a[j], H - p[j] + 1) if vals.get((j, t), 0) > 0.5)
               for j in range(n)]
    return build(solver="ilp", status=status, solution=sol, bound=bound, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 params={"time_limit": time_limit, "backend": backend})
