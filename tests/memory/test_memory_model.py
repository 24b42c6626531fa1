"""Properties of the analytical memory model (sim.memory.model)."""

from __future__ import annotations

import numpy as np
import pytest

from instances.refstreams import exponential_curve, hot_cold, knee_curve, uniform
from sim.memory.lru import interleave, miss_rate_curve, simulate_lru, stack_distances
from sim.memory.model import (
    MissRateCurve,
    footprint_after,
    idle_time,
    miss_rate,
    refs_to_footprint,
    round_robin,
    steady_state,
)


def test_curve_validation_names_field_and_index():
    with pytest.raises(ValueError, match=r"'m'\[2\]"):
        MissRateCurve((1.0, 0.5, 1.5))
    with pytest.raises(ValueError, match=r"'m'\[1\]"):
        MissRateCurve((1.0, -0.1))
    with pytest.raises(ValueError, match=r"non-increasing: m\[2\]"):
        MissRateCurve((1.0, 0.4, 0.6))
    with pytest.raises(ValueError, match="'m'"):
        MissRateCurve(())
    with pytest.raises(ValueError, match=r"'m'\[0\]"):
        MissRateCurve((float("nan"),))
    with pytest.raises(ValueError, match="points"):
        MissRateCurve.from_points([[1, 1.0], [5, 0.0]])


def test_footprint_eq1_constant_rate_and_saturation():
    # m = 1 everywhere below X: every reference brings a block, x(k) = k up to X
    c = MissRateCurve(tuple([1.0] * 10 + [0.0]))
    assert footprint_after(c, [0, 3, 10, 50]).tolist() == [0, 3, 10, 10]
    # m = 0.5: two references per block
    c = MissRateCurve(tuple([0.5] * 4 + [0.0]))
    assert footprint_after(c, 3.0) == pytest.approx(1.5)
    assert refs_to_footprint(c, 4) == pytest.approx(8.0)
    assert np.isinf(refs_to_footprint(c, 5))
    # curve stops at the first zero even if it is not the last point
    assert MissRateCurve((1.0, 0.0, 0.0)).saturation == 1


def test_footprint_matches_distinct_blocks_of_a_trace():
    tr = hot_cold(400, 60_000, hot=40, p_hot=0.8, seed=3)
    c = MissRateCurve(tuple(miss_rate_curve(tr)))
    for k in (50, 500, 5000):
        # expected distinct blocks in windows of k references
        wins = [np.unique(tr[s : s + k]).size for s in range(0, 50_000, 2_500)]
        assert footprint_after(c, k) == pytest.approx(np.mean(wins), rel=0.05)


def test_steady_state_fills_memory_and_single_process():
    curves = [MissRateCurve(tuple(knee_curve(1000, 200, at_knee=0.2))),
              MissRateCurve(tuple(exponential_curve(800, 100.0, floor=0.01)))]
    st = steady_state(curves, [1.0, 3.0], 600)
    assert st.x.sum() == pytest.approx(600, rel=1e-9)
    assert st.combined[0] == pytest.approx(0.25 * st.m[0, 0] + 0.75 * st.m[0, 1])
    # alone: the process gets the whole memory
    one = steady_state(curves[:1], [1.0], 300)
    assert one.x[0, 0] == pytest.approx(300)
    assert one.combined[0] == pytest.approx(miss_rate(curves[0], 300))
    # everything fits
    big = steady_state(curves, [1.0, 1.0], 5000)
    assert np.isinf(big.K[0]) and big.x[0].tolist() == [1000, 800]


def test_steady_state_vectorised_equals_single_and_monotone_in_memory():
    rng = np.random.default_rng(0)
    curves = [MissRateCurve(tuple(knee_curve(int(f), int(f * 0.3), at_knee=0.1)))
              for f in rng.integers(100, 900, size=5)]
    rates = rng.random((7, 5)) * (rng.random((7, 5)) < 0.6) + np.eye(7, 5)
    many = steady_state(curves, rates, 700)
    for g in range(7):
        one = steady_state(curves, rates[g], 700)
        assert many.combined[g] == pytest.approx(one.combined[0], rel=1e-12)
    prev = np.inf
    for cap in (50, 200, 700, 1500, 4000):
        cur = steady_state(curves, rates, cap).combined
        assert np.all(cur <= prev + 1e-12)
        prev = cur


