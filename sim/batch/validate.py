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

  ``head-reservation`` (EASY), ``slack-bound`` (the slack-based scheduler)
      every job in ``Schedule.promises`` starts no later than its promise;
  ``arrival-reservation`` (conservative)
      the same, and every job has a promise (each got a reservation at arrival);
  ``fcfs-order`` (FCFS)
      no job starts before a job submitted earlier (workload order).

  A policy declares only what holds on the machine it ran on (the backfilling policies
  promise nothing when jobs may outlive their request), and a kind the validator does
  not know is an error, so a guarantee is never silently left unchecked.
"""

from __future__ import annotations

import numpy as np

from sim.batch.machine import Schedule


class ValidationError(AssertionError):
    """A schedule violates a rule; the message names the job and the rule."""


#: guarantee kinds bounded by ``Schedule.promises``, and the one ordering kind
_PROMISE_KINDS = {"head-reservation", "arrival-reservation", "slack-bound"}
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
    jobs = w.jobs
    n = len(jobs)
    start, end = schedule.start, schedule.end
    if len(start) != n or len(end) != n or len(schedule.killed) != n:
        raise ValidationError("start/end/killed arrays do not match the number of jobs")
    kill = schedule.overrun == "kill"
    submit = np.fromiter((j.submit for j in jobs), dtype=np.int64, count=n)
    runtime = np.fromiter((j.runtime for j in jobs), dtype=np.int64, count=n)
    requested = np.fromiter((j.requested for j in jobs), dtype=np.int64, count=n)

    never = np.flatnonzero(start < 0)
    if never.size:
        raise ValidationError(f"job {jobs[never[0]].id} never started")
    early = np.flatnonzero(start < submit)
    if early.size:
        i = early[0]
        raise ValidationError(
            f"job {jobs[i].id} starts at {start[i]} before its submit {submit[i]}")
    expected = np.minimum(runtime, requested) if kill else runtime
    bad = np.flatnonzero(end - start != expected)
    if bad.size:
        i = bad[0]
        raise ValidationError(
            f"job {jobs[i].id} runs {end[i] - start[i]} s, expected {expected[i]} s "
            f"(runtime {runtime[i]}, requested {requested[i]}, overrun={schedule.overrun})")
    should_kill = (runtime > requested) if kill else np.zeros(n, dtype=bool)
    bad = np.flatnonzero(schedule.killed != should_kill)
    if bad.size:
        i = bad[0]
        raise ValidationError(f"job {jobs[i].id}: killed flag is {bool(schedule.killed[i])}")

    # capacity sweep, per resource: ends (-demand) sort before starts (+demand) at equal t
    for k in range(w.K):
        demand = np.fromiter((j.demand[k] for j in jobs), dtype=np.int64, count=n)
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
    index = {j.id: i for i, j in enumerate(jobs)}
    promise_kinds = sorted(declared & _PROMISE_KINDS)
    if promise_kinds:
        for jid, promised in schedule.promises.items():
            i = index.get(jid)
            if i is None:
                raise ValidationError(f"{schedule.policy}: promise for unknown job {jid}")
            if start[i] > promised:
                raise ValidationError(
                    f"{schedule.policy}: job {jid} starts at {start[i]}, later than promised "
                    f"{promised} ({'/'.join(promise_kinds)})")
    if "arrival-reservation" in declared:
        missing = [j.id for j in jobs if j.id not in schedule.promises]
        if missing:
            raise ValidationError(
                f"{schedule.policy}: job {missing[0]} got no reservation at arrival "
                "(arrival-reservation)")
    if "fcfs-order" in declared:
        late = np.flatnonzero(np.diff(start) < 0)
        if late.size:
            i = late[0] + 1
            raise ValidationError(
                f"{schedule.policy}: job {jobs[i].id} starts at {start[i]}, before job "
                f"{jobs[i - 1].id} submitted earlier (start {start[i - 1]}) (fcfs-order)")
