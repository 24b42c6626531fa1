"""Colouring heuristic for the memory-feasible gang schedule (``sim.problems.gang_schedule``).

The conflict graph (one vertex per job, an edge between jobs sharing a node) is coloured
greedily with networkx (``greedy_color``, strategy as an option); a colour is a row.
Memory-aware repair: each job is then placed, in the colouring's order, in the lowest
row whose nodes are free **and** whose resident pages (local tasks plus the row's tasks)
still fit every node of the job; a job that fits no open row opens a new one. With one
task per node per row and the input check of the family, the memory test only fails on
instances the family rejects, so in practice the repair is a first-fit compaction that
may only lower the number of rows; it is kept so that the heuristic never emits a row
the checker refuses. For ``"weighted"`` the first fit takes jobs heaviest first (ties:
colour), and the rows are finally served heaviest first (rows
are interchangeable, so sorting them by total weight, descending, is free and optimal for
the given partition). Proves nothing: status FEASIBLE. Under ``memory = "resident"``
(eq. 4) an instance with a node whose mapped tasks exceed ``mem`` has no schedule: the
heuristic reports INFEASIBLE (that is proved, it does not depend on the rows) and
otherwise colours as under ``"row"``.
"""

from __future__ import annotations

import time

from sim.problems import checker
from sim.problems import gang_schedule as gs
from sim.problems.gang_schedule import GangProblem
from sim.result import Result, Status, build

__all__ = ["coloring"]


def coloring(problem: GangProblem, *, time_limit: float | None = None, seed: int = 0,
             strategy: str = "largest_first") -> Result:
    """Greedy colouring + memory-aware first-fit repair (see the module docstring).

    ``strategy`` is a networkx ``greedy_color`` strategy other than
    ``random_sequential`` (deterministic ones only); ``time_limit`` (s) and ``seed`` are
    only recorded (the heuristic is polynomial and deterministic)."""
    import networkx as nx

    if strategy == "random_sequential":
        raise ValueError("strategy: random_sequential is not deterministic; pick another")
    t0 = time.perf_counter()
    over = gs.resident_overload(problem)
    if over:
        return build(solver="coloring", status=Status.INFEASIBLE, solution=None,
                     check=checker(problem), objective=lambda s: gs.objective(problem, s),
                     runtime=time.perf_counter() - t0, seed=seed,
                     params={"strategy": strategy, "time_limit": time_limit},
                     note=f"memory 'resident' (eq. 4): node {over[0][0]} holds "
                          f"{over[0][1]} pages > mem = {problem.mem}")
    jobs = problem.jobs
    g = nx.Graph()
    g.add_nodes_from(range(len(jobs)))
    g.add_edges_from(gs.conflicts(problem))
    colour = nx.greedy_color(g, strategy=strategy)
    if problem.objective == "weighted":  # heavy jobs first fit into the early rows
        order = sorted(range(len(jobs)), key=lambda j: (-jobs[j].weight, colour[j], j))
    else:
        order = sorted(range(len(jobs)), key=lambda j: (colour[j], j))
    rows: list[list[int]] = []
    busy: list[set[int]] = []
    pages: list[list[int]] = []
    for j in order:
        job = jobs[j]
        for r in range(len(rows)):
            if busy[r] & set(job.nodes):
                continue
            if any(pages[r][k] + m > problem.mem for k, m in zip(job.nodes, job.mem,
                                                                    strict=True)):
                continue
            break
        else:
            rows.append([])
            busy.append(set())
            pages.append(list(problem.local_mem))
            r = len(rows) - 1
        rows[r].append(j)
        busy[r] |= set(job.nodes)
        for k, m in zip(job.nodes, job.mem, strict=True):
            pages[r][k] += m
    if problem.objective == "weighted":
        rows.sort(key=lambda row: -sum(jobs[j].weight for j in row))
    named = [[jobs[j].name for j in row] for row in rows]
    status = Status.FEASIBLE if len(named) <= problem.max_rows else Status.INFEASIBLE
    note = "" if status is Status.FEASIBLE else \
        f"colouring needs {len(named)} rows > max_rows = {problem.max_rows}"
    return build(solver="coloring", status=status,
                 solution=named if status is Status.FEASIBLE else None,
                 check=checker(problem),
                 objective=lambda s: gs.objective(problem, s),
                 runtime=time.perf_counter() - t0, seed=seed,
                 params={"strategy": strategy, "time_limit": time_limit}, note=note)
