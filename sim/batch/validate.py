"""Independent validator: re-checks any schedule the simulator produced.

It recomputes everything from the workload and the start/end arrays alone, sharing no
code with the simulator or the policies:

- every job started, at or after its submit time;
- run lengths: ``end - start`` equals ``min(runtime, requested)`` when jobs are killed at
  their request (and ``killed`` is set exactly when ``runtime > requested``), else
  ``runtime``;
- capacity is never exceeded in any resource (sweep over start and end events; a job
  ending at t frees its resources for a job starting at t);
- the guarantees the policy declared (``Schedule.guarantees``), each by its own rule,
  whatever the policy is called:

  ``head-reservation`` (EASY)
      every job starts no later than its head reservation recomputed from the schedule
      (:mod:`sim.batch.evidence`), and every job in ``Schedule.promises`` no later than
      its promise;
  ``arrival-reservation`` (conservative)
      every job starts no later than the latest reservation it can have got at its
      arrival, recomputed from the schedule (:mod:`sim.batch.evidence`); every job has a
      promise (each got a reservation at arrival) and starts no later than it;
  ``slack-bound`` (the slack-based scheduler)
      every job starts no later than its slack bound recomputed from the schedule under
      the declared terms (``Schedule.terms``: the largest slack, the jobs with infinite
      slack, where a new job is first placed; :mod:`sim.batch.evidence`), and every job
      in ``Schedule.promises`` no later than its promise; declared without its terms, or
      with no promise at all, it is an error;
  ``reservation`` (selective reservation)
      every job that reached the declared threshold (``Schedule.terms``) while waiting
      starts no later than the latest reservation it can have got then, recomputed from
      the schedule (:mod:`sim.batch.evidence`), and every job in ``Schedule.promises`` no
      later than its promise. With ``adaptive`` terms the threshold of each job
      category is the running mean of the expansion factors at start, recomputed from
      the schedule too (``evidence.adaptive_reservation_error``). Declared without its
      terms it is an error;
  ``fcfs-order`` (FCFS)
      no job starts before a job submitted earlier (workload order).

  A policy declares only what holds on the machine it ran on: the reservation kinds
  hold only when jobs are killed at their request, and declaring one with
  ``overrun="run"`` is an error (the backfilling policies then declare none). A kind the
  validator does not know is an error, so a guarantee is never silently left unchecked.
"""

from __future__ import annotations

import math

import numpy as np

from sim.batch.evidence import (
    adaptive_reservation_error,
    arrival_reservation_error,
    head_reservation_error,
    reservation_error,
    slack_bound_error,
)
from sim.batch.machine import Schedule


class ValidationError(AssertionError):
    """A schedule violates a rule; the message names the job and the rule."""


#: guarantee kinds bounded by ``Schedule.promises``, and the one ordering kind
_PROMISE_KINDS = {"head-reservation", "arrival-reservation", "slack-bound", "reservation"}
_ORDER_KINDS = {"fcfs-order"}
KNOWN_GUARANTEES = frozenset(_PROMISE_KINDS | _ORDER_KINDS)


