"""The slack-constrained insertion problem of Talby & Feitelson, defined once.

When a job arrives, the slack-based priority scheduler *inserts* it into the current
schedule of waiting jobs. Every waiting job may be moved: later by at most its current
slack, or earlier. Among the feasible schedules the scheduler picks the cheapest by the
paper's *price*; ties go to the schedule that moves the fewest jobs. The same problem,
with a dummy timeless job in place of the new job, re-optimises the schedule after a job
leaves early (``remove``).

Both the heuristic compress orders (``heuristics.slack``) and the exact models
(``models.slack_insertion``) import this module, so their prices are comparable by
construction; the family's :func:`objective` is the price. All times are integer seconds;
slacks are seconds and may be fractional (``s0 = (1 - p) * SF * AWT``) or infinite.

Price (the paper's definition)
------------------------------
For a schedule that starts the new job ``j`` at ``te_j`` and waiting job ``i`` at
``start_i`` (delay ``t_i = start_i - te_i``, negative when moved earlier)::

    price = w(te_j - now) * n_j^alpha_u + sum_i cost(i, t_i, j)
    cost(i, t_i, j) = n_i^alpha_u * w(t_i) * (p_i / p_j)^alpha_p * (s0_i / s_i)^(alpha_p*alpha_f)
                      if t_i <= s_i, else infinity

with the signed power ``w(x) = sign(x) * |x|^alpha_t`` (so moving earlier gives a
negative cost) and ``w(0) = 0`` (a job that is not moved costs nothing, also when
``alpha_t = 0``). ``x^0 = 1`` for every other factor.

Choices the paper leaves open (each documented and, where it changes results, a
field of :class:`InsertionProblem`):

* **zero priority in the ratio** ``p_i / p_j``: both priorities are clamped from below
  at ``p_floor`` (default 0.01), so the ratio is ``max(p_i, p_floor) / max(p_j,
  p_floor)``. Without it a job of priority 0 could not delay anybody (infinite price)
  and a waiting job of priority 0 could be delayed for free. Only priorities below
  ``p_floor`` are affected.
* **zero current slack** in ``s0_i / s_i``: the ratio is 1 when ``s_i == s0_i`` (this
  covers 0/0 and inf/inf); otherwise ``s0_i / max(s_i, slack_floor)`` with
  ``slack_floor`` default 1 second. A job whose slack is used up (``s_i = 0``) may only
  move earlier, which is then rewarded by the factor ``s0_i / slack_floor``.
* **the dummy timeless job** of ``remove`` (``new is None``): it has no term of its own
  and priority 1, so the ratio is ``max(p_i, p_floor)``. Its priority multiplies every
  cost by the same positive constant, so it changes the price value but never which
  schedule is cheapest; it is therefore not a parameter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from sim.problems import Infeasible, fields
from sim.profile import Profile

FAMILY = "slack_insertion"

__all__ = [
    "FAMILY",
    "WaitingJob",
    "RunningJob",
    "NewJob",
    "InsertionProblem",
    "InsertionSchedule",
    "check",
    "objective",
    "moved",
    "key",
    "PRICE_TOL",
    "price_tolerance",
    "best",
    "job_cost",
    "signed_power",
    "delay_weight",
    "new_weight",
    "current_schedule",
    "apply",
    "profile_of",
    "latest_start",
    "horizon",
    "from_dict",
    "to_dict",
    "load",
]


# ---------------------------------------------------------------------------- validation
MAX_INT = 2**53
"""Largest magnitude of an integer field (seconds, processors, job ids): exact in a
float, no int64 overflow in the models' sums."""

# One spec per record: field -> (kind, options); checked by sim.problems.fields, both when a
# dataclass is built from Python and when a JSON record is read (then with the source and
# the JSON path in the message).
_INT, _REAL = "integer", "real"
_SPECS: dict[str, dict[str, tuple[str, dict[str, Any]]]] = {
    "running": {"id": (_INT, {}), "n": (_INT, {"minimum": 1}), "end": (_INT, {})},
    "waiting": {"id": (_INT, {}), "n": (_INT, {"minimum": 1}), "t": (_INT, {"minimum": 1}),
                "te": (_INT, {}), "s": (_REAL, {"minimum": 0.0, "allow_inf": True}),
                "s0": (_REAL, {"minimum": 0.0, "allow_inf": True}),
                "p": (_REAL, {"minimum": 0.0, "maximum": 1.0}), "arrival": (_INT, {})},
    "new": {"id": (_INT, {}), "n": (_INT, {"minimum": 1}), "t": (_INT, {"minimum": 1}),
            "p": (_REAL, {"minimum": 0.0, "maximum": 1.0}), "arrival": (_INT, {})},
}


