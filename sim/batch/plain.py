"""A schedule as plain data and back: how a schedule made in a worker process that ran
a user's policy (:mod:`sim.sandbox`) comes back to be validated and measured in the
parent, on the parent's own workload.

Only arrays and JSON values cross: :func:`to_plain` keeps the start, end and killed
arrays and the policy's declarations; :func:`from_plain` checks every field's type and
length against the parent's workload and builds the :class:`~sim.batch.schedule.Schedule`
there, so nothing the worker's code could have replaced (the validator, the metrics, the
workload) is trusted. Times are integer seconds.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from instances.job import Workload
from sim.batch.engine import ENGINES
from sim.batch.schedule import Schedule

__all__ = ["from_plain", "plain_terms", "to_plain"]


def to_plain(s: Schedule) -> dict[str, Any]:
    """The fields of ``s`` that :func:`from_plain` reads, as arrays and JSON values."""
    return {"policy": s.policy, "start": s.start, "end": s.end, "killed": s.killed,
            "promises": dict(s.promises), "guarantees": sorted(s.guarantees),
            "terms": plain_terms(s.terms), "sim_seconds": s.sim_seconds,
            "engine": s.engine, "engine_reason": s.engine_reason}


def plain_terms(terms: Any) -> dict[str, dict[str, Any]]:
    """A schedule's guarantee terms as JSON data (a value that is not becomes its
    ``repr``, which the validator then refuses by name)."""
    out: dict[str, dict[str, Any]] = {}
    for kind, values in dict(terms or {}).items():
        row = {}
        for k, v in dict(values).items():
            try:
                row[str(k)] = json.loads(json.dumps(v, allow_nan=False))
            except (TypeError, ValueError, RecursionError):
                row[str(k)] = repr(v)[:100]
        out[str(kind)] = row
    return out


def from_plain(workload: Workload, d: Any, overrun: str, bad: str) -> Schedule:
    """The schedule of the plain fields ``d`` (:func:`to_plain`) on this process's
    ``workload``; ValueError starting with ``bad`` and naming the field that does not
    fit it (not an integer array of one entry per job, an unknown engine, ...)."""
    if not isinstance(d, dict):
        raise ValueError(f"{bad} (not a schedule)")
    n = len(workload.jobs)
    arrays = {k: d.get(k) for k in ("start", "end", "killed")}
    for k, a in arrays.items():
        kind = "b" if k == "killed" else "i"
        if not isinstance(a, np.ndarray) or a.shape != (n,) or a.dtype.kind != kind:
            raise ValueError(f"{bad} ({k}: not {n} "
                             f"{'booleans' if kind == 'b' else 'integers'})")
    sim_seconds, engine = d.get("sim_seconds"), d.get("engine")
    if not isinstance(sim_seconds, float) or not 0 <= sim_seconds < math.inf \
            or engine not in ENGINES:
        raise ValueError(f"{bad} (sim_seconds or engine)")
    terms = d.get("terms")
    return Schedule(
        workload=workload, policy=str(d.get("policy")),
        start=arrays["start"].astype(np.int64), end=arrays["end"].astype(np.int64),
        killed=arrays["killed"].astype(bool), overrun=overrun,
        promises={int(j): int(t) for j, t in dict(d.get("promises") or {}).items()},
        sim_seconds=sim_seconds,
        guarantees=frozenset(str(g) for g in d.get("guarantees") or ()),
        terms=plain_terms(terms if isinstance(terms, dict) else {}),
        engine=engine, engine_reason=str(d.get("engine_reason") or ""))
