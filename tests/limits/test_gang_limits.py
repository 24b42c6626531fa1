"""Gang schedule models obey their time limit and refuse what cannot fit."""

from __future__ import annotations

import time

import pytest

from models import gang_schedule as mg
from sim.problems import gang_schedule as gs
from sim.result import Status


@pytest.mark.parametrize("objective", ["rows", "weighted"])
@pytest.mark.parametrize("name", ["cpsat", "ilp"])
def test_medium_instance_stops_at_the_limit(name: str, objective: str) -> None:
    p = gs.random_problem(1, n_nodes=128, n_jobs=250, objective=objective)
    solve = mg.solve_cpsat if name == "cpsat" else mg.solve_ilp
    t = time.perf_counter()
    r = solve(p, time_limit=0.5)
    assert time.perf_counter() - t < 2.5
    assert r.status is Status.FEASIBLE
    assert gs.check(p, r.solution) == []
    assert r.bound is not None and r.bound <= r.objective


@pytest.mark.untimed
def test_ilp_refuses_a_model_that_cannot_fit() -> None:
    p = gs.random_problem(1, n_nodes=256, n_jobs=500)
    with pytest.raises(ValueError,
                       match="gang_schedule ilp: field 'jobs' gives 250000 row-assignment"):
        mg.solve_ilp(p, time_limit=1.0)


def test_coloring_of_5000_jobs_stops_at_the_limit() -> None:
    from heuristics.gang_schedule import coloring

    # about 3e6 conflict pairs: networkx's graph of them took 7-11 s and 1.5 GB
    p = gs.random_problem(1, n_nodes=256, n_jobs=5000)
    t = time.perf_counter()
    r = coloring(p, time_limit=1.0)
    assert time.perf_counter() - t < 3.0  # the limit + 2 s
    assert r.status in (Status.FEASIBLE, Status.UNKNOWN)
    if r.status is Status.FEASIBLE:
        assert gs.check(p, r.solution) == []


@pytest.mark.untimed
@pytest.mark.parametrize("seed", range(8))
def test_largest_first_without_the_graph_is_networkx(seed: int) -> None:
    from heuristics.gang_schedule import _largest_first, _networkx_coloring

    p = gs.random_problem(seed, n_nodes=20 + seed, n_jobs=60, width=(1, 1 + seed))
    assert _largest_first(p, None) == _networkx_coloring(p, "largest_first")
    deg = [0] * len(p.jobs)
    for i, j in gs.conflicts(p):
        deg[i] += 1
        deg[j] += 1
    assert gs.degrees(p) == deg


def test_check_of_a_million_nodes_reads_only_the_rows_nodes() -> None:
    jobs = tuple(gs.GangJob(f"J{i}", (0,), (1,)) for i in range(200))
    p = gs.GangProblem(gs.MAX_NODES, 10, jobs, (0,) * gs.MAX_NODES, 200)
    rows = [[j.name] for j in jobs]
    t = time.process_time()
    assert gs.check(p, rows) == []
    assert gs.check(p, [["J0", "J1"]] + rows[2:]) == ["row 0: 2 tasks on node 0"]
    assert time.process_time() - t < 2.0  # CPU s


@pytest.mark.untimed
def test_networkx_strategies_refuse_a_huge_graph_by_field() -> None:
    from heuristics.gang_schedule import coloring

    p = gs.random_problem(1, n_nodes=64, n_jobs=2001)
    with pytest.raises(ValueError, match="field 'jobs' holds 2001 jobs"):
        coloring(p, strategy="smallest_last")


def test_ilp_counts_its_variables_before_listing_them() -> None:
    # 2,000 jobs x 2,000 rows: 4e6 keys were listed (and the conflict pairs formed)
    # before the refusal
    p = gs.random_problem(1, n_nodes=256, n_jobs=2000)
    t = time.perf_counter()
    with pytest.raises(ValueError, match="field 'jobs' gives 4000000 row-assignment"):
        mg.solve_ilp(p, time_limit=1.0)
    assert time.perf_counter() - t < 2.0


@pytest.mark.untimed
def test_exact_models_refuse_by_this_familys_field() -> None:
    p = gs.random_problem(1, n_nodes=64, n_jobs=3000)
    with pytest.raises(ValueError, match="gang_schedule cpsat: field 'jobs' holds 3000 jobs"):
        mg.solve_cpsat(p, time_limit=1.0)
    with pytest.raises(ValueError, match="gang_schedule brute: field 'jobs' holds 3000 jobs"):
        mg.solve_brute(p, time_limit=1.0)


@pytest.mark.untimed
def test_more_jobs_than_the_family_accepts_are_refused_by_field() -> None:
    jobs = [{"nodes": [0], "mem": 1}] * (gs.MAX_JOBS + 1)
    with pytest.raises(ValueError, match=f"field 'jobs' holds {gs.MAX_JOBS + 1} jobs"):
        gs.from_dict({"problem": "gang_schedule", "n_nodes": 1, "mem": 2, "jobs": jobs})
