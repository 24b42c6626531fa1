"""The benchmark library: every stored certificate is feasible and attains the stored best
known value, re-checked with the family's own ``check`` and ``objective``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sim import problems
from sim.sweep.bench import LIBRARY_FIELDS, load

LIBRARY = Path(__file__).resolve().parents[2] / "instances" / "data" / "library"
FILES = sorted(LIBRARY.glob("*/*.json"))


def solution_of(family: str, certificate):
    """The certificate (JSON) as the family's solution object."""
    if family == "slack_insertion":
        from sim.problems.insertion import InsertionSchedule

        return InsertionSchedule(certificate["new_start"],
                                 {int(k): v for k, v in certificate["starts"].items()})
    return certificate


def test_the_library_covers_every_family():
    assert {p.parent.name for p in FILES} == set(problems.MODULES)
    assert all(len(list((LIBRARY / f).glob("*.json"))) >= 5 for f in problems.MODULES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_certificate_is_feasible_and_attains_the_best_known_value(path):
    data = json.loads(path.read_text())
    assert set(LIBRARY_FIELDS) <= set(data)
    family, problem = load(data, str(path))
    assert family.name == path.parent.name
    solution = solution_of(family.name, data["certificate"])
    assert family.check(problem, solution) == []
    value = family.objective(problem, solution)
    assert math.isclose(value, data["best_known"], rel_tol=1e-9, abs_tol=1e-9)
    assert isinstance(data["proved"], bool)
