"""One CSM experiment point: the paper's workload on the time-sharing cluster.

Times are integer microseconds inside the simulation. Distributed jobs are mapped one
task per node with the uniform-memory-load mapping (AMB-4.14) at their arrival; each
task's initial resident set follows eq. 7. Communication (AMB-4.10): a distributed task
of a job of size s > 1 runs R = round(tc / mfreq) CPU bursts (R common to the job; burst
k of a task is ``tc/R · Exp(1)``, the last one takes the rest, so every task computes
exactly tc); after burst k it sends one message to its partner ``rank XOR 2^(k mod
log2 s)`` and blocks in a receive for the partner's message of round k. That is the
default message model, "pairwise"; :data:`MSG_MODELS` defines the other readings
(``CSMConfig.msg_model``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sim.timeshare.cluster import Cluster
from sim.timeshare.memory import WorkingSet
from sim.timeshare.metrics import summarize
from sim.timeshare.ops import Compute, Recv, Send
from sim.timeshare.policy import Policy
from sim.timeshare.workload import Arrival, CSMConfig, generate


def local_program(tc_us: int) -> Callable[..., Any]:
    """A local task: one CPU burst of ``tc_us`` microseconds."""
    def prog(ctx):
        yield Compute(tc_us)
    return prog


def exchange_program(tc_us: int, rounds: int) -> Callable[..., Any]:
    """A distributed task: ``rounds`` bursts totalling ``tc_us`` µs, pairwise exchange
    after each (AMB-4.10)."""
    def prog(ctx):
        _, peers, log2s, me = _rank_view(ctx)
        for k, b in enumerate(_burst_draws(tc_us, rounds, ctx.rng)):
            yield Compute(b)
            if log2s:
                partner = peers[me ^ (1 << (k % log2s))]
                yield Send(partner, tag=k)
                yield Recv(src=partner, tag=k)
    return prog


def _rank_view(ctx: Any) -> tuple[Any, list[int], int, int]:
    """The running task, the task ids of its job by rank, log2 of the job size and the
    task's rank."""
    task = ctx.task
    peers = ctx.cluster.jobs[task.job]
    return task, peers, len(peers).bit_length() - 1, task.rank


def _burst_draws(tc_us: int, rounds: int, rng: Any) -> Iterator[int]:
    """The R CPU bursts of a task (µs): ``tc/R · Exp(1)``, the last takes the rest; each
    drawn when it is asked for (``exchange_program`` draws round k's burst at round k)."""
    left = tc_us
    mean = tc_us / rounds
    for k in range(rounds):
        b = left if k == rounds - 1 else min(left, int(mean * rng.expovariate(1.0)))
        left -= b
        yield b


def _bursts(tc_us: int, rounds: int, rng: Any) -> list[int]:
    """The R CPU bursts of a task (µs), all drawn now (:func:`_burst_draws`)."""
    return list(_burst_draws(tc_us, rounds, rng))


def _recv_all(task: Any) -> Any:
    """Consume every message already in the RMQ (a non-blocking probe loop); on the CPU
    each ``Recv`` matches at once, so none of them blocks."""
    n = 0
    while task.rmq:
        yield Recv()
        n += 1
    return n


