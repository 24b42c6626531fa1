"""SCIP on the time-indexed model of the offline response problem (M3,
:class:`sim.problems.kresource.ResponseProblem`) restricted by reduced-cost fixing: a
stage of :mod:`models.kresource.portfolio`. Times in integer time units; seconds of
wall clock for limits.

Model
-----
With the certified LP bound ``lb`` (:class:`models.kresource.bounds.ResponseBound`) and a
schedule of total weighted response time ``U`` (the hint), one binary ``x[j,t]`` for
each start ``t`` that a schedule of cost ``<= U`` can use (``lb.kept(U)``, reduced-cost
fixing: every such schedule lies in the model); one start per job; the LP's capacity
rows and packing cuts (``lb.rows``: inequalities every schedule satisfies) on those
columns, a row dropped where its kept columns cannot exceed its right-hand side;
objective the total weighted response time. So the model's optimum is the problem's
optimum (some optimal schedule costs ``<= U``), and a bound ``b`` on the model proves
``min(U, b)`` for the problem.

The full time-indexed model of the 40-job K = 4 target (``sim/experiments/engine/
mip_bench.py``, 11,420 starts, 271,356 capacity coefficients) is refused by the ILP; the
restricted one at ``U = 469`` holds 2,269 starts, at ``U = 476`` 2,508 and 111,954
coefficients. SCIP (presolve on, its restarts fixing more by its own reduced costs),
niced, on one thread: hinted with a schedule of 469 it proved the optimum 459 in 42.7 s
(load average 4.1); with 485, 459 found in 20 s and a bound of 450.5-452.4 at 47 s (two
runs, load average 1.6-1.7); with 490, 481 and 448.0 at 47 s: the hint decides.
HiGHS on the same model at ``U = 476`` and ``U = 462`` (presolve on, no hint: HiGHS
through ``model_builder`` crashed on hints) stopped at schedules of 500 and 479 with a
bound of 448 after 60 and 90 s, so SCIP is the backend.

Certification
-------------
SCIP works in doubles with tolerances. The schedule is read back (each job at its
largest ``x``), checked by the family's check and scored by its objective; nothing of
SCIP's objective is copied, and a schedule that fails the check is dropped with its
bound. SCIP's dual bound ``b`` is made safe as ``ceil(b - margin)`` with ``margin =
models.mip.ROUND_TOL * max(1, |b|) + DUAL_TOL * (number of binaries)``: a primal or
integrality tolerance only enlarges the region SCIP minimises over (its bound drops,
the safe side); a reduced cost accepted within SCIP's dual feasibility tolerance (1e-7
by default, :data:`DUAL_TOL` is ten times that) moves an LP bound by at most that much
per binary in [0, 1]; the relative share covers the rounding of SCIP's sums and its
absolute stopping gap of 0.5 (below one unit of the integral objective). A careful
reading of the tolerances, as in :mod:`models.slack_insertion.timeindexed`, not an exact
certificate; the portfolio drops any bound above a schedule any stage found.

Limits: SCIP runs in the project's MIP worker process (:func:`models.mip.run_worker`),
its own limit :data:`RESERVE` seconds before the stage's, killed with its process group
:data:`GRACE` seconds after it or beyond :data:`models.mip.WORKER_MEMORY_MB`; a killed
run gives nothing. A model beyond :class:`FixedMipOptions`' sizes, or holding a number
beyond SCIP's exact range (:data:`models.mip.MAX_MAGNITUDE`), is not run (the stage
says so and the portfolio goes on with CP-SAT).
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from models import mip
from models.deadline import Deadline
from models.kresource.bounds import ResponseBound
from sim.problems import checker, scorer
from sim.problems.kresource import ResponseProblem, response_cost
from sim.result import Result, Status, build

__all__ = ["FixedMipOptions", "fits", "model_size", "solve_fixed", "lp_order_schedule",
           "safe_bound", "start_worker_server", "NOT_RUN", "DUAL_TOL", "RESERVE", "GRACE"]

DUAL_TOL = 1e-6
"""Per-binary share of the bound margin (time units; ten times SCIP's default dual
feasibility tolerance)."""
RESERVE = 0.3
"""Seconds before the stage's end at which SCIP's own limit stops it (it writes its
answer then; the worker is killed only :data:`GRACE` seconds after the stage's end)."""
GRACE = 0.5
"""Seconds past the stage's end after which the worker is killed."""
MOVE_REACH = 6
"""Places a local-search move takes a job in the order (:func:`lp_order_schedule`)."""
STALL = 600
"""Moves without a gain after which the local search restarts from its best order."""
MAX_MOVES = 50_000
"""Most local-search moves (about 0.3 ms each on 40 jobs)."""
PERTURB = 3
"""Random moves from the best order at a restart of the local search."""
RESTARTS = 5
"""The local search ends after this many restarts in a row without a better schedule."""
SCIP_INFINITY = 1e19
"""A SCIP bound this large in absolute value is its infinity (a run stopped before its
root LP reports -1e20): no bound."""
NOT_RUN = "SCIP on the fixed starts not run"
"""How :func:`solve_fixed`'s note begins when SCIP did not run."""
MIN_SECONDS = 1.0
"""Seconds below which the stage does not start (starting the worker and SCIP's
presolve take about that)."""


@dataclass(frozen=True)
class FixedMipOptions:
    """Sizes beyond which :func:`solve_fixed` does not run SCIP.

    Parameters
    ----------
    max_columns : int
        Most binaries (kept starts).
    max_nonzeros : int
        Most coefficients in the capacity rows and packing cuts (SCIP held about 300 MB
        on the target's 130,000; the worker is killed beyond 1,024 MB).
    """

    max_columns: int = 20_000
    max_nonzeros: int = 300_000

    def __post_init__(self) -> None:
        for name in ("max_columns", "max_nonzeros"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"FixedMipOptions {name} = {v!r}: an integer >= 1")


def start_worker_server() -> threading.Thread:
    """Start the MIP fork server of :mod:`models.mip` in a background thread (about 1 s,
    more on a loaded machine) unless it runs; returns the thread (a daemon)."""
    t = threading.Thread(target=mip.start_server, daemon=True)
    t.start()
    return t


def _rows(lb: ResponseBound, pos: np.ndarray
          ) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """``lb.rows`` over the kept columns (``pos``: each LP column's model index, -1 if
    not kept), without the rows the kept columns cannot violate."""
    out = []
    for cols, coef, rhs in lb.rows:
        at = pos[cols]
        sel = at >= 0
        if coef[sel].sum() > rhs:
            out.append((at[sel], coef[sel], rhs))
    return out


def _columns(lb: ResponseBound, value: float) -> tuple[np.ndarray, np.ndarray]:
    """The LP columns kept at ``U = value`` (their indices) and each LP column's index in
    the restricted model (-1 if not kept)."""
    idx = np.nonzero(lb.kept(value))[0]
    pos = np.full(len(lb.job), -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    return idx, pos


def model_size(lb: ResponseBound, value: float) -> tuple[int, int]:
    """The restricted model's binaries and row coefficients at ``U = value`` (time
    units)."""
    idx, pos = _columns(lb, value)
    return len(idx), sum(len(at) for at, _, _ in _rows(lb, pos))


def fits(lb: ResponseBound, value: float, options: FixedMipOptions = FixedMipOptions()
         ) -> bool:
    """Whether the restricted model at ``U = value`` is within ``options``' sizes."""
    cols, nnz = model_size(lb, value)
    return cols <= options.max_columns and nnz <= options.max_nonzeros


@dataclass(frozen=True)
class _Model:
    """The restricted model (module docstring) and its columns' jobs and starts."""

    helper: Any
    job: np.ndarray
    start: np.ndarray
    magnitude: float


def _build(problem: ResponseProblem, lb: ResponseBound, value: float,
           hint: list[int]) -> _Model:
    """The restricted model at ``U = value`` with the schedule ``hint`` (job starts) as
    SCIP's starting solution."""
    from ortools.linear_solver.python import model_builder_helper as mbh

    idx, pos = _columns(lb, value)
    jobs, starts = lb.job[idx], lb.start[idx]
    h = mbh.ModelBuilderHelper()
    n = len(idx)
    h.add_var_array_with_bounds(np.zeros(n), np.ones(n), np.ones(n, dtype=bool), "")
    var = [mbh.Variable(h, i) for i in range(n)]
    w, p, a = problem.weights, problem.duration, problem.release
    cost = [float(w[j] * (t + p[j] - a[j])) for j, t in zip(jobs.tolist(), starts.tolist(),
                                                            strict=True)]
    h.set_objective_coefficients(list(range(n)), cost)
    for j in range(problem.n):
        row = h.add_linear_constraint()
        h.set_constraint_lower_bound(row, 1.0)
        h.set_constraint_upper_bound(row, 1.0)
        mine = np.nonzero(jobs == j)[0].tolist()
        h.add_terms_to_constraint(row, [var[i] for i in mine], [1.0] * len(mine))
    top = 1.0
    for at, coef, rhs in _rows(lb, pos):
        row = h.add_linear_constraint()
        h.set_constraint_upper_bound(row, float(rhs))
        h.add_terms_to_constraint(row, [var[i] for i in at.tolist()],
                                  [float(c) for c in coef.tolist()])
        top = max(top, float(rhs), float(coef.max()))
    chosen = set(zip(range(problem.n), hint, strict=True))
    for i, (j, t) in enumerate(zip(jobs.tolist(), starts.tolist(), strict=True)):
        h.add_hint(i, 1.0 if (j, t) in chosen else 0.0)
    return _Model(h, jobs, starts, top)


def safe_bound(bound: float, binaries: int) -> int:
    """SCIP's dual bound on the integral objective made safe (module docstring)."""
    margin = mip.ROUND_TOL * max(1.0, abs(bound)) + DUAL_TOL * binaries
    return math.ceil(bound - margin)


def _schedule(model: _Model, values: np.ndarray, n: int) -> list[int]:
    """Each job's start at its largest ``x`` (time units)."""
    best = np.full(n, -np.inf)
    out = [0] * n
    for i, v in enumerate(values.tolist()):
        j = int(model.job[i])
        if v > best[j]:
            best[j], out[j] = v, int(model.start[i])
    return out


def solve_fixed(problem: ResponseProblem, lb: ResponseBound, best: Result, *,
                time_limit: float | None, seed: int = 0,
                options: FixedMipOptions = FixedMipOptions(),
                ) -> tuple[list[Result], float | None, str]:
    """SCIP on the model restricted at ``U`` = ``best``'s objective, hinted with ``best``'s
    schedule (module docstring), within ``time_limit`` seconds (building included).

    Returns a list of zero or one FEASIBLE result (a checked schedule better than
    ``best``), the bound proved on the full problem (``min(U, safe SCIP bound)``; None if
    none) and a note."""
    dl = Deadline(time_limit)
    upper = int(round(best.objective))
    cols, nnz = model_size(lb, upper)
    if cols > options.max_columns or nnz > options.max_nonzeros:
        return [], None, (f"{NOT_RUN}: {cols:,} starts, {nnz:,} "
                          f"coefficients (beyond {options.max_columns:,} / "
                          f"{options.max_nonzeros:,})")
    model = _build(problem, lb, upper, list(best.solution))
    if model.magnitude > mip.MAX_MAGNITUDE["scip"]:
        return [], None, (f"{NOT_RUN}: a row holds "
                          f"{model.magnitude:.15g}, beyond its exact range")
    left = dl.left(0.0)
    if left is not None and left < MIN_SECONDS:
        return [], None, f"{NOT_RUN}: no time left"
    end = None if left is None else time.monotonic() + left
    params = mip.MipParameters(seed=seed % 2**31, rel_gap=0.0, abs_gap=mip.INTEGRAL_GAP)
    ans = mip.run_worker(model.helper, "scip", deadline=end, reserve=RESERVE, grace=GRACE,
                         parameters=params)
    head = f"SCIP on {cols:,} fixed starts below {upper}"
    if ans.get("status") is None:
        return [], None, f"{head}: no answer ({ans.get('why') or 'none'})"
    found: list[Result] = []
    proved = None
    if ans["has_solution"] and ans.get("values") is not None:
        sol = _schedule(model, np.asarray(ans["values"]), problem.n)
        try:  # the family's check and objective, once
            r = build(solver="scip", status=Status.FEASIBLE, solution=sol,
                      check=checker(problem), objective=scorer(problem), runtime=0.0,
                      seed=seed)
        except ValueError as e:  # numerical trouble: trust neither schedule nor bound
            return [], None, f"{head}: its schedule rejected ({e})"
        if r.objective < best.objective:
            found = [r]
        b = ans.get("bound")
        if b is not None and abs(float(b)) < SCIP_INFINITY:  # SCIP's -1e20: no bound
            proved = float(min(upper, safe_bound(float(b), cols)))
    return found, proved, f"{head}: {ans['status']}"


def serial(problem: ResponseProblem, order: list[int]) -> list[int]:
    """The serial list schedule of ``order`` (job starts, time units): each job at its
    earliest start at or after its release where it fits beside the jobs placed before
    it, the same schedule as :func:`heuristics.kresource.serial_schedule` (a test
    compares them), over arrays of free capacity per time unit (about five times
    faster on 40 jobs): a start whose window holds a time unit without room moves past
    the last such unit."""
    K, cap = problem.K, problem.capacity
    size = problem.horizon() + max(problem.duration, default=0) + 1
    free = [[c] * size for c in cap]
    starts = [0] * problem.n
    for j in order:
        p, d = problem.duration[j], problem.demands[j]
        rows = [(free[k], d[k]) for k in range(K) if d[k]]
        t = problem.release[j]
        while True:
            bad = -1
            for row, need in rows:
                for x in range(t + p - 1, max(t, bad + 1) - 1, -1):
                    if row[x] < need:
                        bad = x
                        break
            if bad < 0:
                break
            t = bad + 1
        starts[j] = t
        for row, need in rows:
            for x in range(t, t + p):
                row[x] -= need
    return starts


def lp_order_schedule(problem: ResponseProblem, lb: ResponseBound, *, seed: int = 0,
                      time_limit: float | None = None, max_moves: int = MAX_MOVES
                      ) -> list[int]:
    """A schedule for the hint of the fixed model: serial list schedules (time units)
    over job orders, from the order of the LP's mean starts (release order if the LP left
    none), improved by an iterated local search: a move takes one job
    :data:`MOVE_REACH` places or fewer forward or back in the order and is kept when the
    schedule costs no more; after :data:`STALL` moves without a gain the search goes on
    from the best order with three random moves, and it ends after :data:`RESTARTS`
    restarts in a row without a better schedule. At most ``max_moves`` moves, drawn
    from ``seed``, and none once ``time_limit`` seconds are spent. On the 40-job K = 4
    target (load average 4, seeds 0-3) it reaches 469-482 in 1 s and 469-470 in 4 s,
    where CP-SAT's first second gives 615 and its interleaved search 485 in 8 s on the
    fixed starts."""
    dl = Deadline(time_limit)
    rng = random.Random(seed)

    def score(sol: list[int]) -> float:  # serial schedules are feasible: no check
        return response_cost(problem, sol)

    mean = lb.mean_start or problem.release
    order = sorted(range(problem.n), key=lambda j: (mean[j], j))
    sol = serial(problem, order)
    cur = best = score(sol)
    best_order, best_sol, last, idle = order, sol, 0, 0

    def move(o: list[int]) -> list[int]:
        o = o[:]
        i = rng.randrange(len(o))
        k = min(max(i + rng.randint(-MOVE_REACH, MOVE_REACH), 0), len(o) - 1)
        o.insert(k, o.pop(i))
        return o

    for it in range(1, max_moves + 1):
        if problem.n < 2 or dl.expired():
            break
        cand = move(order)
        s = serial(problem, cand)
        v = score(s)
        if v <= cur:
            last = it if v < cur else last
            order, cur = cand, v
            if v < best:
                best, best_order, best_sol, idle = v, cand, s, 0
        if it - last > STALL:
            idle += 1
            if idle > RESTARTS:
                break
            order = best_order
            for _ in range(PERTURB):
                order = move(order)
            cur, last = score(serial(problem, order)), it
    return best_sol
