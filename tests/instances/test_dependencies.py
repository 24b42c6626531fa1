"""The dependency table of user feedback (``instances.dependencies``), hand-checked."""

from __future__ import annotations

import dataclasses

import pytest

from instances.dependencies import THINK_GAP, dependencies, summary
from instances.job import Job, Workload
from instances.replicate import replicate
from sim.batch.runner import load_workload


def _w(*rows: tuple[int, int, int, int, int]) -> Workload:
    """Jobs ``(id, submit, wait, runtime, user)`` on a 4-processor machine."""
    return Workload(tuple(Job(i, s, r, max(r, 1), (1,), u, wait=w) for i, s, w, r, u in rows),
                    (4,), "t")


def test_latest_log_end_at_or_before_submit_within_the_gap():
    w = _w((1, 0, 0, 100, 7),       # ends at 100
           (2, 10, 500, 100, 7),    # ends at 610, after job 4's submit
           (3, 50, 0, 20, 7),       # ends at 70
           (4, 150, 0, 10, 7),      # latest end <= 150 is job 1's (100): think 50
           (5, 150, 0, 10, 8),      # another user, nothing before
           (6, 610 + THINK_GAP, 0, 5, 7),       # job 2's end + 1200: depends, think 1200
           (7, 1816, 0, 5, 7))      # job 6 ends at 1815: think 1 s
    assert dependencies(w) == {4: (1, 50), 6: (2, THINK_GAP), 7: (6, 1)}
    assert dependencies(w, gap=49) == {7: (6, 1)}


def test_unknown_wait_unknown_user_and_no_cycle():
    w = _w((1, 0, -1, 10, 3),    # unknown wait: no known end, nothing depends on it
           (2, 20, 0, 0, 3),
           (3, 20, 0, 0, 3),     # ends at 20 = submit of 2 and 3: 3 depends on 2, never 2 on 3
           (4, 30, 0, 5, -1),
           (5, 40, 0, 5, -1))    # unknown users are users of their own
    assert dependencies(w) == {3: (2, 0)}


def test_zero_gap_and_bad_gap():
    w = _w((1, 0, 0, 10, 1), (2, 10, 0, 10, 1), (3, 21, 0, 10, 1))
    assert dependencies(w, gap=0) == {2: (1, 0)}
    with pytest.raises(ValueError, match="gap"):
        dependencies(w, gap=-1)


def test_kth_sp2_counts():
    """KTH-SP2: 11,523 of its 28,475 jobs depend on an earlier job of their user (median
    think time 272 s); without the log's wait (every end unknown) none does."""
    w = load_workload("KTH-SP2")
    table = dependencies(w)
    assert summary(w, table) == {"jobs": 28475, "dependent": 11523, "median_think": 272.0}
    blind = dataclasses.replace(w, jobs=tuple(dataclasses.replace(j, wait=-1)
                                              for j in w.jobs[:2000]))
    assert dependencies(blind) == {}


def test_table_of_a_replica_follows_its_own_ids():
    """A resample renumbers jobs and keeps each job's log wait, so the table computed on the
    replica names the replica's jobs, each predecessor of the same user, earlier, and
    ended (in the log) at most THINK_GAP before the dependent job's submit."""
    w = load_workload("KTH-SP2")
    rep = replicate(w, "resample", 3)
    by_id = {j.id: (k, j) for k, j in enumerate(rep.jobs)}
    table = dependencies(rep)
    assert table
    for jid, (pid, think) in table.items():
        (k, j), (kp, p) = by_id[jid], by_id[pid]
        assert p.user == j.user >= 0 and kp < k
        assert think == j.submit - (p.submit + p.wait + p.runtime)
        assert 0 <= think <= THINK_GAP


@pytest.mark.parametrize("method", ["resample", "jitter", "estimates"])
def test_every_replica_keeps_the_log_wait(method):
    """Each replication method carries every job's log wait, so feedback acts on replicas
    of any kind (the estimates model builds its jobs anew)."""
    full = load_workload("KTH-SP2")
    w = Workload(full.jobs[:3000], full.capacity, full.name, full.header)
    rep = replicate(w, method, 1)
    assert all(j.wait >= 0 for j in rep.jobs)
    if method == "resample":  # each job of the replica is a job of the log, moved
        log = {(j.runtime, j.requested, j.demand, j.wait) for j in w.jobs}
        assert all((j.runtime, j.requested, j.demand, j.wait) in log for j in rep.jobs)
    else:  # the same jobs, in the same order
        assert [j.wait for j in rep.jobs] == [j.wait for j in w.jobs]
    assert dependencies(rep)
