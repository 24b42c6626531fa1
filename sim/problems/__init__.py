"""Problem families, each defined once: data, feasibility, objective, JSON and its schema.

A family's exact models (``models/``) and its heuristics (``heuristics/``) import its one
definition from here, so their numbers are comparable by construction.

========================  =======================  ==========================================
family                    module                   problem
========================  =======================  ==========================================
``slack_insertion``       :mod:`.insertion`        slack-constrained insertion (Talby & Feitelson)
``grouping``              :mod:`.grouping`         memory-aware time-slice grouping (Suh et al.)
``kresource_epochs``      :mod:`.kresource`        K-resource epochs (Leinberger et al.)
``kresource_selection``   :mod:`.kresource`        one K-resource EASY backfill decision
``kresource_response``    :mod:`.kresource`        K-resource total (weighted) response time
``task_mapping``          :mod:`.task_mapping`     memory-balanced task mapping (CSM, Gine et al.)
``gang_schedule``         :mod:`.gang_schedule`    memory-feasible gang schedule (CSM)
``slot_assignment``       :mod:`.slots`            BSP slot tables (Karl)
``slot_placement``        :mod:`.placement`        slot placement of one BSP program (Karl)
========================  =======================  ==========================================

The contract
------------
Every family module exposes the same names:

``FAMILY``
    The family's name (the ``"problem"`` field of its JSON). Every problem class also
    carries it as a class attribute, so ``problem.FAMILY`` names the family of any
    problem. A module that defines several families (only :mod:`.kresource`, whose three
    problems share their vectors and checks) has no module-level ``FAMILY``: it exposes
    ``FAMILIES`` (a tuple) and its module-level functions below dispatch on the problem's
    class (or, in ``from_dict``, on the ``"problem"`` field).
``<Name>Problem``
    A frozen dataclass validated at construction: a bad value raises ``ValueError``
    naming the field and the value.
``from_dict(data, source="<json>") -> problem`` / ``to_dict(problem) -> dict``
    The JSON form; ``from_dict(to_dict(p)) == p``. Errors name ``source`` and the field.
``check(problem, solution) -> list[str]``
    The violations of ``solution`` (one readable sentence each; empty when feasible). It
    shares no code with the solvers. :func:`ensure_feasible` raises them.
``objective(problem, solution) -> float``
    The value of a feasible solution (the paper's name for it is in the docstring).
``SCHEMA``
    The family's field declarations (:class:`sim.problems.fields.Record`), the one place a
    field's name, type, meaning, unit, range and default are written; :func:`schema` (JSON
    Schema) and :func:`example` (a small valid instance) are generated from it. The
    several-family module exposes ``SCHEMAS`` (family -> Record) instead.

Every solver of a family (``sim.registry.SOLVERS[family]``) is a function
``solve(problem, *, time_limit=None, seed=0, <explicit options>) -> sim.result.Result``.

A family resolved once
----------------------
:class:`Family` (:mod:`.family`) holds one family's module, loader, ``check``,
``objective``, sense, solvers, default solver and ILP; :func:`sim.registry.problem_family`
makes it from a problem file's ``"problem"`` field at the edge, and the layers below take
it instead of the name. The functions here that take a family's name are the tables it is
built from and the name-keyed Python API.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

from sim.problems.family import Family

__all__ = ["Family", "MODULES", "MAX_FILE_BYTES", "MAXIMISE", "Infeasible", "module",
           "family_of", "sense", "claim_error", "value_error", "read_bytes", "read_json",
           "parse_json", "solution_from_json", "ensure_feasible", "checker", "objective",
           "scorer", "schema", "example"]

MODULES: dict[str, str] = {
    "slack_insertion": "sim.problems.insertion",
    "grouping": "sim.problems.grouping",
    "kresource_epochs": "sim.problems.kresource",
    "kresource_selection": "sim.problems.kresource",
    "kresource_response": "sim.problems.kresource",
    "task_mapping": "sim.problems.task_mapping",
    "gang_schedule": "sim.problems.gang_schedule",
    "slot_assignment": "sim.problems.slots",
    "slot_placement": "sim.problems.placement",
}
"""Module defining each family (imported on first use)."""

MAXIMISE = frozenset({"kresource_selection"})
"""Families whose objective is maximised (every other family minimises)."""

NONNEGATIVE = frozenset(MODULES) - {"slack_insertion"}
"""Families whose objective is never negative (counts, pages, idle or response time)."""

INTEGRAL = frozenset({"kresource_epochs", "kresource_selection", "kresource_response",
                      "slot_assignment", "task_mapping"})
"""Families whose objective is always a whole number (their data are integers): a proof
of optimality there closes the gap to less than one unit (``sim.result.verify``)."""

MAX_FILE_BYTES = 256 << 20
"""Largest problem file read (bytes, gzip unpacked; 256 MiB)."""


class Infeasible(ValueError):
    """A solution violates its problem; ``violations`` lists why (``check``'s list)."""

    def __init__(self, violations: list[str]) -> None:
        self.violations = list(violations)
        super().__init__("; ".join(self.violations))


def module(family: str) -> ModuleType:
    """The module defining ``family`` (ValueError naming the known ones otherwise)."""
    try:
        return importlib.import_module(MODULES[family])
    except (KeyError, TypeError):
        raise ValueError(f"unknown problem family {family!r}; known: {sorted(MODULES)}") from None


def family_of(problem: Any) -> str:
    """The family of a problem object (its class's ``FAMILY``)."""
    fam = getattr(type(problem), "FAMILY", None)
    if fam not in MODULES:
        raise ValueError(f"{type(problem).__name__} is not a problem of a known family")
    return fam


def _module_of(problem: Any) -> ModuleType:
    """The module defining the family of a problem object (its class's ``FAMILY``, looked
    up once); ValueError for an object of no known family, as :func:`family_of`."""
    path = MODULES.get(getattr(type(problem), "FAMILY", None))
    if path is None:
        raise ValueError(f"{type(problem).__name__} is not a problem of a known family")
    return importlib.import_module(path)


def sense(family: str) -> str:
    """``"max"`` or ``"min"``: the direction of ``family``'s objective."""
    return "max" if family in MAXIMISE else "min"


def claim_error(family: str, value: Any) -> str | None:
    """Why ``value`` cannot be an objective value of ``family`` (a number that is not
    finite, negative for a family whose objective never is, fractional for one whose
    objective is a whole number); None when it can be."""
    return value_error(value, family, nonnegative=family in NONNEGATIVE,
                       integral=family in INTEGRAL)


def value_error(value: Any, name: str, *, nonnegative: bool, integral: bool) -> str | None:
    """Why ``value`` cannot be an objective value of the family ``name`` (for the message)
    whose objective is never negative (``nonnegative``) or always a whole number
    (``integral``); None when it can be."""
    from sim.problems.fields import short

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{short(value)} is not a number"
    if not math.isfinite(value):
        return f"{short(value)} is not finite"
    if nonnegative and value < 0:
        return f"{short(value)} is negative; a {name} objective never is"
    if integral and value != int(value):
        return f"{short(value)} is fractional; a {name} objective is a whole number"
    return None


def read_bytes(path: Any) -> bytes:
    """The bytes of a problem file (gzip unpacked); a device (``/dev/zero``), a pipe or a
    file over :data:`MAX_FILE_BYTES` is refused (ValueError naming it) before it is read."""
    from instances.files import read_bytes as read

    return read(path, limit=MAX_FILE_BYTES, what="problem file")


def read_json(path: Any) -> Any:
    """A problem file (JSON, plain or gzip) as Python data; every failure a one-line
    ValueError naming the file. A device (``/dev/zero``), a pipe or a file over
    :data:`MAX_FILE_BYTES` is refused before it is read."""
    return parse_json(read_bytes(path), path)


def parse_json(raw: bytes, path: Any) -> Any:
    """The bytes of problem file ``path`` (:func:`read_bytes`) as Python data; every
    failure (not UTF-8, invalid JSON, nested too deeply, a number too long) a one-line
    ValueError naming the file, a key repeated in one object among them."""
    import json

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    from instances.files import DuplicateKeyError, loads_json

    try:
        return loads_json(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except DuplicateKeyError as exc:
        raise ValueError(f"{path}: invalid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        from sim.problems.fields import short

        raise ValueError(f"{path}: invalid JSON: {short(str(exc), 120)}") from None


def solution_from_json(family: str, data: Any) -> Any:
    """The solution object of ``family`` from its JSON form (``Result.to_dict``'s
    ``solution``, a library file's ``certificate``): the insertion schedule is a typed
    object, every other family's solution is the JSON data itself."""
    if family == "slack_insertion":
        from sim.problems.insertion import InsertionSchedule

        if not isinstance(data, dict):
            raise ValueError(f"expected an object with new_start and starts, got "
                             f"{type(data).__name__}")
        return InsertionSchedule.from_dict(data)
    return data


def ensure_feasible(problem: Any, solution: Any) -> None:
    """Raise :class:`Infeasible` (a ``ValueError``) unless ``check(problem, solution)`` of
    the problem's family is empty; the message joins the violations."""
    violations = _module_of(problem).check(problem, solution)
    if violations:
        raise Infeasible(violations)


def checker(problem: Any) -> Callable[[Any], None]:
    """:func:`ensure_feasible` bound to ``problem``: the raising check that
    :func:`sim.result.build` takes."""
    check = _module_of(problem).check

    def ensure(solution: Any) -> None:
        violations = check(problem, solution)
        if violations:
            raise Infeasible(violations)

    return ensure


def objective(problem: Any, solution: Any) -> float:
    """``objective(problem, solution)`` of the problem's family."""
    return _module_of(problem).objective(problem, solution)


def scorer(problem: Any) -> Callable[[Any], float]:
    """The family's ``objective`` bound to ``problem`` (for :func:`sim.result.build`)."""
    fn = _module_of(problem).objective
    return lambda solution: fn(problem, solution)


def schema(family: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a problem file of ``family``, generated from the
    family's field declarations: per field its type, ``description``, ``unit``, range
    (``minimum``/``maximum``), ``enum`` and ``default``."""
    from sim.problems import fields

    return fields.json_schema(_declaration(family), family)


def example(family: str) -> dict[str, Any]:
    """A small valid problem of ``family`` as its JSON dictionary, generated from the
    declarations' examples; every registered solver of the family accepts it."""
    from sim.problems import fields

    return fields.example_of(_declaration(family), family)


def _declaration(family: str) -> Any:
    mod = module(family)
    declared = getattr(mod, "SCHEMAS", None)
    return declared[family] if declared is not None else mod.SCHEMA
