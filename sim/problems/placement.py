"""Slot placement for one BSP program (spec 2.7 M5), defined once.

Choose which ``k`` of the ``S`` slots of a round (slots of ``slot_us`` µs) the program
owns, to minimise its expected runtime under synchronized scheduling servers, for one
(g, v, pattern, spin) cell of the BSP model (``sim.timeshare.bsp``). The objective of a
placement is the mean simulated runtime (µs) over ``i`` measurements with seeds ``seed
.. seed + i - 1`` (common random numbers: every placement sees the same compute times
and draws), so it is a deterministic function of the placement.

Rotations. The measurement starts at a uniform instant of the program's own slots and the
other nodes' server phases are uniform, so placements that differ by a rotation of the
round have the same runtime distribution, unless blocked threads wake up on the timer
tick and the slot length is not a multiple of the tick (node 0's tick grid is aligned
with its round, so a rotation moves the slots against the ticks). Where rotations are
equivalent (:func:`rotation_invariant`), a placement is evaluated in its canonical
rotation: the window position is drawn relative to the placement, so every rotation of a
placement has exactly the same objective (common random numbers across rotations) and
one placement per rotation class covers the whole solution space. Otherwise every one of
the ``C(S, k)`` placements is a candidate and is evaluated as given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sim.problems import ensure_feasible, fields
from sim.timeshare.bsp import PATTERNS, BSPParams, NetParams, run_measurement
from sim.timeshare.servers import WAKEUPS, ServerParams, SlotSchedule

FAMILY = "slot_placement"

MAX_SLOTS = 10_000
"""Largest round (``n_slots``) accepted."""
MAX_SIMULATED_US = 1e12
"""Largest simulated time of one placement's evaluation accepted, µs: about
``i * n * g_us * n_slots / k`` (``i`` runs of ``n`` supersteps of ``g_us`` at a CPU share
of ``k / n_slots``); the default grid's largest cell is 2.5e9."""

__all__ = ["FAMILY", "PlacementProblem", "from_dict", "to_dict", "check", "objective", "work",
           "measurement", "canonical", "rotation_invariant", "placements", "iter_placements",
           "count_candidates"]


@dataclass(frozen=True)
class PlacementProblem:
    """One BSP cell and a round (times µs); see the module docstring."""

    FAMILY: ClassVar[str] = FAMILY

    g_us: int
    v: float = 0.0
    pattern: str = "barrier"
    spin_us: int = 0
    n: int = 20
    i: int = 10
    k: int = 2
    n_slots: int = 10
    slot_us: int = 20_000
    ctl_block_wakeup: str = "immediate"
    seed: int = 0

    def __post_init__(self) -> None:
        BSPParams(g_us=self.g_us, v=self.v, n=self.n, pattern=self.pattern,
                  spin_us=self.spin_us)   # validates g, v, n, pattern, spin
        fields.integer(self.i, "i", minimum=1)
        fields.integer(self.n_slots, "n_slots", minimum=2)
        fields.integer(self.k, "k", minimum=1)
        if self.k >= self.n_slots:
            raise ValueError(f"field 'k' ({self.k}) leaves no free slot of the {self.n_slots} "
                             f"for local load")
        fields.integer(self.slot_us, "slot_us", minimum=1)
        fields.text(self.ctl_block_wakeup, "ctl_block_wakeup", choices=WAKEUPS)
        if self.n_slots > MAX_SLOTS:
            raise ValueError(f"field 'n_slots' ({self.n_slots}) is over {MAX_SLOTS}")
        work = float(self.i) * self.n * max(self.g_us, self.slot_us) * self.n_slots / self.k
        if not work <= MAX_SIMULATED_US:
            raise ValueError(
                f"fields 'i' ({self.i}), 'n' ({self.n}), 'g_us' ({self.g_us}), 'n_slots' "
                f"({self.n_slots}) and 'k' ({self.k}) ask to simulate about {work:.3g} us "
                f"per placement, over the {MAX_SIMULATED_US:.0e} us accepted")

    def to_dict(self) -> dict[str, Any]:
        return {"problem": FAMILY, **{f: getattr(self, f) for f in (
            "g_us", "v", "pattern", "spin_us", "n", "i", "k", "n_slots", "slot_us",
            "ctl_block_wakeup", "seed")}}


