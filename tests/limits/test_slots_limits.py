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
