"""Slot assignment for several distributed applications (an Ousterhout matrix), defined once.

Spec 2.7 M4. ``n_nodes`` nodes share a round of slots (each ``slot_us`` µs long). Each
application ``a`` runs one thread on each node of its node set ``N_a`` and needs
``d_a`` slots per round; it owns a slot on **all** its nodes at once (coscheduling), no
node runs two applications in one slot (applications sharing a node never share a
slot), and every node ``k`` keeps at least ``F_k`` slots of the round free for local
users. A solution is the slot table: for each slot of the round, the names of the
applications owning it.

Objectives (field ``objective``):

- ``"round"``: minimise the round length ``S`` (the number of slots of the table), at
  most ``n_slots``.
- ``"gap"``: at a fixed round of ``n_slots`` slots, minimise the largest cyclic gap
  (in slots) between two consecutive slots of one application: an application owning
  slots ``s_1 < ... < s_d`` has gaps ``s_{j+1} - s_j`` and ``s_1 + S - s_d``.

Both the exact models (``models.slots``) and the heuristics (``heuristics.slots``)
import this module, so their objectives are comparable by construction.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from sim.problems import fields

FAMILY = "slot_assignment"
OBJECTIVES = ("round", "gap")

__all__ = ["FAMILY", "MAX_APPS", "MAX_COPIES", "OBJECTIVES", "SlotApp", "SlotProblem", "from_dict",
           "to_dict", "load",
           "check", "objective", "max_gap", "conflicts", "neighbour_masks", "lower_bound",
           "random_problem"]

Table = list[list[str]]

MAX_SLOTS = 1_000_000
"""Largest round (``n_slots``) accepted: a solution is a table with one row per slot."""

MAX_NODES = 1_000_000
"""Largest cluster (``n_nodes``) accepted: the problem and the models keep per-node lists."""

MAX_APPS = 2_000
"""Most applications accepted: the conflict pairs (applications sharing a node) are listed,
up to ``MAX_APPS**2 / 2`` of them."""

MAX_COPIES = 10_000_000
"""Largest total demand accepted: a solution table holds one entry per copy."""


@dataclass(frozen=True)
class SlotApp:
    """One distributed application: ``name``, its ``nodes`` and ``demand`` d_a (slots per
    round, >= 1)."""

    name: str
    nodes: tuple[int, ...]
    demand: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"app: field 'name' must be a non-empty string, got {self.name!r}")
        fields.integer(self.demand, f"apps[{self.name}].demand", minimum=1)
        if not self.nodes or len(set(self.nodes)) != len(self.nodes):
            raise ValueError(f"apps[{self.name}]: field 'nodes' must be a non-empty list of "
                             f"distinct nodes, got {list(self.nodes)!r}")


@dataclass(frozen=True)
class SlotProblem:
    """The slot-assignment problem (see the module docstring).

    Parameters
    ----------
    n_nodes : int
    apps : tuple of SlotApp
    n_slots : int
        The round for ``objective="gap"``; the largest allowed round for ``"round"``.
    free : tuple of int
        ``F_k`` per node (>= 0), slots kept free for local users.
    objective : {"round", "gap"}
    slot_us : int
        Slot length in microseconds (used when a table is simulated).
    """

    FAMILY: ClassVar[str] = FAMILY

    n_nodes: int
    apps: tuple[SlotApp, ...]
    n_slots: int
    free: tuple[int, ...]
    objective: str = "round"
    slot_us: int = 20_000

    def __post_init__(self) -> None:
        fields.integer(self.n_nodes, "n_nodes", minimum=1, maximum=MAX_NODES)
        fields.integer(self.n_slots, "n_slots", minimum=1, maximum=MAX_SLOTS)
        fields.integer(self.slot_us, "slot_us", minimum=1)
        fields.text(self.objective, "objective", choices=OBJECTIVES)
        if len(self.free) != self.n_nodes:
            raise ValueError(f"field 'free' must have {self.n_nodes} entries, "
                             f"got {len(self.free)}")
        for k, f in enumerate(self.free):
            fields.integer(f, f"free[{k}]", minimum=0)
            if f >= self.n_slots:
                raise ValueError(f"field 'free[{k}]' ({f}) leaves no slot of the "
                                 f"{self.n_slots} for applications")
        names = [a.name for a in self.apps]
        if len(set(names)) != len(names):
            dup = next(x for i, x in enumerate(names) if x in names[:i])
            raise ValueError(f"field 'apps': application names must be unique, "
                             f"{fields.short(dup)} is repeated")
        if len(self.apps) > MAX_APPS:
            raise ValueError(f"field 'apps' holds {len(self.apps)} applications, over the "
                             f"{MAX_APPS} accepted (their conflict pairs are listed)")
        if sum(a.demand for a in self.apps) > MAX_COPIES:
            raise ValueError(f"field 'apps[*].demand' sums to more than {MAX_COPIES} copies, "
                             f"the most a solution table may hold")
        if self.n_slots > MAX_SLOTS:
            raise ValueError(f"field 'n_slots' ({self.n_slots}) is over {MAX_SLOTS}: a "
                             f"solution is a table with one row per slot")
        for a in self.apps:
            for k in a.nodes:
                fields.integer(k, f"apps[{a.name}].nodes", minimum=0, maximum=self.n_nodes - 1)
            room = self.n_slots - max(self.free[k] for k in a.nodes)
            if a.demand > room:
                raise ValueError(f"apps[{a.name}]: field 'demand' ({a.demand}) is more than "
                                 f"the {room} slots its nodes can give (n_slots - free)")

    def load_of(self, k: int) -> int:
        """Slots per round the applications on node ``k`` need together."""
        return self.loads()[k]

    def loads(self) -> list[int]:
        """:meth:`load_of` of every node (computed once per problem, in one pass)."""
        cached = self.__dict__.get("_loads")
        if cached is None:
            cached = [0] * self.n_nodes
            for a in self.apps:
                for k in set(a.nodes):
                    cached[k] += a.demand
            object.__setattr__(self, "_loads", cached)
        return list(cached)

    def to_dict(self) -> dict[str, Any]:
        return {"problem": FAMILY, "n_nodes": self.n_nodes, "n_slots": self.n_slots,
                "objective": self.objective, "slot_us": self.slot_us,
                "free": list(self.free),
                "apps": [{"name": a.name, "nodes": list(a.nodes), "demand": a.demand}
                         for a in self.apps]}

    def dump(self, path: str | Path) -> None:
        from instances.atomic import write_atomic

        write_atomic(path, json.dumps(self.to_dict(), indent=1))


def to_dict(problem: SlotProblem) -> dict[str, Any]:
    """The problem as its JSON dictionary (``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


@fields.names_source
def from_dict(data: Mapping[str, Any], source: str = "<json>") -> SlotProblem:
    """Read a problem from its JSON dictionary (``"problem": "slot_assignment"``)."""
    fields.family(data, FAMILY, source=source)
    obj = fields.record(data, "<top>", required=("problem", "n_nodes", "n_slots", "apps"),
                        optional=("free", "objective", "slot_us"), source=source)
    n = fields.integer(obj["n_nodes"], "n_nodes", minimum=1, maximum=MAX_NODES, source=source)
    s = fields.integer(obj["n_slots"], "n_slots", minimum=1, maximum=MAX_SLOTS, source=source)
    free = obj.get("free", 1)
    if isinstance(free, (list, tuple)):
        free = [fields.integer(f, f"free[{k}]", minimum=0, source=source)
                for k, f in enumerate(fields.sequence(free, "free", length=n, source=source))]
    else:
        free = [fields.integer(free, "free", minimum=0, source=source)] * n
    apps = []
    items = fields.sequence(obj["apps"], "apps", min_length=1, source=source)
    if len(items) > MAX_APPS:
        raise ValueError(f"{fields.where(source, 'apps')} holds {len(items)} applications, "
                         f"over the {MAX_APPS} accepted (their conflict pairs are listed)")
    for i, item in enumerate(items):
        rec = fields.record(item, f"apps[{i}]", required=("nodes", "demand"),
                            optional=("name",), source=source)
        nodes = tuple(fields.integer(k, f"apps[{i}].nodes", minimum=0, maximum=n - 1,
                                     source=source)
                      for k in fields.sequence(rec["nodes"], f"apps[{i}].nodes", min_length=1,
                                               source=source))
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"{fields.where(source, f'apps[{i}].nodes')} repeats a node")
        d = fields.integer(rec["demand"], f"apps[{i}].demand", minimum=1, source=source)
        name = fields.text(rec.get("name", f"A{i}"), f"apps[{i}].name", source=source)
        apps.append(SlotApp(name, nodes, d))
    objective_ = fields.text(obj.get("objective", "round"), "objective", choices=OBJECTIVES,
                             source=source)
    slot_us = fields.integer(obj.get("slot_us", 20_000), "slot_us", minimum=1, source=source)
    copies = sum(a.demand for a in apps)
    if copies > MAX_COPIES:
        raise ValueError(f"{fields.where(source, 'apps[*].demand')} sums to {copies} copies, "
                         f"over the {MAX_COPIES} a solution table may hold")
    for k, f in enumerate(free):
        if f >= s:
            raise ValueError(f"{fields.where(source, f'free[{k}]')} ({f}) leaves no slot of "
                             f"the {s} for applications")
    return SlotProblem(n, tuple(apps), s, tuple(free), objective_, slot_us)


