"""Per-month and per-class breakdowns of one continuous simulation."""

from __future__ import annotations

import numpy as np
import pytest

from heuristics.backfill import EASY
from instances.months import split_months
from sim.batch.machine import simulate
from sim.batch.metrics import breakdown, by_month, month_labels, size_class, summary
from sim.batch.runner import load_workload


@pytest.fixture(scope="module")
def kth_schedule():
    return simulate(load_workload("KTH-SP2", procs=128), EASY())


def test_month_rows_partition_the_jobs_and_agree_with_the_mask(kth_schedule):
    rows = by_month(kth_schedule)
    w = kth_schedule.workload
    assert [r["filter"] for r in rows] == [label for label, _ in split_months(w)]
    assert sum(r["jobs"] for r in rows) == len(w)
    labels = np.array(month_labels(w))
    oct96 = summary(kth_schedule, labels == "1996-10", label="1996-10")
    assert rows[1] == oct96
    waits = sum(r["avg_wait"] * r["jobs"] for r in rows) / len(w)
    assert waits == pytest.approx(summary(kth_schedule)["avg_wait"])


def test_size_classes_follow_the_processor_edges(kth_schedule):
    labels = size_class(kth_schedule, edges=(1, 2, 9, 33))
    for job, label in zip(kth_schedule.workload.jobs, labels, strict=True):
        p = job.procs
        expected = "1" if p == 1 else "2-8" if p <= 8 else "9-32" if p <= 32 else ">=33"
        assert label == expected
    rows = breakdown(kth_schedule, labels)
    assert sum(r["jobs"] for r in rows) == len(kth_schedule.workload)
    with pytest.raises(ValueError, match="keys has 3 entries"):
        breakdown(kth_schedule, ["a", "b", "c"])
