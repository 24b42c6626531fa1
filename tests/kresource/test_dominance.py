"""Dominance pairs of minimum epochs (``models.kresource.dominance``) and the
dual-optimal inequalities they give colgen's master LP: every pair is a dominance, every
dominance follows from the pairs, and the inequalities leave the set-cover LP's optimum
unchanged (checked on every pattern of small random instances)."""

from __future__ import annotations

import itertools
import random

import pytest

from models.kresource import colgen, dominance
from models.kresource.pricing import fits
from sim.problems.kresource import EpochProblem


def _random(rng: random.Random, n: int) -> EpochProblem:
    K = rng.randint(1, 3)
    cap = tuple(rng.randint(6, 20) for _ in range(K))
    return EpochProblem(cap, tuple(tuple(rng.randint(1, c // 2) for c in cap)
                                   for _ in range(n)))


def _dominates(p: EpochProblem, i: int, j: int) -> bool:
    return all(a >= b for a, b in zip(p.demands[i], p.demands[j], strict=True))


@pytest.mark.parametrize("seed", range(20))
def test_pairs_are_dominance_and_imply_all_of_it(seed: int) -> None:
    p = _random(random.Random(seed), n=random.Random(seed).randint(2, 25))
    pairs = dominance.dominance_pairs(p)
    assert all(i != j and _dominates(p, i, j) for i, j in pairs)
    reach = {i: {i} for i in range(p.n)}  # transitive closure of the pairs
    changed = True
    while changed:
        changed = False
        for i, j in pairs:
            new = reach[j] - reach[i]
            if new:
                reach[i] |= new
                changed = True
    for i, j in itertools.permutations(range(p.n), 2):
        assert (j in reach[i]) == _dominates(p, i, j), (i, j)


def test_refusals_and_limits() -> None:
    assert dominance.dominance_pairs(EpochProblem((5,), ((1,),))) == []
    many = EpochProblem((10**6,), tuple((j + 1,) for j in range(dominance.MAX_JOBS + 1)))
    assert dominance.dominance_pairs(many) == []
    # a chain of MAX_JOBS jobs: MAX_JOBS - 1 covering pairs
    chain = EpochProblem((10**6,), tuple((j + 1,) for j in range(dominance.MAX_JOBS)))
    assert len(dominance.dominance_pairs(chain)) == dominance.MAX_JOBS - 1
    # demands near the family's limit compare as integers: 10^12 - 1 does not dominate
    big = EpochProblem((3 * 10**11, 10),
                       ((3 * 10**11 - 1, 5), (3 * 10**11, 5), (3 * 10**11 - 1, 6)))
    assert sorted(dominance.dominance_pairs(big)) == [(1, 0), (2, 0)]


def _lp(p: EpochProblem, swaps: bool) -> float:
    patterns = [sub for r in range(1, p.n + 1)
                for sub in itertools.combinations(range(p.n), r) if fits(p, sub)]
    master = colgen._Master(p.n)
    for q in patterns:
        master.add(q)
    for i, j in dominance.dominance_pairs(p) if swaps else ():
        master.add_swap(i, j)
    value, duals, _ = master.solve(None)
    if swaps:  # the duals obey y_big >= y_small
        assert all(duals[i] >= duals[j] - 1e-7 for i, j in dominance.dominance_pairs(p))
    return value


@pytest.mark.parametrize("seed", range(15))
def test_swaps_leave_the_lp_optimum(seed: int) -> None:
    rng = random.Random(100 + seed)
    p = _random(rng, n=rng.randint(3, 9))
    assert _lp(p, swaps=True) == pytest.approx(_lp(p, swaps=False), abs=1e-6)