def load(path: str | Path) -> SlotProblem:
    """Read a problem JSON file."""
    from sim.problems import read_json

    return from_dict(read_json(path), source=str(path))


def conflicts(problem: SlotProblem) -> list[tuple[int, int]]:
    """Pairs of application indices ``(i, j)``, ``i < j``, that share a node."""
    sets = [set(a.nodes) for a in problem.apps]
    return [(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
            if sets[i] & sets[j]]


def neighbour_masks(problem: SlotProblem) -> list[int]:
    """Per application ``i``, the applications sharing a node with it as the bits of an
    int (bit ``j`` for application ``j``, its own bit clear): the pairs of
    :func:`conflicts` without listing them (2,000 applications: 2 x 10^6 pairs)."""
    on_node: dict[int, int] = {}
    for i, a in enumerate(problem.apps):
        for k in a.nodes:
            on_node[k] = on_node.get(k, 0) | (1 << i)
    out = []
    for i, a in enumerate(problem.apps):
        m = 0
        for k in a.nodes:
            m |= on_node[k]
        out.append(m & ~(1 << i))
    return out


def check(problem: SlotProblem, table: Sequence[Sequence[str]]) -> list[str]:
    """The violations of ``table`` as a slot table of ``problem`` (empty when feasible):
    1..``n_slots`` slots (exactly ``n_slots`` for ``"gap"``), known applications, no two
    applications of one slot sharing a node, each application in ``demand`` slots, and
    every node keeping ``free[k]`` slots free."""
    S = len(table)
    out: list[str] = []
    if S < 1 or S > problem.n_slots:
        out.append(f"table has {S} slots, allowed 1..{problem.n_slots}")
    if problem.objective == "gap" and S != problem.n_slots:
        out.append(f"table has {S} slots, the fixed round is {problem.n_slots}")
    by_name = {a.name: a for a in problem.apps}
    count = dict.fromkeys(by_name, 0)
    for s, slot in enumerate(table):
        used: set[int] = set()
        for name in slot:
            if name not in by_name:
                out.append(f"slot {s}: unknown application {name!r}")
                continue
            nodes = set(by_name[name].nodes)
            if nodes & used:
                out.append(f"slot {s}: application {name!r} shares node(s) "
                           f"{sorted(nodes & used)} with another application")
            used |= nodes
            count[name] += 1
    for name, c in count.items():
        if c != by_name[name].demand:
            out.append(f"application {name!r} owns {c} slots, demand {by_name[name].demand}")
    busy_on = [0] * problem.n_nodes  # slots in which each node runs an application
    for name, c in count.items():
        for k in set(by_name[name].nodes):
            busy_on[k] += c
    for k in range(problem.n_nodes):
        busy = busy_on[k]
        if S - busy < problem.free[k]:
            out.append(f"node {k} keeps {S - busy} free slots, needs {problem.free[k]}")
    return out


def max_gap(table: Sequence[Sequence[str]], name: str) -> int:
    """Largest cyclic gap (slots) between consecutive slots of application ``name``."""
    S = len(table)
    own = [s for s, slot in enumerate(table) if name in slot]
    if not own:
        return S
    return max([own[j + 1] - own[j] for j in range(len(own) - 1)] + [own[0] + S - own[-1]])


def objective(problem: SlotProblem, table: Sequence[Sequence[str]]) -> float:
    """Round length (``"round"``) or the largest gap over all applications (``"gap"``,
    :func:`max_gap` of each, found in one pass over the table)."""
    if problem.objective == "round":
        return float(len(table))
    S = len(table)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    widest: dict[str, int] = {}
    for s, slot in enumerate(table):
        for name in slot:
            if name in last:
                if s != last[name]:
                    widest[name] = max(widest[name], s - last[name])
            else:
                first[name] = s
                widest[name] = 0
            last[name] = s
    return float(max(max(widest[a.name], first[a.name] + S - last[a.name])
                     if a.name in first else S for a in problem.apps))


def lower_bound(problem: SlotProblem) -> int:
    """A simple valid bound: the node load plus its free reserve (``"round"``), or
    ``ceil(S / d_a)`` for the application with the smallest demand (``"gap"``)."""
    if problem.objective == "round":
        return max(problem.load_of(k) + problem.free[k] for k in range(problem.n_nodes))
    S = problem.n_slots
    return max(-(-S // a.demand) for a in problem.apps)


def random_problem(seed: int, *, n_nodes: int = 64, n_apps: int = 20, n_slots: int = 50,
                   free: int = 5, nodes_range: tuple[int, int] = (2, 16),
                   demand_range: tuple[int, int] = (1, 5), objective: str = "round"
                   ) -> SlotProblem:
    """A random instance: each application on a random node subset of a size drawn from
    ``nodes_range``, with a demand drawn from ``demand_range`` (both inclusive)."""
    rng = random.Random(seed)
    apps = []
    for i in range(n_apps):
        size = rng.randint(*nodes_range)
        apps.append(SlotApp(f"A{i}", tuple(sorted(rng.sample(range(n_nodes), size))),
                            rng.randint(*demand_range)))
    return SlotProblem(n_nodes, tuple(apps), n_slots, (free,) * n_nodes, objective)


# ---------------------------------------------------------------------------- declaration
_F = fields.Field

SCHEMA = fields.Record(
    "Slot assignment (Karl, an Ousterhout matrix for BSP programs): give each application "
    "its demand of slots of a round, on all its nodes at once, applications sharing a node "
    "in different slots, every node keeping its free slots; minimise the round or the "
    "largest gap.",
    (
        _F("n_nodes", "integer", "Nodes.", minimum=1, maximum=MAX_NODES, example=3),
        _F("n_slots", "integer", "The round for \"gap\"; the largest round allowed for "
           "\"round\".", "slots", minimum=1, maximum=MAX_SLOTS, example=6),
        _F("apps", "array", "The applications.",
           items=fields.Record("An application: one thread on each of its nodes.", (
               _F("name", "string", "Unique name (default A<index>).", default=fields.COMPUTED),
               _F("nodes", "array", "Its distinct nodes.", minimum=0,
                  items=_F("", "integer", "")),
               _F("demand", "integer", "d_a, slots per round.", "slots", minimum=1))),
           example=[{"name": "A0", "nodes": [0, 1], "demand": 2},
                    {"name": "A1", "nodes": [1, 2], "demand": 1},
                    {"name": "A2", "nodes": [2], "demand": 2}]),
        _F("free", "array", "F_k, slots of the round kept free for local users per node, or "
           "one number for every node.", "slots", minimum=0, items=_F("", "integer", ""),
           scalar=True, default=1, example=[1, 1, 1]),
        _F("objective", "string", "\"round\": minimise the round length; \"gap\": minimise "
           "the largest cyclic gap between two slots of one application.",
           choices=OBJECTIVES, default="round"),
        _F("slot_us", "integer", "Slot length (when a table is simulated).", "µs", minimum=1,
           default=20_000),
    ))
"""The family's JSON fields, declared once (``sim.problems.schema("slot_assignment")``)."""
