"""Memory-feasible gang schedule (spec 3.8 M7, CSM paper 004), defined once.

A snapshot of distributed jobs on ``n_nodes`` time-shared nodes of ``mem`` pages each.
Job ``j`` runs one task on every node of its node set ``N_j`` (the paper's mapping: at
most one task of a job per node); its task on node ``k`` needs ``mem_j[k]`` pages. A gang
schedule puts every job in exactly one row of an Ousterhout matrix; the rows take turns
on the CPUs, so in a row each node runs at most one task: **jobs that share a node never
share a row** (the conflict graph's edges). Memory (Batat & Feitelson-style admission):
while a row runs, the memory resident on node ``k`` is the local tasks' ``local_mem[k]``
plus the row's tasks there, and it must fit ``mem``.

With one task per node per row the memory condition holds for a row exactly when each of
its tasks fits its node beside the local memory; it therefore does not couple jobs, and
an instance where some task cannot fit is rejected on input (the field is named). It is
still re-checked per row by :func:`check`, which sums the row's tasks per node and shares
no code with the solvers. What couples jobs is the conflict graph.

Field ``memory`` names which tasks are resident on a node (which the memory condition
sums): ``"row"`` (default, above) counts the running row's tasks only, as if the other
rows were swapped out between slots; ``"resident"`` counts every task mapped to the node,
whatever its row, as the CSM paper's eq. (4) ``N_k.mem = sum_l task_l.vir_mem`` (the
memory requirements of all the resident tasks of node ``k``). Under ``"resident"`` the
condition ``local_mem[k] + sum over the jobs on k of their task's pages <= mem`` does
not depend on the rows either: an instance either satisfies it on every node (and its
schedules are those of ``"row"``) or has no feasible schedule at all
(:func:`resident_overload` names the nodes).

Objectives (field ``objective``):

- ``"rows"``: minimise the number ``T`` of rows (the chromatic number of the conflict
  graph), at most ``max_rows``.
- ``"weighted"``: the spec's "weighted sum of job completion rounds": rows are numbered
  ``1 .. T`` in the order they are served and a job of row ``r`` completes in round
  ``r``; minimise ``sum_j w_j r_j`` (weighted minimum-sum colouring).

A solution is a list of rows, each a non-empty list of job names, in serving order.
Both the exact models (``models.gang_schedule``) and the heuristic
(``heuristics.gang_schedule``) import this module. Memory in pages (any unit, the same
for ``mem``, ``local_mem`` and the tasks'); no times.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from sim.problems import fields

FAMILY = "gang_schedule"
OBJECTIVES = ("rows", "weighted")
MEMORY = ("row", "resident")

MAX_NODES = 1_000_000
"""Largest cluster (``n_nodes``) accepted: the problem and the models keep per-node lists."""

MAX_JOBS = 20_000
"""Most jobs accepted: reading and checking 10^5 jobs of up to 16 tasks takes longer than a
short time limit by itself; the exact models refuse far fewer (``models.gang_schedule``)."""

__all__ = ["FAMILY", "OBJECTIVES", "GangJob", "GangProblem", "from_dict", "to_dict", "load",
           "check", "objective", "conflicts", "degrees", "jobs_on_nodes", "lower_bound",
           "random_problem", "resident_overload", "MEMORY"]

Rows = list[list[str]]


@dataclass(frozen=True)
class GangJob:
    """One distributed job: ``name``, its ``nodes`` (distinct) and the pages ``mem`` of its
    task on each of them (aligned with ``nodes``, each > 0), and a ``weight`` > 0 (used by
    the ``"weighted"`` objective)."""

    name: str
    nodes: tuple[int, ...]
    mem: tuple[int, ...]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"job: field 'name' must be a non-empty string, got {self.name!r}")
        if not self.nodes or len(set(self.nodes)) != len(self.nodes):
            raise ValueError(f"jobs[{self.name}]: field 'nodes' must be a non-empty list of "
                             f"distinct nodes, got {list(self.nodes)!r}")
        if len(self.mem) != len(self.nodes):
            raise ValueError(f"jobs[{self.name}]: field 'mem' has {len(self.mem)} entries for "
                             f"{len(self.nodes)} nodes")
        for i, m in enumerate(self.mem):
            fields.integer(m, f"jobs[{self.name}].mem[{i}]", minimum=1)
        fields.real(self.weight, f"jobs[{self.name}].weight", minimum=0.0)
        if self.weight <= 0:
            raise ValueError(f"jobs[{self.name}]: field 'weight' must be > 0, "
                             f"got {self.weight!r}")


@dataclass(frozen=True)
class GangProblem:
    """The gang-schedule problem (see the module docstring).

    Parameters
    ----------
    n_nodes : int
    mem : int
        Pages per node ``M`` (> 0).
    jobs : tuple of GangJob
    local_mem : tuple of int
        Pages held by local tasks per node (>= 0, resident in every row).
    max_rows : int
        Largest number of rows allowed (>= 1).
    objective : {"rows", "weighted"}
    memory : {"row", "resident"}
        Which tasks are resident on a node (module docstring): the running row's
        (default) or every task mapped to it (the paper's eq. 4).
    """

    FAMILY: ClassVar[str] = FAMILY

    n_nodes: int
    mem: int
    jobs: tuple[GangJob, ...]
    local_mem: tuple[int, ...]
    max_rows: int
    objective: str = "rows"
    memory: str = "row"

    def __post_init__(self) -> None:
        fields.integer(self.n_nodes, "n_nodes", minimum=1, maximum=MAX_NODES)
        fields.text(self.memory, "memory", choices=MEMORY)
        fields.integer(self.mem, "mem", minimum=1)
        fields.integer(self.max_rows, "max_rows", minimum=1)
        fields.text(self.objective, "objective", choices=OBJECTIVES)
        if not self.jobs:
            raise ValueError("field 'jobs' must hold at least one job")
        if len(self.jobs) > MAX_JOBS:
            raise ValueError(f"field 'jobs' holds {len(self.jobs)} jobs, over the {MAX_JOBS} "
                             f"accepted")
        if len(self.local_mem) != self.n_nodes:
            raise ValueError(f"field 'local_mem' must have {self.n_nodes} entries, "
                             f"got {len(self.local_mem)}")
        if not all(type(b) is int and 0 <= b <= fields.INT64_MAX for b in self.local_mem):
            for k, b in enumerate(self.local_mem):  # the first bad one, named
                fields.integer(b, f"local_mem[{k}]", minimum=0)
        names = [j.name for j in self.jobs]
        if len(set(names)) != len(names):
            dup = next(x for i, x in enumerate(names) if x in names[:i])
            raise ValueError(f"field 'jobs': job names must be unique, {fields.short(dup)} "
                             f"is repeated")
        rounds = min(self.max_rows, len(self.jobs))
        fields.exact(sum(j.weight for j in self.jobs) * rounds,
                     f"field 'jobs[].weight': the largest objective value (the sum of the "
                     f"weights times {rounds} rows)")
        for j in self.jobs:
            if len(j.nodes) > self.n_nodes:
                raise ValueError(f"jobs[{j.name}].nodes: {len(j.nodes)} tasks, wider than the "
                                 f"cluster of {self.n_nodes} nodes")
            for i, (k, m) in enumerate(zip(j.nodes, j.mem, strict=True)):
                fields.integer(k, f"jobs[{j.name}].nodes", minimum=0, maximum=self.n_nodes - 1)
                if m + self.local_mem[k] > self.mem:
                    raise ValueError(f"jobs[{j.name}].mem[{i}]: task of {m} pages on node {k} "
                                     f"does not fit mem = {self.mem} beside local_mem[{k}] = "
                                     f"{self.local_mem[k]}")

    @property
    def names(self) -> list[str]:
        return [j.name for j in self.jobs]

    def to_dict(self) -> dict[str, Any]:
        out = {"problem": FAMILY, "n_nodes": self.n_nodes, "mem": self.mem,
               "max_rows": self.max_rows, "objective": self.objective,
               "local_mem": list(self.local_mem),
               "jobs": [{"name": j.name, "nodes": list(j.nodes), "mem": list(j.mem),
                         "weight": j.weight} for j in self.jobs]}
        if self.memory != "row":  # the default is left out (files written before it)
            out["memory"] = self.memory
        return out

    def dump(self, path: str | Path) -> None:
        from instances.atomic import write_atomic

        write_atomic(path, json.dumps(self.to_dict(), indent=1))


def to_dict(problem: GangProblem) -> dict[str, Any]:
    """The problem as its JSON dictionary (``from_dict(to_dict(p)) == p``)."""
    return problem.to_dict()


@fields.names_source
def from_dict(data: Mapping[str, Any], source: str = "<json>") -> GangProblem:
    """Read a problem from its JSON dictionary (``"problem": "gang_schedule"``).

    ``mem`` of a job is a list aligned with its ``nodes`` or one number for every task;
    ``local_mem`` a list per node or one number (default 0); ``max_rows`` defaults to the
    number of jobs; ``weight`` to 1."""
    fields.family(data, FAMILY, source=source)
    obj = fields.record(data, "<top>", required=("problem", "n_nodes", "mem", "jobs"),
                        optional=("local_mem", "max_rows", "objective", "memory"),
                        source=source)
    n = fields.integer(obj["n_nodes"], "n_nodes", minimum=1, maximum=MAX_NODES, source=source)
    M = fields.integer(obj["mem"], "mem", minimum=1, source=source)
    local = obj.get("local_mem", 0)
    if isinstance(local, (list, tuple)):
        local = fields.sequence(local, "local_mem", length=n, source=source)
        if not all(type(b) is int and 0 <= b <= fields.INT64_MAX for b in local):
            local = [fields.integer(b, f"local_mem[{k}]", minimum=0, source=source)
                     for k, b in enumerate(local)]  # integral floats, or the bad one named
        local = list(local)
    else:
        local = [fields.integer(local, "local_mem", minimum=0, source=source)] * n
    jobs = []
    items = fields.sequence(obj["jobs"], "jobs", min_length=1, source=source)
    if len(items) > MAX_JOBS:
        raise ValueError(f"{fields.where(source, 'jobs')} holds {len(items)} jobs, over the "
                         f"{MAX_JOBS} accepted")
    for i, item in enumerate(items):
        rec = fields.record(item, f"jobs[{i}]", required=("nodes", "mem"),
                            optional=("name", "weight"), source=source)
        raw = fields.sequence(rec["nodes"], f"jobs[{i}].nodes", min_length=1, source=source)
        if len(raw) > n:
            raise ValueError(f"{fields.where(source, f'jobs[{i}].nodes')}: {len(raw)} tasks, "
                             f"wider than the cluster of {n} nodes")
        nodes = tuple(fields.integer(k, f"jobs[{i}].nodes", minimum=0, maximum=n - 1,
                                     source=source) for k in raw)
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"{fields.where(source, f'jobs[{i}].nodes')} repeats a node")
        mraw = rec["mem"]
        if isinstance(mraw, (list, tuple)):
            mems = tuple(fields.integer(m, f"jobs[{i}].mem[{t}]", minimum=1, source=source)
                         for t, m in enumerate(fields.sequence(
                             mraw, f"jobs[{i}].mem", length=len(nodes), source=source)))
        else:
            mems = (fields.integer(mraw, f"jobs[{i}].mem", minimum=1, source=source),) * len(
                nodes)
        for t, (k, m) in enumerate(zip(nodes, mems, strict=True)):
            if m + local[k] > M:
                raise ValueError(f"{fields.where(source, f'jobs[{i}].mem')}: task {t} of {m} "
                                 f"pages on node {k} does not fit mem = {M} beside "
                                 f"local_mem = {local[k]}")
        w = fields.real(rec.get("weight", 1.0), f"jobs[{i}].weight", minimum=0.0,
                        source=source)
        if w <= 0:
            raise ValueError(f"{fields.where(source, f'jobs[{i}].weight')} must be > 0, "
                             f"got {w!r}")
        name = fields.text(rec.get("name", f"J{i}"), f"jobs[{i}].name", source=source)
        jobs.append(GangJob(name, nodes, mems, w))
    max_rows = fields.integer(obj.get("max_rows", len(jobs)), "max_rows", minimum=1,
                              source=source)
    obj_ = fields.text(obj.get("objective", "rows"), "objective", choices=OBJECTIVES,
                       source=source)
    memory = fields.text(obj.get("memory", "row"), "memory", choices=MEMORY, source=source)
    return GangProblem(n, M, tuple(jobs), tuple(local), max_rows, obj_, memory)


def load(path: str | Path) -> GangProblem:
    """Read a problem JSON file."""
    from sim.problems import read_json

    return from_dict(read_json(path), source=str(path))


def conflicts(problem: GangProblem) -> list[tuple[int, int]]:
    """Pairs of job indices ``(i, j)``, ``i < j``, that share a node."""
    sets = [set(j.nodes) for j in problem.jobs]
    return [(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
            if sets[i] & sets[j]]


def jobs_on_nodes(problem: GangProblem) -> dict[int, list[int]]:
    """The indices of the jobs on each node that holds any, in job order."""
    per: dict[int, list[int]] = {}
    for i, j in enumerate(problem.jobs):
        for k in j.nodes:
            per.setdefault(k, []).append(i)
    return per


DEGREE_MASK_BYTES = 256 << 20
"""Most bytes of per-node job bit masks :func:`degrees` builds; past it (many nodes
holding late jobs) it unions the nodes' job lists per job instead, slower but in the
memory of the lists."""


def degrees(problem: GangProblem, deadline: float | None = None) -> list[int] | None:
    """The degree of every job in the conflict graph (the jobs it shares a node with),
    without listing the graph's edges (up to ``jobs**2 / 2``): per job, the distinct jobs
    on its nodes, as the bits of the union of its nodes' job masks. ``deadline`` (a
    ``time.perf_counter`` value): None once it has passed."""
    import time

    per = jobs_on_nodes(problem)
    if sum(v[-1] for v in per.values()) // 8 > DEGREE_MASK_BYTES:
        return _degrees_by_lists(problem, per, deadline)
    mask: dict[int, int] = {}
    for k, js in per.items():
        m = 0
        for i in js:
            m |= 1 << i
        mask[k] = m
    out = []
    for i, j in enumerate(problem.jobs):
        if deadline is not None and i % 256 == 0 and time.perf_counter() > deadline:
            return None
        m = 0
        for k in j.nodes:
            m |= mask[k]
        out.append(m.bit_count() - 1)
    return out


def _degrees_by_lists(problem: GangProblem, per: dict[int, list[int]],
                      deadline: float | None) -> list[int] | None:
    """:func:`degrees` by a sorted union of the nodes' job lists per job."""
    import time

    import numpy as np

    arrays = {k: np.asarray(v, dtype=np.int64) for k, v in per.items()}
    out = []
    for i, j in enumerate(problem.jobs):
        if deadline is not None and i % 64 == 0 and time.perf_counter() > deadline:
            return None
        out.append(len(np.unique(np.concatenate([arrays[k] for k in j.nodes]))) - 1)
    return out


