"""Readings of conservative backfilling (``Conservative(compression=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.backfill import COMPRESSION, Conservative
from instances.synthetic import random_workload
from sim.batch.machine import simulate
from sim.batch.validate import validate


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_reading_keeps_the_promises_and_arrival_is_the_default(seed):
    w = random_workload(250, (32,), seed=seed, load=0.95)
    default = simulate(w, Conservative())
    starts = {}
    for c in COMPRESSION:
        s = simulate(w, Conservative(compression=c))
        validate(s)  # capacity, run lengths, and no start after the arrival promise
        starts[c] = s.start
    assert np.array_equal(starts["arrival"], default.start)
    none = simulate(w, Conservative(compression="none"))
    # without compression every job starts exactly at the reservation it got at arrival
    promised = np.array([none.promises[j.id] for j in w.jobs])
    assert np.array_equal(none.start, promised)
    # with it, early ends pull some jobs before their own arrival reservation
    own = np.array([default.promises[j.id] for j in w.jobs])
    assert (default.start <= own).all() and (default.start < own).any()


def test_an_unknown_reading_is_refused():
    with pytest.raises(ValueError, match="compression must be one of"):
        Conservative(compression="sideways")
