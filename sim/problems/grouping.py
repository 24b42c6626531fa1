"""Memory-aware time-slice grouping (Suh, Rudolph & Devadas, section 4), defined once.

``J`` jobs share a machine of ``P`` processors and ``C`` blocks of memory by gang
time-slicing: the jobs of one slice run together for ``T`` seconds, then the next slice's
jobs run. Job ``j`` needs ``Q(j)`` processors and makes ``refs(j)`` memory references per
slice (all its processors together); its miss-rate curve ``m_j`` is measured in
isolation. A schedule assigns every job to exactly one of ``S`` slices, each within ``P``
processors (``S`` fixed by the problem, or free).

Cost (eq. 4): processor idle time per round of ``S`` slices, in processor-seconds,

    sum_s [ l * misses(s) + (P - N(s)) * T ],

where ``N(s) = sum_{j in s} Q(j)`` and ``misses(s) = sum_{j in s} refs(j) m_j(x_j)`` with
the memory shares ``x_j`` of the jobs running together from eq. 2 (``sim.memory.model``,
reference rates proportional to ``refs``; field ``model = "fluctuations"`` takes the
rates of our extension of eq. 2 instead). Like section 4.1 we take the steady state in
each slice (slices long against the time to refill memory), which makes the cost of a
slice depend only on its own jobs: the property the set-partitioning models need. An
optional ``shared`` process (shared memory as one more conceptual process, its references
per slice and curve) runs in every non-empty slice and its misses count too. An empty
slice costs ``P * T``.

A solution is a list of slices, each a list of job names; with a fixed ``S`` it has
exactly ``S`` slices (some possibly empty).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from sim.memory.model import MissRateCurve, steady_state
from sim.problems import ensure_feasible, fields
from sim.problems.fields import EXACT_MAX, short

FAMILY = "grouping"

__all__ = ["FAMILY", "GroupJob", "GroupingProblem", "SliceCosts", "load", "from_dict", "to_dict",
           "check", "objective", "schedule_name", "random_problem"]

Solution = list[list[str]]
MODELS = ("eq2", "fluctuations")
"""Memory models a problem can cost its slices with (field ``model``)."""


def _num(owner: str, name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{owner}: field '{name}' must be a finite number, got {short(value)}")
    return float(value)


@dataclass(frozen=True)
class GroupJob:
    """One job of the grouping problem.

    Parameters
    ----------
    name : str
        Unique, non-empty.
    procs : int
        Processor demand ``Q(j) >= 1``.
    curve : MissRateCurve
        Miss-rate curve in isolation (blocks of the problem's memory).
    refs : float
        Memory references per time slice, all processors together, > 0.
    """

    name: str
    procs: int
    curve: MissRateCurve
    refs: float

    def __post_init__(self) -> None:
        owner = f"job {short(self.name)}"
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"job: field 'name' must be a non-empty string, "
                             f"got {short(self.name)}")
        if (isinstance(self.procs, bool) or not isinstance(self.procs, int) or self.procs < 1
                or self.procs > EXACT_MAX):
            raise ValueError(f"{owner}: field 'procs' must be an integer in [1, {EXACT_MAX}], "
                             f"got {short(self.procs)}")
        if not isinstance(self.curve, MissRateCurve):
            raise ValueError(f"{owner}: field 'curve' must be a MissRateCurve")
        if not _num(owner, "refs", self.refs) > 0:
            raise ValueError(f"{owner}: field 'refs' must be positive, got {short(self.refs)}")


@dataclass(frozen=True)
class GroupingProblem:
    """The grouping problem (see the module docstring).

    Parameters
    ----------
    jobs : tuple of GroupJob
    processors : int
        ``P`` >= 1; every job needs at most ``P``.
    memory : int
        ``C`` in blocks, > 0.
    latency : float
        Miss penalty ``l`` in seconds, >= 0.
    slice_length : float
        ``T`` in seconds, > 0.
    slices : int or None
        ``S`` fixed (>= 1), or None when the number of slices is free.
    shared : GroupJob or None
        Shared memory as an extra conceptual process present in every non-empty slice
        (its ``procs`` is ignored).
    model : str
        Memory model of a slice: ``"eq2"`` (default, the paper's eqs. 2-3) or
        ``"fluctuations"`` (our extension in ``sim.memory.model``, for curves with cliffs such as
        loops; slower, ``O(J^2 C)`` per group).
    name, source : str
        Label and provenance of the data.
    """

    FAMILY: ClassVar[str] = FAMILY

    jobs: tuple[GroupJob, ...]
    processors: int
    memory: int
    latency: float
    slice_length: float
    slices: int | None = None
    shared: GroupJob | None = None
    model: str = "eq2"
    name: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        if not self.jobs:
            raise ValueError("grouping problem: field 'jobs' is empty")
        P = self.processors
        if isinstance(P, bool) or not isinstance(P, int) or P < 1 or P > EXACT_MAX:
            raise ValueError(f"grouping problem: field 'processors' must be an integer in "
                             f"[1, {EXACT_MAX}], got {short(P)}")
        if not _num("grouping problem", "memory", self.memory) > 0:
            raise ValueError(f"grouping problem: field 'memory' must be positive, "
                             f"got {short(self.memory)}")
        if not _num("grouping problem", "latency", self.latency) >= 0:
            raise ValueError(f"grouping problem: field 'latency' must be >= 0, "
                             f"got {short(self.latency)}")
        if not _num("grouping problem", "slice_length", self.slice_length) > 0:
            raise ValueError(f"grouping problem: field 'slice_length' must be positive, "
                             f"got {short(self.slice_length)}")
        # seconds as floats: an integer beyond int64 (10**30) would overflow NumPy's
        # integer arithmetic of the slice costs instead of being a large number
        object.__setattr__(self, "latency", float(self.latency))
        object.__setattr__(self, "slice_length", float(self.slice_length))
        S = self.slices
        if S is not None and (isinstance(S, bool) or not isinstance(S, int) or S < 1
                              or S > len(self.jobs)):
            raise ValueError(f"grouping problem: field 'slices' must be an integer in "
                             f"[1, {len(self.jobs)}] (at most one slice per job) or null, "
                             f"got {short(S)}")
        seen: set[str] = set()
        for j in self.jobs:
            if not isinstance(j, GroupJob):
                raise ValueError("grouping problem: field 'jobs' must hold GroupJob objects")
            if j.name in seen:
                raise ValueError(f"grouping problem: field 'jobs' repeats the name "
                                 f"{short(j.name)}")
            seen.add(j.name)
            if j.procs > P:
                raise ValueError(f"job {short(j.name)}: field 'procs' = {short(j.procs)} exceeds "
                                 f"'processors' P = {P}")
        if self.shared is not None and not isinstance(self.shared, GroupJob):
            raise ValueError("grouping problem: field 'shared' must be a GroupJob or null")
        if self.model not in MODELS:
            raise ValueError(f"grouping problem: field 'model' must be one of {MODELS}, "
                             f"got {short(self.model)}")
        # every slice costs at most l * (its references) + P * T (a miss rate is at most
        # 1), so this bounds the cost of any schedule; numbers that overflow it would give
        # an infinite objective
        refs = sum(float(j.refs) for j in self.jobs)
        if self.shared is not None:
            refs += len(self.jobs) * float(self.shared.refs)
        worst = (float(self.latency) * refs
                 + len(self.jobs) * float(self.processors) * float(self.slice_length))
        if not worst < 1e300:
            raise ValueError(
                f"grouping problem: fields 'latency' ({short(self.latency)}), 'refs' (sum "
                f"{short(refs)}) and 'slice_length' ({short(self.slice_length)}) are so large "
                f"that a schedule's cost (up to {short(worst)} processor-seconds) overflows "
                f"double precision; scale them down")

    # ------------------------------------------------------------------ basics
    @property
    def names(self) -> list[str]:
        return [j.name for j in self.jobs]

    @property
    def demand(self) -> np.ndarray:
        """``Q(j)`` as an int array."""
        return np.array([j.procs for j in self.jobs], dtype=np.int64)

    @property
    def min_slices(self) -> int:
        """``ceil(sum Q / P)``, the fewest slices any schedule can use."""
        return -(-int(self.demand.sum()) // self.processors)

    # ------------------------------------------------------------------ cost
    def group_costs(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised slice cost for ``G`` candidate groups.

        Parameters
        ----------
        members : bool array (G, J)
            Row ``g`` marks the jobs running together in one slice.

        Returns
        -------
        (misses, cost) : arrays (G,)
            Misses per slice (references times eq. 3 rates, the shared process included)
            and the slice's eq. 4 cost ``l * misses + (P - N) * T`` in processor-seconds.
        """
        mem = np.atleast_2d(np.asarray(members, dtype=bool))
        if mem.shape[1] != len(self.jobs):
            raise ValueError(f"members has {mem.shape[1]} columns for {len(self.jobs)} jobs")
        refs = np.array([j.refs for j in self.jobs])
        misses = np.zeros(mem.shape[0])
        nonempty = mem.any(axis=1)
        if nonempty.any():
            rates = np.where(mem[nonempty], refs[None, :], 0.0)
            shared = None
            curves = [j.curve for j in self.jobs]
            if self.shared is not None:
                shared = (self.shared.curve, self.shared.refs)
            st = steady_state(curves, rates, float(self.memory), shared=shared,
                              fluctuations=self.model == "fluctuations")
            tot = rates.sum(axis=1) + (self.shared.refs if self.shared is not None else 0.0)
            misses[nonempty] = st.combined * tot
        used = mem.astype(np.int64) @ self.demand
        cost = self.latency * misses + (self.processors - used) * self.slice_length
        return misses, cost

    def slice_cost(self, group: Sequence[str]) -> float:
        """Eq. 4 cost of one slice running the named jobs (not memoised: a solver that
        costs the same slices again and again keeps a :class:`SliceCosts` memo)."""
        return float(self.group_costs(self.mask([group]))[1][0])

    def slice_costs(self, groups: Sequence[Sequence[str]]) -> list[float]:
        """Eq. 4 costs of several slices in one vectorised call."""
        if not groups:
            return []
        return self.group_costs(self.mask(groups))[1].tolist()

    def mask(self, groups: Sequence[Sequence[str]]) -> np.ndarray:
        """Boolean membership matrix (len(groups), J) of named groups."""
        index = {n: i for i, n in enumerate(self.names)}
        out = np.zeros((len(groups), len(self.jobs)), dtype=bool)
        for g, grp in enumerate(groups):
            for n in grp:
                if n not in index:
                    raise ValueError(f"solution: unknown job {short(n)}")
                out[g, index[n]] = True
        return out

    # ------------------------------------------------------------------ solutions
    def evaluate(self, solution: Solution) -> dict[str, Any]:
        """Per-slice misses, combined miss rate and cost, plus totals (of a feasible
        schedule: :class:`sim.problems.Infeasible` otherwise)."""
        ensure_feasible(self, solution)
        misses, cost = self.group_costs(self.mask(solution))
        refs = self.mask(solution) @ np.array([j.refs for j in self.jobs])
        if self.shared is not None:
            refs = refs + np.where(self.mask(solution).any(axis=1), self.shared.refs, 0.0)
        rate = np.where(refs > 0, misses / np.maximum(refs, 1e-300), 0.0)
        return {
            "objective": float(cost.sum()),
            "misses": float(misses.sum()),
            "miss_rate": float(misses.sum() / refs.sum()),
            "slice_misses": misses.tolist(),
            "slice_miss_rates": rate.tolist(),
            "slice_costs": cost.tolist(),
        }

    def canonical(self, solution: Solution) -> Solution:
        """Slices and their jobs in problem order, slices sorted by first job (empty last)."""
        pos = {n: i for i, n in enumerate(self.names)}
        groups = [sorted(g, key=pos.__getitem__) for g in solution]
        return sorted(groups, key=lambda g: (not g, pos[g[0]] if g else 0))

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary with ``"problem": "grouping"`` (inverse of :func:`from_dict`)."""

        def job(j: GroupJob) -> dict[str, Any]:
            return {"name": j.name, "procs": j.procs, "refs": j.refs,
                    "curve": j.curve.to_json()}

        return {
            "problem": "grouping",
            "name": self.name,
            "source": self.source,
            "processors": self.processors,
            "memory": self.memory,
            "latency": self.latency,
            "slice_length": self.slice_length,
            "slices": self.slices,
            "shared": None if self.shared is None else job(self.shared),
            "model": self.model,
            "jobs": [job(j) for j in self.jobs],
        }


class SliceCosts:
    """Memo of the eq. 4 slice costs of one problem, for solvers that cost the same
    slices many times (the problem itself is frozen and keeps no cache).

    Parameters
    ----------
    problem : GroupingProblem
    """

    def __init__(self, problem: GroupingProblem) -> None:
        self.problem = problem
        self._memo: dict[frozenset[str], float] = {}

    def __call__(self, group: Sequence[str]) -> float:
        """Eq. 4 cost of one slice (processor-seconds)."""
        return self.many([group])[0]

    def many(self, groups: Sequence[Sequence[str]]) -> list[float]:
        """Eq. 4 costs of several slices, the ones not seen yet costed in one call."""
        keys = [frozenset(g) for g in groups]
        todo = list(dict.fromkeys(k for k in keys if k not in self._memo))
        if todo:
            costs = self.problem.slice_costs([sorted(k) for k in todo])
            self._memo.update(zip(todo, costs, strict=True))
        return [self._memo[k] for k in keys]


def _job(d: Any, where: str) -> GroupJob:
    if not isinstance(d, dict):
        raise ValueError(f"{where}: expected an object")
    unknown = sorted(str(k) for k in d if k not in ("name", "procs", "refs", "curve"))
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {short(unknown)}; known: "
                         f"['curve', 'name', 'procs', 'refs']")
    for key in ("name", "procs", "refs", "curve"):
        if key not in d:
            raise ValueError(f"{where}: missing field '{key}'")
    curve = MissRateCurve.from_json(d["curve"], where=f"{where}.curve")
    try:
        return GroupJob(name=d["name"], procs=d["procs"], curve=curve, refs=d["refs"])
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def check(problem: GroupingProblem, solution: Solution) -> list[str]:
    """The violations of ``solution`` (empty when feasible): every job in exactly one
    slice, each slice within ``P`` processors, and (fixed ``S``) exactly ``S`` slices."""
    if not isinstance(solution, (list, tuple)) or not solution:
        return ["solution: must be a non-empty list of slices"]
    out: list[str] = []
    if problem.slices is not None and len(solution) != problem.slices:
        out.append(f"solution: {len(solution)} slices, the problem fixes S = {problem.slices}")
    count = dict.fromkeys(problem.names, 0)
    Q = {j.name: j.procs for j in problem.jobs}
    for s, grp in enumerate(solution):
        used = 0
        for n in grp:
            if n not in count:
                out.append(f"solution: slice {s} names unknown job {short(n)}")
                continue
            count[n] += 1
            used += Q[n]
        if used > problem.processors:
            out.append(f"solution: slice {s} needs {used} processors > P = {problem.processors}")
    for n, c in count.items():
        if c != 1:
            out.append(f"solution: job {short(n)} is in {c} slices, must be in exactly 1")
    return out


def objective(problem: GroupingProblem, solution: Solution) -> float:
    """Eq. 4 idle processor-seconds of a feasible schedule (checked first:
    :class:`sim.problems.Infeasible` otherwise)."""
    ensure_feasible(problem, solution)
    return float(sum(problem.slice_costs(solution)))


def to_dict(problem: GroupingProblem) -> dict[str, Any]:
    """The problem as its JSON dictionary (``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


def from_dict(data: dict[str, Any], source: str = "<json>") -> GroupingProblem:
    """Build a :class:`GroupingProblem` from its JSON dictionary (``"problem": "grouping"``).

    Errors name ``source`` and the field.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object")
    if data.get("problem", "grouping") != "grouping":
        raise ValueError(f"{source}: field 'problem' is {short(data.get('problem'))}, "
                         f"expected 'grouping'")
    known = ("jobs", "processors", "memory", "latency", "slice_length", "problem", "slices",
             "shared", "model", "name", "source")
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise ValueError(f"{source}: unknown field(s) {short(unknown)}; known: {sorted(known)}")
    for key in ("jobs", "processors", "memory", "latency", "slice_length"):
        if key not in data:
            raise ValueError(f"{source}: missing field '{key}'")
    if not isinstance(data["jobs"], list):
        raise ValueError(f"{source}: field 'jobs' must be a list")
    jobs = tuple(_job(d, f"{source}: jobs[{i}]") for i, d in enumerate(data["jobs"]))
    shared = data.get("shared")
    shared = None if shared is None else _job(shared, f"{source}: shared")
    name = fields.text(data.get("name", ""), "name", source=source)
    origin = fields.text(data.get("source", ""), "source", source=source)
    try:
        return GroupingProblem(
            jobs=jobs,
            processors=data["processors"],
            memory=data["memory"],
            latency=data["latency"],
            slice_length=data["slice_length"],
            slices=data.get("slices"),
            shared=shared,
            model=data.get("model", "eq2"),
            name=name,
            source=origin,
        )
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None


def load(path: str | Path) -> GroupingProblem:
    """Read a grouping problem from a JSON file."""
    from sim.problems import read_json

    return from_dict(read_json(path), source=str(path))


def schedule_name(problem: GroupingProblem, solution: Solution) -> str:
    """The paper's naming: jobs lettered A, B, ... in problem order, slices joined by
    commas, e.g. ``ACD,BEF``."""
    pos = {n: i for i, n in enumerate(problem.names)}
    letters = [
        "".join(chr(65 + pos[n]) if pos[n] < 26 else f"[{n}]" for n in g)
        for g in problem.canonical(solution)
    ]
    return ",".join(s if s else "-" for s in letters)


def random_problem(
    jobs: int,
    processors: int,
    *,
    seed: int = 0,
    memory: int = 1000,
    max_procs: int | None = None,
    slices: int | None = None,
    latency: float = 1e-4,
    slice_length: float = 0.1,
    refs: tuple[float, float] = (1e5, 1e6),
) -> GroupingProblem:
    """Random instance: parametric curves (``instances.refstreams``) with footprints
    between ``memory / 10`` and ``memory`` blocks, mixed ``Q(j)`` in ``1..max_procs``
    (default ``P``), references per slice uniform in ``refs``. Seeded."""
    from instances.refstreams import exponential_curve, knee_curve

    rng = np.random.default_rng(seed)
    top = processors if max_procs is None else max_procs
    out = []
    for j in range(jobs):
        fp = int(rng.integers(max(2, memory // 10), memory + 1))
        kn = int(rng.integers(1, fp + 1))
        if rng.random() < 0.5:
            m = knee_curve(fp, kn, at_knee=float(rng.uniform(0.01, 0.3)),
                           floor=float(rng.uniform(0, 0.01)))
        else:
            m = exponential_curve(fp, kn / 3 + 1, floor=float(rng.uniform(0, 0.01)))
        out.append(GroupJob(name=f"J{j}", procs=int(rng.integers(1, top + 1)),
                            curve=MissRateCurve(tuple(m), name=f"J{j}"),
                            refs=float(rng.uniform(*refs))))
    return GroupingProblem(jobs=tuple(out), processors=processors, memory=memory,
                           latency=latency, slice_length=slice_length, slices=slices,
                           name=f"random-J{jobs}-P{processors}-s{seed}",
                           source=f"sim.problems.grouping.random_problem(seed={seed})")


# ---------------------------------------------------------------------------- declaration
_F = fields.Field
_CURVE = fields.Record("Miss-rate curve in isolation.", (
    _F("m", "array", "m[x]: misses per reference with x blocks of fully associative LRU "
       "memory; non-increasing, len(m) - 1 is the footprint.", minimum=0.0, maximum=1.0,
       items=_F("", "number", "")),
    _F("name", "string", "Label.", default=""),
), closed=False)
_JOB = fields.Record("A job.", (
    _F("name", "string", "Unique, non-empty name."),
    _F("procs", "integer", "Processor demand Q(j).", "processors", minimum=1,
       maximum=EXACT_MAX),
    _F("refs", "number", "Memory references per time slice, all processors together (> 0).",
       "references", minimum=0.0),
    _F("curve", "object", "Miss-rate curve in isolation (blocks of the problem's memory); "
       "an object with 'm' or with 'points' ([[x, m], ...]).", items=_CURVE),
), closed=False)

SCHEMA = fields.Record(
    "Memory-aware time-slice grouping (Suh, Rudolph & Devadas, section 4): put every job in "
    "one slice within P processors; minimise the eq. 4 idle processor-seconds per round.",
    (
        _F("jobs", "array", "The jobs.", items=_JOB,
           example=[{"name": n, "procs": q, "refs": r, "curve": {"name": n, "m": m}}
                    for n, q, r, m in (("A", 1, 1000.0, [1.0, 0.5, 0.2, 0.1, 0.0]),
                                       ("B", 1, 2000.0, [1.0, 0.8, 0.6, 0.4, 0.2, 0.0]),
                                       ("C", 2, 1500.0, [1.0, 0.3, 0.05, 0.0]))]),
        _F("processors", "integer", "P, processors of the machine.", "processors", minimum=1,
           maximum=EXACT_MAX, example=2),
        _F("memory", "number", "C, memory (> 0).", "blocks", minimum=0.0, example=6),
        _F("latency", "number", "Miss penalty l.", "s", minimum=0.0, example=1e-3),
        _F("slice_length", "number", "T, length of a time slice (> 0).", "s", minimum=0.0,
           example=0.1),
        _F("slices", "integer", "S fixed (at most one slice per job), or null when free.",
           minimum=1, nullable=True, default=None),
        _F("shared", "object", "Shared memory as one more conceptual process present in every "
           "non-empty slice (its procs is ignored), or null.", items=_JOB, nullable=True,
           default=None),
        _F("model", "string", "Memory model of a slice: the paper's eqs. 2-3, or our "
           "extension with fluctuations.", choices=MODELS, default="eq2"),
        _F("name", "string", "Label.", default=""),
        _F("source", "string", "Provenance of the data.", default=""),
    ), closed=False)
"""The family's JSON fields, declared once (``sim.problems.schema("grouping")``)."""