def resident_overload(problem: GangProblem) -> list[tuple[int, int]]:
    """Under ``memory = "resident"`` (eq. 4): the nodes ``k`` whose resident pages
    ``local_mem[k] + sum of the tasks mapped to k`` exceed ``mem``, as ``(k, pages)``
    (empty: every schedule that is feasible under ``"row"`` is feasible). Always empty
    under ``"row"``."""
    if problem.memory == "row":
        return []
    pages = list(problem.local_mem)
    for j in problem.jobs:
        for k, m in zip(j.nodes, j.mem, strict=True):
            pages[k] += m
    return [(k, p) for k, p in enumerate(pages) if p > problem.mem]


def check(problem: GangProblem, rows: Sequence[Sequence[str]]) -> list[str]:
    """The violations of ``rows`` as a gang schedule of ``problem`` (empty when
    feasible): every job in exactly one row, 1..max_rows non-empty rows, per row and node
    at most one task and resident pages ``<= mem``: ``local_mem[k]`` plus the row's tasks
    (``memory = "row"``) or plus every task placed on ``k`` in any row (``"resident"``,
    eq. 4)."""
    T = len(rows)
    out: list[str] = []
    if problem.memory == "resident":  # every task placed in any row stays resident
        by = {j.name: j for j in problem.jobs}
        placed = list(problem.local_mem)
        for name in {n for row in rows for n in row if n in by}:
            for k, m in zip(by[name].nodes, by[name].mem, strict=True):
                placed[k] += m
        for k, p in enumerate(placed):
            if p > problem.mem:
                out.append(f"node {k} holds {p} resident pages > mem {problem.mem} "
                           f"(memory 'resident': every task of every row, eq. 4)")
    if T < 1 or T > problem.max_rows:
        out.append(f"schedule has {T} rows, allowed 1..{problem.max_rows}")
    by_name = {j.name: j for j in problem.jobs}
    seen: dict[str, int] = {}
    over_alone = {k for k, b in enumerate(problem.local_mem) if b > problem.mem}
    for r, row in enumerate(rows):
        if not row:
            out.append(f"row {r} is empty")
            continue
        tasks: dict[int, int] = {}  # the row's nodes only (a row touches few of 10^6)
        pages: dict[int, int] = {}
        for name in row:
            if name not in by_name:
                out.append(f"row {r}: unknown job {name!r}")
                continue
            if name in seen:
                out.append(f"job {name!r} is in rows {seen[name]} and {r}")
                continue
            seen[name] = r
            job = by_name[name]
            for k, m in zip(job.nodes, job.mem, strict=True):
                tasks[k] = tasks.get(k, 0) + 1
                pages[k] = pages.get(k, problem.local_mem[k]) + m
        for k in sorted(set(tasks) | over_alone):
            if tasks.get(k, 0) > 1:
                out.append(f"row {r}: {tasks[k]} tasks on node {k}")
            if pages.get(k, problem.local_mem[k]) > problem.mem:
                out.append(f"row {r}: node {k} needs {pages.get(k, problem.local_mem[k])} "
                           f"pages > mem {problem.mem}")
    missing = [n for n in by_name if n not in seen]
    if missing:
        out.append(f"jobs without a row: {missing}")
    return out


