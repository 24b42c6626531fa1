"""Seeded synthetic workloads and the hypothesis workload strategy."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from strategies import workloads

from instances.job import Workload
from instances.synthetic import offered_load, random_workload


def test_same_seed_same_workload_other_seed_differs():
    a = random_workload(300, (32, 16), seed=7)
    b = random_workload(300, (32, 16), seed=7)
    c = random_workload(300, (32, 16), seed=8)
    assert a.jobs == b.jobs
    assert a.jobs != c.jobs


@pytest.mark.parametrize("capacity", [(64,), (32, 8), (16, 4, 100)])
def test_valid_workload_with_k_resources(capacity):
    w = random_workload(2000, capacity, seed=1)
    assert isinstance(w, Workload) and len(w) == 2000 and w.capacity == capacity
    assert [j.id for j in w.jobs] == list(range(1, 2001))
    assert all(type(x) is int for j in w.jobs for x in (j.submit, j.runtime, j.requested))
    for k, cap in enumerate(capacity):
        dk = [j.demand[k] for j in w.jobs]
        assert min(dk) >= 1 and max(dk) <= cap
    assert w.jobs[0].submit == 0


def test_requests_under_equal_and_over_runtime():
    w = random_workload(5000, 128, seed=3, p_exact=0.2, p_underestimate=0.1)
    n = len(w)
    under = sum(j.requested < j.runtime for j in w.jobs) / n
    exact = sum(j.requested == j.runtime for j in w.jobs) / n
    over = sum(j.requested > j.runtime for j in w.jobs) / n
    # Binomial noise at n = 5000 is about 0.6 percentage points.
    assert 0.07 < under < 0.13
    assert 0.17 < exact < 0.25  # over-estimates of factor ~1 also land on equality
    assert over > 0.6
    assert all(j.requested >= 1 and j.runtime >= 1 for j in w.jobs)


@pytest.mark.parametrize("load", [0.5, 0.9])
def test_offered_load_near_target(load):
    w = random_workload(20000, (128,), seed=11, load=load)
    assert offered_load(w) == pytest.approx(load, rel=0.05)


def test_many_powers_of_two():
    w = random_workload(4000, 64, seed=5, p_pow2=1.0)
    assert all(j.procs & (j.procs - 1) == 0 for j in w.jobs)


def test_empty_and_bad_arguments():
    assert len(random_workload(0, 4, seed=0)) == 0
    assert offered_load(random_workload(0, 4, seed=0)) == 0.0
    with pytest.raises(ValueError, match="capacity"):
        random_workload(5, (0,), seed=0)
    with pytest.raises(ValueError, match="n_jobs"):
        random_workload(-1, 4, seed=0)
    with pytest.raises(ValueError, match="load"):
        random_workload(5, 4, seed=0, load=0)
    with pytest.raises(ValueError, match="p_exact"):
        random_workload(5, 4, seed=0, p_exact=0.8, p_underestimate=0.5)
    with pytest.raises(ValueError, match="max_overestimate"):
        random_workload(5, 4, seed=0, max_overestimate=0.5)
    with pytest.raises(ValueError, match="seed"):
        random_workload(5, 4, seed=1.5)


@settings(max_examples=60, deadline=None)
@given(w=workloads(max_jobs=12, max_procs=8, K=None))
def test_strategy_gives_small_valid_workloads(w):
    assert 1 <= w.K <= 2 and len(w) <= 12 and w.procs <= 8
    assert [j.id for j in w.jobs] == list(range(1, len(w) + 1))
    assert all(0 <= j.submit <= 10 and 0 <= j.runtime <= 8 for j in w.jobs)
    assert all(all(d <= c for d, c in zip(j.demand, w.capacity, strict=True)) for j in w.jobs)
