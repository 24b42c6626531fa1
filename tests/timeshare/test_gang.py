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
