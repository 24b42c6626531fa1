"""A lower bound for the offline minimum total weighted response time (M3,
:class:`sim.problems.kresource.ResponseProblem`): the time-indexed LP strengthened by
packing (configuration) cuts, certified by a Lagrangian dual bound.

The LP
------
``x[j,t] >= 0`` is the share of job j starting at ``t in [a_j, H - p_j]`` (``H`` =
``problem.horizon()``: some optimal schedule ends every job by then, since in an active
schedule some job runs at every time in ``[max a, s_j)``), ``sum_t x[j,t] = 1``, and
``y[j,t] = sum_{u in (t - p_j, t]} x[j,u]`` is the share of job j running in the time
unit ``[t, t + 1)``. Rows:

- capacity: ``sum_j d_jk y[j,t] <= C_k`` for every time unit t and resource k;
- packing cuts: ``sum_{j in S} c_j y[j,t] <= beta`` with integer ``c_j >= 0`` and
  ``beta = max { sum_{j in F} c_j : F subset of S, the jobs of F fit together }``
  ("fit": ``sum_{j in F} d_jk <= C_k`` for every k).

Minimise ``sum_j w_j sum_t (t + p_j - a_j) x[j,t]``.

Validity. An integer schedule (starts ``s_j``) is a 0/1 point of the LP: ``x[j,s_j] =
1``; the jobs running at t (``y[j,t] = 1``) fit together, so both row kinds hold, and
the objective is the schedule's total weighted response time. Hence the LP minimum is
at most the optimum. The packing cuts are the facets of the convex hull of the sets
of jobs that fit together (the per-time configuration polytope); they are separated
at each time unit from the current LP point, over the (at most :data:`MAX_SUPPORT`)
jobs running there with the largest shares, by a small LP over the subsets that fit,
and kept in a pool that is checked at every time unit each round.

The certificate. The LP's primal value is a float from a solver with tolerances and
a stopped LP has none, so the bound reported is the Lagrangian bound of the duals:
for any ``u >= 0`` on the capacity and cut rows (``A x <= b``) and every integer
schedule x,

    ``c x >= c x + u (A x - b) >= -u b + sum_j min_t (c + u A)[j,t]``

(each job starts at exactly one t). ``u`` is the solver's duals clipped at 0: valid for
any ``u`` whatever their accuracy, and equal to the LP value at an exact LP optimum.
The objective is an integer (integer weights and times), so the bound is rounded up
after a relative safety margin of :data:`MARGIN` for float summation.

Reduced-cost fixing. With ``L`` the Lagrangian value and ``g[j,t] = (c + u A)[j,t] -
min_t' (c + u A)[j,t'] >= 0``, every schedule costs at least ``L + sum_j g[j,s_j]``;
so a schedule of cost at most ``v`` starts each job j only at the t with ``L +
g[j,t] <= v`` (:meth:`ResponseBound.domains`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.deadline import Deadline, TimeUp
from sim.problems.kresource import ResponseProblem

MAX_SUPPORT = 12
"""At most this many jobs (the largest shares at a time unit) enter a separation."""
MARGIN = 1e-7
"""Relative margin subtracted before the Lagrangian bound is rounded up."""
CUT_SCALE = 1000
"""Packing-cut coefficients are integers up to this (the separation's scaled)."""


@dataclass(frozen=True)
class BoundOptions:
    """Options of :func:`response_bound`.

    Parameters
    ----------
    cuts : bool
        Separate packing cuts (False: the plain time-indexed LP).
    max_rounds : int
        At most this many LP solves.
    min_gain : float
        Stop when a round raises the LP value by less than this (time units).
    max_columns, max_nonzeros : int
        No LP (None) for a model with more start columns or capacity-row coefficients
        (about ``n H`` and ``sum_j p_j (H - p_j - a_j) K``; memory and build time).
    """

    cuts: bool = True
    max_rounds: int = 60
    min_gain: float = 1e-3
    max_columns: int = 100_000
    max_nonzeros: int = 1_500_000


@dataclass(frozen=True)
class ResponseBound:
    """A certified lower bound and what produced it.

    Parameters
    ----------
    bound : int
        Valid lower bound on the optimum total weighted response time (time units).
    lp_value : float
        The last LP's value (a float; not itself a certificate).
    rounds : int
        LP solves done.
    cuts : int
        Packing-cut rows in the last LP.
    mean_start : tuple of float
        Each job's LP mean start ``sum_t t x[j,t]`` (time units): an order for hints.
    seconds : float
        Wall-clock seconds spent.
    lagrangian : float
        The Lagrangian value ``L`` of the certificate (time units, before rounding).
    job, start : numpy.ndarray
        Each LP column's job and start (time units).
    slack : numpy.ndarray
        Each column's reduced-cost slack ``g[j,t]`` (time units; module docstring).
    rows : tuple
        The last LP's capacity rows and packing cuts, each ``(columns, coefficients,
        right-hand side)`` over column indices: inequalities every integer schedule
        satisfies (for :func:`models.kresource.cpsat.probe_indexed`).
    """

    bound: int
    lp_value: float
    rounds: int
    cuts: int
    mean_start: tuple[float, ...] = field(default=())
    seconds: float = 0.0
    lagrangian: float = -math.inf
    job: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64),
                            repr=False, compare=False)
    start: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64),
                              repr=False, compare=False)
    slack: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False,
                              compare=False)
    rows: tuple[tuple[np.ndarray, np.ndarray, float], ...] = field(default=(), repr=False,
                                                                   compare=False)

    def kept(self, value: float) -> np.ndarray:
        """The columns (a boolean mask) a schedule of total weighted response time at
        most ``value`` (time units) can use (reduced-cost fixing, module docstring)."""
        return self.lagrangian + self.slack <= value + MARGIN * max(1.0, abs(value))

    def domains(self, value: float, n: int) -> list[list[int]]:
        """Each job's starts (time units) that a schedule of total weighted response
        time at most ``value`` can use (reduced-cost fixing, module docstring); a job
        with no start left means no schedule costs at most ``value``."""
        keep = self.kept(value)
        out: list[list[int]] = [[] for _ in range(n)]
        for j, t in zip(self.job[keep].tolist(), self.start[keep].tolist(), strict=True):
            out[j].append(t)
        return out


