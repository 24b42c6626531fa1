"""Colouring heuristic for the memory-feasible gang schedule (``sim.problems.gang_schedule``).

The conflict graph (one vertex per job, an edge between jobs sharing a node) is coloured
greedily as networkx's ``greedy_color`` does (strategy as an option; the default
``largest_first`` without building the graph, per node); a colour is a row.
Memory-aware repair: each job is then placed, in the colouring's order, in the lowest
row whose nodes are free **and** whose resident pages (local tasks plus the row's tasks)
still fit every node of the job; a job that fits no open row opens a new one. With one
task per node per row, a task on a free node meets only the local memory, which the
family's input check already fits, so the repair is a first-fit compaction that may only
lower the number of rows. For ``"weighted"`` the first fit takes jobs heaviest first (ties:
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

__all__ = ["NETWORKX_MAX_JOBS", "coloring"]

NETWORKX_MAX_JOBS = 2_000
"""Most jobs the networkx colouring strategies (all but ``largest_first``) accept: their
graph lists up to ``jobs**2 / 2`` edges."""


def coloring(problem: GangProblem, *, time_limit: float | None = None, seed: int = 0,
             strategy: str = "largest_first") -> Result:
    """Greedy colouring + memory-aware first-fit repair (see the module docstring).

    ``strategy`` is a networkx ``greedy_color`` strategy other than
    ``random_sequential`` (deterministic ones only). ``"largest_first"`` (the default)
    runs without building the conflict graph and obeys ``time_limit`` (seconds, UNKNOWN
    when it is spent): jobs by decreasing degree (:func:`sim.problems.gang_schedule.degrees`,
    ties by index), each given the smallest colour no job on one of its nodes has, which
    is the colouring ``networkx.greedy_color`` returns (checked in the tests); the other
    strategies build networkx's graph and are refused past :data:`NETWORKX_MAX_JOBS` jobs.
    ``seed`` is only recorded (the heuristic is deterministic)."""
    if strategy == "random_sequential":
        raise ValueError("strategy: random_sequential is not deterministic; pick another")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    params = {"strategy": strategy, "time_limit": time_limit}
    over = gs.resident_overload(problem)
    if over:
        return build(solver="coloring", status=Status.INFEASIBLE, solution=None,
                     check=checker(problem), objective=lambda s: gs.objective(problem, s),
                     runtime=time.perf_counter() - t0, seed=seed, params=params,
                     note=f"memory 'resident' (eq. 4): node {over[0][0]} holds "
                          f"{over[0][1]} pages > mem = {problem.mem}")
    jobs = problem.jobs
    if strategy == "largest_first":
        colour = _largest_first(problem, deadline)
    else:
        if len(jobs) > NETWORKX_MAX_JOBS:
            raise ValueError(f"strategy {strategy!r} builds the conflict graph: field 'jobs' "
                             f"holds {len(jobs)} jobs, over the {NETWORKX_MAX_JOBS} it "
                             f"accepts (use 'largest_first')")
        colour = _networkx_coloring(problem, strategy)
    rows = None if colour is None else _first_fit(problem, colour, deadline)
    if rows is None:
        return build(solver="coloring", status=Status.UNKNOWN, solution=None,
                     check=lambda s: None, objective=lambda s: 0.0,
                     runtime=time.perf_counter() - t0, seed=seed, params=params,
                     note="time limit reached")
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
                 runtime=time.perf_counter() - t0, seed=seed, params=params, note=note)


def _lowest_free(busy: int) -> int:
    """The lowest colour (bit) not set in ``busy``."""
    return (~busy & (busy + 1)).bit_length() - 1


def _largest_first(problem: GangProblem, deadline: float | None) -> list[int] | None:
    """networkx's ``largest_first`` greedy colour of every job, computed per node (a
    colour is taken on a node when a job there has it); None once ``deadline`` (a
    ``time.perf_counter`` value) has passed."""
    deg = gs.degrees(problem, deadline)
    if deg is None:
        return None
    order = sorted(range(len(deg)), key=lambda j: -deg[j])  # stable: ties by index
    taken: dict[int, int] = {}  # node -> bit mask of the colours of its jobs
    colour = [0] * len(deg)
    for n, j in enumerate(order):
        if deadline is not None and n % 256 == 0 and time.perf_counter() > deadline:
            return None
        nodes = problem.jobs[j].nodes
        busy = 0
        for k in nodes:
            busy |= taken.get(k, 0)
        c = colour[j] = _lowest_free(busy)
        for k in nodes:
            taken[k] = taken.get(k, 0) | (1 << c)
    return colour


def _networkx_coloring(problem: GangProblem, strategy: str) -> list[int]:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(len(problem.jobs)))
    g.add_edges_from(gs.conflicts(problem))
    found = nx.greedy_color(g, strategy=strategy)
    return [found[j] for j in range(len(problem.jobs))]


def _first_fit(problem: GangProblem, colour: list[int],
               deadline: float | None) -> list[list[int]] | None:
    """The memory-aware first-fit repair: jobs in colour order (``"weighted"``: heaviest
    first, ties by colour), each into the lowest row where its nodes are free; None once
    ``deadline`` has passed. A row holds one task per node, so on a free node a task
    meets only the local memory, beside which the family's input check fits every task:
    the lowest free row is the lowest row that fits (the result's check re-tests it)."""
    jobs = problem.jobs
    if problem.objective == "weighted":  # heavy jobs first fit into the early rows
        order = sorted(range(len(jobs)), key=lambda j: (-jobs[j].weight, colour[j], j))
    else:
        order = sorted(range(len(jobs)), key=lambda j: (colour[j], j))
    rows: list[list[int]] = []
    used: dict[int, int] = {}  # node -> bit mask of the rows it is busy in
    for n, j in enumerate(order):
        if deadline is not None and n % 256 == 0 and time.perf_counter() > deadline:
            return None
        job = jobs[j]
        busy = 0
        for k in job.nodes:
            busy |= used.get(k, 0)
        r = _lowest_free(busy)
        if r == len(rows):
            rows.append([])
        rows[r].append(j)
        for k in job.nodes:
            used[k] = used.get(k, 0) | (1 << r)
    return rows
