"""One CSM point on the compiled engine: arrays in, the Python engine's results out.

``run_point_compiled(cfg, policy, seed, log=...)`` is ``sim.timeshare.csm.run_point`` with
``engine="compiled"``: the same arrivals (``workload.generate``), the same random streams
(the CPython MT19937 states are handed to numba, see :mod:`sim.timeshare.fast.mt`), the
same event order, hence the same event log, task records and metrics. What it does not
implement is refused by :func:`unsupported` with a ``ValueError`` naming the option.
Times are integer microseconds.

Importing this module needs numba (``pip install 'schedsearch[fast]'``); the kernel is
compiled once and cached on disk (``cache=True``).
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from sim.timeshare.cluster import config_options
from sim.timeshare.fast import kernel as K
from sim.timeshare.fast.mt import state_of
from sim.timeshare.log import EventLog
from sim.timeshare.workload import OPTION_DEFAULTS, Arrival, CSMConfig, generate

KINDS = ("arrive", "dispatch", "ref", "load", "free", "off", "block", "wake", "send",
         "deliver", "recv", "finish", "end")
OFF_REASONS = ("quantum", "preempt", "block", "fault", "finish")
BLOCK_CAUSES = ("recv", "fault")
_MODES = {"rr": K.RR, "pred": K.PRED, "dyn": K.DYN, "csm": K.CSM}
#: kernel codes of the message models (sim.timeshare.csm.MSG_MODELS)
MSG_CODES = {"pairwise": K.MSG_PAIRWISE, "exchange": K.MSG_EXCHANGE, "ring": K.MSG_RING,
             "async": K.MSG_ASYNC, "probe": K.MSG_PROBE}
#: The values of the CSMConfig options (Python engine) that the kernel runs;
#: any other value is refused by name. ``refs_per_dispatch`` runs at every value
#: (``CSMConfig`` checks it is an integer >= 1). Read with ``getattr`` so that a config
#: without the field passes.
CONFIG_SUPPORTED: dict[str, tuple[Any, ...]] = {
    "msg_model": tuple(MSG_CODES),
    "fault_service": ("parallel", "fifo"),
}
#: The defaults of those options (a config without the field runs at them).
CONFIG_DEFAULTS = OPTION_DEFAULTS


def unsupported(policy: Any, *, cfg: Any = None, setup: Any = None, **options: Any
                ) -> str | None:
    """Why the compiled engine cannot run this point, or None when it can.

    The compiled engine implements exactly: a ``heuristics.coscheduling.Coscheduling``
    policy (any mode, ``-top``, ``mnol``, ``mnod``, ``p``, ``quantum_us``, ``quantum_dist``,
    ``local_by``, ``de_reset``), no ``setup`` hook, job sizes that are powers of two, and
    the cluster options ``run_point`` sets (page-level LRU, ``touch="one"``, blocking
    receives, constant fault latency, constant network latency) with the ``cfg`` options
    ``refs_per_dispatch`` (any), ``fault_service`` and ``msg_model`` at the values of
    :data:`CONFIG_SUPPORTED`.
    Any further keyword in ``options`` (an engine option added to the Python engine) is
    refused unless it has its default value ``None``; extend this function when the kernel
    learns it.
    """
    from heuristics.coscheduling import Coscheduling

    if type(policy) is not Coscheduling:
        return (f"policy {type(policy).__name__} (the compiled engine runs "
                "heuristics.coscheduling.Coscheduling only)")
    if setup is not None:
        return "setup (a cluster hook cannot run inside the compiled engine)"
    if cfg is not None:
        for name, ok in CONFIG_SUPPORTED.items():
            value = getattr(cfg, name, CONFIG_DEFAULTS[name])
            if value not in ok:
                return f"{name}={value!r}"
    for name, value in options.items():
        if value is not None:
            return f"{name}={value!r}"
    return None


def _check_sizes(cfg: CSMConfig) -> None:
    for f in ("small_sizes", "large_sizes"):
        for s in getattr(cfg, f):
            if s & (s - 1):
                raise ValueError(f"{f} holds {s}, not a power of two: the compiled engine "
                                 "runs the pairwise exchange on power-of-two jobs only")


def _static(cfg: CSMConfig, arrivals: list[Arrival]) -> tuple[Any, ...]:
    """Per-task static fields (tasks numbered in arrival order, ranks in order)."""
    n_t = sum(len(a.vir_mem) for a in arrivals)
    T = np.zeros((n_t, K.N_T), np.int64)
    F = np.zeros((n_t, K.N_F), np.float64)
    A = np.zeros((len(arrivals), 4), np.int64)
    kinds: list[str] = []
    mfreq_us = cfg.mfreq_ms * 1000.0
    phase = cfg.phase_frac
    tid = 0
    job = 0
    base = 0
    for i, a in enumerate(arrivals):
        size = len(a.vir_mem)
        tc = a.tc_us[0]
        local = a.kind == "local"
        A[i] = (a.time_us, tid, size, a.node if local else -1)
        rounds = 1 if local else max(1, int(round(tc / mfreq_us)))
        for r in range(size):
            row = T[tid]
            row[K.JOB] = -1 if local else job
            row[K.RANK] = r
            row[K.VM] = a.vir_mem[r]
            row[K.WORK] = tc
            row[K.LEFT] = tc
            row[K.R] = rounds
            row[K.LOG2S] = size.bit_length() - 1
            row[K.FIRST] = tid - r
            row[K.PBASE] = base
            row[K.FIN] = -1
            row[K.RMQH] = -1
            row[K.RMQT] = -1
            F[tid, K.MEAN] = tc / rounds
            F[tid, K.WSMEAN] = cfg.ws_local if local else cfg.ws_dist
            F[tid, K.WSSTD] = cfg.ws_std
            F[tid, K.PHMEAN] = phase * tc
            base += a.vir_mem[r]
            kinds.append(a.kind)
            tid += 1
        if not local:
            job += 1
    return T, F, A, kinds, base


class CompiledCluster:
    """What a caller reads from ``CSMRun.cluster`` after a compiled run: ``events``,
    ``now`` (µs), ``n_nodes``, ``log`` (an :class:`EventLog`), ``busy_us`` per node and
    ``engine = "compiled"``."""

    engine = "compiled"

    def __init__(self, n_nodes: int, events: int, now: int, log: EventLog,
                 busy_us: list[int]):
        self.n_nodes = n_nodes
        self.events = events
        self.now = now
        self.log = log
        self.busy_us = busy_us


def _records(LG: np.ndarray, n: int) -> list[tuple[Any, ...]]:
    """The first ``n`` rows of the kernel's log ``LG`` (time, kind, node, task, a, b, c)
    as :mod:`sim.timeshare.log` records, field for field the Python engine's: the fields
    a and b are decoded per kind with whole-column operations, then zipped into tuples
    (a run logs about a million records; a per-record branch cost more than the run)."""
    time_, kind, node, task, a, b, c = LG[:n].T
    a_out = np.full(n, None, dtype=object)
    b_out = np.full(n, None, dtype=object)
    ints = np.isin(kind, (K.L_REF, K.L_LOAD, K.L_SEND, K.L_DELIVER, K.L_RECV))
    ints |= (kind == K.L_ARRIVE) & (a >= 0)   # an arrival's job; None: a local task
    a_out[ints] = _objects(a[ints])
    for code, names in ((K.L_OFF, OFF_REASONS), (K.L_BLOCK, BLOCK_CAUSES)):
        at = kind == code
        a_out[at] = np.asarray(names, dtype=object)[a[at]]
    at = kind == K.L_END
    a_out[at] = _objects(a[at] != 0)
    at = np.isin(kind, (K.L_ARRIVE, K.L_REF, K.L_SEND))
    b_out[at] = _objects(b[at])
    at = np.flatnonzero((kind == K.L_LOAD) & (b >= 0))   # the (task, page) evicted
    pairs = zip(b[at].tolist(), c[at].tolist(), strict=True)
    for i, pair in zip(at.tolist(), pairs, strict=True):
        b_out[i] = pair
    names = np.asarray(KINDS, dtype=object)[kind]
    return list(zip(time_.tolist(), names.tolist(), node.tolist(), task.tolist(),
                    a_out.tolist(), b_out.tolist(), strict=True))


def _objects(values: np.ndarray) -> np.ndarray:
    """``values`` as an object array of Python ints or bools (not NumPy scalars)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values.tolist()
    return out


