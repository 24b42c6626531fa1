"""Memory-balanced task mapping (CSM spec 3.8, M6), defined once.

A batch of distributed jobs is placed on ``n`` nodes of ``M`` pages each: every task of
job ``j`` (memory ``mem[j][t]`` pages) goes to one node, at most one task of a job per node
(the paper's "one distributed task per node" mapping), on top of a per-node memory already
in use ``base[k]`` (pages). With ``N_k`` the resulting node memory (eq. 4), the objective
is ``"max"``: minimise ``max_k N_k`` (the paper's uniform memory load), or
``"overload"``: minimise ``sum_k max(0, N_k - M)`` (the pages that must be paged).

A solution is a list with, per job, the list of nodes of its tasks (``nodes[j][t]``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from sim.problems import fields

FAMILY = "task_mapping"

__all__ = ["FAMILY", "OBJECTIVES", "TaskMapping", "from_dict", "to_dict", "check", "objective",
           "least_loaded", "random_problem"]

OBJECTIVES = ("max", "overload")
Solution = list[list[int]]

MAX_NODES = 1_000_000
"""Largest cluster accepted (the models keep per-node arrays)."""


@dataclass(frozen=True)
class TaskMapping:
    """Parameters: ``n_nodes`` (> 0), ``mem_pages`` M (> 0), ``jobs``: per job the
    memory in pages of each task (each > 0, at most ``n_nodes`` tasks, each task <= M),
    ``base``: pages in use per node (default zeros), ``objective`` "max" | "overload",
    ``name``."""

    FAMILY: ClassVar[str] = FAMILY

    n_nodes: int
    mem_pages: int
    jobs: tuple[tuple[int, ...], ...]
    base: tuple[int, ...] = ()
    objective: str = "max"
    name: str = "task_mapping"

    def __post_init__(self) -> None:
        fields.integer(self.n_nodes, "n_nodes", minimum=1, maximum=MAX_NODES)
        fields.integer(self.mem_pages, "mem_pages", minimum=1, maximum=fields.EXACT_MAX)
        if self.objective not in OBJECTIVES:
            raise ValueError(f"field 'objective' must be one of {OBJECTIVES}, "
                             f"got {self.objective!r}")
        if not self.jobs:
            raise ValueError("field 'jobs' must hold at least one job")
        for j, job in enumerate(self.jobs):
            if not 1 <= len(job) <= self.n_nodes:
                raise ValueError(f"field 'jobs[{j}]' has {len(job)} tasks; a job needs "
                                 f"1..n_nodes = {self.n_nodes} tasks (one per node)")
            for t, m in enumerate(job):
                fields.integer(m, f"jobs[{j}][{t}]", minimum=1, maximum=self.mem_pages)
        if self.base and len(self.base) != self.n_nodes:
            raise ValueError(f"field 'base' must have n_nodes = {self.n_nodes} entries, "
                             f"got {len(self.base)}")
        fields.integers(self.base, "base", minimum=0)
        if not self.base:
            object.__setattr__(self, "base", (0,) * self.n_nodes)
        fields.exact(sum(self.base) + sum(sum(j) for j in self.jobs),
                     "fields 'base' and 'jobs': the total memory (the largest load)")

    @property
    def base_mem(self) -> tuple[int, ...]:
        return self.base or (0,) * self.n_nodes

    def loads(self, solution: Solution) -> list[int]:
        """N_k per node (pages)."""
        load = list(self.base_mem)
        for job, nodes in zip(self.jobs, solution, strict=True):
            for m, k in zip(job, nodes, strict=True):
                load[k] += m
        return load

    def lower_bound(self) -> float:
        """A simple bound: the average load (and the largest base/task) for "max"."""
        total = sum(self.base_mem) + sum(sum(j) for j in self.jobs)
        if self.objective == "max":
            return float(max(-(-total // self.n_nodes), max(self.base_mem),
                             max(max(j) for j in self.jobs)))
        return float(max(0, total - self.n_nodes * self.mem_pages))

    def to_dict(self) -> dict[str, Any]:
        return {"problem": FAMILY, "name": self.name, "n_nodes": self.n_nodes,
                "mem_pages": self.mem_pages, "jobs": [list(j) for j in self.jobs],
                "base": list(self.base_mem), "objective": self.objective}


def least_loaded(problem: TaskMapping, deadline: float | None = None
                 ) -> tuple[list[list[int]], list[int]]:
    """The CSM paper's uniform-memory-load mapping (AMB-4.14), the one definition its
    heuristic and the exact models' warm start share: jobs in the given order, job j's
    tasks on the ``len(job)`` distinct nodes with the least memory so far (ties: lowest
    node id), the largest task on the least-loaded node.

    Parameters
    ----------
    deadline : float, optional
        A ``time.perf_counter`` value looked at after every job: TimeoutError once it
        has passed.

    Returns
    -------
    (mapping, load)
        ``mapping[j][t]`` the node of task t of job j; ``load[k]`` node k's memory after
        the mapping (pages, ``base_mem`` included).
    """
    import heapq
    import time

    load = list(problem.base_mem)
    heap = [(x, k) for k, x in enumerate(load)]  # every node once, keyed by (load, id)
    heapq.heapify(heap)
    sol = []
    for job in problem.jobs:
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeoutError(f"the time limit ran out after {len(sol)} jobs")
        order = [heapq.heappop(heap)[1] for _ in job]  # least loaded first, ties: lowest id
        by_size = sorted(range(len(job)), key=lambda i: (-job[i], i))
        nodes = [0] * len(job)
        for slot, i in enumerate(by_size):
            nodes[i] = order[slot]
            load[order[slot]] += job[i]
        for k in order:
            heapq.heappush(heap, (load[k], k))
        sol.append(nodes)
    return sol, load


def check(problem: TaskMapping, solution: Solution) -> list[str]:
    """The violations of ``solution`` (empty when feasible): every task on a node of the
    cluster and no job with two tasks on one node."""
    if len(solution) != len(problem.jobs):
        return [f"solution has {len(solution)} jobs, problem {len(problem.jobs)}"]
    out: list[str] = []
    for j, (job, nodes) in enumerate(zip(problem.jobs, solution, strict=True)):
        if len(nodes) != len(job):
            out.append(f"job {j}: {len(nodes)} nodes for {len(job)} tasks")
        if any(not isinstance(k, int) or not 0 <= k < problem.n_nodes for k in nodes):
            out.append(f"job {j}: node outside 0..{problem.n_nodes - 1}: {nodes}")
        if len(set(nodes)) != len(nodes):
            out.append(f"job {j}: two tasks on one node: {nodes}")
    return out


def objective(problem: TaskMapping, solution: Solution) -> float:
    """``max_k N_k`` (``"max"``, the paper's uniform memory load) or the paged-out pages
    ``sum_k max(0, N_k - M)`` (``"overload"``), pages, of a mapping (:meth:`TaskMapping.loads`)."""
    loads = problem.loads(solution)
    if problem.objective == "max":
        return float(max(loads))
    return float(sum(max(0, x - problem.mem_pages) for x in loads))


def to_dict(problem: TaskMapping) -> dict[str, Any]:
    """The problem as its JSON dictionary (``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


@fields.names_source
def from_dict(data: dict[str, Any], source: str = "<json>") -> TaskMapping:
    """Build from JSON (``"problem": "task_mapping"``); errors name the source and field."""
    obj = fields.family(data, FAMILY, source=source)
    obj = fields.record(obj, "", required=("problem", "n_nodes", "mem_pages", "jobs"),
                        optional=("name", "base", "objective"), source=source)
    n = fields.integer(obj["n_nodes"], "n_nodes", minimum=1, maximum=MAX_NODES, source=source)
    m = fields.integer(obj["mem_pages"], "mem_pages", minimum=1, maximum=fields.EXACT_MAX,
                       source=source)
    jobs = []
    for j, job in enumerate(fields.sequence(obj["jobs"], "jobs", min_length=1, source=source)):
        tasks = fields.sequence(job, f"jobs[{j}]", min_length=1, source=source)
        if len(tasks) > n:
            raise ValueError(f"{fields.where(source, f'jobs[{j}]')} has {len(tasks)} tasks, "
                             f"wider than the cluster (n_nodes = {n})")
        jobs.append(tuple(fields.integer(x, f"jobs[{j}][{t}]", minimum=1, maximum=m,
                                         source=source) for t, x in enumerate(tasks)))
    base = fields.integers(fields.sequence(obj.get("base", [0] * n), "base", length=n,
                                           source=source), "base", minimum=0, source=source)
    return TaskMapping(n, m, tuple(jobs), base, obj.get("objective", "max"),
                       fields.text(obj.get("name", "task_mapping"), "name", source=source))


def random_problem(n_nodes: int, n_jobs: int, seed: int, *, mest: int = 8192,
                   mem_pages: int = 32768, objective: str = "max",
                   sizes: Sequence[int] = (1, 2, 4, 8, 16, 32)) -> TaskMapping:
    """A batch drawn like the CSM workload: sizes from ``sizes`` (<= n_nodes), memory per
    task uniform in [mest, 2 mest] (size < n/4) or [2 mest, 4 mest] (pages)."""
    rng = random.Random(seed)
    ok = [s for s in sizes if s <= n_nodes]
    jobs = []
    for _ in range(n_jobs):
        s = rng.choice(ok)
        lo, hi = (2 * mest, 4 * mest) if s >= max(1, n_nodes // 4) else (mest, 2 * mest)
        jobs.append(tuple(min(mem_pages, rng.randint(lo, hi)) for _ in range(s)))
    return TaskMapping(n_nodes, mem_pages, tuple(jobs), (0,) * n_nodes, objective,
                       f"rand-n{n_nodes}-j{n_jobs}-s{seed}")


# ---------------------------------------------------------------------------- declaration
_F = fields.Field

SCHEMA = fields.Record(
    "Memory-balanced task mapping (CSM M6): put every task of every job on a node, at most "
    "one task of a job per node; minimise the largest node memory or the paged-out pages.",
    (
        _F("n_nodes", "integer", "Nodes of the cluster.", minimum=1, maximum=MAX_NODES,
           example=3),
        _F("mem_pages", "integer", "M, memory of a node.", "pages", minimum=1,
           maximum=fields.EXACT_MAX, example=10),
        _F("jobs", "array", "Per job, the memory of each of its tasks (1..n_nodes tasks, "
           "each at most M).", "pages", minimum=1,
           items=_F("", "array", "", items=_F("", "integer", "")),
           example=[[4, 3], [5], [2, 2, 2]]),
        _F("base", "array", "Memory already in use per node (default zeros; with the "
           "tasks, at most 10^12 in all).", "pages",
           minimum=0, items=_F("", "integer", ""), default=fields.COMPUTED, example=[0, 1, 0]),
        _F("objective", "string", "\"max\": minimise max_k N_k (the paper's uniform memory "
           "load); \"overload\": minimise sum_k max(0, N_k - M).", choices=OBJECTIVES,
           default="max"),
        _F("name", "string", "Label.", default="task_mapping"),
    ))
"""The family's JSON fields, declared once (``sim.problems.schema("task_mapping")``)."""
