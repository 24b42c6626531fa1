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

Cardinality cuts. At a capacity-row time ``u`` at most ``k(S)`` jobs of a set ``S`` run
together, ``k(S)`` the largest number of them whose processors fit in ``f(u)`` (the
smallest first), so ``sum_{j in S} y[j,u] <= k(S)`` holds for every schedule, ``y[j,u] =
sum_{tau_k in (u - t_j, u]} x[j,k]``. The plain LP lets big jobs share a time in
fractions (two jobs of 60% of the free processors at 0.83 each); these rows cut such
points off. They are separated after each LP solve, at each capacity row, from the LP's
shares: the jobs by decreasing share, the prefix of most violation. They are valid rows
of every schedule, so the certificate below holds with them as it does with the capacity
rows (same form: a coefficient on a range of each job's columns).

Reduced-cost fixing. With ``L`` the Lagrangian value and ``g[j,k] = (c + u A)[j,k] -
min_k' (c + u A)[j,k'] >= 0``, every schedule costs at least ``L + sum_j g[j,k_j]``, so a
schedule whose price is within the tie tolerance of a price ``P`` never starts job j at
``tau_k`` with ``L + g[j,k] > P + tol`` (:meth:`InsertionBound.forbidden`).
"""

from __future__ import annotations

import math
import time
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from models.slack_insertion.domains import dominant_times, incumbent_domains
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule

__all__ = ["BoundOptions", "InsertionBound", "insertion_bound", "MARGIN", "CUT_VIOLATION"]

MARGIN = 1e-9
"""Relative margin (of the sum of the magnitudes in the Lagrangian sum) taken off the
bound against float summation error."""
CUT_VIOLATION = 1e-3
"""A cardinality cut is added when the LP's shares exceed its right-hand side by more."""


@dataclass(frozen=True)
class BoundOptions:
    """Options of :func:`insertion_bound`.

    Parameters
    ----------
    max_points : int
        No bound (None) with more dominant start times than this.
    max_columns : int
        No bound (None) with more candidate (job, start) columns than this (LP size).
    cuts : bool
        Separate cardinality cuts (module docstring) after each LP solve and solve again.
    max_rounds : int
        At most this many LP solves.
    min_gain, patience : float, int
        Stop adding cuts when ``patience`` rounds in a row raise the LP value by less
        than ``min_gain`` of ``max(1, |value|)`` each.
    """

    max_points: int = 200_000
    max_columns: int = 400_000
    cuts: bool = True
    max_rounds: int = 30
    min_gain: float = 1e-4
    patience: int = 3


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
    rounds, cuts : int
        LP solves and cardinality cuts added.
    lagrangian, scale : float
        The Lagrangian value behind ``bound``, and the largest sum of its terms'
        magnitudes over the certificates.
    job_ids : tuple of int
        The jobs of the columns (the new job last, when there is one).
    job, start, floor : numpy.ndarray
        Per column: the job's index in ``job_ids``, the start time (seconds), and the
        least price of a schedule that uses it, ``L + g``, the largest over the
        certificates of every LP solve (module docstring), before margins.
    """

    bound: float
    lp_value: float
    columns: int
    rows: int
    seconds: float
    rounds: int = 0
    cuts: int = 0
    lagrangian: float = -math.inf
    scale: float = 0.0
    job_ids: tuple[int, ...] = ()
    job: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    start: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    floor: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    def forbidden(self, price: float) -> dict[int, frozenset[int]]:
        """Start times (seconds) per job id that no schedule within the tie tolerance of
        ``price`` uses: ``L + g[j,k] > price + tol`` (module docstring), ``tol`` the tie
        width at the larger of ``|price|`` and ``|L|`` plus the certificate's margin."""
        if not len(self.floor) or not math.isfinite(self.lagrangian):
            return {}
        tol = (2 * ins.PRICE_TOL * max(1.0, abs(price), abs(self.lagrangian))
               + 2 * MARGIN * max(1.0, self.scale))
        out = np.flatnonzero(self.floor > price + tol)
        found: dict[int, set[int]] = {}
        for c in out:
            found.setdefault(self.job_ids[int(self.job[c])], set()).add(int(self.start[c]))
        return {j: frozenset(ts) for j, ts in found.items()}


class _Stopped(Exception):
    """The time limit ran out while building."""


