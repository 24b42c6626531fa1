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
from bisect import bisect_left, insort

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
