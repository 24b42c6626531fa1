"""Combinations of exact solvers (``models.portfolio``; ``--solver cpsat+scip``): they
agree with brute force on small random instances of several families, keep the best
solution and the best bound of all members (a bound beyond any member's solution is
dropped and said), are OPTIMAL only when that bound meets that solution, and are named
like registered solvers in the registry, the CLI and the bench."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import random_kresource

from models import gang_schedule, grouping, portfolio, slots, task_mapping
from models.kresource import brute as kbrute
from models.slack_insertion.brute import solve_brute as slack_brute
from sim import registry
from sim.problems import Family
from sim.problems import gang_schedule as gs
from sim.problems import grouping as gp
from sim.problems import insertion as ins
from sim.problems import slots as sp
from sim.problems import task_mapping as tm
from sim.result import Result, Status

ROOT = Path(__file__).resolve().parents[2]
SLACK = registry.problem_family("slack_insertion")
SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"


def _cases():
    """(family, combination, problem, brute) on small random instances."""
    rng = random.Random(2424)
    out = []
    for s in range(2):
        out.append(("slack_insertion", "cpsat+scip", ins.random_problem(300 + s, 4),
                    slack_brute))
        out.append(("grouping", "cpsat+highs" if s else "exact-cpsat+highs",
                    gp.random_problem(6, 4, seed=310 + s, max_procs=3), grouping.solve_exhaustive))
        out.append(("kresource_selection", "scip+cpsat", random_kresource.selection(rng, max_n=8),
                    kbrute.solve_selection))
        out.append(("kresource_response", "cpsat+highs+scip", random_kresource.response(rng),
                    kbrute.solve_response))
        out.append(("task_mapping", "highs+cpsat",
                    tm.random_problem(4, 3, 320 + s, sizes=(1, 2),
                                      objective="max" if s else "overload", mem_pages=20000),
                    task_mapping.solve_brute))
        out.append(("gang_schedule", "cpsat+scip",
                    gs.random_problem(330 + s, n_nodes=5, n_jobs=5, width=(1, 3),
                                      objective="rows" if s else "weighted", weights=(1, 3)),
                    gang_schedule.solve_brute))
        out.append(("slot_assignment", "scip+cpsat",
                    sp.random_problem(340 + s, n_nodes=4, n_apps=3, n_slots=4, free=0,
                                      nodes_range=(1, 3), demand_range=(1, 2),
                                      objective="round" if s else "gap"),
                    slots.solve_brute))
    return out


CASES = _cases()


@pytest.mark.parametrize("case", range(len(CASES)),
                         ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_a_combination_agrees_with_brute_force(case):
    family, name, p, brute = CASES[case]
    ref = brute(p)
    r = registry.solver(family, name)(p, time_limit=20.0)
    assert r.solver == name
    if ref.status is Status.INFEASIBLE:
        assert r.status is Status.INFEASIBLE
        return
    assert ref.status is Status.OPTIMAL
    assert r.status is Status.OPTIMAL, r.note
    assert r.objective == pytest.approx(ref.objective, rel=1e-6, abs=1e-6)
    assert r.bound == pytest.approx(r.objective, rel=1e-6, abs=1e-6)


def test_the_first_member_proving_optimality_ends_the_run(monkeypatch):
    calls = []
    real = Family.solver

    def spy(family, name):
        fn = real(family, name)
        return lambda *a, **k: (calls.append(name), fn(*a, **k))[1]

    monkeypatch.setattr(Family, "solver", spy)
    p = ins.random_problem(301, 3)
    r = portfolio.solve(p, members=("cpsat", "scip"), time_limit=20.0)
    assert r.status is Status.OPTIMAL
    assert calls == ["cpsat"]


# ----------------------------------------------------------- combining members' results
def _member(p, solution, status, bound, name="x"):
    obj = ins.objective(p, solution)
    return Result(name, status, obj, bound, 0.1, solution)


def _two_schedules():
    """A small insertion problem, its optimum and a worse feasible schedule."""
    for seed in range(400, 440):
        p = ins.random_problem(seed, 4)
        opt = slack_brute(p)
        cur = ins.current_schedule(p)
        if ins.objective(p, cur) > opt.objective + 1.0:
            return p, opt.solution, cur, opt.objective
    raise AssertionError("no instance with a worse current schedule")


def test_best_solution_of_one_and_best_bound_of_another_make_a_proof():
    p, opt, cur, value = _two_schedules()
    a = _member(p, opt, Status.FEASIBLE, value - 50.0, "a")  # best schedule, weak bound
    b = _member(p, cur, Status.FEASIBLE, value, "b")  # worse schedule, tight bound
    r = portfolio.combine(SLACK, p, "a+b", [("a", a), ("b", b)], runtime=0.2,
                          seed=0, params={})
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(value) and r.bound == pytest.approx(value)
    assert r.solution == opt


def test_a_bound_beyond_another_members_solution_is_dropped_and_said():
    p, opt, cur, value = _two_schedules()
    # b claims OPTIMAL for the worse schedule: its bound is above a's schedule
    a = _member(p, opt, Status.FEASIBLE, value - 50.0, "a")
    b = _member(p, cur, Status.OPTIMAL, ins.objective(p, cur), "b")
    r = portfolio.combine(SLACK, p, "a+b", [("a", a), ("b", b)], runtime=0.2,
                          seed=0, params={})
    assert r.status is Status.FEASIBLE
    assert r.objective == pytest.approx(value)
    assert r.bound == pytest.approx(value - 50.0)
    assert "of b dropped" in r.note
    assert r.gap is not None and r.gap > 0


def test_a_certified_gap_is_never_claimed_optimal():
    p, opt, cur, value = _two_schedules()
    a = _member(p, cur, Status.FEASIBLE, value - 10.0, "a")
    b = _member(p, cur, Status.FEASIBLE, value - 20.0, "b")
    r = portfolio.combine(SLACK, p, "a+b", [("a", a), ("b", b)], runtime=0.2,
                          seed=0, params={})
    assert r.status is Status.FEASIBLE and r.bound == pytest.approx(value - 10.0)


def test_infeasible_only_when_no_member_has_a_solution():
    p, opt, cur, value = _two_schedules()
    inf = Result("a", Status.INFEASIBLE, None, None, 0.1, None)
    unk = Result("b", Status.UNKNOWN, None, None, 0.1, None)
    r = portfolio.combine(SLACK, p, "a+b", [("a", inf), ("b", unk)],
                          runtime=0.2, seed=0, params={})
    assert r.status is Status.INFEASIBLE
    b = _member(p, opt, Status.OPTIMAL, value, "b")
    r = portfolio.combine(SLACK, p, "a+b", [("a", inf), ("b", b)], runtime=0.2,
                          seed=0, params={})
    assert r.status is Status.OPTIMAL and "a said INFEASIBLE" in r.note


def test_maximisation_keeps_the_largest_solution_and_the_smallest_upper_bound():
    rng = random.Random(5)
    while True:
        p = random_kresource.selection(rng, max_n=8)
        ref = kbrute.solve_selection(p)
        if ref.status is Status.OPTIMAL and ref.objective > 0:
            break
    worse = Result("a", Status.FEASIBLE, 0.0, ref.objective + 3, 0.1, [])
    best = replace(ref, status=Status.FEASIBLE, bound=ref.objective + 1, solver="b")
    r = portfolio.combine(registry.problem_family("kresource_selection"), p, "a+b",
                          [("a", worse), ("b", best)], runtime=0.2, seed=0, params={})
    assert r.objective == pytest.approx(ref.objective)
    assert r.bound == pytest.approx(ref.objective + 1)
    assert r.status is Status.FEASIBLE


@pytest.mark.timed
def test_a_stopped_combination_on_a_hard_snapshot_is_a_certificate():
    """Best solution and best bound of the members; every member's objective on the
    right side of the bound; within the limit."""
    p = ins.from_dict(json.loads((SNAPSHOTS / "kth-1997-02-insert-13315532-k30.json")
                                 .read_text()))
    limit = 3.0
    r = registry.solver("slack_insertion", "cpsat+scip")(p, time_limit=limit)
    assert r.runtime <= limit + 2.0
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert r.params["members"] == ["cpsat", "scip"]
    if r.bound is not None:
        assert r.bound <= r.objective + 1e-6 * max(1.0, abs(r.objective))


# ------------------------------------------------------------------ names and the CLI
def test_combination_names_are_checked_like_solver_names():
    assert registry.has_solver("slack_insertion", "cpsat+scip")
    assert registry.has_solver("grouping", "exact-cpsat+cbc")
    assert registry.has_solver("grouping", "cpsat+scip")  # cpsat: grouping's exact-cpsat
    assert not registry.has_solver("slack_insertion", "cpsat+gurobi")
    assert not registry.has_solver("slot_placement", "exhaustive+scip")  # no ILP
    with pytest.raises(ValueError, match="unknown combination member 'gurobi'"):
        registry.solver("slack_insertion", "cpsat+gurobi")
    with pytest.raises(ValueError, match="repeats a member"):
        registry.solver("slack_insertion", "cpsat+cpsat")
    from sim.sweep.bench import check_solvers, solver_kind

    check_solvers(["cpsat+scip"], [SLACK])
    assert solver_kind(SLACK, "cpsat+scip") == "exact"
    with pytest.raises(ValueError, match="unknown solver 'cpsat\\+gurobi'"):
        check_solvers(["cpsat+gurobi"], [SLACK])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def test_the_cli_runs_a_combination_and_refuses_a_bad_one(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(ins.random_problem(302, 3).to_dict()))
    out = _cli("solve", str(path), "--solver", "cpsat+highs", "--time-limit", "20", "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["solver"] == "cpsat+highs" and d["status"] == "OPTIMAL"
    bad = _cli("solve", str(path), "--solver", "cpsat+gurobi")
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1 and "gurobi" in bad.stderr


# ------------------------------------------------------------- slack-optimal's inserter
def test_slack_optimal_with_a_combination_keeps_promises_and_proves_every_insertion():
    """``solver="cpsat+scip"``: CP-SAT proves these small insertions first, so the
    schedule is CP-SAT's; ``"scip+cpsat"`` runs SCIP first: a valid schedule, every
    insertion proved, at least as cheap as the AST order's."""
    import numpy as np
    from strategies import small_random_workload

    from heuristics.slack import solve as solve_order
    from models.slack_insertion.policy import OptimalInsertionPolicy
    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    w = small_random_workload(5, n=14, gap=90)
    base = simulate(w, OptimalInsertionPolicy(sf=1.0, awt=200.0))
    pol = registry.make_policy("slack-optimal", sf=1.0, awt=200.0, solver="cpsat+scip",
                               check=True)
    a = simulate(w, pol)
    validate(a)
    assert np.array_equal(a.start, base.start)
    pol = OptimalInsertionPolicy(sf=1.0, awt=200.0, solver="scip+cpsat", check=True,
                                 record=True)
    validate(simulate(w, pol))
    st = pol.inserter.stats
    assert st["OPTIMAL"] + st["trivial"] == pol.n_insert + pol.n_remove
    for pb in pol.snapshots[:10]:
        mine = portfolio.solve(pb, members=("scip", "cpsat"))
        assert mine.objective <= solve_order(pb, order="AST").objective + 1e-6 * max(
            1.0, abs(mine.objective))


def test_slack_optimal_refuses_a_heuristic_or_unknown_solver():
    from models.slack_insertion.policy import OptimalInsertionPolicy

    for bad in ("AST", "cpsat+gurobi", "nothing"):
        with pytest.raises(ValueError, match="exact insertion solver"):
            OptimalInsertionPolicy(solver=bad)


def test_the_bench_runs_a_combination(tmp_path):
    from sim.sweep.bench import bench

    path = tmp_path / "in" / "p.json"
    path.parent.mkdir()
    path.write_text(json.dumps(ins.random_problem(303, 3).to_dict()))
    summary = bench([path.parent], tmp_path / "out", solvers=["cpsat+scip"], time_limit=20.0,
                    progress=False)
    assert [(r["solver"], r["status"]) for r in summary.runs] == [("cpsat+scip", "OPTIMAL")]