def _model(problem: InsertionProblem, incumbent: InsertionSchedule, options: BoundOptions,
           expired) -> tuple[list[tuple[int, int, int]], list[list[int]], list[list[float]],
                             list[int], dict[int, int]] | None:
    """Jobs ``(id, n, t)``, each job's candidate starts and costs, the capacity-row times
    and the free processors at each (module docstring); None when too large."""
    now = problem.now
    dom, new_dom, cap_t = incumbent_domains(problem, incumbent)
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


class _LP:
    """The LP in GLOP (cumulative variables ``z``) with every capacity and cut row also
    kept as entries ``(row, job, columns [lo, hi), coefficient)`` for the certificate."""

    def __init__(self, jobs: list[tuple[int, int, int]], starts: list[list[int]],
                 costs: list[list[float]]) -> None:
        from ortools.linear_solver import pywraplp

        self.jobs, self.starts = jobs, starts
        self.first = np.cumsum([0] + [len(ts) for ts in starts])
        self.cost = np.array([c for cs in costs for c in cs], dtype=np.float64)
        self.job_of = np.repeat(np.arange(len(jobs)), np.diff(self.first))
        s = self.s = pywraplp.Solver.CreateSolver("GLOP")
        self.z = [s.NumVar(0.0, 1.0, "") for _ in range(len(self.cost))]
        obj = s.Objective()
        for j in range(len(jobs)):
            a, b = int(self.first[j]), int(self.first[j + 1])
            self.z[b - 1].SetBounds(1.0, 1.0)
            for i in range(a, b):  # c_k x_k = c_k (z_k - z_{k-1})
                nxt = self.cost[i + 1] if i + 1 < b else 0.0
                obj.SetCoefficient(self.z[i], float(self.cost[i] - nxt))
                if i > a:
                    ct = s.Constraint(-s.infinity(), 0.0)
                    ct.SetCoefficient(self.z[i - 1], 1.0)
                    ct.SetCoefficient(self.z[i], -1.0)
        obj.SetMinimization()
        self.cts: list = []
        self.rhs: list[float] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.coef: list[float] = []
        self.row_of: list[int] = []
        self.ent_job: list[int] = []

    def span(self, j: int, u: int) -> tuple[int, int]:
        """Columns ``[lo, hi)`` of job j whose run covers time ``u``."""
        ts, t = self.starts[j], self.jobs[j][2]
        base = int(self.first[j])
        return base + bisect_right(ts, u - t), base + bisect_right(ts, u)

    def add_row(self, u: int, terms: list[tuple[int, float]], rhs: float) -> None:
        """``sum_j c_j y[j,u] <= rhs`` over ``terms`` ``(job index, c_j)``."""
        s = self.s
        r = len(self.cts)
        ct = s.Constraint(-s.infinity(), float(rhs))
        for j, c in terms:
            lo, hi = self.span(j, u)
            if hi <= lo:
                continue
            ct.SetCoefficient(self.z[hi - 1], float(c))
            if lo > int(self.first[j]):
                ct.SetCoefficient(self.z[lo - 1], -float(c))
            self.lo.append(lo)
            self.hi.append(hi)
            self.coef.append(float(c))
            self.row_of.append(r)
            self.ent_job.append(j)
        self.cts.append(ct)
        self.rhs.append(float(rhs))

    def duals(self, solved: bool) -> np.ndarray:
        """The rows' duals of the last solve as multipliers ``u >= 0`` (clipped at 0; all
        0 when the last solve has no duals: not ``solved``)."""
        return (np.array([max(0.0, -ct.dual_value()) for ct in self.cts]) if solved
                else np.zeros(len(self.cts)))

    def certificate(self, solved: bool) -> tuple[float, float, np.ndarray]:
        """The Lagrangian value of :meth:`duals` (valid for any ``u >= 0``: module
        docstring), the sum of its terms' magnitudes, and each column's reduced-cost
        slack ``g``."""
        u = self.duals(solved)
        return _lagrangian(self.cost, self.job_of, len(self.jobs), u, np.array(self.rhs),
                           np.array(self.lo, dtype=np.int64),
                           np.array(self.hi, dtype=np.int64), np.array(self.coef),
                           np.array(self.row_of, dtype=np.int64))

    def shares(self) -> np.ndarray:
        """``y`` of every row entry in the current LP solution."""
        zv = np.array([0.0] + [v.solution_value() for v in self.z])
        lo = np.array(self.lo, dtype=np.int64)
        hi = np.array(self.hi, dtype=np.int64)
        first = self.first[np.array(self.ent_job, dtype=np.int64)]
        # z[lo - 1] is 0 before the job's first column
        return zv[hi] - np.where(lo > first, zv[lo], 0.0)


