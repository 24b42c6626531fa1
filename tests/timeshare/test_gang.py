"""The gang-scheduled reference: checked runs, explicit coordination."""

from __future__ import annotations

from heuristics.gang import Gang
from sim.timeshare import Cluster, Compute
from sim.timeshare.check import check
from sim.timeshare.csm import run_point
from sim.timeshare.workload import CSMConfig

MS = 1000


def _burst(us):
    def prog(ctx):
        yield Compute(us)
    return prog


def test_two_jobs_on_the_same_nodes_alternate_by_slot():
    # Jobs A and B both on nodes {0, 1} conflict, so they get rows of their own: in
    # every 10 ms slot only one job's tasks are dispatched, and the two tasks of a job
    # run in the same slots and end together.
    cl = Cluster(2, Gang(slot_us=10 * MS))
    cl.policy.start(cl)
    cl.at(0, lambda c, t: c.spawn_job(0, [0, 1], _burst(25 * MS), work=25 * MS))
    cl.at(0, lambda c, t: c.spawn_job(1, [0, 1], _burst(25 * MS), work=25 * MS))
    cl.run()
    check(cl.log.records)
    runs = {}
    for r in cl.log.records:
        if r[1] == "dispatch":
            runs.setdefault(r[0] // (10 * MS), set()).add(cl.tasks[r[3]].job)
    assert all(len(jobs) == 1 for jobs in runs.values())
    # tasks of one job finish together (perfect coordination)
    assert cl.tasks[0].finish == cl.tasks[1].finish
    assert cl.tasks[2].finish == cl.tasks[3].finish


def test_gang_csm_workload_passes_the_checker():
    cfg = CSMConfig(n_nodes=4, n_jobs=24, mem_pages=4096, mest=1024, tc_scale=0.002,
                    mem_scale=0.05, small_sizes=(1, 2), large_sizes=(4,), mfreq_ms=50.0)
    g = Gang(slot_us=100 * MS)
    r = run_point(cfg, g, 3, log=True, setup=g.start)
    assert check(r.cluster.log.records)["complete"] == 1


def _three_jobs(assignment):
    # A on node 0, B on node 1, C on both; 10 ms slots, 25 ms of work each
    cl = Cluster(2, Gang(slot_us=10 * MS, assignment=assignment))
    cl.policy.start(cl)
    cl.at(0, lambda c, t: c.spawn_job(0, [0], _burst(25 * MS), work=25 * MS))
    cl.at(0, lambda c, t: c.spawn_job(1, [1], _burst(25 * MS), work=25 * MS))
    cl.at(0, lambda c, t: c.spawn_job(2, [0, 1], _burst(25 * MS), work=25 * MS))
    cl.run()
    check(cl.log.records)
    slots = {}
    for r in cl.log.records:
        if r[1] == "dispatch":
            slots.setdefault(r[0] // (10 * MS), set()).add(cl.tasks[r[3]].job)
    return slots


def test_fixed_assignment_gives_each_label_its_own_row():
    # first fit puts A and B in one row; the assignment {A: 0, B: 1, C: 2} keeps them apart
    ff = _three_jobs(None)
    assert any(jobs == {0, 1} for jobs in ff.values())
    fixed = _three_jobs({0: 0, 1: 1, 2: 2})
    assert all(len(jobs) == 1 for jobs in fixed.values())
    assert {j for jobs in fixed.values() for j in jobs} == {0, 1, 2}


def test_fixed_assignment_refuses_jobs_sharing_a_node_in_one_row():
    import pytest

    with pytest.raises(ValueError, match="shares nodes"):
        _three_jobs({0: 0, 1: 1, 2: 0})