def trivial_bound(problem: ResponseProblem) -> int:
    """``sum_j w_j p_j``: every job waits at least 0 (time units)."""
    return int(sum(w * p for w, p in zip(problem.weights, problem.duration, strict=True)))


class _Columns:
    """The LP's columns ``(j, t)`` in arrays: job, start, cost."""

    def __init__(self, problem: ResponseProblem) -> None:
        H = problem.horizon()
        p, a, w = problem.duration, problem.release, problem.weights
        jobs, starts = [], []
        self.first = []  # index of job j's first column
        for j in range(problem.n):
            self.first.append(len(jobs))
            ts = range(a[j], H - p[j] + 1)
            jobs += [j] * len(ts)
            starts += list(ts)
        self.job = np.array(jobs, dtype=np.int64)
        self.start = np.array(starts, dtype=np.int64)
        self.cost = np.array([w[j] * (t + p[j] - a[j]) for j, t in zip(jobs, starts,
                                                                      strict=True)],
                             dtype=np.float64)
        self.H, self.p, self.a = H, p, a

    def running(self, j: int, t: int) -> range:
        """Column indices of job j's starts that run in time unit t."""
        lo = max(self.a[j], t - self.p[j] + 1)
        hi = min(t, self.H - self.p[j])
        base = self.first[j] - self.a[j]
        return range(base + lo, base + hi + 1) if lo <= hi else range(0)


def _fits(dem: np.ndarray, cap: np.ndarray, jobs: tuple[int, ...]) -> bool:
    return bool(np.all(dem[list(jobs)].sum(axis=0) <= cap))


def _fitting_subsets(dem: np.ndarray, cap: np.ndarray, js: list[int]) -> list[tuple[int, ...]]:
    """The inclusion-maximal subsets of ``js`` (positions) whose jobs fit together."""
    out: list[tuple[int, ...]] = []
    m = len(js)

    def rec(i: int, chosen: list[int], load: np.ndarray) -> None:
        if i == m:
            # maximal: no skipped job fits beside the chosen ones
            if all(np.any(load + dem[js[q]] > cap) for q in range(m) if q not in chosen):
                out.append(tuple(chosen))
            return
        new = load + dem[js[i]]
        if np.all(new <= cap):
            rec(i + 1, chosen + [i], new)
        rec(i + 1, chosen, load)

    rec(0, [], np.zeros(dem.shape[1], dtype=dem.dtype))
    return out


def _separate(ys: list[float], js: list[int], dem: np.ndarray,
              cap: np.ndarray) -> tuple[tuple[tuple[int, int], ...], int] | None:
    """The most violated packing cut at one time unit (``ys``: shares of jobs ``js``),
    as ``((job, integer coefficient), ...), beta``, or None when the point is in the
    configuration polytope (to the separation LP's precision)."""
    from ortools.linear_solver import pywraplp

    subsets = _fitting_subsets(dem, cap, js)
    lp = pywraplp.Solver.CreateSolver("GLOP")
    m = len(js)
    c = [lp.NumVar(0.0, 1.0, "") for _ in range(m)]
    b = lp.NumVar(0.0, lp.infinity(), "")
    for F in subsets:
        lp.Add(sum(c[i] for i in F) <= b)
    lp.Add(sum(c) <= 1.0)
    lp.Maximize(sum(ys[i] * c[i] for i in range(m)) - b)
    if lp.Solve() != pywraplp.Solver.OPTIMAL or lp.Objective().Value() <= 1e-4:
        return None
    vals = [v.solution_value() for v in c]
    top = max(vals)
    if top <= 0:
        return None
    coef = [int(round(CUT_SCALE * v / top)) for v in vals]
    beta = max(sum(coef[i] for i in F) for F in subsets)  # exact, integer
    if sum(coef[i] * ys[i] for i in range(m)) <= beta * (1 + 1e-6):
        return None
    return tuple((js[i], coef[i]) for i in range(m) if coef[i]), beta


