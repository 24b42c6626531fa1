"""A certified lower bound on the optimal insertion price: the LP relaxation of the
time-indexed model of :mod:`models.slack_insertion.ilp`, solved by GLOP, certified by a
Lagrangian dual bound.

The LP
------
Columns ``x[j,k]`` over job j's candidate starts ``tau_k`` (the dominant start times of
:func:`models.slack_insertion.domains.dominant_times` inside j's start domain, shrunk by
:func:`models.slack_insertion.domains.tighten_domains` with an incumbent, where j fits
next to the running jobs and its cost is finite), ``sum_k x[j,k] = 1``, cost
:func:`sim.problems.insertion.job_cost` (the new job's: its weighted start). Capacity:
at every candidate time ``u`` at which the jobs that can run may exceed the free
processors ``f(u)``, ``sum_j n_j sum_{tau_k in (u - t_j, u]} x[j,k] <= f(u)``.

Validity. Some optimal schedule starts every job at a dominant time (proof in
:mod:`models.slack_insertion.domains`) and costs no more than the incumbent, so it lies
in the shrunk domains; it is a 0/1 point of the LP, whose minimum is therefore at most
the optimum. (If the incumbent is itself optimal the LP may only see schedules of its
price and ties; the bound is capped at the incumbent's price.)

The LP is solved in the cumulative variables ``z[j,k] = x[j,0] + ... + x[j,k]`` (rows
``z[j,k-1] <= z[j,k]``, ``z[j,last] = 1``), in which every capacity row has two terms per
job: O(columns) nonzeros instead of O(columns x rows) (the direct rows took 8.9 million
coefficients and 15 s to build on a k = 31 KTH snapshot). It is the same LP.

The certificate. The LP value is a float from a solver with tolerances, so the bound
reported is the Lagrangian bound of the capacity duals ``u`` clipped at 0: for any
``u >= 0`` and every schedule x of the model (``A x <= b`` the capacity rows in the
``x`` form),

    ``c x >= c x + u (A x - b) >= -u b + sum_j min_k (c + u A)[j,k]``

(each job starts exactly once), equal to the LP value at an exact LP optimum. It is
computed in float64 from the exact costs and lowered by a relative margin of
:data:`MARGIN` of the magnitudes summed.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np

from models.slack_insertion.domains import dominant_times, start_bounds, tighten_domains
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule

__all__ = ["BoundOptions", "InsertionBound", "insertion_bound", "MARGIN"]

MARGIN = 1e-9
"""Relative margin (of the sum of the magnitudes in the Lagrangian sum) taken off the
bound against float summation error."""


@dataclass(frozen=True)
class BoundOptions:
    """Options of :func:`insertion_bound`.

    Parameters
    ----------
    max_points : int
        No bound (None) with more dominant start times than this.
    max_columns : int
        No bound (None) with more candidate (job, start) columns than this (LP size).
    """

    max_points: int = 200_000
    max_columns: int = 400_000


@dataclass(frozen=True)
class InsertionBound:
    """A certified lower bound on the optimal price and what produced it.

    Parameters
    ----------
    bound : float
        Valid lower bound on the optimal price (the price's units).
    lp_value : float
        GLOP's LP value (a float; not itself a certificate; NaN when GLOP stopped).
    columns, rows : int
        Candidate (job, start) columns and capacity rows of the LP.
    seconds : float
        Wall-clock seconds spent (building and solving).
    """

    bound: float
    lp_value: float
    columns: int
    rows: int
    seconds: float


class _Stopped(Exception):
    """The time limit ran out while building."""


def _model(problem: InsertionProblem, incumbent: InsertionSchedule, options: BoundOptions,
           expired) -> tuple[list[tuple[int, int, int]], list[list[int]], list[list[float]],
                             list[int], dict[int, int]] | None:
    """Jobs ``(id, n, t)``, each job's candidate starts and costs, the capacity-row times
    and the free processors at each (module docstring); None when too large."""
    now = problem.now
    T = ins.horizon(problem)
    dom, new_dom = start_bounds(problem, T)
    dom, new_dom = tighten_domains(problem, dom, new_dom, incumbent)
    cap_t = max([hi for _, hi in dom.values()] + ([new_dom[1]] if new_dom else [now]))
    try:
        C = dominant_times(problem, cap_t, options.max_points, stop=expired)
    except ValueError:
        if expired():
            raise _Stopped from None
        return None
    run = ins.profile_of(problem)
    jobs = [(w.id, w.n, w.t) for w in problem.waiting]
    if problem.new is not None:
        jobs.append((problem.new.id, problem.new.n, problem.new.t))
    starts: list[list[int]] = []
    costs: list[list[float]] = []
    ncols = 0
    for jid, n, t in jobs:
        is_new = problem.new is not None and jid == problem.new.id
        lo, hi = new_dom if is_new else dom[jid]
        taus, cs = [], []
        for tau in C[bisect_right(C, lo - 1):bisect_right(C, hi)]:
            if not run.fits(tau, t, (n,)):
                continue
            c = (ins.new_weight(problem) * ins.signed_power(tau - now, problem.alpha_t)
                 if is_new else ins.job_cost(problem, problem.job(jid), tau))
            if not math.isinf(c):
                taus.append(tau)
                cs.append(c)
        if not taus:
            raise RuntimeError(f"bounds: no candidate start for job {jid}")
        starts.append(taus)
        costs.append(cs)
        ncols += len(taus)
        if ncols > options.max_columns:
            return None
        if expired():
            raise _Stopped
    free = {u: problem.capacity - sum(r.n for r in problem.running if r.end > u) for u in C}
    rows = []
    for u in sorted({tau for taus in starts for tau in taus}):
        load = sum(n for (_, n, t), ts in zip(jobs, starts, strict=True)
                   if bisect_right(ts, u) > bisect_right(ts, u - t))
        if load > free[u]:
            rows.append(u)
    return jobs, starts, costs, rows, free


def insertion_bound(problem: InsertionProblem, *, time_limit: float | None = None,
                    incumbent: InsertionSchedule | None = None,
                    options: BoundOptions = BoundOptions()) -> InsertionBound | None:
    """A certified lower bound on the optimal price (module docstring), at most the
    price of the cheaper of ``incumbent`` (any feasible schedule) and the current
    schedule, whose price shrinks the domains (a cheaper one: a tighter LP).
    ``time_limit`` (seconds of wall clock) covers building and solving (a GLOP run it
    stops still gives a valid, weaker bound); None when the LP was not built in it, or
    is larger than ``options`` allow."""
    from ortools.linear_solver import pywraplp

    t0 = time.perf_counter()

    def left() -> float:
        return math.inf if time_limit is None else time_limit - (time.perf_counter() - t0)

    cur = ins.current_schedule(problem)
    if incumbent is not None:
        if ins.check(problem, incumbent):
            raise ValueError("insertion_bound: the incumbent schedule is infeasible")
        cur = ins.best(problem, [incumbent, cur])
    cap = ins.objective(problem, cur)
    try:
        built = _model(problem, cur, options, lambda: left() <= 0)
    except _Stopped:
        return None
    if built is None:
        return None
    jobs, starts, costs, rows, free = built
    first = np.cumsum([0] + [len(ts) for ts in starts])
    cost = np.array([c for cs in costs for c in cs], dtype=np.float64)
    job_of = np.repeat(np.arange(len(jobs)), np.diff(first))

    s = pywraplp.Solver.CreateSolver("GLOP")
    z = [s.NumVar(0.0, 1.0, "") for _ in range(len(cost))]
    obj = s.Objective()
    for j in range(len(jobs)):
        a, b = int(first[j]), int(first[j + 1])
        z[b - 1].SetBounds(1.0, 1.0)
        for i in range(a, b):  # c_k x_k = c_k (z_k - z_{k-1})
            obj.SetCoefficient(z[i], float(cost[i] - (cost[i + 1] if i + 1 < b else 0.0)))
            if i > a:
                ct = s.Constraint(-s.infinity(), 0.0)
                ct.SetCoefficient(z[i - 1], 1.0)
                ct.SetCoefficient(z[i], -1.0)
    obj.SetMinimization()
    # each capacity row in the x form: (columns [lo, hi) of job j, coefficient n_j)
    cts, lo_idx, hi_idx, coef, row_of, rhs = [], [], [], [], [], []
    for r, u in enumerate(rows):
        ct = s.Constraint(-s.infinity(), float(free[u]))
        for j, (_, n, t) in enumerate(jobs):
            ts = starts[j]
            hi, lo = bisect_right(ts, u), bisect_right(ts, u - t)
            if hi <= lo:
                continue
            ct.SetCoefficient(z[int(first[j]) + hi - 1], float(n))
            if lo > 0:
                ct.SetCoefficient(z[int(first[j]) + lo - 1], -float(n))
            lo_idx.append(int(first[j]) + lo)
            hi_idx.append(int(first[j]) + hi)
            coef.append(float(n))
            row_of.append(r)
        cts.append(ct)
        rhs.append(float(free[u]))
        if left() <= 0:
            return None
    s.SetTimeLimit(max(1, int(1000 * min(left(), 1e6))))
    status = s.Solve()
    u = np.array([max(0.0, -ct.dual_value()) for ct in cts]) if cts else np.zeros(0)
    lag, scale = _lagrangian(cost, job_of, len(jobs), u, np.array(rhs),
                             np.array(lo_idx, dtype=np.int64), np.array(hi_idx, dtype=np.int64),
                             np.array(coef), np.array(row_of, dtype=np.int64))
    bound = min(lag - MARGIN * max(1.0, scale), cap)
    value = s.Objective().Value() if status == pywraplp.Solver.OPTIMAL else math.nan
    return InsertionBound(bound=bound, lp_value=value, columns=len(cost), rows=len(rows),
                          seconds=time.perf_counter() - t0)


def _lagrangian(cost: np.ndarray, job_of: np.ndarray, n: int, u: np.ndarray,
                rhs: np.ndarray, lo: np.ndarray, hi: np.ndarray, coef: np.ndarray,
                row_of: np.ndarray) -> tuple[float, float]:
    """``-u b + sum_j min_k (c + u A)[j,k]`` (module docstring) and the sum of the
    magnitudes of its terms; ``A``'s row r has ``coef`` on the columns ``[lo, hi)`` of
    its entries (``row_of == r``)."""
    add = np.zeros(len(cost) + 1)
    w = u[row_of] * coef if len(row_of) else np.zeros(0)
    np.add.at(add, lo, w)
    np.add.at(add, hi, -w)
    rc = cost + np.cumsum(add)[:-1]
    best = np.full(n, np.inf)
    np.minimum.at(best, job_of, rc)
    ub = float(u @ rhs) if len(u) else 0.0
    return float(best.sum() - ub), float(np.abs(best).sum() + abs(ub))
