"""The one result type every offline solver returns.

``solve(problem, *, time_limit=None, seed=0, **params) -> Result`` is the interface of
every exact model and heuristic for an offline problem. The objective is always
recomputed from the returned solution by the problem's own objective code, never
copied from a solver's log.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any


class Status(str, enum.Enum):
    """Outcome of a solve.

    OPTIMAL means proved optimal. A solver stopped by a time limit with a solution
    reports FEASIBLE together with its best bound; without one, UNKNOWN.
    Heuristics report FEASIBLE (or INFEASIBLE when they find no feasible solution).
    """

    OPTIMAL = "OPTIMAL"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class Result:
    """Outcome of one ``solve`` call.

    Parameters
    ----------
    solver : str
        Registered solver name.
    status : Status
    objective : float or None
        Objective of ``solution`` recomputed by the problem's objective function
        (None when there is no solution).
    bound : float or None
        Best proved bound on the optimum (for minimisation, a lower bound). Equal to
        ``objective`` when OPTIMAL; None for heuristics, which prove nothing.
    runtime : float
        Wall-clock seconds spent in ``solve``.
    solution : Any
        Problem-specific solution object (for example a dict of start times or a list
        of groups); JSON-serialisable.
    seed : int
    params : dict
        Parameters the solver was called with.
    """

    solver: str
    status: Status
    objective: float | None
    bound: float | None
    runtime: float
    solution: Any = None
    seed: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """Relative gap ``(objective - bound) / max(|objective|, 1e-9)``, or None."""
        if self.objective is None or self.bound is None:
            return None
        if self.objective == self.bound:
            return 0.0
        return (self.objective - self.bound) / max(abs(self.objective), 1e-9)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary (``solver``, ``status``, ``objective``, ``bound``, ``gap``,
        ``runtime``, ``seed``, ``params``, ``solution``)."""

        def clean(x: Any) -> Any:
            if isinstance(x, float) and not math.isfinite(x):
                return str(x)
            return x

        return {
            "solver": self.solver,
            "status": self.status.value,
            "objective": clean(self.objective),
            "bound": clean(self.bound),
            "gap": clean(self.gap),
            "runtime": self.runtime,
            "seed": self.seed,
            "params": self.params,
            "solution": self.solution,
        }