def _cardinality_cuts(lp: _LP, rows: list[int], free: dict[int, int], ncap: int,
                      seen: set) -> int:
    """Add the most violated cardinality cut (module docstring) at each of the first
    ``ncap`` rows (the capacity rows, at times ``rows``); returns how many were added."""
    y = lp.shares()
    row_of = np.array(lp.row_of, dtype=np.int64)
    job = np.array(lp.ent_job, dtype=np.int64)
    sizes = np.array([n for _, n, _ in lp.jobs], dtype=np.int64)
    bounds = np.searchsorted(row_of, np.arange(ncap + 1))
    added = 0
    for r, u in enumerate(rows):
        a, b = int(bounds[r]), int(bounds[r + 1])
        ys, js = y[a:b], job[a:b]
        if ys.sum() <= 1.0 + CUT_VIOLATION:
            continue
        order = np.argsort(-ys, kind="stable")
        order = order[ys[order] > 1e-9]
        pref = np.cumsum(ys[order])
        fit = [int(np.searchsorted(np.cumsum(np.sort(sizes[js[order[:m]]])), free[u],
                                   side="right")) for m in range(1, len(order) + 1)]
        viol = pref - np.array(fit)
        m = int(np.argmax(viol))
        if viol[m] <= CUT_VIOLATION:
            continue
        members = tuple(sorted(int(j) for j in js[order[:m + 1]]))
        if (u, members) in seen:
            continue
        seen.add((u, members))
        lp.add_row(u, [(j, 1.0) for j in members], fit[m])
        added += 1
    return added


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
    lp = _LP(jobs, starts, costs)
    for u in rows:
        lp.add_row(u, [(j, n) for j, (_, n, _) in enumerate(jobs)], free[u])
        if left() <= 0:
            return None
    ncap, seen = len(rows), set()
    lag, scale, scale_max = -math.inf, 0.0, 0.0
    floor = np.full(len(lp.cost), -np.inf)
    value, rounds, prev, idle = math.nan, 0, -math.inf, 0
    while rounds < options.max_rounds and left() > 0:
        lp.s.SetTimeLimit(max(1, int(1000 * min(left(), 1e6))))
        status = lp.s.Solve()
        rounds += 1
        cert = lp.certificate(status in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE))
        if cert[0] > lag:
            lag, scale = cert[0], cert[1]
        floor = np.maximum(floor, cert[0] + cert[2])
        scale_max = max(scale_max, cert[1])
        if status != pywraplp.Solver.OPTIMAL:
            break
        value = lp.s.Objective().Value()
        idle = idle + 1 if value - prev <= options.min_gain * max(1.0, abs(value)) else 0
        if not options.cuts or left() <= 0 or idle >= options.patience:
            break
        prev = max(prev, value)
        if not _cardinality_cuts(lp, rows, free, ncap, seen):
            break
    return InsertionBound(
        bound=min(lag - MARGIN * max(1.0, scale), cap), lp_value=value,
        columns=len(lp.cost), rows=ncap, seconds=time.perf_counter() - t0, rounds=rounds,
        cuts=len(lp.cts) - ncap, lagrangian=lag, scale=scale_max,
        job_ids=tuple(jid for jid, _, _ in jobs), job=lp.job_of,
        start=np.array([t for ts in starts for t in ts], dtype=np.int64), floor=floor)


def _lagrangian(cost: np.ndarray, job_of: np.ndarray, n: int, u: np.ndarray,
                rhs: np.ndarray, lo: np.ndarray, hi: np.ndarray, coef: np.ndarray,
                row_of: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``-u b + sum_j min_k (c + u A)[j,k]`` (module docstring), the sum of the
    magnitudes of its terms and the reduced-cost slack ``g`` of every column; ``A``'s
    row r has ``coef`` on the columns ``[lo, hi)`` of its entries (``row_of == r``)."""
    add = np.zeros(len(cost) + 1)
    w = u[row_of] * coef if len(row_of) else np.zeros(0)
    np.add.at(add, lo, w)
    np.add.at(add, hi, -w)
    rc = cost + np.cumsum(add)[:-1]
    best = np.full(n, np.inf)
    np.minimum.at(best, job_of, rc)
    ub = float(u @ rhs) if len(u) else 0.0
    return (float(best.sum() - ub), float(np.abs(best).sum() + abs(ub)),
            rc - best[job_of])
