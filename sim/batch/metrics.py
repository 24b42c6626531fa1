"""Per-job and aggregate metrics of a simulated schedule.

Definitions (times in seconds; ``run = end - start`` is the time the job actually held
the machine, after any kill at its request):

- wait = start - submit; response = end - submit = wait + run;
- slowdown = response / max(run, 1) (a zero-length job counts as 1 s);
- bounded slowdown = max(1, response / max(run, tau)) with tau = 10 s;
- weighted response time = sum(w * response) / sum(w), weight w = procs * run
  (demand x runtime);
- utilization = sum(procs * run) / (P * (last end - first submit)), for processors
  (``utilization_per_resource`` gives every resource);
- makespan = last end - first submit;
- queue length = number of submitted, not yet started jobs, as a step function of time;
  its time average is taken over [first submit, last end];
- offered load = sum(procs * run) / (P * (last submit - first submit)): the work the
  jobs bring per unit of machine over the span of their arrivals (``offered_load``);
- backlog at time t = sum(procs * run) of the jobs submitted by t and not started at t,
  divided by P: seconds of the whole machine's work queued (``backlog``);
- backlog growth = the least-squares slope of the backlog against time at
  ``TREND_POINTS`` instants evenly spread from the first to the last submit (s of
  queued machine work per s; ``backlog_trend``). A stationary queue has a slope near 0;
  a queue that grows without bound (a saturated machine) a clearly positive one: at an
  offered load rho > 1 the slope tends to rho - 1.

Every aggregate is computed over all jobs of the schedule unless an explicit boolean
``mask`` selects a subset; the returned dict then names the filter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.batch.machine import Schedule

BSLD_TAU = 10


def job_metrics(schedule: Schedule) -> dict[str, np.ndarray]:
    """Per-job arrays aligned with ``schedule.workload.jobs``: submit, start, end, run,
    wait, response, slowdown, bounded_slowdown, procs."""
    cols = schedule.workload.columns()
    submit = cols.submit.copy()
    procs = cols.demand[:, 0].copy()
    start = schedule.start.astype(np.int64)
    end = schedule.end.astype(np.int64)
    run = end - start
    wait = start - submit
    response = end - submit
    slowdown = response / np.maximum(run, 1)
    bsld = np.maximum(1.0, response / np.maximum(run, BSLD_TAU))
    return {
        "submit": submit, "start": start, "end": end, "run": run, "wait": wait,
        "response": response, "slowdown": slowdown, "bounded_slowdown": bsld, "procs": procs,
    }


def queue_length(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Queue length over time: ``(times, lengths)``, where ``lengths[i]`` holds on
    ``[times[i], times[i+1])``. Arrivals and starts at the same instant are netted."""
    return _queue_length(job_metrics(schedule))


