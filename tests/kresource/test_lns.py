"""Epoch elimination by neighbourhood search (``models.kresource.lns``): valid packings
of every job, never more epochs than given nor fewer than the optimum (brute force),
within its time, and a packing the earlier stages of ``colgen`` miss."""

from __future__ import annotations

import random
import time

import pytest

from instances.vbp import instance
from models.kresource import brute, colgen
from models.kresource.lns import LnsOptions, eliminate_epochs
from models.kresource.local_search import fewer_epochs
from sim.problems.kresource import EpochProblem, check, from_dict
from tests.random_kresource import epochs_with_room

DETERMINISTIC = LnsOptions(slice_seconds=60.0, slice_work=0.05, max_solves=300)
"""A budget in CP-SAT's deterministic time and solves only (the wall-clock slice never
binds), so the outcome does not depend on the machine's load."""


@pytest.fixture(scope="module", autouse=True)
def _ortools_imported() -> None:
    from ortools.sat.python import cp_model  # noqa: F401  (start-up, outside limits)


def test_matches_brute_force_from_the_worst_first_fit() -> None:
    improved = reached = 0
    for seed in range(60):
        p = epochs_with_room(random.Random(seed))
        start = max(colgen.ffd(p), key=len)
        opt = int(brute.solve_epochs(p).objective)
        got, solves = eliminate_epochs(p, start, lower=opt, time_limit=None, seed=seed,
                                       options=DETERMINISTIC)
        assert check(p, got) == [], seed
        assert sorted(j for ep in got for j in ep) == list(range(p.n)), seed
        assert opt <= len(got) <= len(start), seed
        assert solves <= DETERMINISTIC.max_solves
        improved += len(got) < len(start)
        reached += len(got) == opt
    assert improved >= 5 and reached >= 50, (improved, reached)


def test_finds_the_packing_first_fit_and_the_local_search_miss() -> None:
    """ct5, 120 jobs, K = 10: the best first fit takes 9 epochs, the certified bound is
    8 (LP 7.9997); the local search stays at 9 after 2,000 moves, the neighbourhood
    search reaches 8 on a budget of deterministic time."""
    p = from_dict(instance("ct5", 120, 10, 1))
    start = min(colgen.ffd(p), key=len)
    assert len(start) == 9
    assert len(fewer_epochs(p, start, lower=8, time_limit=None, max_steps=2_000)) == 9
    got, _ = eliminate_epochs(p, start, lower=8, time_limit=None, options=DETERMINISTIC)
    assert check(p, got) == [] and len(got) == 8


@pytest.mark.parametrize("K", [2, 10])
def test_published_class_within_its_time(K: int) -> None:
    p = from_dict(instance("ct1", 250, K, 1))
    start = min(colgen.ffd(p), key=len)
    t = time.perf_counter()
    got, _ = eliminate_epochs(p, start, lower=1, time_limit=0.5)
    assert time.perf_counter() - t < 0.5 + 0.2
    assert check(p, got) == [] and len(got) <= len(start)


def test_lower_bound_met_is_left_alone() -> None:
    p = EpochProblem((10,), ((5,), (5,), (5,), (5,)))
    got, solves = eliminate_epochs(p, [[0, 1], [2, 3]], lower=2, time_limit=1)
    assert got == [[0, 1], [2, 3]] and solves == 0


def test_bad_options_are_refused() -> None:
    for bad in ({"most_jobs": 1}, {"most_epochs": True}, {"slice_seconds": 0},
                {"slice_work": -1.0}, {"max_solves": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            LnsOptions(**bad)


def test_hostile_magnitudes() -> None:
    """Demands of 1 against a capacity near 10^12 (the family's largest sums) weigh 0 once
    normalised and rounded: the objective still counts them (weight at least 1), so
    their epochs are emptied too; every fit is checked on the integer demands."""
    big = 10**12 // 2 - 1
    p = EpochProblem((big, big), ((1, 1), (1, 1), (big - 1, big - 1), (big - 1, big - 1)))
    got, _ = eliminate_epochs(p, [[0], [1], [2], [3]], lower=2, time_limit=None,
                              options=DETERMINISTIC)
    assert check(p, got) == [] and len(got) == 2