def validate(schedule: Schedule, *, check_promises: bool | None = None) -> None:
    """Raise ValidationError on the first violated rule.

    Parameters
    ----------
    schedule : Schedule
    check_promises : bool, optional
        Check the guarantees the policy declared (``schedule.guarantees``); default
        True. False checks only the machine rules (submit, run lengths, capacity).
    """
    w = schedule.workload
    cols = w.columns()
    ids = cols.id
    n = len(cols)
    start, end = schedule.start, schedule.end
    if len(start) != n or len(end) != n or len(schedule.killed) != n:
        raise ValidationError("start/end/killed arrays do not match the number of jobs")
    kill = schedule.overrun == "kill"
    submit, runtime, requested = cols.submit, cols.runtime, cols.requested

    never = np.flatnonzero(start < 0)
    if never.size:
        raise ValidationError(f"job {ids[never[0]]} never started")
    early = np.flatnonzero(start < submit)
    if early.size:
        i = early[0]
        raise ValidationError(
            f"job {ids[i]} starts at {start[i]} before its submit {submit[i]}")
    expected = np.minimum(runtime, requested) if kill else runtime
    bad = np.flatnonzero(end - start != expected)
    if bad.size:
        i = bad[0]
        raise ValidationError(
            f"job {ids[i]} runs {end[i] - start[i]} s, expected {expected[i]} s "
            f"(runtime {runtime[i]}, requested {requested[i]}, overrun={schedule.overrun})")
    should_kill = (runtime > requested) if kill else np.zeros(n, dtype=bool)
    bad = np.flatnonzero(schedule.killed != should_kill)
    if bad.size:
        i = bad[0]
        raise ValidationError(f"job {ids[i]}: killed flag is {bool(schedule.killed[i])}")

    # capacity sweep, per resource: ends (-demand) sort before starts (+demand) at equal t
    for k in range(w.K):
        demand = cols.demand[:, k]
        pos = end > start
        t = np.concatenate([start[pos], end[pos]])
        d = np.concatenate([demand[pos], -demand[pos]])
        order = np.lexsort((d, t))
        used = np.cumsum(d[order])
        over = np.flatnonzero(used > w.capacity[k])
        if over.size:
            when = t[order][over[0]]
            raise ValidationError(
                f"resource {k}: {used[over[0]]} in use at t={when}, capacity {w.capacity[k]}")

    if check_promises is None:
        check_promises = True
    if not check_promises:
        return
    declared = set(schedule.guarantees)
    unknown = sorted(declared - KNOWN_GUARANTEES)
    if unknown:
        raise ValidationError(
            f"{schedule.policy}: declares guarantee(s) {unknown} the validator cannot check; "
            f"known: {sorted(KNOWN_GUARANTEES)}")
    broken = promise_error(schedule) or _evidence_error(schedule, declared)
    if broken is not None:
        raise ValidationError(broken)
    if "fcfs-order" in declared:
        late = np.flatnonzero(np.diff(start) < 0)
        if late.size:
            i = late[0] + 1
            raise ValidationError(
                f"{schedule.policy}: job {ids[i]} starts at {start[i]}, before job "
                f"{ids[i - 1]} submitted earlier (start {start[i - 1]}) (fcfs-order)")


def _evidence_error(schedule: Schedule, declared: set[str]) -> str | None:
    """The first declared promise kind the schedule itself disproves, or one declared
    where nothing can hold it (``overrun="run"``, or no promise to check)."""
    kinds = sorted(declared & _PROMISE_KINDS)
    if kinds and schedule.overrun != "kill":
        return (f"{schedule.policy}: declares {'/'.join(kinds)} with overrun="
                f"{schedule.overrun!r}, where a job may outlive its request and no "
                "reservation holds")
    args = (schedule.workload, schedule.start, schedule.end, schedule.policy)
    if "head-reservation" in declared:
        broken = head_reservation_error(*args)
        if broken is not None:
            return broken
    if "arrival-reservation" in declared:
        broken = arrival_reservation_error(*args)
        if broken is not None:
            return broken
    if "slack-bound" in declared:
        broken = _slack_bound(schedule)
        if broken is not None:
            return broken
    if "reservation" in declared:
        broken = _reservation(schedule)
        if broken is not None:
            return broken
    return None


def _terms(schedule: Schedule, kind: str) -> dict | str:
    """The declared terms of ``kind``, or the error of a kind declared without them."""
    terms = schedule.terms.get(kind)
    if not isinstance(terms, dict):
        return (f"{schedule.policy}: declares {kind} without its terms "
                f"(guarantee_terms()): nothing to check ({kind})")
    return terms


def _slack_bound(schedule: Schedule) -> str | None:
    if not schedule.promises and len(schedule.start):
        return (f"{schedule.policy}: declares slack-bound but promises no job a latest "
                "start: nothing to check (slack-bound)")
    terms = _terms(schedule, "slack-bound")
    if isinstance(terms, str):
        return terms
    top, free = terms.get("max_slack"), terms.get("unbounded", ())
    if isinstance(top, bool) or not isinstance(top, (int, float)) or not 0 <= top < math.inf:
        return (f"{schedule.policy}: slack-bound term max_slack = {top!r} is not a finite "
                "number of seconds >= 0 (slack-bound)")
    try:
        unbounded = frozenset(int(j) for j in free)
    except (TypeError, ValueError):
        return (f"{schedule.policy}: slack-bound term unbounded is not a list of job ids "
                "(slack-bound)")
    placement = terms.get("placement", "horizon")
    if placement not in ("breakpoint", "horizon"):
        return (f"{schedule.policy}: slack-bound term placement = {placement!r} is not "
                "'breakpoint' or 'horizon' (slack-bound)")
    return slack_bound_error(schedule.workload, schedule.start, schedule.end,
                             schedule.policy, float(top), unbounded, schedule.promises,
                             breakpoint=placement == "breakpoint")


