"""Runtime predictors for the backfilling policies: a pluggable component that changes
what a policy *plans* with, never what the machine does.

A batch policy plans with estimated ends (``sim.batch.planner``): by default the user's
requested time, at which the simulator kills the job. A predictor replaces that estimate
in the policy's planning by a prediction made at the job's arrival; the simulator still
runs the job for its actual runtime and kills it at its request. Predictions only change
planning: which jobs backfill, when the head's shadow time falls, the order of the SJBF
candidates.

Predictors (option ``predictor``):

``user``
    The user's requested time (no prediction: the policy is its plain self).
``last2``
    Tsafrir, Etsion & Feitelson, "Backfilling using system-generated predictions rather
    than user runtime estimates", IEEE TPDS 18(6), 2007: the average of the actual run
    lengths of the same user's two most recently *ended* jobs (rounded up to whole
    seconds), capped by the job's own request (it is killed there) and at least 1 s. A
    user with fewer than two ended jobs, or an unknown user (``Job.user == -1``), gets
    the request. A job killed at its request ran its request.
``actual``
    Perfect predictions: ``min(runtime, requested)`` (at least 1 s). Not a real
    scheduler's knowledge: the reference point the prediction literature compares with.

Correction (option ``correction``; only with ``last2``, the predictor that can be
exceeded): a running job that outlives its prediction gets a longer one, and the policy
re-plans (EASY recomputes its shadow time, conservative re-places its reservations):

``steps`` (default)
    The prediction becomes the first prediction plus the next step of 1 min, 5 min,
    15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h, capped by the request, and
    the request after the last step. The reading chosen for Tsafrir et al.'s incremental
    correction: the paper's text was not at hand; the step table is the one of the pyss
    corrector written for EASY++ (predictsim's ``common_correctors.tsafrir``).
``estimate``
    The prediction becomes the request at once.

A prediction-driven plan is not a guarantee in the user-estimate sense: a backfilled job
predicted to end before the head's shadow time may run to its request and delay the
head. Policies planning with a predictor other than ``user`` therefore declare no
reservation guarantee (``guarantees()``) and promise nothing.

Times are integer seconds.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence
from dataclasses import replace

from instances.job import Job

__all__ = ["PREDICTORS", "CORRECTIONS", "STEPS", "Last2", "Actual", "make_predictor",
           "Predicted"]

PREDICTORS = ("user", "last2", "actual")
CORRECTIONS = ("steps", "estimate")
#: the increments (s) of the ``steps`` correction, after the first, second, ... miss
STEPS = (60, 300, 900, 1800, 3600, 7200, 18000, 36000, 72000, 180000, 360000)


class Last2:
    """Tsafrir, Etsion & Feitelson's prediction: the mean run length (s) of the user's
    last two ended jobs, capped by the request (module docstring)."""

    name = "last2"

    def reset(self) -> None:
        """Forget every user's history."""
        self.history: dict[int, deque[int]] = {}

    def predict(self, job: Job) -> int:
        """The prediction (s) for ``job`` at its arrival, in ``[1, job.requested]``."""
        last = self.history.get(job.user)
        if last is None or len(last) < 2:
            return job.requested
        return max(1, min(job.requested, -(-(last[0] + last[1]) // 2)))

    def observe(self, job: Job, ran: int) -> None:
        """``job`` ended after running ``ran`` s."""
        if job.user >= 0:
            self.history.setdefault(job.user, deque(maxlen=2)).append(ran)


class Actual:
    """Perfect predictions: the job's own run length (module docstring)."""

    name = "actual"

    def reset(self) -> None:
        return None

    def predict(self, job: Job) -> int:
        """``min(runtime, requested)`` (s), at least 1."""
        return max(1, min(job.runtime, job.requested))

    def observe(self, job: Job, ran: int) -> None:
        return None


def make_predictor(predictor: str = "user", correction: str | None = None
                   ) -> Last2 | Actual | None:
    """The predictor named ``predictor`` (None for ``"user"``: plan with the request).

    ValueError naming the option on an unknown name, or on a ``correction`` given with
    the ``user`` or ``actual`` predictor (neither is ever exceeded before the request, so
    a correction would not act).
    """
    if predictor not in PREDICTORS:
        raise ValueError(f"predictor must be one of {PREDICTORS}, got {predictor!r}")
    if correction is not None and correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    if correction is not None and predictor in ("user", "actual"):
        raise ValueError(f"correction={correction!r} needs the predictor 'last2' (a "
                         f"{predictor!r} prediction is never exceeded before the request: "
                         "nothing to correct)")
    if predictor == "user":
        return None
    return Last2() if predictor == "last2" else Actual()


def corrected(job: Job, first: int, misses: int, elapsed: int, correction: str) -> int:
    """The new prediction (s) of ``job`` after its ``misses``-th miss (1, 2, ...), its first
    prediction ``first`` (s), having run ``elapsed`` s: longer than ``elapsed``, at most
    the request."""
    if correction == "estimate" or misses > len(STEPS):
        return job.requested
    return min(job.requested, max(first + STEPS[misses - 1], elapsed + 1))


class Predicted:
    """Mixin for a policy planned with one :class:`sim.batch.planner.Planner` (``self.plan``)
    that plans with predicted run lengths instead of requests (module docstring).

    The policy below this mixin sees a planning copy of every job whose ``requested`` is
    the prediction; the simulator gets back the jobs as given. A running job that
    outlives its prediction is reported to the policy below as an overrun
    (``on_overrun``) with the remaining predicted time as its ``requested``, so the
    planner extends its estimated end to the corrected prediction and the policy
    re-plans as it does for an overrun. With ``predictor="user"`` every method is the
    policy's own.
    """

    predictor: Last2 | Actual | None = None  # None: plan with the requests
    correction = "steps"

    def _init_prediction(self, predictor: str, correction: str | None) -> None:
        self.predictor = make_predictor(predictor, correction)
        self.correction = correction or "steps"
        self.params.update(predictor=predictor, correction=correction)
        if self.predictor is not None:
            self.name = f"{self.name}+{predictor}"
            return
        # No predictor: the event methods are the policy's own, bound on the instance, so
        # the Python engine runs no frame of this mixin per event (measured: 7-8% of EASY's
        # and conservative's CPU on KTH-SP2). A subclass's own override is left in place.
        for m in _PASS_THROUGH:
            if getattr(type(self), m) is getattr(Predicted, m):
                setattr(self, m, getattr(super(), m))

    def compiled_kernels(self) -> tuple[tuple[str, str], ...]:
        if self.predictor is not None:
            return ()  # the compiled engine plans with the requests
        return super().compiled_kernels()  # type: ignore[misc]

    def reset(self, machine) -> None:
        super().reset(machine)  # type: ignore[misc]
        if self.predictor is None:
            return
        self.predictor.reset()
        self._given: dict[int, Job] = {}   # job id -> the job as the simulator gave it
        self._first: dict[int, int] = {}   # job id -> its first prediction (s)
        self._misses: dict[int, int] = {}  # running job id -> predictions it outlived
        self._began: dict[int, int] = {}   # running job id -> start (s)
        self._ends: list[tuple[int, int]] = []  # heap (predicted end, id) of running jobs

    def guarantees(self) -> frozenset[str]:
        if self.predictor is not None:
            return frozenset()  # predictions are no guarantee in the request's sense
        return super().guarantees()  # type: ignore[misc]

    def promises(self) -> dict[int, int]:
        if self.predictor is not None:
            return {}
        return super().promises()  # type: ignore[misc]

    def on_arrival(self, job: Job, now: int) -> None:
        if self.predictor is None:
            return super().on_arrival(job, now)  # type: ignore[misc]
        p = self.predictor.predict(job)
        self._given[job.id] = job
        self._first[job.id] = p
        planned = job if p == job.requested else replace(job, requested=p)
        super().on_arrival(planned, now)  # type: ignore[misc]

    def on_end(self, job: Job, now: int) -> None:
        if self.predictor is None:
            return super().on_end(job, now)  # type: ignore[misc]
        self.predictor.observe(job, now - self._began.pop(job.id))
        self._misses.pop(job.id, None)
        del self._given[job.id], self._first[job.id]
        super().on_end(job, now)  # type: ignore[misc]

    def on_overrun(self, job: Job, now: int) -> None:
        if self.predictor is None:
            return super().on_overrun(job, now)  # type: ignore[misc]
        # past its request (jobs not killed): the policy's own overrun rule, by requests
        self.plan.running[job.id] = job  # type: ignore[attr-defined]
        super().on_overrun(job, now)  # type: ignore[misc]

    def schedule(self, now: int) -> Sequence[Job]:
        if self.predictor is None:
            return super().schedule(now)  # type: ignore[misc]
        self._correct(now)
        given = self._given
        out = []
        for planned in super().schedule(now):  # type: ignore[misc]
            job = given[planned.id]
            self._began[job.id] = now
            if planned.requested < job.requested:
                heapq.heappush(self._ends, (now + planned.requested, job.id))
            out.append(job)
        return out

    def _correct(self, now: int) -> None:
        """Give every running job past its predicted end (s) a corrected prediction."""
        ends, plan = self._ends, self.plan  # type: ignore[attr-defined]
        while ends and ends[0][0] <= now:
            end, jid = heapq.heappop(ends)
            if jid not in self._began or plan.est_end.get(jid) != end:
                continue  # ended, or already re-planned
            job, start = self._given[jid], self._began[jid]
            misses = self._misses.get(jid, 0) + 1
            self._misses[jid] = misses
            new = corrected(job, self._first[jid], misses, now - start, self.correction)
            planned = replace(job, requested=start + new - now)  # the rest, from now
            plan.running[jid] = planned
            super().on_overrun(planned, now)  # type: ignore[misc]
            if new < job.requested:
                heapq.heappush(ends, (start + new, jid))

    def next_wakeup(self, now: int) -> int | None:
        w = super().next_wakeup(now)  # type: ignore[misc]
        if self.predictor is None or not self._ends:
            return w
        e = self._ends[0][0]
        return e if w is None or e < w else w


#: the event methods that :class:`Predicted` hands straight to the policy without a predictor
_PASS_THROUGH = ("on_arrival", "on_end", "on_overrun", "schedule", "next_wakeup")