def lp_size(problem: ResponseProblem) -> tuple[int, int]:
    """The time-indexed model's number of start columns and of capacity-row coefficients
    (the LP here, the ILP of :func:`models.kresource.ilp.solve_response`)."""
    H, p, a = problem.horizon(), problem.duration, problem.release
    cols = [H - p[j] - a[j] + 1 for j in range(problem.n)]
    nnz = sum(p[j] * cols[j] * sum(1 for d in problem.demands[j] if d) for j in range(problem.n))
    return sum(cols), nnz


def lp_fits(problem: ResponseProblem, options: BoundOptions = BoundOptions()) -> bool:
    """Whether the LP is within ``options.max_columns`` and ``options.max_nonzeros``."""
    ncols, nnz = lp_size(problem)
    return ncols <= options.max_columns and nnz <= options.max_nonzeros


class _LP:
    """The time-indexed LP in GLOP with its rows also kept as arrays (for the
    Lagrangian certificate); building raises :class:`models.deadline.TimeUp` once
    ``deadline`` (if any) runs out."""

    def __init__(self, problem: ResponseProblem, cols: _Columns,
                 deadline: Deadline | None = None) -> None:
        from ortools.linear_solver import pywraplp

        self.s = pywraplp.Solver.CreateSolver("GLOP")
        s = self.s
        self.cols = cols
        self.x = [s.NumVar(0.0, 1.0, "") for _ in range(len(cols.job))]
        obj = s.Objective()
        for i, v in enumerate(self.x):
            obj.SetCoefficient(v, float(cols.cost[i]))
        obj.SetMinimization()
        for j in range(problem.n):
            ct = s.Constraint(1.0, 1.0)
            for i in range(cols.first[j], cols.first[j] + cols.H - cols.p[j] - cols.a[j] + 1):
                ct.SetCoefficient(self.x[i], 1.0)
        self.rows: list[tuple[Any, np.ndarray, np.ndarray, float]] = []
        dem, cap = problem.demands, problem.capacity
        for t in range(cols.H):
            if deadline is not None:
                deadline.check()
            for k in range(problem.K):
                terms = [(i, dem[j][k]) for j in range(problem.n) if dem[j][k]
                         for i in cols.running(j, t)]
                if sum(c for _, c in terms) > cap[k]:
                    self.add_row(terms, cap[k])

    def add_row(self, terms: list[tuple[int, int]], rhs: float) -> None:
        ct = self.s.Constraint(-self.s.infinity(), float(rhs))
        for i, c in terms:
            ct.SetCoefficient(self.x[i], float(c))
        self.rows.append((ct, np.array([i for i, _ in terms], dtype=np.int64),
                          np.array([c for _, c in terms], dtype=np.float64), float(rhs)))

    def certificate(self, n: int, solved: bool = True) -> tuple[float, np.ndarray]:
        """The Lagrangian bound of the current duals (clipped to ``u >= 0``) and each
        column's reduced-cost slack ``g[j,t]`` (module docstring). ``solved``: whether
        the last solve left duals (OPTIMAL or FEASIBLE); else every dual is taken as 0,
        which is what GLOP reports then, without asking it (it logs an error per row)."""
        rc = self.cols.cost.copy()
        ub = 0.0
        for ct, idx, coef, rhs in self.rows if solved else ():
            u = max(0.0, -ct.dual_value())
            if u > 0.0:
                np.add.at(rc, idx, u * coef)
                ub += u * rhs
        best = np.full(n, np.inf)
        np.minimum.at(best, self.cols.job, rc)
        return float(best.sum() - ub), rc - best[self.cols.job]

    def shares(self, n: int) -> np.ndarray:
        """``y[j,t]``: the share of job j running in time unit t."""
        x = np.array([v.solution_value() for v in self.x])
        y = np.zeros((n, self.cols.H + 1))
        np.add.at(y, (self.cols.job, self.cols.start), x)
        p = np.array(self.cols.p)
        # y[j,t] = sum of x[j,u] for u in (t - p_j, t]: cumulative sums per job
        cs = np.cumsum(y, axis=1)
        out = cs.copy()
        for j in range(n):
            out[j, p[j]:] -= cs[j, :-p[j]]
        return out[:, :self.cols.H]

    def mean_start(self, n: int) -> tuple[float, ...]:
        x = np.array([v.solution_value() for v in self.x])
        ms = np.zeros(n)
        np.add.at(ms, self.cols.job, x * self.cols.start)
        return tuple(float(v) for v in ms)


