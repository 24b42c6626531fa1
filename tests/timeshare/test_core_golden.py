"""Golden time-sharing scenarios on 1-2 nodes; every time (µs) derived by hand."""

from __future__ import annotations

from sim.timeshare import Cluster, Compute, Policy, Recv, Send, WorkingSet
from sim.timeshare.check import check

MS = 1000


def burst(us):
    def prog(ctx):
        yield Compute(us)
    return prog


def kinds(cl, *ks):
    return [(r[0], r[1], r[3]) + ((r[4],) if r[1] in ("off", "ref") else ())
            for r in cl.log.records if r[1] in ks]


def test_round_robin_two_tasks_one_node():
    # A needs 25 ms, B 15 ms, quantum 10 ms: A 0-10, B 10-20, A 20-30, B 30-35, A 35-40.
    cl = Cluster(1, Policy(quantum_us=10 * MS))
    cl.spawn(0, burst(25 * MS), work=25 * MS)
    cl.spawn(0, burst(15 * MS), work=15 * MS)
    cl.run()
    assert [(t, k) for t, _, k in kinds(cl, "dispatch")] == [
        (0, 0), (10 * MS, 1), (20 * MS, 0), (30 * MS, 1), (35 * MS, 0)]
    assert [t.finish for t in cl.tasks] == [40 * MS, 35 * MS]
    assert check(cl.log.records)["complete"] == 1


def test_exchange_with_spin_then_block():
    # Two ranks compute 5 ms, send, spin 100 µs, block; latency 500 µs. A local task
    # (3 ms) arrives on node 0 at 2 ms and gets node 0 when rank 0 blocks at 5.1 ms, so
    # rank 0 (woken at 5.5 ms) runs only at 8.1 ms and ends at 9.1 ms; rank 1 at 6.5 ms.
    def worker(ctx):
        peers = ctx.cluster.jobs[ctx.task.job]
        yield Compute(5 * MS)
        yield Send(peers[1 - ctx.task.rank], tag=0)
        yield Recv(tag=0, spin_us=100)
        yield Compute(1 * MS)

    cl = Cluster(2, Policy(quantum_us=10 * MS), latency_us=500)
    cl.spawn_job(0, [0, 1], worker, work=6 * MS)
    cl.at(2 * MS, lambda c, t: c.spawn(0, burst(3 * MS), work=3 * MS))
    cl.run()
    assert [t.finish for t in cl.tasks] == [9100, 6500, 8100]
    assert kinds(cl, "dispatch") == [(0, "dispatch", 0), (0, "dispatch", 1),
                                     (5100, "dispatch", 2), (5500, "dispatch", 1),
                                     (8100, "dispatch", 0)]
    assert [r[0] for r in cl.log.records if r[1] == "deliver"] == [5500, 5500]
    assert [r[0] for r in cl.log.records if r[1] == "spin"] == [5000, 5000, 5100, 5100]
    assert cl.tasks[0].cpu == 6100 and cl.tasks[0].work_done == 6000
    check(cl.log.records)


def test_spin_succeeds_without_blocking():
    # Rank 1 sends at 1 ms; rank 0 computes 1.2 ms then spins (1 ms budget) and gets the
    # message delivered at 1.5 ms while spinning: it never blocks and ends at 2.5 ms.
    def worker(ctx):
        peers = ctx.cluster.jobs[ctx.task.job]
        if ctx.task.rank == 1:
            yield Compute(1 * MS)
            yield Send(peers[0])
        else:
            yield Compute(1200)
            yield Recv(spin_us=1 * MS)
            yield Compute(1 * MS)

    cl = Cluster(2, Policy(quantum_us=10 * MS), latency_us=500)
    cl.spawn_job(0, [0, 1], worker)
    cl.run()
    assert cl.tasks[0].finish == 2500
    assert not [r for r in cl.log.records if r[1] == "block"]
    assert cl.tasks[0].cpu == 2500 and cl.tasks[0].work_done == 2200
    check(cl.log.records)


def test_paged_memory_fault_and_global_lru_eviction():
    # M = 1 page. A (1 page, resident) needs 40 ms, B (1 page, not resident) 10 ms,
    # quantum 10 ms, fault 20 ms. A 0-10; B faults at 10 (sleeps to 30); A 10-20, 20-30.
    # At 30 A expires first, then B's page is loaded and evicts A's page (global LRU);
    # A is picked first and faults (sleeps 30-50); B runs 30-40; A's page is loaded at
    # 50 (B's was freed) and A runs 50-60.
    cl = Cluster(1, Policy(quantum_us=10 * MS), mem_pages=1, fault_latency_us=20 * MS)
    cl.spawn(0, burst(40 * MS), vir_mem=1, ws=WorkingSet(1, 1.0, 0.0, 0), resident=1,
             work=40 * MS)
    cl.spawn(0, burst(10 * MS), vir_mem=1, ws=WorkingSet(1, 1.0, 0.0, 0), work=10 * MS)
    cl.run()
    assert kinds(cl, "ref") == [
        (0, "ref", 0, 0), (10 * MS, "ref", 1, 0), (10 * MS, "ref", 0, 0),
        (20 * MS, "ref", 0, 0), (30 * MS, "ref", 0, 0), (30 * MS, "ref", 1, 0),
        (50 * MS, "ref", 0, 0)]
    hits = [r[5] for r in cl.log.records if r[1] == "ref"]
    assert hits == [1, 0, 1, 1, 0, 1, 1]
    loads = [(r[0], r[3], r[5]) for r in cl.log.records if r[1] == "load"]
    assert loads == [(0, 0, None), (30 * MS, 1, (0, 0)), (50 * MS, 0, None)]
    assert [t.finish for t in cl.tasks] == [60 * MS, 40 * MS]
    assert [t.faults for t in cl.tasks] == [1, 1]
    check(cl.log.records)


def test_stop_and_continue():
    # A (30 ms) is stopped at 5 ms and continued at 12 ms; B (5 ms) arrives at 0 behind A.
    # A 0-5, B 5-10, idle, A 12-22-32-37.
    cl = Cluster(1, Policy(quantum_us=10 * MS))
    cl.spawn(0, burst(30 * MS), work=30 * MS)
    cl.spawn(0, burst(5 * MS), work=5 * MS)
    cl.at(5 * MS, lambda c, t: c.stop(0))
    cl.at(12 * MS, lambda c, t: c.cont(0))
    cl.run()
    assert [(t, k) for t, _, k in kinds(cl, "dispatch")] == [
        (0, 0), (5 * MS, 1), (12 * MS, 0), (22 * MS, 0), (32 * MS, 0)]
    assert [t.finish for t in cl.tasks] == [37 * MS, 10 * MS]
    check(cl.log.records)
