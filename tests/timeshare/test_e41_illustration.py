"""E-4.1, the paper's Fig. 2 illustration, as far as its numbers go (spec 3.7 target 5).

Paper: 3 nodes, J1 and J2 with one task per node (intensive message passing) and one
local task L per node, memory over M, m_1 < m_2; no other parameter is given. (a) without
memory control L finishes at 300, J1 at 450, J2 at 500 units; (b) with priority to the
task of lowest fault rate J1 finishes at 350, L unchanged, J2 earlier than 500.

Our instance (chosen, the paper gives none): M = 100 pages, m_1 = 30, m_2 = 50, m_L = 40
pages (120 > M with either job), the whole address space as working set; tc 10 s for L
and 15 s for the jobs; the jobs pass a ring message every 100 ms of CPU; quantum 100 ms,
fault 20 ms, MNOD = MNOL = 2. "No memory control" is PRED (CSM without its memory
mode) and RR. What our node model reproduces, and is asserted here: J1 finishes much
earlier under CSM than without control (the paper: 450 -> 350, -22%). What it does not,
and is asserted as measured so that a change shows up: J2 is not earlier (within 2%), and
L is not unchanged: CSM's priority to the jobs delays it (the README says so). Times in
the simulator are microseconds; the assertions use seconds.
"""

from __future__ import annotations

from heuristics.coscheduling import by_name
from sim.timeshare.check import check
from sim.timeshare.cluster import Cluster
from sim.timeshare.csm import initial_resident, local_program
from sim.timeshare.memory import WorkingSet
from sim.timeshare.ops import Compute, Recv, Send

MS = 1000
S = 1_000_000


def _ring(tc_us: int, rounds: int):
    """A job task: ``rounds`` equal bursts; after each, send to the next rank and
    receive from the previous one (3-task jobs, so not the power-of-two exchange)."""
    def prog(ctx):
        t = ctx.task
        peers = ctx.cluster.jobs[t.job]
        n = len(peers)
        b = tc_us // rounds
        for k in range(rounds):
            yield Compute(b if k < rounds - 1 else tc_us - b * (rounds - 1))
            yield Send(peers[(t.rank + 1) % n], tag=k)
            yield Recv(src=peers[(t.rank - 1) % n], tag=k)
    return prog


def _fig2(policy: str) -> dict[str, float]:
    M, m1, m2, mL = 100, 30, 50, 40
    tcL, tcJ = 10 * S, 15 * S
    cl = Cluster(3, by_name(policy, quantum_us=100 * MS, mnod=2, mnol=2), latency_us=100,
                 mem_pages=M, fault_latency_us=20 * MS, seed=0, log=True)
    names: dict[int, str] = {}

    def go(c: Cluster, now: int) -> None:
        for k in range(3):
            t = c.spawn(k, local_program(tcL), vir_mem=mL,
                        ws=WorkingSet(mL, 1.0, 0.0, 0.1 * tcL),
                        resident=initial_resident(c, k, mL), work=tcL)
            names[t.tid] = "L"
        for j, m in enumerate((m1, m2)):
            per = [{"vir_mem": m, "ws": WorkingSet(m, 1.0, 0.0, 0.1 * tcJ),
                    "resident": initial_resident(c, k, m)} for k in range(3)]
            for t in c.spawn_job(j, range(3), _ring(tcJ, tcJ // (100 * MS)), per_task=per,
                                 work=tcJ):
                names[t.tid] = f"J{j + 1}"

    cl.at(0, go)
    cl.run()
    assert check(cl.log.records)["complete"] == 1
    fin: dict[str, float] = {}
    for t in cl.tasks:
        fin[names[t.tid]] = max(fin.get(names[t.tid], 0.0), t.finish / S)
    return fin


def test_fig2_memory_control_brings_j1_forward():
    rr, pred, csm = _fig2("rr"), _fig2("pred"), _fig2("csm")
    # paper (a): L first, then J1, then J2, without memory control
    for run in (rr, pred):
        assert run["L"] < run["J1"] <= run["J2"]
    # paper (b): J1 much earlier with control (paper -22%); ours at least 15% earlier
    assert csm["J1"] <= 0.85 * min(rr["J1"], pred["J1"])
    # not reproduced (paper: J2 earlier, L unchanged): J2 within 2%, L delayed
    assert abs(csm["J2"] - pred["J2"]) <= 0.02 * pred["J2"]
    assert csm["L"] > pred["L"] > rr["L"]
