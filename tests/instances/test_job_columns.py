"""A workload given as columns (``JobColumns``) is the workload of its ``Job`` objects.

The SWF reader hands ``Workload`` its jobs as int64 arrays; the ``Job`` objects are built
on the first access to ``Workload.jobs``. Checked here: the same jobs, the same equality
and pickling, the same first error with the same message as building every ``Job`` and
then the workload from them, and the columns of the fast reader equal to those taken
field by field from the reference reader's jobs.
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from instances import swf
from instances.bundled import trace_path
from instances.job import Job, JobColumns, Workload

JOBS = (Job(1, 0, 5, 5, (2, 1), 7, 8), Job(2, 0, 0, 9, (4, 0)), Job(3, 4, 3, 1, (1, 3), 2))
CAP = (4, 3)


def _columns(rows: list[tuple[int, ...]], K: int) -> JobColumns:
    """Columns from rows (id, submit, runtime, requested, demand..., user, group)."""
    a = np.array(rows, np.int64).reshape(len(rows), 6 + K)
    return JobColumns(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4:4 + K], a[:, 4 + K],
                      a[:, 5 + K])


def _rows(jobs: tuple[Job, ...]) -> list[tuple[int, ...]]:
    return [(j.id, j.submit, j.runtime, j.requested, *j.demand, j.user, j.group) for j in jobs]


def _outcome(make):
    try:
        return make()
    except ValueError as exc:
        return f"ValueError: {exc}"


def test_columns_round_trip_and_lazy_jobs():
    cols = JobColumns.from_jobs(JOBS, 2)
    assert cols.to_jobs() == JOBS and len(cols) == 3 and cols.K == 2
    w = Workload(cols, CAP, "w")
    assert "jobs" not in w.__dict__ and len(w) == 3  # not built yet
    assert w.columns() is cols
    assert w.jobs == JOBS and type(w.jobs) is tuple
    assert all(type(x) is int for j in w.jobs for x in (j.id, j.submit, j.demand[1], j.user))
    assert w == Workload(JOBS, CAP, "w")
    assert w.jobs is w.jobs  # built once
    with pytest.raises(ValueError, match="read-only"):
        cols.submit[0] = 1
    with pytest.raises(AttributeError, match="no attribute 'other'"):
        _ = w.other


def test_pickle_and_replace_keep_the_jobs():
    w = Workload(JobColumns.from_jobs(JOBS, 2), CAP, "w", {"MaxProcs": 4})
    again = pickle.loads(pickle.dumps(w))
    assert "jobs" not in again.__dict__ and again == w
    _ = w.jobs
    again = pickle.loads(pickle.dumps(w))
    assert "jobs" not in again.__dict__ and again.jobs == JOBS
    assert dataclasses.replace(w, name="x").jobs == JOBS
    plain = Workload(JOBS, CAP)
    assert plain.columns().to_jobs() == JOBS
    again = pickle.loads(pickle.dumps(plain))
    assert again == plain and again.jobs == JOBS and "_columns" not in again.__dict__
    listed = Workload(list(JOBS), CAP)  # the jobs as given, whatever their sequence
    assert len(listed.columns()) == 3 and pickle.loads(pickle.dumps(listed)) == listed


# rows of (id, submit, runtime, requested, procs, memory, user, group) on capacity (4, 3)
GOOD = [(1, 0, 5, 5, 2, 1, -1, -1), (2, 0, 0, 9, 4, 0, -1, -1), (3, 4, 3, 1, 1, 3, 5, 6)]
BAD = {
    "negative runtime": {1: (2, 0, -1, 9, 4, 0, -1, -1)},
    "zero request": {2: (3, 4, 3, 0, 1, 3, 5, 6)},
    "no processor": {0: (1, 0, 5, 5, 0, 1, -1, -1)},
    "negative memory": {1: (2, 0, 0, 9, 4, -2, -1, -1)},
    "too wide": {1: (2, 0, 0, 9, 5, 0, -1, -1)},
    "too much memory": {2: (3, 4, 3, 1, 1, 4, 5, 6)},
    "duplicate id": {2: (1, 4, 3, 1, 1, 3, 5, 6)},
    "unsorted": {2: (3, -1, 3, 1, 1, 3, 5, 6)},
    "wide then duplicate": {0: (1, 0, 5, 5, 9, 1, -1, -1), 2: (1, 4, 3, 1, 1, 3, 5, 6)},
    "unsorted then bad runtime": {1: (2, -5, 0, 9, 4, 0, -1, -1),
                                  2: (3, 4, -3, 1, 1, 3, 5, 6)},
    "duplicate and unsorted": {2: (2, -1, 3, 1, 1, 3, 5, 6)},
    "wide and duplicate": {2: (2, 4, 3, 1, 9, 3, 5, 6)},
}


@pytest.mark.parametrize("rows", [GOOD] + [[changes.get(i, r) for i, r in enumerate(GOOD)]
                                           for changes in BAD.values()],
                         ids=["good", *BAD])
@pytest.mark.parametrize("capacity", [CAP, (4,)], ids=["K=2", "K=1 machine"])
def test_columns_give_the_same_first_error_as_jobs(rows, capacity):
    cols = _columns(rows, 2)

    def from_jobs():
        return Workload(tuple(Job(*r[:4], tuple(r[4:6]), *r[6:]) for r in rows), capacity)

    def from_columns():
        return Workload(cols, capacity)

    ref, got = _outcome(from_jobs), _outcome(from_columns)
    assert isinstance(ref, str) or rows == GOOD
    assert ref == got or (not isinstance(ref, str) and ref.jobs == got.jobs)
    assert _outcome(lambda: Workload(_columns([], 2), capacity)) == Workload((), capacity)


def test_reader_columns_equal_the_reference_jobs_columns():
    path = trace_path("lublin_256")
    w = swf.read_swf(path)
    lines = swf._read_text(path).split("\n")
    ref = swf._read_lines(path, lines[:-1] if lines[-1] == "" else lines, procs=None,
                          perfect_estimates=False, missing_request="actual", too_wide="drop")
    fast, slow = w.columns(), JobColumns.from_jobs(ref[0], 1)
    for name in ("id", "submit", "runtime", "requested", "demand", "user", "group"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert w.jobs == tuple(ref[0])
