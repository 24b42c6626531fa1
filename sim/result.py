"""The one result type every offline solver returns.

``solve(problem, *, time_limit=None, seed=0, **params) -> Result`` is the interface of
every exact model and heuristic for an offline problem. The objective is always
recomputed from the returned solution by the problem's own objective code, never
copied from a solver's log.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.problems import Family


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
        Problem-specific solution object, the same type for every solver of a family
        (a typed object with ``to_dict()``, or plain JSON data); converted to JSON only
        by ``to_dict`` (the edge: CLI, stores).
    seed : int
    params : dict
        Parameters the solver was called with.
    note : str
        Anything the status alone does not say (for example that a bound was dropped
        because it was on the wrong side of a feasible solution).
    """

    solver: str
    status: Status
    objective: float | None
    bound: float | None
    runtime: float
    solution: Any = None
    seed: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    note: str = ""

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
            "note": self.note,
            "solution": _jsonable(self.solution),
        }


def _jsonable(solution: Any) -> Any:
    to_dict = getattr(solution, "to_dict", None)
    return to_dict() if callable(to_dict) else solution


def build(*, solver: str, status: Status, solution: Any,
          check: Callable[[Any], None], objective: Callable[[Any], float],
          bound: float | None = None, runtime: float, seed: int = 0,
          params: dict[str, Any] | None = None, sense: str = "min",
          tolerance: float = 1e-6, note: str = "") -> Result:
    """The one builder every solver ends with: check the solution, recompute its
    objective, and make status and bound consistent.

    Parameters
    ----------
    solver, status, seed, params, note
        As in :class:`Result`.
    solution : Any or None
        The solver's solution; None when it found none (status must then be UNKNOWN or
        INFEASIBLE).
    check : callable
        The family's feasibility check; raises ``ValueError`` on an infeasible solution
        (a solver bug, so it propagates).
    objective : callable
        The family's objective of a solution (recomputed here, never copied).
    bound : float or None
        The solver's proved bound on the optimum (lower for ``sense="min"``).
    runtime : float
        Wall-clock seconds.
    sense : {"min", "max"}
    tolerance : float
        Relative tolerance (of ``max(1, |objective|)``) within which the bound counts as
        equal to the objective.

    Returns
    -------
    Result
        OPTIMAL only when the bound meets the recomputed objective within ``tolerance``
        (otherwise FEASIBLE, said in ``note``); a bound on the wrong side of the
        solution beyond ``tolerance`` is dropped (None) and said in ``note``, one within
        it is moved onto the objective (never on the wrong side of the solution: a
        floating-point solver's bound can overshoot by its tolerances); OPTIMAL without
        a bound gets the objective as its bound.
    """
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    status = Status(status)
    notes = [note] if note else []
    if solution is None:
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            raise ValueError(f"{solver}: status {status.value} without a solution")
        return Result(solver, status, None, bound, runtime, None, seed, dict(params or {}),
                      "; ".join(notes))
    check(solution)
    value = float(objective(solution))
    if not math.isfinite(value):
        raise ValueError(f"{solver}: the recomputed objective of its solution is {value!r}: "
                         f"the problem's numbers overflow double precision (scale them down)")
    tol = tolerance * max(1.0, abs(value))
    if bound is not None:
        bound = float(bound)
        wrong_side = bound > value + tol if sense == "min" else bound < value - tol
        if wrong_side or math.isnan(bound):
            notes.append(f"solver bound {bound!r} dropped: wrong side of the recomputed "
                         f"objective {value!r}")
            bound = None
        else:  # within the tolerance: the solution itself is the tighter valid bound
            bound = min(bound, value) if sense == "min" else max(bound, value)
    if status is Status.OPTIMAL:
        if bound is None and not notes:
            bound = value
        elif bound is None or abs(value - bound) > tol:
            notes.append("solver said optimal, but its bound does not meet the recomputed "
                         "objective; reported FEASIBLE")
            status = Status.FEASIBLE
    elif status is Status.INFEASIBLE:
        raise ValueError(f"{solver}: status INFEASIBLE with a solution")
    return Result(solver, status, value, bound, runtime, solution, seed, dict(params or {}),
                  "; ".join(notes))


INTEGRAL_GAP = 0.5
"""Largest gap (objective units) between an OPTIMAL result's bound and its objective on
a family whose objective is whole (``Family.integral``): below one unit, whatever the
relative ``tolerance`` allows at large objectives."""


