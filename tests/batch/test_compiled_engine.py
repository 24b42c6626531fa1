"""The compiled batch engine (``sim.batch.fast``) against the Python engine.

Every policy the compiled engine runs (FCFS, EASY, conservative with each compression,
unconstrained; the selections FF, BL and BB with their options), on windows of bundled
traces and on random workloads (K = 1 and K = 3), with jobs killed at their request and
run to completion: the same start array (byte for byte), ends, kills, promises and
guarantees. Options it does not implement are refused by name. Times are integer seconds.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.compiled

from heuristics.backfill import EASY  # noqa: E402
from instances.bundled import load_trace  # noqa: E402
from instances.job import Workload  # noqa: E402
from instances.synthetic import random_workload  # noqa: E402
from sim.batch.machine import ENGINES, PolicyError, simulate  # noqa: E402
from sim.registry import make_policy  # noqa: E402

OVERRUNS = ("kill", "run")


@functools.cache
def _bundled(trace: str) -> Workload:
    return load_trace(trace)


@functools.cache
def window(trace: str, first: int, count: int) -> Workload:
    """Jobs ``first .. first + count - 1`` of a bundled trace."""
    return _bundled(trace).rows(first, first + count, name=f"{trace}[{first}:+{count}]")


@functools.cache
def kres(n: int, seed: int) -> Workload:
    """A random workload with K = 3 resources."""
    return random_workload(n, (32, 16, 24), seed=seed, load=0.9)


def assert_same(w: Workload, policy: str, overrun: str, **options) -> None:
    try:
        py = simulate(w, make_policy(policy, **options), overrun=overrun)
    except PolicyError as exc:  # a starving rule: the same refusal
        with pytest.raises(PolicyError) as got:
            simulate(w, make_policy(policy, **options), overrun=overrun, engine="compiled")
        assert str(got.value) == str(exc)
        return
    co = simulate(w, make_policy(policy, **options), overrun=overrun, engine="compiled")
    assert co.start.dtype == py.start.dtype
    assert co.start.tobytes() == py.start.tobytes()
    assert np.array_equal(co.end, py.end)
    assert np.array_equal(co.killed, py.killed)
    assert co.promises == py.promises
    assert co.guarantees == py.guarantees
    assert co.policy == py.policy


TRACES = [("lublin_256", 0, 1500), ("KTH-SP2", 9000, 1200), ("SDSC-SP2", 20000, 1200)]


@pytest.mark.parametrize("overrun", OVERRUNS)
@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "unconstrained"])
@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t[0])
def test_traces(trace, policy, overrun):
    assert_same(window(*trace), policy, overrun)


@pytest.mark.parametrize("compression", ["start", "now", "none"])
@pytest.mark.parametrize("overrun", OVERRUNS)
def test_conservative_compressions(compression, overrun):
    assert_same(window("SDSC-SP2", 20000, 1200), "conservative", overrun,
                compression=compression)
    assert_same(random_workload(800, (64,), seed=5, load=1.1), "conservative", overrun,
                compression=compression)


@pytest.mark.parametrize("overrun", OVERRUNS)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative", "unconstrained"])
def test_random_k1(policy, seed, overrun):
    w = random_workload(600, (64,), seed=seed, load=0.7 + 0.15 * seed,
                        p_underestimate=0.3)
    assert_same(w, policy, overrun)


def _jobs(rows: list[tuple[int, int, int, tuple[int, ...]]], cap: tuple[int, ...]) -> Workload:
    """A workload from (submit, runtime, requested, demand) rows."""
    from instances.job import Job

    return Workload(tuple(Job(id=i + 1, submit=s, runtime=r, requested=q, demand=d)
                          for i, (s, r, q, d) in enumerate(rows)), cap)


@pytest.mark.parametrize("overrun", OVERRUNS)
@pytest.mark.parametrize("b_requested", [10, 8, 5], ids=["overlapping", "abutting", "disjoint"])
def test_conservative_move_shapes(b_requested, overrun):
    """Compression moves whose new run overlaps the old reservation, ends where it began,
    or lies before it. On 4 processors A (all 4, 10 s requested) ends at 2; B (2
    processors, reserved at 10) and E (2 processors, 12 s, reserved at 10) move to 2; G (2
    processors, 2 s, reserved at 20) then moves into what B's and E's moves left free, so
    a wrong capacity on any part of a move shows in G's start."""
    for K in (1, 2):
        d = (2,) * K
        w = _jobs([(0, 2, 10, (4,) * K), (0, b_requested, b_requested, d), (1, 12, 12, d),
                   (1, 2, 2, d)], (4,) * K)
        assert_same(w, "conservative", overrun)
        py = simulate(w, make_policy("conservative"), overrun=overrun)
        assert py.start[1] == py.start[2] == 2


