"""BSP programs under slot-based scheduling servers (Karl), on the time-sharing core.

All times are integer **microseconds**.

A BSP program (spec 2.2.4) has ``p`` threads, one per node. In each of ``n`` supersteps
thread ``r`` computes for ``U(g - g v / 2, g + g v / 2)`` (drawn up front per thread and
step, rounded to µs, from the measurement's seed so that the controlled and the
uncontrolled run of one seed compute the same amounts), then joins a barrier, then (the
``complete`` pattern) sends one short message to every other thread and receives ``p -
1``, processing each received message for ``proc_us`` of CPU. Receives are blocking
(``spin_us = 0``) or two-phase spin-blocking (spin ``spin_us`` of CPU, then block).

Barrier (AMB-2.2, field ``barrier``): ``"central"`` (default; every thread sends
"arrived" to thread 0, which sends "release" to every other thread once it has all
``p - 1``) or ``"alltoall"`` (each sends to each and waits for ``p - 1``).

Which blocked wake-ups wait for the timer tick under ``ctl_block_wakeup="tick"`` (field
``tick_wakeups``): ``"all"`` (default: every blocking receive, barrier messages included)
or ``"receive"`` (only the receives of the complete pattern's message exchange; a thread
released from the barrier wakes after ``w_ctl_us`` as under ``"immediate"``). Under the
barrier pattern ``"receive"`` therefore gives exactly the ``"immediate"`` runs.

One measurement (AMB-2.4) starts at ``T0 = one round`` after the servers start, with
node 0's server phase drawn so that ``T0`` falls uniformly inside thread 0's allocated
window (``measure_start="window"``, default) or uniformly in the round (``"round"``);
it ends when the last thread has finished the ``n``-th superstep. The other nodes' phases
are independent ``U(0, S L)`` (unsynchronized), and every node's timer tick phase is its
server phase modulo the tick (a slave's is uniform). ``i`` measurements use seeds
``seed, seed + 1, ...``; the cell reports mean, std and CV = std / mean.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from sim.timeshare.cluster import Cluster
from sim.timeshare.ops import Compute, Recv, Send, Sleep
from sim.timeshare.servers import (
    CONTROLLED,
    HOUSEKEEPING,
    TIMESHARE,
    ServerParams,
    ServerPolicy,
    SlotSchedule,
    install_servers,
)

__all__ = ["BSPParams", "NetParams", "NoiseParams", "draw_computes", "bsp_program",
           "run_measurement", "measure_cell", "n_rule", "share_run", "run_apps", "PATTERNS",
           "BARRIERS", "TICK_WAKEUPS", "barrier_receive", "server_policy"]

MAX_G_US = 10**6
"""Largest granularity ``g_us`` (µs; 1 s per superstep): the simulated time of a
measurement grows with it and every scheduling slot of it is an event (the default 50
measurements at 10^6 µs take about 40 s)."""

MAX_N = 100_000
"""Most supersteps ``n`` per measurement (ten times the AMB-2.5 rule's cap, :func:`n_rule`):
a measurement draws its compute times before it starts, ``p`` x ``n`` of them."""

MAX_I = 100_000
"""Most measurements ``i`` per cell (the experiments take 50): every measurement's record
is kept until the cell's statistics are taken, and each is a whole simulated run."""

MAX_LATENCY_US = MAX_G_US
"""Longest message latency ``latency_us`` (µs): like the granularity, it stretches the
simulated time of every superstep, whose scheduling slots are all events."""

PATTERNS = ("barrier", "complete")
_BOOSTED = 0.5   # scheduling class of a preempting noise daemon: above TIMESHARE, below CONTROLLED
BARRIERS = ("central", "alltoall")
TICK_WAKEUPS = ("all", "receive")
_BARRIER_TAGS = ("a", "r")   # tag kinds of the barrier's "arrived" and "release" messages


def _check_int(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"field '{name}' must be an integer, got {value!r}")
    if value < minimum:
        if name == "g_us":
            raise ValueError(f"field 'g_us' (granularity) must not be negative, got {value!r}")
        if name == "spin_us":
            raise ValueError(f"field 'spin_us' (spin time) must not be negative, got {value!r}")
        raise ValueError(f"field '{name}' must be >= {minimum}, got {value!r}")
    return value


@dataclass(frozen=True)
class BSPParams:
    """One BSP program (times µs).

    Parameters
    ----------
    g_us : int
        Granularity g, the mean compute time per superstep (>= 0).
    v : float
        Load imbalance as a fraction of g, in [0, 1].
    n : int
        Supersteps per measurement (>= 1).
    p : int
        Threads, one per node (>= 2).
    pattern : {"barrier", "complete"}
    spin_us : int
        Spin time t of the two-phase receive (0 = blocking).
    proc_us : int
        CPU time to process one received message, complete pattern (10 ms).
    barrier : {"central", "alltoall"}
        AMB-2.2.
    tick_wakeups : {"all", "receive"}
        Under ``ctl_block_wakeup="tick"``: ``"all"`` (default) every blocked wake-up waits
        for the node's next timer tick; ``"receive"`` only the message receives of the
        complete pattern do, barrier wake-ups take ``w_ctl_us``.
    """

    g_us: int
    v: float = 0.0
    n: int = 50
    p: int = 4
    pattern: str = "barrier"
    spin_us: int = 0
    proc_us: int = 10_000
    barrier: str = "central"
    tick_wakeups: str = "all"

    def __post_init__(self) -> None:
        _check_int(self.g_us, "g_us", 0)
        if self.g_us > MAX_G_US:
            raise ValueError(f"field 'g_us' (granularity) must be at most {MAX_G_US:.0e} µs, "
                             f"got {self.g_us!r}: a measurement simulates every slot of "
                             f"its supersteps")
        if isinstance(self.v, bool) or not isinstance(self.v, (int, float)) or \
                not 0 <= self.v <= 1:
            raise ValueError(f"field 'v' (load imbalance) must be in [0, 1] (0-100%), "
                             f"got {self.v!r}")
        _check_int(self.n, "n", 1)
        if self.n > MAX_N:
            raise ValueError(f"field 'n' (supersteps) must be at most {MAX_N:,}, "
                             f"got {self.n!r}")
        _check_int(self.p, "p", 2)
        _check_int(self.spin_us, "spin_us", 0)
        _check_int(self.proc_us, "proc_us", 0)
        if self.pattern not in PATTERNS:
            raise ValueError(f"field 'pattern' must be one of {PATTERNS}, got {self.pattern!r}")
        if self.barrier not in BARRIERS:
            raise ValueError(f"field 'barrier' must be one of {BARRIERS}, got {self.barrier!r}")
        if self.tick_wakeups not in TICK_WAKEUPS:
            raise ValueError(f"field 'tick_wakeups' must be one of {TICK_WAKEUPS}, "
                             f"got {self.tick_wakeups!r}")

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("g_us", "v", "n", "p", "pattern", "spin_us",
                                                "proc_us", "barrier", "tick_wakeups")}


