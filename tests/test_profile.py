"""Tests of ``sim.profile.Profile`` against a naive per-second array model.

Times are integer seconds. The naive model stores the free capacity of every resource
for every second of a finite horizon; the profile must agree with it on every query
after any sequence of reservations, releases and advances.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.profile import Profile

HORIZON = 400  # seconds; every reservation in these tests ends well before it


class Naive:
    """Free capacity per second on ``[t0, HORIZON)``; full capacity beyond."""

    def __init__(self, capacity: tuple[int, ...], start: int = 0) -> None:
        self.cap = np.array(capacity, dtype=np.int64)
        self.t0 = start
        self.free = np.tile(self.cap, (HORIZON - start, 1))

    def free_at(self, t: int) -> tuple[int, ...]:
        return tuple(int(x) for x in self.free[t - self.t0])

    def fits(self, start: int, duration: int, demand) -> bool:
        if duration <= 0:
            return True
        seg = self.free[start - self.t0:start + duration - self.t0]
        return bool((seg >= np.array(demand)).all())

    def reserve(self, start: int, duration: int, demand) -> None:
        assert self.fits(start, duration, demand)
        self.free[start - self.t0:start + duration - self.t0] -= np.array(demand)

    def release(self, start: int, duration: int, demand) -> None:
        if start < self.t0:
            duration -= self.t0 - start
            start = self.t0
        if duration > 0:
            self.free[start - self.t0:start + duration - self.t0] += np.array(demand)

    def advance(self, now: int) -> None:
        if now > self.t0:
            self.free = self.free[now - self.t0:]
            self.t0 = now

    def earliest_start(self, duration: int, demand, not_before: int) -> int | None:
        for t in range(max(not_before, self.t0), HORIZON - duration):
            if self.fits(t, duration, demand):
                return t
        return None


def assert_same(p: Profile, m: Naive) -> None:
    """Every second agrees, breakpoints are strictly increasing and start at t0."""
    assert p.times[0] == m.t0
    assert all(a < b for a, b in zip(p.times, p.times[1:], strict=False))
    for t in range(m.t0, HORIZON):
        assert p.free_at(t) == m.free_at(t), f"t={t}"
    segs = list(p.segments())
    assert segs[-1][1] is None and segs[-1][2] == tuple(p.capacity)  # all reservations end


# ---------------------------------------------------------------- unit tests
def test_new_profile_is_one_full_segment():
    p = Profile((8, 3), start=5)
    assert len(p) == 1 and p.K == 2
    assert list(p.segments()) == [(5, None, (8, 3))]
    assert p.free_at(1000) == (8, 3)
    with pytest.raises(ValueError, match="before the profile start"):
        p.free_at(4)


def test_reserve_and_release_round_trip():
    p = Profile((10,))
    p.reserve(10, 20, (4,))
    p.reserve(20, 20, (6,))
    assert list(p.segments()) == [(0, 10, (10,)), (10, 20, (6,)), (20, 30, (0,)),
                                  (30, 40, (4,)), (40, None, (10,))]
    p.release(10, 20, (4,))
    p.release(20, 20, (6,))
    p.compact()
    assert list(p.segments()) == [(0, None, (10,))]


def test_reserve_beyond_capacity_raises_and_leaves_the_profile_unchanged():
    p = Profile((10,))
    p.reserve(0, 10, (7,))
    before = list(p.segments())
    with pytest.raises(ValueError, match="resource 0"):
        p.reserve(5, 10, (4,))  # 3 free on [5,10)
    p.compact()
    assert list(p.segments()) == before


def test_release_more_than_reserved_raises():
    p = Profile((10,))
    with pytest.raises(ValueError, match="resource 0"):
        p.release(0, 5, (1,))


def test_fits():
    p = Profile((10,))
    p.reserve(10, 10, (8,))
    assert p.fits(0, 10, (10,))          # ends exactly where the reservation starts
    assert not p.fits(0, 11, (10,))
    assert p.fits(5, 20, (2,))
    assert not p.fits(19, 1, (3,))
    assert p.fits(20, 5, (10,))
    assert p.fits(15, 0, (10,))          # an empty interval always fits


def test_earliest_start_by_hand():
    p = Profile((10,))
    p.reserve(0, 100, (6,))   # 4 free on [0,100)
    p.reserve(100, 50, (8,))  # 2 free on [100,150)
    assert p.earliest_start(100, (4,), 0) == 0     # [0,100) exactly
    assert p.earliest_start(101, (4,), 0) == 150   # would overlap [100,150)
    assert p.earliest_start(10, (2,), 95) == 95    # 4 then 2 free: fits
    assert p.earliest_start(10, (3,), 95) == 150
    assert p.earliest_start(1, (10,), 0) == 150
    with pytest.raises(ValueError, match="never fits"):
        p.earliest_start(1, (11,), 0)


def test_earliest_start_two_resources():
    p = Profile((10, 10))
    p.reserve(0, 50, (2, 9))   # memory nearly full until 50
    p.reserve(50, 50, (9, 1))  # processors nearly full on [50,100)
    assert p.earliest_start(10, (5, 1), 0) == 0
    assert p.earliest_start(10, (5, 2), 0) == 100   # memory before 50, processors after
    assert p.earliest_start(10, (1, 2), 0) == 50
    with pytest.raises(ValueError, match="never fits"):
        p.earliest_start(1, (1, 11), 0)


def test_advance_forgets_the_past_and_compact_merges():
    p = Profile((10,))
    p.reserve(0, 10, (3,))
    p.reserve(10, 10, (3,))   # same level on [0,20), split at 10
    p.reserve(30, 5, (1,))
    p.advance(5)
    assert p.times[0] == 5 and p.free_at(5) == (7,) and p.free_at(19) == (7,)
    p.compact()  # advance merges lazily; compact merges now
    assert list(p.segments()) == [(5, 20, (7,)), (20, 30, (10,)), (30, 35, (9,)),
                                  (35, None, (10,))]
    p.advance(3)  # never moves back
    assert p.times[0] == 5
    p.advance(32)
    assert list(p.segments()) == [(32, 35, (9,)), (35, None, (10,))]
    with pytest.raises(ValueError, match="before the profile start"):
        p.fits(31, 1, (1,))


def test_release_is_clipped_to_the_profile_start():
    p = Profile((10,))
    p.reserve(0, 20, (4,))
    p.advance(10)
    p.release(0, 20, (4,))  # the part before 10 is forgotten
    p.compact()
    assert list(p.segments()) == [(10, None, (10,))]


def test_copy_is_independent():
    p = Profile((10, 2))
    p.reserve(0, 10, (5, 1))
    q = p.copy()
    q.reserve(0, 10, (5, 1))
    q.advance(3)
    assert p.free_at(0) == (5, 1) and q.free_at(3) == (0, 0)
    assert p.times[0] == 0


# ---------------------------------------------------------------- properties
@st.composite
def scripts(draw, K: int):
    """A capacity and a list of operations (op, start, duration, demand)."""
    cap = tuple(draw(st.integers(1, 6)) for _ in range(K))
    n = draw(st.integers(1, 25))
    ops = []
    for _ in range(n):
        op = draw(st.sampled_from(["reserve", "reserve", "release", "advance", "query"]))
        start = draw(st.integers(0, 60))
        duration = draw(st.integers(1, 20))
        demand = tuple(draw(st.integers(0, c)) for c in cap)
        ops.append((op, start, duration, demand))
    return cap, ops


@pytest.mark.parametrize("K", [1, 2])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_profile_matches_the_per_second_model(K, data):
    cap, ops = data.draw(scripts(K))
    p, m = Profile(cap), Naive(cap)
    held: list[tuple[int, int, tuple[int, ...]]] = []  # reservations made
    for op, start, duration, demand in ops:
        start = max(start, m.t0)
        if op == "reserve":
            if m.fits(start, duration, demand):
                p.reserve(start, duration, demand)
                m.reserve(start, duration, demand)
                held.append((start, duration, demand))
            else:  # a failed reserve raises and changes nothing (checked below)
                with pytest.raises(ValueError):
                    p.reserve(start, duration, demand)
        elif op == "release" and held:
            r = held.pop(data.draw(st.integers(0, len(held) - 1)))
            p.release(*r)
            m.release(*r)
        elif op == "advance":
            now = m.t0 + duration
            p.advance(now)
            m.advance(now)
            if duration % 2:
                # compact merges: no two neighbours with equal free capacity
                p.compact()
                segs = [s[2] for s in p.segments()]
                assert all(a != b for a, b in zip(segs, segs[1:], strict=False))
        else:
            assert p.fits(start, duration, demand) == m.fits(start, duration, demand)
            want = m.earliest_start(duration, demand, start)
            assert p.earliest_start(duration, demand, start) == want
        assert_same(p, m)
    # release everything still held: back to one full segment
    for r in held:
        p.release(*r)
    p.compact()
    assert list(p.segments()) == [(m.t0, None, cap)]


@pytest.mark.parametrize("K", [1, 2])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_earliest_start_is_the_first_fitting_second(K, data):
    cap, ops = data.draw(scripts(K))
    p, m = Profile(cap), Naive(cap)
    for _, start, duration, demand in ops:
        if m.fits(start, duration, demand):
            p.reserve(start, duration, demand)
            m.reserve(start, duration, demand)
    duration = data.draw(st.integers(1, 30))
    not_before = data.draw(st.integers(-5, 70))
    demand = tuple(data.draw(st.integers(0, c + 1)) for c in cap)
    want = m.earliest_start(duration, demand, not_before)
    if any(d > c for d, c in zip(demand, cap, strict=True)):
        with pytest.raises(ValueError, match="never fits"):
            p.earliest_start(duration, demand, not_before)
    else:
        t = p.earliest_start(duration, demand, not_before)
        assert t == want
        assert p.fits(t, duration, demand)