def objective(problem: GangProblem, rows: Sequence[Sequence[str]]) -> float:
    """Number of rows (``"rows"``) or ``sum_j w_j * (row index + 1)`` (``"weighted"``)."""
    if problem.objective == "rows":
        return float(len(rows))
    w = {j.name: j.weight for j in problem.jobs}
    return float(sum(w[name] * (r + 1) for r, row in enumerate(rows) for name in row))


def lower_bound(problem: GangProblem) -> float:
    """A valid bound: the most tasks on one node (a clique of the conflict graph) for
    ``"rows"``; for ``"weighted"``, per node the jobs on it take distinct rows, so the
    heaviest-first order over the busiest node's jobs plus 1 per other job."""
    per: list[list[int]] = [[] for _ in range(problem.n_nodes)]
    for i, j in enumerate(problem.jobs):
        for k in j.nodes:
            per[k].append(i)
    if problem.objective == "rows":
        return float(max(len(p) for p in per))
    total_w = sum(j.weight for j in problem.jobs)
    best = total_w
    for p in per:
        ws = sorted((problem.jobs[i].weight for i in p), reverse=True)
        val = total_w - sum(ws) + sum(w * (r + 1) for r, w in enumerate(ws))
        best = max(best, val)
    return float(best)


def random_problem(seed: int, *, n_nodes: int = 32, n_jobs: int = 30,
                   width: tuple[int, int] = (1, 16), mem: int = 100,
                   task_mem: tuple[int, int] = (10, 60), objective: str = "rows",
                   weights: tuple[int, int] = (1, 1), max_rows: int | None = None
                   ) -> GangProblem:
    """A random instance: each job on a random node subset of a size drawn from ``width``
    with per-task pages from ``task_mem`` and an integer weight from ``weights`` (all
    inclusive)."""
    rng = random.Random(seed)
    jobs = []
    for i in range(n_jobs):
        size = rng.randint(*width)
        nodes = tuple(sorted(rng.sample(range(n_nodes), size)))
        jobs.append(GangJob(f"J{i}", nodes, tuple(rng.randint(*task_mem) for _ in nodes),
                            float(rng.randint(*weights))))
    return GangProblem(n_nodes, mem, tuple(jobs), (0,) * n_nodes,
                       max_rows if max_rows is not None else n_jobs, objective)


