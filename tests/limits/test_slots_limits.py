"""Slot assignment and slot placement solvers obey their time limit (issue 14 item 6)."""

from __future__ import annotations

import time

import pytest

from models.slots import solve_placement
from sim.problems import placement as pl
from sim.result import Status


@pytest.mark.parametrize(("S", "k"), [(5, 2), (8, 3), (9, 3), (10, 4), (12, 6)])
def test_lazy_placements_match_the_list(S: int, k: int) -> None:
    prob = pl.PlacementProblem(g_us=100, k=k, n_slots=S)
    assert list(pl.iter_placements(prob)) == pl.placements(prob)


def test_placement_stops_at_the_limit_with_the_best_so_far() -> None:
    prob = pl.PlacementProblem(g_us=100, n_slots=40, k=12)  # ~1.7e9 candidates
    t = time.perf_counter()
    r = solve_placement(prob, time_limit=0.5)
    assert time.perf_counter() - t < 1.5
    assert r.status is Status.FEASIBLE and r.bound is None
    assert r.params["evaluated"] >= 1 and r.params["classes"] is None
    assert r.objective == min(r.params["runtimes_us"].values())


def test_placement_without_limit_refuses_a_huge_enumeration() -> None:
    prob = pl.PlacementProblem(g_us=100, n_slots=40, k=12)
    with pytest.raises(ValueError, match="1676056044 candidate placements"):
        solve_placement(prob)


@pytest.mark.parametrize("seed", range(6))
def test_fast_largest_first_is_the_networkx_colouring(seed: int) -> None:
    from heuristics.slots import _largest_first, _networkx_coloring
    from sim.problems.slots import random_problem

    p = random_problem(seed, n_nodes=24, n_apps=25, n_slots=200, nodes_range=(1, 6))
    assert _largest_first(p) == _networkx_coloring(p, "largest_first")


@pytest.mark.parametrize("name", ["cpsat", "ilp"])
def test_slot_models_stop_at_the_limit(name: str) -> None:
    from models import slots as ms
    from sim.problems import slots as sp

    p = sp.random_problem(1, n_nodes=128, n_apps=200, n_slots=120)
    solve = ms.solve_cpsat if name == "cpsat" else ms.solve_ilp
    t = time.perf_counter()
    r = solve(p, time_limit=0.5)
    assert time.perf_counter() - t < 2.5
    assert r.status is Status.FEASIBLE
    assert sp.check(p, r.solution) == []
    assert r.bound is not None and r.bound <= r.objective


def test_slot_models_refuse_a_model_that_cannot_fit() -> None:
    from models import slots as ms
    from sim.problems import slots as sp

    p = sp.random_problem(1, n_nodes=256, n_apps=2000, n_slots=300, nodes_range=(1, 2),
                         demand_range=(1, 1))
    with pytest.raises(ValueError, match="slot_assignment cpsat: 600000 0-1 variables"):
        ms.solve_cpsat(p, time_limit=1.0)
