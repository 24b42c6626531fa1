"""Heuristic slot tables for several distributed applications (``sim.problems.slots``).

- :func:`round_robin`: round-robin slot filling. Passes over the applications (in the
  given order) hand out one slot per pass to every application with demand left: the
  first slot, searching cyclically from a pointer that advances after every placement,
  where no application sharing a node already sits and the application does not own it
  yet. A new slot is opened when none fits.
- :func:`coloring`: greedy graph colouring (networkx ``greedy_color``, strategy
  ``largest_first``) of the conflict graph whose vertices are the ``d_a`` copies of each
  application; two copies conflict when they belong to one application or to two
  applications sharing a node. Colours are slots.

Both give a table of ``R`` slots. Objective ``"round"``: the table is extended by empty
slots until every node keeps its ``F_k`` free slots. Objective ``"gap"``: the ``R`` slots
are spread over the fixed round (slot ``c`` goes to ``floor(c S / R)``), or no solution
when ``R`` or a node's reserve does not fit. The objective is recomputed by the shared
problem code.
"""

from __future__ import annotations

import time
from typing import Any

from sim.problems import checker
from sim.problems import slots as sp
from sim.problems.slots import SlotProblem
from sim.result import Result, Status, build

__all__ = ["NETWORKX_MAX_COPIES", "round_robin", "coloring"]

NETWORKX_MAX_COPIES = 20_000
"""Most copies (total demand) the networkx colouring strategies accept: their graph has
up to ``copies**2 / 2`` edges."""


FINISH_SECONDS_PER_ENTRY = 1e-6
"""Seconds kept back at the end of a time limit per copy (total demand), and per slot of
a ``"gap"`` round, for the work after the table is filled: laying it out, checking and
scoring it, and checking and scoring it again where every answer is verified
(``sim.result.verify``), none of which reads the clock. Measured about 0.86 microseconds
per copy: 2.5 s of CPU in the heuristic and 1.0 s in the verification after a colouring
of 4 x 10^6 copies that itself took 2.5 s; the colouring is proportional to the copies
too, so without it a run whose fill ended just before the limit overran by more than
the limit."""


def _fill_deadline(problem: SlotProblem, t0: float, time_limit: float | None
                   ) -> float | None:
    """The ``time.perf_counter`` value by which filling must stop: ``time_limit`` seconds
    from ``t0`` less :data:`FINISH_SECONDS_PER_ENTRY` per copy and slot (None: no limit);
    it may lie in the past (a table too large to check in the limit: UNKNOWN at once)."""
    if time_limit is None:
        return None
    entries = sum(a.demand for a in problem.apps)
    if problem.objective == "gap":
        entries += problem.n_slots
    return t0 + float(time_limit) - FINISH_SECONDS_PER_ENTRY * entries


