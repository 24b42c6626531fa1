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
    with pytest.raises(ValueError, match="gang_schedule ilp: 250000 row-assignment"):
        mg.solve_ilp(p, time_limit=1.0)
