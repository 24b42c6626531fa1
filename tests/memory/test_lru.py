"""Stack distances and the trace-driven LRU simulator (sim.memory.lru) against naive LRU."""

from __future__ import annotations

import numpy as np
import pytest

from instances.refstreams import hot_cold, loop, phases, uniform
from sim.memory.lru import (
    COLD,
    interleave,
    miss_rate_curve,
    naive_misses,
    round_robin_trace,
    simulate_lru,
    stack_distances,
)


def naive_distances(trace):
    stack: list[int] = []
    out = []
    for a in trace:
        if a in stack:
            i = stack.index(a)
            out.append(i + 1)
            stack.pop(i)
        else:
            out.append(COLD)
        stack.insert(0, a)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_stack_distances_match_naive_stack(seed):
    rng = np.random.default_rng(seed)
    tr = rng.integers(0, int(rng.integers(1, 25)), size=int(rng.integers(1, 300)))
    assert stack_distances(tr).tolist() == naive_distances(tr.tolist())


@pytest.mark.parametrize("seed", range(10))
def test_curve_matches_naive_lru_at_every_size(seed):
    rng = np.random.default_rng(100 + seed)
    tr = rng.integers(0, 40, size=500)
    m = miss_rate_curve(tr)
    assert len(m) == np.unique(tr).size + 1 and m[0] == 1.0
    for c in range(len(m)):
        assert m[c] * tr.size == pytest.approx(naive_misses(tr, c))


def test_generators_are_seeded_and_shaped():
    assert np.array_equal(uniform(50, 100, seed=4), uniform(50, 100, seed=4))
    assert not np.array_equal(uniform(50, 100, seed=4), uniform(50, 100, seed=5))
    m = miss_rate_curve(loop(30, 300))
    assert np.all(m[:30] == 1.0) and m[30] == pytest.approx(0.1)  # LRU cliff of a loop
    hc = miss_rate_curve(hot_cold(400, 40_000, hot=40, p_hot=0.9, seed=0), skip=5000)
    assert hc[0] - hc[60] > 10 * (hc[60] - hc[120])  # knee near the hot set (40 blocks)
    ph = phases(200, 1000, working_set=20, phase_length=100, seed=1)
    assert all(np.unique(ph[s : s + 100]).size <= 20 for s in range(0, 1000, 100))
    with pytest.raises(ValueError, match="footprint"):
        uniform(0, 10)
    with pytest.raises(ValueError, match="hot"):
        hot_cold(10, 10, hot=11, p_hot=0.5)


def test_simulate_counts_per_stream_like_naive_lru():
    a, b = uniform(30, 2000, seed=1), hot_cold(50, 2000, hot=5, p_hot=0.8, seed=2)
    tr, ow = interleave([a, b], [1.0, 3.0], 2000)
    assert np.bincount(ow).tolist() == [500, 1500]
    assert set(tr[ow == 0].tolist()).isdisjoint(tr[ow == 1].tolist())
    for cap in (5, 20, 60):
        sim = simulate_lru(tr, ow, cap)
        assert sim.misses.sum() == naive_misses(tr, cap)
    tr2, ow2 = round_robin_trace([a, b], [7, 3], 50)
    assert tr2.size == 500 and ow2[:10].tolist() == [0] * 7 + [1] * 3
    sim = simulate_lru(tr2, ow2, 25, warmup=100)
    assert sim.misses.sum() == naive_misses(tr2, 25) - naive_misses(tr2[:100], 25)