@dataclass(frozen=True)
class NetParams:
    """Network and measurement constants (spec 2.5; µs): one-way latency of a short
    message ``latency_us`` (0.5 ms) and the measurement start rule (AMB-2.4)."""

    latency_us: int = 500
    measure_start: str = "window"

    def __post_init__(self) -> None:
        _check_int(self.latency_us, "latency_us", 0)
        if self.latency_us > MAX_LATENCY_US:
            raise ValueError(f"field 'latency_us' must be at most {MAX_LATENCY_US:.0e} µs, "
                             f"got {self.latency_us!r}: every scheduling slot of a "
                             f"superstep is an event")
        if self.measure_start not in ("window", "round"):
            raise ValueError(f"field 'measure_start' must be 'window' or 'round', "
                             f"got {self.measure_start!r}")


@dataclass(frozen=True)
class NoiseParams:
    """OS noise on every node of a distributed run (not in the spec's model, which has
    none, AMB-2.6; a reading of the paper's "some external network traffic during the
    experiments could not be completely ruled out").

    Each node runs a time-sharing daemon (class TIMESHARE, like an uncontrolled BSP
    thread, so it never preempts one, but it takes the CPU whenever the thread blocks and
    keeps it for its burst; a controlled thread preempts it at once) that wakes at the
    instants of a Poisson process and computes ``burst_us`` µs each time, for a mean load
    of ``load``. Its random stream is its own (seeded from the measurement seed and the
    node), so the other draws of a measurement are unchanged.

    Parameters
    ----------
    load : float
        Mean fraction of a CPU taken by the daemon, in [0, 1); default 0.05, the spec's
        OS share ``o = 5%`` of the Fig. 1 model.
    burst_us : int
        CPU time of one burst in µs (> 0; default 1 ms).
    preempt : bool
        False (default): the daemon is an ordinary time-sharing task. True: it has Linux
        2.0's wake-up preference (a woken process whose counter exceeds the running one's
        preempts it), i.e. a class between time-sharing and real-time: it preempts an
        uncontrolled thread at once, never a controlled one.
    """

    load: float = 0.05
    burst_us: int = 1_000
    preempt: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.load, bool) or not isinstance(self.load, (int, float)) or \
                not 0 <= self.load < 1:
            raise ValueError(f"field 'load' (noise) must be in [0, 1), got {self.load!r}")
        _check_int(self.burst_us, "burst_us", 1)

    def to_dict(self) -> dict[str, Any]:
        return {"load": self.load, "burst_us": self.burst_us, "preempt": self.preempt}


