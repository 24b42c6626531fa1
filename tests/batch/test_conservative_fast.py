"""The compression passes of conservative backfilling against the straightforward one.

``Conservative`` compresses with a compiled pass (``heuristics.compress_kernel``, when
numba is installed and the queue holds at least ``_COMPILED_FROM`` jobs) or with the
pure-Python pass (``compiled=False``). ``Straightforward`` below is the definition both
must reproduce: every waiting job, in the reading's order, has its reservation given
back, is placed at its earliest start from now and booked again ("now": it moves only if
that start is now). Same schedule, same promises, for every reading, every selection
rule, K = 1..3 and both overrun modes. Times are integer seconds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import heuristics.backfill as backfill
from heuristics.backfill import COMPRESSION, Conservative
from heuristics.selection import SELECTIONS
from instances.bundled import load_trace
from instances.job import Workload
from instances.synthetic import random_workload
from sim.batch.machine import simulate
from sim.batch.metrics import summary
from tests.strategies import workloads


class Straightforward(Conservative):
    """Conservative backfilling with the textbook compression (no skipping)."""

    def _compress(self, now: int) -> None:
        profile = self.plan.profile
        res = self.res
        queue = self.queue
        if self.compression == "start":
            queue = sorted(queue, key=lambda j: res[j.id])
        for job in queue:
            old = res[job.id]
            if old == now:
                continue
            if old >= 0:
                profile.release(old, job.requested, job.demand)
            t = profile.earliest_start(job.requested, job.demand, now)
            if self.compression == "now" and old >= 0 and t != now:
                t = old
            assert old < 0 or t <= old
            profile.reserve(t, job.requested, job.demand)
            res[job.id] = t


_numba = pytest.mark.skipif(backfill._compress_kernel() is None,
                            reason="numba not installed (the compiled pass is optional)")


def needs_numba(test):
    """Run ``test`` only with numba, in the ``compiled`` set (tests/conftest.py)."""
    return pytest.mark.compiled(_numba(test))


@pytest.fixture
def compiled_always(monkeypatch):
    """The compiled pass from the first waiting job on (small tests have short queues)."""
    monkeypatch.setattr(backfill, "_COMPILED_FROM", 1)
    monkeypatch.setattr(backfill, "_LOAD_AFTER", 0)


def assert_same(w: Workload, overrun: str = "kill", **options) -> None:
    slow = simulate(w, Straightforward(**options), overrun=overrun)
    for compiled in (True, False):
        fast = simulate(w, Conservative(compiled=compiled, **options), overrun=overrun)
        assert fast.start.tobytes() == slow.start.tobytes(), (compiled, options)
        assert fast.promises == slow.promises, (compiled, options)


def kres(n: int, K: int, seed: int, load: float) -> Workload:
    """``random_workload`` on 64 processors with K - 1 more resources (capacity 64)
    each needing the processor count times a factor uniform in [0.5, 1.5]."""
    base = random_workload(n, (64,), seed=seed, load=load)
    rng = np.random.default_rng(seed + 7919)
    jobs = []
    for j in base.jobs:
        other = np.clip(np.rint(j.demand[0] * rng.uniform(0.5, 1.5, K - 1)), 0, 64)
        jobs.append(dataclasses.replace(j, demand=(j.demand[0], *(int(x) for x in other))))
    return Workload(tuple(jobs), (64,) * K, f"k{K}-{seed}")


@needs_numba
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=workloads(max_jobs=14, max_procs=6, K=None, max_K=3, max_submit=12),
       compression=st.sampled_from(COMPRESSION), select=st.sampled_from(SELECTIONS),
       overrun=st.sampled_from(["kill", "run"]))
def test_same_schedule_as_the_straightforward_compression(w, compression, select, overrun):
    saved = backfill._COMPILED_FROM, backfill._LOAD_AFTER  # hypothesis: no fixture
    backfill._COMPILED_FROM, backfill._LOAD_AFTER = 1, 0
    try:
        assert_same(w, overrun, compression=compression, select=select)
    finally:
        backfill._COMPILED_FROM, backfill._LOAD_AFTER = saved


@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_same_schedule_on_overloaded_random_workloads(K, seed, compiled_always):
    # offered load 1.1: the queue grows, with hundreds of compressions that move jobs;
    # the second seed (5-13 s per K) runs with -m slow, the small random workloads of
    # test_same_schedule_as_the_straightforward_compression in every run
    w = random_workload(300, (64,), seed=seed, load=1.1) if K == 1 else kres(300, K, seed, 1.1)
    for compression in COMPRESSION:
        for overrun in ("kill", "run"):
            assert_same(w, overrun, compression=compression)
    assert_same(w, select="bb")
    assert_same(w, select="bl")


def test_same_schedule_on_kth_and_the_published_average_wait(compiled_always):
    w = load_trace("KTH-SP2", procs=128)
    slow = simulate(w, Straightforward())
    for compiled in (True, False):
        fast = simulate(w, Conservative(compiled=compiled))
        assert fast.start.tobytes() == slow.start.tobytes()
        assert fast.promises == slow.promises
        # the README's figure (schedsearch compare KTH-SP2 --procs 128), to the cent
        assert round(summary(fast)["avg_wait"], 1) == 2024.5


@needs_numba
def test_a_broken_profile_is_reported_not_hidden(compiled_always):
    # a release beyond the capacity cannot come from a consistent profile; the
    # compiled pass must say so (as the Python profile does), not go on
    from heuristics.compress_kernel import OVER_CAPACITY, compress

    times = np.array([0, 10, 0, 0, 0, 0, 0], np.int64)
    free = np.array([[4, 4, 0, 0, 0, 0, 0]], np.int64)  # job 1's reservation is missing
    res = np.array([5], np.int64)
    n = compress(times, free, 2, 0, res, np.array([3], np.int64),
                 np.array([[2]], np.int64), False, np.array([4], np.int64))
    assert n == OVER_CAPACITY


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["lublin_256", "CTC-SP2", "SDSC-BLUE"])
def test_same_schedule_on_the_bundled_traces(trace):
    assert_same(load_trace(trace))



@needs_numba
@pytest.mark.parametrize("K", [1, 2])
@pytest.mark.parametrize("seed", range(12))
def test_a_compiled_pass_over_a_long_queue_is_the_straightforward_one(K, seed):
    # a machine booked by running jobs and a queue of 40-160 reservations (profiles of
    # hundreds of breakpoints, several blocks of the kernel's index), then some
    # running jobs end at once: one pass, in arrival order, against the textbook one
    from heuristics.compress_kernel import compress
    from sim.profile import Profile

    rng = np.random.default_rng(seed)
    cap = (16,) * K
    p = Profile(cap, 0)
    running = []
    for _ in range(int(rng.integers(5, 30))):
        d = tuple(int(x) for x in rng.integers(0, 5, K))
        dur = int(rng.integers(1, 200))
        if p.fits(0, dur, d):
            p.reserve(0, dur, d)
            running.append((dur, d))
    queue = []
    for _ in range(int(rng.integers(40, 160))):
        d = tuple(int(x) for x in rng.integers(1, 17, K))
        dur = int(rng.integers(1, 120 if rng.random() < 0.7 else 1000))  # some span blocks
        t = p.earliest_start(dur, d, int(rng.integers(0, 50)))
        p.reserve(t, dur, d)
        queue.append([t, dur, d])
    for dur, d in running:
        if rng.random() < 0.5:
            p.release(0, dur, d)
    n = len(p.times)
    room = n + 4 * len(queue) + 2
    times = np.zeros(room, np.int64)
    times[:n] = p.times
    free = np.zeros((K, room), np.int64)
    free[:, :n] = p.free
    res = np.array([q[0] for q in queue], np.int64)
    n = compress(times, free, n, 0, res, np.array([q[1] for q in queue], np.int64),
                 np.array([q[2] for q in queue], np.int64).reshape(-1, K), False,
                 np.array(cap, np.int64))
    for q in queue:  # the textbook pass
        old, dur, d = q
        if old == 0:
            continue
        p.release(old, dur, d)
        q[0] = p.earliest_start(dur, d, 0)
        p.reserve(q[0], dur, d)
    assert res.tolist() == [q[0] for q in queue]
    p.compact()
    want = p.copy()
    p.times, p.free = times[:n].tolist(), free[:, :n].tolist()
    p.compact()
    assert (p.times, p.free) == (want.times, want.free)

@pytest.mark.parametrize("K", [1, 2])
def test_same_schedule_with_a_queue_of_hundreds(K, compiled_always):
    # offered load 1.4: the queue reaches hundreds of jobs and the profile hundreds of
    # breakpoints, so whole blocks of the compiled pass's index are skipped and rebuilt
    w = random_workload(700, (64,), seed=3, load=1.4) if K == 1 else kres(700, K, 3, 1.4)
    assert_same(w)


@needs_numba
@pytest.mark.parametrize("seed", range(4))
def test_bookings_keep_the_block_index_of_the_compiled_pass(seed):
    # after every booking (new breakpoints or not, one block or many) the index equals
    # one rebuilt from scratch
    from heuristics.compress_kernel import BLOCK, add, index_blocks

    rng = np.random.default_rng(seed)
    K, room = 2, 600
    cap = np.array([50, 50], np.int64)
    times = np.zeros(room, np.int64)
    free = np.zeros((K, room), np.int64)
    times[0], free[:, 0], n = 0, cap, 1
    bmax = np.empty((K, room // BLOCK + 1), np.int64)
    index_blocks(free, n, bmax, 0)
    booked = []
    for _ in range(250):
        if booked and rng.random() < 0.4:
            start, dur, d = booked.pop(int(rng.integers(len(booked))))
            n = add(times, free, n, start, dur, d, 1, cap, bmax)
        else:
            start, dur = int(rng.integers(0, 3000)), int(rng.integers(1, 400))
            d = rng.integers(0, 3, K).astype(np.int64)
            m = add(times, free, n, start, dur, d, -1, cap, bmax)
            if m < 0:
                continue  # refused (it did not fit); nothing was booked
            n = m
            booked.append((start, dur, d))
        fresh = np.empty_like(bmax)
        index_blocks(free, n, fresh, 0)
        nb = (n + BLOCK - 1) // BLOCK
        assert (bmax[:, :nb] == fresh[:, :nb]).all()
