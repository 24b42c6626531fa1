"""Batch schedulers: FCFS, EASY and conservative backfilling, unconstrained selection,
with the job-selection rules FF, BL and BB.

All follow the ``sim.batch.policy.Policy`` protocol: they see only what a real scheduler
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

- SJBF: EASY whose backfill candidates are tried shortest (estimated) job first
  (Srinivasan et al. 2002; Tsafrir, Etsion & Feitelson 2007); EASY++ (Tsafrir, Etsion &
  Feitelson 2007): SJBF planned with the user's last-two-jobs predictions, corrected when
  a running job outlives its prediction. EASY, SJBF and conservative take a ``predictor``
  (:mod:`heuristics.predictors`): predictions change only the plan, never when the
  simulator kills a job, and a policy planning with them declares no guarantee.
  Selective reservation is in :mod:`heuristics.selective`.

- Unconstrained (UNC, Leinberger, Karypis & Kumar, Fig. 1): no FCFS phase and no
  reservation; at every decision the selection rule picks among all waiting jobs that
  fit now, one at a time, until none fits. Guarantees nothing (a job may starve).

Job selection: every policy takes ``select`` (``"ff"``, ``"bl"``, ``"bb"``) and the rules'
parameters (``window``, ``fullness``, ``bl_fallback``, ``bl_fullness``, ``ties``), defined in
:mod:`heuristics.selection` (Leinberger, Karypis & Kumar's FF, BL and BB); the selection acts
only among backfill candidates, never in the FCFS phase (AMB-1.4 (a)).

Where the rule acts in each policy: EASY picks among the jobs that fit now and do not
delay the head's reservation (every resource checked until the job's estimated end,
AMB-1.7); after each start the candidates are re-tested. Conservative with FF re-places
waiting jobs in arrival order after an early end (its compression: each job at its first
fit), as above; with BL or BB, after an early end and before that compression, the rule
picks one at a time among the waiting jobs that can start now without delaying any
reservation (no promise is ever broken), then the rest is compressed in arrival order.
With exact estimates nothing ends early, so every rule gives the same conservative
schedule (the paper simulated FF-CONS only). FCFS never selects: ``select`` is accepted
and recorded for uniform sweeps but changes nothing. Every choice is recorded in the
policy's ``params``.

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
from functools import partial
from itertools import compress as _select
from operator import attrgetter, eq, itemgetter, not_

import numpy as np

from heuristics.predictors import Predicted
from heuristics.selection import make_selection
from instances.job import Job
from sim.batch.planner import Planner
from sim.batch.policy import (
    ARRIVAL_RESERVATION,
    BATCH_KERNELS,
    FCFS_ORDER,
    HEAD_RESERVATION,
    BasePolicy,
    MachineInfo,
)


class _Selecting:
    """Mixin: the selection options every policy takes (see the module docstring), and
    the waiting queue in arrival order that each of them keeps."""

    base_name = "policy"

    def compiled_kernels(self) -> tuple[tuple[str, str], ...]:
        """The compiled engine's kernels for this policy (``sim.batch.policy``): the batch
        kernel for FCFS, EASY, Conservative and Unconstrained themselves, none for a
        subclass (the compiled engine runs exactly these classes)."""
        return BATCH_KERNELS if type(self) in (FCFS, EASY, Conservative, Unconstrained) else ()

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none",
                 ties: str = "first") -> None:
        self._init_selection(select, window, fullness, bl_fallback, bl_fullness, ties)

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)  # type: ignore[misc]
        self._check_window(machine)
        self.queue: list[Job] = []

    def on_arrival(self, job: Job, now: int) -> None:
        self.queue.append(job)

    def _init_selection(self, select: str, window: int, fullness: str, bl_fallback: str,
                        bl_fullness: str, ties: str) -> None:
        self.rule = make_selection(select, window=window, fullness=fullness,
                                   bl_fallback=bl_fallback, bl_fullness=bl_fullness, ties=ties)
        self.params = {"select": select, "window": window, "fullness": fullness,
                       "bl_fallback": bl_fallback, "bl_fullness": bl_fullness, "ties": ties}
        if select == "ff":
            self.name = self.base_name
        elif select == "bl":
            self.name = f"{self.base_name}-bl" + (f"{window}" if window != 1 else "")
        else:
            self.name = f"{self.base_name}-bb" + ("" if fullness == "mult" else "-nofull")

    def _check_window(self, machine: MachineInfo) -> None:
        w = self.params["window"]
        if self.params["select"] == "bl" and w > len(machine.capacity):
            raise ValueError(f"{self.name}: window {w} exceeds the number of resources "
                             f"K = {len(machine.capacity)}")


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


_OPTIONS_DOC = """
    Parameters
    ----------
    select : {"ff", "bl", "bb"}
        Job-selection rule (module docstring).
    window : int
        BL's window ``w`` (>= 0, at most K).
    fullness : {"mult", "none"}
        BB's fullness modifier (AMB-1.2).
    bl_fallback : {"ff", "next", "stop"}
        BL when no candidate matches (AMB-1.5).
    bl_fullness : {"none", "largest"}
        Fullness for BL (AMB-1.3).
    ties : {"first", "last"}
        Equal utilisations/requirements: lower or higher resource index first (AMB-1.6).