def message_program(model: str, tc_us: int, rounds: int,
                    bursts: Sequence[int] | None = None) -> Callable[..., Any]:
    """A distributed task under message model ``model`` (:data:`MSG_MODELS`): ``rounds``
    bursts totalling ``tc_us`` µs, drawn from the program stream as in
    :func:`exchange_program` (which is ``model = "pairwise"`` without ``bursts``, so the
    default draws stay in the same order). ``bursts`` (µs, ``rounds`` values summing to
    ``tc_us``) fixes the bursts of every task, for hand-derived scenarios."""
    if model not in MSG_MODELS:
        raise ValueError(f"msg_model must be one of {', '.join(MSG_MODELS)}, got {model!r}")
    if bursts is not None and (len(bursts) != rounds or sum(bursts) != tc_us):
        raise ValueError(f"bursts must be {rounds} values summing to tc_us = {tc_us}")
    if model == "pairwise" and bursts is None:
        return exchange_program(tc_us, rounds)

    def prog(ctx):
        task, peers, log2s, me = _rank_view(ctx)
        size = len(peers)
        todo = list(bursts) if bursts is not None else _bursts(tc_us, rounds, ctx.rng)
        if size == 1:
            yield Compute(tc_us)
            return

        def xor_partner(k: int) -> int:
            return peers[me ^ (1 << (k % log2s))]

        left, right = peers[(me - 1) % size], peers[(me + 1) % size]
        got = 0
        for k, b in enumerate(todo):
            yield Compute(b)
            if model == "pairwise":
                yield Send(xor_partner(k), tag=k)
                yield Recv(src=xor_partner(k), tag=k)
            elif model == "exchange":
                for nb in dict.fromkeys((left, right)):
                    yield Send(nb, tag=k)
                for nb in dict.fromkeys((left, right)):
                    yield Recv(src=nb, tag=k)
            elif model == "ring":
                yield Send(right, tag=k)
                yield Recv(src=left, tag=k)
            elif model == "async":
                yield Send(xor_partner(k), tag=k)
                if k:
                    yield Recv(src=xor_partner(k - 1), tag=k - 1)
            else:  # probe
                yield Send(xor_partner(k), tag=k)
                got += yield from _recv_all(task)
        if model == "async":
            yield Recv(src=xor_partner(rounds - 1), tag=rounds - 1)
        elif model == "probe":
            for _ in range(rounds - got):  # the partners' last messages
                yield Recv()
    return prog


#: The message models (AMB-4.10), each a reading of the paper's text. Every model uses
#: the same bursts, "the time between successive arrivals (sending) ... exponential with
#: mean = mfreq" (section 5, "Message frequency"), and sends one message per partner
#: after each burst; they differ in whom a task sends to and when it waits.
MSG_MODELS = {
    "pairwise": "the spec's default [A]: send to the partner rank XOR 2^(k mod log2 s), "
                "then a blocking receive of the partner's round-k message (section 3.1: "
                "tasks that 'cannot communicate with their correspondents release the CPU "
                "... and change to the blocked state')",
    "exchange": "send to both ring neighbours (rank +- 1), then blocking receives from "
                "both: two correspondents per round (section 1: 'scheduling the "
                "correspondents - the most recent communicated processes'; the spec's "
                "'all-to-all steps' cut to the neighbours)",
    "ring": "send to rank + 1, blocking receive from rank - 1: a one-way pipeline in "
            "which a task's receive depends on a chain of other nodes (section 3.1 "
            "blocking, a 'correspondent' that is not the task one sends to)",
    "async": "send to the XOR partner, then a blocking receive of the partner's "
             "previous-round message: a task may run one round ahead (section 4.1: "
             "'distributed tasks which only receive messages' vs those that send and "
             "receive; sends do not wait)",
    "probe": "send to the XOR partner, then consume whatever is already in the RMQ "
             "without blocking; the messages still missing are received (blocking) at "
             "the end. Messages wait in the RMQ of a ready task (section 4.1: 'the only "
             "way that CSM algorithm can know which task is currently executing in "
             "another node is taking the reception of the messages into account ... if "
             "the task to be inserted on the RQ has any incoming message in the RMQ')",
}


def map_uniform_memory(cl: Cluster, vir_mems: Sequence[int]) -> list[int]:
    """AMB-4.14: the ``len(vir_mems)`` distinct nodes with the least N_k.mem (ties: lowest
    id); the largest task goes to the least-loaded node. Returns the node per task."""
    order = sorted(range(cl.n_nodes), key=lambda k: (cl.nodes[k].mem_demand, k))
    chosen = order[:len(vir_mems)]
    by_size = sorted(range(len(vir_mems)), key=lambda i: (-vir_mems[i], i))
    nodes = [0] * len(vir_mems)
    for slot, i in enumerate(by_size):
        nodes[i] = chosen[slot]
    return nodes


