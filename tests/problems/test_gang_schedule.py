"""Memory-feasible gang schedule (spec 3.8 M7): exact models agree, heuristic never beats
a proved optimum, the checker refuses bad rows, bad input names its field."""

from __future__ import annotations

import json

import pytest

from heuristics.gang_schedule import coloring
from models import gang_schedule as m
from sim.problems import ensure_feasible
from sim.problems import gang_schedule as gs
from sim.result import Status


def _small(seed: int, objective: str) -> gs.GangProblem:
    return gs.random_problem(seed, n_nodes=6, n_jobs=6, width=(1, 3), objective=objective,
                             weights=(1, 5), task_mem=(10, 90))


@pytest.mark.parametrize("objective", ["rows", "weighted"])
@pytest.mark.parametrize("seed", range(6))
def test_exact_models_agree_with_brute_force(seed: int, objective: str) -> None:
    p = _small(seed, objective)
    brute = m.solve_brute(p)
    assert brute.status is Status.OPTIMAL
    for r in (m.solve_cpsat(p, time_limit=20), m.solve_ilp(p, time_limit=20)):
        assert r.status is Status.OPTIMAL, r
        assert r.objective == pytest.approx(brute.objective)
        assert gs.check(p, r.solution) == []
    h = coloring(p)
    assert h.status is Status.FEASIBLE
    assert h.objective >= brute.objective - 1e-9
    assert gs.lower_bound(p) <= brute.objective + 1e-9


def test_weighted_optimum_orders_rows_and_beats_plain_colouring() -> None:
    # a path A - B - C on nodes {0,1}, {1,2}, {2,3}; B heavy: B alone in row 1 is best
    p = gs.from_dict({"problem": "gang_schedule", "n_nodes": 4, "mem": 10,
                      "objective": "weighted",
                      "jobs": [{"name": "A", "nodes": [0, 1], "mem": 3},
                               {"name": "B", "nodes": [1, 2], "mem": 3, "weight": 5},
                               {"name": "C", "nodes": [2, 3], "mem": 3}]})
    r = m.solve_cpsat(p)
    assert r.status is Status.OPTIMAL
    assert r.solution == [["B"], ["A", "C"]]
    assert r.objective == 5 * 1 + 1 * 2 + 1 * 2
    assert m.solve_ilp(p).objective == r.objective


def test_json_round_trip_and_registry() -> None:
    from sim import registry

    p = _small(1, "weighted")
    q = gs.from_dict(json.loads(json.dumps(p.to_dict())))
    assert q == p
    assert registry.PROBLEM_LOADERS["gang_schedule"].endswith(":from_dict")
    assert set(registry.SOLVERS["gang_schedule"]) == {"cpsat", "ilp", "brute", "coloring"}


def test_check_rejects_shared_node_overflow_and_missing_job() -> None:
    p = gs.from_dict({"problem": "gang_schedule", "n_nodes": 3, "mem": 10, "max_rows": 5,
                      "local_mem": [0, 4, 0],
                      "jobs": [{"name": "A", "nodes": [0, 1], "mem": [3, 6]},
                               {"name": "B", "nodes": [1, 2], "mem": 2}]})
    assert gs.check(p, [["A"], ["B"]]) == []
    with pytest.raises(ValueError, match="2 tasks on node 1"):
        ensure_feasible(p, [["A", "B"]])
    with pytest.raises(ValueError, match="without a row"):
        ensure_feasible(p, [["A"]])
    with pytest.raises(ValueError, match="empty"):
        ensure_feasible(p, [["A"], [], ["B"]])


BASE = {"problem": "gang_schedule", "n_nodes": 4, "mem": 10,
        "jobs": [{"nodes": [0, 1], "mem": 3}]}


