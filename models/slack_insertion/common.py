"""What every exact insertion solver ends with: a checked, recomputed :class:`Result`."""

from __future__ import annotations

import time
from typing import Any

from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["finish"]


def _solution(problem: InsertionProblem, sch: InsertionSchedule) -> dict[str, Any]:
    d = sch.to_dict()
    d["moved"] = ins.moved(problem, sch)
    return d


def finish(name: str, problem: InsertionProblem, sch: InsertionSchedule, status: Status,
           bound: float | None, t0: float, seed: int, params: dict[str, Any]) -> Result:
    """The :class:`Result` of solver ``name`` for schedule ``sch`` (checked; price
    recomputed by :func:`sim.problems.insertion.price`); ``t0`` is the start of the solve
    (``time.perf_counter()`` seconds)."""
    ins.check(problem, sch)  # never hand out an infeasible schedule
    obj = ins.price(problem, sch)
    if status is Status.OPTIMAL and bound is not None:
        bound = min(bound, obj)
    return Result(name, status, obj, bound, time.perf_counter() - t0, _solution(problem, sch),
                  seed, params)

