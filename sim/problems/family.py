"""A problem family resolved once: everything a solve, a bench run or a check needs of it.

:func:`sim.registry.problem_family` turns a problem file's ``"problem"`` field (or a
family's name) into one :class:`Family`, at the edge (the CLI, ``bench``, a Python entry
point); every layer below takes that object, never the name, and asks it for the
family's loader, ``check``, ``objective``, sense, solvers, default solver and ILP. The
family's module and its solvers are imported on first use (by dotted path), so building a
Family imports neither OR-Tools nor PuLP.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import Any

from sim import collector

__all__ = ["COMBINATION", "Family", "is_combination"]

COMBINATION = "models.portfolio:combination"
"""Builds the solver of a combination name (members joined by ``+``, e.g. ``cpsat+scip``:
the family's solvers or MIP backends run in turn, best solution and best bound kept)."""


def is_combination(name: str) -> bool:
    """Whether ``name`` names a combination of solvers (``A+B``; ``models.portfolio``)."""
    return "+" in name and ":" not in name


def _load(path: str) -> Callable[..., Any]:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True, eq=False)
class Family:
    """One problem family, resolved once (:func:`sim.registry.problem_family`, which keeps
    one instance per family: two Family objects are equal when they are the same one).

    Parameters
    ----------
    name : str
        The family's name, the ``"problem"`` field of its files (for records and messages).
    module_name : str
        Dotted path of the module defining it (``sim.problems.kresource``).
    loader : str
        ``"module:function"`` reading a problem from a parsed JSON dictionary.
    sense : {"min", "max"}
        Direction of the objective.
    nonnegative, integral : bool
        Whether every objective value is >= 0, a whole number (a file's claimed value
        outside that range is refused: :meth:`claim_error`).
    solvers : mapping of str to str
        The registered solvers, name -> ``"module:function"`` (a read-only view of
        ``sim.registry.SOLVERS[name]``).
    default_solver : str or None
        The exact solver ``schedsearch solve FILE`` runs when none is named.
    ilp : str or None
        The registered solver that takes a MIP ``backend=`` (``models.mip.ILP_SOLVERS``);
        None when the family has no ILP.
    plugins : frozenset of str
        The solver names installed packages added (entry points: foreign code).
    refused : str or None
        Why an installed package's solver entry point was refused (raised by every
        solver lookup, as :func:`sim.registry.check_plugins` does).
    """

    name: str
    module_name: str
    loader: str
    sense: str
    nonnegative: bool
    integral: bool
    solvers: Mapping[str, str]
    default_solver: str | None = None
    ilp: str | None = None
    plugins: frozenset[str] = frozenset()
    refused: str | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ problem side
    @cached_property
    def module(self) -> ModuleType:
        """The module defining the family (imported on first use)."""
        return importlib.import_module(self.module_name)

    def load(self, data: dict[str, Any], source: str = "<json>") -> Any:
        """The problem of a parsed JSON dictionary (its ``"problem"`` field names this
        family); ValueError naming ``source`` and the field."""
        with collector.paused():  # 10^5 K-resource jobs: 0.67 s to load with it, 0.24 s without
            return _load(self.loader)(data, source=source)

    def check(self, problem: Any, solution: Any) -> list[str]:
        """The violations of ``solution`` (the family's own ``check``; empty: feasible)."""
        return self.module.check(problem, solution)

    def objective(self, problem: Any, solution: Any) -> float:
        """The objective of a feasible ``solution`` (the family's own ``objective``)."""
        return self.module.objective(problem, solution)

    def solution_from_json(self, data: Any) -> Any:
        """The solution object of its JSON form (:func:`sim.problems.solution_from_json`)."""
        from sim.problems import solution_from_json

        return solution_from_json(self.name, data)

    def claim_error(self, value: Any) -> str | None:
        """Why ``value`` cannot be an objective value of the family; None when it can be
        (:func:`sim.problems.value_error`)."""
        from sim.problems import value_error

        return value_error(value, self.name, nonnegative=self.nonnegative,
                           integral=self.integral)

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the family's problem files (:func:`sim.problems.schema`)."""
        from sim.problems import fields

        return fields.json_schema(self._declaration(), self.name)

    def example(self) -> dict[str, Any]:
        """A small valid problem as its JSON dictionary (:func:`sim.problems.example`)."""
        from sim.problems import fields

        return fields.example_of(self._declaration(), self.name)

    def _declaration(self) -> Any:
        declared = getattr(self.module, "SCHEMAS", None)
        return declared[self.name] if declared is not None else self.module.SCHEMA

    # ------------------------------------------------------------------- solver side
    def _check_refused(self) -> None:
        if self.refused is not None:
            raise ValueError(self.refused)

    def solver(self, name: str) -> Callable[..., Any]:
        """The ``solve`` function called ``name``: a registered solver, a combination of
        them (``A+B``, :data:`COMBINATION`) or a user's ``MODULE:FUNCTION``. ValueError
        naming an unknown solver, or a plug-in that does not load."""
        from sim.plugins import SOLVER_GROUP, is_reference, load_reference

        if is_reference(name):
            return load_reference(name, what="solver")
        self._check_refused()
        if name not in self.solvers and is_combination(name):
            return _load(COMBINATION)(self, name)
        try:
            target = self.solvers[name]
        except KeyError:
            raise ValueError(f"unknown solver {name!r} for problem {self.name!r}; known: "
                             f"{sorted(self.solvers)}") from None
        if name in self.plugins:
            return load_reference(target, what=f"solver {name!r} (entry point "
                                  f"{self.name}/{name} of group {SOLVER_GROUP})")
        return _load(target)

    def has_solver(self, name: str) -> bool:
        """Whether ``name`` is a registered solver or a valid combination of them."""
        self._check_refused()
        if name in self.solvers:
            return True
        if not is_combination(name):
            return False
        try:
            self.solver(name)
        except ValueError:
            return False
        return True

    def foreign_target(self, name: str) -> str | None:
        """``MODULE:FUNCTION`` of a solver the project does not control (a user's
        reference, an installed package's entry point); None for the project's own."""
        from sim.plugins import is_reference

        if is_reference(name):
            return name
        self._check_refused()
        return self.solvers[name] if name in self.plugins else None

    def is_foreign(self, name: str) -> bool:
        """Whether the solver ``name`` is code the project does not control."""
        return self.foreign_target(name) is not None

    def kind(self, name: str) -> str:
        """``"exact"`` for the registered exact models (``models.*``) and a combination of
        them, and for a user's function that declares ``kind = "exact"``;
        ``"heuristic"`` otherwise."""
        from sim.plugins import is_reference

        if is_reference(name):
            kind = getattr(self.solver(name), "kind", "heuristic")
            return kind if kind in ("exact", "heuristic") else "heuristic"
        target = self.solvers.get(name, "")
        if not target and is_combination(name):
            target = COMBINATION
        return "exact" if target.startswith("models.") else "heuristic"
