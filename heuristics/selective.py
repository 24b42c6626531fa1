"""Selective reservation backfilling (Srinivasan, Kettimuthu, Subramani & Sadayappan,
"Selective reservation strategies for backfill job scheduling", JSSPP 2002, LNCS 2537).

Between EASY (a reservation for the head only) and conservative backfilling (one for
every job), a waiting job gets a reservation only once it has waited long enough for
its size: when its expansion factor

    XF(t) = (t - submit + estimate) / estimate

(its slowdown so far, ``estimate`` the requested time, or the prediction under a
``predictor``) reaches the threshold. Jobs without a reservation start, in queue (arrival)
order, whenever they fit now without delaying any reservation (the selection rule picks
among them, as in EASY). A reservation is placed at the earliest time the job fits beside
the running jobs (held until their estimated ends) and the earlier reservations; it is
never moved later. When a job ends before its estimate, the reservations are re-placed
in the order they were given, each at its earliest start, which is never later than its
current one (each re-placement is made with every other reservation in place, so every
old slot stays free).

The readings chosen (the paper's text was not at hand; documented here):

- ``threshold`` (default 2.0): the paper's *Selective-Fixed* scheme, one fixed
  starvation threshold on XF for every job.
- ``adaptive=True``: the paper's *Selective-Adaptive* scheme by job category: a job's
  threshold is the mean XF at start of the jobs of its category started so far (the
  fixed ``threshold`` until one has started), where the categories are the paper's
  four: short (estimate <= 1 h) or long, narrow (<= 8 processors) or wide.
- XF is evaluated at every decision and at the instant it reaches the threshold (a
  wake-up), so a reservation is given exactly when the threshold is reached.

Guarantee: a job that got a reservation never starts later than the first one it got
(``promises()``, kind ``reservation``), when jobs are killed at their request and the
plan uses the requests. With ``overrun="run"`` or a predictor other than ``user`` the
policy declares none (see :mod:`heuristics.predictors`).

Times are integer seconds.
"""

from __future__ import annotations

import math

from heuristics.backfill import _OPTIONS_DOC, _PlannedPolicy, _Selecting
from heuristics.predictors import Predicted
from instances.job import Job
from sim.batch.policy import RESERVATION, MachineInfo

__all__ = ["SelectiveReservation", "SHORT", "NARROW"]

SHORT = 3600  #: s: a job whose estimate is at most this is short (Srinivasan et al.)
NARROW = 8  #: processors: a job asking at most this many is narrow


def category(job: Job) -> int:
    """The job's category: 0 short narrow, 1 short wide, 2 long narrow, 3 long wide."""
    return 2 * (job.requested > SHORT) + (job.demand[0] > NARROW)