def initial_resident(cl: Cluster, node: int, vir_mem: int) -> int:
    """Eq. 7 with N_k.mem including the new task."""
    nk = cl.nodes[node].mem_demand + vir_mem
    m = cl.mem_pages
    return vir_mem if nk < m else int(vir_mem * m // nk)


class CSMRun:
    """The outcome of one point: ``tasks`` (records), ``metrics``, ``events``,
    ``wall_s`` and the ``cluster`` (with its log when logging was on; a
    ``sim.timeshare.fast.run.CompiledCluster`` after a compiled run)."""

    def __init__(self, cluster: Any, tasks: list[dict[str, Any]], metrics: dict[str, float],
                 wall_s: float):
        self.cluster = cluster
        self.tasks = tasks
        self.metrics = metrics
        self.events = cluster.events
        self.wall_s = wall_s


def schedule_arrivals(cl: Cluster, cfg: CSMConfig, arrivals: Sequence[Arrival],
                      kinds: dict[int, str]) -> None:
    """Register every arrival as a callback that maps and spawns it at its time."""
    phase = cfg.phase_frac
    mfreq_us = cfg.mfreq_ms * 1000.0

    def make(a: Arrival, job: int) -> Callable[[Cluster, int], None]:
        def go(c: Cluster, now: int) -> None:
            if a.kind == "local":
                vm = a.vir_mem[0]
                res = initial_resident(c, a.node, vm)
                t = c.spawn(a.node, local_program(a.tc_us[0]), vir_mem=vm,
                            ws=WorkingSet(vm, cfg.ws_local, cfg.ws_std, phase * a.tc_us[0]),
                            resident=res, work=a.tc_us[0])
                kinds[t.tid] = "local"
                return
            nodes = map_uniform_memory(c, a.vir_mem)
            tc = a.tc_us[0]
            rounds = max(1, int(round(tc / mfreq_us)))
            per = []
            for r, k in enumerate(nodes):
                vm = a.vir_mem[r]
                per.append({"vir_mem": vm,
                            "ws": WorkingSet(vm, cfg.ws_dist, cfg.ws_std, phase * tc),
                            "resident": initial_resident(c, k, vm)})
            ts = c.spawn_job(job, nodes, message_program(cfg.msg_model, tc, rounds),
                             per_task=per, work=tc)
            for t in ts:
                kinds[t.tid] = a.kind
        return go

    job = 0
    for a in arrivals:
        cl.at(a.time_us, make(a, job))
        if a.kind != "local":
            job += 1


def task_records(cl: Cluster, kinds: dict[int, str]) -> list[dict[str, Any]]:
    """Per-task records for the metrics (arrival = the job's arrival, µs)."""
    out = []
    for t in cl.tasks:
        out.append({"tid": t.tid, "node": t.node, "job": t.job, "kind": kinds[t.tid],
                    "arrival": t.arrival, "finish": t.finish, "tc": t.work,
                    "faults": t.faults, "cpu": t.cpu, "vir_mem": t.vir_mem})
    return out


ENGINES = ("python", "compiled")


def run_point(cfg: CSMConfig, policy: Policy, seed: int, *, log: bool = False,
              setup: Callable[[Cluster], None] | None = None,
              engine: str = "python") -> CSMRun:
    """Simulate one seed of one configuration under ``policy``; ``setup(cluster)`` runs
    before the arrivals are registered (e.g. the gang reference's slot timer).

    ``engine="compiled"`` runs the numba engine of :mod:`sim.timeshare.fast` (needs the
    ``fast`` extra): the same event log, records and metrics, several times faster; it
    raises ``ValueError`` naming any option it does not implement
    (:func:`sim.timeshare.fast.run.unsupported`). ``CSMRun.cluster`` is then a
    ``CompiledCluster`` (``events``, ``now``, ``log``, ``busy_us``).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    t0 = time.perf_counter()
    if engine == "compiled":
        from sim.timeshare.fast.run import simulate, unsupported

        why = unsupported(policy, cfg=cfg, setup=setup)
        if why is not None:
            raise ValueError(f"engine='compiled' does not implement {why}")
        ccl, tasks = simulate(cfg, policy, seed, log=log)
        return CSMRun(ccl, tasks, summarize(tasks, cfg.n_nodes, cfg.pages_scaled),
                      time.perf_counter() - t0)
    arrivals = generate(cfg, seed)
    cl = Cluster(cfg.n_nodes, policy, latency_us=cfg.latency_us, mem_pages=cfg.pages_scaled,
                 fault_latency_us=int(round(cfg.fault_ms * 1000)), seed=seed, log=log,
                 literal_pgfault=cfg.pgfault_formula == "literal",
                 fault_service=cfg.fault_service, refs_per_dispatch=cfg.refs_per_dispatch)
    if setup is not None:
        setup(cl)
    kinds: dict[int, str] = {}
    schedule_arrivals(cl, cfg, arrivals, kinds)
    cl.run()
    tasks = task_records(cl, kinds)
    return CSMRun(cl, tasks, summarize(tasks, cfg.n_nodes, cfg.pages_scaled),
                  time.perf_counter() - t0)


def calibrate_measured(cfg: CSMConfig, policy_factory: Callable[[], Policy],
                       seeds: Sequence[int], *, iters: int = 6, tol: float = 0.05,
                       engine: str = "python",
                       metric: Callable[[CSMRun], float] | None = None,
                       target: float | None = None
                       ) -> tuple[float, float, list[tuple[float, float]]]:
    """Spec 3.4 procedure: adjust mit (s) until the *measured* mem_load (time-averaged
    memory demand / M over [0, last arrival], response times included) matches
    ``cfg.mem_load``, by bisection on log(mit) starting from the eq. 5 value; ``engine`` as
    in :func:`run_point`.

    ``metric`` (a function of one run) and ``target`` replace the measured mem_load and
    ``cfg.mem_load`` by another measure that falls as mit grows (e.g. the memory of the
    distributed tasks only, or the tasks per node).

    Returns ``(mit_s, measured value, trace of (mit_s, measured))``.
    """
    import dataclasses
    import math

    from sim.timeshare.workload import calibrate_mit

    target = cfg.mem_load if target is None else target
    trace: list[tuple[float, float]] = []

    def value(r: CSMRun) -> float:
        return r.metrics["mem_load_measured"] if metric is None else metric(r)

    def measure(mit: float) -> float:
        c = dataclasses.replace(cfg, mit_s=mit)
        vals = [value(run_point(c, policy_factory(), s, engine=engine)) for s in seeds]
        v = sum(vals) / len(vals)
        trace.append((mit, v))
        return v

    lo = hi = calibrate_mit(cfg)
    v = measure(lo)
    if abs(v - target) <= tol * target:
        return lo, v, trace
    # bracket: measured load falls as mit grows
    step = 2.0 if v > target else 0.5
    for _ in range(8):
        hi = lo * step
        vh = measure(hi)
        if (vh - target) * (v - target) <= 0:
            break
        lo, v = hi, vh
    else:
        return hi, vh, trace
    a, b = sorted((lo, hi))
    best = min(trace, key=lambda p: abs(p[1] - target))
    for _ in range(iters):
        mid = math.sqrt(a * b)
        vm = measure(mid)
        if abs(vm - target) < abs(best[1] - target):
            best = (mid, vm)
        if abs(vm - target) <= tol * target:
            break
        if vm > target:
            a = mid
        else:
            b = mid
    return best[0], best[1], trace