def _checked(kind: str, name: str, value: Any, path: str, source: str | None = None) -> Any:
    """``value`` of field ``name`` of a ``kind`` record, checked by :mod:`sim.problems.fields`."""
    how, opts = _SPECS[kind][name]
    if how == _INT:
        opts = {"minimum": -MAX_INT, "maximum": MAX_INT, **opts}
        return fields.integer(value, f"{path}.{name}", source=source, **opts)
    return fields.real(value, f"{path}.{name}", source=source, **opts)


def _validate(obj: Any, kind: str, path: str) -> None:
    for name in _SPECS[kind]:
        object.__setattr__(obj, name, _checked(kind, name, getattr(obj, name), path))


# Fast paths of the checks above: True when every field already has the exact type and
# range the checks ask for, so that they would return each value unchanged (anything
# else, including a bool, an integral float, NaN or a value out of range, goes through
# ``_validate``, which converts it or raises the one-line message).
def _canonical_int(x: Any, low: int) -> bool:
    return type(x) is int and low <= x <= MAX_INT


def _canonical_waiting(w: WaitingJob) -> bool:
    s, s0, p = w.s, w.s0, w.p
    return (_canonical_int(w.id, -MAX_INT) and _canonical_int(w.n, 1)
            and _canonical_int(w.t, 1) and _canonical_int(w.te, -MAX_INT)
            and _canonical_int(w.arrival, -MAX_INT)
            and type(s) is float and s >= 0.0 and type(s0) is float and s0 >= 0.0
            and type(p) is float and 0.0 <= p <= 1.0)


def _canonical_prob(x: Any) -> bool:
    return type(x) is float and 0.0 <= x <= 1.0


# ---------------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class WaitingJob:
    """A job already in the schedule, waiting to start.

    Parameters
    ----------
    id : int
    n : int
        Processors (>= 1).
    t : int
        Estimated runtime, seconds (>= 1).
    te : int
        Currently scheduled start, seconds (>= the problem's ``now``).
    s : float
        Current slack, seconds (>= 0, may be ``math.inf``): how much later than ``te``
        the job may still start.
    s0 : float
        Initial slack, seconds (>= 0, infinite exactly when ``s`` is).
    p : float
        Weighted priority in [0, 1].
    arrival : int
        Submit time, seconds.
    """

    id: int
    n: int
    t: int
    te: int
    s: float
    s0: float
    p: float
    arrival: int

    def __post_init__(self) -> None:
        if not _canonical_waiting(self):
            _validate(self, "waiting", f"WaitingJob {fields.short(self.id)}")
        if math.isinf(self.s) != math.isinf(self.s0):
            raise ValueError(f"WaitingJob {fields.short(self.id)}: s and s0 must be both "
                             f"finite or both infinite, got s={self.s!r}, s0={self.s0!r}")


@dataclass(frozen=True)
class RunningJob:
    """A running job: occupies ``n`` processors until its estimated ``end`` (seconds)."""

    id: int
    n: int
    end: int

    def __post_init__(self) -> None:
        if not (_canonical_int(self.id, -MAX_INT) and _canonical_int(self.n, 1)
                and _canonical_int(self.end, -MAX_INT)):
            _validate(self, "running", f"RunningJob {fields.short(self.id)}")


@dataclass(frozen=True)
class NewJob:
    """The job to insert: ``n`` processors, estimate ``t`` seconds, priority ``p``."""

    id: int
    n: int
    t: int
    p: float
    arrival: int

    def __post_init__(self) -> None:
        if not (_canonical_int(self.id, -MAX_INT) and _canonical_int(self.n, 1)
                and _canonical_int(self.t, 1) and _canonical_int(self.arrival, -MAX_INT)
                and _canonical_prob(self.p)):
            _validate(self, "new", f"NewJob {fields.short(self.id)}")


