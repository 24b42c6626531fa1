"""Run one cell of a sweep: build its workload, simulate its policy, re-check the
schedule, and return its metrics with everything needed to trust them later.

A cell is a flat dictionary of parameters (``sim.sweep.spec.expand``). Running it
never touches the results store: :func:`run_cell` returns a row (a dictionary that
pickles and travels from a pool or Dask worker back to the one process that writes
the store). A cell that raises or runs past its time limit returns a row with
``status = "failed"`` and the error text.

Traces are read once per worker process (an LRU cache keyed by the reader options),
so a sweep over months and policies of one trace pays the parse once per worker.

Times are integer seconds in workloads and schedules; ``*_seconds`` are wall clock.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import signal
import socket
import threading
import time
import traceback
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from instances.job import Workload

if TYPE_CHECKING:
    from sim.batch.policy import PolicySpec


class CellTimeout(Exception):
    """A cell ran past its time limit."""


#: after its time limit a cell's alarm repeats at this interval (s) until the cell stops:
#: Python drops an exception raised while it runs a weakref callback or a finalizer
#: (reported as "unraisable"), so a single alarm can be lost
ALARM_REPEAT = 0.05


@lru_cache(maxsize=8)
def _file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _resolve(trace: str) -> Path:
    from instances.bundled import trace_path

    p = Path(trace)
    return p if p.exists() else trace_path(trace)


def _file_key(trace: str) -> tuple[str, int, int]:
    path = _resolve(trace)
    st = path.stat()  # a file changed on disk is read again
    return str(path), st.st_mtime_ns, st.st_size


def _read(trace: str, procs: int | None, wide: str, perfect: bool) -> Workload:
    return _read_file(_file_key(trace), procs, wide, perfect)


@lru_cache(maxsize=4)
def _read_file(fkey: tuple[str, int, int], procs: int | None, wide: str, perfect: bool
               ) -> Workload:
    from instances.swf import read_swf

    return read_swf(fkey[0], procs=procs, perfect_estimates=perfect, too_wide=wide)


def _table(trace: str, procs: int | None, wide: str, perfect: bool, scheme: str | None,
           high: float | None) -> dict[int, tuple[float, float]] | None:
    return _priority_table(_file_key(trace), procs, wide, perfect, scheme, high)


@lru_cache(maxsize=8)
def _priority_table(fkey: tuple[str, int, int], procs: int | None, wide: str, perfect: bool,
                    scheme: str | None, high: float | None
                    ) -> dict[int, tuple[float, float]] | None:
    """UP and PP per job of the whole log (positions are global, before any month split
    or selection); None without a scheme. Read only: it is shared between cells."""
    if scheme is None:
        return None
    from instances.priorities import priorities_of

    w = _read_file(fkey, procs, wide, perfect)
    return priorities_of(w, scheme, high=1.0 if high is None else high)


def _months(trace: str, procs: int | None, wide: str, perfect: bool) -> dict[str, Workload]:
    return _split(_file_key(trace), procs, wide, perfect)


@lru_cache(maxsize=8)
def _split(fkey: tuple[str, int, int], procs: int | None, wide: str, perfect: bool
           ) -> dict[str, Workload]:
    from instances.months import split_months

    return dict(split_months(_read_file(fkey, procs, wide, perfect)))


def _weeks(trace: str, procs: int | None, wide: str, perfect: bool) -> dict[str, Workload]:
    return _split_weeks(_file_key(trace), procs, wide, perfect)


@lru_cache(maxsize=8)
def _split_weeks(fkey: tuple[str, int, int], procs: int | None, wide: str, perfect: bool
                 ) -> dict[str, Workload]:
    from instances.weeks import split_weeks

    return dict(split_weeks(_read_file(fkey, procs, wide, perfect)))


def trace_weeks(trace: str) -> list[str]:
    """ISO weeks (``YYYY-Www``, the log's time zone) that hold jobs of ``trace`` read
    with its own machine size and wide jobs dropped (labels only)."""
    return list(_weeks(trace, None, "drop", False))


def trace_months(trace: str) -> list[str]:
    """Calendar months (``YYYY-MM``, the log's time zone) that hold jobs of ``trace``
    read with its own machine size and wide jobs dropped (labels only)."""
    return list(_months(trace, None, "drop", False))


def workload_sha256(w: Workload,
                    priorities: Mapping[int, tuple[float, float]] | None = None,
                    feedback: bool = False) -> str:
    """SHA-256 of the jobs actually simulated (id, submit, runtime, requested, demand,
    UP and PP from ``priorities``, None for both without a table or for a job not in it;
    with ``feedback``, the user and the log's wait too, which give the dependencies) and
    the capacity: equal checksums mean equal inputs."""
    h = hashlib.sha256(repr(w.capacity).encode())
    if feedback:
        h.update(b"feedback")
    table = priorities if priorities is not None else {}
    for j in w.jobs:
        up, pp = table.get(j.id, (None, None))
        fields = (j.id, j.submit, j.runtime, j.requested, j.demand, up, pp)
        if feedback:
            fields += (j.user, j.wait)
        h.update(repr(fields).encode())
    return h.hexdigest()


def build_workload(cell: dict[str, Any]) -> tuple[Workload, dict[str, Any]]:
    """The workload of ``cell`` and its provenance (``trace_sha256`` of the file,
    ``workload_sha256`` of the jobs simulated, ``cleaning`` report as a dictionary)."""
    w, info, _ = build_scenario(cell)
    return w, info


def build_scenario(cell: dict[str, Any]
                   ) -> tuple[Workload, dict[str, Any], dict[int, tuple[float, float]] | None]:
    """:func:`build_workload` plus the cell's priority table ``{job id: (UP, PP)}``
    (``instances.priorities.priorities_of`` of its scheme over the whole trace, before
    the month split and the selection; None without ``priorities``)."""
    table: dict[int, tuple[float, float]] | None = None
    info: dict[str, Any] = {"trace_sha256": None, "cleaning": None}
    procs = cell.get("procs")
    if cell.get("trace") is not None:
        trace, wide = cell["trace"], cell.get("wide", "error")
        perfect = bool(cell.get("perfect_estimates", False))
        scheme, high = cell.get("priorities"), cell.get("priority_high")
        base = _read(trace, procs, wide, perfect)
        info["trace_sha256"] = _file_sha256(str(_resolve(trace)))
        info["cleaning"] = base.cleaning.to_dict() if base.cleaning is not None else None
        table = _table(trace, procs, wide, perfect, scheme, high)
        if cell.get("month") is not None:
            w = _months(trace, procs, wide, perfect)[cell["month"]]
        elif cell.get("week") is not None:
            w = _weeks(trace, procs, wide, perfect)[cell["week"]]
        else:
            w = base
        if cell.get("replicate") is not None:
            from instances.replicate import replicate

            rep = dict(cell["replicate"])
            if cell.get("users") is not None:  # the spec's replicate.users, one per cell
                rep["users"] = float(cell["users"])
            w = replicate(w, rep.pop("method"), int(cell.get("seed", 0)), **rep)
    else:
        from instances.synthetic import random_workload

        params = dict(cell["synthetic"])
        if procs is not None:
            params["capacity"] = procs
        w = random_workload(seed=int(cell.get("seed", 0)), **params)
        if cell.get("priorities") is not None:  # priority_high applies to traces only
            from instances.priorities import priorities_of

            table = priorities_of(w, cell["priorities"])
    jobs = w.jobs
    if cell.get("window") is not None and jobs:
        a, b = cell["window"]
        s0 = jobs[0].submit
        jobs = tuple(j for j in jobs if a <= j.submit - s0 < b)
    if cell.get("max_jobs") is not None:
        jobs = jobs[: int(cell["max_jobs"])]
    load = float(cell.get("load", 1.0))
    if load != 1.0 and jobs:
        s0 = jobs[0].submit
        jobs = tuple(dataclasses.replace(j, submit=s0 + int(round((j.submit - s0) / load)))
                     for j in jobs)
    if jobs is not w.jobs:
        w = dataclasses.replace(w, jobs=jobs, cleaning=None)
    if not w.jobs:
        raise ValueError("the cell's workload selection holds no jobs")
    info["workload_sha256"] = workload_sha256(w, table, bool(cell.get("feedback")))
    return w, info, table


def cell_metrics(schedule: Any,
                 priorities: Mapping[int, tuple[float, float]] | None = None) -> dict[str, Any]:
    """Every metric of ``sim.sweep.spec.METRICS`` for one schedule (no wall-clock
    figures, so that equal inputs give equal metrics). With a priority table
    ``{job id: (UP, PP)}`` the jobs whose ``UP + PP`` is above the lowest form the
    high group and the others the low group (``jobs_high``, ``avg_wait_low``, ...)."""
    from sim.batch.metrics import backlog_trend, job_metrics, offered_load, summary

    s = summary(schedule)
    out = {k: v for k, v in s.items() if k not in ("policy", "filter", "sim_seconds",
                                                   "utilization_per_resource")}
    out["offered_load"] = offered_load(schedule)
    out.update(backlog_trend(schedule))
    m = job_metrics(schedule)
    wait = m["wait"].astype(float)
    bsld = m["bounded_slowdown"].astype(float)
    out["total_wait"] = int(m["wait"].sum())
    for q in (50, 90, 99):
        out[f"wait_p{q}"] = float(np.percentile(wait, q))
        out[f"bsld_p{q}"] = float(np.percentile(bsld, q))
    jobs = schedule.workload.jobs
    if jobs and priorities is not None:
        pr = np.fromiter((sum(priorities.get(j.id, (0.0, 0.0))) for j in jobs),
                         dtype=float, count=len(jobs))
        base = pr.min()
        high = pr > base
        groups = (("high", high), ("low", ~high)) if high.any() else ()
        for name, sel in groups:
            out[f"jobs_{name}"] = int(sel.sum())
            out[f"total_wait_{name}"] = int(m["wait"][sel].sum())
            out[f"avg_wait_{name}"] = float(wait[sel].mean()) if sel.any() else None
    return out


def cell_policy(cell: dict[str, Any]) -> PolicySpec:
    """The cell's policy, resolved once from its stored name and options (the cell is the
    serialised form of a policy spec, checked by ``sim.sweep.spec`` when the grid was
    made)."""
    from sim.registry import policy_spec

    options = dict(cell.get("options", {}))
    if "priorities" in options:
        raise ValueError("give the priority scenario as the workload's 'priorities' "
                         "(a scheme name), not as a policy option")
    return policy_spec(cell["policy"], **options)


def policy_config(spec: PolicySpec, cell: dict[str, Any]) -> dict[str, Any]:
    """The full configuration of a cell's policy: every parameter of its factory, defaults
    included, with its options applied; a policy taking priorities records the scheme
    (and ``priority_high``), never the table."""
    config = spec.config(cell.get("priorities"))
    if spec.takes_priorities and cell.get("priority_high") is not None:
        config["priority_high"] = cell["priority_high"]
    return config


def simulate_cell(cell: dict[str, Any], *, deadline: float | None = None):
    """Build the workload and simulate the cell's policy; returns ``(schedule, info)``.

    ``deadline`` (``time.monotonic()`` seconds) is checked every thousand arrivals."""
    s, info, _ = _simulate(cell, cell_policy(cell), deadline)
    return s, info


def _simulate(cell: dict[str, Any], spec: PolicySpec, deadline: float | None):
    """:func:`simulate_cell` plus the cell's priority table (for :func:`cell_metrics`).
    The table goes to the policy only when it takes one."""
    from sim.batch.machine import simulate

    w, info, table = build_scenario(cell)
    deps = None
    if cell.get("feedback"):
        from sim.batch.runner import feedback_table

        deps = feedback_table(w, "the workload's feedback")

    def tick(_: int) -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise CellTimeout(f"cell exceeded its time limit of {cell['time_limit']} s")

    s = simulate(w, spec.build(table), overrun=cell.get("overrun", "kill"),
                 progress=tick if deadline is not None else None, dependencies=deps)
    return s, info, table


def _alarm(signum: int, frame: Any) -> None:
    raise CellTimeout("cell exceeded its time limit")


def _disarm(use_alarm: bool) -> None:
    """Stop the cell's alarm (and its repeats), first thing once the cell has stopped."""
    if use_alarm:
        signal.setitimer(signal.ITIMER_REAL, 0)


def run_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Run one cell and return its result row (never raises for a failing cell).

    A cell whose policy the project does not control (``sim.registry.is_foreign``: a
    user's ``MODULE:FACTORY`` or an installed package's) is simulated in a worker process
    (:mod:`sim.sandbox`, :func:`simulate_cell_plain`) that is killed at the cell's time
    limit plus a grace, so a policy in a C loop, one that swallows the time-out or one
    that crashes is a failed row; its schedule comes back as plain arrays and is
    validated and measured here, on this process's workload, never in the process that
    ran the policy's code. Every other cell runs here (:func:`run_cell_here`).
    """
    from sim import registry

    if not registry.is_foreign("", cell["policy"]):
        return run_cell_here(cell)
    from sim import sandbox

    t0 = time.perf_counter()
    limit = cell.get("time_limit")
    row = _row()
    try:
        answer = sandbox.call("sim.sweep.cell:simulate_cell_plain", (cell,),
                              seconds=sandbox.deadline(limit),
                              what=f"policy {cell['policy']!r}")
        _measure(row, cell, answer, t0)
    except sandbox.ForeignError as exc:
        kind = "CellTimeout" if "time limit exceeded" in str(exc) else "ForeignError"
        row["error"] = f"{kind}: {exc}"
    except Exception as exc:  # a failing cell is data, not the end of the sweep
        row["error"] = _error(exc)
    row["wall_seconds"] = time.perf_counter() - t0
    return row


def _row() -> dict[str, Any]:
    """A failed row, to be filled in (:func:`run_cell_here`'s keys)."""
    return {"status": "failed", "error": None, "metrics": None, "policy_config": None,
            "trace_sha256": None, "workload_sha256": None, "cleaning": None,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


def _error(exc: BaseException) -> str:
    """A failed cell's error: the exception and the line that raised it."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def simulate_cell_plain(cell: dict[str, Any]) -> dict[str, Any]:
    """The worker's side of a foreign policy's cell (:func:`run_cell`): simulate it
    under the cell's time limit and return the schedule as plain data
    (``sim.batch.plain.to_plain``) with the policy's configuration and the load time,
    or ``{"error": ...}`` for a cell that failed there. No validation and no metric is
    computed here: the parent does both on its own workload."""
    t0 = time.perf_counter()
    limit = cell.get("time_limit")
    deadline = time.monotonic() + float(limit) if limit else None
    use_alarm = (limit is not None and hasattr(signal, "setitimer")
                 and threading.current_thread() is threading.main_thread())
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, float(limit), ALARM_REPEAT)
        spec = cell_policy(cell)
        config = policy_config(spec, cell)
        s, _, _ = _simulate(cell, spec, deadline)
        _disarm(use_alarm)
    except CellTimeout as exc:
        _disarm(use_alarm)
        return {"error": f"CellTimeout: {exc}"}
    except Exception as exc:
        _disarm(use_alarm)
        return {"error": _error(exc)}
    finally:
        _disarm(use_alarm)
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    from sim.batch.plain import to_plain

    return {"schedule": to_plain(s), "policy_config": config,
            "load_seconds": max(0.0, time.perf_counter() - t0 - s.sim_seconds)}


def _measure(row: dict[str, Any], cell: dict[str, Any], answer: Any, t0: float) -> None:
    """Fill ``row`` from a worker's ``answer`` (:func:`simulate_cell_plain`): the
    schedule rebuilt on this process's workload of the cell, validated and measured
    here. ValueError naming what of the answer does not fit."""
    from sim.batch.plain import from_plain
    from sim.batch.validate import validate

    what = f"policy {cell['policy']!r}"
    if not isinstance(answer, dict):
        raise ValueError(f"{what}: the worker's answer is not a cell's")
    if "error" in answer:
        row["error"] = " ".join(str(answer["error"]).split())[:500]
        return
    w, info, table = build_scenario(cell)
    s = from_plain(w, answer.get("schedule"), cell.get("overrun", "kill"),
                   f"{what}: the worker's schedule does not fit the cell's workload")
    config = answer.get("policy_config")
    row["policy_config"] = config if isinstance(config, dict) else None
    row.update(info)
    load = answer.get("load_seconds")
    row["load_seconds"] = float(load) if isinstance(load, float) and load >= 0 else 0.0
    row["sim_seconds"] = s.sim_seconds
    validate(s)
    row["metrics"] = cell_metrics(s, table)
    row["status"] = "done"


def run_cell_here(cell: dict[str, Any]) -> dict[str, Any]:
    """Run one cell in this process and return its result row (never raises for a
    failing cell).

    The row holds ``status`` ("done" or "failed"), ``error``, ``metrics``,
    ``policy_config``, ``trace_sha256``, ``workload_sha256``, ``cleaning``,
    ``validated`` and the timings ``wall_seconds`` (the whole cell), ``sim_seconds``
    (the simulation) and ``load_seconds`` (reading and preparing the workload).
    """
    from sim.batch.validate import validate

    t0 = time.perf_counter()
    row = _row()
    limit = cell.get("time_limit")
    deadline = time.monotonic() + float(limit) if limit else None
    use_alarm = (limit is not None and hasattr(signal, "setitimer")
                 and threading.current_thread() is threading.main_thread())
    old = None
    try:
        if use_alarm:
            old = signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, float(limit), ALARM_REPEAT)
        spec = cell_policy(cell)
        row["policy_config"] = policy_config(spec, cell)
        s, info, table = _simulate(cell, spec, deadline)
        row.update(info)
        row["load_seconds"] = max(0.0, time.perf_counter() - t0 - s.sim_seconds)
        row["sim_seconds"] = s.sim_seconds
        validate(s)
        row["metrics"] = cell_metrics(s, table)
        row["status"] = "done"
    except CellTimeout as exc:
        _disarm(use_alarm)
        row["error"] = f"CellTimeout: {exc}"
    except Exception as exc:  # a failing cell is data, not the end of the sweep
        _disarm(use_alarm)
        row["error"] = _error(exc)
    finally:
        _disarm(use_alarm)
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    row["wall_seconds"] = time.perf_counter() - t0
    return row