def simulate(cfg: CSMConfig, policy: Any, seed: int, *, log: bool = False
             ) -> tuple[CompiledCluster, list[dict[str, Any]]]:
    """Run the point; return the cluster stand-in and the task records of
    ``csm.task_records`` (arrival / finish / cpu in µs)."""
    why = unsupported(policy, cfg=cfg)
    if why is not None:
        raise ValueError(f"engine='compiled' does not implement {why}")
    _check_sizes(cfg)
    arrivals = generate(cfg, seed)
    T0, F0, A, kinds, n_pages = _static(cfg, arrivals)
    n_t, n_n = T0.shape[0], cfg.n_nodes
    P = np.zeros(K.N_P, np.int64)
    P[K.P_MODE] = _MODES[policy.mode]
    P[K.P_TOP] = int(policy.preempt_on_top)
    P[K.P_LOCALBY] = 0 if policy.local_by == "mes" else 1
    P[K.P_DERESET] = 0 if policy.de_reset == "insert" else 1
    P[K.P_MNOL], P[K.P_MNOD] = policy.mnol, policy.mnod
    P[K.P_QUANT] = policy.quantum_us
    P[K.P_QEXP] = int(policy.quantum_dist == "exp")
    P[K.P_LAT] = cfg.latency_us
    P[K.P_PAGES] = cfg.pages_scaled
    P[K.P_FLAT] = int(round(cfg.fault_ms * 1000))
    P[K.P_LITERAL] = int(cfg.pgfault_formula == "literal")
    P[K.P_LOG] = int(log)
    P[K.P_REFS] = getattr(cfg, "refs_per_dispatch", 1)
    P[K.P_FIFO] = int(getattr(cfg, "fault_service", "parallel") == "fifo")
    P[K.P_MSG] = MSG_CODES[getattr(cfg, "msg_model", "pairwise")]
    if P[K.P_MSG] != K.MSG_PAIRWISE:
        # the program state of every task (K.N_PG words each), then room for all the
        # bursts (csm.message_program draws them at the task's start), each
        # distributed task's first one at T[t, BOFF]
        dist = T0[:, K.JOB] >= 0
        rounds = T0[dist, K.R]
        T0[dist, K.BOFF] = n_t * K.N_PG + np.cumsum(rounds) - rounds
        BU = np.zeros(n_t * K.N_PG + int(rounds.sum()), np.int64)
    else:
        BU = np.zeros(1, np.int64)
    PF = np.array([policy.p], np.float64)
    cap_h, cap_m, cap_l = 4 * n_t + len(arrivals) + 64, 4 * n_t + 64, (1 << 16) if log else 1
    while True:
        MT = np.zeros((3, 625), np.int64)
        GN = np.zeros(3, np.float64)
        for s, r in ((K.RNG_MEM, random.Random(seed * 104_729 + 1)),
                     (K.RNG_PROG, random.Random(seed * 1_299_709 + 2)),
                     (K.RNG_POL, random.Random(seed * 7919 + 17))):
            MT[s], GN[s] = state_of(r)
        S = np.zeros(K.N_S, np.int64)
        S[K.MFREE] = 0
        T, F = T0.copy(), F0.copy()
        N = np.zeros((n_n, K.N_N), np.int64)
        N[:, K.RUN] = -1
        N[:, K.LRUH] = -1
        N[:, K.LRUT] = -1
        N[:, K.BOOST] = -1
        m_pages = cfg.pages_scaled
        N[:, K.FREEH] = np.arange(n_n) * m_pages
        RQ = np.zeros((n_n, n_t + 1), np.int64)
        H = np.zeros((cap_h, 4), np.int64)
        DQ = np.zeros(n_n, np.int64)
        MS = np.zeros((cap_m, 5), np.int64)
        MS[:, 4] = np.arange(1, cap_m + 1)
        MS[-1, 4] = -1
        LG = np.zeros((cap_l, 7), np.int64)
        PT = np.full(n_pages, -1, np.int32)
        FR = np.zeros((n_n * m_pages, 4), np.int32)   # prev, next, page, task
        FR[:, 1] = np.arange(1, n_n * m_pages + 1)
        FR[m_pages - 1::m_pages, 1] = -1    # one free list per node
        err = K.run(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, A)
        if err == 0:
            break
        if err == K.ERR_HEAP:
            cap_h *= 2
        elif err == K.ERR_MSG:
            cap_m *= 2
        else:
            cap_l *= 4
    policy.overtakes = int(S[K.OVERTAKES])
    elog = EventLog(enabled=log)
    elog.config(n_nodes=n_n, mem_pages=cfg.pages_scaled, latency_us=cfg.latency_us,
                fault_latency_us=int(round(cfg.fault_ms * 1000)),
                **config_options("fifo" if P[K.P_FIFO] else "parallel", int(P[K.P_REFS])))
    if log:
        elog.records.extend(_records(LG, int(S[K.LOGN])))
    cl = CompiledCluster(n_n, int(S[K.EVENTS]), int(S[K.NOW]), elog, N[:, K.BUSY].tolist())
    tasks = []
    for tid, row in enumerate(T.tolist()):
        tasks.append({"tid": tid, "node": row[K.NODE],
                      "job": None if row[K.JOB] < 0 else row[K.JOB], "kind": kinds[tid],
                      "arrival": row[K.ARR], "finish": None if row[K.FIN] < 0 else row[K.FIN],
                      "tc": row[K.WORK], "faults": row[K.FAULTS], "cpu": row[K.CPU],
                      "vir_mem": row[K.VM]})
    return cl, tasks


def timed(cfg: CSMConfig, policy: Any, seed: int, *, log: bool = False
          ) -> tuple[CompiledCluster, list[dict[str, Any]], float]:
    """:func:`simulate` and its wall time in seconds."""
    t0 = time.perf_counter()
    cl, tasks = simulate(cfg, policy, seed, log=log)
    return cl, tasks, time.perf_counter() - t0
