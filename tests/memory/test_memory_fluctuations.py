"""The fluctuation extension of the memory model (sim.memory.model, ``fluctuations=True``), the
exact window footprint spread of traces (sim.memory.lru.footprint_spread) and phases with
geometric lengths (instances.refstreams.phases)."""

from __future__ import annotations

import numpy as np
import pytest

from instances.refstreams import exponential_curve, hot_cold, knee_curve, loop, phases, uniform
from sim.memory.lru import (
    footprint_spread,
    interleave,
    miss_rate_curve,
    round_robin_trace,
    simulate_lru,
    stack_distances,
)
from sim.memory.model import (
    FootprintSpread,
    MissRateCurve,
    footprint_after,
    miss_rate,
    round_robin,
    steady_state,
    window_spread,
)


def _curve(stream: np.ndarray, skip: int, name: str = "") -> MissRateCurve:
    return MissRateCurve(tuple(miss_rate_curve(stream, skip=skip)), name=name)


def _loop_curve(length: int) -> MissRateCurve:
    """LRU curve of a sequential loop: every reference misses below ``length`` blocks."""
    return MissRateCurve(tuple([1.0] * length + [0.0]), name=f"loop{length}")


def _brute_spread(trace: np.ndarray, k: int, skip: int) -> tuple[float, float]:
    counts = [np.unique(trace[s : s + k]).size for s in range(skip, trace.size - k + 1)]
    return float(np.mean(counts)), float(np.std(counts))


# --- footprint_spread --------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_footprint_spread_equals_brute_force_over_every_window(seed):
    rng = np.random.default_rng(seed)
    trace = rng.integers(0, 12, size=300)
    trace[100:140] = np.arange(40) % 5  # a stretch with few blocks: the count must dip
    lengths = [1, 2, 7, 30, 64, 263]  # 263 = n - skip: exactly one window
    for skip in (0, 37):
        fs = footprint_spread(trace, lengths, skip=skip, name="t")
        assert fs.k == tuple(float(k) for k in lengths)
        assert fs.name == "t"
        for i, k in enumerate(lengths):
            if k > trace.size - skip:
                continue
            mean, sd = _brute_spread(trace, k, skip)
            assert fs.mean[i] == pytest.approx(mean, abs=1e-9)
            assert fs.sd[i] == pytest.approx(sd, abs=1e-9)
            assert fs(k) == pytest.approx(sd, abs=1e-9)


def test_footprint_spread_default_lengths_cover_the_trace():
    trace = np.random.default_rng(3).integers(0, 20, size=500)
    fs = footprint_spread(trace, skip=100)
    assert fs.k[0] == 1 and fs.k[-1] == 400
    assert np.all(np.diff(fs.k) > 0)
    for k in (fs.k[5], fs.k[-3]):
        i = fs.k.index(k)
        mean, sd = _brute_spread(trace, int(k), 100)
        assert (fs.mean[i], fs.sd[i]) == pytest.approx((mean, sd), abs=1e-9)


def test_footprint_spread_of_a_loop_has_no_spread():
    L = 50
    trace = loop(L, 2_000, start=7)
    lengths = [1, 10, 49, 50, 51, 120, 1_000]
    fs = footprint_spread(trace, lengths, skip=33)
    assert fs.mean == pytest.approx([min(k, L) for k in lengths], abs=1e-12)
    assert fs.sd == pytest.approx([0.0] * len(lengths), abs=1e-12)


def test_footprint_spread_rejects_bad_lengths_and_skip():
    trace = np.arange(100) % 7
    for lengths in ([0, 5], [5, 101], [], [-3]):
        with pytest.raises(ValueError, match="'lengths'"):
            footprint_spread(trace, lengths)
    with pytest.raises(ValueError, match="'lengths'"):
        footprint_spread(trace, [95], skip=10)  # longer than the 90 references left
    for skip in (-1, 100, 250):
        with pytest.raises(ValueError, match="'skip'"):
            footprint_spread(trace, [5], skip=skip)
    with pytest.raises(ValueError, match="'trace'"):
        footprint_spread(trace.reshape(10, 10), [5])


# --- FootprintSpread ----------------------------------------------------------------------


