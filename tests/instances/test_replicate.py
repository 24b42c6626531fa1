"""Seeded replicas of a log: user resampling, run-time jitter, model estimates."""

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


def test_resample_draws_users_with_replacement(kth):
    a = replicate(kth, "resample", 3)
    users = {j.user for j in kth.jobs if j.user >= 0}
    drawn = {j.user for j in a.jobs if j.user >= 0}
    assert drawn <= users and drawn != users  # some users missed, so others drawn twice
    assert [j.id for j in a.jobs] == list(range(1, len(a) + 1))
    assert all(x.submit <= y.submit for x, y in zip(a.jobs, a.jobs[1:], strict=False))
    by_user = {}
    for j in kth.jobs:
        by_user.setdefault(j.user, []).append((j.submit, j.runtime, j.procs))
    for u in drawn:  # a drawn user's jobs are all there, whole, at their own times, k times
        mine = sorted((j.submit, j.runtime, j.procs) for j in a.jobs if j.user == u)
        k = len(mine) // len(by_user[u])
        assert k >= 1 and mine == sorted(by_user[u] * k)
    assert a.jobs == replicate(kth, "resample", 3).jobs
    assert a.capacity == kth.capacity and a.name.endswith("+resample(3)")


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
