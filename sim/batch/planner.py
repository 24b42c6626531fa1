"""The one planner every batch policy builds on: running jobs, estimates, free capacity.

A policy sees only what a real scheduler sees (submit time, requested time, demand), so it
plans with *estimated* ends: a running job is expected to end at ``start + requested``.
The ``Planner`` keeps that view of the machine, for FCFS, EASY, conservative backfilling,
the unconstrained selection and the slack-based scheduler alike:

- ``running`` (job id -> Job) and ``est_end`` (job id -> estimated end, s);
- ``free``: free capacity now, per resource (exact: the simulator's own free vector);
- ``profile``: a ``sim.profile.Profile`` of the running jobs' estimated occupation, into
  which a policy may also book its own reservations (conservative's, EASY's head for the
  length of a decision);
- ``overdue``: running jobs past their estimate (only when jobs are not killed at their
  request); ``extend`` gives such a job a new estimate ``now + requested`` each time its
  estimate passes while it still runs.

A *selection rule* chooses which of several admissible jobs starts next (first fit,
backfill lowest, backfill balanced, ...). It is a small object handed to ``Planner.fill``:
``rule.pick(candidates, free, capacity) -> index`` and the flag ``rule.first_fit``, true
when the rule always picks the first candidate in queue order (then ``fill`` needs one
pass over the queue; see ``fill`` for why that is exact).

Times are integer seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from instances.job import Job
from sim.batch.policy import MachineInfo
from sim.profile import Profile


class SelectionRule(Protocol):
    """A job-selection rule: which admissible job starts next.

    Attributes
    ----------
    name : str
        Short name (``"ff"``, ``"bl"``, ``"bb"``, ...).
    first_fit : bool
        True when ``pick`` always returns 0 (the first candidate in queue order).
    """

    name: str
    first_fit: bool

    def pick(self, candidates: Sequence[Job], free: Sequence[int],
             capacity: Sequence[int]) -> int:
        """Index into ``candidates`` (non-empty, in queue order) of the job to start,
        given the free capacity per resource now; -1 to start nothing more now."""


class Planner:
    """Running-job bookkeeping of one simulation (see the module docstring).

    Parameters
    ----------
    machine : MachineInfo
        Capacity per resource (``capacity[0]`` is processors).
    """

    __slots__ = ("capacity", "K", "free", "running", "est_end", "overdue", "profile")

    def __init__(self, machine: MachineInfo) -> None:
        self.capacity = tuple(machine.capacity)
        self.K = len(self.capacity)
        self.free = list(self.capacity)
        self.running: dict[int, Job] = {}
        self.est_end: dict[int, int] = {}  # running job id -> estimated end (s)
        self.overdue: set[int] = set()
        self.profile = Profile(self.capacity, 0)

    # ------------------------------------------------------------------ queries
    def fits_now(self, job: Job) -> bool:
        """Whether ``job``'s demand fits in the capacity free now, in every resource."""
        free = self.free
        demand = job.demand
        for k in range(self.K):
            if demand[k] > free[k]:
                return False
        return True

    def running_profile(self, now: int) -> Profile:
        """A fresh profile of the running jobs' estimated occupation from ``now`` (s) on.

        Only meaningful for a policy that books nothing else into ``profile``.
        """
        self.profile.advance(now)
        return self.profile.copy()

    def next_overdue(self) -> int | None:
        """Earliest estimated end (s) of an overdue running job, or None."""
        if not self.overdue:
            return None
        est = self.est_end
        return min(est[j] for j in self.overdue)

    # ------------------------------------------------------------------ updates
    def start(self, job: Job, now: int, *, reserved: bool = False) -> None:
        """Book ``job`` as running from ``now`` (s) until its estimated end.

        ``reserved`` when the policy's reservation already covers ``[now, now +
        requested)`` in ``profile``.
        """
        free = self.free
        demand = job.demand
        for k in range(self.K):
            free[k] -= demand[k]
        self.running[job.id] = job
        self.est_end[job.id] = now + job.requested
        if not reserved:
            self.profile.advance(now)
            self.profile.reserve(now, job.requested, demand)

    def end(self, job: Job, now: int) -> bool:
        """``job`` ended at ``now`` (s); returns True when it ended before its estimate
        (its remaining estimated occupation is released from ``profile``)."""
        free = self.free
        demand = job.demand
        for k in range(self.K):
            free[k] += demand[k]
        del self.running[job.id]
        end = self.est_end.pop(job.id)
        self.overdue.discard(job.id)
        if end > now:
            self.profile.release(now, end - now, demand)
            return True
        return False

    def overrun(self, job: Job) -> None:
        """``job`` is still running at its estimated end."""
        self.overdue.add(job.id)

    def overdue_due(self, now: int) -> list[int]:
        """Ids (ascending) of overdue jobs whose estimate has passed at ``now`` (s)."""
        if not self.overdue:
            return []
        est = self.est_end
        return [j for j in sorted(self.overdue) if est[j] <= now]

    def extend(self, ids: Sequence[int], now: int) -> None:
        """Give each running job in ``ids`` the new estimate ``now + requested`` (s) and
        book ``[now, now + requested)`` in ``profile`` (its old estimate has passed)."""
        if not ids:
            return
        profile = self.profile
        profile.advance(now)
        for jid in ids:
            job = self.running[jid]
            profile.reserve(now, job.requested, job.demand)
            self.est_end[jid] = now + job.requested

    def fill(self, queue: Sequence[Job], now: int, admissible: Callable[[Job], bool],
             rule: SelectionRule, *,
             before_start: Callable[[Job], None] | None = None) -> list[Job]:
        """Start admissible jobs of ``queue`` at ``now`` (s), one at a time, each chosen
        by ``rule`` among the jobs admissible at that moment, until none is left.

        ``admissible(job)`` is evaluated against the current state (it sees the jobs
        started so far). It must be *shrinking*: starting a job never makes a job that
        was not admissible admissible (true of every rule here: starting a job only
        takes capacity). Then the admissible set after a start is a subset of the one
        before, so only former candidates are re-tested, and a first-fit rule (which
        always picks the first candidate in queue order) is one pass over the queue.

        Every job started here starts now, so ``fill`` itself skips a job that does
        not fit in the capacity free now (any resource) and asks ``admissible`` only
        about the others.

        ``before_start(job)``, when given, is called just before a chosen job is booked
        (for example to take its old reservation out of ``profile``).

        Returns the started jobs in the order started (they are booked in ``profile``).
        """
        started: list[Job] = []
        free = self.free
        fits_now = self.fits_now if self.K > 1 else None
        if rule.first_fit:
            for job in queue:
                if (job.demand[0] <= free[0] and (fits_now is None or fits_now(job))
                        and admissible(job)):
                    if before_start is not None:
                        before_start(job)
                    self.start(job, now)
                    started.append(job)
            return started
        cands = [job for job in queue if job.demand[0] <= free[0]
                 and (fits_now is None or fits_now(job)) and admissible(job)]
        pick = rule.pick
        while cands:
            i = pick(cands, self.free, self.capacity)
            if i < 0:  # the rule stops selecting at this decision
                break
            job = cands.pop(i)
            if before_start is not None:
                before_start(job)
            self.start(job, now)
            started.append(job)
            cands = [c for c in cands if self.fits_now(c) and admissible(c)]
        return started
