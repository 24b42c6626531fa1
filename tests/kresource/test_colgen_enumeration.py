"""The columns of small reduced cost of ``models.kresource.colgen`` (price-and-branch's
integer master): the pattern enumeration matches brute force, every epoch of an optimal
packing lies in an enumerated column, and the integer master finds what they hold."""

from __future__ import annotations

import itertools
import math
import random
import time

import pytest

from instances.vbp import instance
from models.deadline import Deadline
from models.kresource import brute, colgen
from models.kresource.pricing import fits, patterns_above
from sim.problems.kresource import EpochProblem, check, from_dict
from sim.result import Status
from tests.kresource.test_colgen import _random


@pytest.fixture(scope="module", autouse=True)
def _ortools_imported() -> None:
    from ortools.linear_solver import pywraplp  # noqa: F401  (start-up, outside limits)
    from ortools.sat.python import cp_model  # noqa: F401


def _maximal_above(p: EpochProblem, w: list[int], at_least: int) -> set[tuple[int, ...]]:
    """Brute force: the maximal fitting sets of positive-weight jobs weighing at least
    ``at_least``."""
    pos = [j for j in range(p.n) if w[j] > 0]
    out = set()
    for r in range(1, len(pos) + 1):
        for sub in itertools.combinations(pos, r):
            if sum(w[j] for j in sub) >= at_least and fits(p, sub) and not any(
                    j not in sub and fits(p, sub + (j,)) for j in pos):
                out.add(sub)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_enumeration_matches_brute_force(seed: int) -> None:
    rng = random.Random(4000 + seed)
    p = _random(rng, max_n=11)
    w = [rng.choice((0, 1, 5, 10**6, 10**12 + 3)) for _ in range(p.n)]
    total = sum(w)
    for at_least in {1, max(1, total // 3), max(1, total // 2), total, total + 1}:
        got, whole = patterns_above(p, w, at_least)
        assert whole
        assert len(got) == len(set(got))
        assert set(got) == _maximal_above(p, w, at_least)


def test_enumeration_stops_at_most_and_at_its_deadline() -> None:
    p = EpochProblem((100,), tuple((10,) for _ in range(30)))
    w = [1] * 30
    got, whole = patterns_above(p, w, 1, most=7)
    assert len(got) == 7 and not whole
    got, whole = patterns_above(p, w, 1, deadline=Deadline(0.0))
    assert not whole
    with pytest.raises(ValueError, match="at_least"):
        patterns_above(p, w, 0)
    with pytest.raises(ValueError, match="non-negative integers"):
        patterns_above(p, [1.5] * 30, 1)


@pytest.mark.parametrize("seed", range(25))
def test_an_optimal_packing_lies_in_the_enumerated_columns(seed: int) -> None:
    """With the LP converged (no pattern over ``SCALE``), every epoch of an optimal
    packing, restricted to the jobs of positive weight, is inside a column
    :func:`colgen.small_reduced_cost` adds, and the integer master over the columns finds
    a packing of the optimum."""
    p = _random(random.Random(5000 + seed), max_n=10)
    ref = brute.solve_epochs(p)
    gen = colgen._Generator(p, [tuple(sorted(ep)) for s in colgen.ffd(p) for ep in s], 0)
    gen.run(Deadline(10.0))
    _, duals, _ = gen.master.solve(None)
    w = [math.floor(y * colgen.SCALE) if y > 0 else 0 for y in duals]
    top = max(sum(w[j] for j in sub) for r in range(1, p.n + 1)
              for sub in itertools.combinations(range(p.n), r) if fits(p, sub))
    _, whole = colgen.small_reduced_cost(gen, int(ref.objective), Deadline(10.0))
    assert whole
    columns = set(gen.columns)
    if top <= colgen.SCALE:
        for ep in ref.solution:
            inner = {j for j in ep if w[j] > 0}
            assert any(inner <= set(c) for c in columns), (ep, w)
    sol = colgen.integer_master(p, gen.columns, lower=1, incumbent=ref.solution,
                                time_limit=10.0)
    assert sol is not None and check(p, sol) == [] and len(sol) == ref.objective


def test_price_and_branch_proves_a_perfect_packing() -> None:
    """ct10 (triplets filling every epoch), 60 jobs, K = 2: the LP's ceiling is the
    optimum, n / 3; the packing of 20 epochs lies in the columns of reduced cost 0."""
    p = from_dict(instance("ct10", 60, 2, 1))
    r = colgen.solve_epochs(p, time_limit=6)
    assert check(p, r.solution) == []
    assert r.status is Status.OPTIMAL and r.objective == 20, r.note


def test_enumeration_of_huge_patterns_stops_incomplete() -> None:
    """Patterns of a thousand jobs: the search stops at its depth, without a
    RecursionError, and says it is incomplete."""
    p = EpochProblem((10**12,), tuple((1,) for _ in range(1000)))
    t = time.perf_counter()
    got, whole = patterns_above(p, [1] * 1000, 1)
    assert not whole and got == []
    assert time.perf_counter() - t < 5


def test_reach_table_is_the_best_suffix_weight() -> None:
    """The exact bound of the enumeration (K <= 2) against brute force."""
    from models.kresource.pricing import _reach_table

    rng = random.Random(7)
    for _ in range(20):
        K = rng.randint(1, 2)
        cap = tuple(rng.randint(3, 9) for _ in range(K))
        d = [tuple(rng.randint(1, c) for c in cap) for _ in range(rng.randint(1, 6))]
        w = [rng.randint(1, 9) for _ in d]
        table = _reach_table(EpochProblem(cap, tuple(d)), w, d)
        assert table is not None
        for t in range(len(d) + 1):
            for a in range(cap[0] + 1):
                for b in range(cap[1] + 1 if K == 2 else 1):
                    free = (a, b)[:K]
                    best = max(sum(w[i] for i in sub) for r in range(len(d) - t + 1)
                               for sub in itertools.combinations(range(t, len(d)), r)
                               if all(sum(d[i][k] for i in sub) <= free[k]
                                      for k in range(K)))
                    assert table[t, a, b] == best


def test_disjoint_columns_price_out_without_the_first() -> None:
    """After an exact pricing's column, up to ``DISJOINT`` more improving columns over
    other jobs: each weighs more than ``SCALE`` without the first column's jobs."""
    p = from_dict(instance("ct1", 40, 2, 1))
    gen = colgen._Generator(p, [tuple(sorted(ep)) for s in colgen.ffd(p) for ep in s], 0)
    assert gen.disjoint
    assert not colgen._Generator(from_dict(instance("ct1", 20, 10, 1)), [(j,) for j in range(20)],
                                 0).disjoint
    weights = [colgen.SCALE // 2 + 1000 * j for j in range(p.n)]  # not first fit's
    first = gen.columns[0]
    before = len(gen.columns)
    added = gen._disjoint(weights, first, Deadline(5.0))
    assert 1 <= added <= colgen.DISJOINT
    assert len(gen.columns) == before + added
    for c in gen.columns[before:]:
        assert fits(p, c)
        assert sum(weights[j] for j in c if j not in first) > colgen.SCALE
