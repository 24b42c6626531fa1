"""A problem family resolved once: ``sim.registry.problem_family`` at the edge,
``sim.problems.Family`` below (the solve CLI, bench, the portfolio, verify)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from processes import fresh_python

from sim import registry
from sim.cli import main
from sim.problems import Family, example
from sim.result import InvalidResult, Result, Status, verify


def test_a_family_holds_its_tables_once():
    fam = registry.problem_family("grouping")
    assert isinstance(fam, Family) and fam is registry.problem_family("grouping")
    assert fam.name == "grouping" and fam.sense == "min" and fam.ilp == "exact-ilp"
    assert fam.default_solver == registry.DEFAULT_SOLVERS["grouping"]
    assert dict(fam.solvers) == registry.SOLVERS["grouping"]
    assert registry.problem_family("kresource_selection").sense == "max"
    assert registry.problem_family("slot_placement").ilp is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        fam.name = "other"
    with pytest.raises(TypeError):
        fam.solvers["mine"] = "x:y"  # a read-only view of the registry's table


def test_the_solver_lookups_are_the_familys():
    fam = registry.problem_family("slack_insertion")
    assert fam.solver("AST") is registry.solver("slack_insertion", "AST")
    assert fam.has_solver("cpsat+scip") and not fam.has_solver("cpsat+gurobi")
    assert fam.kind("cpsat") == "exact" and fam.kind("AST") == "heuristic"
    assert fam.foreign_target("cpsat") is None
    assert fam.foreign_target("heuristics.slack:solve_ast") == "heuristics.slack:solve_ast"
    with pytest.raises(ValueError, match="unknown solver 'nope' for problem 'slack_insertion'"):
        fam.solver("nope")


def test_an_unknown_family_is_refused_at_the_edge_with_a_hint():
    with pytest.raises(ValueError, match=r"unknown problem family 'task-mapping'; did you "
                                         r"mean 'task_mapping'\?"):
        registry.problem_family("task-mapping")
    data = {**example("task_mapping"), "problem": "task-mapping"}
    with pytest.raises(ValueError, match=r"^p\.json: field 'problem' = 'task-mapping' is "
                                         r"unknown; did you mean 'task_mapping'\?"):
        registry.problem_family(data, "p.json")
    fam, problem = registry.load(example("task_mapping"), "p.json")
    assert fam is registry.problem_family("task_mapping")
    assert type(problem).FAMILY == "task_mapping"


def test_building_every_family_imports_no_solver_library():
    code = ("import sys\nfrom sim import registry\n"
            "for f in sorted(registry.SOLVERS): registry.problem_family(f).module\n"
            "print([m for m in sys.modules if m.split('.')[0] in "
            "('ortools', 'pulp', 'highspy')])")
    assert fresh_python(code).strip() == "[]"


def test_verify_judges_by_the_family_it_is_given():
    fam = registry.problem_family("kresource_epochs")
    _, problem = registry.load(example("kresource_epochs"), "e.json")
    good = registry.solver("kresource_epochs", "fcfs")(problem)
    assert verify(problem, good, solver="fcfs", family=fam).objective == good.objective
    # a family whose sense is reversed: the heuristic's true bound is now on the wrong side
    flipped = dataclasses.replace(fam, sense="max")
    lower = Result("x", Status.FEASIBLE, good.objective, good.objective - 1, 0.0,
                   good.solution)
    assert verify(problem, lower, solver="x", family=fam).bound == good.objective - 1
    with pytest.raises(InvalidResult, match="wrong side"):
        verify(problem, lower, solver="x", family=flipped)


def test_one_solve_resolves_the_family_once_and_never_by_name_below(tmp_path, monkeypatch,
                                                                     capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(example("kresource_selection")))
    calls = []
    real = registry.problem_family

    def once(*args, **kwargs):
        calls.append(args[0] if isinstance(args[0], str) else "<file>")
        return real(*args, **kwargs)

    def by_name(*args, **kwargs):
        raise AssertionError(f"a family looked up by name below the edge: {args}")

    monkeypatch.setattr(registry, "problem_family", once)
    for name in ("solver", "has_solver", "default_solver", "load_problem", "is_foreign"):
        monkeypatch.setattr(registry, name, by_name)
    assert main(["solve", str(path)]) == 0
    assert "status: OPTIMAL" in capsys.readouterr().out
    assert calls == ["<file>"]
    assert main(["solve", str(path), "--solver", "ilp", "--backend", "cbc", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "OPTIMAL"
    assert calls == ["<file>", "<file>"]


def test_a_file_of_an_unknown_family_is_a_failed_run_naming_its_field(tmp_path):
    from sim.sweep.bench import bench

    d = tmp_path / "in"
    d.mkdir()
    (d / "a.json").write_text(json.dumps({**example("grouping"), "problem": "grupping"}))
    summary = bench([d], tmp_path / "out", solvers=["greedy"], time_limit=5, plots=False)
    [run] = summary.runs
    assert run["status"] == "FAILED" and run["family"] == "grupping"
    assert "field 'problem' = 'grupping' is unknown; did you mean 'grouping'?" in run["error"]


def test_an_optimum_of_a_whole_objective_is_proved_to_less_than_one_unit():
    """A relative tolerance of 1e-6 would let OPTIMAL stand with a gap of 5 units on a
    task mapping whose optimum is about 5e6 pages: a whole objective's gap must be below
    one unit (``sim.result.INTEGRAL_GAP``), however large the objective."""
    from sim.problems.task_mapping import TaskMapping
    from sim.result import INTEGRAL_GAP

    fam = registry.problem_family("task_mapping")
    assert fam.integral and registry.problem_family("kresource_response").integral
    problem = TaskMapping(2, 10**7, ((5_000_000,), (4_999_999,)), (0, 0), "max", "big")
    apart = [[0], [1]]
    value = fam.objective(problem, apart)
    assert value == 5_000_000
    close = Result("mine", Status.OPTIMAL, value, value - INTEGRAL_GAP, 0.0, apart)
    assert verify(problem, close, solver="mine", family=fam).status is Status.OPTIMAL
    gap = Result("mine", Status.OPTIMAL, value, value - 5, 0.0, apart)
    with pytest.raises(InvalidResult, match="OPTIMAL with a gap"):
        verify(problem, gap, solver="mine", family=fam)
    feasible = dataclasses.replace(gap, status=Status.FEASIBLE)
    assert verify(problem, feasible, solver="mine", family=fam).bound == value - 5
