"""The CSM paper's metrics (spec 3.5), from per-task records, and confidence intervals.

Task records are dicts with ``node``, ``job`` (None for a local task), ``kind``
("local" | "small" | "large"), ``arrival`` and ``finish`` (µs), ``tc`` (µs of CPU) and
``faults``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sim.stats import t_quantile


def mean_pg_fault(tasks: Iterable[dict[str, Any]], n_nodes: int) -> float:
    """Eq. 8: per node, the faults per task executed there; averaged over the nodes that
    executed at least one task (AMB-4.15: every task counts)."""
    faults: dict[int, int] = defaultdict(int)
    count: dict[int, int] = defaultdict(int)
    for t in tasks:
        faults[t["node"]] += t["faults"]
        count[t["node"]] += 1
    per_node = [faults[k] / count[k] for k in count]
    return sum(per_node) / len(per_node) if per_node else 0.0


def _jobs(tasks: Iterable[dict[str, Any]]) -> dict[Any, list[dict[str, Any]]]:
    jobs: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for t in tasks:
        key = t["job"] if t["job"] is not None else ("local", t["tid"])
        jobs[key].append(t)
    return jobs


#: Readings of eq. 9's normalisation: "tc" (the paper's formula, per-job ratio to tc),
#: "sum" (ratio of sums, as eq. 10 does for the slowdown) and "tr" (per-job ratio to the
#: slowest task's response time, bounded to [0, 100]).
CORRELATION_READINGS = ("tc", "sum", "tr")


def correlation(tasks: Iterable[dict[str, Any]], reading: str = "tc") -> float:
    """Eq. 9: ``100 - mean_k(|tr_slow - tr_fast| / tc) * 100`` over parallel jobs (>= 2
    tasks); tr of a task = its finish - the job's arrival (µs). NaN without parallel jobs.

    ``reading`` (see :data:`CORRELATION_READINGS`): "tc" is the formula as printed;
    "sum" is ``100 - 100 sum_k |dtr_k| / sum_k tc_k``; "tr" divides each job's
    ``|dtr|`` by its slowest task's response time instead of tc.
    """
    if reading not in CORRELATION_READINGS:
        raise ValueError(f"reading must be one of {CORRELATION_READINGS}, got {reading!r}")
    num: list[float] = []
    den: list[float] = []
    for key, ts in _jobs(tasks).items():
        if isinstance(key, tuple) or len(ts) < 2:
            continue
        trs = [t["finish"] - t["arrival"] for t in ts]
        num.append(max(trs) - min(trs))
        den.append(max(trs) if reading == "tr" else ts[0]["tc"])
    if not num:
        return math.nan
    if reading == "sum":
        return 100.0 - 100.0 * sum(num) / sum(den)
    return 100.0 - 100.0 * sum(a / b for a, b in zip(num, den, strict=True)) / len(num)


def slowdown(tasks: Iterable[dict[str, Any]], kind: str) -> float:
    """Eq. 10 for one class: ``sum tr / sum tc`` over its jobs; job tr = completion of its
    last task - arrival; job tc = the tc of its tasks (AMB-4.13). NaN without jobs."""
    s_tr = s_tc = 0
    for _, ts in _jobs(t for t in tasks if t["kind"] == kind).items():
        s_tr += max(t["finish"] for t in ts) - ts[0]["arrival"]
        s_tc += ts[0]["tc"]
    return s_tr / s_tc if s_tc else math.nan


def occupancy(tasks: Sequence[dict[str, Any]], n_nodes: int, mem_pages: int,
              kinds: Collection[str] | None = None) -> dict[str, float]:
    """Time-averaged tasks per node and memory demand / M over [0, last arrival] (µs).

    The measured counterparts of eq. 5's "load per node" and mem_load (spec 3.4).
    ``kinds`` (e.g. ``("small", "large")``) counts only the tasks of those classes; the
    horizon is still the last arrival of any task.
    """
    if not tasks:
        return {"tasks_per_node": 0.0, "mem_load_measured": 0.0}
    horizon = max(t["arrival"] for t in tasks)
    if horizon <= 0:
        return {"tasks_per_node": math.nan, "mem_load_measured": math.nan}
    busy = mem = 0.0
    for t in tasks:
        if kinds is not None and t["kind"] not in kinds:
            continue
        d = max(0, min(t["finish"], horizon) - t["arrival"])
        busy += d
        mem += d * t.get("vir_mem", 0)
    return {"tasks_per_node": busy / (n_nodes * horizon),
            "mem_load_measured": mem / (n_nodes * horizon * mem_pages)}


def summarize(tasks: Sequence[dict[str, Any]], n_nodes: int,
              mem_pages: int | None = None) -> dict[str, float]:
    """Every metric of one run (plus the measured occupancy when ``mem_pages`` is given)."""
    occ = occupancy(tasks, n_nodes, mem_pages) if mem_pages else {}
    return {**occ,
        "mean_pg_fault": mean_pg_fault(tasks, n_nodes),
        "correlation": correlation(tasks),
        "correlation_sum": correlation(tasks, "sum"),
        "correlation_tr": correlation(tasks, "tr"),
        "slowdown_small": slowdown(tasks, "small"),
        "slowdown_large": slowdown(tasks, "large"),
        "slowdown_local": slowdown(tasks, "local"),
    }


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% Student-t confidence interval (NaNs dropped;
    half-width NaN with fewer than two values)."""
    xs = [v for v in values if not math.isnan(v)]
    if not xs:
        return math.nan, math.nan
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, math.nan
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, t_quantile(0.975, len(xs) - 1) * sd / math.sqrt(len(xs))
