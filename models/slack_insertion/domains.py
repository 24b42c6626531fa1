"""Start-time domains of the slack-constrained insertion problem and their dominance proofs.

Shared by the exact solvers of :mod:`models.slack_insertion` (``cpsat``, ``ilp``,
``brute``). All times are integer seconds.

Dominant start times (used by ``ilp`` and ``cpsat``)
-----------------------------------------------------
Some optimal schedule (lowest price, then fewest moved) starts every job in
``C = {b + (sum of the estimates of a set of jobs) : b in {now, te_i, running ends}}``,
capped at :func:`sim.problems.insertion.horizon`. Proof: every cost is non-decreasing in
the start time (``delay_weight >= 0``, the signed power is monotone). Take an optimal
schedule and move any job one second earlier while that stays feasible, never below
``now`` and never
moving a job that sits at its ``te`` (moving it would add a moved job). This never
raises the price or the moved count and terminates. At the end each job is blocked: it
starts at ``now``, at its ``te``, or at an instant where the load of the others drops,
i.e. the end of another job (a running end, or another placed job's start plus its
estimate). Following the chain of blocking jobs back, each start is a base point plus
the estimates of the jobs on the chain; the chain's starts strictly decrease (estimates
are >= 1 s), so no job appears twice on it, and every start is in ``C``. (Shifting never
raises the price, so the argument also holds for the tie set of
:data:`sim.problems.insertion.PRICE_TOL`.) The load only rises at starts, so checking
the capacity at the points of ``C`` suffices. ``brute``
(all integer times) confirms it in the differential tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule

__all__ = ["start_bounds", "tighten_domains", "dominant_times"]


def start_bounds(problem: InsertionProblem, horizon: int
                 ) -> tuple[dict[int, tuple[int, int]], tuple[int, int] | None]:
    """Start domain per waiting job and for the new job (seconds).

    Lower bound: earliest fit next to the running jobs alone (valid since other jobs only
    take capacity away). Upper bound: ``te + floor(s)`` capped at ``horizon``.
    """
    run = ins.profile_of(problem)
    dom: dict[int, tuple[int, int]] = {}
    for w in problem.waiting:
        lb = run.earliest_start(w.t, (w.n,), problem.now)
        ub = horizon if math.isinf(w.s) else min(horizon, w.te + math.floor(w.s))
        dom[w.id] = (lb, max(ub, w.te))
    new = None
    if problem.new is not None:
        lb = run.earliest_start(problem.new.t, (problem.new.n,), problem.now)
        new = (lb, max(horizon, lb))
    return dom, new



def tighten_domains(problem: InsertionProblem, dom: dict[int, tuple[int, int]],
             new_dom: tuple[int, int] | None, cur: InsertionSchedule
             ) -> tuple[dict[int, tuple[int, int]], tuple[int, int] | None]:
    """Shrink the start domains to schedules no dearer than ``cur`` (any feasible schedule:
    the current one, or a better incumbent), plus the tie tolerance.

    With ``w`` the signed power, every term of a schedule of price <= ``P0 = price(cur) +
    price_tolerance(price(cur))`` satisfies ``term <= P0 + sum of the other jobs' largest
    gains`` (gain = the most negative cost, moving to the domain's lower bound). Inverting
    ``w`` bounds each delay. The optimum is never dearer than ``cur``, so no optimal
    schedule (ties of :data:`sim.problems.insertion.PRICE_TOL` included) is cut off.
    Needs ``alpha_t > 0``; returns the domains unchanged otherwise. Each bound keeps
    ``te`` (and the current new start) inside and adds one second against rounding.
    """
    at = problem.alpha_t
    if at <= 0:
        return dom, new_dom
    now = problem.now
    p0 = ins.price(problem, cur)
    p0 += ins.price_tolerance(p0)
    wts = {w.id: ins.delay_weight(problem, w) for w in problem.waiting}
    gains = {w.id: wts[w.id] * abs(ins.signed_power(w.te - dom[w.id][0], at))
             for w in problem.waiting}
    room = p0 + math.fsum(gains.values())

    def inv(x: float) -> float:  # largest d with w(d) <= x
        return x ** (1.0 / at) if x >= 0 else -((-x) ** (1.0 / at))

    out = dict(dom)
    a = ins.new_weight(problem)
    if new_dom is not None and a > 0:
        ub = now + math.floor(inv(room / a) * (1 + 1e-9)) + 1
        new_dom = (new_dom[0], max(new_dom[0], cur.new_start, min(new_dom[1], ub)))
    for w in problem.waiting:
        c = wts[w.id]
        if c > 0:
            r = room - gains[w.id]
            d = inv(r / c)
            ub = w.te + math.floor(d + 1e-9 * (1 + abs(d))) + 1
            lo, hi = dom[w.id]
            out[w.id] = (lo, max(w.te, min(hi, ub)))
    return out, new_dom



def _merge_unique(parts: list[Any]) -> Any:
    """Sorted distinct values of the sorted integer arrays ``parts`` (a stable sort of
    sorted runs is a merge; ``numpy.unique`` hashes, which is far slower here)."""
    import numpy as np

    m = np.sort(np.concatenate(parts), kind="stable")
    if len(m) < 2:
        return m
    keep = np.empty(len(m), dtype=bool)
    keep[0] = True
    np.not_equal(m[1:], m[:-1], out=keep[1:])
    return m[keep]


def dominant_times(problem: InsertionProblem, horizon: int | None = None,
                   max_points: int = 20000,
                   stop: Callable[[], bool] | None = None) -> list[int]:
    """Sorted candidate start times ``C`` (see the module docstring), seconds.

    ``C = {b + s <= horizon : b in base, s a subset sum of the estimates}`` with ``base =
    {now} | {te_i} | {running ends}`` (each job's estimate used at most once in a sum).
    Raises ValueError when ``C`` has more than ``max_points`` points, or when ``stop``
    (asked after every estimate and base point) returns True.
    """
    import numpy as np

    T = ins.horizon(problem) if horizon is None else horizon
    now = problem.now
    durations = [w.t for w in problem.waiting]
    if problem.new is not None:
        durations.append(problem.new.t)
    base = sorted(c for c in ({now} | {w.te for w in problem.waiting}
                              | {r.end for r in problem.running}) if c <= T)

    def too_many(n: int) -> ValueError:
        return ValueError(
            f"more than {max_points} candidate start times ({n}+ over a horizon of "
            f"{T - now} s); the time-indexed model is for small instances (max_points)")

    def check_stop() -> None:
        if stop is not None and stop():
            raise ValueError("dominant_times: stopped (time limit)")

    sums = np.zeros(1, dtype=np.int64)  # sorted, distinct
    cap = T - now
    for d in sorted(durations):
        shifted = sums[: np.searchsorted(sums, cap - d, side="right")] + d
        if len(shifted):
            sums = _merge_unique([sums, shifted])
        if len(sums) > max_points:
            raise too_many(len(sums))
        check_stop()
    pts = np.zeros(0, dtype=np.int64)
    chunk: list[np.ndarray] = []
    size = 0
    for b in base:
        part = b + sums[: np.searchsorted(sums, T - b, side="right")]
        chunk.append(part)
        size += len(part)
        if size > 4 * max_points:  # merge now and then, so memory stays bounded
            pts = _merge_unique([pts] + chunk)
            chunk, size = [], 0
            if len(pts) > max_points:
                raise too_many(len(pts))
            check_stop()
    pts = _merge_unique([pts] + chunk)
    if len(pts) > max_points:
        raise too_many(len(pts))
    return [int(x) for x in pts]
