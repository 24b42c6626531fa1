"""Seeded replicas of a log: run-time jitter, model estimates (user resampling:
``tests/sweep/test_resample.py``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from instances.bundled import load_trace
from instances.replicate import replicate


@pytest.fixture(scope="module")
def kth():
    w = load_trace("KTH-SP2")
    return dataclasses.replace(w, jobs=w.jobs[:3000], cleaning=None)


def test_jitter_scales_run_times_within_the_range_and_keeps_the_rest(kth):
    a = replicate(kth, "jitter", 1, amount=0.2)
    assert [(j.id, j.submit, j.requested, j.procs) for j in a.jobs] == [
        (j.id, j.submit, j.requested, j.procs) for j in kth.jobs]
    for x, y in zip(a.jobs, kth.jobs, strict=True):
        assert abs(x.runtime - y.runtime) <= 0.2 * y.runtime + 0.5
    assert a.jobs == replicate(kth, "jitter", 1, amount=0.2).jobs
    assert a.jobs != replicate(kth, "jitter", 2, amount=0.2).jobs
    assert replicate(kth, "jitter", 1, amount=0.0).jobs == kth.jobs


def test_estimates_and_refusals(kth):
    a = replicate(kth, "estimates", 5)
    assert [j.runtime for j in a.jobs] == [j.runtime for j in kth.jobs]
    assert all(j.requested >= max(j.runtime, 1) for j in a.jobs)
    assert np.mean([x.requested != y.requested
                    for x, y in zip(a.jobs, kth.jobs, strict=True)]) > 0.5
    with pytest.raises(ValueError, match="unknown method"):
        replicate(kth, "bootstrap", 0)
    with pytest.raises(ValueError, match="amount"):
        replicate(kth, "jitter", 0, amount=1.5)
