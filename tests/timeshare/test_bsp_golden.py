"""Golden BSP scenarios under Karl's scheduling servers; every time (µs) derived by hand.

Two threads on two nodes, one superstep, central barrier (thread 1 sends "arrived" to
thread 0, which sends "release"), message latency 500 µs, server cost c_srv = 50 µs,
control-message latency 300 µs without jitter, schedule 2 of 10 slots of 20 ms (the
program owns slots 0 and 1 of a 200 ms round), wake-up 100 µs controlled / 1 ms
time-sharing.
"""

from __future__ import annotations

import random

from sim.timeshare import Cluster
from sim.timeshare.bsp import BSPParams, bsp_program, server_policy
from sim.timeshare.check import check
from sim.timeshare.servers import (
    CONTROLLED,
    TIMESHARE,
    ServerParams,
    ServerPolicy,
    SlotSchedule,
    install_servers,
)

MS = 1000


def run(regime: str, computes, start: int, phases, *, spin_us: int = 0,
        wakeup: str = "immediate", pattern: str = "barrier", tick_wakeups: str | None = None):
    extra = {} if tick_wakeups is None else {"tick_wakeups": tick_wakeups}
    bsp = BSPParams(g_us=1000, n=1, p=2, spin_us=spin_us, pattern=pattern, proc_us=1000,
                    **extra)
    sp = ServerParams(regime=regime, jitter_us=0, ctl_block_wakeup=wakeup)
    pol = server_policy(sp, {0: bsp})
    assert type(pol) is ServerPolicy
    cl = Cluster(2, pol, latency_us=500, log=True)
    klass = TIMESHARE if regime == "none" else CONTROLLED
    tasks = cl.spawn_job(0, [0, 1], bsp_program(bsp, computes, start), klass=klass,
                         work=None)
    actions: list = []
    servers = install_servers(cl, SlotSchedule.for_share(0.2), sp,
                              {0: [t.tid for t in tasks]}, phases=phases,
                              rng=random.Random(0), action_log=actions)
    cl.run()
    check(cl.log.records, daemons=[s.tid for s in servers])
    return cl, [t.finish for t in tasks], actions


def test_single_barrier_no_server():
    # both compute 1 ms from 210 ms; arrival delivered at 211.5, thread 0 woken after
    # w_unctl = 1 ms at 212.5 and releases; release delivered 213.0, woken 214.0.
    _, fin, actions = run("none", [[1 * MS], [1 * MS]], 210 * MS, [0, 0])
    assert fin == [212_500, 214_000]
    assert actions == []


def test_single_barrier_synchronized_across_the_window_end():
    # Master (node 0) boundaries at m*20 ms; it stops thread 0 at 240.05 ms (slot 2 +
    # c_srv) and continues it at 400.05 ms. The slave acts 300 µs later (+ c_srv):
    # stop at 240.35, continue at 400.35. Both compute 239.0 -> 240.0 (the compute end
    # precedes the server wake-up at the same instant). The arrival, delivered at 240.5,
    # wakes thread 0 (stopped) at 240.6; it runs at 400.05, releases and ends. The
    # release is delivered at 400.55 and thread 1 is woken at 400.65 (w_ctl = 100 µs).
    cl, fin, actions = run("sync", [[1 * MS], [1 * MS]], 239 * MS, [0, 0])
    assert fin == [400_050, 400_650]
    acts = [(t, k, s) for t, k, s in actions if 239 * MS <= t <= 401 * MS]
    assert (240_050, 0, 2) in acts and (240_350, 1, 2) in acts
    assert (400_050, 0, 0) in acts and (400_350, 1, 0) in acts
    stops = [(r[0], r[3]) for r in cl.log.records if r[1] in ("stop", "cont")
             and 239 * MS <= r[0] <= 401 * MS]
    assert stops == [(240_050, 0), (240_350, 1), (400_050, 0), (400_350, 1)]


def test_single_barrier_unsynchronized_costs_rounds():
    # Node 1's slot 0 starts at 100 ms + m*200 ms: its window is [300.05, 340.05) ms.
    # Thread 0 computes 210 -> 211 and blocks; thread 1 is stopped until 300.05,
    # computes to 301.05 and sends; delivered 301.55, thread 0 (stopped since 240.05)
    # woken at 301.65, runs at 400.05 and releases; delivered 400.55 to thread 1,
    # woken 400.65 while stopped (since 340.05), continued at 500.05.
    _, fin, _ = run("unsync", [[1 * MS], [1 * MS]], 210 * MS, [0, 100 * MS])
    assert fin == [400_050, 500_050]


