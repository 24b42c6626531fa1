"""A floating MIP backend's "optimal" on a model with an integral objective is proved to
the unit (``models.mip.INTEGRAL_GAP``), not to a relative gap that leaves whole units
open once the objective is large."""

from __future__ import annotations

import random

import pulp
import pytest

from models import mip
from models.cbc import variable


def _subset_sum(seed: int) -> pulp.LpProblem:
    """Minimise the room left in a knapsack of 40 items (row numbers below 1e7, every
    backend's exact range) plus a constant of about 1e9 carried by fixed variables: a
    relative gap of 1e-7 leaves about 100 units open."""
    rng = random.Random(seed)
    w = [rng.randint(10_000, 400_000) for _ in range(40)]
    cap = sum(w) // 2 + 7
    prob = pulp.LpProblem("subset_sum", pulp.LpMinimize)
    x = [variable(prob, f"x{i}", "Binary") for i in range(len(w))]
    fixed = [variable(prob, f"c{k}", "Integer", low=1, up=1) for k in range(100)]
    packed = pulp.lpSum(wi * xi for wi, xi in zip(w, x, strict=True))
    prob += pulp.lpSum(9_999_999 * c for c in fixed) + cap - packed
    prob += packed <= cap
    return prob


def test_highs_proves_a_large_integral_objective_to_the_unit() -> None:
    """CBC proves the optimum; HiGHS finds the same value or does not call it optimal
    (stopped at a relative gap of 1e-7, it called a value 26 units above optimal)."""
    cbc = _subset_sum(0)
    assert mip.solve(cbc, backend="cbc", time_limit=60)
    assert cbc.sol_status == pulp.LpSolutionOptimal
    highs = _subset_sum(0)
    assert mip.solve(highs, backend="highs", time_limit=60)
    if highs.sol_status == pulp.LpSolutionOptimal:
        assert pulp.value(highs.objective) == pytest.approx(pulp.value(cbc.objective), abs=0.5)


def test_integral_objectives_get_no_relative_gap() -> None:
    prob = _subset_sum(1)
    assert mip.integral_objective(prob)
    words = mip._parameters("highs", mip.INTEGRAL_PARAMETERS).split(",")
    assert "mip_rel_gap=0.0" in words and f"mip_abs_gap={mip.INTEGRAL_GAP}" in words
    assert mip.INTEGRAL_GAP < 1
    y = variable(prob, "y", "Continuous", low=0)  # a continuous variable in the objective
    prob.objective += 0 * y
    assert mip.integral_objective(prob)  # a zero coefficient changes nothing
    prob.objective += y
    assert not mip.integral_objective(prob)
    half = _subset_sum(1)
    half.objective += 0.5
    assert not mip.integral_objective(half)