def _noise_program(noise: NoiseParams, rng: random.Random):
    """A daemon: sleep Exp(mean burst (1 - load) / load) µs, compute ``burst_us``, repeat
    (bursts start as a Poisson process of rate load / burst while it is not delayed)."""
    mean_gap = noise.burst_us * (1 - noise.load) / noise.load

    def program(ctx):
        while True:
            gap = int(round(rng.expovariate(1.0 / mean_gap)))
            if gap > 0:
                yield Sleep(gap)
            yield Compute(noise.burst_us)
    return program


def n_rule(g_us: int, v: float, *, minimum: int = 50, target_us: int = 10_000_000,
           cap: int = 10_000) -> int:
    """AMB-2.5: ``n = max(minimum, ceil(target / (g (1 + 0.3 v))))`` capped at ``cap``."""
    mean = g_us * (1 + 0.3 * v)
    if mean <= 0:
        return cap
    return max(minimum, min(cap, math.ceil(target_us / mean)))


def draw_computes(bsp: BSPParams, rng: random.Random) -> list[list[int]]:
    """Per thread, per superstep: a compute time in µs from U(g - gv/2, g + gv/2)."""
    lo = bsp.g_us - bsp.g_us * bsp.v / 2
    hi = bsp.g_us + bsp.g_us * bsp.v / 2
    return [[int(round(rng.uniform(lo, hi))) for _ in range(bsp.n)] for _ in range(bsp.p)]


def bsp_program(bsp: BSPParams, computes: list[list[int]], start_us: int):
    """The program of every thread (rank = ``ctx.task.rank``); starts at ``start_us``."""
    spin = bsp.spin_us
    central = bsp.barrier == "central"
    complete = bsp.pattern == "complete"
    proc = bsp.proc_us

    def program(ctx):
        cl = ctx.cluster
        me = ctx.task
        r = me.rank
        peers = cl.jobs[me.job]
        others = [q for q in peers if q != me.tid]
        mine = computes[r]
        if start_us > cl.now:
            yield Sleep(start_us - cl.now)
        for s in range(bsp.n):
            yield Compute(mine[s])
            if central:
                if r == 0:
                    for _ in others:
                        yield Recv(tag=("a", s), spin_us=spin)
                    for q in others:
                        yield Send(q, tag=("r", s))
                else:
                    yield Send(peers[0], tag=("a", s))
                    yield Recv(tag=("r", s), spin_us=spin)
            else:
                for q in others:
                    yield Send(q, tag=("a", s))
                for _ in others:
                    yield Recv(tag=("a", s), spin_us=spin)
            if complete:
                for q in others:
                    yield Send(q, tag=("c", s))
                for _ in others:
                    yield Recv(tag=("c", s), spin_us=spin)
                    if proc:
                        yield Compute(proc)
    return program


def barrier_receive(task: Any) -> bool:
    """True when ``task`` is blocked in a receive of the barrier (an "arrived" or "release"
    message of :func:`bsp_program`), False for the complete pattern's exchange."""
    op = task.op
    return type(op) is Recv and isinstance(op.tag, tuple) and op.tag[0] in _BARRIER_TAGS


def server_policy(sp: ServerParams, bsps: dict[int, BSPParams]) -> ServerPolicy:
    """The node policy for the programs ``bsps`` (job id -> parameters): barrier wake-ups
    of the jobs with ``tick_wakeups="receive"`` are exempt from the timer tick."""
    exempt = {j for j, b in bsps.items() if b.tick_wakeups == "receive"}
    if not exempt:
        return ServerPolicy(sp)
    return ServerPolicy(sp, tick_exempt=lambda t: t.job in exempt and barrier_receive(t))