def to_dict(problem: PlacementProblem) -> dict[str, Any]:
    """The problem as its JSON dictionary (``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


@fields.names_source
def from_dict(data: Mapping[str, Any], source: str = "<json>") -> PlacementProblem:
    """Read a problem from its JSON dictionary (``"problem": "slot_placement"``)."""
    fields.family(data, FAMILY, source=source)
    keys = ("g_us", "v", "pattern", "spin_us", "n", "i", "k", "n_slots", "slot_us",
            "ctl_block_wakeup", "seed")
    obj = fields.record(data, "<top>", required=("problem", "g_us"), optional=keys[1:],
                        source=source)
    kw: dict[str, Any] = {}
    for key in keys:
        if key not in obj:
            continue
        if key == "v":
            kw[key] = fields.real(obj[key], "v", minimum=0.0, maximum=1.0, source=source)
        elif key == "pattern":
            kw[key] = fields.text(obj[key], key, choices=tuple(PATTERNS), source=source)
        elif key == "ctl_block_wakeup":
            kw[key] = fields.text(obj[key], key, choices=WAKEUPS, source=source)
        else:
            kw[key] = fields.integer(obj[key], key, minimum=0, source=source)
    return PlacementProblem(**kw)


def rotation_invariant(problem: PlacementProblem) -> bool:
    """True when a rotation of the round never changes a placement's runtime distribution:
    immediate wake-ups, or a slot length that is a multiple of the timer tick."""
    return problem.ctl_block_wakeup == "immediate" or \
        problem.slot_us % ServerParams().tick_us == 0


def canonical(slots: Sequence[int], S: int) -> tuple[int, ...]:
    """The lexicographically smallest rotation of a placement, in ``O(k log k)``.

    A rotation that puts no slot at 0 starts above 0, so the smallest puts some slot
    ``s_i`` at 0 and reads ``(0, g_i, g_i + g_{i+1}, ...)`` with the cyclic gaps ``g`` of
    the sorted placement; prefix sums of positive gaps compare as the gaps do, so it is
    the least rotation of the gap sequence (Booth's algorithm) summed up."""
    own = sorted(set(slots))
    if not own:
        return ()
    k = len(own)
    gaps = [own[(i + 1) % k] - own[i] for i in range(k - 1)] + [own[0] + S - own[-1]]
    start = _least_rotation(gaps)
    out, at = [0], 0
    for i in range(k - 1):
        at += gaps[(start + i) % k]
        out.append(at)
    return tuple(out)


def _least_rotation(seq: Sequence[int]) -> int:
    """Index at which the lexicographically least rotation of ``seq`` starts (Booth's
    algorithm, ``O(len(seq))``)."""
    doubled = list(seq) * 2
    fail = [-1] * len(doubled)
    k = 0
    for j in range(1, len(doubled)):
        c = doubled[j]
        i = fail[j - k - 1]
        while i != -1 and c != doubled[k + i + 1]:
            if c < doubled[k + i + 1]:
                k = j - i - 1
            i = fail[i]
        if c != doubled[k + i + 1]:  # i == -1
            if c < doubled[k]:  # k + i + 1 == k
                k = j
            fail[j - k] = -1
        else:
            fail[j - k] = i + 1
    return k


def placements(problem: PlacementProblem) -> list[tuple[int, ...]]:
    """The candidate placements, sorted: one per rotation class (each contains slot 0)
    when :func:`rotation_invariant`, else every placement."""
    return list(iter_placements(problem))


def count_candidates(problem: PlacementProblem) -> int:
    """Placements :func:`iter_placements` scans: those containing slot 0,
    ``C(S - 1, k - 1)``, when :func:`rotation_invariant` (every rotation class has at
    least one), else all ``C(S, k)``."""
    import math
    if rotation_invariant(problem):
        return math.comb(problem.n_slots - 1, problem.k - 1)
    return math.comb(problem.n_slots, problem.k)


def iter_placements(problem: PlacementProblem, *,
                    deadline: float | None = None) -> Iterator[tuple[int, ...]]:
    """The placements of :func:`placements`, in the same (sorted) order, one at a time:
    the placements containing slot 0 that are their own :func:`canonical` rotation, or
    every placement when rotations are not equivalent. ``deadline`` (a
    ``time.perf_counter`` value): :class:`sim.timeshare.bsp.TimeUp` once it has passed,
    checked at every candidate (the search for the next class may scan many)."""
    import itertools
    import time

    from sim.timeshare.bsp import TimeUp

    S = problem.n_slots
    if rotation_invariant(problem):
        cands = ((0, *rest) for rest in itertools.combinations(range(1, S), problem.k - 1))
    else:
        cands = itertools.combinations(range(S), problem.k)
    for c in cands:
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeUp("the deadline passed while placements were listed")
        if not rotation_invariant(problem) or canonical(c, S) == c:
            yield c


def check(problem: PlacementProblem, slots: Sequence[int]) -> list[str]:
    """The violations of ``slots`` (empty when it is ``k`` distinct slots of the round)."""
    if len(slots) != problem.k or len(set(slots)) != problem.k or \
            any(not 0 <= s < problem.n_slots for s in slots):
        return [f"placement must be {problem.k} distinct slots in "
                f"[0, {problem.n_slots}), got {list(slots)!r}"]
    return []


def objective(problem: PlacementProblem, slots: Sequence[int]) -> float:
    """Mean simulated runtime (µs) of the program under synchronized servers owning
    ``slots``; deterministic (fixed seeds), and the same for every rotation of ``slots``
    when :func:`rotation_invariant` (evaluated in the canonical rotation). Checked first
    (:class:`sim.problems.Infeasible` otherwise)."""
    return measurement(problem, slots)["mean_us"]


def measurement(problem: PlacementProblem, slots: Sequence[int], *,
                deadline: float | None = None) -> dict[str, float]:
    """The ``i`` measurements behind :func:`objective`: ``mean_us``, ``std_us`` (sample
    standard deviation over the seeds) and ``i``. ``deadline`` (a ``time.perf_counter``
    value): :class:`sim.timeshare.bsp.TimeUp` once it has passed."""
    import statistics

    ensure_feasible(problem, slots)
    if rotation_invariant(problem):
        slots = canonical(slots, problem.n_slots)
    bsp = BSPParams(g_us=problem.g_us, v=problem.v, n=problem.n, pattern=problem.pattern,
                    spin_us=problem.spin_us)
    own = set(slots)
    sch = SlotSchedule(problem.slot_us, tuple(0 if s in own else None
                                              for s in range(problem.n_slots)))
    sp = ServerParams(regime="sync", ctl_block_wakeup=problem.ctl_block_wakeup)
    times = [run_measurement(bsp, sch, sp, NetParams(), seed=problem.seed + j,
                             deadline=deadline)["runtime_us"] for j in range(problem.i)]
    std = statistics.stdev(times) if len(times) > 1 else 0.0
    return {"mean_us": statistics.fmean(times), "std_us": std, "i": problem.i}


def work(problem: PlacementProblem) -> int:
    """Slot-steps an exhaustive search simulates, a measure of its cost: candidates x
    ``i`` runs x ``n`` supersteps x ``n_slots`` (a superstep spans up to a round)."""
    return count_candidates(problem) * problem.i * max(problem.n, 1) * problem.n_slots


# ---------------------------------------------------------------------------- declaration
_F = fields.Field

SCHEMA = fields.Record(
    "Slot placement of one BSP program (Karl): choose which k of the n_slots slots of a "
    "round it owns under synchronized servers; minimise its mean simulated runtime.",
    (
        _F("g_us", "integer", "g, compute time of a superstep.", "µs", minimum=0,
           example=1000),
        _F("v", "number", "Variation of the compute time.", minimum=0.0, maximum=1.0,
           default=0.0),
        _F("pattern", "string", "Communication pattern of a superstep.", choices=tuple(PATTERNS),
           default="barrier"),
        _F("spin_us", "integer", "Spin time before blocking.", "µs", minimum=0, default=0),
        _F("n", "integer", "Supersteps per run.", minimum=0, default=20, example=5),
        _F("i", "integer", "Measured runs per placement (seeds seed .. seed + i - 1).",
           minimum=1, default=10, example=2),
        _F("k", "integer", "Slots the program owns (< n_slots).", "slots", minimum=1,
           default=2),
        _F("n_slots", "integer", "Slots of the round.", "slots", minimum=2,
           maximum=MAX_SLOTS, default=10, example=4),
        _F("slot_us", "integer", "Slot length.", "µs", minimum=1, default=20_000,
           example=1000),
        _F("ctl_block_wakeup", "string", "How a blocked control thread wakes up.",
           choices=tuple(WAKEUPS), default="immediate"),
        _F("seed", "integer", "First seed of the measurements.", minimum=0, default=0),
    ))
"""The family's JSON fields, declared once (``sim.problems.schema("slot_placement")``)."""
