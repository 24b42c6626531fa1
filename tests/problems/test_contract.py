"""The problem-family contract (``sim.problems``): every family exposes the same names, its
JSON Schema and example come from its one declaration, the example loads, round-trips and
is solved by every registered solver of the family into a feasible solution."""

from __future__ import annotations

import inspect
import json

import pytest

import sim.problems as P
from sim import registry
from sim.problems import fields
from sim.result import Result

FAMILIES = sorted(P.MODULES)


def _declared(family: str) -> fields.Record:
    return P._declaration(family)


def test_every_registered_family_has_one_definition():
    assert set(FAMILIES) == set(registry.SOLVERS) == set(registry.PROBLEM_LOADERS)
    for fam in FAMILIES:
        mod = P.module(fam)
        assert registry.PROBLEM_LOADERS[fam] == f"{mod.__name__}:from_dict"
        for name in ("from_dict", "to_dict", "check", "objective"):
            assert callable(getattr(mod, name)), (fam, name)
        assert getattr(mod, "FAMILY", None) == fam or fam in mod.FAMILIES
        for old in ("from_json", "epochs_from_dict", "price", "is_feasible"):
            assert not hasattr(mod, old), (fam, old)


@pytest.mark.parametrize("family", FAMILIES)
def test_schema_has_the_json_schema_shape(family):
    s = P.schema(family)
    json.dumps(s)  # plain JSON
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert s["type"] == "object" and s["title"] == family
    props, req = s["properties"], s["required"]
    assert props["problem"] == {"const": family, "description": "The problem family."}
    assert "problem" in req and set(req) <= set(props)
    for f in _declared(family).fields:
        p = props[f.name]
        assert p["description"] == f.meaning
        assert ("default" in p) == (not f.required and f.default is not fields.COMPUTED)
        assert (f.name in req) == f.required
        if f.type in ("integer", "number"):
            assert p["type"] in (f.type, [f.type, "null"])
            if f.minimum is not None:
                assert p["minimum"] == f.minimum
            if f.unit:
                assert p["unit"] == f.unit


@pytest.mark.parametrize("family", FAMILIES)
def test_example_loads_round_trips_and_matches_the_declaration(family):
    mod = P.module(family)
    data = P.example(family)
    problem = mod.from_dict(data, source="example.json")
    assert problem.FAMILY == family and P.family_of(problem) == family
    out = mod.to_dict(problem)
    assert mod.from_dict(out) == problem
    assert mod.from_dict(json.loads(json.dumps(out))) == problem
    props = P.schema(family)["properties"]
    assert set(out) <= set(props)  # to_dict writes only declared fields
    assert set(P.schema(family)["required"]) <= set(out)


@pytest.mark.parametrize("family", FAMILIES)
def test_declared_requirements_and_ranges_are_the_loaders(family):
    """A declared required field is required by ``from_dict``, and a value just outside a
    declared range of a number is refused with the field named."""
    mod = P.module(family)
    for f in _declared(family).fields:
        if f.required:
            data = P.example(family)
            del data[f.name]
            with pytest.raises(ValueError, match=f.name):
                mod.from_dict(data, source="x.json")
        if f.type not in ("integer", "number"):
            continue
        step = 1 if f.type == "integer" else 0.5
        for bad in ((f.minimum - step) if f.minimum is not None else None,
                    (f.maximum + step) if f.maximum is not None else None):
            if bad is None:
                continue
            data = P.example(family)
            data[f.name] = int(bad) if f.type == "integer" else bad
            with pytest.raises(ValueError, match=f"'{f.name}'"):
                mod.from_dict(data, source="x.json")


@pytest.mark.parametrize("family", FAMILIES)
def test_declared_types_are_the_loaders(family):
    """A declared string or array field given a value of another type (a number, false,
    an empty string) is refused with the field named, never converted or taken as
    absent."""
    mod = P.module(family)
    props = P.schema(family)["properties"]
    for f in _declared(family).fields:
        if "anyOf" in props[f.name]:  # a number or a list, say
            continue
        if f.type == "string" and f.name != "problem":
            bads = [5, ["x"], None]
        elif f.type == "array":
            bads = [False, 0, "", {}]
        else:
            continue
        for bad in bads:
            data = {**P.example(family), f.name: bad}
            with pytest.raises(ValueError, match=f"'{f.name}'"):
                mod.from_dict(data, source="x.json")


def test_epoch_job_names_are_unique():
    """The solution is printed by job names: two jobs of one name are refused."""
    data = {**P.example("kresource_epochs"), "names": ["a", "b", "a", "c"]}
    with pytest.raises(ValueError, match="'names' repeats the name 'a'"):
        P.module("kresource_epochs").from_dict(data, source="x.json")


def _solvers():
    return [(fam, name) for fam in FAMILIES for name in sorted(registry.SOLVERS[fam])]


@pytest.mark.parametrize("family,name", _solvers())
def test_every_solver_solves_the_example(family, name):
    mod = P.module(family)
    problem = mod.from_dict(P.example(family))
    solve = registry.solver(family, name)
    params = inspect.signature(solve).parameters
    assert {"time_limit", "seed"} <= set(params)
    r = solve(problem, time_limit=10, seed=0)
    assert isinstance(r, Result)
    assert r.solution is not None, (name, r.status, r.note)
    assert mod.check(problem, r.solution) == []
    assert r.objective == mod.objective(problem, r.solution)


@pytest.mark.parametrize("family,name", _solvers())
def test_every_solver_takes_a_limit_beyond_max_seconds(family, name):
    """A finite limit over ``models.deadline.MAX_SECONDS`` is no limit to every solver
    (``solve --time-limit 1e12`` is accepted): none may meet it as a number it cannot
    hold, nor as a limit its deadline reads as none."""
    problem = P.module(family).from_dict(P.example(family))
    r = registry.solver(family, name)(problem, time_limit=1e12, seed=0)
    assert isinstance(r, Result) and r.solution is not None, (name, r.status, r.note)


@pytest.mark.parametrize("family,name", _solvers())
def test_every_solver_answers_a_zero_time_limit(family, name):
    """``--time-limit 0`` (accepted by the option) stops every solver at once with an
    answer: a solution when it has one (OPTIMAL only when proved), else UNKNOWN, never an
    error."""
    mod = P.module(family)
    problem = mod.from_dict(P.example(family))
    r = registry.solver(family, name)(problem, time_limit=0, seed=0)
    assert isinstance(r, Result)
    if r.solution is None:
        assert r.status.value in ("UNKNOWN", "INFEASIBLE"), (name, r.status)
    else:
        assert mod.check(problem, r.solution) == []


def test_ensure_feasible_raises_the_violations():
    mod = P.module("kresource_epochs")
    problem = mod.from_dict(P.example("kresource_epochs"))
    assert mod.check(problem, [[0, 1, 2, 3]])  # one epoch over both capacities
    with pytest.raises(P.Infeasible) as e:
        P.ensure_feasible(problem, [[0, 1, 2, 3]])
    assert e.value.violations == mod.check(problem, [[0, 1, 2, 3]])
    assert isinstance(e.value, ValueError) and "capacity" in str(e.value)
    P.ensure_feasible(problem, [[0], [1], [2], [3]])
    with pytest.raises(ValueError, match="unknown problem family"):
        P.module("nope")