def test_footprint_spread_validation_names_the_field():
    with pytest.raises(ValueError, match="'k'"):
        FootprintSpread((), ())
    with pytest.raises(ValueError, match="'sd'"):
        FootprintSpread((1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="'k'"):
        FootprintSpread((-1.0, 2.0), (1.0, 1.0))
    with pytest.raises(ValueError, match="'k'"):
        FootprintSpread((5.0, 5.0), (1.0, 1.0))
    with pytest.raises(ValueError, match="'k'"):
        FootprintSpread((5.0, 2.0), (1.0, 1.0))
    with pytest.raises(ValueError, match="'k'"):
        FootprintSpread((0.0, float("inf")), (1.0, 1.0))
    with pytest.raises(ValueError, match=r"'sd'\[1\]"):
        FootprintSpread((1.0, 2.0), (1.0, -0.5))
    with pytest.raises(ValueError, match=r"'sd'\[0\]"):
        FootprintSpread((1.0, 2.0), (float("nan"), 0.5))
    with pytest.raises(ValueError, match="'mean'"):
        FootprintSpread((1.0, 2.0), (1.0, 0.5), mean=(3.0,))
    ok = FootprintSpread((0, 4), (0, 2), mean=(0, 3), name="x")
    assert ok.k == (0.0, 4.0) and ok.sd == (0.0, 2.0) and ok.mean == (0.0, 3.0)


def test_footprint_spread_interpolates_and_holds_beyond_the_ends():
    fs = FootprintSpread((10.0, 20.0, 40.0), (1.0, 3.0, 2.0))
    got = fs([0.0, 10.0, 15.0, 20.0, 30.0, 40.0, 1e9])
    assert got.tolist() == pytest.approx([1.0, 1.0, 2.0, 3.0, 2.5, 2.0, 2.0])
    assert fs(15) == pytest.approx(2.0)


# --- warmup_var and window_spread ---------------------------------------------------------


def test_warmup_var_is_the_birth_process_variance():
    m = (1.0, 0.8, 0.5, 0.25, 0.1, 0.0)
    c = MissRateCurve(m)
    want = [0.0]
    for mi in m[:-1]:
        want.append(want[-1] + (1.0 - mi) / mi**2)  # geometric wait with success mi
    assert c.warmup_var.tolist() == pytest.approx(want)
    # stops where eq. 1 stops (first zero)
    short = MissRateCurve((1.0, 0.5, 0.0, 0.0))
    assert short.warmup_var.tolist() == pytest.approx([0.0, 0.0, 2.0])
    assert MissRateCurve((1.0, 1.0, 0.0)).warmup_var.tolist() == [0.0, 0.0, 0.0]


def test_warmup_var_matches_references_to_reach_d_blocks_of_uniform_streams():
    # Independent uniform references are a coupon collector: a pure birth process. The
    # curve is measured from one long trace; the spread from many independent cold starts.
    F = 50
    c = _curve(uniform(F, 200_000, seed=5), skip=1_000)
    runs = np.random.default_rng(11).integers(0, F, size=(6_000, 400))
    first = np.full((runs.shape[0], F), np.inf)
    for b in range(F):
        hit = runs == b
        first[:, b] = np.where(hit.any(axis=1), hit.argmax(axis=1), np.inf)
    first.sort(axis=1)
    for d in (10, 25, 40):
        refs = first[:, d - 1] + 1  # references needed to touch d distinct blocks
        assert np.isfinite(refs).all()
        assert c.warmup[d] == pytest.approx(refs.mean(), rel=0.03)
        assert c.warmup_var[d] == pytest.approx(refs.var(), rel=0.12)


def test_window_spread_of_a_uniform_stream_matches_measured_and_exact():
    F, n = 400, 120_000
    s = uniform(F, n, seed=7)
    c = _curve(s, skip=n // 10)
    lengths = [50, 100, 200, 400]  # footprints well below F (the delta method needs it)
    measured = footprint_spread(s, lengths, skip=n // 10)
    model = window_spread(c, lengths)
    for i, k in enumerate(lengths):
        # distinct coupons in k draws from F
        q1, q2 = (1 - 1 / F) ** k, (1 - 2 / F) ** k
        exact = np.sqrt(F * q1 + F * (F - 1) * q2 - F**2 * q1**2)
        assert measured.sd[i] == pytest.approx(exact, rel=0.1)
        assert model[i] == pytest.approx(measured.sd[i], rel=0.1)
        assert model[i] == pytest.approx(exact, rel=0.1)
    # a loop's curve implies no spread at all
    assert window_spread(_loop_curve(30), [5, 29, 30, 100]).tolist() == [0.0] * 4


# --- reductions -----------------------------------------------------------------------------


def test_fluctuations_reduce_to_eq2_when_every_spread_is_zero():
    curves = [_loop_curve(L) for L in (60, 150, 240)]
    zero = [FootprintSpread((0.0, 1e9), (0.0, 0.0)) for _ in curves]
    checked, kinds = 0, set()
    for rates in ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [3.0, 1.0, 0.5]):
        for cap in range(40, 520, 7):
            paper = steady_state(curves, rates, cap)
            m = paper.m[0]
            if not np.all(np.isclose(m, 0.0) | np.isclose(m, 1.0)):
                continue  # a share inside a loop's one-block cliff edge
            fl = steady_state(curves, rates, cap, fluctuations=True)
            fz = steady_state(curves, rates, cap, fluctuations=True, spreads=zero)
            assert fl.m[0] == pytest.approx(m, abs=1e-9)
            assert fl.combined[0] == pytest.approx(paper.combined[0], abs=1e-9)
            assert fz.m[0].tolist() == fl.m[0].tolist()
            assert fl.x[0] == pytest.approx(paper.x[0])  # x stays the eq. 2 mean share
            checked += 1
            kinds.add(tuple(np.round(m).astype(int)))
    assert checked > 150
    assert len(kinds) >= 4  # all miss, all hit and mixed regimes were compared


def test_round_robin_fluctuations_reduce_on_loops():
    # Loops have no spread and whole-block footprints: the fluctuating time-sharing model
    # is the section 4.2 model exactly, at every slice length and capacity.
    curves = [_loop_curve(L) for L in (40, 90, 130)]
    zero = [FootprintSpread((0.0,), (0.0,)) for _ in curves]
    for n in ([1, 1, 1], [5, 20, 3], [50, 50, 50], [400, 100, 1000], [10**6] * 3):
        for cap in (30, 100, 150, 200, 260, 300):
            plain = round_robin(curves, n, cap)
            fl = round_robin(curves, n, cap, fluctuations=True)
            fz = round_robin(curves, n, cap, fluctuations=True, spreads=zero)
            assert fl.miss_rates == pytest.approx(plain.miss_rates, abs=1e-12)
            assert fl.resident == pytest.approx(plain.resident, abs=1e-9)
            assert fz.miss_rates.tolist() == fl.miss_rates.tolist()


# --- the point of the extension: a loop at the cliff -----------------------------------------


@pytest.mark.parametrize("rates", [[1.0, 1.0, 1.0], [2.0, 1.0, 1.0]])
def test_fluctuations_track_lru_across_a_loop_cliff(rates):
    n, L = 150_000, 300
    skip = n // 5
    streams = [hot_cold(3_000, n, hot=300, p_hot=0.9, seed=1), loop(L, n),
               uniform(2_000, n, seed=2)]
    curves = [_curve(s, skip) for s in streams]
    tr, ow = interleave(streams, rates, n)
    dist = stack_distances(tr)
    alpha = np.asarray(rates) / sum(rates)
    # global LRU depth of a loop block at its reuse: its own L plus the others' footprints
    depth = L + sum(float(footprint_after(curves[q], L * alpha[q] / alpha[1])) for q in (0, 2))
    caps = int(round(depth)) + 5 * np.arange(-6, 7)
    _assert_fluctuations_fix_the_cliff(
        tr, ow, dist, caps, skip, min_rate=0.01,
        paper=lambda cap: steady_state(curves, rates, cap).combined[0],
        fluct=lambda cap: steady_state(curves, rates, cap, fluctuations=True).combined[0])


def _assert_fluctuations_fix_the_cliff(tr, ow, dist, caps, warmup, *, paper, fluct,
                                       min_rate=0.0):
    """Scan the capacities ``caps`` across the loop's (stream 1) cliff: LRU sees the loop
    go from always missing to always hitting; ``fluct(cap)`` stays within 5% of LRU's
    combined rate (at least ``min_rate`` everywhere) while ``paper(cap)`` is more than 5%
    off somewhere."""
    errs_fl, errs_paper, loop_sim = [], [], []
    for cap in caps:
        sim = simulate_lru(tr, ow, int(cap), warmup=warmup, distances=dist)
        assert sim.combined >= min_rate
        errs_fl.append(abs(fluct(cap) / sim.combined - 1))
        errs_paper.append(abs(paper(cap) / sim.combined - 1))
        loop_sim.append(sim.miss_rates[1])
    assert loop_sim[0] > 0.95 and loop_sim[-1] < 0.05
    assert max(errs_fl) < 0.05, np.round(errs_fl, 3)
    assert max(errs_paper) > 0.05, np.round(errs_paper, 3)


# --- time sharing ---------------------------------------------------------------------------


def test_round_robin_fluctuations_limits():
    curves = [MissRateCurve(tuple(np.linspace(1, 0, 401))),
              MissRateCurve(tuple(knee_curve(600, 100, at_knee=0.1))),
              MissRateCurve(tuple(exponential_curve(300, 50.0, floor=0.01)))]
    cap = 500
    short = round_robin(curves, [1, 1, 1], cap, fluctuations=True)
    st = steady_state(curves, [1, 1, 1], cap, fluctuations=True)
    assert short.combined == pytest.approx(st.combined[0], rel=0.01)
    assert short.miss_rates == pytest.approx(st.m[0], rel=0.02)
    long = round_robin(curves, [10**8] * 3, cap, fluctuations=True).miss_rates
    alone = [float(miss_rate(c, min(cap, c.size))) for c in curves]
    assert long == pytest.approx(alone, abs=1e-3)
    # at a loop's cliff the short-slice limit is the fluctuating steady state, not eq. 2
    mix = [_loop_curve(200), MissRateCurve(tuple(np.linspace(1, 0, 401)))]
    rr = round_robin(mix, [1, 1], 350, fluctuations=True).combined
    fl = steady_state(mix, [1, 1], 350, fluctuations=True).combined[0]
    paper = steady_state(mix, [1, 1], 350).combined[0]
    assert rr == pytest.approx(fl, rel=0.01)
    assert abs(rr - paper) > 5 * abs(rr - fl)


def test_round_robin_with_measured_spreads_tracks_lru_on_geometric_phases():
    N = 50_000  # references per stream; the curves come from exactly what the trace uses
    streams = [hot_cold(600, N, hot=60, p_hot=0.9, seed=1), uniform(400, N, seed=2),
               phases(800, N, working_set=150, phase_length=4_000, seed=3,
                      lengths="geometric")]
    skip = N // 4
    curves = [_curve(s, skip) for s in streams]
    spreads = [footprint_spread(s, skip=skip) for s in streams]
    sims = {}
    for n in (10, 100, 1_000, 3_000, 10_000):
        tr, ow = round_robin_trace(streams, [n] * 3, N // n)
        sim = simulate_lru(tr, ow, 600, warmup=tr.size // 4).combined
        model = round_robin(curves, [n] * 3, 600, fluctuations=True, spreads=spreads).combined
        assert model == pytest.approx(sim, rel=0.10), (n, sim, model)
        sims[n] = sim
    # the slices span the Figure 2 shape: a rise at middling slices, then the fall
    assert sims[1_000] > 1.3 * sims[10] and sims[10_000] < sims[3_000] < sims[1_000]


def test_round_robin_fluctuations_track_lru_across_a_loop_cliff():
    N, L, n = 50_000, 300, 100
    streams = [hot_cold(3_000, N, hot=300, p_hot=0.9, seed=1), loop(L, N),
               uniform(2_000, N, seed=2)]
    curves = [_curve(s, N // 4) for s in streams]
    tr, ow = round_robin_trace(streams, [n] * 3, N // n)
    dist = stack_distances(tr)
    depth = L + sum(float(footprint_after(curves[q], L)) for q in (0, 2))
    caps = int(round(depth)) + 8 * np.arange(-4, 5)
    _assert_fluctuations_fix_the_cliff(
        tr, ow, dist, caps, tr.size // 4,
        paper=lambda cap: round_robin(curves, [n] * 3, cap).combined,
        fluct=lambda cap: round_robin(curves, [n] * 3, cap, fluctuations=True).combined)


# --- phases with geometric lengths ----------------------------------------------------------


def _runs(stream: np.ndarray) -> np.ndarray:
    change = np.flatnonzero(np.diff(stream) != 0) + 1
    return np.diff(np.concatenate(([0], change, [stream.size])))


def test_phases_geometric_lengths():
    kw = dict(working_set=1, phase_length=50)  # one block per phase: runs are phases
    a = phases(10**6, 200_000, seed=4, lengths="geometric", **kw)
    assert np.array_equal(a, phases(10**6, 200_000, seed=4, lengths="geometric", **kw))
    assert not np.array_equal(a, phases(10**6, 200_000, seed=5, lengths="geometric", **kw))
    runs = _runs(a)
    assert runs.mean() == pytest.approx(50, rel=0.06)
    assert runs.std() == pytest.approx(50 * np.sqrt(1 - 1 / 50), rel=0.1)  # geometric
    fixed = _runs(phases(10**6, 200_000, seed=4, **kw))
    assert set(fixed.tolist()) == {50}
    assert np.array_equal(phases(500, 9_000, working_set=40, phase_length=300, seed=2),
                          phases(500, 9_000, working_set=40, phase_length=300, seed=2,
                                 lengths="fixed"))
    for bad in ("geom", "", None):
        with pytest.raises(ValueError, match="'lengths'"):
            phases(100, 1_000, working_set=10, phase_length=50, lengths=bad)


# --- spreads argument -----------------------------------------------------------------------


def test_spreads_of_wrong_length_or_type_are_rejected():
    curves = [MissRateCurve(tuple(np.linspace(1, 0, 101))), _loop_curve(40)]
    fs = FootprintSpread((0.0, 100.0), (0.0, 3.0))
    for bad in ([fs], [fs, None, None], [fs, "x"], [None, 2.0], "ab"):
        with pytest.raises(ValueError, match="'spreads'"):
            steady_state(curves, [1.0, 1.0], 80, fluctuations=True, spreads=bad)
        with pytest.raises(ValueError, match="'spreads'"):
            round_robin(curves, [5, 5], 80, fluctuations=True, spreads=bad)
    # the shared process is not counted: one spread per curve of `curves`
    shared = (MissRateCurve(tuple(np.linspace(1, 0, 21))), 0.5)
    st = steady_state(curves, [1.0, 1.0], 80, shared=shared, fluctuations=True,
                      spreads=[fs, None])
    assert st.m.shape == (1, 3)
    with pytest.raises(ValueError, match="'spreads'"):
        steady_state(curves, [1.0, 1.0], 80, shared=shared, fluctuations=True,
                     spreads=[fs, None, None])
    # a measured spread is used: a wider one changes the answer
    wide = FootprintSpread((0.0,), (30.0,))
    a = steady_state(curves, [1.0, 1.0], 80, fluctuations=True).combined[0]
    b = steady_state(curves, [1.0, 1.0], 80, fluctuations=True, spreads=[wide, None]).combined[0]
    assert a != pytest.approx(b, abs=1e-3)


def test_spreads_that_are_not_a_sequence_raise_value_error():
    curves = [MissRateCurve(tuple(np.linspace(1, 0, 101)))]
    with pytest.raises(ValueError, match="'spreads'"):
        steady_state(curves, [1.0], 80, fluctuations=True,
                     spreads=FootprintSpread((0.0,), (1.0,)))


def test_footprint_spread_rejects_fractional_lengths():
    with pytest.raises(ValueError, match="'lengths'"):
        footprint_spread(np.arange(100) % 7, [2.5])


def test_spreads_without_fluctuations_are_refused_not_ignored():
    curves = [MissRateCurve(tuple(np.linspace(1, 0, 101)))] * 2
    sp = [FootprintSpread((0.0,), (1.0,)), None]
    with pytest.raises(ValueError, match="'spreads'.*fluctuations=True"):
        steady_state(curves, [1.0, 1.0], 80, spreads=sp)
    with pytest.raises(ValueError, match="'spreads'.*fluctuations=True"):
        round_robin(curves, [10, 10], 80, spreads=sp)