def _reservation(schedule: Schedule) -> str | None:
    terms = _terms(schedule, "reservation")
    if isinstance(terms, str):
        return terms
    thr = terms.get("threshold")
    if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not 1 <= thr < math.inf:
        return (f"{schedule.policy}: reservation term threshold = {thr!r} is not a finite "
                "expansion factor >= 1 (reservation)")
    adaptive = terms.get("adaptive", False)
    if not isinstance(adaptive, bool):
        return (f"{schedule.policy}: reservation term adaptive = {adaptive!r} is not true "
                "or false (reservation)")
    check = adaptive_reservation_error if adaptive else reservation_error
    return check(schedule.workload, schedule.start, schedule.end, schedule.policy,
                 float(thr), schedule.promises)


def promise_error(schedule: Schedule) -> str | None:
    """The first broken promise rule of ``schedule`` as the validator words it, or None.

    With a promise kind declared, every job in ``Schedule.promises`` (in the dict's order)
    must be a job of the workload and start no later than its promise; with
    ``arrival-reservation``, every job (in workload order) must have a promise. The same
    verdict and message as :func:`promise_error_reference`, on arrays.
    """
    declared = set(schedule.guarantees)
    promise_kinds = sorted(declared & _PROMISE_KINDS)
    ids = schedule.workload.columns().id
    keys = np.fromiter(schedule.promises, np.int64, len(schedule.promises))
    if promise_kinds and keys.size:
        values = list(schedule.promises.values())
        index = _positions(ids, keys)
        known = index >= 0
        late = np.zeros(keys.size, bool)
        late[known] = schedule.start[index[known]] > np.asarray(values)[known]
        bad = np.flatnonzero(~known | late)
        if bad.size:
            b = int(bad[0])
            jid, promised = int(keys[b]), values[b]
            if not known[b]:
                return f"{schedule.policy}: promise for unknown job {jid}"
            return (f"{schedule.policy}: job {jid} starts at {schedule.start[index[b]]}, later "
                    f"than promised {promised} ({'/'.join(promise_kinds)})")
    if "arrival-reservation" in declared:
        missing = np.flatnonzero(~np.isin(ids, keys))
        if missing.size:
            return (f"{schedule.policy}: job {ids[missing[0]]} got no reservation at arrival "
                    "(arrival-reservation)")
    return None


def _positions(ids: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The index of each of ``keys`` in ``ids`` (distinct values), -1 where it is absent."""
    if not len(ids):
        return np.full(len(keys), -1, np.int64)
    order = np.argsort(ids, kind="stable")
    at = order[np.minimum(np.searchsorted(ids, keys, sorter=order), len(ids) - 1)]
    return np.where(ids[at] == keys, at, -1)


def promise_error_reference(schedule: Schedule) -> str | None:
    """:func:`promise_error` job by job over ``Workload.jobs`` and the promise dict: the
    readable reference (the tests check that both agree)."""
    declared = set(schedule.guarantees)
    jobs = schedule.workload.jobs
    start = schedule.start
    index = {j.id: i for i, j in enumerate(jobs)}
    promise_kinds = sorted(declared & _PROMISE_KINDS)
    if promise_kinds:
        for jid, promised in schedule.promises.items():
            i = index.get(jid)
            if i is None:
                return f"{schedule.policy}: promise for unknown job {jid}"
            if start[i] > promised:
                return (f"{schedule.policy}: job {jid} starts at {start[i]}, later than "
                        f"promised {promised} ({'/'.join(promise_kinds)})")
    if "arrival-reservation" in declared:
        missing = [j.id for j in jobs if j.id not in schedule.promises]
        if missing:
            return (f"{schedule.policy}: job {missing[0]} got no reservation at arrival "
                    "(arrival-reservation)")
    return None