# ---------------------------------------------------------------------------- problem
@dataclass(frozen=True)
class InsertionProblem:
    """One insertion (or, with ``new=None``, one re-optimisation after a removal).

    Parameters
    ----------
    now : int
        Current time, seconds.
    capacity : int
        Processors of the machine.
    running : tuple of RunningJob
        Jobs running at ``now``; each ends after ``now``.
    waiting : tuple of WaitingJob
        The current schedule of waiting jobs (feasible with the running jobs).
    new : NewJob or None
        The job to insert, or None for ``remove`` (the paper's dummy timeless job).
    alpha_u, alpha_t, alpha_p, alpha_f : float
        Exponents of the price, each in [0, 1].
    p_floor : float
        Priorities are clamped from below at this value inside ``p_i / p_j`` (in (0, 1]).
    slack_floor : float
        Current slack is clamped from below at this value (seconds, > 0) inside
        ``s0_i / s_i`` when ``s_i != s0_i``.

    Raises
    ------
    ValueError
        Naming the field: a negative slack, an alpha outside [0, 1], a job wider than the
        machine, ``te < now``, a running job that ended, duplicate ids, an arrival after
        ``now``, or a current schedule that exceeds the capacity.
    """

    FAMILY: ClassVar[str] = FAMILY

    now: int
    capacity: int
    running: tuple[RunningJob, ...] = ()
    waiting: tuple[WaitingJob, ...] = ()
    new: NewJob | None = None
    alpha_u: float = 1.0
    alpha_t: float = 1.0
    alpha_p: float = 1.0
    alpha_f: float = 1.0
    p_floor: float = 0.01
    slack_floor: float = 1.0
    _index: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._check_scalars()
        object.__setattr__(self, "running", tuple(self.running))
        object.__setattr__(self, "waiting", tuple(self.waiting))
        if not self._jobs_fine():
            self._check_jobs()  # raises, naming the job
        object.__setattr__(self, "_index", {w.id: k for k, w in enumerate(self.waiting)})
        # the current schedule must be feasible: it is the starting point of every search
        if _within_capacity(self):
            return
        prof = profile_of(self)  # not within the capacity: find the job to name
        try:
            for w in self.waiting:
                prof.reserve(w.te, w.t, (w.n,))
        except ValueError as e:
            raise ValueError(
                f"InsertionProblem.waiting: the current schedule (te) exceeds the capacity at "
                f"job {w.id} (te={w.te}, n={w.n}, t={w.t}): {e}") from None

    def _check_scalars(self) -> None:
        """Check (and convert) ``now``, ``capacity``, the alphas and the floors."""
        if (_canonical_int(self.now, -MAX_INT) and _canonical_int(self.capacity, 1)
                and _canonical_prob(self.alpha_u) and _canonical_prob(self.alpha_t)
                and _canonical_prob(self.alpha_p) and _canonical_prob(self.alpha_f)
                and _canonical_prob(self.p_floor) and self.p_floor > 0
                and type(self.slack_floor) is float and 0.0 < self.slack_floor < math.inf):
            return
        now = fields.integer(self.now, "now", minimum=-MAX_INT, maximum=MAX_INT)
        cap = fields.integer(self.capacity, "capacity", minimum=1, maximum=MAX_INT)
        object.__setattr__(self, "now", now)
        object.__setattr__(self, "capacity", cap)
        for name in ("alpha_u", "alpha_t", "alpha_p", "alpha_f"):
            object.__setattr__(self, name, fields.probability(getattr(self, name), name))
        pf = fields.probability(self.p_floor, "p_floor")
        if pf <= 0:
            raise ValueError(f"{fields.where(None, 'p_floor')} must be > 0, got {pf!r}")
        object.__setattr__(self, "p_floor", pf)
        sf = fields.real(self.slack_floor, "slack_floor", minimum=0.0)
        if sf <= 0:
            raise ValueError(f"{fields.where(None, 'slack_floor')} must be > 0, got {sf!r}")
        object.__setattr__(self, "slack_floor", sf)

    def _jobs_fine(self) -> bool:
        """Whether :meth:`_check_jobs` would pass (its fast path: no message to build)."""
        now, cap, new = self.now, self.capacity, self.new
        running, waiting = self.running, self.waiting
        ids = [r.id for r in running if isinstance(r, RunningJob)]
        if len(ids) != len(running):
            return False
        ids += [w.id for w in waiting if isinstance(w, WaitingJob)]
        if len(ids) != len(running) + len(waiting):
            return False
        if new is not None:
            if not isinstance(new, NewJob) or new.n > cap or new.arrival > now:
                return False
            ids.append(new.id)
        if len(set(ids)) != len(ids):
            return False
        for r in running:
            if r.n > cap or r.end <= now:
                return False
        for w in waiting:
            if w.n > cap or w.te < now or w.arrival > now:
                return False
        return True

    def _check_jobs(self) -> None:
        """Check the jobs: types, unique ids, widths, times against ``now``."""
        now, cap = self.now, self.capacity

        seen: set[int] = set()

        def unique(where: str, jid: int) -> None:
            if jid in seen:
                raise ValueError(f"{where}: duplicate job id {jid}")
            seen.add(jid)

        for k, r in enumerate(self.running):
            if not isinstance(r, RunningJob):
                raise ValueError(f"InsertionProblem.running[{k}] must be a RunningJob, got {r!r}")
            unique(f"running[{k}]", r.id)
            if r.n > cap:
                raise ValueError(f"running[{k}] (job {r.id}): n={r.n} exceeds capacity {cap}")
            if r.end <= now:
                raise ValueError(f"running[{k}] (job {r.id}): end={r.end} must be > now={now}")
        for k, w in enumerate(self.waiting):
            if not isinstance(w, WaitingJob):
                raise ValueError(f"InsertionProblem.waiting[{k}] must be a WaitingJob, got {w!r}")
            unique(f"waiting[{k}]", w.id)
            if w.n > cap:
                raise ValueError(f"waiting[{k}] (job {w.id}): n={w.n} exceeds capacity {cap}")
            if w.te < now:
                raise ValueError(f"waiting[{k}] (job {w.id}): te={w.te} is before now={now}")
            if w.arrival > now:
                raise ValueError(
                    f"waiting[{k}] (job {w.id}): arrival={w.arrival} is after now={now}")
        if self.new is not None:
            if not isinstance(self.new, NewJob):
                raise ValueError(f"InsertionProblem.new must be a NewJob or None, got {self.new!r}")
            unique("new", self.new.id)
            if self.new.n > cap:
                raise ValueError(f"new (job {self.new.id}): n={self.new.n} exceeds capacity {cap}")
            if self.new.arrival > now:
                raise ValueError(
                    f"new (job {self.new.id}): arrival={self.new.arrival} is after now={now}")

    # ------------------------------------------------------------------ helpers
    @property
    def k(self) -> int:
        """Number of waiting jobs."""
        return len(self.waiting)

    def job(self, jid: int) -> WaitingJob:
        """The waiting job with id ``jid``."""
        return self.waiting[self._index[jid]]

    def with_alphas(self, **alphas: float) -> InsertionProblem:
        """A copy with some of ``alpha_u, alpha_t, alpha_p, alpha_f`` replaced."""
        return replace(self, **alphas)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary with ``"problem": "slack_insertion"`` (inf as "inf")."""

        def num(x: float) -> float | str:
            return "inf" if math.isinf(x) else x

        return {
            "problem": FAMILY,
            "now": self.now,
            "capacity": self.capacity,
            "alpha_u": self.alpha_u,
            "alpha_t": self.alpha_t,
            "alpha_p": self.alpha_p,
            "alpha_f": self.alpha_f,
            "p_floor": self.p_floor,
            "slack_floor": self.slack_floor,
            "running": [{"id": r.id, "n": r.n, "end": r.end} for r in self.running],
            "waiting": [
                {"id": w.id, "n": w.n, "t": w.t, "te": w.te, "s": num(w.s), "s0": num(w.s0),
                 "p": w.p, "arrival": w.arrival}
                for w in self.waiting
            ],
            "new": None if self.new is None else {
                "id": self.new.id, "n": self.new.n, "t": self.new.t, "p": self.new.p,
                "arrival": self.new.arrival},
        }

    def dump(self, path: str | Path) -> None:
        """Write the problem to ``path`` as JSON."""
        from instances.atomic import write_atomic

        write_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")


_TOP = ("now", "capacity", "running", "waiting", "new")
_OPTIONAL = ("alpha_u", "alpha_t", "alpha_p", "alpha_f", "p_floor", "slack_floor")


def _record(cls: type, kind: str, path: str, item: Any, source: str) -> Any:
    rec = fields.record(item, path, required=tuple(_SPECS[kind]), source=source)
    values = {name: _checked(kind, name, rec[name], path, source) for name in _SPECS[kind]}
    try:
        return cls(**values)
    except ValueError as e:  # a check across fields (e.g. s and s0)
        raise ValueError(f"{source}: {path}: {e}") from None


def to_dict(problem: InsertionProblem) -> dict[str, Any]:
    """The problem as its JSON dictionary (infinite slacks as ``"inf"``;
    ``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


def from_dict(data: Mapping[str, Any], source: str = "<json>") -> InsertionProblem:
    """Registry loader: build an :class:`InsertionProblem` from a parsed JSON dict.

    Every field is checked by :mod:`sim.problems.fields`, so a bad value raises a
    one-line ValueError naming ``source`` and the field's JSON path.

    Parameters
    ----------
    data : mapping
        With ``"problem": "slack_insertion"``, ``now``, ``capacity``, ``running``,
        ``waiting``, ``new`` (object or null) and optional alphas / floors.
    source : str
        File name used in error messages.
    """
    fields.family(data, FAMILY, source=source)
    fields.record(data, "(top level)", required=("problem",) + _TOP, optional=_OPTIONAL,
                  source=source)
    running = tuple(_record(RunningJob, "running", f"running[{k}]", r, source)
                    for k, r in enumerate(fields.sequence(data["running"], "running",
                                                          source=source)))
    waiting = tuple(_record(WaitingJob, "waiting", f"waiting[{k}]", w, source)
                    for k, w in enumerate(fields.sequence(data["waiting"], "waiting",
                                                          source=source)))
    new = None if data["new"] is None else _record(NewJob, "new", "new", data["new"], source)
    kw = {f: data[f] for f in _OPTIONAL if f in data}
    try:
        return InsertionProblem(now=data["now"], capacity=data["capacity"], running=running,
                                waiting=waiting, new=new, **kw)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None


def load(path: str | Path) -> InsertionProblem:
    """Read a problem from a JSON file (errors name the file)."""
    from instances.files import read_bytes
    from sim.problems import MAX_FILE_BYTES, parse_json

    data = parse_json(read_bytes(path, limit=MAX_FILE_BYTES, what="problem file"), path)
    return from_dict(data, str(path))


def _within_capacity(problem: InsertionProblem) -> bool:
    """Whether the running jobs (until ``end``) and the waiting jobs at ``te`` (on
    ``[te, te + t)``) never use more than the capacity: a sweep over the start and end
    times, the same test as reserving them on a :class:`sim.profile.Profile`."""
    delta: dict[int, int] = {}
    get = delta.get
    now = problem.now
    for r in problem.running:
        delta[now] = get(now, 0) + r.n
        delta[r.end] = get(r.end, 0) - r.n
    for w in problem.waiting:
        delta[w.te] = get(w.te, 0) + w.n
        e = w.te + w.t
        delta[e] = get(e, 0) - w.n
    use = 0
    cap = problem.capacity
    for t in sorted(delta):
        use += delta[t]
        if use > cap:
            return False
    return True


# ---------------------------------------------------------------------------- schedule
@dataclass(frozen=True)
class InsertionSchedule:
    """A solution: the new job's start and every waiting job's start (seconds).

    ``new_start`` is None exactly when the problem has no new job (``remove``).
    """

    new_start: int | None
    starts: Mapping[int, int]

    def __post_init__(self) -> None:
        if self.new_start is not None:
            object.__setattr__(self, "new_start",
                               fields.integer(self.new_start, "InsertionSchedule.new_start"))
        starts = dict(self.starts)
        top = fields.INT64_MAX
        if all(type(j) is int and type(s) is int and j <= top and s <= top
               for j, s in starts.items()):
            object.__setattr__(self, "starts", starts)  # what the checks below would give
            return
        object.__setattr__(self, "starts",
                           {fields.integer(j, "InsertionSchedule.starts (job id)"):
                            fields.integer(s, f"InsertionSchedule.starts[{j}]")
                            for j, s in starts.items()})

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready ``{"new_start": ..., "starts": {id: start}}`` (ids as strings)."""
        return {"new_start": self.new_start,
                "starts": {str(j): s for j, s in sorted(self.starts.items())}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "<json>") -> InsertionSchedule:
        """Inverse of :meth:`to_dict` (a ``"moved"`` count, if present, is ignored)."""
        fields.record(data, "schedule", required=("new_start", "starts"), optional=("moved",),
                      source=source)
        starts = fields.record(data["starts"], "schedule.starts", optional=data["starts"]
                               if isinstance(data["starts"], Mapping) else (), source=source)
        try:
            return cls(data["new_start"], {int(j): s for j, s in starts.items()})
        except ValueError as e:
            raise ValueError(f"{source}: {e}") from None


def check(problem: InsertionProblem, schedule: InsertionSchedule) -> list[str]:
    """The violations of ``schedule`` (empty when feasible).

    Feasible means: the new job is started iff there is one; every waiting job (and no
    other id) has a start; every start is >= ``now``; each waiting job's delay
    ``start - te`` is <= its slack ``s`` (earlier is allowed); and the processors used by
    the running jobs (until ``end``) and the placed jobs (on ``[start, start + t)``)
    never exceed the capacity (checked on a :class:`sim.profile.Profile`, only once every
    job has a start).
    """
    out: list[str] = []
    now = problem.now
    if problem.new is None:
        if schedule.new_start is not None:
            out.append("the problem has no new job but new_start is set")
    else:
        if schedule.new_start is None:
            out.append(f"new job {problem.new.id}: no start")
        elif schedule.new_start < now:
            out.append(f"new job {problem.new.id}: start {schedule.new_start} before now={now}")
    ids = {w.id for w in problem.waiting}
    extra = set(schedule.starts) - ids
    if extra:
        out.append(f"starts given for unknown job(s) {sorted(extra)}")
    for w in problem.waiting:
        if w.id not in schedule.starts:
            out.append(f"waiting job {w.id}: no start")
            continue
        st = schedule.starts[w.id]
        if st < now:
            out.append(f"waiting job {w.id}: start {st} before now={now}")
        if st - w.te > w.s:
            out.append(f"waiting job {w.id}: delay {st - w.te} s exceeds its slack {w.s} s")
    if out:
        return out
    prof = profile_of(problem)
    placed = [(w.id, schedule.starts[w.id], w.t, w.n) for w in problem.waiting]
    if problem.new is not None:
        placed.append((problem.new.id, schedule.new_start, problem.new.t, problem.new.n))
    for jid, st, t, n in placed:
        try:
            prof.reserve(st, t, (n,))
        except ValueError as e:
            return [f"job {jid} (start {st}, n={n}, t={t}) exceeds the capacity "
                    f"{problem.capacity}: {e}"]
    return out


# ---------------------------------------------------------------------------- price
def signed_power(x: float, a: float) -> float:
    """Signed power ``sign(x) |x|^a`` with ``w(0) = 0``."""
    if x == 0:
        return 0.0
    if x > 0:
        return float(x) ** a
    return -(float(-x) ** a)


def _slack_ratio(problem: InsertionProblem, w: WaitingJob) -> float:
    if w.s == w.s0:
        return 1.0
    return w.s0 / max(w.s, problem.slack_floor)


def delay_weight(problem: InsertionProblem, w: WaitingJob) -> float:
    """Cost per ``w(t_i)`` of moving waiting job ``w``:
    ``n^alpha_u (p_i/p_j)^alpha_p (s0/s)^(alpha_p alpha_f)`` (>= 0).

    With ``alpha_t = 1`` the cost of a delay of ``t_i`` seconds is ``delay_weight * t_i``.
    """
    pj = 1.0 if problem.new is None else problem.new.p
    ratio_p = max(w.p, problem.p_floor) / max(pj, problem.p_floor)
    return (float(w.n) ** problem.alpha_u * ratio_p ** problem.alpha_p
            * _slack_ratio(problem, w) ** (problem.alpha_p * problem.alpha_f))


def new_weight(problem: InsertionProblem) -> float:
    """``n_j^alpha_u``: price per ``w(wait)`` of the new job (0 for the dummy job)."""
    if problem.new is None:
        return 0.0
    return float(problem.new.n) ** problem.alpha_u


def job_cost(problem: InsertionProblem, w: WaitingJob, start: int) -> float:
    """``cost(i, t_i, j)`` of starting waiting job ``w`` at ``start`` (inf beyond slack)."""
    d = start - w.te
    if d == 0:
        return 0.0
    if d > w.s:
        return math.inf
    return delay_weight(problem, w) * signed_power(d, problem.alpha_t)


def objective(problem: InsertionProblem, schedule: InsertionSchedule) -> float:
    """The paper's *price* of ``schedule`` (see the module docstring).

    Capacity is not checked here (use :func:`check`); a delay beyond the slack gives
    ``math.inf``. Summed with ``math.fsum`` so the value does not depend on job order.
    """
    terms = []
    if problem.new is not None:
        if schedule.new_start is None:
            raise Infeasible([f"new job {problem.new.id}: no start"])
        terms.append(new_weight(problem) * signed_power(schedule.new_start - problem.now,
                                                 problem.alpha_t))
    for w in problem.waiting:
        c = job_cost(problem, w, schedule.starts[w.id])
        if math.isinf(c):
            return math.inf
        terms.append(c)
    return math.fsum(terms)


def moved(problem: InsertionProblem, schedule: InsertionSchedule) -> int:
    """Number of waiting jobs whose start differs from ``te``."""
    return sum(1 for w in problem.waiting if schedule.starts[w.id] != w.te)


def key(problem: InsertionProblem, schedule: InsertionSchedule) -> tuple[float, int]:
    """Sort key of the paper's choice: lower price, then fewest moved jobs (exact prices;
    see :func:`best` for the choice with the tie tolerance)."""
    return objective(problem, schedule), moved(problem, schedule)


PRICE_TOL = 1e-9
"""Relative tolerance of a price tie, of ``max(1, |price|)``.