def overloaded(w: Workload, factor: float) -> Workload:
    """``w`` with its inter-arrival times divided by ``factor`` (rounded down)."""
    s0 = w.jobs[0].submit
    return Workload(tuple(dataclasses.replace(j, submit=s0 + int((j.submit - s0) // factor))
                          for j in w.jobs), w.capacity, f"{w.name}/x{factor:g}")


@pytest.mark.parametrize("overrun", [
    "kill", pytest.param("run", marks=pytest.mark.slow)])
def test_conservative_overload_long_profiles(overrun):
    """Queues of hundreds of jobs, whose profiles run past ``BACK_MIN`` breakpoints, so the
    compression searches with ``earlier_start_back`` (K = 1 and K = 3). The jobs run to
    completion (``run``, 15-30 s) with ``-m slow``: the long-profile search is the same
    under both overrun modes, and the overrun modes are compared on every other workload
    of this file."""
    assert_same(overloaded(window("SDSC-BLUE", 0, 3000), 1.5), "conservative", overrun)
    assert_same(random_workload(1200, (32, 16, 24), seed=3, load=1.4), "conservative",
                overrun)


@pytest.mark.parametrize("K", [1, 3])
def test_earlier_start_back_matches_earlier_start(K):
    """The compression's search on long profiles (``earlier_start_back``) against the
    plain one (``earlier_start``) and, at K > 1, the two-pass one (``earlier_start_scan``),
    on random profiles of 65-400 breakpoints with free capacities near the demand (many
    holes wide enough, most too short), reservations on and between breakpoints, and
    durations from 0 on."""
    from sim.batch.fast import kernel as KK

    rng = np.random.default_rng(K)
    found = 0
    for _ in range(400):
        n = int(rng.integers(KK.BACK_MIN + 1, 400))
        T = np.zeros(n + 8, np.int64)
        T[:n] = np.cumsum(rng.integers(1, 20, n)) - 1
        T[n:] = -7  # past the profile: never read for a decision
        F = rng.integers(0, 9, (K, n + 8)).astype(np.int64)
        D = rng.integers(1, 6, (3, K)).astype(np.int64)
        OK = np.empty(n + 8, np.int64)
        for j in range(3):
            for _ in range(10):
                old = int(rng.integers(T[0] + 1, T[n - 1] + 30))
                dur = int(rng.choice([0, 1, 5, 20, 60, 200, int(rng.integers(1, 400))]))
                want = KK.earlier_start(T, F, n, dur, D, j, old)
                assert KK.earlier_start_back(T, F, n, dur, D, j, old, OK) == want
                if K > 1:
                    assert KK.earlier_start_scan(T, F, n, dur, D, j, old, OK) == want
                found += want >= 0
    assert 0 < found < 12_000  # both outcomes occur


def _step(T, F, n, t):
    """The free capacities (K,) of the step function ``T[:n]``, ``F`` at time ``t``."""
    return F[:, max(int(np.searchsorted(T[:n], t, side="right")) - 1, 0)]


@pytest.mark.parametrize("K", [1, 3])
def test_move_shifts_the_step_function(K):
    """The compression's move rewrites the profile in one pass: on random profiles the new
    step function is the old one with ``D[j]`` taken on ``[T[i], T[i] + duration)`` and
    given back on ``[old, old + duration)`` (new place before, after or overlapping the old
    one; reservations on and between breakpoints, past the profile's last breakpoint), the
    breakpoints stay increasing with no equal neighbours at the four points that changed,
    and the largest free capacity on the part given back is reported."""
    from sim.batch.fast import kernel as KK

    rng = np.random.default_rng(10 + K)
    moved = 0
    for _ in range(3000):
        n = int(rng.integers(1, 40))
        room = n + 8
        T = np.zeros(room, np.int64)
        T[:n] = np.cumsum(rng.integers(1, 9, n)) - 1
        F = rng.integers(5, 9, (K, room)).astype(np.int64)
        D = rng.integers(0, 5, (1, K)).astype(np.int64)
        i = int(rng.integers(0, n))
        old = int(T[i]) + int(rng.integers(1, 30))
        dur = int(rng.choice([0, 1, 3, 10, int(rng.integers(1, 60))]))
        S = np.zeros(KK.N_S, np.int64)
        S[KK.PN] = n
        T0, F0 = T.copy(), F.copy()
        GB = np.zeros((2 * K + 2, 1), np.int64)
        W = np.empty((K + 1, room + 4), np.int64)
        KK.move(T, F, S, i, old, dur, D, 0, GB, 0, W)
        m = int(S[KK.PN])
        assert 1 <= m <= n + 3 and np.all(np.diff(T[:m]) > 0) and T[0] == T0[0]
        cuts = {int(t) for t in T0[:n]} | {int(t) for t in T[:m]}
        cuts |= {int(T0[i]) + dur, old, old + dur}
        gb = np.zeros(K, np.int64)
        for t in sorted(cuts | {c - 1 for c in cuts if c > T0[0]}):
            want = _step(T0, F0, n, t).copy()
            if T0[i] <= t < T0[i] + dur:
                want -= D[0]
            if old <= t < old + dur:
                want += D[0]
                if not T0[i] <= t < T0[i] + dur:
                    gb = np.maximum(gb, want)
            assert np.array_equal(_step(T, F, m, t), want), (t, T0[:n], F0[:, :n], i, old, dur)
        assert np.array_equal(GB[K + 2:2 * K + 2, 0], gb)
        for t in (int(T0[i]), int(T0[i]) + dur, old, old + dur) if dur > 0 else ():
            x = int(np.searchsorted(T[:m], t))
            if 0 < x < m and T[x] == t:
                assert not np.array_equal(F[:, x], F[:, x - 1]), "equal neighbours left"
        moved += dur > 0
    assert moved > 1500


def test_by_reservation_is_a_stable_sort():
    """The compression's order by reservation (``C_START``) is ``np.argsort``'s stable
    mergesort order, ties kept in queue order, for queues of 0 to 70 jobs."""
    from sim.batch.fast import kernel as KK

    rng = np.random.default_rng(5)
    for q in list(range(12)) + [int(x) for x in rng.integers(12, 70, 40)]:
        JI = np.zeros((100, KK.N_JI), np.int64)
        JI[:, KK.RES] = rng.integers(0, 6, 100)
        qh = int(rng.integers(0, 20))
        Q = np.zeros(100, np.int64)
        Q[qh:qh + q] = rng.permutation(100)[:q]
        R = np.empty((2, max(q, 1)), np.int64)
        row = KK.by_reservation(Q, qh, q, JI, R)
        want = Q[qh:qh + q][np.argsort(JI[Q[qh:qh + q], KK.RES], kind="mergesort")]
        assert np.array_equal(R[row, :q], want)


def test_arrivals_at_counts_the_run_of_equal_submit_times():
    """The arrivals a step must make room for (both compiled loops size their arrays by
    it): the rows from the next arrival on that share its submit time, none past the
    table's end."""
    from sim.batch.fast import kernel as KK

    A = np.array([[0, 9], [5, 9], [5, 9], [5, 9], [7, 9], [7, 9]], np.int64)
    assert [KK.arrivals_at(A, x, 0, t) for x, t in [(1, 5), (2, 5), (4, 7), (0, 0)]] == \
        [3, 2, 2, 1]
    assert KK.arrivals_at(A, 1, 0, 6) == 0  # no arrival at that time
    assert KK.arrivals_at(A, 6, 0, 7) == 0  # past the last row
    assert KK.arrivals_at(A, 0, 1, 9) == 6  # another column


@pytest.mark.parametrize("overrun", OVERRUNS)
@pytest.mark.parametrize("policy", ["easy", "conservative"])
def test_bursts_of_arrivals(policy, overrun):
    """Hundreds of jobs submitted in the same second (each step sizes the arrays by the
    arrivals it holds, ``arrivals_at``): 600 jobs in 3 bursts of up to 271, and all 600 at
    once; the Python engine's schedule."""
    w = random_workload(600, (64,), seed=9, load=1.2)
    for step in (20000, 50000):
        jobs = tuple(dataclasses.replace(j, submit=j.submit - j.submit % step)
                     for j in w.jobs)
        assert_same(Workload(jobs, w.capacity, f"bursts-{step}"), policy, overrun)


SELECT_OPTIONS = [
    {"select": "bl"}, {"select": "bl", "window": 2}, {"select": "bl", "window": 0},
    {"select": "bl", "bl_fallback": "next"}, {"select": "bl", "bl_fallback": "stop"},
    {"select": "bl", "bl_fullness": "largest", "ties": "last"},
    {"select": "bb"}, {"select": "bb", "fullness": "none"}, {"select": "ff"},
]


@pytest.mark.parametrize("overrun", OVERRUNS)
@pytest.mark.parametrize("options", SELECT_OPTIONS, ids=lambda o: "-".join(map(str, o.values())))
@pytest.mark.parametrize("policy", ["easy", "conservative", "unconstrained"])
def test_selections_k3(policy, options, overrun):
    for seed in (1, 2):
        assert_same(kres(400, seed), policy, overrun, **options)


@pytest.mark.parametrize("options", SELECT_OPTIONS[:1] + SELECT_OPTIONS[6:7],
                         ids=lambda o: o["select"])
def test_selections_k1_trace(options):
    assert_same(window("lublin_256", 0, 1000), "easy", "kill", **options)
    assert_same(window("lublin_256", 0, 1000), "conservative", "run", **options)


def test_refused_by_name():
    w = random_workload(20, (8,), seed=0)
    with pytest.raises(ValueError, match="slack scheduler's order 'exhaustive'"):
        simulate(w, make_policy("slack", order="exhaustive"), engine="compiled")

    class Mine(EASY):
        pass

    with pytest.raises(ValueError, match="policy Mine"):
        simulate(w, Mine(), engine="compiled")
    late = Workload(tuple(dataclasses.replace(j, submit=j.submit - 10) for j in w.jobs),
                    w.capacity)
    with pytest.raises(ValueError, match="negative submit times"):
        simulate(late, make_policy("easy"), engine="compiled")
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate(w, make_policy("easy"), engine="c")
    assert ENGINES == ("python", "compiled")