# ---------------------------------------------------------------------------- declaration
_F = fields.Field

SCHEMA = fields.Record(
    "Memory-feasible gang schedule (CSM M7): put every job in one row of an Ousterhout "
    "matrix, jobs sharing a node in different rows, every row's tasks fitting each node's "
    "memory beside the local tasks; minimise the rows or the weighted completion rounds.",
    (
        _F("n_nodes", "integer", "Nodes of the cluster.", minimum=1, maximum=MAX_NODES,
           example=3),
        _F("mem", "integer", "M, memory of a node.", "pages", minimum=1, example=10),
        _F("jobs", "array", "The distributed jobs.",
           items=fields.Record("A job: one task on each of its nodes.", (
               _F("name", "string", "Unique name (default J<index>).", default=fields.COMPUTED),
               _F("nodes", "array", "Its distinct nodes.", minimum=0,
                  items=_F("", "integer", "")),
               _F("mem", "array", "Memory of its task on each node (aligned with nodes), or "
                  "one number for every task.", "pages", minimum=1,
                  items=_F("", "integer", ""), scalar=True),
               _F("weight", "number", "Weight in the \"weighted\" objective (> 0; the "
                  "sum of the weights times min(max_rows, jobs) at most 10^12).",
                  minimum=0.0, default=1.0))),
           example=[{"name": "A", "nodes": [0, 1], "mem": [3, 4]},
                    {"name": "B", "nodes": [1, 2], "mem": 2, "weight": 2.0},
                    {"name": "C", "nodes": [0], "mem": [5]}]),
        _F("local_mem", "array", "Memory held by local tasks per node (resident in every "
           "row), or one number for every node.", "pages", minimum=0,
           items=_F("", "integer", ""), scalar=True, default=0, example=[0, 1, 0]),
        _F("max_rows", "integer", "Largest number of rows allowed (default: the number of "
           "jobs).", minimum=1, default=fields.COMPUTED, example=3),
        _F("objective", "string", "\"rows\": minimise the rows; \"weighted\": minimise "
           "sum_j w_j r_j (row r_j served r-th).", choices=OBJECTIVES, default="rows"),
        _F("memory", "string", "Which tasks are resident on a node: \"row\", the running "
           "row's; \"resident\", every task mapped to it (the CSM paper's eq. 4; then a "
           "node whose tasks exceed mem makes the instance infeasible).", choices=MEMORY,
           default="row"),
    ))
"""The family's JSON fields, declared once (``sim.problems.schema("gang_schedule")``)."""
