"""User feedback in the Python engine (Zakay & Feitelson): a dependent job is submitted its
think time after its predecessor's end in the simulated schedule. Golden cases checked by
hand."""

from __future__ import annotations

import numpy as np
import pytest

from instances.dependencies import dependencies
from instances.job import Job, Workload
from sim.batch.machine import simulate
from sim.batch.metrics import summary
from sim.batch.validate import validate
from sim.registry import make_policy

B, A = 1, 2  # users


def _golden(a2_submit: int = 150) -> Workload:
    """One processor. B's job of 500 s (id 1) and A's a1 (id 2: 100 s, log wait 0, so its
    log end is 100) at 0; A's a2 (id 3, 10 s) at ``a2_submit``."""
    return Workload((Job(1, 0, 500, 500, (1,), B, wait=0),
                     Job(2, 0, 100, 100, (1,), A, wait=0),
                     Job(3, a2_submit, 10, 10, (1,), A, wait=0)), (1,), "golden")


@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_golden_dependent_job_arrives_think_time_after_simulated_end(policy):
    """a1 waits behind B's job until 500 and ends at 600; a2 came 50 s after a1's log end
    (100), so it arrives at 650 instead of 150 and starts then, on an idle machine."""
    w = _golden()
    table = dependencies(w)
    assert table == {3: (2, 50)}
    plain = simulate(w, make_policy(policy))
    assert plain.start.tolist() == [0, 500, 600]   # a2 at its log time: queued behind a1
    s = simulate(w, make_policy(policy), dependencies=table)
    assert [j.submit for j in s.workload.jobs] == [0, 0, 650]
    assert [j.id for j in s.workload.jobs] == [1, 2, 3]
    assert s.start.tolist() == [0, 500, 650] and s.end.tolist() == [500, 600, 660]
    validate(s)
    assert summary(s)["avg_wait"] == pytest.approx(500 / 3)   # waits 0, 500, 0
    assert summary(plain)["avg_wait"] == pytest.approx((500 + 450) / 3)


def test_zero_think_time_arrives_at_the_end_instant():
    """a2 submitted at a1's log end (think 0) arrives when a1 ends in the simulation, 600,
    and starts in the decision of that instant."""
    w = _golden(100)
    table = dependencies(w)
    assert table == {3: (2, 0)}
    s = simulate(w, make_policy("fcfs"), dependencies=table)
    assert [j.submit for j in s.workload.jobs] == [0, 0, 600]
    assert s.start.tolist() == [0, 500, 600]
    validate(s)


def test_realised_order_permutes_the_arrays():
    """A dependent job released after a later independent one comes after it in the
    realised workload, and the start and end arrays follow."""
    w = Workload((Job(1, 0, 500, 500, (1,), B, wait=0),
                  Job(2, 0, 100, 100, (1,), A, wait=0),
                  Job(3, 150, 10, 10, (1,), A, wait=0),    # depends on 2: arrives at 650
                  Job(4, 620, 10, 10, (1,), 5, wait=0)), (1,), "order")
    s = simulate(w, make_policy("fcfs"), dependencies=dependencies(w))
    assert [j.id for j in s.workload.jobs] == [1, 2, 4, 3]
    assert [j.submit for j in s.workload.jobs] == [0, 0, 620, 650]
    assert s.start.tolist() == [0, 500, 620, 650]
    validate(s)


def test_compiled_engine_refused_and_auto_takes_python():
    w = _golden()
    table = dependencies(w)
    with pytest.raises(ValueError, match="--engine compiled.*--feedback"):
        simulate(w, make_policy("easy"), engine="compiled", dependencies=table)
    s = simulate(w, make_policy("easy"), engine="auto", dependencies=table)
    assert s.engine == "python" and "feedback" in s.engine_reason
    assert s.start.tolist() == [0, 500, 650]


def test_bad_table_refused():
    w = _golden()
    with pytest.raises(ValueError, match="job 3 waits for 9"):
        simulate(w, make_policy("fcfs"), dependencies={3: (9, 5)})
    with pytest.raises(ValueError, match="never arrived"):
        simulate(w, make_policy("fcfs"), dependencies={2: (3, 0), 3: (2, 0)})


def test_kth_sp2_slice_deterministic_and_valid():
    """Feedback on the first 3,000 jobs of KTH-SP2: the same schedule twice, every job
    once in the realised workload, no dependent job before its predecessor's end plus its
    think time, and the independent jobs at their log times."""
    from sim.batch.runner import load_workload

    full = load_workload("KTH-SP2")
    w = Workload(full.jobs[:3000], full.capacity, full.name, full.header)
    table = dependencies(w)
    a = simulate(w, make_policy("easy"), dependencies=table)
    b = simulate(w, make_policy("easy"), dependencies=table)
    assert a.workload.jobs == b.workload.jobs and np.array_equal(a.start, b.start)
    validate(a)
    pos = {j.id: k for k, j in enumerate(a.workload.jobs)}
    assert sorted(pos) == sorted(j.id for j in w.jobs)
    log = {j.id: j for j in w.jobs}
    for j in a.workload.jobs:
        if j.id in table:
            pred, think = table[j.id]
            assert j.submit == a.end[pos[pred]] + think
        else:
            assert j.submit == log[j.id].submit
