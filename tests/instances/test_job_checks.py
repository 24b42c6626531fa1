"""Job's field checks: the fast path accepts only what the full checks accept."""

from __future__ import annotations

import numpy as np
import pytest

from instances.job import Job, Workload


@pytest.mark.parametrize("kw, msg", [
    (dict(id=True), "Job.id must be an integer"),
    (dict(id=np.int64(1)), "Job.id must be an integer"),
    (dict(submit=1.0), "submit must be an integer"),
    (dict(runtime=-1), "runtime must be >= 0"),
    (dict(requested=0), "requested must be >= 1"),
    (dict(demand=[2]), "demand must be a non-empty tuple"),
    (dict(demand=()), "demand must be a non-empty tuple"),
    (dict(demand=(0,)), r"demand\[0\] \(processors\) must be >= 1"),
    (dict(demand=(2, -1)), r"demand\[1\] must be >= 0"),
    (dict(demand=(np.int64(2),)), r"demand\[0\] must be an integer"),
])
def test_bad_fields_are_refused(kw, msg):
    fields = dict(id=1, submit=0, runtime=5, requested=10, demand=(2,))
    fields.update(kw)
    with pytest.raises(ValueError, match=msg):
        Job(**fields)


def test_good_jobs_are_built():
    assert Job(1, 0, 0, 1, (1,)).demand == (1,)
    assert Job(1, -5, 3, 4, (2, 0, 7), 3, 4).demand == (2, 0, 7)


def test_rows_is_the_slice_of_the_jobs_without_building_the_others():
    """``Workload.rows`` gives the same jobs as slicing ``jobs`` and builds no Job object
    of the rest: a bundled trace's window reads as its columns only."""
    from instances.bundled import load_trace

    w = load_trace("KTH-SP2")
    part = w.rows(1000, 1400, name="kth-window")
    assert "jobs" not in w.__dict__  # the whole trace's Job objects never built
    want = Workload(w.jobs[1000:1400], w.capacity, "kth-window")
    assert part.jobs == want.jobs and part.capacity == w.capacity
    assert part.name == "kth-window" and part.header == w.header and part.cleaning is None
    assert w.rows(len(w) - 3).jobs == w.jobs[-3:]
    for first, stop in ((-1, 5), (0, -2), (1.0, 5), (len(w), None)):
        with pytest.raises(ValueError, match="Workload.rows"):
            w.rows(first, stop)
