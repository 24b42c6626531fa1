"""Every ILP on every MIP backend (``models.mip``): agreement with brute force and with
each other on random small instances of every family, honest statuses after a tiny time
limit, and no bound beyond any feasible solution found by any solver."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import random_kresource

from models import gang_schedule, grouping, mip, slots, task_mapping
from models.kresource import brute as kbrute
from models.kresource import ilp as kilp
from models.slack_insertion.brute import solve_brute as slack_brute
from models.slack_insertion.ilp import solve_ilp as slack_ilp
from sim.problems import gang_schedule as gs
from sim.problems import grouping as gp
from sim.problems import insertion as ins
from sim.problems import slots as sp
from sim.problems import task_mapping as tm
from sim.problems.kresource import EpochProblem, ResponseProblem
from sim.result import Status

BACKENDS = mip.BACKENDS
SNAPSHOTS = Path(__file__).resolve().parents[2] / "instances" / "data" / "slack_snapshots"


def _epochs(rng: random.Random) -> EpochProblem:
    K = rng.randint(1, 3)
    cap = tuple(rng.randint(8, 20) for _ in range(K))
    return EpochProblem(cap, tuple(tuple(rng.randint(1, max(1, c // 3)) for c in cap)
                                   for _ in range(rng.randint(4, 8))))


def _cases():
    """(family, problem, ilp(problem, backend), brute(problem)) on small random instances."""
    rng = random.Random(24)
    out = []
    for s in range(3):
        p = ins.random_problem((100, 104, 102)[s], 4 if s < 2 else 3)
        out.append(("slack_insertion", p, lambda p, b: slack_ilp(p, backend=b), slack_brute))
        p = gp.random_problem(7, 4, seed=200 + s, max_procs=3, slices=None if s else 3)
        out.append(("grouping", p, lambda p, b: grouping.solve_ilp(p, backend=b),
                    grouping.solve_exhaustive))
        out.append(("kresource_epochs", _epochs(rng),
                    lambda p, b: kilp.solve_epochs(p, backend=b), kbrute.solve_epochs))
        out.append(("kresource_selection", random_kresource.selection(rng),
                    lambda p, b: kilp.solve_selection(p, backend=b), kbrute.solve_selection))
        out.append(("kresource_response", random_kresource.response(rng),
                    lambda p, b: kilp.solve_response(p, backend=b), kbrute.solve_response))
        p = tm.random_problem(4, 3, 300 + s, sizes=(1, 2), objective="max" if s else "overload",
                              mem_pages=20000)
        out.append(("task_mapping", p, lambda p, b: task_mapping.solve_ilp(p, backend=b),
                    task_mapping.solve_brute))
        p = gs.random_problem(400 + s, n_nodes=5, n_jobs=6, width=(1, 3),
                              objective="rows" if s else "weighted", weights=(1, 3))
        out.append(("gang_schedule", p, lambda p, b: gang_schedule.solve_ilp(p, backend=b),
                    gang_schedule.solve_brute))
        p = sp.random_problem(500 + s, n_nodes=4, n_apps=3, n_slots=4, free=0,
                              nodes_range=(1, 3), demand_range=(1, 2),
                              objective="round" if s else "gap")
        out.append(("slot_assignment", p, lambda p, b: slots.solve_ilp(p, backend=b),
                    slots.solve_brute))
    return out


CASES = _cases()


@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_every_backend_agrees_with_brute_force(case):
    _family, p, solve, brute = CASES[case]
    ref = brute(p)
    assert ref.status in (Status.OPTIMAL, Status.INFEASIBLE)
    for backend in BACKENDS:
        r = solve(p, backend)
        assert r.params.get("backend") == backend
        if ref.status is Status.INFEASIBLE:
            assert r.status is Status.INFEASIBLE, backend
            continue
        assert r.status is Status.OPTIMAL, (backend, r.note)
        assert r.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-6), backend
        assert r.bound == pytest.approx(r.objective, rel=1e-6, abs=1e-6), backend


@pytest.mark.parametrize("solve", [
    lambda b: slack_ilp(ins.random_problem(1, 3), backend=b),
    lambda b: grouping.solve_ilp(gp.random_problem(4, 2, seed=1), backend=b),
    lambda b: kilp.solve_epochs(_epochs(random.Random(1)), backend=b),
    lambda b: kilp.solve_selection(random_kresource.selection(random.Random(1)), backend=b),
    lambda b: kilp.solve_response(random_kresource.response(random.Random(1)), backend=b),
    lambda b: task_mapping.solve_ilp(tm.random_problem(4, 2, 1, sizes=(1,)), backend=b),
    lambda b: gang_schedule.solve_ilp(gs.random_problem(1, n_nodes=4, n_jobs=3,
                                                                width=(1, 2)), backend=b),
    lambda b: slots.solve_ilp(sp.random_problem(1, n_nodes=4, n_apps=2, n_slots=4, free=0,
                                                nodes_range=(1, 2), demand_range=(1, 1)),
                              backend=b),
], ids=["slack", "grouping", "epochs", "selection", "response", "task_mapping", "gang",
        "slots"])
def test_an_unknown_backend_is_refused_naming_the_valid_ones(solve):
    with pytest.raises(ValueError, match="unknown MIP backend 'gurobi'.*cbc, highs, scip"):
        solve("gurobi")


def _honest(r, limit: float, sense: str = "min") -> None:
    assert r.runtime <= limit + 2.5, (r.solver, r.params.get("backend"), r.runtime)
    if r.status is Status.OPTIMAL:
        assert r.bound == pytest.approx(r.objective, rel=1e-6, abs=1e-6)
    if r.bound is not None and r.objective is not None:
        tol = 1e-6 * max(1.0, abs(r.objective))
        assert (r.bound <= r.objective + tol) if sense == "min" else \
            (r.bound >= r.objective - tol)


def _no_bound_beyond_any_solution(results) -> None:
    objectives = [r.objective for r in results if r.objective is not None]
    for r in results:
        if r.bound is None:
            continue
        for v in objectives:
            assert r.bound <= v + 1e-6 * max(1.0, abs(v)), (r.params.get("backend"), r.bound, v)


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_hard_insertion_snapshot_after_a_short_limit():
    """A 30-job KTH snapshot none of the backends proves in 2 s: FEASIBLE (or a proof),
    within the limit, no bound above any backend's schedule (or CP-SAT's)."""
    from models.slack_insertion.cpsat import solve_cpsat

    path = SNAPSHOTS / "kth-1997-02-insert-13315532-k30.json"
    p = ins.from_dict(json.loads(path.read_text()))
    results = []
    for backend in BACKENDS:
        r = slack_ilp(p, time_limit=2.0, backend=backend)
        _honest(r, 2.0)
        assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
        results.append(r)
    results.append(solve_cpsat(p, time_limit=2.0))
    _no_bound_beyond_any_solution(results)


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_task_mapping_after_a_tiny_limit_keeps_bounds_below_every_mapping():
    p = tm.random_problem(16, 14, 7, objective="max")
    results = []
    for backend in BACKENDS:
        r = task_mapping.solve_ilp(p, time_limit=0.5, backend=backend)
        _honest(r, 0.5)
        results.append(r)
    results.append(task_mapping.solve_cpsat(p, time_limit=0.5))
    _no_bound_beyond_any_solution(results)


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_kresource_response_after_a_tiny_limit_is_never_falsely_optimal():
    rng = random.Random(11)
    q = random_kresource.response(rng)
    p = ResponseProblem(q.capacity, tuple(rng.randint(0, 30) for _ in range(30)),
                        tuple(rng.randint(1, 6) for _ in range(30)),
                        tuple(tuple(rng.randint(1, c) for c in q.capacity)
                              for _ in range(30)),
                        tuple(rng.randint(1, 3) for _ in range(30)))
    results = []
    for backend in BACKENDS:
        r = kilp.solve_response(p, time_limit=0.3, backend=backend)
        _honest(r, 0.3)
        results.append(r)
    _no_bound_beyond_any_solution(results)


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_no_time_left_after_building_is_an_honest_answer():
    """A limit that leaves nothing after model building: no backend claims a proof."""
    path = SNAPSHOTS / "kth-1996-11-insert-4849172-k29.json"
    p = ins.from_dict(json.loads(path.read_text()))
    for backend in BACKENDS:
        r = slack_ilp(p, time_limit=0.05, backend=backend)
        assert r.status in (Status.FEASIBLE, Status.UNKNOWN), backend
        assert r.runtime <= 0.05 + 2.5


def test_the_registered_ilp_of_every_family_takes_the_backend_keyword():
    import inspect

    from sim import registry

    for family, name in mip.ILP_SOLVERS.items():
        fn = registry.solver(family, name)
        param = inspect.signature(fn).parameters["backend"]
        assert param.kind is inspect.Parameter.KEYWORD_ONLY and param.default == "cbc"


def test_a_solution_violating_the_model_is_rejected_not_proved():
    """On this k = 21 KTH snapshot SCIP (OR-Tools 9.15) reports as optimal a schedule
    whose values violate equality rows by 0.25 and whose price is below the optimum
    CBC and HiGHS prove; the row check rejects it: never OPTIMAL with it."""
    path = SNAPSHOTS / "kth-1996-11-remove-4857519-k21.json"
    p = ins.from_dict(json.loads(path.read_text()))
    r = slack_ilp(p, time_limit=20.0, backend="scip")
    assert r.status is not Status.OPTIMAL or r.objective == pytest.approx(-918530.6118968152)
    if r.status is Status.FEASIBLE and r.bound is None:
        assert "rejected" in r.note or "no schedule" in r.note


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_no_time_left_after_translation_solves_nothing(backend):
    import pulp

    prob = pulp.LpProblem("t", pulp.LpMinimize)
    x = prob.add_variable("x", lowBound=0, upBound=3, cat="Integer")
    prob += x
    prob += x >= 1.5
    assert mip.solve(prob, backend=backend, time_limit=0.0) is False
    assert x.varValue is None
    assert mip.solve(prob, backend=backend, time_limit=5.0) is True
    assert prob.sol_status == pulp.LpSolutionOptimal and x.varValue == 2.0
    assert mip.bound(prob) == pytest.approx(2.0)


def test_maximisation_bounds_are_upper_bounds():
    import pulp

    for backend in BACKENDS:
        prob = pulp.LpProblem("t", pulp.LpMaximize)
        xs = [prob.add_variable(f"x{i}", lowBound=0, upBound=1, cat="Binary") for i in range(4)]
        prob += pulp.lpSum((i + 1) * v for i, v in enumerate(xs)) + 10
        prob += pulp.lpSum(xs) <= 2
        assert mip.solve(prob, backend=backend, time_limit=10.0)
        assert prob.sol_status == pulp.LpSolutionOptimal
        assert pulp.value(prob.objective) == pytest.approx(17.0)
        assert backend == "cbc" or mip.bound(prob) == pytest.approx(17.0)
