"""The three K-resource problems of Leinberger, Karypis & Kumar (1999), each defined once.

The job-selection rules FF, BL and BB that the heuristics apply are the online
policies' own (``heuristics.selection.make_selection``), one definition for both.

- :class:`EpochProblem` (family ``kresource_epochs``): the paper's Figure 1 question.
  Every job takes the same time; each scheduling epoch starts on an empty machine; put
  every job in exactly one epoch within the K capacities; minimise the number of
  non-empty epochs (K-dimensional vector bin packing, spec 1.8 M1).
- :class:`SelectionProblem` (family ``kresource_selection``): one EASY backfill decision
  (spec 1.8 M2). Candidates with requirement vectors, the free vector ``F`` now, the
  extra vector ``E`` (what is left at the head's shadow time once the head is placed)
  and, per candidate, whether it would still run at the shadow time (``late``). Choose a
  set with ``sum R <= F`` and ``sum_{late} R <= E``; maximise the resources put to work
  ``sum_j sum_k r_jk / C_k`` (machine fractions), then the number of jobs started.
- :class:`ResponseProblem` (family ``kresource_response``): offline, release times,
  K renewable resources, non-preemptive; minimise ``sum_j w_j (s_j + p_j - a_j)`` (total
  or weighted response time; spec 1.8 M3). Times are integer time units (seconds, or
  whatever unit the instance was scaled to).

Requirements and capacities are integer units (the selection rules compare fractions of
capacity, AMB-1.1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar

from sim.problems import ensure_feasible, fields

FAMILIES = ("kresource_epochs", "kresource_selection", "kresource_response")
"""The three families of this module; each problem class names its own in ``FAMILY``."""

__all__ = ["FAMILIES", "EpochProblem", "SelectionProblem", "ResponseProblem", "from_dict",
           "to_dict", "check", "objective", "response_cost", "load"]


# ---------------------------------------------------------------------------- helpers
def _capacity(value: Any, src: str | None) -> tuple[int, ...]:
    cap = fields.sequence(value, "capacity", min_length=1, source=src)
    return tuple(fields.integer(c, f"capacity[{k}]", minimum=1, maximum=fields.EXACT_MAX,
                                source=src) for k, c in enumerate(cap))


def _vector(value: Any, name: str, K: int, src: str | None, cap: Sequence[int] | None = None,
            ) -> tuple[int, ...]:
    # fast path (the simulator builds a problem at every OPT-EASY decision): plain ints
    # in range are accepted as they are; anything else takes the checked path below,
    # which accepts exactly the same values and words the errors
    if (type(value) in (tuple, list) and len(value) == K
            and all(type(x) is int and 0 <= x <= fields.INT64_MAX for x in value)
            and (cap is None or all(value[k] <= cap[k] for k in range(K)))):
        return tuple(value)
    v = fields.sequence(value, name, length=K, source=src)
    out = tuple(fields.integer(x, f"{name}[{k}]", minimum=0, source=src)
                for k, x in enumerate(v))
    if cap is not None:
        for k, x in enumerate(out):
            if x > cap[k]:
                raise ValueError(f"{fields.where(src, f'{name}[{k}]')} = {x} exceeds the "
                                 f"capacity {cap[k]}")
    return out


def _read(path: str | Path) -> tuple[dict[str, Any], str]:
    from sim.problems import read_json

    return read_json(path), str(path)


MAX_JOBS = 100_000
"""Most jobs (candidates) a K-resource problem holds: loading and checking 10^5 jobs takes
about a second; 10^6 took 11 s before any solver started."""


def _plain_demands(rows: Sequence[Any], capacity: tuple[int, ...],
                   ) -> tuple[tuple[int, ...], ...] | None:
    """``rows`` as tuples when every row is a list (or tuple) of K plain ints within
    ``[0, capacity_k]``, checked in whole-array sweeps (10^5 jobs: a twentieth of a
    second rather than half of one); None for anything else, which the checked path then
    words. Rows needing no resource are left to :func:`_check_demands`."""
    import numpy as np

    K = len(capacity)
    if not all(type(r) in (tuple, list) and len(r) == K for r in rows):
        return None
    flat = list(chain.from_iterable(rows))
    if not all(type(x) is int for x in flat) or min(flat) < 0 or max(flat) > max(capacity):
        return None
    dem = np.array(flat, dtype=np.int64).reshape(len(rows), K)
    if (dem > np.array(capacity, dtype=np.int64)).any():
        return None
    return tuple(r if type(r) is tuple else tuple(r) for r in rows)


def _check_demands(demands: Any, capacity: tuple[int, ...], src: str | None,
                   name: str = "demands") -> tuple[tuple[int, ...], ...]:
    rows = fields.sequence(demands, name, min_length=1, source=src)
    if len(rows) > MAX_JOBS:
        raise ValueError(f"{fields.where(src, name)} has {len(rows):,} jobs, over the "
                         f"{MAX_JOBS:,} accepted")
    out = _plain_demands(rows, capacity) or tuple(
        _vector(r, f"{name}[{j}]", len(capacity), src, capacity) for j, r in enumerate(rows))
    if not all(any(r) for r in out):
        j = next(j for j, r in enumerate(out) if not any(r))
        raise ValueError(f"{fields.where(src, f'{name}[{j}]')} needs no resource at all")
    for k, column in enumerate(zip(*out, strict=True)):
        fields.exact(sum(column), f"field '{name}': the sum of resource {k}", source=src)
    return out


def _selection_exact(n: int, weights: Sequence[int], src: str | None) -> None:
    """Refuse a selection whose objective (``W (n + 1) + count``) the exact models cannot
    represent: the work weights scale by ``lcm(capacity)``."""
    fields.exact(sum(weights) * (n + 1) + n, "fields 'capacity' and 'demands': the largest "
                 "objective value (the work weights sum_k r_jk lcm(capacity) / C_k summed, "
                 "times n + 1, plus n)", source=src)


def _response_exact(release: Sequence[int], duration: Sequence[int], weights: Sequence[int],
                    src: str | None) -> None:
    """Refuse a response problem whose objective bound ``sum_j w_j (H - a_j)``
    (``H = max a + sum p``, the horizon) the exact models cannot represent."""
    if not release:
        return
    H = max(release) + sum(duration)
    fields.exact(sum(w * (H - a) for w, a in zip(weights, release, strict=True)),
                 "fields 'weights', 'release' and 'duration': the largest objective value "
                 "sum_j w_j (H - a_j), H = max release + sum duration", source=src)


# ---------------------------------------------------------------------------- epochs
@dataclass(frozen=True)
class EpochProblem:
    """Minimum number of scheduling epochs (module docstring).

    Parameters
    ----------
    capacity : tuple of int
        ``C_k`` per resource, length K >= 1, every one >= 1.
    demands : tuple of tuple of int
        ``r_jk`` per job (queue order = arrival order), each within the capacity.
    names : tuple of str
        Labels of the jobs (default ``"0", "1", ...``).
    name : str
    """

    FAMILY: ClassVar[str] = "kresource_epochs"

    capacity: tuple[int, ...]
    demands: tuple[tuple[int, ...], ...]
    names: tuple[str, ...] = ()
    name: str = ""

    def __post_init__(self) -> None:
        cap = _capacity(list(self.capacity), None)
        object.__setattr__(self, "capacity", cap)
        object.__setattr__(self, "demands", _check_demands(list(self.demands), cap, None))
        if not self.names:
            object.__setattr__(self, "names", tuple(str(j) for j in range(len(self.demands))))
        if len(self.names) != len(self.demands):
            raise ValueError(f"field 'names' has {len(self.names)} entries for "
                             f"{len(self.demands)} jobs")
        seen: set[str] = set()
        for label in self.names:  # a solution is printed by these names: one job each
            if label in seen:
                raise ValueError(f"field 'names' repeats the name {fields.short(label)}; "
                                 f"job names must be unique")
            seen.add(label)

    @property
    def K(self) -> int:
        return len(self.capacity)

    @property
    def n(self) -> int:
        return len(self.demands)

    def lower_bound(self) -> int:
        """``max_k ceil(sum_j r_jk / C_k)``."""
        return max(-(-sum(d[k] for d in self.demands) // c)
                   for k, c in enumerate(self.capacity))

    def usage(self, epoch: Sequence[int]) -> tuple[int, ...]:
        """Total requirement of the jobs of one epoch, per resource."""
        return tuple(sum(self.demands[j][k] for j in epoch) for k in range(self.K))

    def to_dict(self) -> dict[str, Any]:
        return {"problem": self.FAMILY, "name": self.name,
                "capacity": list(self.capacity), "names": list(self.names),
                "demands": [list(d) for d in self.demands]}


def _epochs_from_dict(data: dict[str, Any], source: str = "<json>") -> EpochProblem:
    """Build an :class:`EpochProblem` from JSON; errors name ``source`` and the field."""
    fields.family(data, "kresource_epochs", source=source)
    fields.record(data, "<top>", required=("problem", "capacity", "demands"),
                  optional=("names", "name"), source=source)
    cap = _capacity(data["capacity"], source)
    dem = _check_demands(data["demands"], cap, source)
    names = tuple(fields.text(x, f"names[{i}]", source=source) for i, x in
                  enumerate(fields.sequence(data.get("names", []), "names", source=source)))
    if names and len(names) != len(dem):
        raise ValueError(f"{fields.where(source, 'names')} has {len(names)} entries for "
                         f"{len(dem)} jobs")
    return EpochProblem(cap, dem, names, _label(data, source))


def _label(data: dict[str, Any], source: str) -> str:
    """The optional ``"name"`` field (a string, default empty)."""
    return fields.text(data.get("name", ""), "name", source=source)


# ---------------------------------------------------------------------------- selection
@dataclass(frozen=True)
class SelectionProblem:
    """One EASY backfill decision (module docstring).

    Parameters
    ----------
    capacity : tuple of int
        ``C_k``.
    free : tuple of int
        Free units now, ``F_k``.
    extra : tuple of int
        Units left at the shadow time once the head is placed, ``E_k``.
    demands : tuple of tuple of int
        Requirement vectors of the candidates (the queue minus its head, queue order).
    late : tuple of bool
        True when the candidate would still run at the shadow time.
    """

    FAMILY: ClassVar[str] = "kresource_selection"

    capacity: tuple[int, ...]
    free: tuple[int, ...]
    extra: tuple[int, ...]
    demands: tuple[tuple[int, ...], ...]
    late: tuple[bool, ...]
    name: str = ""
    _w: tuple = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cap = _capacity(list(self.capacity), None)
        object.__setattr__(self, "capacity", cap)
        object.__setattr__(self, "free", _vector(list(self.free), "free", len(cap), None, cap))
        object.__setattr__(self, "extra",
                           _vector(list(self.extra), "extra", len(cap), None, cap))
        object.__setattr__(self, "demands", _check_demands(list(self.demands), cap, None)
                           if self.demands else ())
        late = tuple(self.late)
        if len(late) != len(self.demands) or any(not isinstance(x, bool) for x in late):
            raise ValueError(f"field 'late' must hold one bool per candidate "
                             f"({len(self.demands)}), got {len(late)} entries")
        object.__setattr__(self, "late", late)
        L = math.lcm(*cap)
        object.__setattr__(self, "_w", tuple(sum(d[k] * (L // cap[k]) for k in range(len(cap)))
                                             for d in self.demands))
        _selection_exact(len(self.demands), self._w, None)

    @property
    def K(self) -> int:
        return len(self.capacity)

    @property
    def n(self) -> int:
        return len(self.demands)

    @property
    def weights(self) -> tuple[int, ...]:
        """Integer work weight of each candidate: ``sum_k r_jk (L / C_k)``,
        ``L = lcm(C)`` (proportional to the machine fractions)."""
        return self._w

    def eligible(self, j: int) -> bool:
        """Candidate ``j`` fits alone now (and in ``E`` when late)."""
        d = self.demands[j]
        lim = self.extra if self.late[j] else self.free
        return all(d[k] <= self.free[k] and d[k] <= lim[k] for k in range(self.K))

    def work(self, solution: Sequence[int]) -> float:
        """Resources put to work: ``sum_j sum_k r_jk / C_k`` (machine fractions)."""
        return float(sum(self.demands[j][k] / self.capacity[k]
                         for j in solution for k in range(self.K)))

    def to_dict(self) -> dict[str, Any]:
        return {"problem": self.FAMILY, "name": self.name,
                "capacity": list(self.capacity), "free": list(self.free),
                "extra": list(self.extra), "demands": [list(d) for d in self.demands],
                "late": list(self.late)}


def _selection_from_dict(data: dict[str, Any], source: str = "<json>") -> SelectionProblem:
    """Build a :class:`SelectionProblem` from JSON; errors name ``source`` and the field."""
    fields.family(data, "kresource_selection", source=source)
    fields.record(data, "<top>", required=("problem", "capacity", "free", "extra", "demands",
                                           "late"), optional=("name",), source=source)
    cap = _capacity(data["capacity"], source)
    K = len(cap)
    free = _vector(data["free"], "free", K, source, cap)
    extra = _vector(data["extra"], "extra", K, source, cap)
    dem = fields.sequence(data["demands"], "demands", source=source)  # may be empty
    dem = _check_demands(dem, cap, source) if dem else ()
    late = fields.sequence(data["late"], "late", length=len(dem), source=source)
    for i, x in enumerate(late):
        if not isinstance(x, bool):
            raise ValueError(f"{fields.where(source, f'late[{i}]')} must be true or false, "
                             f"got {fields.short(x)}")
    L = math.lcm(*cap)
    _selection_exact(len(dem), [sum(d[k] * (L // cap[k]) for k in range(K)) for d in dem],
                     source)
    return SelectionProblem(cap, free, extra, dem, tuple(late), _label(data, source))


# ---------------------------------------------------------------------------- response
@dataclass(frozen=True)
class ResponseProblem:
    """Offline minimum total (weighted) response time (module docstring).

    Parameters
    ----------
    capacity : tuple of int
    release : tuple of int
        Release (arrival) time ``a_j`` of each job, time units >= 0.
    duration : tuple of int
        Run time ``p_j`` >= 1, time units.
    demands : tuple of tuple of int
    weights : tuple of int
        ``w_j >= 0`` (all 1: total response time).
    """

    FAMILY: ClassVar[str] = "kresource_response"

    capacity: tuple[int, ...]
    release: tuple[int, ...]
    duration: tuple[int, ...]
    demands: tuple[tuple[int, ...], ...]
    weights: tuple[int, ...] = ()
    name: str = ""

    def __post_init__(self) -> None:
        cap = _capacity(list(self.capacity), None)
        object.__setattr__(self, "capacity", cap)
        dem = _check_demands(list(self.demands), cap, None)
        object.__setattr__(self, "demands", dem)
        n = len(dem)
        if not self.weights:
            object.__setattr__(self, "weights", (1,) * n)
        for name, lo in (("release", 0), ("duration", 1), ("weights", 0)):
            v = fields.sequence(list(getattr(self, name)), name, length=n)
            object.__setattr__(self, name, fields.integers(v, name, minimum=lo,
                                                           maximum=fields.EXACT_MAX))
        _response_exact(self.release, self.duration, self.weights, None)

    @property
    def K(self) -> int:
        return len(self.capacity)

    @property
    def n(self) -> int:
        return len(self.demands)

    def horizon(self) -> int:
        """A time by which some optimal schedule has ended every job:
        ``max a_j + sum p_j``."""
        return max(self.release) + sum(self.duration)

    def to_dict(self) -> dict[str, Any]:
        return {"problem": self.FAMILY, "name": self.name,
                "capacity": list(self.capacity), "release": list(self.release),
                "duration": list(self.duration), "demands": [list(d) for d in self.demands],
                "weights": list(self.weights)}


def _response_from_dict(data: dict[str, Any], source: str = "<json>") -> ResponseProblem:
    """Build a :class:`ResponseProblem` from JSON; errors name ``source`` and the field."""
    fields.family(data, "kresource_response", source=source)
    fields.record(data, "<top>", required=("problem", "capacity", "release", "duration",
                                           "demands"), optional=("weights", "name"),
                  source=source)
    cap = _capacity(data["capacity"], source)
    dem = _check_demands(data["demands"], cap, source)
    n = len(dem)
    out = {}
    for name, lo in (("release", 0), ("duration", 1), ("weights", 0)):
        if name == "weights" and "weights" not in data:
            out[name] = (1,) * n
            continue
        v = fields.sequence(data[name], name, length=n, source=source)
        out[name] = fields.integers(v, name, minimum=lo, maximum=fields.EXACT_MAX,
                                    source=source)
    _response_exact(out["release"], out["duration"], out["weights"], source)
    return ResponseProblem(cap, out["release"], out["duration"], dem, out["weights"],
                           _label(data, source))


Problem = EpochProblem | SelectionProblem | ResponseProblem

_LOADERS = {"kresource_epochs": _epochs_from_dict, "kresource_selection": _selection_from_dict,
            "kresource_response": _response_from_dict}


@fields.names_source
def from_dict(data: dict[str, Any], source: str = "<json>") -> Problem:
    """Build the K-resource problem its ``"problem"`` field names (one of :data:`FAMILIES`);
    errors name ``source`` and the field."""
    fam = data.get("problem") if isinstance(data, dict) else None
    loader = _LOADERS.get(fam) if isinstance(fam, str) else None
    if loader is None:
        raise ValueError(f"{fields.where(source, 'problem')} must be one of {list(FAMILIES)}, "
                         f"got {fields.short(fam)}")
    return loader(data, source)


# ---------------------------------------------------------------------------- solutions
def _check_epochs(p: EpochProblem, solution: Sequence[Sequence[int]]) -> list[str]:
    if not isinstance(solution, (list, tuple)):
        return ["solution: must be a list of epochs"]
    out: list[str] = []
    n, dem, cap = p.n, p.demands, p.capacity  # locals: 10^5 jobs are checked in a loop
    seen = [0] * n
    for e, ep in enumerate(solution):
        tot = [0] * len(cap)
        for j in ep:
            if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < n:
                out.append(f"solution: epoch {e} names unknown job {j!r}")
                continue
            seen[j] += 1
            for k, r in enumerate(dem[j]):
                tot[k] += r
        for k, c in enumerate(cap):
            if tot[k] > c:
                out.append(f"solution: epoch {e} needs {tot[k]} of resource {k} > "
                           f"capacity {c}")
    for j, c in enumerate(seen):
        if c != 1:
            out.append(f"solution: job {j} is in {c} epochs, must be in exactly 1")
    return out


def _check_selection(p: SelectionProblem, solution: Sequence[int]) -> list[str]:
    if not isinstance(solution, (list, tuple)):
        return ["solution: must be a list of candidate indices"]
    out: list[str] = []
    if len(set(solution)) != len(solution):
        out.append("solution: repeats a candidate")
    tot, late = [0] * p.K, [0] * p.K
    for j in solution:
        if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < p.n:
            out.append(f"solution: unknown candidate {j!r}")
            continue
        for k in range(p.K):
            tot[k] += p.demands[j][k]
            if p.late[j]:
                late[k] += p.demands[j][k]
    for k in range(p.K):
        if tot[k] > p.free[k]:
            out.append(f"solution: needs {tot[k]} of resource {k}, {p.free[k]} free")
        if late[k] > p.extra[k]:
            out.append(f"solution: jobs running past the shadow time need {late[k]} "
                       f"of resource {k}, {p.extra[k]} left for them")
    return out


def _over_capacity(p: ResponseProblem, starts: Sequence[int]) -> list[str]:
    """The first resource over capacity, sweeping the start and end events in time order
    (an end before a start at the same time, then by job): the use after each event is
    a cumulative sum, in exact integers (int64 where the largest sum fits, else Python's
    integers)."""
    import numpy as np

    n = p.n
    if n == 0:
        return []
    exact = max(p.capacity) * (n + 1) < 2**62 and max(starts) + max(p.duration) < 2**62
    dt = np.int64 if exact else object
    s = np.array(starts, dtype=dt)
    t = np.concatenate([s, s + np.array(p.duration, dtype=dt)])
    kind = np.concatenate([np.ones(n, dtype=np.int8), np.zeros(n, dtype=np.int8)])
    job = np.concatenate([np.arange(n), np.arange(n)])
    order = np.lexsort((job, kind, t))
    dem = np.array(p.demands, dtype=dt)
    sign = np.where(kind[order] == 1, 1, -1).astype(np.int64)
    use = np.cumsum(dem[job[order]] * sign[:, None].astype(dt), axis=0)
    over = use > np.array(p.capacity, dtype=dt)
    rows = np.flatnonzero(over.any(axis=1))
    if not len(rows):
        return []
    i = int(rows[0])
    k = int(np.flatnonzero(over[i])[0])
    return [f"solution: resource {k} over capacity at t={t[order[i]]} "
            f"({use[i, k]} > {p.capacity[k]})"]


def _check_response(p: ResponseProblem, starts: Sequence[int]) -> list[str]:
    if not isinstance(starts, (list, tuple)) or len(starts) != p.n:
        return [f"solution: must be a list of {p.n} start times"]
    if all(type(s) is int for s in starts) and all(map(int.__ge__, starts, p.release)):
        return _over_capacity(p, starts)  # the common case, in two sweeps
    out: list[str] = []
    for j, s in enumerate(starts):
        if isinstance(s, bool) or not isinstance(s, int):
            out.append(f"solution: start of job {j} must be an integer, got {s!r}")
            continue
        if s < p.release[j]:
            out.append(f"solution: job {j} starts at {s} before its release {p.release[j]}")
    return out or _over_capacity(p, starts)


def check(problem: Problem, solution: Any) -> list[str]:
    """The violations of ``solution`` (empty when feasible).

    - epochs: a list of epochs (lists of job indices); every job in exactly one epoch and
      no epoch over a capacity.
    - selection: a list of candidate indices, no repeats; the set fits in ``F`` and its
      late part in ``E``.
    - response: one integer start per job (time units); every job at or after its release
      and no resource over capacity at any time (a job ending at t frees at t).
    """
    if isinstance(problem, EpochProblem):
        return _check_epochs(problem, solution)
    if isinstance(problem, SelectionProblem):
        return _check_selection(problem, solution)
    if isinstance(problem, ResponseProblem):
        return _check_response(problem, solution)
    raise TypeError(f"not a K-resource problem: {type(problem).__name__}")


def objective(problem: Problem, solution: Any) -> float:
    """The value of a feasible solution (checked first: :class:`sim.problems.Infeasible`
    otherwise).

    - epochs: the number of non-empty epochs (minimise).
    - selection: the lexicographic value as one number, ``W * (n + 1) + count`` with ``W``
      the sum of the chosen candidates' integer work weights (:attr:`SelectionProblem.weights`)
      (maximise).
    - response: ``sum_j w_j (s_j + p_j - a_j)``, time units (minimise).
    """
    ensure_feasible(problem, solution)
    if isinstance(problem, EpochProblem):
        return float(sum(1 for ep in solution if ep))
    if isinstance(problem, SelectionProblem):
        return float(sum(problem.weights[j] for j in solution) * (problem.n + 1)
                     + len(solution))
    return response_cost(problem, solution)


def response_cost(problem: ResponseProblem, starts: Sequence[int]) -> float:
    """``sum_j w_j (s_j + p_j - a_j)`` of the starts ``s`` (time units), not checked: the
    response objective for a caller whose schedules are feasible by construction (a
    local search over list schedules)."""
    return float(sum(w * (s + p - a) for w, s, p, a in
                     zip(problem.weights, starts, problem.duration, problem.release,
                         strict=True)))


def to_dict(problem: Problem) -> dict[str, Any]:
    """The problem as its JSON dictionary (``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


def load(path: str | Path) -> Problem:
    """Read any of the three K-resource problems from a JSON file."""
    data, src = _read(path)
    fam = data.get("problem") if isinstance(data, dict) else None
    if fam not in _LOADERS:
        raise ValueError(f"{src}: field 'problem' must be a kresource family, got {fam!r}")
    return from_dict(data, src)


# ---------------------------------------------------------------------------- declarations
_F = fields.Field
_CAP = _F("capacity", "array", "C_k, capacity of each of the K resources (K >= 1).", "units",
          minimum=1, maximum=fields.EXACT_MAX, items=_F("", "integer", ""), example=[4, 4])
_DEMANDS = "r_jk, requirement vector of each job (K entries, each within the capacity, " \
    "not all zero; per resource, the sum over the jobs at most 10^12; at most 100,000 jobs)"
_ROW = _F("", "array", "", items=_F("", "integer", ""))
_NAME = _F("name", "string", "Label.", default="")

SCHEMAS: dict[str, fields.Record] = {
    "kresource_epochs": fields.Record(
        "Minimum number of scheduling epochs (Leinberger, Karypis & Kumar, Figure 1): put "
        "every job in one epoch within the K capacities; minimise the non-empty epochs.",
        (_CAP,
         _F("demands", "array", f"{_DEMANDS}, in queue order.", "units", minimum=0,
            items=_ROW, example=[[2, 1], [2, 3], [1, 2], [3, 1]]),
         _F("names", "array", "Labels of the jobs (default \"0\", \"1\", ...).",
            items=_F("", "string", ""), default=[]),
         _NAME)),
    "kresource_selection": fields.Record(
        "One EASY backfill decision with K resources: choose candidates with sum R <= F "
        "and, of those still running at the shadow time, sum R <= E; maximise the "
        "resources put to work, then the number of jobs started. The objective's integer "
        "form (work weights scaled by lcm(capacity), times n + 1) is at most 10^12.",
        (_CAP,
         _F("free", "array", "F_k, units free now.", "units", minimum=0,
            items=_F("", "integer", ""), example=[3, 3]),
         _F("extra", "array", "E_k, units left at the shadow time once the head is placed.",
            "units", minimum=0, items=_F("", "integer", ""), example=[2, 2]),
         _F("demands", "array", f"{_DEMANDS}, of the candidates (the queue minus its head).",
            "units", minimum=0, items=_ROW, example=[[1, 1], [2, 1], [1, 2]]),
         _F("late", "array", "Per candidate: would it still run at the shadow time.",
            items=_F("", "boolean", ""), example=[False, True, False]),
         _NAME)),
    "kresource_response": fields.Record(
        "Offline minimum total (weighted) response time with K renewable resources and "
        "release times, non-preemptive: minimise sum_j w_j (s_j + p_j - a_j).",
        (_CAP,
         _F("release", "array", "a_j, release time of each job.", "time units", minimum=0,
            maximum=fields.EXACT_MAX, items=_F("", "integer", ""), example=[0, 0, 1]),
         _F("duration", "array", "p_j, run time of each job.", "time units", minimum=1,
            maximum=fields.EXACT_MAX, items=_F("", "integer", ""), example=[2, 1, 2]),
         _F("demands", "array", f"{_DEMANDS}.", "units", minimum=0, items=_ROW,
            example=[[1, 1], [2, 1], [1, 2]]),
         _F("weights", "array", "w_j of each job (default all 1: total response time); "
            "sum_j w_j (H - a_j) at most 10^12, H = max release + sum duration.",
            minimum=0, maximum=fields.EXACT_MAX, items=_F("", "integer", ""),
            default=fields.COMPUTED),
         _NAME)),
}
"""The three families' JSON fields, declared once (``sim.problems.schema(family)``)."""