def _finish(name: str, problem: SlotProblem, table: list[list[str]], t0: float, seed: int,
            params: dict[str, Any]) -> Result:
    R = len(table)
    if problem.objective == "round":
        # a node with F_k free needs R_total - load_k >= F_k
        need = max(load + f for load, f in zip(problem.loads(), problem.free, strict=True))
        table = table + [[] for _ in range(max(R, need) - R)]
        if len(table) > problem.n_slots:
            return _stopped(name, problem, t0, seed, f"needs {len(table)} slots > n_slots", params)
    else:
        S = problem.n_slots
        if R > S:
            return _stopped(name, problem, t0, seed, f"needs {R} slots > n_slots = {S}", params)
        spread: list[list[str]] = [[] for _ in range(S)]
        for c, slot in enumerate(table):
            spread[c * S // R] = list(slot)
        table = spread
    violations = sp.check(problem, table)
    if violations:  # the first one, as a note
        return _stopped(name, problem, t0, seed, f"no feasible table: {violations[0]}", params)
    return build(solver=name, status=Status.FEASIBLE, solution=table,
                 check=checker(problem),
                 objective=lambda t: sp.objective(problem, t),
                 runtime=time.perf_counter() - t0, seed=seed, params=params)


def round_robin(problem: SlotProblem, *, time_limit: float | None = None,
                seed: int = 0) -> Result:
    """Round-robin slot filling (see the module docstring); deterministic.

    The work is bounded: UNKNOWN at once when a node's load and free slots exceed
    ``n_slots``, and filling stops with UNKNOWN as soon as the table needs more than
    ``n_slots`` slots (no table can then be feasible) or ``time_limit`` (seconds, from
    this call) is spent, less the time kept back for checking the table
    (:data:`FINISH_SECONDS_PER_ENTRY`); each placement scans at most ``n_slots`` slots."""
    t0 = time.perf_counter()
    deadline = _fill_deadline(problem, t0, time_limit)
    crowded = _crowded_node(problem)
    if crowded is not None:
        return _stopped("round-robin", problem, t0, seed, crowded)
    apps = problem.apps
    conflict = sp.neighbour_masks(problem)
    left = [a.demand for a in apps]
    table: list[list[str]] = []
    owners: list[int] = []  # per slot, the bits of the applications in it
    ptr = placements = 0
    while any(left):
        for i, a in enumerate(apps):
            if not left[i]:
                continue
            if len(table) > problem.n_slots:
                return _stopped("round-robin", problem, t0, seed,
                                f"needs more than n_slots = {problem.n_slots} slots")
            placements += 1
            if deadline is not None and time.perf_counter() > deadline:
                return _stopped("round-robin", problem, t0, seed,
                                f"time limit reached after {placements - 1} placements")
            ptr = _place(table, owners, i, a.name, conflict[i], ptr)
            left[i] -= 1
    return _finish("round-robin", problem, table, t0, seed, {})


def _place(table: list[list[str]], owners: list[int], i: int, name: str, conflict: int,
           ptr: int) -> int:
    """Put one copy of application ``i`` (``name``) into the first slot from ``ptr``
    (cyclically) where neither it nor an application of the bits ``conflict`` sits, else
    into a new slot; the next pointer."""
    R = len(table)
    own = 1 << i
    for j in range(R):
        s = (ptr + j) % R
        if not owners[s] & (own | conflict):
            table[s].append(name)
            owners[s] |= own
            return (s + 1) % R
    table.append([name])
    owners.append(own)
    return 0


def _crowded_node(problem: SlotProblem) -> str | None:
    """Why no table fits, when a node's applications and free slots need more than
    ``n_slots`` slots (they cannot share one); None otherwise."""
    for k, load in enumerate(problem.loads()):
        if load + problem.free[k] > problem.n_slots:
            return (f"node {k} needs {load} slots for its applications and "
                    f"{problem.free[k]} free > n_slots = {problem.n_slots}")
    return None


def _stopped(name: str, problem: SlotProblem, t0: float, seed: int, note: str,
             params: dict[str, Any] | None = None) -> Result:
    """UNKNOWN without a table, ``note`` saying why."""
    return build(solver=name, status=Status.UNKNOWN, solution=None,
                 check=lambda t: None, objective=lambda t: 0.0,
                 runtime=time.perf_counter() - t0, seed=seed, params=params or {}, note=note)


def coloring(problem: SlotProblem, *, time_limit: float | None = None, seed: int = 0,
             strategy: str = "largest_first") -> Result:
    """Greedy colouring of the copy-conflict graph (see the module docstring);
    ``strategy`` is a networkx ``greedy_color`` strategy. ``time_limit`` (seconds) is
    obeyed by ``"largest_first"`` only; other strategies build networkx's graph, refused
    past :data:`NETWORKX_MAX_COPIES` copies.

    ``"largest_first"`` (the default) obeys ``time_limit`` (UNKNOWN when it is spent, less
    the time kept back for checking the table, :data:`FINISH_SECONDS_PER_ENTRY`) and
    runs without building the graph: copies in the
    order of networkx's ``largest_first`` (degree ``d_a - 1 + sum of the demands of the
    applications sharing a node``, decreasing, ties in copy order), each to the first
    slot where neither its application nor one sharing a node sits; this is the colouring
    ``networkx.greedy_color`` returns (checked in the tests) in a fraction of its time
    and memory (the graph has ~10^6 edges at 500 applications)."""
    t0 = time.perf_counter()
    apps = problem.apps
    crowded = _crowded_node(problem)
    if crowded is not None:
        return _stopped("coloring", problem, t0, seed, crowded)
    deadline = _fill_deadline(problem, t0, time_limit)
    if strategy == "largest_first":
        colour = _largest_first(problem, deadline)
    else:
        copies = sum(a.demand for a in apps)
        if copies > NETWORKX_MAX_COPIES:
            raise ValueError(f"strategy {strategy!r} builds the conflict graph of every copy: "
                             f"{copies} copies, over the {NETWORKX_MAX_COPIES} it accepts "
                             f"(use 'largest_first')")
        colour = _networkx_coloring(problem, strategy)
    if colour is None:
        return _stopped("coloring", problem, t0, seed, "time limit reached")
    R = max((max(cols) for cols in colour if cols), default=-1) + 1
    table: list[list[str]] = [[] for _ in range(R)]
    for i, cols in enumerate(colour):
        for col in cols:
            table[col].append(apps[i].name)
    return _finish("coloring", problem, table, t0, seed, {"strategy": strategy})


def _largest_first(problem: SlotProblem,
                   deadline: float | None = None) -> list[list[int]] | None:
    """The slot of every copy, per application, in the largest-first order; None when
    ``deadline`` (a ``time.perf_counter`` value) passes first.

    Copies of one application share a degree, so the order is the applications by
    decreasing degree (ties by index), each application's copies together; a copy's
    search starts after its previous copy's slot, since every slot before it was
    refused for the same reason then and still is (slots only fill up)."""
    apps = problem.apps
    # the demands of each application's neighbours summed bit by bit of the demand:
    # sum_b 2^b |{neighbours with bit b of their demand set}|, no pair listed
    by_bit = [0] * max(a.demand for a in apps).bit_length()
    for i, a in enumerate(apps):
        for b in range(a.demand.bit_length()):
            if a.demand >> b & 1:
                by_bit[b] |= 1 << i
    nbr_demand = []
    for n, m in enumerate(sp.neighbour_masks(problem)):
        if deadline is not None and n % 64 == 0 and time.perf_counter() > deadline:
            return None
        nbr_demand.append(sum((m & bits).bit_count() << b for b, bits in enumerate(by_bit)))
    order = sorted(range(len(apps)), key=lambda i: apps[i].demand - 1 + nbr_demand[i],
                   reverse=True)
    busy: list[set[int]] = []       # nodes occupied in each slot
    owners: list[set[int]] = []     # applications in each slot
    colour: list[list[int]] = [[] for _ in apps]
    for i in order:
        nodes = frozenset(apps[i].nodes)
        s = 0
        for _ in range(apps[i].demand):
            if deadline is not None and time.perf_counter() > deadline:
                return None
            while s < len(busy) and (i in owners[s] or not busy[s].isdisjoint(nodes)):
                s += 1
            if s == len(busy):
                busy.append(set())
                owners.append(set())
            busy[s] |= nodes
            owners[s].add(i)
            colour[i].append(s)
    return colour


def _networkx_coloring(problem: SlotProblem, strategy: str) -> list[list[int]]:
    import networkx as nx

    apps = problem.apps
    g = nx.Graph()
    copies = [(i, c) for i, a in enumerate(apps) for c in range(a.demand)]
    g.add_nodes_from(copies)
    for i, a in enumerate(apps):
        for c in range(a.demand):
            for c2 in range(c + 1, a.demand):
                g.add_edge((i, c), (i, c2))
    for i, j in sp.conflicts(problem):
        for c in range(apps[i].demand):
            for c2 in range(apps[j].demand):
                g.add_edge((i, c), (j, c2))
    found = nx.greedy_color(g, strategy=strategy)
    return [[found[i, c] for c in range(a.demand)] for i, a in enumerate(apps)]