def test_shared_memory_is_one_more_process():
    a = MissRateCurve(tuple(knee_curve(500, 100, at_knee=0.2)))
    s = MissRateCurve(tuple(knee_curve(300, 50, at_knee=0.1)))
    with_shared = steady_state([a], [2.0], 400, shared=(s, 1.0))
    explicit = steady_state([a, s], [2.0, 1.0], 400)
    assert with_shared.combined[0] == pytest.approx(explicit.combined[0])
    assert with_shared.combined[0] > steady_state([a], [1.0], 400).combined[0] * 0.5


def test_idle_time_eq4():
    assert idle_time(1000, 0.01, 4, [4, 3], 2.0) == pytest.approx(10 + 2.0)
    assert idle_time([10, 20], 0.5, 2, [2, 2, 0], [1, 1, 3]) == pytest.approx(15 + 6)


def test_steady_state_agrees_with_lru_simulation():
    n = 120_000
    streams = [hot_cold(900, n, hot=90, p_hot=0.9, seed=1), uniform(600, n, seed=2)]
    curves = [MissRateCurve(tuple(miss_rate_curve(s, skip=n // 5))) for s in streams]
    tr, ow = interleave(streams, [1.0, 2.0], n)
    d = stack_distances(tr)
    for cap in (200, 500, 900):
        sim = simulate_lru(tr, ow, cap, warmup=n // 5, distances=d)
        model = steady_state(curves, [1.0, 2.0], cap).combined[0]
        assert model == pytest.approx(sim.combined, rel=0.05)


def test_round_robin_limits():
    curves = [MissRateCurve(tuple(uniform_curve)) for uniform_curve in
              (np.linspace(1, 0, 401), np.linspace(1, 0, 301), np.linspace(1, 0, 201))]
    cap = 500
    # short slices -> eq. 2 steady state
    short = round_robin(curves, [1, 1, 1], cap).combined
    assert short == pytest.approx(steady_state(curves, [1, 1, 1], cap).combined[0], rel=0.02)
    # very long slices -> each process alone with the whole memory
    long = round_robin(curves, [10**8] * 3, cap).miss_rates
    alone = [float(miss_rate(c, min(cap, c.size))) for c in curves]
    assert long == pytest.approx(alone, abs=1e-3)
    # in between the miss rate rises above both ends (Figure 2 effect)
    mid = max(round_robin(curves, [n] * 3, cap).combined for n in (100, 300, 1000, 3000))
    assert mid > short + 0.02


def test_round_robin_model_tracks_lru_simulation():
    from instances.refstreams import phases
    from sim.memory.lru import round_robin_trace

    n_refs = 200_000
    streams = [hot_cold(600, n_refs, hot=60, p_hot=0.9, seed=1), uniform(400, n_refs, seed=2),
               phases(800, n_refs, working_set=150, phase_length=4000, seed=3)]
    curves = [MissRateCurve(tuple(miss_rate_curve(s, skip=n_refs // 4))) for s in streams]
    out = {}
    for n in (10, 3000, 20000):
        rounds = min(n_refs // n, max(6, 150_000 // (3 * n)))
        tr, ow = round_robin_trace(streams, [n] * 3, rounds)
        sim = simulate_lru(tr, ow, 800, warmup=tr.size // 4).combined
        model = round_robin(curves, [n] * 3, 800).combined
        assert model == pytest.approx(sim, rel=0.2)
        out[n] = (sim, model)
    # both show the rise at middling slice lengths and the fall for long ones
    for k in (0, 1):
        assert out[3000][k] > 1.3 * out[10][k] and out[20000][k] < out[3000][k]