class _SelectivePlan(_Selecting, _PlannedPolicy):
    """Selective reservation's planning: see :class:`SelectiveReservation`."""

    name = "selective"
    base_name = "selective"

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none", ties: str = "first",
                 threshold: float = 2.0, adaptive: bool = False) -> None:
        self._init_selection(select, window, fullness, bl_fallback, bl_fullness, ties)
        if (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                or not math.isfinite(threshold) or threshold < 1):
            raise ValueError(f"threshold must be a finite number >= 1 (an expansion "
                             f"factor), got {threshold!r}")
        if not isinstance(adaptive, bool):
            raise ValueError(f"adaptive must be true or false, got {adaptive!r}")
        self.threshold = float(threshold)
        self.adaptive = adaptive
        self.params.update(threshold=self.threshold, adaptive=adaptive)

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.res: dict[int, int] = {}  # waiting job id -> reserved start (s), grant order
        self.dirty = False
        self._xf_sum = [0.0] * 4  # per category: sum and count of XF at start
        self._xf_n = [0] * 4

    def guarantees(self) -> frozenset[str]:
        return frozenset({RESERVATION}) if self.machine.kill_at_request else frozenset()

    def guarantee_terms(self) -> dict[str, dict[str, object]]:
        """The reservation guarantee's terms (``sim.batch.policy.RESERVATION``): the fixed
        threshold, or ``adaptive`` (the threshold is then the schedule's running mean)."""
        if RESERVATION not in self.guarantees():
            return {}
        if self.adaptive:
            return {RESERVATION: {"threshold": self.threshold, "adaptive": True}}
        return {RESERVATION: {"threshold": self.threshold}}

    def on_end(self, job: Job, now: int) -> None:
        if self.plan.end(job, now) and self.res:
            self.dirty = True

    def _threshold(self, job: Job) -> float:
        """The XF at which ``job`` gets a reservation."""
        if not self.adaptive:
            return self.threshold
        c = category(job)
        return self._xf_sum[c] / self._xf_n[c] if self._xf_n[c] else self.threshold

    def _due(self, job: Job) -> int:
        """The first instant (s) at which ``job``'s XF reaches its threshold."""
        return job.submit + math.ceil((self._threshold(job) - 1.0) * job.requested)

    def schedule(self, now: int) -> list[Job]:
        plan = self.plan
        profile = plan.profile
        profile.advance(now)
        res = self.res
        by_id = {j.id: j for j in self.queue} if res else {}
        released = False
        due = plan.overdue_due(now) if plan.overdue else []
        if due:  # an overrun: its extension may collide, so re-place every reservation
            for jid, t in res.items():
                profile.release(t, by_id[jid].requested, by_id[jid].demand)
            plan.extend(due, now)
            released = self.dirty = True
        if self.dirty and res:
            for jid in list(res):
                job = by_id[jid]
                if not released:
                    profile.release(res[jid], job.requested, job.demand)
                res[jid] = profile.earliest_start(job.requested, job.demand, now)
                profile.reserve(res[jid], job.requested, job.demand)
        self.dirty = False
        for job in self.queue:  # reservations to the jobs whose XF reached the threshold
            if job.id not in res and self._due(job) <= now:
                t = profile.earliest_start(job.requested, job.demand, now)
                profile.reserve(t, job.requested, job.demand)
                res[job.id] = t
                self._promises.setdefault(job.id, t)
        started = [job for job in self.queue if res.get(job.id) == now]
        for job in started:
            del res[job.id]
            plan.start(job, now, reserved=True)
        waiting = [job for job in self.queue if job.id in res] if started else self.queue
        fits = profile.fits

        def admissible(job: Job) -> bool:
            return job.id not in res and fits(now, job.requested, job.demand)

        started += plan.fill(waiting, now, admissible, self.rule)
        if started:
            gone = {j.id for j in started}
            self.queue = [j for j in self.queue if j.id not in gone]
            for job in started:
                c = category(job)
                self._xf_sum[c] += (now - job.submit + job.requested) / job.requested
                self._xf_n[c] += 1
        return started

    def next_wakeup(self, now: int) -> int | None:
        # a reservation's start, and the instant a waiting job's XF reaches its threshold,
        # may be instants at which no event happens
        times = [t for t in self.res.values() if t > now]
        times += [d for j in self.queue if j.id not in self.res and (d := self._due(j)) > now]
        o = self.plan.next_overdue()
        if o is not None:
            times.append(o)
        return min(times, default=None)


class SelectiveReservation(Predicted, _SelectivePlan):
    """Selective reservation backfilling (Srinivasan, Kettimuthu, Subramani &
    Sadayappan, JSSPP 2002; module docstring): a waiting job gets a reservation once its
    expansion factor reaches the threshold.

    Parameters
    ----------
    threshold : float
        The expansion factor (>= 1) at which a job gets a reservation (Selective-Fixed).
        1 gives every job a reservation at its arrival: with exact estimates that is
        conservative backfilling's schedule (tested); after an early end they may
        differ, as reservations are re-placed before the new arrivals get theirs (in
        conservative backfilling, after).
    adaptive : bool
        Selective-Adaptive: each job category's threshold is the mean XF at start of its
        jobs started so far (``threshold`` until one has).
    predictor, correction : str
        Plan with runtime predictions instead of the requests
        (:mod:`heuristics.predictors`); then no guarantee is declared.
    """

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none", ties: str = "first",
                 threshold: float = 2.0, adaptive: bool = False, predictor: str = "user",
                 correction: str | None = None) -> None:
        super().__init__(select=select, window=window, fullness=fullness,
                         bl_fallback=bl_fallback, bl_fullness=bl_fullness, ties=ties,
                         threshold=threshold, adaptive=adaptive)
        self._init_prediction(predictor, correction)


SelectiveReservation.__doc__ = (SelectiveReservation.__doc__ or "") + _OPTIONS_DOC