@pytest.mark.parametrize("patch, field", [
    ({"mem": 0}, "'mem'"),
    ({"mem": -5}, "'mem'"),
    ({"jobs": [{"nodes": [0, 1], "mem": 0}]}, "jobs[0].mem"),
    ({"jobs": [{"nodes": [0, 1], "mem": [3, -1]}]}, "jobs[0].mem[1]"),
    ({"jobs": [{"nodes": [0, 1, 2, 3, 0], "mem": 3}]}, "jobs[0].nodes"),
    ({"jobs": [{"nodes": [0, 1], "mem": 11}]}, "jobs[0].mem"),
    ({"local_mem": [0, 8, 0, 0]}, "jobs[0].mem"),
    ({"jobs": [{"nodes": [0, 7], "mem": 3}]}, "jobs[0].nodes"),
])
def test_bad_input_is_a_one_line_error_naming_the_field(patch: dict, field: str) -> None:
    with pytest.raises(ValueError) as e:
        gs.from_dict({**BASE, **patch})
    msg = str(e.value)
    assert field in msg and "\n" not in msg


def test_wider_than_cluster_says_so() -> None:
    with pytest.raises(ValueError, match="wider than the cluster"):
        gs.from_dict({**BASE, "jobs": [{"nodes": [0, 1, 2, 3, 4], "mem": 1}]})


def _resident(seed: int, objective: str) -> gs.GangProblem:
    """A tiny instance under eq. 4's reading; every other seed has a node over mem."""
    import dataclasses

    p = gs.random_problem(seed, n_nodes=5, n_jobs=6, width=(1, 3), objective=objective,
                          weights=(1, 5), task_mem=(10, 45), mem=100)
    return dataclasses.replace(p, memory="resident")


@pytest.mark.parametrize("objective", ["rows", "weighted"])
@pytest.mark.parametrize("seed", range(8))
def test_resident_reading_agrees_with_brute_force(seed: int, objective: str) -> None:
    import dataclasses

    p = _resident(seed, objective)
    brute = m.solve_brute(p)
    over = gs.resident_overload(p)
    row = m.solve_brute(dataclasses.replace(p, memory="row"))
    if over:  # no assignment of rows fits eq. 4's sum on that node
        assert brute.status is Status.INFEASIBLE
    else:  # the sum fits on every node: the schedules of the row reading
        assert brute.status is Status.OPTIMAL
        assert brute.objective == pytest.approx(row.objective)
    for r in (m.solve_cpsat(p, time_limit=20), m.solve_ilp(p, time_limit=20)):
        assert r.status is brute.status, r
        if brute.status is Status.OPTIMAL:
            assert r.objective == pytest.approx(brute.objective)
            assert gs.check(p, r.solution) == []
    h = coloring(p)
    assert h.status is (Status.INFEASIBLE if over else Status.FEASIBLE)


def test_resident_reading_is_reached_by_both_outcomes_and_round_trips() -> None:
    outcomes = {bool(gs.resident_overload(_resident(s, "rows"))) for s in range(8)}
    assert outcomes == {True, False}  # the brute-force test covers both
    p = _resident(0, "rows")
    q = gs.from_dict(json.loads(json.dumps(p.to_dict())))
    assert q == p and q.memory == "resident"
    assert "memory" not in gs.random_problem(0).to_dict()  # the default is left out


def test_checker_counts_every_resident_task_under_eq4() -> None:
    # A and B share no node, so under "row" one row holds both; C and A share node 0 and
    # sit in different rows. Under "resident", node 0 holds A + C = 12 pages > 10.
    d = {"problem": "gang_schedule", "n_nodes": 2, "mem": 10,
         "jobs": [{"name": "A", "nodes": [0], "mem": 6}, {"name": "B", "nodes": [1], "mem": 6},
                  {"name": "C", "nodes": [0], "mem": 6}]}
    rows = [["A", "B"], ["C"]]
    assert gs.check(gs.from_dict(d), rows) == []
    res = gs.from_dict({**d, "memory": "resident"})
    assert any("node 0 holds 12 resident pages" in v for v in gs.check(res, rows))
    assert gs.resident_overload(res) == [(0, 12)]
    with pytest.raises(ValueError, match="memory"):
        gs.from_dict({**d, "memory": "all"})
