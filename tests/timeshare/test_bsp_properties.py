"""Properties of BSP runs under scheduling servers, re-checked from the event log alone.

- the independent checker (``sim.timeshare.check``): a stopped task never runs, every
  message is delivered once after the latency and consumed once;
- a controlled task runs only between a ``cont`` and the next ``stop`` of its own, and
  never gets more CPU per round than its slots (replayed here from the log records);
- determinism: same inputs and seed, same runtimes.
"""

from __future__ import annotations

import pytest

from sim.timeshare.bsp import BSPParams, NetParams, measure_cell, run_measurement, share_run
from sim.timeshare.check import check
from sim.timeshare.servers import ServerParams, SlotSchedule

CASES = [
    ("sync", "barrier", 0, "immediate"),
    ("sync", "complete", 100, "tick"),
    ("unsync", "barrier", 100, "immediate"),
    ("none", "complete", 0, "immediate"),
]


def _cpu_windows(records, tid):
    """Replay (dispatch, off) and (cont, stop) intervals of ``tid`` from the log."""
    runs, allowed = [], []
    on = cont = None
    stopped = False
    for t, kind, _node, task, _a, _b in records:
        if task != tid:
            continue
        if kind == "dispatch":
            on = t
        elif kind == "off":
            runs.append((on, t))
            on = None
        elif kind == "stop":
            allowed.append((cont, t))
            stopped, cont = True, None
        elif kind == "cont":
            cont, stopped = t, False
        elif kind == "arrive":
            cont = t
    if not stopped and cont is not None:
        allowed.append((cont, float("inf")))
    return runs, allowed


@pytest.mark.parametrize("regime,pattern,spin,wake", CASES)
def test_log_checks_and_share_limit(regime, pattern, spin, wake):
    bsp = BSPParams(g_us=3_000, v=0.5, n=15, pattern=pattern, spin_us=spin, proc_us=2_000)
    sch = SlotSchedule.for_share(0.2)
    for seed in range(3):
        r = run_measurement(bsp, sch, ServerParams(regime=regime, ctl_block_wakeup=wake),
                            NetParams(), seed=seed, log=True)
        cl = r["cluster"]
        recs = cl.log.records
        daemons = [t.tid for t in cl.tasks if t.daemon]
        counts = check(recs, daemons=daemons)
        assert counts["complete"] == 1
        sends = [x for x in recs if x[1] == "send"]
        delivers = [x for x in recs if x[1] == "deliver"]
        assert sorted(x[4] for x in sends) == sorted(x[4] for x in delivers)
        assert len({x[4] for x in delivers}) == len(delivers)
        if regime == "none":
            continue
        L, k = sch.slot_us, len(sch.slots_of(0))
        for tid in cl.jobs[0]:
            runs, allowed = _cpu_windows(recs, tid)
            assert runs
            for a, b in runs:   # every CPU interval inside one allowed interval
                assert any(c <= a and b <= s for c, s in allowed), (tid, a, b)
            for c, s in allowed:   # at most k slots' worth per window (one per round)
                if s != float("inf") and c > 0:
                    assert s - c <= k * L + 1_000


def test_share_never_exceeds_slots_on_one_node():
    # Linpack alone (no hogs, no housekeeping) under a 30% share: its CPU over any
    # whole number of rounds is at most 30% (plus the rounding of its start/end).
    for seed in range(3):
        r = share_run(0.3, 0, work_us=300_000, housekeeping=0.0, seed=seed, log=True)
        assert r["share"] <= 0.3 + 1e-9
        assert r["share"] > 0.25
        recs = r["cluster"].log.records
        check(recs, daemons=[t.tid for t in r["cluster"].tasks if t.daemon])


def test_determinism():
    bsp = BSPParams(g_us=1_000, v=1.0, n=10, pattern="complete", spin_us=100, proc_us=1_000)
    sch = SlotSchedule.for_share(0.2)
    sp = ServerParams(regime="sync", ctl_block_wakeup="tick")
    a = measure_cell(bsp, sch, sp, i=4, seed=7)
    b = measure_cell(bsp, sch, sp, i=4, seed=7)
    assert a["times_us"] == b["times_us"] and a["events"] == b["events"]
    c = measure_cell(bsp, sch, sp, i=4, seed=8)
    assert c["times_us"] != a["times_us"]


def test_synchronized_beats_unsynchronized_and_factor_five_bound():
    # Coarse grain: the controlled runtime is at least the CPU time over the 20% share
    # (minus one window of head start) and the synchronized servers beat unsynchronized.
    bsp = BSPParams(g_us=20_000, v=0.0, n=6)
    sch = SlotSchedule.for_share(0.2)
    sync = measure_cell(bsp, sch, ServerParams(regime="sync"), i=6)["mean_us"]
    unsync = measure_cell(bsp, sch, ServerParams(regime="unsync"), i=6)["mean_us"]
    assert sync < unsync
    assert sync >= 6 * 20_000 / 0.2 - 40_000


