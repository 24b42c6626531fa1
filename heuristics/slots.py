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

__all__ = ["round_robin", "coloring"]


def _finish(name: str, problem: SlotProblem, table: list[list[str]], t0: float, seed: int,
            params: dict[str, Any]) -> Result:
    R = len(table)
    if problem.objective == "round":
        need = max(problem.load_of(k) + problem.free[k] for k in range(problem.n_nodes))
        busy_max = max(R, need)
        table = table + [[] for _ in range(busy_max - R)]
        # a node with F_k free needs R_total - load_k >= F_k
        while any(len(table) - problem.load_of(k) < problem.free[k]
                  for k in range(problem.n_nodes)):
            table.append([])
        if len(table) > problem.n_slots:
            return build(solver=name, status=Status.UNKNOWN, solution=None, check=lambda t: None,
                         objective=lambda t: 0.0, runtime=time.perf_counter() - t0, seed=seed,
                         params=params, note=f"needs {len(table)} slots > n_slots")
    else:
        S = problem.n_slots
        if R > S:
            return build(solver=name, status=Status.UNKNOWN, solution=None, check=lambda t: None,
                         objective=lambda t: 0.0, runtime=time.perf_counter() - t0, seed=seed,
                         params=params, note=f"needs {R} slots > n_slots = {S}")
        spread: list[list[str]] = [[] for _ in range(S)]
        for c, slot in enumerate(table):
            spread[c * S // R] = list(slot)
        table = spread
    violations = sp.check(problem, table)
    if violations:  # the first one, as a note
        return build(solver=name, status=Status.UNKNOWN, solution=None, check=lambda t: None,
                     objective=lambda t: 0.0, runtime=time.perf_counter() - t0, seed=seed,
                     params=params, note=f"no feasible table: {violations[0]}")
    return build(solver=name, status=Status.FEASIBLE, solution=table,
                 check=checker(problem),
                 objective=lambda t: sp.objective(problem, t),
                 runtime=time.perf_counter() - t0, seed=seed, params=params)


def round_robin(problem: SlotProblem, *, time_limit: float | None = None,
                seed: int = 0) -> Result:
    """Round-robin slot filling (see the module docstring); deterministic."""
    t0 = time.perf_counter()
    apps = problem.apps
    conflict = {a.name: set() for a in apps}
    for i, j in sp.conflicts(problem):
        conflict[apps[i].name].add(apps[j].name)
        conflict[apps[j].name].add(apps[i].name)
    left = {a.name: a.demand for a in apps}
    table: list[list[str]] = []
    ptr = 0
    while any(left.values()):
        for a in apps:
            if not left[a.name]:
                continue
            R = len(table)
            placed = False
            for j in range(R):
                s = (ptr + j) % R
                slot = table[s]
                if a.name not in slot and not conflict[a.name].intersection(slot):
                    slot.append(a.name)
                    ptr = (s + 1) % max(R, 1)
                    placed = True
                    break
            if not placed:
                table.append([a.name])
                ptr = 0
            left[a.name] -= 1
    return _finish("round-robin", problem, table, t0, seed, {})


def coloring(problem: SlotProblem, *, time_limit: float | None = None, seed: int = 0,
             strategy: str = "largest_first") -> Result:
    """Greedy colouring of the copy-conflict graph (see the module docstring);
    ``strategy`` is a networkx ``greedy_color`` strategy. ``time_limit`` (seconds) is
    recorded only: one greedy pass.

    ``"largest_first"`` (the default) runs without building the graph: copies in the
    order of networkx's ``largest_first`` (degree ``d_a - 1 + sum of the demands of the
    applications sharing a node``, decreasing, ties in copy order), each to the first
    slot where neither its application nor one sharing a node sits; this is the colouring
    ``networkx.greedy_color`` returns (checked in the tests) in a fraction of its time
    and memory (the graph has ~10^6 edges at 500 applications)."""
    t0 = time.perf_counter()
    apps = problem.apps
    if strategy == "largest_first":
        colour = _largest_first(problem)
    else:
        colour = _networkx_coloring(problem, strategy)
    R = max(colour.values()) + 1 if colour else 0
    table: list[list[str]] = [[] for _ in range(R)]
    for (i, _c), col in sorted(colour.items()):
        table[col].append(apps[i].name)
    return _finish("coloring", problem, table, t0, seed, {"strategy": strategy})


def _largest_first(problem: SlotProblem) -> dict[tuple[int, int], int]:
    apps = problem.apps
    nbr_demand = [0] * len(apps)
    for i, j in sp.conflicts(problem):
        nbr_demand[i] += apps[j].demand
        nbr_demand[j] += apps[i].demand
    copies = [(i, c) for i, a in enumerate(apps) for c in range(a.demand)]
    order = sorted(copies, key=lambda ic: apps[ic[0]].demand - 1 + nbr_demand[ic[0]],
                   reverse=True)
    busy: list[set[int]] = []       # nodes occupied in each slot
    owners: list[set[int]] = []     # applications in each slot
    nodes = [frozenset(a.nodes) for a in apps]
    colour: dict[tuple[int, int], int] = {}
    for i, c in order:
        s = 0
        while s < len(busy) and (i in owners[s] or not busy[s].isdisjoint(nodes[i])):
            s += 1
        if s == len(busy):
            busy.append(set())
            owners.append(set())
        busy[s] |= nodes[i]
        owners[s].add(i)
        colour[i, c] = s
    return colour


def _networkx_coloring(problem: SlotProblem, strategy: str) -> dict[tuple[int, int], int]:
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
    return nx.greedy_color(g, strategy=strategy)