def _queue_length(m: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    t = np.concatenate([m["submit"], m["start"]])
    d = np.concatenate([np.ones(len(m["submit"]), np.int64), -np.ones(len(m["start"]), np.int64)])
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    times, idx = np.unique(t, return_index=True)
    lengths = np.cumsum(np.add.reduceat(d, idx)) if len(t) else np.zeros(0, np.int64)
    return times, lengths


def utilization_per_resource(schedule: Schedule, mask: np.ndarray | None = None) -> list[float]:
    """Fraction of each resource's capacity used over [first submit, last end]."""
    w = schedule.workload
    m = job_metrics(schedule)
    sel = np.ones(len(w), bool) if mask is None else mask
    if not sel.any():
        return [0.0] * w.K
    span = int(m["end"][sel].max() - m["submit"][sel].min())
    out = []
    for k in range(w.K):
        demand = w.columns().demand[:, k]
        used = float((demand[sel] * m["run"][sel]).sum())
        out.append(used / (w.capacity[k] * span) if span > 0 else 0.0)
    return out


def summary(schedule: Schedule, mask: np.ndarray | None = None, label: str | None = None
            ) -> dict[str, Any]:
    """Aggregate metrics.

    Parameters
    ----------
    schedule : Schedule
    mask : numpy.ndarray of bool, optional
        Jobs to include; default all. Utilization and makespan then refer to the
        selected jobs' span.
    label : str, optional
        Name of the filter, reported as ``filter``.

    Returns
    -------
    dict
        ``policy, jobs, avg_wait, max_wait, avg_response, avg_slowdown,
        avg_bounded_slowdown, avg_weighted_response, utilization, makespan, killed,
        avg_queue_length, max_queue_length, sim_seconds, filter``; with more than one
        resource also ``utilization_per_resource`` (a list, resource 0 first;
        ``utilization`` is resource 0's, the processors).
    """
    return _summary(schedule, job_metrics(schedule), mask, label)


def aggregate(m: dict[str, np.ndarray], procs: int) -> dict[str, Any]:
    """Job-count, wait, response, slowdown, weighted response, processor utilization
    and makespan over the per-job arrays ``m`` (as from ``job_metrics``, possibly
    selected or concatenated over several schedules) on ``procs`` processors; the
    definitions are those of the module docstring."""
    k = len(m["wait"])
    out: dict[str, Any] = {"jobs": k}
    if k == 0:
        return out
    weight = (m["procs"] * m["run"]).astype(float)
    t0, t1 = int(m["submit"].min()), int(m["end"].max())
    out["avg_wait"] = float(m["wait"].mean())
    out["max_wait"] = int(m["wait"].max())
    out["avg_response"] = float(m["response"].mean())
    out["avg_slowdown"] = float(m["slowdown"].mean())
    out["avg_bounded_slowdown"] = float(m["bounded_slowdown"].mean())
    out["avg_weighted_response"] = (float((weight * m["response"]).sum() / weight.sum())
                                    if weight.sum() > 0 else out["avg_response"])
    out["utilization"] = float(weight.sum() / (procs * (t1 - t0))) if t1 > t0 else 0.0
    out["makespan"] = t1 - t0
    return out


def offered_load(schedule: Schedule) -> float | None:
    """sum(procs * run) / (P * (last submit - first submit)); None when every job
    arrives at one instant."""
    m = job_metrics(schedule)
    if not len(m["submit"]):
        return None
    span = int(m["submit"].max() - m["submit"].min())
    if span <= 0:
        return None
    return float((m["procs"] * m["run"]).astype(float).sum()
                 / (schedule.workload.procs * span))


def backlog(schedule: Schedule, t: int) -> float:
    """Seconds of the whole machine's work queued at time ``t`` (s): sum(procs * run) of
    the jobs with ``submit <= t < start``, divided by the processors."""
    m = job_metrics(schedule)
    waiting = (m["submit"] <= t) & (m["start"] > t)
    return float((m["procs"][waiting] * m["run"][waiting]).astype(float).sum()
                 / schedule.workload.procs)


TREND_POINTS = 20


def backlog_trend(schedule: Schedule, points: int = TREND_POINTS) -> dict[str, float]:
    """``backlog_growth`` (the slope of the backlog over the arrivals, s per s) and
    ``backlog_end_s`` (the backlog at the last submit, s); see the module docstring.
    Both 0.0 when every job arrives at one instant."""
    m = job_metrics(schedule)
    sub, start = m["submit"], m["start"]
    if not len(sub) or sub.max() == sub.min():
        return {"backlog_growth": 0.0, "backlog_end_s": 0.0}
    work = (m["procs"] * m["run"]).astype(float) / schedule.workload.procs
    t = np.linspace(float(sub.min()), float(sub.max()), points)
    queued = np.array([work[(sub <= x) & (start > x)].sum() for x in t])
    slope = float(np.polyfit(t - t[0], queued, 1)[0])
    return {"backlog_growth": slope, "backlog_end_s": float(queued[-1])}


def _summary(schedule: Schedule, m: dict[str, np.ndarray], mask: np.ndarray | None,
             label: str | None) -> dict[str, Any]:
    n = len(schedule.workload)
    sel = np.ones(n, bool) if mask is None else np.asarray(mask, bool)
    out: dict[str, Any] = {"policy": schedule.policy,
                           "filter": label if mask is not None else "all jobs"}
    out.update(aggregate({key: a[sel] for key, a in m.items()}, schedule.workload.procs))
    if out["jobs"] == 0:
        return out
    out["killed"] = int(schedule.killed[sel].sum())
    if schedule.workload.K > 1:
        out["utilization_per_resource"] = utilization_per_resource(schedule, sel)
    if mask is None:
        t0, t1 = int(m["submit"].min()), int(m["end"].max())
        times, lengths = _queue_length(m)
        if t1 > t0 and len(times):
            dt = np.diff(np.append(times, t1))
            out["avg_queue_length"] = float((lengths * dt).sum() / (t1 - t0))
        else:
            out["avg_queue_length"] = 0.0
        out["max_queue_length"] = int(lengths.max()) if len(lengths) else 0
    out["sim_seconds"] = schedule.sim_seconds
    return out


def breakdown(schedule: Schedule, keys: Sequence[Any]) -> list[dict[str, Any]]:
    """``summary`` per distinct key (for example a month label or a size class per
    job), in order of first appearance; every row names its key as ``filter``."""
    keys = list(keys)
    if len(keys) != len(schedule.workload.jobs):
        raise ValueError(f"keys has {len(keys)} entries for {len(schedule.workload.jobs)} jobs")
    arr = np.array(keys, dtype=object)
    m = job_metrics(schedule)  # once, not once per key
    return [_summary(schedule, m, arr == key, str(key)) for key in dict.fromkeys(keys)]


def size_class(schedule: Schedule, edges: Sequence[int] = (1, 2, 9, 33)) -> list[str]:
    """A per-job class label by processors: ``"1"``, ``"2-8"``, ``"9-32"``, ``">=33"``
    for the default edges (lower bounds of each class)."""
    labels = []
    bounds = list(edges)
    for j in schedule.workload.jobs:
        p = j.demand[0]
        c = 0
        while c + 1 < len(bounds) and p >= bounds[c + 1]:
            c += 1
        lo = bounds[c]
        hi = bounds[c + 1] - 1 if c + 1 < len(bounds) else None
        labels.append(f">={lo}" if hi is None else (f"{lo}" if lo == hi else f"{lo}-{hi}"))
    return labels


def month_labels(workload) -> list[str]:
    """Calendar month (``"YYYY-MM"``, in the log's own time zone) of each job's submit
    time, aligned with ``workload.jobs`` (the months of ``instances.months.split_months``)."""
    from instances.months import split_months

    labels: list[str] = []
    for label, month in split_months(workload):
        labels.extend([label] * len(month))
    return labels


def by_month(schedule: Schedule) -> list[dict[str, Any]]:
    """``summary`` per calendar month of submission within one continuous simulation
    (compare ``sim.batch.runner.run(..., by_month=True)``, which simulates each month from an
    empty machine)."""
    return breakdown(schedule, month_labels(schedule.workload))