def response_bound(problem: ResponseProblem, *, time_limit: float | None = None,
                   options: BoundOptions = BoundOptions()) -> ResponseBound | None:
    """A certified lower bound on the optimum (module docstring), at least
    :func:`trivial_bound`. ``time_limit`` (seconds of wall clock) covers building,
    every LP solve and separation; None when not even the first LP was solved in it, or
    when the LP exceeds ``options.max_columns`` or ``options.max_nonzeros``."""
    from ortools.linear_solver import pywraplp

    t0 = time.perf_counter()

    def left() -> float:
        return math.inf if time_limit is None else time_limit - (time.perf_counter() - t0)

    if not lp_fits(problem, options):
        return None
    n = problem.n
    triv = trivial_bound(problem)
    try:
        cols = _Columns(problem)
        lp = _LP(problem, cols, Deadline(time_limit, start=t0))
    except TimeUp:
        return None
    if left() <= 0:
        return None
    dem = np.array(problem.demands, dtype=np.int64)
    cap = np.array(problem.capacity, dtype=np.int64)
    pool: list[tuple[tuple[tuple[int, int], ...], int]] = []
    added: set[tuple[int, int]] = set()  # (pool index, time unit) rows in the LP
    best, value, rounds, ncuts, ms = None, math.nan, 0, 0, ()
    lag, slack = -math.inf, np.zeros(0)
    prev = -math.inf
    while rounds < options.max_rounds and left() > 0:
        if time_limit is not None:
            lp.s.SetTimeLimit(max(1, int(1000 * left())))
        status = lp.s.Solve()
        rounds += 1
        cert, g = lp.certificate(n, status in (pywraplp.Solver.OPTIMAL,
                                               pywraplp.Solver.FEASIBLE))
        if math.isfinite(cert) and cert > lag:
            lag, slack = cert, g
            best = math.ceil(cert - MARGIN * max(1.0, abs(cert)))
        if status != pywraplp.Solver.OPTIMAL:
            break
        value, ms = lp.s.Objective().Value(), lp.mean_start(n)
        if not options.cuts or value - prev < options.min_gain or left() <= 0:
            break
        prev = value
        new = _add_cuts(lp, cols, pool, added, dem, cap, n, left)
        ncuts += new
        if not new:
            break
    if best is None:
        return None
    return ResponseBound(bound=max(best, triv), lp_value=value, rounds=rounds, cuts=ncuts,
                         mean_start=ms, seconds=time.perf_counter() - t0, lagrangian=lag,
                         job=cols.job, start=cols.start, slack=slack,
                         rows=tuple((idx, coef, rhs) for _, idx, coef, rhs in lp.rows))


def _add_cuts(lp: _LP, cols: _Columns, pool: list, added: set, dem: np.ndarray,
              cap: np.ndarray, n: int, left: Any) -> int:
    """Add violated packing cuts (from the pool first, then separated) to ``lp``;
    returns the number of rows added."""
    y = lp.shares(n)
    count = 0

    def add(q: int, t: int) -> None:
        nonlocal count
        cut, beta = pool[q]
        lp.add_row([(i, c) for j, c in cut for i in cols.running(j, t)], beta)
        added.add((q, t))
        count += 1

    fresh_at: set[int] = set()
    for q, (cut, beta) in enumerate(pool):
        js = [j for j, _ in cut]
        cs = np.array([c for _, c in cut], dtype=np.float64)
        lhs = cs @ y[js]
        for t in np.nonzero(lhs > beta * (1 + 1e-6) + 1e-9)[0]:
            if (q, int(t)) not in added:
                add(q, int(t))
                fresh_at.add(int(t))
    for t in range(cols.H):
        if left() <= 0:
            break
        if t in fresh_at:
            continue
        js = [int(j) for j in np.nonzero(y[:, t] > 1e-6)[0]]
        if len(js) < 2 or _fits(dem, cap, tuple(js)):
            continue
        js = sorted(js, key=lambda j: -y[j, t])[:MAX_SUPPORT]
        found = _separate([float(y[j, t]) for j in js], js, dem, cap)
        if found is None:
            continue
        pool.append(found)
        add(len(pool) - 1, t)
    return count


__all__ = ["BoundOptions", "ResponseBound", "response_bound", "trivial_bound", "lp_size",
           "lp_fits",
           "MAX_SUPPORT", "MARGIN"]
