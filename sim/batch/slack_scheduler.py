"""The slack-based priority scheduler of Talby & Feitelson (IPPS'99) as a simulator policy.

The scheduler keeps a complete schedule of the waiting jobs (every waiting job has a
scheduled start ``te``, like conservative backfilling) and changes it only through two
operations, both delegated to a pluggable *inserter* (``InsertionProblem ->
InsertionSchedule``, see ``sim.problems.insertion``):

``insert(j)`` (at j's arrival)
    The inserter returns new start times for j and for the waiting jobs, each waiting
    job delayed by at most its current slack. The scheduler applies them and charges
    every waiting job its delay: ``s_i -= t_i`` with ``t_i = new start - old start``
    (a job moved earlier gets slack back, so ``te_i + s_i`` never changes).
``remove`` (a job ended before its estimated end)
    The same re-optimisation with the paper's dummy timeless job (``new=None``): the
    waiting jobs may move into the freed capacity, never later than their slack.

``schedule(now)`` (the paper's *tick*) starts every waiting job whose ``te`` has come,
and ``next_wakeup`` returns the next ``te`` so the simulator calls back exactly then.

Per job the scheduler keeps: processors n, estimate t (the requested time), user and
political priorities UP and PP (the ``priorities`` table, job id -> (UP, PP), built
for a scenario by ``instances.priorities.priorities_of``; ``default_priority`` for a job
not in it), scheduler priority SP, weighted priority
``p = (UP + PP + SP) / 3``, initial slack ``s0 = (1 - p) * SF * AWT`` (infinite when
``PP = -inf``, the over-quota case), current slack s and scheduled start te.

Choices the paper leaves open (documented, and parameters where they change results):

- SP starts at 1/2. After j is placed for the first time, ``SP = min((te - now) /
  (2 AWT), 1)`` and p and s0 are recomputed once, without moving j. Whether j's current
  slack is reset to the new s0 is the parameter ``reset_slack`` (default True: j has not
  been delayed yet, so ``s = s0`` holds before and after). With ``reset_slack=False``
  j keeps the slack of its first placement.
- UP and PP enter both the price's ratio ``p_i / p_j`` and the initial slack s0 (the
  paper). The parameter ``priority_in`` keeps them in one only, to tell the two effects
  apart: ``"price"`` computes s0 from ``p = SP / 3`` (UP = PP = 0), ``"slack"`` gives
  the price ``p = SP / 3``. Measured readings, not the paper's rule.
- The promise checked by the validator (``promises()``) is ``floor(te_first + s)``
  taken right after that recomputation: since ``te + s`` is invariant under the slack
  accounting above, no later operation can start j after it. Infinite slack promises
  nothing.
- Over-quota jobs (``PP = -inf``) get infinite slack and, in the price's ratio
  ``p_i / p_j``, the priority 0 (the lowest representable one).
- Several ends at the same instant trigger one ``remove`` re-optimisation, run before the
  arrivals of that instant are inserted (or before the tick when nothing arrives).
- ``overrun="run"`` (jobs may outlive their estimate): on the simulator's overrun notice
  the job's estimated end is extended to ``now + requested`` (as the reference
  backfilling policies do), again each time the extended estimate passes while the job
  still runs (``next_wakeup`` calls back then), and, because the waiting schedule may now
  overlap it, every waiting job is re-placed greedily in order of its scheduled start at
  its earliest feasible time with slack charged as usual, but never below 0 (a job
  pushed past its slack there has used it up); promises can be broken in that mode (the
  policy declares no guarantee then, so the validator checks none).
- Only processors are scheduled (K = 1); a machine with more resources raises ValueError.

Times are integer seconds; slack values are real seconds.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain

import numpy as np

from instances.job import Job
from sim.batch.planner import Planner
from sim.batch.policy import (
    SLACK_BOUND,
    SLACK_KERNELS,
    SLACK_SEARCH_KERNELS,
    BasePolicy,
    MachineInfo,
)
from sim.problems.insertion import (
    InsertionProblem,
    InsertionSchedule,
    NewJob,
    RunningJob,
    WaitingJob,
)

Inserter = Callable[[InsertionProblem], InsertionSchedule]
PRIORITY_IN = ("both", "price", "slack")


@dataclass
class _Entry:
    """Mutable scheduler state of one waiting job."""

    job: Job
    up: float
    pp: float
    sp: float
    p: float  # weighted priority used in the price, in [0, 1]
    s0: float  # initial slack (s), may be inf
    s: float  # current slack (s), may be inf
    te: int  # scheduled start (s)
    view: WaitingJob | None = None  # the job as the inserter sees it, while (te, s) hold
    row: tuple[int, int, int, int] = (0, 0, 0, 0)  # id, processors, requested, arrival


def _check_priorities(priorities: Mapping[int, tuple[float, float]] | None
                      ) -> dict[int, tuple[float, float]]:
    """A validated copy of a priority table ``{job id: (UP, PP)}`` (ValueError naming the
    job otherwise): UP and PP in [0, 1], PP may be ``-inf``."""
    if priorities is None:
        return {}
    if not isinstance(priorities, Mapping):
        raise ValueError("priorities must be a mapping job id -> (UP, PP) "
                         f"(instances.priorities.priorities_of), got {type(priorities).__name__}")
    out: dict[int, tuple[float, float]] = {}
    for jid, pair in priorities.items():
        try:
            up, pp = (float(v) for v in pair)
        except (TypeError, ValueError):
            raise ValueError(f"priorities of job {jid}: expected (UP, PP), got {pair!r}") from None
        if not 0.0 <= up <= 1.0:
            raise ValueError(f"priorities of job {jid}: UP must be in [0, 1], got {up!r}")
        if not (0.0 <= pp <= 1.0 or pp == -math.inf):
            raise ValueError(f"priorities of job {jid}: PP must be in [0, 1] or -inf, "
                             f"got {pp!r}")
        out[jid] = (up, pp)
    return out


def _real(name: str, value: object) -> float:
    """``value`` as a float, or ValueError naming the option ``name`` (a bool or a
    string that is not a number is refused, not read as 1.0 or a crash)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