class InvalidResult(ValueError):
    """A solver's answer that does not pass its family's check and objective."""


def _real(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(x)


def verify(problem: Any, result: Any, *, solver: str, family: Family | None = None,
           tolerance: float = 1e-6) -> Result:
    """The one gate every solver's answer passes before anyone sees it, the project's
    solvers and a user's alike: the answer re-checked by the problem family's own
    ``check`` and ``objective`` (``sim.problems``), which share no code with any solver.

    Parameters
    ----------
    problem : a problem of a known family
    result : what the solver returned
    solver : str
        The name the solver was called by, for the messages.
    family : sim.problems.Family, optional
        The problem's family as resolved at the edge (its ``check``, ``objective`` and
        sense); None: the family of ``problem``'s class (``sim.problems.family_of``).
    tolerance : float
        Relative tolerance (of ``max(1, |objective|)``) for a claimed objective and a
        bound against the recomputed objective; for the bound of a family whose
        objective is whole, at most :data:`INTEGRAL_GAP`.

    Returns
    -------
    Result
        ``result`` with its objective replaced by the recomputed one (equal within
        ``tolerance``), and the bound of an OPTIMAL result without one set to it.

    Raises
    ------
    InvalidResult
        One line naming ``solver`` and the first violation: not a :class:`Result`, an
        unknown status, a field of the wrong type, an infeasible solution (the family's
        first violation), a claimed objective the solution does not have, a bound on the
        wrong side of its own solution, OPTIMAL with a gap or without a solution, a
        solution with INFEASIBLE, an objective without a solution.
    """
    def bad(why: str) -> InvalidResult:
        return InvalidResult(f"solver {solver!r} returned an invalid result: {why}")

    if not isinstance(result, Result):
        raise bad(f"a {type(result).__name__}, not a sim.result.Result")
    try:
        status = Status(result.status)
    except ValueError:
        raise bad(f"status {result.status!r} is not one of "
                  f"{', '.join(s.value for s in Status)}") from None
    for name in ("objective", "bound"):
        v = getattr(result, name)
        if v is not None and not _real(v):
            raise bad(f"{name} {v!r} is not a finite number")
    if not _real(result.runtime) or result.runtime < 0:
        raise bad(f"runtime {result.runtime!r} is not a number of seconds >= 0")
    if not isinstance(result.note, str) or not isinstance(result.params, dict):
        raise bad("note must be a str and params a dict")
    if result.solution is None:
        if status in (Status.OPTIMAL, Status.FEASIBLE):
            raise bad(f"status {status.value} without a solution")
        if result.objective is not None:
            raise bad(f"objective {result.objective!r} without a solution")
        return replace(result, status=status)
    if status is Status.INFEASIBLE:
        raise bad("status INFEASIBLE with a solution")
    if family is None:
        from sim import registry
        from sim.problems import family_of

        family = registry.problem_family(family_of(problem))
    try:
        violations = family.check(problem, result.solution)
        value = None if violations else float(family.objective(problem, result.solution))
    except Exception as exc:  # a solution of the wrong shape may break the check anywhere
        raise bad(f"its solution is not a {family.name} solution ({type(exc).__name__}: "
                  f"{' '.join(str(exc).split())[:200]})") from None
    if violations:
        more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
        raise bad(f"infeasible solution: {violations[0]}{more}")
    if not math.isfinite(value):
        raise bad(f"its solution's objective is {value!r}")
    tol = tolerance * max(1.0, abs(value))
    if result.objective is None or abs(result.objective - value) > tol:
        raise bad(f"objective {result.objective!r} claimed, its solution's objective is "
                  f"{value!r}")
    bound = result.bound
    if family.integral:  # a whole optimum is proved by a gap below one unit, not 1e-6
        tol = min(tol, INTEGRAL_GAP)
    if bound is not None:
        wrong = bound > value + tol if family.sense == "min" else bound < value - tol
        if wrong:
            raise bad(f"bound {bound!r} on the wrong side of its own solution's objective "
                      f"{value!r}")
    if status is Status.OPTIMAL:
        if bound is None:
            bound = value
        elif abs(bound - value) > tol:
            raise bad(f"status OPTIMAL with a gap (objective {value!r}, bound {bound!r})")
    return replace(result, status=status, objective=value, bound=bound)