def _window_position(schedule: SlotSchedule, app: int, rng: random.Random) -> int:
    """A uniform instant (µs from a slot-0 boundary) inside ``app``'s allocated slots."""
    slots = schedule.slots_of(app)
    L = schedule.slot_us
    u = rng.randrange(len(slots) * L)
    return slots[u // L] * L + u % L


def run_measurement(bsp: BSPParams, schedule: SlotSchedule, sp: ServerParams,
                    net: NetParams | None = None, *, seed: int = 0, log: bool = False,
                    action_log: list | None = None, noise: NoiseParams | None = None,
                    deadline: float | None = None) -> dict[str, Any]:
    """Simulate one measurement of ``bsp`` on ``bsp.p`` nodes; times in µs.

    ``noise`` (default None, the spec's model): an OS-noise daemon per node
    (:class:`NoiseParams`). ``deadline`` (a ``time.perf_counter`` value): the clock is
    looked at every round of simulated time, and :class:`TimeUp` raised once it has
    passed (the events processed are the same as without it).

    Returns a dict with ``runtime_us`` (T0 to the end of the last thread's n-th
    superstep), ``start_us`` (T0), ``events``, ``phases`` and the ``cluster`` (its log
    when ``log``).
    """
    net = net or NetParams()
    rng = random.Random(seed * 1_000_003 + 7)
    computes = draw_computes(bsp, random.Random(seed * 7_919 + 3))
    R = schedule.round_us
    t0 = R
    pol = server_policy(sp, {0: bsp})
    cl = Cluster(bsp.p, pol, latency_us=net.latency_us, seed=seed, log=log)
    klass = TIMESHARE if sp.regime == "none" else CONTROLLED
    tasks = cl.spawn_job(0, range(bsp.p), bsp_program(bsp, computes, t0),
                         klass=klass, work=None)
    phases = [rng.randrange(R) for _ in range(bsp.p)]
    if net.measure_start == "window" and schedule.slots_of(0):
        phases[0] = (t0 - _window_position(schedule, 0, rng)) % R
    tick = sp.tick_us
    for k in range(bsp.p):
        slave = sp.regime == "sync" and k > 0
        pol.tick_phase[k] = rng.randrange(tick) if slave else phases[k] % tick
    install_servers(cl, schedule, sp, {0: [t.tid for t in tasks]}, phases=phases, rng=rng,
                    action_log=action_log)
    if noise is not None and noise.load > 0:
        for k in range(bsp.p):
            cl.spawn(k, _noise_program(noise, random.Random(seed * 1_000_033 + 97 * k + 13)),
                     klass=_BOOSTED if noise.preempt else TIMESHARE, daemon=True)
    _run(cl, deadline, R)
    end = max(t.finish for t in tasks)
    return {"runtime_us": end - t0, "start_us": t0, "events": cl.events,
            "phases": phases, "cluster": cl}


class TimeUp(TimeoutError):
    """A measurement stopped at its deadline."""


def _run(cl: Cluster, deadline: float | None, step_us: int) -> None:
    """``cl.run()``, in slices of ``step_us`` of simulated time with a look at the clock
    between slices when there is a ``deadline``."""
    if deadline is None:
        cl.run()
        return
    while True:
        cl.run(until=cl.now + step_us)
        if (cl._live == 0 and cl._pending_calls == 0) or not (cl._heap or cl._dispatch_q):
            return
        if time.perf_counter() > deadline:
            raise TimeUp("the measurement reached its deadline")


def measure_cell(bsp: BSPParams, schedule: SlotSchedule, sp: ServerParams,
                 net: NetParams | None = None, *, i: int = 50, seed: int = 0,
                 noise: NoiseParams | None = None) -> dict[str, Any]:
    """``i`` measurements (seeds ``seed .. seed + i - 1``): mean, std (sample), CV (µs).
    ``i`` >= 1 (ValueError naming it otherwise)."""
    _check_int(i, "i", 1)
    if i > MAX_I:
        raise ValueError(f"field 'i' (measurements) must be at most {MAX_I:,}, got {i!r}")
    runs = [run_measurement(bsp, schedule, sp, net, seed=seed + j, noise=noise)
            for j in range(i)]
    times = [r["runtime_us"] for r in runs]
    mean = statistics.fmean(times)
    std = statistics.stdev(times) if len(times) > 1 else 0.0
    return {"mean_us": mean, "std_us": std, "cv": std / mean if mean else 0.0,
            "times_us": times, "events": sum(r["events"] for r in runs), "n": bsp.n,
            "i": i}


# ---------------------------------------------------------------------- Figure 1 model
def share_run(share: float, background: int, *, work_us: int = 1_000_000,
              housekeeping: float = 0.05, sp: ServerParams | None = None,
              round_us: int = 200_000, slot_us: int = 20_000,
              place: str = "contiguous", seed: int = 0, log: bool = False
              ) -> dict[str, Any]:
    """The single-node share-control experiment (Fig. 1 model of spec 2.5); µs.

    Linpack (CPU-bound, ``work_us`` of CPU, class CONTROLLED) under a server giving it
    ``share`` of the round, ``background`` time-sharing CPU hogs, and OS housekeeping
    that preempts everything for ``housekeeping * tick`` at every timer tick. Linpack
    starts at a uniform instant of the round; achieved share = ``work_us`` / its wall
    time.
    """
    if isinstance(background, bool) or not isinstance(background, int) or background < 0:
        raise ValueError(f"field 'background' must be an integer >= 0, got {background!r}")
    if not 0 <= housekeeping < 1:
        raise ValueError(f"field 'housekeeping' must be in [0, 1), got {housekeeping!r}")
    _check_int(work_us, "work_us", 1)
    sp = sp or ServerParams(regime="sync")
    schedule = SlotSchedule.for_share(share, round_us=round_us, slot_us=slot_us, place=place)
    rng = random.Random(seed * 1_000_003 + 11)
    pol = ServerPolicy(sp)
    cl = Cluster(1, pol, latency_us=0, seed=seed, log=log)
    R = schedule.round_us
    phase = rng.randrange(R)
    tick = sp.tick_us
    pol.tick_phase[0] = phase % tick
    start = R + rng.randrange(R)
    hk = int(round(housekeeping * tick))

    def linpack(ctx):
        yield Sleep(start)
        yield Compute(work_us)

    def hog(ctx):
        while True:
            yield Compute(1_000_000_000)

    def kernel(ctx):
        nxt = phase % tick                   # the node's ticks: phase mod tick + m tick
        while True:
            now = ctx.cluster.now
            if nxt < now:                    # overran a tick: skip to the next one
                nxt += ((now - nxt) // tick + 1) * tick
            if nxt > now:
                yield Sleep(nxt - now)
            yield Compute(hk)
            nxt += tick

    lp = cl.spawn(0, linpack, job=0, klass=CONTROLLED if sp.regime != "none" else TIMESHARE,
                  work=work_us)
    for _ in range(background):
        cl.spawn(0, hog, klass=TIMESHARE, daemon=True)
    if hk:
        cl.spawn(0, kernel, klass=HOUSEKEEPING, daemon=True)
    regime = sp.regime if sp.regime != "unsync" else "sync"
    install_servers(cl, schedule, ServerParams(**{**sp.to_dict(), "regime": regime}),
                    {0: [lp.tid]}, phases=[phase], rng=rng)
    cl.run()
    wall = lp.finish - start
    return {"share": work_us / wall, "wall_us": wall, "events": cl.events, "cluster": cl}


# ---------------------------------------------------------------------- several apps
@dataclass(frozen=True)
class App:
    """A BSP application of a slot table: its nodes and program (µs)."""

    nodes: tuple[int, ...]
    bsp: BSPParams = field(default_factory=lambda: BSPParams(g_us=10_000))


def run_apps(apps: list[App], schedule: SlotSchedule, sp: ServerParams, n_nodes: int, *,
             net: NetParams | None = None, seed: int = 0, log: bool = False
             ) -> dict[str, Any]:
    """Simulate several BSP applications under one slot table (``schedule.owner[s]`` =
    application index); synchronized servers unless ``sp`` says otherwise. Every
    application starts at ``T0 = one round``; returns each one's runtime (µs)."""
    net = net or NetParams()
    rng = random.Random(seed * 1_000_003 + 5)
    R = schedule.round_us
    t0 = R
    pol = server_policy(sp, {a: app.bsp for a, app in enumerate(apps)})
    cl = Cluster(n_nodes, pol, latency_us=net.latency_us, seed=seed, log=log)
    klass = TIMESHARE if sp.regime == "none" else CONTROLLED
    jobs: dict[int, list[int]] = {}
    for a, app in enumerate(apps):
        if len(app.nodes) != app.bsp.p:
            raise ValueError(f"apps[{a}]: field 'nodes' must list p = {app.bsp.p} nodes")
        comp = draw_computes(app.bsp, random.Random((seed * 7_919 + 3) * 1_009 + a))
        ts = cl.spawn_job(a, app.nodes, bsp_program(app.bsp, comp, t0), klass=klass)
        jobs[a] = [t.tid for t in ts]
    phases = [rng.randrange(R) for _ in range(n_nodes)]
    for k in range(n_nodes):
        pol.tick_phase[k] = (rng.randrange(sp.tick_us) if sp.regime == "sync" and k
                             else phases[k] % sp.tick_us)
    install_servers(cl, schedule, sp, jobs, phases=phases, rng=rng)
    cl.run()
    return {"runtimes_us": [max(cl.tasks[t].finish for t in jobs[a]) - t0
                            for a in range(len(apps))],
            "events": cl.events, "cluster": cl}