The optimum of the problem *as defined*: with ``P*`` the lowest price of any feasible
schedule, the optimal schedules are those of price ``<= P* + price_tolerance(P*)``, and
among them the ones that move the fewest waiting jobs. The tolerance absorbs the float
rounding of the price (:func:`objective`; a price-neutral swap of two jobs can come out a
few ulps either side of 0); every exact solver returns a schedule of this set or says that it
did not.
"""


def price_tolerance(p: float) -> float:
    """Width of a price tie at price ``p`` (``PRICE_TOL * max(1, |p|)``)."""
    return PRICE_TOL * max(1.0, abs(p))


def best(problem: InsertionProblem,
         schedules: Iterable[InsertionSchedule]) -> InsertionSchedule | None:
    """The definition's choice among ``schedules`` (assumed feasible): lowest price ``P``,
    then, among those within :func:`price_tolerance` of ``P``, the fewest moved jobs
    (then the lowest price, then the first given). None for no schedules."""
    scored = [(objective(problem, s), moved(problem, s), k, s) for k, s in enumerate(schedules)]
    if not scored:
        return None
    low = min(p for p, _, _, _ in scored)
    tied = [x for x in scored if x[0] <= low + price_tolerance(low)]
    return min(tied, key=lambda x: (x[1], x[0], x[2]))[3]


# ---------------------------------------------------------------------------- utilities
def current_schedule(problem: InsertionProblem,
                     new_start: int | None = None) -> InsertionSchedule:
    """Every waiting job at ``te``; the new job at ``new_start`` or, if None, at the
    earliest time it fits around them (no job moved)."""
    if problem.new is not None and new_start is None:
        prof = profile_of(problem, include_waiting=True)
        new_start = prof.earliest_start(problem.new.t, (problem.new.n,), problem.now)
    if problem.new is None:
        new_start = None
    return InsertionSchedule(new_start, {w.id: w.te for w in problem.waiting})


def apply(problem: InsertionProblem, schedule: InsertionSchedule) -> tuple[WaitingJob, ...]:
    """The waiting jobs after the move: ``te = start`` and ``s -= t_i`` (the paper's update).

    The new job is not included (its slack and priority are the scheduler's business).
    """
    out = []
    for w in problem.waiting:
        st = schedule.starts[w.id]
        out.append(replace(w, te=st, s=w.s - (st - w.te)))
    return tuple(out)


def profile_of(problem: InsertionProblem, include_waiting: bool = False,
               exclude: Iterable[int] = ()) -> Profile:
    """The availability profile from ``now``: running jobs until their ``end`` and, with
    ``include_waiting``, the waiting jobs at their current ``te`` (except ids in
    ``exclude``)."""
    prof = Profile((problem.capacity,), start=problem.now)
    for r in problem.running:
        prof.reserve(problem.now, r.end - problem.now, (r.n,))
    if include_waiting:
        skip = set(exclude)
        for w in problem.waiting:
            if w.id not in skip:
                prof.reserve(w.te, w.t, (w.n,))
    return prof


def latest_start(w: WaitingJob) -> float:
    """Latest start allowed by the slack, seconds (``te + s``; may be inf)."""
    return w.te + w.s


def horizon(problem: InsertionProblem) -> int:
    """A time ``T`` such that some optimal schedule starts every job in ``[now, T]``.

    ``T = G + sum of all estimates`` with ``G`` the end of the current schedule (running
    ends, ``te + t`` of the waiting jobs). Reason: after ``G`` every job that starts is
    delayed (``t_i > 0``), so closing an idle gap after ``G`` by moving every later job
    earlier keeps feasibility and never raises the price or the number of moved jobs;
    an optimal schedule without such gaps is busy from ``G`` to its last start.
    """
    g = problem.now
    for r in problem.running:
        g = max(g, r.end)
    for w in problem.waiting:
        g = max(g, w.te + w.t)
    total = sum(w.t for w in problem.waiting) + (problem.new.t if problem.new else 0)
    return g + total


def random_problem(seed: int, k: int, *, capacity: int = 8, max_t: int = 6,
                   max_slack: float = 10.0, running: int = 2, inf_slack: float = 0.1,
                   gap: int = 2, new: bool = True) -> InsertionProblem:
    """A random feasible insertion problem for tests and benchmarks (seconds, processors).

    Running jobs end within ``max_t``; the ``k`` waiting jobs are placed in order at the
    earliest fit after a random offset in ``[0, gap]`` from the previous placement; slacks
    are uniform in ``[0, max_slack]`` (integral), infinite with probability ``inf_slack``;
    ``s0`` is at least ``s`` most of the time and sometimes below it (a job that was moved
    earlier); priorities are multiples of 1/6 in [0, 1]. Waiting jobs have ids ``1..k``,
    running jobs ``1000, 1001, ...`` (``k + 1, ...`` when ``k >= 1000``).
    """
    import random

    rng = random.Random(seed)
    now = rng.randint(0, 100)
    run = []
    free = capacity
    for r in range(running):
        n = rng.randint(1, max(1, capacity // 2))
        if n > free:
            break
        free -= n
        # ids 1000, 1001...: above the waiting jobs' 1..k up to k = 999, after them beyond
        run.append(RunningJob((1000 if k < 1000 else k + 1) + r, n,
                              now + rng.randint(1, max_t)))
    pb = InsertionProblem(now=now, capacity=capacity, running=tuple(run))
    prof = profile_of(pb)
    waiting = []
    cursor = now
    for i in range(k):
        n = rng.randint(1, capacity)
        t = rng.randint(1, max_t)
        cursor += rng.randint(0, gap)
        te = prof.earliest_start(t, (n,), cursor)
        prof.reserve(te, t, (n,))
        if rng.random() < inf_slack:
            s = s0 = math.inf
        else:
            s = float(rng.randint(0, int(max_slack)))
            s0 = s + rng.randint(0, int(max_slack)) if rng.random() < 0.8 else s / 2
        p = rng.randint(0, 6) / 6
        waiting.append(WaitingJob(i + 1, n, t, te, s, s0, p, now - rng.randint(0, 50)))
    nj = NewJob(0, rng.randint(1, capacity), rng.randint(1, max_t), rng.randint(0, 6) / 6, now)
    return replace(pb, waiting=tuple(waiting), new=nj if new else None)


# ---------------------------------------------------------------------------- declaration
_F = fields.Field
_JOB_ID = _F("id", "integer", "Job id, unique over running, waiting and new jobs.",
             minimum=-MAX_INT, maximum=MAX_INT)
_ARRIVAL = _F("arrival", "integer", "Submit time, at or before now.", "s",
              minimum=-MAX_INT, maximum=MAX_INT)
_PRIORITY = _F("p", "number", "Weighted priority.", minimum=0.0, maximum=1.0)
_SLACK = "(\"inf\" for infinite)"

SCHEMA = fields.Record(
    "One insertion (or, with new = null, one re-optimisation after a removal) of the "
    "slack-based scheduler (Talby & Feitelson); objective: the paper's price (minimise), "
    "ties to the fewest moved jobs.",
    (
        _F("now", "integer", "Current time.", "s", minimum=-MAX_INT, maximum=MAX_INT,
           example=0),
        _F("capacity", "integer", "Processors of the machine.", "processors", minimum=1,
           maximum=MAX_INT, example=4),
        _F("running", "array", "Jobs running at now, each ending after now.",
           items=fields.Record("A running job.", (
               _JOB_ID, _F("n", "integer", "Processors.", "processors", minimum=1),
               _F("end", "integer", "Estimated end, after now.", "s", minimum=-MAX_INT,
                  maximum=MAX_INT))),
           example=[{"id": 1, "n": 2, "end": 3}]),
        _F("waiting", "array", "The current schedule of waiting jobs (feasible with the "
           "running jobs).",
           items=fields.Record("A waiting job.", (
               _JOB_ID, _F("n", "integer", "Processors.", "processors", minimum=1),
               _F("t", "integer", "Estimated runtime.", "s", minimum=1),
               _F("te", "integer", "Currently scheduled start, at or after now.", "s"),
               _F("s", "number", f"Current slack {_SLACK}: how much later than te the job "
                  "may start.", "s", minimum=0.0),
               _F("s0", "number", f"Initial slack {_SLACK}; infinite exactly when s is.", "s",
                  minimum=0.0),
               _PRIORITY, _ARRIVAL)),
           example=[{"id": 2, "n": 2, "t": 2, "te": 0, "s": 2.0, "s0": 4.0, "p": 0.5,
                     "arrival": 0},
                    {"id": 3, "n": 4, "t": 2, "te": 3, "s": 4.0, "s0": 6.0, "p": 0.25,
                     "arrival": 0}]),
        _F("new", "object", "The job to insert, or null for a removal (the paper's dummy "
           "timeless job).", nullable=True,
           items=fields.Record("The new job.", (
               _JOB_ID, _F("n", "integer", "Processors.", "processors", minimum=1),
               _F("t", "integer", "Estimated runtime.", "s", minimum=1), _PRIORITY, _ARRIVAL)),
           example={"id": 4, "n": 2, "t": 2, "p": 0.5, "arrival": 0}),
        _F("alpha_u", "number", "Exponent of the processor count n in the price.",
           minimum=0.0, maximum=1.0, default=1.0),
        _F("alpha_t", "number", "Exponent of the delay in the price (signed power).",
           minimum=0.0, maximum=1.0, default=1.0),
        _F("alpha_p", "number", "Exponent of the priority ratio in the price.",
           minimum=0.0, maximum=1.0, default=1.0),
        _F("alpha_f", "number", "Exponent (times alpha_p) of the slack ratio s0 / s.",
           minimum=0.0, maximum=1.0, default=1.0),
        _F("p_floor", "number", "Priorities are clamped from below at this value in "
           "the ratio p_i / p_j (> 0).", minimum=0.0, maximum=1.0, default=0.01),
        _F("slack_floor", "number", "Current slack is clamped from below at this value "
           "in s0 / s when s != s0 (> 0).", "s", minimum=0.0, default=1.0),
    ))
"""The family's JSON fields, declared once (``sim.problems.schema("slack_insertion")``)."""