def test_tick_wakeup_waits_for_the_timer():
    # As the no-server scenario timing, but controlled inside the window (start 210 ms):
    # arrival delivered 211.5; with ctl_block_wakeup = tick thread 0 is picked up at the
    # first tick (node 0's ticks at multiples of 10 ms) at or after 211.6: 220.0 ms; the
    # server's slot-1 action also runs at 220.0 (class 2 first, 50 µs), so thread 0 runs
    # at 220.05 and releases; delivered 220.55, slave's tick phase (0) -> woken at 230.0.
    _, fin, _ = run("sync", [[1 * MS], [1 * MS]], 210 * MS, [0, 0], wakeup="tick")
    assert fin == [220_050, 230_000]


def test_tick_on_receives_only_spares_the_barrier():
    # The tick scenario above with tick_wakeups = "receive": the barrier wake-ups take
    # w_ctl as under "immediate". Arrival delivered 211.5, thread 0 woken 211.6 and
    # releases; delivered 212.1, thread 1 woken 212.2.
    _, fin, _ = run("sync", [[1 * MS], [1 * MS]], 210 * MS, [0, 0], wakeup="tick",
                    tick_wakeups="receive")
    assert fin == [211_600, 212_200]
    _, imm, _ = run("sync", [[1 * MS], [1 * MS]], 210 * MS, [0, 0])
    assert imm == fin
    # the default is every wake-up on the tick
    assert BSPParams(g_us=1000).tick_wakeups == "all"
    _, every, _ = run("sync", [[1 * MS], [1 * MS]], 210 * MS, [0, 0], wakeup="tick",
                      tick_wakeups="all")
    assert every == [220_050, 230_000]


def test_tick_on_receives_delays_the_exchange():
    # Complete pattern, processing 1 ms per message, tick_wakeups = "receive". Barrier as
    # above: thread 0 woken 211.6, sends "release" and its exchange message at 211.6 and
    # blocks in the exchange receive. Both reach thread 1 at 212.1; it wakes at 212.2
    # (barrier: w_ctl), sends its exchange message, finds thread 0's buffered and processes
    # it: ends 213.2. Thread 1's message reaches thread 0 at 212.7: an exchange receive,
    # so thread 0 waits for node 0's next tick (at or after 212.8): 220.0, where the
    # server's slot-1 action runs first (50 µs); processing 220.05 -> 221.05.
    _, fin, _ = run("sync", [[1 * MS], [1 * MS]], 210 * MS, [0, 0], wakeup="tick",
                    pattern="complete", tick_wakeups="receive")
    assert fin == [221_050, 213_200]
    # under "immediate" thread 0 wakes at 212.8 and ends at 213.8
    _, imm, _ = run("sync", [[1 * MS], [1 * MS]], 210 * MS, [0, 0], pattern="complete",
                    tick_wakeups="receive")
    assert imm == [213_800, 213_200]


def test_spin_that_succeeds():
    # No server. Thread 1 computes 520 µs: its arrival is delivered at 1020 while thread 0
    # (compute 1000) spins (100 µs budget): received at 1020, release sent, thread 0
    # ends at 1020. Thread 1's own spin (520 -> 620) fails, it blocks; release delivered
    # at 1520, woken at 2520 (w_unctl).
    cl, fin, _ = run("none", [[1000], [520]], 0, [0, 0], spin_us=100)
    assert fin == [1020, 2520]
    spins = [(r[0], r[3], r[4]) for r in cl.log.records if r[1] == "spin"]
    assert spins == [(520, 1, 1), (620, 1, 0), (1000, 0, 1), (1020, 0, 0)]
    assert cl.tasks[0].cpu == 1020 and cl.tasks[0].work_done == 1000


def test_spin_that_blocks():
    # Thread 1 computes 900: arrival delivered at 1400; thread 0 spins 1000 -> 1100,
    # blocks, is woken at 2400 (w_unctl) and releases; delivered 2900, woken 3900.
    cl, fin, _ = run("none", [[1000], [900]], 0, [0, 0], spin_us=100)
    assert fin == [2400, 3900]
    assert cl.tasks[0].cpu == 1100
    blocks = [(r[0], r[3]) for r in cl.log.records if r[1] == "block"]
    assert blocks == [(1000, 1), (1100, 0)]