@pytest.mark.parametrize("kwargs,field", [
    (dict(share=1.5), "share"),
    (dict(share=1.0), "share"),
    (dict(slot_us=30_000), "slot_us"),
    (dict(share=0.25), "share"),
])
def test_bad_schedule(kwargs, field):
    with pytest.raises(ValueError, match=f"field '{field}'"):
        SlotSchedule.for_share(**{"share": 0.2, **kwargs})


@pytest.mark.parametrize("kwargs,field", [
    (dict(g_us=-1), "g_us"), (dict(v=1.01), "v"), (dict(v=-0.1), "v"),
    (dict(spin_us=-1), "spin_us"), (dict(pattern="ring"), "pattern"),
])
def test_bad_bsp(kwargs, field):
    with pytest.raises(ValueError, match=f"field '{field}'"):
        BSPParams(**{"g_us": 100, **kwargs})


def test_server_acting_only_on_changes():
    # act_every_slot=False: the servers act only at the boundaries of slots 0 and 2 (the
    # allowed set changes), and the runtime stays within 2% of the spec's model.
    bsp = BSPParams(g_us=5_000, v=0.5, n=10)
    sch = SlotSchedule.for_share(0.2)
    full, fast = [], []
    for every, acts_out in ((True, full), (False, fast)):
        for seed in range(4):
            acts: list = []
            r = run_measurement(bsp, sch, ServerParams(regime="sync", act_every_slot=every),
                                seed=seed, action_log=acts)
            acts_out.append((r["runtime_us"], acts))
    for (rt_full, a_full), (rt_fast, a_fast) in zip(full, fast, strict=True):
        assert {s for _, _, s in a_fast[4:]} <= {0, 2}
        assert {s for _, _, s in a_full} - {0, 2}
        assert abs(rt_fast - rt_full) <= 0.02 * rt_full


def test_alltoall_barrier_and_several_apps_pass_the_checker():
    from sim.timeshare.bsp import App, run_apps
    bsp = BSPParams(g_us=2_000, v=0.5, n=8, barrier="alltoall", pattern="complete",
                    proc_us=500, spin_us=100)
    r = run_measurement(bsp, SlotSchedule.for_share(0.2), ServerParams(regime="sync"),
                        seed=3, log=True)
    cl = r["cluster"]
    assert check(cl.log.records, daemons=[t.tid for t in cl.tasks if t.daemon])["complete"]
    # all-to-all: each of the 4 threads sends 3 arrivals and 3 exchange messages a step
    assert sum(1 for x in cl.log.records if x[1] == "send") == 8 * 4 * 6
    apps = [App((0, 1), BSPParams(g_us=1_000, n=4, p=2)),
            App((1, 2), BSPParams(g_us=1_000, n=4, p=2))]
    res = run_apps(apps, SlotSchedule(20_000, (0, 1, None, None)),
                   ServerParams(regime="sync"), 3, seed=2, log=True)
    cl = res["cluster"]
    assert check(cl.log.records, daemons=[t.tid for t in cl.tasks if t.daemon])["complete"]
    with pytest.raises(ValueError, match="two applications"):
        run_apps(apps, SlotSchedule(20_000, ((0, 1), None)), ServerParams(regime="sync"), 3)


@pytest.mark.parametrize("barrier", ["central", "alltoall"])
def test_tick_on_receives_only(barrier):
    """``tick_wakeups="receive"``: the barrier pattern runs exactly as under ``immediate``
    (it has no exchange receive); the complete pattern pays the tick on its exchange only,
    so it lies between ``immediate`` and every wake-up on the tick; ``"all"`` is the
    default."""
    sch = SlotSchedule.for_share(0.2)

    def rt(pattern, wake, reading=None, seed=3):
        extra = {} if reading is None else {"tick_wakeups": reading}
        bsp = BSPParams(g_us=1_000, v=0.5, n=8, pattern=pattern, barrier=barrier,
                        proc_us=1_000, **extra)
        sp = ServerParams(regime="sync", ctl_block_wakeup=wake)
        return run_measurement(bsp, sch, sp, seed=seed)["runtime_us"]

    for seed in range(3):
        assert rt("barrier", "tick", "receive", seed) == rt("barrier", "immediate", None, seed)
        assert rt("barrier", "tick", "all", seed) == rt("barrier", "tick", None, seed)
        assert rt("complete", "tick", "all", seed) == rt("complete", "tick", None, seed)
    imm = sum(rt("complete", "immediate", None, s) for s in range(3))
    rec = sum(rt("complete", "tick", "receive", s) for s in range(3))
    every = sum(rt("complete", "tick", None, s) for s in range(3))
    assert imm < rec < every
    with pytest.raises(ValueError, match="tick_wakeups"):
        BSPParams(g_us=1_000, tick_wakeups="barrier")