class SlackScheduler(BasePolicy):
    """Slack-based priority backfilling with a pluggable inserter.

    Parameters
    ----------
    inserter : callable
        ``InsertionProblem -> InsertionSchedule``; it must return a schedule that
        ``sim.problems.insertion.check`` accepts (the scheduler re-checks it when ``check`` is
        True).
    sf : float
        Slack factor SF (dimensionless, >= 0).
    awt : float
        Average wait time AWT used to scale slack, seconds (> 0).
    alpha_u, alpha_t, alpha_p, alpha_f : float
        Exponents of the price, in [0, 1].
    reset_slack : bool
        Reset the current slack to the recomputed s0 after the first placement.
    priorities : mapping of int to (float, float), optional
        UP and PP per job id (``instances.priorities.priorities_of``), each in [0, 1];
        PP may be ``-inf`` (over quota). The scheduler keeps its own copy.
    default_priority : float
        UP and PP of jobs not in ``priorities`` (of every job without it), in [0, 1].
    p_floor, slack_floor : float
        Passed to every ``InsertionProblem``: the clamps of ``p_i / p_j`` and
        ``s0_i / s_i`` in the price (see ``sim.problems.insertion``).
    priority_in : {"both", "price", "slack"}
        Where UP and PP act: the price's ratio and the initial slack (``"both"``, the
        paper), or only one of them (see the module docstring).
    record : bool
        Keep every insertion problem met in ``self.snapshots`` (list of
        ``InsertionProblem``, in the order met).
    check : bool
        Verify every schedule the inserter returns with ``sim.problems.insertion.check``.
    name : str
        Policy name reported in the schedule.
    """

    def __init__(
        self,
        inserter: Inserter,
        *,
        sf: float = 3.0,
        awt: float = 2401.0,
        alpha_u: float = 1.0,
        alpha_t: float = 1.0,
        alpha_p: float = 1.0,
        alpha_f: float = 1.0,
        reset_slack: bool = True,
        priorities: Mapping[int, tuple[float, float]] | None = None,
        default_priority: float = 0.0,
        p_floor: float = 0.01,
        slack_floor: float = 1.0,
        priority_in: str = "both",
        record: bool = False,
        check: bool = False,
        name: str = "slack",
    ) -> None:
        if not callable(inserter):
            raise ValueError(f"inserter must be callable, got {inserter!r}")
        sf, awt = _real("sf", sf), _real("awt", awt)
        if not (math.isfinite(sf) and sf >= 0):
            raise ValueError(f"sf must be a finite number >= 0, got {sf!r}")
        if not (math.isfinite(awt) and awt > 0):
            raise ValueError(f"awt must be a finite number > 0 (seconds), got {awt!r}")
        for nm, v in (("alpha_u", alpha_u), ("alpha_t", alpha_t), ("alpha_p", alpha_p),
                      ("alpha_f", alpha_f), ("default_priority", default_priority)):
            if not (0.0 <= _real(nm, v) <= 1.0):
                raise ValueError(f"{nm} must be in [0, 1], got {v!r}")
        if not (0.0 < _real("p_floor", p_floor) <= 1.0):
            raise ValueError(f"p_floor must be in (0, 1], got {p_floor!r}")
        if not (_real("slack_floor", slack_floor) > 0.0):
            raise ValueError(f"slack_floor must be > 0 (seconds), got {slack_floor!r}")
        if priority_in not in PRIORITY_IN:
            raise ValueError(f"priority_in must be one of {PRIORITY_IN}, got {priority_in!r}")
        self.priority_in = priority_in
        self.priorities = _check_priorities(priorities)
        self.inserter = inserter
        self.sf = sf
        self.awt = awt
        self.alphas = (float(alpha_u), float(alpha_t), float(alpha_p), float(alpha_f))
        self.reset_slack = bool(reset_slack)
        self.default_priority = float(default_priority)
        self.p_floor = float(p_floor)
        self.slack_floor = float(slack_floor)
        self.record = bool(record)
        self.check = bool(check)
        self.name = name
        self.snapshots: list[InsertionProblem] = []
        self.n_insert = 0
        self.n_remove = 0

    # ------------------------------------------------------------------ state
    def reset(self, machine: MachineInfo) -> None:
        if len(machine.capacity) != 1:
            raise ValueError(
                f"the slack scheduler plans processors only (K = 1); machine has "
                f"K = {len(machine.capacity)} resources")
        self.machine = machine
        self.capacity = machine.capacity[0]
        self.plan = Planner(machine)  # running jobs, estimated ends, overruns
        self.waiting: dict[int, _Entry] = {}
        self._run_views: dict[int, RunningJob] = {}  # the running jobs as the inserter sees them
        self._promises: dict[int, int] = {}
        self._remove_due = False
        self.snapshots = []
        self.n_insert = 0
        self.n_remove = 0

    def promises(self) -> dict[int, int]:
        return self._promises

    def compiled_kernels(self) -> tuple[tuple[str, str], ...]:
        """The compiled engine's kernels for this scheduler (``sim.batch.policy``): the
        whole compiled loop, or, when it records or checks its insertion problems, the
        compiled slot search under the Python loop; none for a subclass."""
        if type(self) is not SlackScheduler:
            return ()
        return SLACK_SEARCH_KERNELS if self.record or self.check else SLACK_KERNELS

    def guarantees(self) -> frozenset[str]:
        # the slack bound holds when no job outlives its request (see ``overrun="run"``)
        return frozenset({SLACK_BOUND}) if self.machine.kill_at_request else frozenset()

    def guarantee_terms(self) -> dict[str, dict[str, object]]:
        """The slack bound's terms (``sim.batch.policy.SLACK_BOUND``): a job's slack is
        ``(1 - p) SF AWT`` with ``p`` in [0, 1], so at most ``SF AWT`` seconds, and
        infinite for the over-quota jobs (``PP = -inf`` in the priority table); with an
        inserter whose ``placement`` is ``"breakpoint"`` (the papers' slot search), a new
        job is first placed no later than the end of the current schedule."""
        if SLACK_BOUND not in self.guarantees():
            return {}
        unbounded = sorted(j for j, (_, pp) in self.priorities.items() if pp == -math.inf)
        terms: dict[str, object] = {"max_slack": self.sf * self.awt, "unbounded": unbounded}
        if getattr(self.inserter, "placement", None) == "breakpoint":
            terms["placement"] = "breakpoint"  # the inserter says it places at a slot
        return {SLACK_BOUND: terms}

    def _priority(self, up: float, pp: float, sp: float) -> float:
        """Weighted priority ``(UP + PP + SP) / 3``; -inf for over-quota jobs."""
        if pp == -math.inf:
            return -math.inf
        return (up + pp + sp) / 3.0

    def _split(self, up: float, pp: float, sp: float) -> tuple[float, float]:
        """``(p in the price, p behind s0)`` under ``priority_in``."""
        p = self._priority(up, pp, sp)
        if self.priority_in == "both" or p == -math.inf:
            return p, p
        p_sp = self._priority(0.0, 0.0, sp)
        return (p, p_sp) if self.priority_in == "price" else (p_sp, p)

    def _slack0(self, p: float) -> float:
        """Initial slack ``(1 - p) * SF * AWT`` seconds (inf when p = -inf)."""
        if p == -math.inf:
            return math.inf
        return (1.0 - p) * self.sf * self.awt

    # ------------------------------------------------------------------ problems
    def _running(self, now: int) -> tuple[RunningJob, ...]:
        out = []
        running, est_end = self.plan.running, self.plan.est_end
        views = self._run_views
        for jid in sorted(running):
            end = est_end[jid]
            if end > now:
                v = views.get(jid)
                if v is None or v.end != end:  # built (and checked) once per estimate
                    v = views[jid] = RunningJob(id=jid, n=running[jid].procs, end=end)
                out.append(v)
        return tuple(out)

    def _waiting(self) -> tuple[WaitingJob, ...]:
        out = []
        for jid, e in self.waiting.items():
            v = e.view
            if v is None or v.te != e.te or v.s != e.s:
                v = e.view = WaitingJob(id=jid, n=e.job.procs, t=e.job.requested, te=e.te,
                                        s=e.s, s0=e.s0, p=max(e.p, 0.0), arrival=e.job.submit)
            out.append(v)
        return tuple(out)

    def _problem(self, now: int, new: NewJob | None) -> InsertionProblem:
        a_u, a_t, a_p, a_f = self.alphas
        return InsertionProblem(now=now, capacity=self.capacity, running=self._running(now),
                                waiting=self._waiting(), new=new, alpha_u=a_u, alpha_t=a_t,
                                alpha_p=a_p, alpha_f=a_f, p_floor=self.p_floor,
                                slack_floor=self.slack_floor)

    def _solve(self, problem: InsertionProblem) -> InsertionSchedule:
        if self.record:
            self.snapshots.append(problem)
        sched = self.inserter(problem)
        if self.check:
            from sim.problems import ensure_feasible

            ensure_feasible(problem, sched)
        return sched

    def _direct(self) -> bool:
        """Whether decisions go straight to the inserter's compiled search on arrays
        (``heuristics.slack.Inserter.decide``): a compiled inserter, and no problem to
        record or schedule to check."""
        return getattr(self.inserter, "compiled", False) is True and not (self.record
                                                                          or self.check)

    def _decide(self, now: int, new: tuple[int, int, float] | None) -> int:
        """One decision on the compiled search (``_direct``): the same decision as
        ``_solve`` on ``_problem(now, new)``, applied; returns the new job's start."""
        running, est_end = self.plan.running, self.plan.est_end
        r = len(running)
        run_end = np.fromiter([est_end[j] for j in running], np.int64, r)
        run_n = np.fromiter([job.demand[0] for job in running.values()], np.int64, r)
        W = self.waiting
        m = len(W)
        vals = W.values()
        JI = np.fromiter(chain.from_iterable([e.row for e in vals]), np.int64,
                         4 * m).reshape(m, 4)
        te = np.fromiter([e.te for e in vals], np.int64, m)
        X = np.fromiter(chain.from_iterable([(e.s, e.s0, e.p) for e in vals]), np.float64,
                        3 * m).reshape(m, 3)
        ts, ids, starts = self.inserter.decide(  # type: ignore[attr-defined]
            now, self.capacity, run_end, run_n, JI, te, X, new, alphas=self.alphas,
            p_floor=self.p_floor, slack_floor=self.slack_floor)
        for jid, start in zip(ids, starts, strict=True):
            e = W[jid]
            if start != e.te:
                e.s -= start - e.te
                e.te = start
        return ts

    def _apply(self, sched: InsertionSchedule) -> None:
        for jid, e in self.waiting.items():
            start = sched.starts[jid]
            if start != e.te:
                e.s -= start - e.te
                e.te = start

    # ------------------------------------------------------------------ operations
    def _remove(self, now: int) -> None:
        """Re-optimise after capacity was freed early (the dummy timeless job)."""
        self._remove_due = False
        if not self.waiting:
            return
        self.n_remove += 1
        if self._direct():
            self._decide(now, None)
            return
        self._apply(self._solve(self._problem(now, None)))

    def on_arrival(self, job: Job, now: int) -> None:
        if job.procs > self.capacity:
            raise ValueError(f"job {job.id} needs {job.procs} processors, machine has "
                             f"{self.capacity}")
        if self.plan.overdue:
            self._extend_overdue(now)
        if self._remove_due:
            self._remove(now)
        given = self.priorities.get(job.id)
        up, pp = (self.default_priority,) * 2 if given is None else given
        sp = 0.5
        p, p_s = self._split(up, pp, sp)
        self.n_insert += 1
        if self._direct():
            te = self._decide(now, (job.procs, job.requested, max(p, 0.0)))
        else:
            new = NewJob(id=job.id, n=job.procs, t=job.requested, p=max(p, 0.0),
                         arrival=job.submit)
            sched = self._solve(self._problem(now, new))
            self._apply(sched)
            te = sched.new_start
        # first placement: recompute SP, p and s0 once, without moving the job
        s0_first = self._slack0(p_s)
        sp = min((te - now) / (2.0 * self.awt), 1.0)
        p, p_s = self._split(up, pp, sp)
        s0 = self._slack0(p_s)
        s = s0 if self.reset_slack else s0_first
        self.waiting[job.id] = _Entry(job=job, up=up, pp=pp, sp=sp, p=p, s0=s0, s=s, te=te,
                                      row=(job.id, job.procs, job.requested, job.submit))
        if math.isfinite(s):
            self._promises[job.id] = int(math.floor(te + s))

    def cancel(self, job: Job, now: int) -> None:
        """Withdraw waiting ``job`` at ``now`` and re-optimise (the paper's remove).

        The batch simulator has no cancellations; this is for drivers that do. Raises
        ValueError when the job is not waiting.
        """
        if job.id not in self.waiting:
            raise ValueError(f"{self.name}: job {job.id} is not waiting, cannot cancel it")
        del self.waiting[job.id]
        self._promises.pop(job.id, None)
        self._remove(now)

    def on_end(self, job: Job, now: int) -> None:
        self._run_views.pop(job.id, None)
        if self.plan.end(job, now):
            self._remove_due = True

    def on_overrun(self, job: Job, now: int) -> None:
        self.plan.overrun(job)
        self.plan.extend([job.id], now)
        self._replace_all(now)

    def _extend_overdue(self, now: int) -> None:
        """Extend the estimates of overrunning jobs that passed them again."""
        due = self.plan.overdue_due(now)
        if due:
            self.plan.extend(due, now)
            self._replace_all(now)

    def _replace_all(self, now: int) -> None:
        """Re-place every waiting job greedily (ascending te) at its earliest start."""
        prof = self.plan.running_profile(now)
        for _jid, e in sorted(self.waiting.items(), key=lambda kv: (kv[1].te, kv[0])):
            n, t = e.job.procs, e.job.requested
            start = prof.earliest_start(t, (n,), now)
            prof.reserve(start, t, (n,))
            e.s = max(e.s - (start - e.te), 0.0)  # forced: slack used up, promise broken
            e.te = start

    def schedule(self, now: int) -> list[Job]:
        if self.plan.overdue:
            self._extend_overdue(now)
        if self._remove_due:
            self._remove(now)
        due = sorted((e.te, jid) for jid, e in self.waiting.items() if e.te <= now)
        started = []
        for te, jid in due:
            e = self.waiting[jid]
            if te < now:
                raise RuntimeError(f"{self.name}: job {jid} was scheduled at {te} but the "
                                   f"simulator called back only at {now}")
            if not self.plan.fits_now(e.job):
                raise RuntimeError(
                    f"{self.name}: job {jid} scheduled at {now} needs {e.job.procs} "
                    f"processors, {self.plan.free[0]} free")
            del self.waiting[jid]
            self.plan.start(e.job, now)
            started.append(e.job)
        return started

    def next_wakeup(self, now: int) -> int | None:
        later = [e.te for e in self.waiting.values() if e.te > now]
        est_end = self.plan.est_end
        later += [est_end[j] for j in self.plan.overdue if est_end[j] > now]
        return min(later) if later else None
