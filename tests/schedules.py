"""Shared assertion for the engine differential tests: two schedules of one workload agree
in every field a user reads (the start array byte for byte)."""

from __future__ import annotations

import numpy as np

from sim.batch.machine import Schedule


def assert_same_schedule(co: Schedule, py: Schedule, label: object = "") -> None:
    """``co`` (the engine under test) equals ``py`` (the reference): starts byte for byte,
    ends, kills, promises, guarantees and the policy's name."""
    assert co.start.dtype == py.start.dtype
    assert co.start.tobytes() == py.start.tobytes(), label
    assert np.array_equal(co.end, py.end) and np.array_equal(co.killed, py.killed)
    assert co.promises == py.promises and co.guarantees == py.guarantees
    assert co.policy == py.policy
