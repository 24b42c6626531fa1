"""Checks of exact insertion answers shared by the slack model tests: the price
tolerance, and CP-SAT never dearer than the paper's orders or its exhaustive search."""

from __future__ import annotations

import math

from heuristics.slack import EXHAUSTIVE, ORDERS
from heuristics.slack import solve as solve_order
from sim.problems import insertion as ins


def tol(*results) -> float:
    """Allowed price difference: CP-SAT's recorded rounding error (twice) plus float noise."""
    eps = sum(2 * r.params.get("rounding_error", 0.0) for r in results)
    return eps + 1e-6 * (1 + max(abs(r.objective) for r in results))


def assert_never_worse_than_every_order(problem, exact) -> None:
    """``exact`` (a proved answer on ``problem``) is no dearer than any compress order or
    the exhaustive search, and at an equal price moves no more jobs (the tie-break)."""
    for order in ORDERS + (EXHAUSTIVE,):
        rh = solve_order(problem, order=order)
        assert exact.objective <= rh.objective + tol(exact), order
        if math.isclose(exact.objective, rh.objective, abs_tol=tol(exact)):
            assert ins.moved(problem, exact.solution) <= ins.moved(problem, rh.solution), order
