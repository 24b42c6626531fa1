"""The branch-and-bound pricing of minimum epochs (``models.kresource.knapsack``): its
answers match brute force, the compiled kernel matches the Python search exactly, a
stopped search reports a valid upper bound, and column generation priced by it alone
certifies bounds that hold."""

from __future__ import annotations

import importlib.util
import random

import pytest

from models.kresource import colgen
from models.kresource.knapsack import compile_kernel, knapsack_pattern
from models.kresource.pricing import dp_pattern, fits
from sim.problems.kresource import EpochProblem
from tests.kresource.test_colgen import _max_pattern, certified_bounds

NUMBA = importlib.util.find_spec("numba") is not None


def _random(rng: random.Random, n_max: int) -> tuple[EpochProblem, list[int]]:
    """Up to ``n_max`` jobs drawn from fewer demand vectors (identical jobs are common),
    K = 1..6, weights from a few values (equal weights common)."""
    K, n = rng.randint(1, 6), rng.randint(1, n_max)
    cap = tuple(rng.randint(5, 60) for _ in range(K))
    kinds = [tuple(rng.randint(1, max(1, c // rng.choice((1, 2, 3, 5)))) for c in cap)
             for _ in range(rng.randint(1, n))]
    p = EpochProblem(cap, tuple(rng.choice(kinds) for _ in range(n)))
    w = [rng.choice((0, 5, rng.randint(1, 30), 10**6 + rng.randint(0, 9))) for _ in range(n)]
    return p, w


@pytest.mark.parametrize("seed", range(60))
def test_branch_and_bound_matches_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    p, w = _random(rng, 12)
    top = _max_pattern(p, w)
    got = knapsack_pattern(p, w)
    assert got.proved and got.upper == got.value == top
    assert fits(p, got.pattern) and sum(w[j] for j in got.pattern) == top
    # the decision form: nothing at top + 1 (proved: top), the maximum above any floor
    none = knapsack_pattern(p, w, at_least=top + 1)
    assert none.proved and none.upper == top and none.pattern == ()
    some = knapsack_pattern(p, w, at_least=max(top, 1), above=0)
    assert some.proved and some.upper == top
    weights = [sum(w[j] for j in q) for q in some.found]
    assert all(fits(p, q) for q in some.found) and weights == sorted(set(weights))
    assert not top or weights[-1] == top


@pytest.mark.parametrize("seed", range(40))
def test_branch_and_bound_matches_the_dynamic_program(seed: int) -> None:
    """K = 1 and 2, 20-60 jobs of up to a third of a capacity (many jobs per pattern,
    where the cardinality bound is weak and Dantzig's decides): the maximum of the
    capacity-grid dynamic program, and the kernel's too."""
    rng = random.Random(700 + seed)
    K, n = rng.randint(1, 2), rng.randint(20, 60)
    cap = tuple(rng.randint(50, 150) for _ in range(K))
    p = EpochProblem(cap, tuple(tuple(rng.randint(1, c // 3) for c in cap)
                                for _ in range(n)))
    w = [rng.randint(0, 10**6) for _ in range(n)]
    exact = dp_pattern(p, w)
    got = knapsack_pattern(p, w)
    assert got.proved and got.upper == got.value == exact.upper
    if NUMBA:
        assert knapsack_pattern(p, w, compiled=True) == got


@pytest.mark.parametrize("seed", range(30))
def test_a_stopped_search_bounds_every_pattern(seed: int) -> None:
    """Past its node budget (or at ``enough`` patterns) the search is unproved and its
    ``upper`` still bounds every pattern's weight; its patterns fit."""
    rng = random.Random(500 + seed)
    p, w = _random(rng, 12)
    top = _max_pattern(p, w)
    for kw in ({"nodes": rng.randint(1, 6)}, {"enough": 1, "above": 0}):
        got = knapsack_pattern(p, w, **kw)
        assert got.upper >= top and got.value <= top
        assert got.proved or got.upper >= got.value
        assert all(fits(p, q) for q in got.found) and (not got.pattern or fits(p, got.pattern))


@pytest.fixture(scope="module")
def kernel() -> None:
    if not NUMBA:
        pytest.skip("numba is not installed")
    assert compile_kernel()


@pytest.mark.parametrize("seed", range(40))
def test_compiled_search_is_the_python_search(kernel: None, seed: int) -> None:
    rng = random.Random(1000 + seed)
    p, w = _random(rng, 40)
    for _ in range(4):
        kw = {"at_least": rng.choice((1, 20, 10**6)), "above": rng.choice((None, 0, 10)),
              "nodes": rng.choice((10**6, 50, 5)), "enough": rng.choice((None, 1, 3))}
        assert knapsack_pattern(p, w, compiled=True, **kw) == knapsack_pattern(p, w, **kw)


def test_compiled_search_refuses_what_int64_cannot_hold(kernel: None) -> None:
    p = EpochProblem((10, 10), ((2, 3), (4, 1), (5, 5)))
    huge = [2**61, 2**61, 1]
    assert knapsack_pattern(p, huge, compiled=True) is None
    exact = knapsack_pattern(p, huge)
    assert exact.proved and exact.upper == 2**62 == _max_pattern(p, huge)


def _large(rng: random.Random) -> EpochProblem:
    """K = 3..4 (no capacity-grid program), jobs of a fifth to two thirds of a capacity."""
    K, n = rng.randint(3, 4), rng.randint(5, 11)
    cap = tuple(rng.randint(20, 40) for _ in range(K))
    return EpochProblem(cap, tuple(tuple(rng.randint(c // 5, 2 * c // 3) for c in cap)
                                   for _ in range(n)))


def test_column_generation_priced_by_branch_and_bound_alone(
        kernel: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """CP-SAT pricing forbidden: column generation converges on the branch and bound,
    and its certified bound lies under the optimum (certificate re-checked)."""
    def no_cpsat(*args, **kwargs):
        raise AssertionError("CP-SAT pricing called")

    monkeypatch.setattr(colgen, "best_pattern", no_cpsat)
    assert certified_bounds(range(3000, 3020), converged=True) >= 3