"""


class FCFS(_Selecting, _PlannedPolicy):
    """First come, first served without backfilling (the options are recorded only)."""

    name = "fcfs"
    base_name = "fcfs"

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none",
                 ties: str = "first") -> None:
        self._init_selection(select, window, fullness, bl_fallback, bl_fullness, ties)
        self.name = "fcfs"  # FCFS never selects

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.queue: deque[Job] = deque()  # popped from the left

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


class _EASYPlan(_Selecting, _PlannedPolicy):
    """EASY's planning on the requests (or, under :class:`EASY`'s predictor, on the
    predictions): see :class:`EASY`."""

    name = "easy"
    base_name = "easy"

    def _backfill_order(self, waiting: list[Job]) -> list[Job]:
        """The backfill candidates (the queue after its head) in the order tried: queue
        order."""
        return waiting

    def guarantees(self) -> frozenset[str]:
        # the head's reservation holds when no job outlives its request
        return frozenset({HEAD_RESERVATION}) if self.machine.kill_at_request else frozenset()

    def _fcfs_phase(self, now: int) -> tuple[list[Job], int | None]:
        """Start queue heads while they fit; reserve the first job that does not (its
        shadow time, promised the first time it is the head). Returns the jobs started
        and the shadow time (None when the queue is empty). Times in seconds."""
        q = self.queue
        plan = self.plan
        profile = plan.profile
        profile.advance(now)
        if plan.overdue:
            plan.extend(plan.overdue_due(now), now)
        started: list[Job] = []
        i = 0
        while i < len(q) and plan.fits_now(q[i]):
            plan.start(q[i], now)
            started.append(q[i])
            i += 1
        if i:
            del q[:i]
        if not q:
            return started, None
        head = q[0]
        shadow = profile.earliest_start(head.requested, head.demand, now)
        if head.id not in self._promises:
            self._promises[head.id] = shadow
        return started, shadow

    def schedule(self, now: int) -> list[Job]:
        started, shadow = self._fcfs_phase(now)
        q = self.queue
        if shadow is None:
            return started
        plan = self.plan
        profile = plan.profile
        head = q[0]
        if len(q) > 1 and plan.free[0] > 0:
            profile.reserve(shadow, head.requested, head.demand)
            fits = profile.fits
            free_at = profile.free_at
            extra = [-1]  # processors free at the shadow time (-1: not computed yet)

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

            more = plan.fill(self._backfill_order(q[1:]), now, admissible, self.rule,
                             before_start=started_one)
            profile.release(shadow, head.requested, head.demand)
            if more:
                gone = {j.id for j in more}
                self.queue = [j for j in q if j.id not in gone]
                started += more
        return started


class EASY(Predicted, _EASYPlan):
    """EASY backfilling (Lifka): one reservation, for the first job in the queue; the
    backfill candidates are chosen by the selection rule, tried in queue order.

    ``predictor`` and ``correction``: plan with runtime predictions instead of the
    requests (:mod:`heuristics.predictors`); then no guarantee is declared.
    """

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none",
                 ties: str = "first", predictor: str = "user",
                 correction: str | None = None) -> None:
        self._init_selection(select, window, fullness, bl_fallback, bl_fullness, ties)
        self._init_prediction(predictor, correction)


class SJBF(EASY):
    """Shortest-job-backfilled-first EASY: the head of the queue gets EASY's reservation
    (Lifka), and the backfill candidates are tried shortest first by their estimated run
    length (the request, or the prediction under ``predictor``), ties in queue order.

    The SJBF ordering compared by Srinivasan, Kettimuthu, Subramani & Sadayappan,
    "Characterization of backfilling strategies for parallel job scheduling" (ICPP
    workshops 2002) and used by EASY++ (Tsafrir, Etsion & Feitelson, IEEE TPDS 2007).
    With the requests it keeps EASY's guarantee (a backfilled job never delays the
    head's reservation, whatever the order tried); with a selection rule other than FF
    the rule picks among the candidates in this order.
    """

    name = "sjbf"
    base_name = "sjbf"

    def _backfill_order(self, waiting: list[Job]) -> list[Job]:
        """The backfill candidates shortest (estimated) first, ties in queue order."""
        return sorted(waiting, key=_REQUESTED)


class EASYPlusPlus(SJBF):
    """EASY++ (Tsafrir, Etsion & Feitelson, "Backfilling using system-generated
    predictions rather than user runtime estimates", IEEE TPDS 18(6), 2007): SJBF
    planned with the ``last2`` predictions (the mean run length of the user's last two
    ended jobs, capped by the request) and the incremental ``steps`` correction when a
    running job outlives its prediction (:mod:`heuristics.predictors`).

    The head's reservation is computed from predictions, so it is no guarantee in the
    request's sense: EASY++ declares none and promises nothing. The options are
    :class:`EASY`'s, with ``predictor="last2"`` as the default.
    """

    name = "easy++"
    base_name = "easy++"

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none",
                 ties: str = "first", predictor: str = "last2",
                 correction: str | None = None) -> None:
        super().__init__(select=select, window=window, fullness=fullness,
                         bl_fallback=bl_fallback, bl_fullness=bl_fullness, ties=ties,
                         predictor=predictor, correction=correction)
        if predictor == "last2":
            self.name = self.name.removesuffix("+last2")  # "easy++" says its predictor


COMPRESSION = ("arrival", "start", "now", "none")
_COMPILED_FROM = 8  # queue length from which the compiled pass pays (measured: 4-16 equal)
# Importing numba and loading the cached kernel takes about 0.45 s once per process:
# until then the Python pass runs, and the import is made only after this many job
# re-checks in passes of _COMPILED_FROM+ jobs (the KTH year never gets there; SDSC-BLUE
# after about 2% of its log).
_LOAD_AFTER = 100_000
_KERNEL: list = []  # [compress function or None] once the import was tried
_ID, _REQUESTED, _DEMAND = attrgetter("id"), attrgetter("requested"), attrgetter("demand")
_FIRST = itemgetter(0)


def _compress_kernel():
    """``heuristics.compress_kernel.compress``, or None when numba is not installed."""
    if not _KERNEL:
        try:
            from heuristics.compress_kernel import compress
        except ImportError:
            compress = None
        _KERNEL.append(compress)
    return _KERNEL[0]


def _earlier_start(times: list[int], free: list[list[int]], duration: int,
                   demand: Sequence[int], old: int) -> int | None:
    """Earliest start before ``old`` (s) at which ``demand`` fits for ``duration`` s in the
    profile ``times``/``free`` once the job's own reservation ``[old, old + duration)``
    is given back; None when there is none. The profile starts at now (``times[0]``) and
    has breakpoints at ``old`` and ``old + duration`` (the reservation's own)."""
    n = len(times)
    own_end = old + duration
    K = len(free)
    i = 0
    start = times[0]
    if K == 1:
        f0 = free[0]
        d0 = demand[0]
        while start < old:
            end = start + duration
            j = i
            while j < n:
                tj = times[j]
                if tj >= end:
                    return start
                if f0[j] < d0 and not (old <= tj < own_end):
                    break
                j += 1
            else:
                return start
            i = j + 1
            if i >= n:
                return None
            start = times[i]
        return None
    while start < old:
        end = start + duration
        j = i
        ok = True
        while j < n:
            tj = times[j]
            if tj >= end:
                break
            if not (old <= tj < own_end):
                for k in range(K):
                    if free[k][j] < demand[k]:
                        ok = False
                        break
                if not ok:
                    break
            j += 1
        if ok:
            return start
        i = j + 1
        if i >= n:
            return None
        start = times[i]
    return None


class _ConservativePlan(_Selecting, _PlannedPolicy):
    """Conservative backfilling's planning: see :class:`Conservative`."""

    name = "conservative"
    base_name = "conservative"

    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none",
                 ties: str = "first", compression: str = "arrival",
                 compiled: bool = True) -> None:
        self._init_selection(select, window, fullness, bl_fallback, bl_fullness, ties)
        if compression not in COMPRESSION:
            raise ValueError(f"compression must be one of {COMPRESSION}, got {compression!r}")
        self.compression = compression
        self.compiled = compiled

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)  # empty queue, in arrival order
        self.res: dict[int, int] = {}  # waiting job id -> reserved start (s)
        self.dirty = False
        self._rechecks = 0  # jobs re-checked by Python passes of _COMPILED_FROM+ jobs

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
        """Re-place every waiting job, in arrival order, at its earliest start (never
        later than its reservation). Compiled (``heuristics.compress_kernel``) when
        numba is installed and ``compiled`` is true; the same schedule either way."""
        queue = self.queue
        if self.compression == "start":
            res = self.res
            queue = sorted(queue, key=lambda j: res[j.id])  # stable: ties in arrival order
        if self.compiled and len(queue) >= _COMPILED_FROM:
            if _KERNEL or self._rechecks >= _LOAD_AFTER:
                kernel = _compress_kernel()
                if kernel is not None:
                    self._compress_compiled(kernel, queue, now)
                    return
            self._rechecks += len(queue)
        self._compress_python(queue, now)

    def _compress_compiled(self, kernel, queue: list[Job], now: int) -> None:
        """The compiled pass over ``queue`` (in processing order) at ``now`` (s)."""
        profile = self.plan.profile
        res = self.res
        K = self.plan.K
        q = len(queue)
        n = len(profile.times)
        room = n + 4 * q + 2
        times = np.empty(room, np.int64)
        times[:n] = profile.times
        free = np.empty((K, room), np.int64)
        free[:, :n] = profile.free
        # map() with C getters: no Python frame per job (measured: 1.5% faster)
        before = np.fromiter(map(res.__getitem__, map(_ID, queue)), np.int64, q)
        after = before.copy()
        dur = np.fromiter(map(_REQUESTED, queue), np.int64, q)
        if K == 1:
            dem = np.fromiter(map(_FIRST, map(_DEMAND, queue)), np.int64, q).reshape(q, 1)
        else:
            dem = np.array(list(map(_DEMAND, queue)), np.int64).reshape(q, K)
        n = kernel(times, free, n, now, after, dur, dem, self.compression == "now",
                   np.array(self.plan.capacity, np.int64))
        if n < 0:  # cannot happen on a consistent profile: say what broke
            from heuristics.compress_kernel import ERRORS
            raise ValueError(f"{self.name}: compression at t={now} failed ({ERRORS[n]})")
        profile.times = times[:n].tolist()
        profile.free = free[:, :n].tolist()
        for i in np.flatnonzero(after != before).tolist():
            res[queue[i].id] = int(after[i])

    def _compress_python(self, queue: list[Job], now: int) -> None:
        """The pure-Python pass over ``queue`` (in processing order) at ``now`` (s)."""
        profile = self.plan.profile
        res = self.res
        K = self.plan.K
        times, free = profile.times, profile.free
        for job in queue:
            old = res[job.id]
            if old == now:
                continue
            if old >= 0:
                # A job can move earlier only to an instant before its reservation where
                # its demand is free already: skip the re-placement when there is none.
                b = bisect_left(times, old)
                if K == 1:
                    if max(free[0][:b]) < job.demand[0]:
                        continue
                elif any(max(free[k][:b]) < job.demand[k] for k in range(K)):
                    continue
                # Its earliest start with its own reservation given back is ``old`` (still
                # free) or earlier: search only before ``old``, and touch the profile
                # only when the job moves (the same result as release, search, reserve).
                t = _earlier_start(times, free, job.requested, job.demand, old)
                if t is None or (self.compression == "now" and t != now):
                    continue  # "now": only jobs that can start at once move
                profile.release(old, job.requested, job.demand)
            else:
                t = profile.earliest_start(job.requested, job.demand, now)
            profile.reserve(t, job.requested, job.demand)
            res[job.id] = t

    def schedule(self, now: int) -> list[Job]:
        plan = self.plan
        plan.profile.advance(now)
        if plan.overdue:
            self._extend_overdue(now)
        started: list[Job] = []
        if self.dirty:
            if not self.rule.first_fit:
                # the jobs reserved at now first (so the rule sees their use), then the
                # rule's choices among the jobs that can start now delaying nobody
                started = self._start_reserved(now)
                started += self._select_now(now)
            self._compress(now)
            self.dirty = False
        return started + self._start_reserved(now)

    def _start_reserved(self, now: int) -> list[Job]:
        """Start every waiting job whose reservation is ``now`` (s)."""
        res = self.res
        if now not in res.values():  # a scan in C; the loop below is the slow part
            return []
        plan = self.plan
        queue = self.queue
        # which waiting jobs are reserved at now, with C getters (no Python frame per
        # waiting job: this runs at every decision over the whole queue)
        due = list(map(partial(eq, now), map(res.__getitem__, map(_ID, queue))))
        started = list(_select(queue, due))
        self.queue = list(_select(queue, map(not_, due)))
        for job in started:
            del res[job.id]
            plan.start(job, now, reserved=True)
        return started

    def _select_now(self, now: int) -> list[Job]:
        """Start, one at a time by the selection rule, waiting jobs that can start now
        without delaying any reservation (their own reservation taken out)."""
        plan = self.plan
        profile = plan.profile
        res = self.res
        K = plan.K

        def admissible(job: Job) -> bool:
            # fits on [now, now + requested) with its own reservation [r, r + requested)
            # given back
            r = res[job.id]
            if r == now:
                return False  # starts anyway, reserved
            times, free = profile.times, profile.free
            end = now + job.requested
            r_end = r + job.requested if r >= 0 else now
            i = bisect_left(times, now + 1) - 1
            n = len(times)
            d = job.demand
            while i < n and times[i] < end:
                own = r >= 0 and times[i] >= r and times[i] < r_end
                for k in range(K):
                    if free[k][i] + (d[k] if own else 0) < d[k]:
                        return False
                i += 1
            return True

        def take_out(job: Job) -> None:
            r = res.pop(job.id)
            if r >= 0:
                profile.release(r, job.requested, job.demand)

        started = plan.fill(self.queue, now, admissible, self.rule, before_start=take_out)
        if started:
            gone = {j.id for j in started}
            self.queue = [j for j in self.queue if j.id not in gone]
        return started

    def next_wakeup(self, now: int) -> int | None:
        # A reservation may sit at the end of a later job's old reservation that
        # compression moved earlier, an instant at which no event happens: wake up there.
        w = min(self.res.values(), default=None)
        o = self.plan.next_overdue()
        if o is not None and (w is None or o < w):
            return o
        return w


