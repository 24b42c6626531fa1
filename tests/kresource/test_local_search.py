"""Local search for fewer epochs (``models.kresource.local_search``): valid packings of
every job, never more epochs than given nor fewer than the optimum, within its time."""

from __future__ import annotations

import random
import time

import pytest

from instances.vbp import instance
from models.kresource import brute, colgen
from models.kresource.local_search import fewer_epochs
from sim.problems.kresource import EpochProblem, check, from_dict
from tests.random_kresource import epochs_with_room


def test_matches_brute_force_where_first_fit_does_not() -> None:
    improved = 0
    for seed in range(60):
        p = epochs_with_room(random.Random(seed))
        start = max(colgen.ffd(p), key=len)  # the worst first fit: room to improve
        opt = brute.solve_epochs(p).objective
        got = fewer_epochs(p, start, lower=int(opt), time_limit=5, seed=seed)
        assert check(p, got) == [], seed
        assert opt <= len(got) <= len(start), seed
        improved += len(got) < len(start)
    assert improved >= 1


@pytest.mark.parametrize("K", [2, 10])
def test_published_class_within_its_time(K: int) -> None:
    p = from_dict(instance("ct5", 250, K, 1))
    start = min(colgen.ffd(p), key=len)
    t = time.perf_counter()
    got = fewer_epochs(p, start, lower=1, time_limit=0.5)
    assert time.perf_counter() - t < 0.5 + 0.2
    assert check(p, got) == [] and len(got) <= len(start)


def test_lower_bound_met_is_left_alone() -> None:
    p = EpochProblem((10,), ((5,), (5,), (5,), (5,)))
    start = [[0, 1], [2, 3]]
    assert fewer_epochs(p, start, lower=2, time_limit=1) == [[0, 1], [2, 3]]
