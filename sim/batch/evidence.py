"""The reservation guarantees recomputed from a schedule and its job data alone.

A policy's ``promises()`` are its own account of what it guaranteed; the validator checks
them, but a policy that promises nothing (or lies) would pass on them alone. The checks
here use only the workload (submit, requested time, demand, capacity) and the start and
end of every job, and share no code with the policies or the planner. They hold when jobs
are killed at their request, so a running job never outlives ``start + requested`` (its
estimated end). Times are integer seconds.

``head-reservation`` (EASY, Lifka 1995)
    The queue is in workload (submit) order. Job ``h`` is the head of the queue after the
    decision at ``t_h = max(submit_h, max of the starts of the jobs before it)``: every
    earlier job has started and ``h`` has not (when ``start_h <= t_h`` it started then or
    was backfilled, and had no reservation). Its reservation is the shadow time at
    ``t_h``: the earliest ``s >= t_h`` at which its demand fits beside the jobs running
    after the queue-order starts of ``t_h`` (started before ``t_h`` or at ``t_h`` ahead of
    ``h``, and not ended by ``t_h``), each holding its resources until its estimated end;
    free capacity only grows after ``t_h`` in that profile, so ``h`` fits from ``s`` on.
    Backfilled jobs may not delay it, so ``start_h <= s``. At an instant where a job of
    zero length starts, the simulator decides a second time; jobs backfilled in the first
    decision are then counted too (a later shadow, never a false violation).
``arrival-reservation`` (conservative)
    At its arrival ``t = submit_i`` job ``i`` is placed at its earliest fit beside every
    earlier job that has not ended: a running job holds its resources until its estimated
    end, a waiting job ``j`` at most until ``B_j + requested_j``, ``B_j`` the bound of its
    own reservation (reservations only move earlier). ``B_i`` is the earliest time at
    which ``i`` fits when each of those jobs holds its resources from ``t`` until that
    end: the true profile lies below this one, so the reservation is at most ``B_i`` and
    ``start_i <= B_i``. A weaker bound than the policy's promise, but one the schedule
    proves by itself (a job starved behind later arrivals breaks it).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from collections.abc import Mapping

import numpy as np

from instances.job import Workload


def head_reservation_error(workload: Workload, start: np.ndarray, end: np.ndarray,
                           label: str) -> str | None:
    """The first job that started after its recomputed EASY head reservation, or None.

    Parameters
    ----------
    workload : Workload
    start, end : numpy.ndarray of int64
        Start and end time (s) of each job, aligned with ``workload.jobs``.
    label : str
        The schedule's label (its policy's display name), the messages' first word.
    """
    cols = workload.columns()
    n = len(cols)
    if not n:
        return None
    submit, requested = cols.submit, cols.requested
    t_head = submit.copy()
    if n > 1:
        t_head[1:] = np.maximum(submit[1:], np.maximum.accumulate(start)[:-1])
    heads = np.flatnonzero(start > t_head)
    if not heads.size:
        return None
    demand = [tuple(int(v) for v in row) for row in cols.demand]
    cap = workload.capacity
    est = start + requested
    second = set(start[end == start].tolist())  # instants with a second decision
    order = np.argsort(start, kind="stable")
    s_sorted = start[order]
    running: list[tuple[int, int]] = []  # (estimated end, job) of jobs started before t
    ends: list[tuple[int, int, int]] = []  # heap of (end, estimated end, job)
    used = [0] * len(cap)
    p = 0
    for h in heads.tolist():
        t = int(t_head[h])
        while p < n and s_sorted[p] < t:
            j = int(order[p])
            p += 1
            if end[j] > t:
                insort(running, (int(est[j]), j))
                heapq.heappush(ends, (int(end[j]), int(est[j]), j))
                used = [u + d for u, d in zip(used, demand[j], strict=True)]
        while ends and ends[0][0] <= t:
            _, e, j = heapq.heappop(ends)
            del running[bisect_left(running, (e, j))]
            used = [u - d for u, d in zip(used, demand[j], strict=True)]
        q = p
        extra = []
        while q < n and s_sorted[q] == t:
            j = int(order[q])
            q += 1
            if end[j] > t and (j < h or t in second):
                extra.append((int(est[j]), j))
        shadow = _earliest_fit(t, running, sorted(extra), used, demand, demand[h], cap)
        if start[h] > shadow:
            return (f"{label}: job {cols.id[h]} starts at {start[h]}, later than its head "
                    f"reservation {shadow} recomputed from the schedule (head of the queue "
                    f"at t={t}) (head-reservation)")
    return None


def _earliest_fit(t: int, running: list[tuple[int, int]], extra: list[tuple[int, int]],
                  used: list[int], demand: list[tuple[int, ...]], need: tuple[int, ...],
                  cap: tuple[int, ...]) -> int:
    """Earliest time >= t (s) at which ``need`` fits while the jobs of ``running`` and
    ``extra`` (sorted ``(release time, job)``) hold their demand until their release."""
    held = list(used)
    for _, j in extra:
        held = [u + d for u, d in zip(held, demand[j], strict=True)]
    if all(u + x <= c for u, x, c in zip(held, need, cap, strict=True)):
        return t
    for e, j in heapq.merge(running, extra):
        held = [u - d for u, d in zip(held, demand[j], strict=True)]
        if all(u + x <= c for u, x, c in zip(held, need, cap, strict=True)):
            return max(t, e)
    return t  # unreachable: every demand fits an empty machine


def arrival_reservation_error(workload: Workload, start: np.ndarray, end: np.ndarray,
                              label: str) -> str | None:
    """The first job that started after the latest reservation conservative backfilling
    can have given it at its arrival (recomputed from the schedule), or None.

    Parameters
    ----------
    workload : Workload
    start, end : numpy.ndarray of int64
        Start and end time (s) of each job, aligned with ``workload.jobs``.
    label : str
        The schedule's label (its policy's display name), the messages' first word.
    """
    cols = workload.columns()
    n = len(cols)
    submit, requested = cols.submit, cols.requested
    demand = [tuple(int(v) for v in row) for row in cols.demand]
    cap = workload.capacity
    by_start = np.argsort(start, kind="stable")
    # a job of zero length starting at t is still waiting when the arrivals of t come
    by_end = np.lexsort((end == start, end))
    held: list[tuple[int, int]] = []  # (latest release, job), sorted
    release: dict[int, int] = {}
    ps = pe = 0
    for i in range(n):
        t = int(submit[i])
        while ps < n and start[by_start[ps]] < t:
            j = int(by_start[ps])
            ps += 1
            if j in release:
                _drop(held, release, j)
                _hold(held, release, j, int(start[j] + requested[j]))
        while pe < n and (end[by_end[pe]] < t
                          or (end[by_end[pe]] == t and start[by_end[pe]] < t)):
            j = int(by_end[pe])
            pe += 1
            if j in release:
                _drop(held, release, j)
        bound = _fit_from_top(t, held, demand, demand[i], cap)
        if start[i] > bound:
            return (f"{label}: job {cols.id[i]} starts at {start[i]}, after {bound}, the "
                    f"latest reservation it can have got at its arrival (t={t}), recomputed "
                    f"from the schedule (arrival-reservation)")
        if start[i] >= t:
            _hold(held, release, i, bound + int(requested[i]))
    return None


def _hold(held: list[tuple[int, int]], release: dict[int, int], j: int, until: int) -> None:
    insort(held, (until, j))
    release[j] = until


def _drop(held: list[tuple[int, int]], release: dict[int, int], j: int) -> None:
    del held[bisect_left(held, (release.pop(j), j))]


def _fit_from_top(t: int, held: list[tuple[int, int]], demand: list[tuple[int, ...]],
                  need: tuple[int, ...], cap: tuple[int, ...]) -> int:
    """Earliest time >= t (s) at which ``need`` fits when every job of ``held`` (sorted
    ``(release, job)``) holds its demand from t until its release: walk down from the
    latest release while the jobs still holding fit beside ``need``."""
    room = [c - x for c, x in zip(cap, need, strict=True)]
    if len(cap) == 1:  # the common case, on plain integers
        r, acc0 = room[0], 0
        for e, j in reversed(held):
            acc0 += demand[j][0]
            if acc0 > r:
                return max(t, e)
        return t
    acc = [0] * len(cap)
    for e, j in reversed(held):
        acc = [a + d for a, d in zip(acc, demand[j], strict=True)]
        if any(a > r for a, r in zip(acc, room, strict=True)):
            return max(t, e)
    return t


def slack_bound_error(workload: Workload, start: np.ndarray, end: np.ndarray, label: str,
                      max_slack: float, unbounded: frozenset[int] = frozenset(),
                      promises: Mapping[int, int] | None = None,
                      breakpoint: bool = False) -> str | None:
    """The first job that started later than the slack bound recomputed from the schedule
    allows, or None.

    Parameters
    ----------
    workload : Workload
    start, end : numpy.ndarray of int64
        Start and end time (s) of each job, aligned with ``workload.jobs``.
    label : str
        The schedule's label (its policy's display name), the messages' first word.
    max_slack : float
        The largest finite slack a job can get (s); the slack-based scheduler's is
        ``SF * AWT``.
    unbounded : frozenset of int
        Ids of the jobs whose slack is infinite (no bound).
    promises : mapping, optional
        Job id -> the latest start the policy promised it (s); a waiting job is never
        scheduled later than its promise (nor than its recomputed bound).
    breakpoint : bool
        The policy places a new job at ``now`` or a breakpoint of the current schedule
        (the papers' slot search): its first start is at most ``G``, not the horizon.

    Notes
    -----
    At its arrival ``t = submit_i`` job ``i`` is inserted into an insertion problem whose
    horizon (``G`` plus the estimates of the waiting jobs and of ``i``, ``G`` the latest
    end in the current schedule) bounds its first scheduled start, whatever the inserter
    (the papers' slot search places it at a breakpoint, at most ``G``; an exact model
    within the horizon). Every earlier job still present holds until: its estimated end
    ``start + requested`` when it started before ``t``; ``min(B_j, P_j) + requested_j``
    when it is still waiting, ``B_j`` its own bound and ``P_j`` its promise (a waiting job
    is never scheduled later than its first start plus its slack, which the promise
    states). ``B_i`` is that horizon plus ``max_slack``, and ``start_i <= B_i``. Infinite
    once a job with infinite slack and no promise waits. A weaker bound than the policy's
    promise, but one that holds whatever the policy promised of job ``i`` itself (one
    that promises a starved job nothing, or the end of time, is still caught).
    """
    cols = workload.columns()
    n = len(cols)
    submit, requested = cols.submit, cols.requested
    if n > 1 and np.any(np.diff(submit) < 0):
        return f"{label}: jobs are not in submit order: the slack bound cannot be recomputed"
    free = np.isin(cols.id, np.fromiter(unbounded, np.int64, len(unbounded)))
    promised = dict(promises or {})
    by_start = np.argsort(start, kind="stable")
    heap: list[tuple[float, int, int]] = []  # (-release, job, phase): 0 waiting, 1 started
    bound = np.full(n, math.inf)
    waiting_sum, ps = 0, 0
    for i in range(n):
        t = int(submit[i])
        while ps < n and start[by_start[ps]] < t:
            j = int(by_start[ps])
            ps += 1
            waiting_sum -= int(requested[j])
            heapq.heappush(heap, (-float(start[j] + requested[j]), j, 1))
        while heap and not _present(heap[0], start, end, t):
            heapq.heappop(heap)
        first = max(float(t), -heap[0][0] if heap else float(t))
        if not breakpoint:
            first += waiting_sum + int(requested[i])
        bound[i] = math.inf if free[i] else first + float(max_slack)
        if start[i] > bound[i]:
            return (f"{label}: job {cols.id[i]} starts at {start[i]}, later than "
                    f"{math.floor(bound[i])}, the latest start its slack allows: first "
                    f"placed by {first:.0f} (the {'end' if breakpoint else 'horizon'} of "
                    f"its insertion at its arrival t={t}, recomputed from the schedule) "
                    f"plus the largest slack "
                    f"{float(max_slack):g} s (slack-bound)")
        waiting_sum += int(requested[i])
        held = min(bound[i], float(promised.get(int(cols.id[i]), math.inf)))
        heapq.heappush(heap, (-(held + float(requested[i])), i, 0))
    return None


def _present(entry: tuple[float, int, int], start: np.ndarray, end: np.ndarray,
             t: int) -> bool:
    """Whether a heap entry of :func:`slack_bound_error` still holds at ``t``: a waiting
    job's until it starts, a started one's until it ended before ``t``."""
    _, j, phase = entry
    if phase == 0:
        return bool(start[j] >= t)
    return bool(end[j] >= t)


def reservation_error(workload: Workload, start: np.ndarray, end: np.ndarray, label: str,
                      threshold: float, promises: Mapping[int, int] | None = None
                      ) -> str | None:
    """The first job that started later than the latest reservation selective backfilling
    can have given it when its expansion factor reached ``threshold``, recomputed from
    the schedule, or None.

    Parameters
    ----------
    workload : Workload
    start, end : numpy.ndarray of int64
        Start and end time (s) of each job, aligned with ``workload.jobs``.
    label : str
        The schedule's label (its policy's display name), the messages' first word.
    threshold : float
        The expansion factor (>= 1) at which a waiting job gets its reservation.
    promises : mapping, optional
        Job id -> the first reservation the policy says it gave (s); a reserved job holds
        its resources no later than from it (nor than from its recomputed bound).

    Notes
    -----
    Job ``i``'s expansion factor ``(t - submit + requested) / requested`` reaches the
    threshold at ``d_i = submit_i + ceil((threshold - 1) requested_i)``; when it has not
    started before ``d_i`` it gets its reservation in the decision at ``d_i`` (before
    that decision starts anything), at the earliest time it fits beside the jobs running
    (until their estimated ends) and the reservations given before it (at ``d_j < d_i``,
    or at ``d_i`` to a job earlier in the queue), each at most ``min(B_j, P_j)``, its own
    bound and its promise (reservations never move later). ``B_i`` is the earliest time
    at which ``i`` fits when each of those jobs holds its resources from ``d_i`` until
    ``min(B_j, P_j) + requested_j`` (its estimated end when it started), computed as for
    ``arrival-reservation``; ``start_i <= B_i`` whatever the policy promised ``i``.
    """
    cols = workload.columns()
    due = np.empty(len(cols), np.float64)
    for i in range(len(cols)):
        try:
            due[i] = int(cols.submit[i]) + math.ceil((float(threshold) - 1.0)
                                                     * int(cols.requested[i]))
        except OverflowError:
            due[i] = math.inf
    return _reserved_error(workload, start, end, label, due, promises,
                           f"its expansion factor reached {float(threshold):g}")


SHORT = 3600
"""s: a job whose requested time is at most this is short (Srinivasan et al. 2002)."""
NARROW = 8
"""Processors: a job asking at most this many (resource 0) is narrow."""


def adaptive_due(workload: Workload, start: np.ndarray, threshold: float, *,
                 inclusive: bool = False, scale: float = 1.0) -> np.ndarray:
    """The instant (s) at which each job's expansion factor reaches its category's
    Selective-Adaptive threshold while it waits, recomputed from the schedule; ``inf``
    for a job that started first.

    The threshold of job ``i`` at time ``t`` is the mean expansion factor at start
    ``(start_j - submit_j + requested_j) / requested_j`` of the jobs ``j`` of its
    category (short: requested at most :data:`SHORT`; narrow: at most :data:`NARROW`
    processors) started before ``t`` (``inclusive``: at or before ``t``), times
    ``scale``; ``threshold`` until one has started. The due instant is the first
    integer ``t >= submit_i`` with ``t >= submit_i + ceil((thr(t) - 1) requested_i)``.
    """
    cols = workload.columns()
    n = len(cols)
    submit, requested = cols.submit.astype(np.int64), cols.requested.astype(np.int64)
    cat = 2 * (requested > SHORT) + (np.asarray(cols.demand)[:, 0] > NARROW)
    xf = (start - submit + requested) / requested
    due = np.full(n, math.inf)
    for c in range(4):
        mine = np.flatnonzero(cat == c)
        order = mine[np.argsort(start[mine], kind="stable")]
        instants = np.unique(start[order])
        sums = np.cumsum(xf[order])
        ends = np.searchsorted(start[order], instants, side="right")  # starts <= U_k
        means = (sums[ends - 1] / ends) * scale
        for i in mine.tolist():
            due[i] = _first_due(int(submit[i]), int(requested[i]), int(start[i]),
                                instants, means, float(threshold) * scale, inclusive)
    return due


def _first_due(s: int, r: int, started: int, instants: np.ndarray, means: np.ndarray,
               first: float, inclusive: bool) -> float:
    """:func:`adaptive_due` of one job: walk the threshold's steps from its submit to
    its start (the threshold is ``first`` up to the first instant, ``means[k]`` after
    instant ``k``: from ``instants[k] + 1`` on, or from ``instants[k]`` when
    ``inclusive``)."""
    shift = 0 if inclusive else 1
    k = int(np.searchsorted(instants, s - shift, side="right")) - 1  # step holding s
    while True:
        lo = s if k < 0 else max(s, int(instants[k]) + shift)
        hi = int(instants[k + 1]) + shift - 1 if k + 1 < len(instants) else math.inf
        if lo > started:
            return math.inf
        thr = first if k < 0 else float(means[k])
        try:
            t = max(lo, s + math.ceil((thr - 1.0) * r))
        except OverflowError:
            return math.inf
        if t <= hi:
            return float(t) if t <= started else math.inf
        k += 1


def adaptive_reservation_error(workload: Workload, start: np.ndarray, end: np.ndarray,
                               label: str, threshold: float,
                               promises: Mapping[int, int] | None = None) -> str | None:
    """:func:`reservation_error` for Selective-Adaptive (the threshold of each category
    its running mean, :func:`adaptive_due`), or None.

    The schedule fixes the running mean up to two things it does not record: whether
    jobs started at an instant count at that instant (the simulator decides twice at an
    instant where a job of zero length ends) and the order of a floating sum (the due
    instant can move by a second). A job is reported only when it breaks its bound under
    each reading (before or at, the mean scaled by ``1 -+ 1e-9``): never a false
    violation.
    """
    first = None
    for inclusive in (False, True):
        for scale in (1.0 - 1e-9, 1.0 + 1e-9):
            due = adaptive_due(workload, start, threshold, inclusive=inclusive, scale=scale)
            why = _reserved_error(workload, start, end, label, due, promises,
                                  "its expansion factor reached its category's running "
                                  "mean")
            if why is None:
                return None
            first = first or why
    return first


def _reserved_error(workload: Workload, start: np.ndarray, end: np.ndarray, label: str,
                    due: np.ndarray, promises: Mapping[int, int] | None, reached: str
                    ) -> str | None:
    """The check of :func:`reservation_error` with each job's due instant given."""
    cols = workload.columns()
    n = len(cols)
    requested = cols.requested
    demand = [tuple(int(v) for v in row) for row in cols.demand]
    cap = workload.capacity
    promised = dict(promises or {})
    granted = [i for i in np.lexsort((np.arange(n), due)).tolist()
               if math.isfinite(due[i]) and start[i] >= due[i]]
    by_start = np.argsort(start, kind="stable")
    by_end = np.lexsort((end == start, end))
    held: list[tuple[int, int]] = []  # (latest release, job), sorted
    release: dict[int, int] = {}
    ps = pe = 0
    for i in granted:
        d = int(due[i])
        while ps < n and start[by_start[ps]] < d:
            j = int(by_start[ps])
            ps += 1
            if j in release:
                _drop(held, release, j)
            _hold(held, release, j, int(start[j] + requested[j]))
        while pe < n and (end[by_end[pe]] < d or (end[by_end[pe]] == d and start[by_end[pe]] < d)):
            j = int(by_end[pe])
            pe += 1
            if j in release:
                _drop(held, release, j)
        bound = d if start[i] == d else _fit_from_top(d, held, demand, demand[i], cap)
        if start[i] > bound:
            return (f"{label}: job {cols.id[i]} starts at {start[i]}, after {bound}, the "
                    f"latest reservation it can have got when {reached} (t={d}), "
                    f"recomputed from the schedule (reservation)")
        _hold(held, release, i, min(bound, promised.get(int(cols.id[i]), bound))
              + int(requested[i]))
    return None
