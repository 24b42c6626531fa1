"""Metric definitions of ``sim.batch.metrics`` on a tiny schedule computed by hand.

The schedule (capacity 4 processors, 8 memory units; times in seconds)::

    job submit runtime requested demand  start end  wait response run
    1   0      5       5         (2, 4)  0     5    0    5        5
    2   1      20      20        (4, 2)  5     25   4    24       20
    3   2      12      2         (1, 0)  25    27   23   25       2    killed at its request
    4   3      0       1         (1, 1)  3     3    0    0        0    zero runtime

Every expected figure below is worked out from these rows in the comment beside it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import workloads

from heuristics.backfill import EASY
from instances.job import Job, Workload
from sim.batch.machine import Schedule, simulate
from sim.batch.metrics import (
    BSLD_TAU,
    breakdown,
    job_metrics,
    queue_length,
    size_class,
    summary,
    utilization_per_resource,
)
from sim.batch.validate import validate


@pytest.fixture
def hand() -> Schedule:
    w = Workload((
        Job(1, 0, 5, 5, (2, 4), user=7),
        Job(2, 1, 20, 20, (4, 2), user=8),
        Job(3, 2, 12, 2, (1, 0), user=7),
        Job(4, 3, 0, 1, (1, 1), user=8),
    ), (4, 8), "hand")
    s = Schedule(w, "hand", np.array([0, 5, 25, 3]), np.array([5, 25, 27, 3]),
                 np.array([False, False, True, False]))
    validate(s)  # a schedule the simulator could have produced
    return s


def test_per_job_metrics(hand):
    m = job_metrics(hand)
    assert m["wait"].tolist() == [0, 4, 23, 0]
    assert m["response"].tolist() == [5, 24, 25, 0]
    assert m["run"].tolist() == [5, 20, 2, 0]          # job 3 held the machine 2 s (killed)
    # slowdown = response / max(run, 1): 5/5, 24/20, 25/2, 0/1
    assert m["slowdown"].tolist() == pytest.approx([1.0, 1.2, 12.5, 0.0])
    # bounded slowdown = max(1, response / max(run, 10)): 5/10 -> 1, 24/20, 25/10, 0/10 -> 1
    assert BSLD_TAU == 10
    assert m["bounded_slowdown"].tolist() == pytest.approx([1.0, 1.2, 2.5, 1.0])


def test_bounded_slowdown_threshold_is_10_seconds():
    w = Workload((Job(1, 0, 9, 9, (1,)), Job(2, 0, 10, 10, (1,)), Job(3, 0, 11, 11, (1,))),
                 (1,))
    s = simulate(w, EASY())  # starts 0, 9, 19
    assert s.start.tolist() == [0, 9, 19]
    bsld = job_metrics(s)["bounded_slowdown"]
    # responses 9, 19, 30 over max(run, 10) = 10, 10, 11
    assert bsld.tolist() == pytest.approx([1.0, 1.9, 30 / 11])


def test_summary(hand):
    out = summary(hand)
    assert out["policy"] == "hand" and out["jobs"] == 4 and out["filter"] == "all jobs"
    assert out["avg_wait"] == pytest.approx(27 / 4)            # (0 + 4 + 23 + 0) / 4
    assert out["max_wait"] == 23
    assert out["avg_response"] == pytest.approx(54 / 4)        # (5 + 24 + 25 + 0) / 4
    assert out["avg_slowdown"] == pytest.approx(14.7 / 4)      # 1 + 1.2 + 12.5 + 0
    assert out["avg_bounded_slowdown"] == pytest.approx(5.7 / 4)  # 1 + 1.2 + 2.5 + 1
    # weights procs * run = 10, 80, 2, 0: (10*5 + 80*24 + 2*25) / 92
    assert out["avg_weighted_response"] == pytest.approx(2020 / 92)
    assert out["makespan"] == 27                                # last end 27 - first submit 0
    assert out["utilization"] == pytest.approx(92 / (4 * 27))   # processor-seconds / (P * span)
    assert out["killed"] == 1
    # queue: 0 on [0,1), 1 on [1,2), 2 on [2,5), 1 on [5,25), 0 on [25,27): 27 / 27
    assert out["avg_queue_length"] == pytest.approx(1.0)
    assert out["max_queue_length"] == 2


def test_utilization_per_resource(hand):
    # memory: 4*5 + 2*20 + 0*2 + 1*0 = 60 unit-seconds over 8 * 27
    assert utilization_per_resource(hand) == pytest.approx([92 / 108, 60 / 216])


def test_queue_length_over_time(hand):
    times, lengths = queue_length(hand)
    # job 1 arrives and starts at 0, job 4 arrives and starts at 3: netted
    assert times.tolist() == [0, 1, 2, 3, 5, 25]
    assert lengths.tolist() == [0, 1, 2, 2, 1, 0]


def test_explicit_mask(hand):
    out = summary(hand, np.array([False, True, True, False]), label="jobs 2 and 3")
    assert out["filter"] == "jobs 2 and 3" and out["jobs"] == 2
    assert out["avg_wait"] == pytest.approx(13.5)               # (4 + 23) / 2
    assert out["makespan"] == 26                                # 27 - first submit 1
    assert out["utilization"] == pytest.approx(82 / (4 * 26))   # (80 + 2) / (P * 26)
    assert out["killed"] == 1
    assert "avg_queue_length" not in out                        # a whole-machine figure
    empty = summary(hand, np.zeros(4, bool), label="none")
    assert empty == {"policy": "hand", "jobs": 0, "filter": "none"}


def test_breakdown_by_key(hand):
    rows = breakdown(hand, [j.user for j in hand.workload.jobs])
    assert [r["filter"] for r in rows] == ["7", "8"]            # order of first appearance
    assert [r["jobs"] for r in rows] == [2, 2]
    assert rows[0]["avg_wait"] == pytest.approx(11.5)           # jobs 1, 3: (0 + 23) / 2
    assert rows[1]["avg_wait"] == pytest.approx(2.0)            # jobs 2, 4: (4 + 0) / 2
    assert rows[0]["avg_bounded_slowdown"] == pytest.approx(1.75)  # (1 + 2.5) / 2
    with pytest.raises(ValueError, match="3 entries for 4 jobs"):
        breakdown(hand, [1, 2, 3])


def test_size_class(hand):
    assert size_class(hand) == ["2-8", "2-8", "1", "1"]         # procs 2, 4, 1, 1
    assert size_class(hand, edges=(1, 3)) == ["1-2", ">=3", "1-2", "1-2"]
    rows = breakdown(hand, size_class(hand))
    assert [(r["filter"], r["jobs"]) for r in rows] == [("2-8", 2), ("1", 2)]


@settings(max_examples=60, deadline=None)
@given(w=workloads(max_jobs=10, max_procs=6, K=None, min_jobs=1))
def test_metric_identities_on_random_schedules(w):
    s = simulate(w, EASY())
    m = job_metrics(s)
    out = summary(s)
    assert (m["response"] == m["wait"] + m["run"]).all()
    assert (m["bounded_slowdown"] >= 1).all()
    assert out["jobs"] == len(w.jobs)
    assert 0 <= out["utilization"] <= 1 + 1e-12
    # the time-integral of the queue length is the sum of the waits
    assert out["avg_queue_length"] * out["makespan"] == pytest.approx(float(m["wait"].sum()))
    # a breakdown by one key for every job is the summary itself
    (row,) = breakdown(s, ["x"] * len(w.jobs))
    assert row["avg_wait"] == out["avg_wait"] and row["utilization"] == out["utilization"]
