"""Regression tests for bugs the property tests found: two overrun="run" bugs in
heuristics/backfill.py (an overrun with an empty EASY queue; simultaneous overruns under
conservative) and a non-atomic failed reserve in sim/profile.py (K >= 2).
Times are integer seconds.
"""

from __future__ import annotations

import pytest

from heuristics.backfill import EASY, Conservative
from instances.job import Job, Workload
from sim.batch.machine import simulate
from sim.batch.validate import validate


def test_easy_run_overrun_with_empty_queue():
    # One job, requested 1 s, runs 2 s, nobody waiting. At t=1 the overrun notice
    # arrives; EASY.schedule returns [] before _extend_overdue because the queue is
    # empty, so next_wakeup(1) returns 1 and simulate raises
    # PolicyError("easy: wake-up 1 is not after now=1").
    w = Workload((Job(1, 0, 2, 1, (1,)),), (1,))
    s = simulate(w, EASY(), overrun="run")
    validate(s)
    assert s.start.tolist() == [0] and s.end.tolist() == [2]


def test_conservative_run_two_simultaneous_overruns_raise():
    # Two jobs pass their request at t=1 while job 3 waits. _reserve_forced runs once
    # per overdue job and releases job 3's reservation each time; the second time its
    # res is -1 (clipped to the profile start), so Profile.release raises
    # ValueError("resource 0: free capacity would become 12 at t=2 (capacity 8)").
    w = Workload((Job(1, 0, 5, 1, (1,)), Job(2, 0, 6, 1, (4,)), Job(3, 0, 7, 8, (4,))), (8,))
    s = simulate(w, Conservative(), overrun="run")
    validate(s)
    # jobs 1 and 2 run to 5 and 6; job 3 (4 procs) fits beside job 2 once job 1 ends
    assert s.start.tolist() == [0, 0, 5]


def test_conservative_run_two_simultaneous_overruns_corrupt_profile():
    # Same cause, silent variant: the double release frees [1,2) of job 1's fresh
    # extension, the compression then places job 3 at 1 and simulate raises
    # PolicyError("conservative: job 3 started at 1 needs 1 of resource 0, 0 free").
    w = Workload((Job(1, 0, 2, 1, (1,)), Job(2, 0, 2, 1, (1,)), Job(3, 1, 3, 3, (1,))), (2,))
    s = simulate(w, Conservative(), overrun="run")
    validate(s)
    # jobs 1 and 2 really end at 2; job 3 can start only then
    assert s.start.tolist() == [0, 0, 2]


def test_profile_failed_reserve_is_atomic_across_resources():
    # sim/profile.py _add applies resource 0 before checking resource 1; when resource 1
    # does not fit, resource 0 stays reduced: free on [5,10) becomes (1, 1) instead of
    # staying (3, 1), and (2, 4) on [10,15) instead of (4, 4).
    from sim.profile import Profile

    p = Profile((4, 4))
    p.reserve(0, 10, (1, 3))
    with pytest.raises(ValueError, match="resource 1"):
        p.reserve(5, 10, (2, 2))
    assert p.free_at(5) == (3, 1)
    assert p.free_at(10) == (4, 4)
