"""The one result builder: objective recomputed, status and bound made consistent."""

import math

import pytest

from sim.result import Status, build


def _check(sol):
    if sol["x"] < 0:
        raise ValueError("x must be >= 0")


def _obj(sol):
    return 2.0 * sol["x"]


def _build(status, sol, bound=None, sense="min"):
    return build(solver="t", status=status, solution=sol, check=_check, objective=_obj,
                 bound=bound, runtime=0.0, sense=sense)


def test_objective_is_recomputed_and_optimal_gets_its_bound():
    r = _build(Status.OPTIMAL, {"x": 3})
    assert r.objective == 6.0 and r.bound == 6.0 and r.gap == 0.0 and r.note == ""


def test_optimal_with_a_gap_is_reported_feasible():
    r = _build(Status.OPTIMAL, {"x": 3}, bound=5.0)
    assert r.status is Status.FEASIBLE and r.bound == 5.0 and "FEASIBLE" in r.note


def test_bound_on_the_wrong_side_is_dropped():
    r = _build(Status.FEASIBLE, {"x": 3}, bound=7.0)
    assert r.bound is None and "wrong side" in r.note
    r = _build(Status.FEASIBLE, {"x": 3}, bound=5.0, sense="max")
    assert r.bound is None
    r = _build(Status.FEASIBLE, {"x": 3}, bound=math.nan)
    assert r.bound is None


def test_infeasible_solution_and_inconsistent_status_raise():
    with pytest.raises(ValueError, match="x must be"):
        _build(Status.FEASIBLE, {"x": -1})
    with pytest.raises(ValueError, match="without a solution"):
        _build(Status.OPTIMAL, None)
    r = _build(Status.UNKNOWN, None, bound=1.0)
    assert r.objective is None and r.bound == 1.0


def test_to_dict_converts_typed_solutions():
    class Sol:
        x = 2

        def __getitem__(self, k):
            return self.x

        def to_dict(self):
            return {"x": self.x}

    r = _build(Status.FEASIBLE, Sol())
    assert r.to_dict()["solution"] == {"x": 2}


@pytest.mark.parametrize(("sense", "over"), [("min", 3.0), ("max", -3.0)])
def test_a_bound_within_tolerance_on_the_wrong_side_is_moved_onto_the_solution(sense, over):
    """CBC reported its ``z`` (a bound) 3 pages above the optimum 120759637 of a task
    mapping at 1e8 pages: within the relative tolerance, yet beyond a known solution."""
    value = 120759637.0
    r = _build(Status.OPTIMAL, {"x": value / 2}, bound=value + over, sense=sense)
    assert r.status is Status.OPTIMAL
    assert r.bound == value
