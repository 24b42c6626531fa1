"""Reference batch schedulers: FCFS, EASY backfilling and conservative backfilling.

All three follow the ``sim.batch.policy.Policy`` protocol: they see only what a real scheduler
sees (submit time, requested time, demand), keep their view of the machine in the one
``sim.batch.planner.Planner`` (running jobs, estimated ends, a profile of their
occupation), and return the jobs to start now. Which admissible job starts next is a
selection rule handed to the planner (first fit: the first in queue order).

- FCFS: start jobs strictly in submit order; the first job that does not fit blocks the
  queue.
- EASY (Lifka 1995): start queue heads while they fit; reserve the first waiting job at
  the earliest time it fits (the shadow time); backfill a later job only if it fits now
  and does not delay that reservation. The promise checked by the validator: a job never
  starts later than the reservation it got when it first became the head of the queue.
- Conservative (Mu'alem & Feitelson 2001): every job gets a reservation at arrival and a
  backfilled job may delay none. When a job ends before its requested time the schedule
  is compressed: waiting jobs, in arrival order, are re-placed at their earliest start,
  which is never later than their current one. The promise: no job starts later than the
  reservation it got at arrival.

Both promises hold when jobs are killed at their requested time (``overrun="kill"``).
With ``overrun="run"`` a job may outlive its estimate; the policies then extend its
estimated end by its requested time each time it is exceeded (and the conservative
policy re-places every reservation), so promises may be broken: the policies then
declare no guarantee (``guarantees()``; FCFS's submit order holds in both modes).

Times are integer seconds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Sequence

from instances.job import Job
from sim.batch.planner import Planner
from sim.batch.policy import (
    ARRIVAL_RESERVATION,
    FCFS_ORDER,
    HEAD_RESERVATION,
    BasePolicy,
    MachineInfo,
)


class FirstFit:
    """FF selection: the first admissible job in queue (arrival) order."""

    name = "ff"
    first_fit = True

    def pick(self, candidates: Sequence[Job], free: Sequence[int],
             capacity: Sequence[int]) -> int:
        return 0


class _PlannedPolicy(BasePolicy):
    """A policy whose view of the machine is one ``Planner`` (``self.plan``)."""

    name = "planned"

    def reset(self, machine: MachineInfo) -> None:
        self.machine = machine
        self.plan = Planner(machine)
        self._promises: dict[int, int] = {}

    def promises(self) -> dict[int, int]:
        return self._promises

    def on_end(self, job: Job, now: int) -> None:
        self.plan.end(job, now)

    def on_overrun(self, job: Job, now: int) -> None:
        self.plan.overrun(job)

    def next_wakeup(self, now: int) -> int | None:
        return self.plan.next_overdue()


class FCFS(_PlannedPolicy):
    """First come, first served without backfilling."""

    name = "fcfs"

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.queue: deque[Job] = deque()

    def on_arrival(self, job: Job, now: int) -> None:
        self.queue.append(job)

    def schedule(self, now: int) -> list[Job]:
        started = []
        q = self.queue
        plan = self.plan
        while q and plan.fits_now(q[0]):
            job = q.popleft()
            plan.start(job, now)
            started.append(job)
        return started

    def next_wakeup(self, now: int) -> int | None:
        return None

    def guarantees(self) -> frozenset[str]:
        return frozenset({FCFS_ORDER})


class EASY(_PlannedPolicy):
    """EASY backfilling (Lifka): one reservation, for the first job in the queue."""

    name = "easy"

    def __init__(self) -> None:
        self.rule = FirstFit()

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.queue: list[Job] = []

    def on_arrival(self, job: Job, now: int) -> None:
        self.queue.append(job)

    def guarantees(self) -> frozenset[str]:
        # the head's reservation holds when no job outlives its request
        return frozenset({HEAD_RESERVATION}) if self.machine.kill_at_request else frozenset()

    def schedule(self, now: int) -> list[Job]:
        q = self.queue
        plan = self.plan
        profile = plan.profile
        profile.advance(now)
        plan.extend(plan.overdue_due(now), now)
        if not q:
            return []
        started: list[Job] = []
        i = 0
        while i < len(q) and plan.fits_now(q[i]):
            plan.start(q[i], now)
            started.append(q[i])
            i += 1
        if i:
            del q[:i]
        if not q:
            return started
        head = q[0]
        shadow = profile.earliest_start(head.requested, head.demand, now)
        if head.id not in self._promises:
            self._promises[head.id] = shadow
        if len(q) > 1 and plan.free[0] > 0:
            profile.reserve(shadow, head.requested, head.demand)
            fits = profile.fits
            free_at = profile.free_at
            extra = [free_at(shadow)[0]]  # processors free at the shadow time

            # The planner asks only about jobs that fit now. Every occupation in the
            # profile starts at or before now, or at the shadow time, so free capacity
            # never decreases on [now, shadow): a job that fits now and ends by the
            # shadow time fits throughout. A job running past the
            # shadow time must fit beside the head's reservation until it ends, so it
            # needs at least the processors free at the shadow time (a quick filter).
            def admissible(job: Job) -> bool:
                d = job.demand
                if now + job.requested <= shadow:
                    return True
                if extra[0] < 0:
                    extra[0] = free_at(shadow)[0]
                return d[0] <= extra[0] and fits(now, job.requested, d)

            def started_one(job: Job) -> None:
                if now + job.requested > shadow:
                    extra[0] = -1  # recomputed when next needed

            more = plan.fill(q[1:], now, admissible, self.rule, before_start=started_one)
            profile.release(shadow, head.requested, head.demand)
            if more:
                gone = {j.id for j in more}
                self.queue = [j for j in q if j.id not in gone]
                started += more
        return started


COMPRESSION = ("arrival", "start", "now", "none")


class Conservative(_PlannedPolicy):
    """Conservative backfilling (Mu'alem & Feitelson) with compression on early ends.

    Parameters
    ----------
    compression : {"arrival", "start", "now", "none"}
        How the schedule is compressed when a job ends before its requested time:
        waiting jobs re-placed at their earliest start in arrival order (default, as
        above), in order of their current reserved start, only the jobs that can start
        at once ("now"; the others keep their reservations), or not at all (every job
        keeps the reservation it got at arrival; later arrivals may still backfill into
        the freed hole). The last two are readings of the paper's simulator that
        Talby & Feitelson (IPPS'99) do not rule out; see ``sim.experiments.slack_tables``.
    """

    name = "conservative"

    def __init__(self, compression: str = "arrival") -> None:
        if compression not in COMPRESSION:
            raise ValueError(f"compression must be one of {COMPRESSION}, got {compression!r}")
        self.compression = compression

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.queue: list[Job] = []  # arrival order
        self.res: dict[int, int] = {}  # waiting job id -> reserved start (s)
        self.dirty = False

    def on_arrival(self, job: Job, now: int) -> None:
        profile = self.plan.profile
        profile.advance(now)
        t = profile.earliest_start(job.requested, job.demand, now)
        profile.reserve(t, job.requested, job.demand)
        self.res[job.id] = t
        self._promises[job.id] = t
        self.queue.append(job)

    def on_end(self, job: Job, now: int) -> None:
        if self.plan.end(job, now) and self.compression != "none":
            self.dirty = True

    def guarantees(self) -> frozenset[str]:
        # reservations at arrival hold when no job outlives its request
        return (frozenset({ARRIVAL_RESERVATION}) if self.machine.kill_at_request
                else frozenset())

    def _extend_overdue(self, now: int) -> None:
        # An overrunning job's extension may collide with reservations: take all waiting
        # reservations out, extend, and re-place them in arrival order (promises may break).
        due = self.plan.overdue_due(now)
        if not due:
            return
        profile = self.plan.profile
        for job in self.queue:
            if self.res[job.id] >= 0:
                profile.release(self.res[job.id], job.requested, job.demand)
            self.res[job.id] = -1
        self.plan.extend(due, now)
        self.dirty = True

    def _compress(self, now: int) -> None:
        profile = self.plan.profile
        res = self.res
        K = self.plan.K
        times, free = profile.times, profile.free
        queue = self.queue
        if self.compression == "start":
            queue = sorted(queue, key=lambda j: res[j.id])  # stable: ties in arrival order
        for job in queue:
            old = res[job.id]
            if old == now:
                continue
            if old >= 0:
                # A job can move earlier only to an instant before its reservation where
                # its demand is free already: skip the re-placement when there is none.
                b = bisect_left(times, old)
                if any(max(free[k][:b]) < job.demand[k] for k in range(K)):
                    continue
                profile.release(old, job.requested, job.demand)
            t = profile.earliest_start(job.requested, job.demand, now)
            if self.compression == "now" and old >= 0 and t != now:
                t = old  # only jobs that can start at once move (the hole was just freed)
            profile.reserve(t, job.requested, job.demand)
            res[job.id] = t

    def schedule(self, now: int) -> list[Job]:
        plan = self.plan
        plan.profile.advance(now)
        if plan.overdue:
            self._extend_overdue(now)
        if self.dirty:
            self._compress(now)
            self.dirty = False
        started = []
        keep = []
        res = self.res
        for job in self.queue:
            if res[job.id] == now:
                del res[job.id]
                plan.start(job, now, reserved=True)
                started.append(job)
            else:
                keep.append(job)
        self.queue = keep
        return started

    def next_wakeup(self, now: int) -> int | None:
        # A reservation may sit at the end of a later job's old reservation that
        # compression moved earlier, an instant at which no event happens: wake up there.
        w = min(self.res.values(), default=None)
        o = self.plan.next_overdue()
        if o is not None and (w is None or o < w):
            return o
        return w