class Conservative(Predicted, _ConservativePlan):
    """Conservative backfilling (Mu'alem & Feitelson) with compression on early ends;
    with BL or BB the rule picks who takes capacity freed early (module docstring).

    Parameters
    ----------
    select, window, fullness, bl_fallback, bl_fullness, ties
        The job selection rule (see ``EASY``).
    compression : {"arrival", "start", "now", "none"}
        How the schedule is compressed when a job ends before its requested time:
        waiting jobs re-placed at their earliest start in arrival order (default, as
        above), in order of their current reserved start, only the jobs that can start
        at once ("now"; the others keep their reservations), or not at all (every job
        keeps the reservation it got at arrival; later arrivals may still backfill into
        the freed hole). The last three are readings of the paper's simulator that
        Talby & Feitelson (IPPS'99) do not rule out; see ``sim.experiments.talby.tables``.
    compiled : bool
        Run the compression pass compiled (``heuristics.compress_kernel``, numba) when
        numba is installed (default); False forces the pure-Python pass. The schedule
        is the same either way.
    predictor, correction : str
        Plan with runtime predictions instead of the requests
        (:mod:`heuristics.predictors`); then no guarantee is declared.
    """


    def __init__(self, *, select: str = "ff", window: int = 1, fullness: str = "mult",
                 bl_fallback: str = "ff", bl_fullness: str = "none",
                 ties: str = "first", compression: str = "arrival",
                 compiled: bool = True, predictor: str = "user",
                 correction: str | None = None) -> None:
        super().__init__(select=select, window=window, fullness=fullness,
                         bl_fallback=bl_fallback, bl_fullness=bl_fullness, ties=ties,
                         compression=compression, compiled=compiled)
        self._init_prediction(predictor, correction)


class Unconstrained(_Selecting, _PlannedPolicy):
    """UNC: no FCFS phase, no reservation; the selection rule picks among every waiting
    job that fits now, one at a time (Leinberger, Karypis & Kumar, Fig. 1)."""

    name = "unconstrained"
    base_name = "unconstrained"

    def schedule(self, now: int) -> list[Job]:
        plan = self.plan
        plan.extend(plan.overdue_due(now), now)
        if not self.queue:
            return []
        started = plan.fill(self.queue, now, lambda job: True, self.rule)
        if started:
            gone = {j.id for j in started}
            self.queue = [j for j in self.queue if j.id not in gone]
        return started


for _cls in (FCFS, EASY, SJBF, EASYPlusPlus, Conservative, Unconstrained):
    _cls.__doc__ = (_cls.__doc__ or "") + "\n" + _OPTIONS_DOC
