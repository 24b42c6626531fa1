"""Reference batch schedulers: FCFS, EASY backfilling and conservative backfilling.

All three follow the ``sim.batch.policy.Policy`` protocol: they see only what a real scheduler
sees (submit time, requested time, demand), keep their own view of the machine in a
``sim.profile.Profile`` of estimated ends, and return the jobs to start now.

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
policy re-places every reservation), so promises may be broken, and the validator does
not check them in that mode.

Times are integer seconds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque

from instances.job import Job
from sim.batch.policy import BasePolicy, MachineInfo
from sim.profile import Profile


class _Planner(BasePolicy):
    """Shared bookkeeping: running jobs, their estimated ends, free capacity, and a
    profile of the running jobs' estimated occupation."""

    name = "planner"

    def reset(self, machine: MachineInfo) -> None:
        self.machine = machine
        self.K = len(machine.capacity)
        self.free = list(machine.capacity)
        self.profile = Profile(machine.capacity, 0)
        self.est_end: dict[int, int] = {}  # running job id -> estimated end (s)
        self.running: dict[int, Job] = {}
        self.overdue: set[int] = set()
        self._promises: dict[int, int] = {}

    def promises(self) -> dict[int, int]:
        return self._promises

    def _start(self, job: Job, now: int, *, reserved: bool = False) -> None:
        """Book ``job`` as running from ``now``; ``reserved`` when its reservation
        already covers ``[now, now + requested)`` in the profile."""
        for k in range(self.K):
            self.free[k] -= job.demand[k]
        self.running[job.id] = job
        self.est_end[job.id] = now + job.requested
        if not reserved:
            self.profile.advance(now)
            self.profile.reserve(now, job.requested, job.demand)

    def _fits_now(self, job: Job) -> bool:
        free = self.free
        for k in range(self.K):
            if job.demand[k] > free[k]:
                return False
        return True

    def on_end(self, job: Job, now: int) -> None:
        for k in range(self.K):
            self.free[k] += job.demand[k]
        del self.running[job.id]
        end = self.est_end.pop(job.id)
        self.overdue.discard(job.id)
        if end > now:
            self.profile.release(now, end - now, job.demand)
            self._ended_early(now)

    def _ended_early(self, now: int) -> None:
        """Hook: a job released capacity before its estimated end."""

    def on_overrun(self, job: Job, now: int) -> None:
        self.overdue.add(job.id)

    def _extend_overdue(self, now: int) -> bool:
        """Extend the estimate of running jobs past their estimated end by their
        requested time; returns True when any estimate changed."""
        changed = False
        for jid in sorted(self.overdue):
            end = self.est_end[jid]
            if end <= now:
                job = self.running[jid]
                new_end = now + job.requested
                self.profile.advance(now)
                self._reserve_forced(now, new_end - now, job.demand)
                self.est_end[jid] = new_end
                changed = True
        return changed

    def _reserve_forced(self, start: int, duration: int, demand: tuple[int, ...]) -> None:
        self.profile.reserve(start, duration, demand)

    def next_wakeup(self, now: int) -> int | None:
        if not self.overdue:
            return None
        return min(self.est_end[j] for j in self.overdue)


class FCFS(_Planner):
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
        while q and self._fits_now(q[0]):
            job = q.popleft()
            self._start(job, now)
            started.append(job)
        return started

    def next_wakeup(self, now: int) -> int | None:
        return None


class EASY(_Planner):
    """EASY backfilling (Lifka): one reservation, for the first job in the queue."""

    name = "easy"

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.queue: list[Job] = []

    def on_arrival(self, job: Job, now: int) -> None:
        self.queue.append(job)

    def schedule(self, now: int) -> list[Job]:
        q = self.queue
        profile = self.profile
        profile.advance(now)
        self._extend_overdue(now)
        if not q:
            return []
        started: list[Job] = []
        i = 0
        while i < len(q) and self._fits_now(q[i]):
            self._start(q[i], now)
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
        if len(q) > 1 and self.free[0] > 0:
            profile.reserve(shadow, head.requested, head.demand)
            # Every occupation in the profile starts at or before now, or at the shadow
            # time, so free capacity never decreases on [now, shadow): a job that fits
            # now and ends by the shadow time fits throughout. A job running past the
            # shadow time needs at least the processors free at that time.
            extra0 = profile.free_at(shadow)[0]
            free0 = self.free[0]
            keep = [head]
            for job in q[1:]:
                if job.demand[0] > free0 or not self._fits_now(job):
                    keep.append(job)
                elif now + job.requested <= shadow:
                    self._start(job, now)
                    started.append(job)
                    free0 = self.free[0]
                elif (job.demand[0] <= extra0
                        and profile.fits(now, job.requested, job.demand)):
                    self._start(job, now)
                    started.append(job)
                    free0 = self.free[0]
                    extra0 = profile.free_at(shadow)[0]
                else:
                    keep.append(job)
            profile.release(shadow, head.requested, head.demand)
            self.queue = keep
        return started


class Conservative(_Planner):
    """Conservative backfilling (Mu'alem & Feitelson) with compression on early ends."""

    name = "conservative"

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.queue: list[Job] = []  # arrival order
        self.res: dict[int, int] = {}  # waiting job id -> reserved start (s)
        self.dirty = False

    def on_arrival(self, job: Job, now: int) -> None:
        self.profile.advance(now)
        t = self.profile.earliest_start(job.requested, job.demand, now)
        self.profile.reserve(t, job.requested, job.demand)
        self.res[job.id] = t
        self._promises[job.id] = t
        self.queue.append(job)

    def _ended_early(self, now: int) -> None:
        self.dirty = True

    def _reserve_forced(self, start: int, duration: int, demand: tuple[int, ...]) -> None:
        # An overrunning job's extension may collide with reservations: take all waiting
        # reservations out, extend, and re-place them in arrival order (promises may break).
        for job in self.queue:
            if self.res[job.id] >= 0:  # not already taken out by another overrun now
                self.profile.release(self.res[job.id], job.requested, job.demand)
        self.profile.reserve(start, duration, demand)
        for job in self.queue:
            self.res[job.id] = -1
        self.dirty = True

    def _compress(self, now: int) -> None:
        profile = self.profile
        res = self.res
        times, free = profile.times, profile.free
        for job in self.queue:
            old = res[job.id]
            if old == now:
                continue
            if old >= 0:
                # A job can move earlier only to an instant before its reservation where
                # its demand is free already: skip the re-placement when there is none.
                b = bisect_left(times, old)
                if any(max(free[k][:b]) < job.demand[k] for k in range(self.K)):
                    continue
                profile.release(old, job.requested, job.demand)
            t = profile.earliest_start(job.requested, job.demand, now)
            profile.reserve(t, job.requested, job.demand)
            res[job.id] = t

    def schedule(self, now: int) -> list[Job]:
        self.profile.advance(now)
        if self.overdue:
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
                self._start(job, now, reserved=True)
                started.append(job)
            else:
                keep.append(job)
        self.queue = keep
        return started

    def next_wakeup(self, now: int) -> int | None:
        # A reservation may sit at the end of a later job's old reservation that
        # compression moved earlier, an instant at which no event happens: wake up there.
        w = min(self.res.values(), default=None)
        o = super().next_wakeup(now)
        if o is not None and (w is None or o < w):
            return o
        return w
