"""What every exact insertion solver ends with: a :class:`sim.result.Result` built by
:func:`sim.result.build` (solution checked, price recomputed, status and bound made
consistent), and the wall-clock budget they share."""

from __future__ import annotations

from typing import Any

from models.deadline import Deadline  # noqa: F401  (re-exported for the solvers)
from sim.problems import checker
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status, build

__all__ = ["finish", "Deadline", "BOUND_TOL"]

BOUND_TOL = 1e-6
"""Relative tolerance (of ``max(1, |price|)``) within which a proved bound counts as
meeting the price (``sim.result.build``); the exact solvers' own rounding is far below."""


def finish(name: str, problem: InsertionProblem, sch: InsertionSchedule | None,
           status: Status, bound: float | None, deadline: Deadline, seed: int,
           params: dict[str, Any], note: str = "") -> Result:
    """The :class:`Result` of solver ``name`` for schedule ``sch`` (an
    :class:`InsertionSchedule`, checked by :func:`sim.problems.insertion.check`; price
    recomputed by :func:`sim.problems.insertion.objective` (the price))."""
    return build(solver=name, status=status, solution=sch,
                 check=checker(problem),
                 objective=lambda s: ins.objective(problem, s), bound=bound,
                 runtime=deadline.elapsed(), seed=seed, params=params, tolerance=BOUND_TOL,
                 note=note)
