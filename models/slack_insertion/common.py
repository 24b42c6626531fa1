"""What every exact insertion solver ends with: a :class:`sim.result.Result` built by
:func:`sim.result.build` (solution checked, price recomputed, status and bound made
consistent), and the wall-clock budget they share."""

from __future__ import annotations

import time
from typing import Any

from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status, build

__all__ = ["finish", "Deadline", "BOUND_TOL"]

BOUND_TOL = 1e-6
"""Relative tolerance (of ``max(1, |price|)``) within which a proved bound counts as
meeting the price (``sim.result.build``); the exact solvers' own rounding is far below."""


class Deadline:
    """A wall-clock budget: ``time_limit`` seconds from construction (None = none).

    Model building counts against it: solvers call :meth:`expired` while they build and
    pass :meth:`left` on to the back end.
    """

    def __init__(self, time_limit: float | None) -> None:
        if time_limit is not None:
            time_limit = float(time_limit)
            if not time_limit >= 0 or time_limit == float("inf"):
                raise ValueError(f"time_limit must be a finite number >= 0 seconds, "
                                 f"got {time_limit!r}")
        self.t0 = time.perf_counter()
        self.limit = time_limit

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.t0

    def left(self, floor: float = 1e-3) -> float | None:
        """Seconds left (at least ``floor``), or None without a limit."""
        if self.limit is None:
            return None
        return max(self.limit - self.elapsed(), floor)

    def expired(self) -> bool:
        """Whether the budget is used up."""
        return self.limit is not None and self.elapsed() >= self.limit


def finish(name: str, problem: InsertionProblem, sch: InsertionSchedule | None,
           status: Status, bound: float | None, deadline: Deadline, seed: int,
           params: dict[str, Any], note: str = "") -> Result:
    """The :class:`Result` of solver ``name`` for schedule ``sch`` (an
    :class:`InsertionSchedule`, checked by :func:`sim.problems.insertion.check`; price
    recomputed by :func:`sim.problems.insertion.price`)."""
    return build(solver=name, status=status, solution=sch,
                 check=lambda s: ins.check(problem, s),
                 objective=lambda s: ins.price(problem, s), bound=bound,
                 runtime=deadline.elapsed(), seed=seed, params=params, tolerance=BOUND_TOL,
                 note=note)
