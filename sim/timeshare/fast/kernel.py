"""The numba kernel: :class:`sim.timeshare.cluster.Cluster` running a CSM point, on arrays.

This is the event loop of ``Cluster.run`` restricted to what ``run_point`` uses (the
exchange and local task programs of :mod:`sim.timeshare.csm`, or ``message_program``
under the other ``msg_model`` values, paged memory with k
references per dispatch (``refs_per_dispatch``), per-node LRU, parallel or FIFO fault
service, blocking receives, ``Coscheduling`` policies) with
every step in the same order, so that the event log is record for record the Python
engine's. Times are integer microseconds.

State lives in arrays (column constants below): ``S`` the scalars, ``T`` / ``F`` the
int / float fields of tasks, ``N`` the nodes, ``RQ[node, i]`` the ready queues, ``H`` the
event heap (rows ``time, cls << 44 | seq, a, b``), ``MS`` the message slots (free list),
``LG`` the log records, ``PT`` the page table (frame of every virtual page, -1 when not
resident; page ``p`` of task ``t`` is ``T[t, PBASE] + p``), ``BU`` the program state
and the bursts of the tasks under a message model other than pairwise, the LRU
links of the page frames ``FR[f] = (prev, next, virtual page, task)`` (one 16-byte row
per frame: node ``k`` owns frames ``k M .. (k + 1) M - 1``; unused frames are in a free
list through ``next``). Frames keep the per-node LRU lists small, so that a reference
costs one read in the large page table and otherwise touches the node's own frames. A
full array stops the run with an error code; the caller retries with larger arrays (the
run is deterministic, so a retry gives the same result).

The helpers are inlined (``inline="always"``): a call between compiled functions costs
more than most events' work (the random draws not inlined made a scale-0.1 CSM point
about 1.8x slower). numba's front end copies an inlined function at each call site, at a
cost that grows with the square of its size, so the larger steps are each called from
one place: :func:`_advance` once in :func:`_go`; :func:`_go` and the dispatch's pick
(:func:`_pick`) once in :func:`_run_node`, itself once in :func:`run`, which runs the
task of a CPU-burst end and the dispatch of an idle node through it; :func:`_wake` once
in :func:`run`. (With ``_go`` in both the dispatch and ``run``, the kernel's first
compile took 60.1 s of CPU against 43.8 s: ``python -m
sim.experiments.engine.compile_bench --group csm``, load average 1.9-2.0; a scale-0.1
CSM point runs as fast either way.)
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.core import cgutils
from numba.extending import intrinsic

from sim.numba_cache import refresh
from sim.timeshare.fast import mt
from sim.timeshare.fast.mt import expovariate, gauss, randbelow

# ---- scalars S
NOW, EVENTS, SEQ, MSGID, LIVE, PENDING, HEAPN, DQH, DQN, LOGN, MFREE, OVERTAKES, ERR, \
    NTASK, NJOB = range(15)
N_S = 15
# ---- task ints T
(NODE, JOB, RANK, STATE, BLK, REM, QLEFT, SEGST, SMQ, RMQN, RMQH, RMQT, CPU, WDONE, ARR,
 FIN, VM, FAULTS, DE, WORK, PBASE, WRK, OFF, PHEND, RESWS, NRES, OP, K, R, LEFT, LOG2S,
 FIRST) = range(32)
N_T = 32
#: under a msg_model other than pairwise, LEFT holds the task's first burst in BU
BOFF = LEFT
# ---- program state of task t under a msg_model other than pairwise: BU[t * N_PG + x]
# (kept out of T: four more columns in T measurably slowed the default path)
PEER, TAG, SUB, GOT = range(4)
N_PG = 4
# ---- task floats F
MES, MEAN, WSMEAN, WSSTD, PHMEAN = range(5)
N_F = 5
# ---- node ints N
RUN, VER, DPEND, PREQ, MEMD, BUSY, RQN, LRUH, LRUT, LRUN, BOOST, FREEH, DISKF = range(13)
N_N = 13
# ---- parameters P (int64)
(P_MODE, P_TOP, P_LOCALBY, P_DERESET, P_MNOL, P_MNOD, P_QUANT, P_QEXP, P_LAT, P_PAGES,
 P_FLAT, P_LITERAL, P_LOG, P_REFS, P_FIFO, P_MSG) = range(16)
N_P = 16
# ---- modes, states, ops, event classes, blocked-on
RR, PRED, DYN, CSM = 0, 1, 2, 3
#: message models (sim.timeshare.csm.MSG_MODELS), in the order of run.MSG_CODES
MSG_PAIRWISE, MSG_EXCHANGE, MSG_RING, MSG_ASYNC, MSG_PROBE = range(5)
S_NEW, S_READY, S_RUNNING, S_BLOCKED, S_DONE = 0, 1, 2, 3, 4
B_NONE, B_RECV, B_FAULT, B_WOKEN = 0, 1, 2, 3
O_NEW, O_COMPUTE, O_SEND, O_RECV, O_DONE = 0, 1, 2, 3, 4
E_DELIVER, E_CPU_END, E_WAKE, E_CALL = 0, 1, 2, 3
# ---- log kinds (names in sim.timeshare.fast.run.KINDS), off reasons, block causes
L_ARRIVE, L_DISPATCH, L_REF, L_LOAD, L_FREE, L_OFF, L_BLOCK, L_WAKE, L_SEND, L_DELIVER, \
    L_RECV, L_FINISH, L_END = range(13)
OFF_QUANTUM, OFF_PREEMPT, OFF_BLOCK, OFF_FAULT, OFF_FINISH = range(5)
# ---- random streams (NumPy integers: one compiled version of mt._regen for all three,
# heuristics.compress_kernel.ADD)
RNG_MEM, RNG_PROG, RNG_POL = np.int64(0), np.int64(1), np.int64(2)
# ---- error codes
ERR_HEAP, ERR_MSG, ERR_LOG = 1, 2, 3
_SEQ_BITS = 44


@intrinsic
def _unmanaged(typingctx, arr):
    """The same array view without its NRT meminfo: passing it to a function costs no
    atomic reference counting (the caller keeps the real array alive). Measured: the
    reference counting of 17 array arguments per call took about half the run time."""
    def codegen(context, builder, signature, args):
        ary = context.make_array(arr)(context, builder, value=args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()
    return arr(arr), codegen


@njit(cache=True, inline="always")
def _log(S, LG, P, kind, node, task, a, b, c):
    if P[P_LOG] == 0:
        return
    n = S[LOGN]
    if n >= LG.shape[0]:
        S[ERR] = ERR_LOG
        return
    LG[n, 0] = S[NOW]
    LG[n, 1] = kind
    LG[n, 2] = node
    LG[n, 3] = task
    LG[n, 4] = a
    LG[n, 5] = b
    LG[n, 6] = c
    S[LOGN] = n + 1


@njit(cache=True, inline="always")
def _less(H, i, j):
    return H[i, 0] < H[j, 0] or (H[i, 0] == H[j, 0] and H[i, 1] < H[j, 1])


@njit(cache=True, inline="always")
def _swap(H, i, j):
    for c in range(4):
        x = H[i, c]
        H[i, c] = H[j, c]
        H[j, c] = x


@njit(cache=True, inline="always")
def _push(S, H, time, cls, a, b):
    n = S[HEAPN]
    if n >= H.shape[0]:
        S[ERR] = ERR_HEAP
        return
    H[n, 0] = time
    H[n, 1] = (cls << _SEQ_BITS) | S[SEQ]
    H[n, 2] = a
    H[n, 3] = b
    S[SEQ] += 1
    S[HEAPN] = n + 1
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if _less(H, i, p):
            _swap(H, i, p)
            i = p
        else:
            break


@njit(cache=True, inline="always")
def _pop(S, H):
    """Move the minimum to row ``HEAPN - 1`` (after the call: row S[HEAPN])."""
    n = S[HEAPN] - 1
    _swap(H, 0, n)
    S[HEAPN] = n
    i = 0
    while True:
        lft = 2 * i + 1
        if lft >= n:
            break
        m = lft
        if lft + 1 < n and _less(H, lft + 1, lft):
            m = lft + 1
        if _less(H, m, i):
            _swap(H, m, i)
            i = m
        else:
            break
    return n


@njit(cache=True, inline="always")
def _request_dispatch(S, N, DQ, nd):
    if N[nd, DPEND] == 0:
        N[nd, DPEND] = 1
        DQ[(S[DQH] + S[DQN]) % DQ.shape[0]] = nd
        S[DQN] += 1


# ------------------------------------------------------------------ memory
@njit(cache=True, inline="always")
def _lru_unlink(N, FR, nd, f):
    p = FR[f, 0]
    q = FR[f, 1]
    if p >= 0:
        FR[p, 1] = q
    else:
        N[nd, LRUH] = q
    if q >= 0:
        FR[q, 0] = p
    else:
        N[nd, LRUT] = p


@njit(cache=True, inline="always")
def _lru_append(N, FR, nd, f):
    t = N[nd, LRUT]
    FR[f, 0] = t
    FR[f, 1] = -1
    if t >= 0:
        FR[t, 1] = f
    else:
        N[nd, LRUH] = f
    N[nd, LRUT] = f


@njit(cache=True, inline="always")
def _load(S, T, N, PT, FR, LG, P, nd, t, page):
    g = T[t, PBASE] + page
    f = PT[g]
    if f >= 0:
        _lru_unlink(N, FR, nd, f)
        _lru_append(N, FR, nd, f)
        return
    et = -1
    ep = -1
    if N[nd, LRUN] >= P[P_PAGES]:
        f = N[nd, LRUH]
        _lru_unlink(N, FR, nd, f)
        N[nd, LRUN] -= 1
        PT[FR[f, 2]] = -1
        et = FR[f, 3]
        ep = FR[f, 2] - T[et, PBASE]
        T[et, NRES] -= 1
        if T[et, OFF] <= ep < T[et, OFF] + T[et, WRK]:
            T[et, RESWS] -= 1
    else:
        f = N[nd, FREEH]
        N[nd, FREEH] = FR[f, 1]
    FR[f, 2] = g
    FR[f, 3] = t
    _lru_append(N, FR, nd, f)
    N[nd, LRUN] += 1
    PT[g] = f
    T[t, NRES] += 1
    if T[t, OFF] <= page < T[t, OFF] + T[t, WRK]:
        T[t, RESWS] += 1
    _log(S, LG, P, L_LOAD, nd, t, page, et, ep)


@njit(cache=True)
def _new_phase(T, F, PT, MT, GN, t, cpu):
    v = T[t, VM]
    w = int(np.rint(gauss(MT, GN, RNG_MEM, F[t, WSMEAN] * v, F[t, WSSTD] * v)))
    wrk = min(max(w, 1), v)
    T[t, WRK] = wrk
    off = randbelow(MT, RNG_MEM, v - wrk + 1)
    T[t, OFF] = off
    if F[t, PHMEAN] > 0:
        T[t, PHEND] = cpu + max(1, int(expovariate(MT, RNG_MEM, 1.0 / F[t, PHMEAN])))
    else:
        T[t, PHEND] = -1
    base = T[t, PBASE]
    c = 0
    for p in range(off, off + wrk):
        if PT[base + p] >= 0:
            c += 1
    T[t, RESWS] = c


@njit(cache=True, inline="always")
def _pg_fault(T, P, t):
    if P[P_LITERAL]:
        return 0.0 if T[t, WRK] < T[t, NRES] else T[t, NRES] / T[t, WRK]
    return max(0.0, 1.0 - T[t, RESWS] / T[t, WRK])


# ------------------------------------------------------------------ policy
@njit(cache=True, inline="always")
def _is_local(T, F, P, x):
    if P[P_LOCALBY] == 0:
        return F[x, MES] == 0
    return T[x, JOB] < 0


@njit(cache=True, inline="always")
def _starv(T, F, P, x):
    lim = P[P_MNOL] if _is_local(T, F, P, x) else P[P_MNOD]
    return T[x, DE] < lim


@njit(cache=True, inline="always")
def _rq_insert(N, RQ, nd, pos, t):
    n = N[nd, RQN]
    for j in range(n, pos, -1):
        RQ[nd, j] = RQ[nd, j - 1]
    RQ[nd, pos] = t
    N[nd, RQN] = n + 1


@njit(cache=True, inline="always")
def _place(S, T, F, N, RQ, P, nd, h):
    """Coscheduling.place: lines 3-13; True when h went to RQ[0] by the dynamic rule."""
    mode = P[P_MODE]
    n = N[nd, RQN]
    if mode == RR or (n == 0 and N[nd, RUN] < 0):
        _rq_insert(N, RQ, nd, n, h)
        return False
    if _is_local(T, F, P, h):
        _rq_insert(N, RQ, nd, n, h)
        return False
    exhausted = N[nd, MEMD] > P[P_PAGES]
    if mode == DYN or (mode == CSM and exhausted):
        if T[h, RMQN] > 0:
            _rq_insert(N, RQ, nd, 0, h)
            return True
        if mode == DYN:
            _rq_insert(N, RQ, nd, n, h)
            return False
    if n == 0:
        _rq_insert(N, RQ, nd, 0, h)
        return False
    i = n - 1
    if mode == CSM and exhausted:
        hp = _pg_fault(T, P, h)
        while i >= 0:
            x = RQ[nd, i]
            if not (_starv(T, F, P, x) and _pg_fault(T, P, x) > hp):
                break
            T[x, DE] += 1
            i -= 1
    else:
        hm = F[h, MES]
        while i >= 0:
            x = RQ[nd, i]
            if not (_starv(T, F, P, x) and F[x, MES] < hm):
                break
            T[x, DE] += 1
            i -= 1
    S[OVERTAKES] += n - 1 - i
    _rq_insert(N, RQ, nd, i + 1, h)
    return False


@njit(cache=True, inline="always")
def _pol_insert(S, T, F, N, RQ, P, PF, nd, t, preempted):
    """Coscheduling.insert; True asks to preempt the running task."""
    if preempted:
        b = N[nd, BOOST]
        N[nd, BOOST] = -1
        pos = 1 if (N[nd, RQN] > 0 and b >= 0 and RQ[nd, 0] == b) else 0
        _rq_insert(N, RQ, nd, pos, t)
        return False
    if P[P_MODE] != RR:
        c_mes = T[t, RMQN] + T[t, SMQ]
        p = PF[0]
        F[t, MES] = p * F[t, MES] + (1.0 - p) * c_mes
        if P[P_DERESET] == 0:
            T[t, DE] = 0
    top = _place(S, T, F, N, RQ, P, nd, t)
    if top and P[P_TOP] and N[nd, RUN] >= 0:
        N[nd, BOOST] = t
        return True
    return False

# Every function below takes the whole state, in this order:
#   S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU
# (names as in the module docstring; DQ is the ring of dispatch requests of this instant).


@njit(cache=True, inline="always")
def _insert(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t):
    """Cluster._insert (any reason but "preempted")."""
    if _pol_insert(S, T, F, N, RQ, P, PF, nd, t, False) and N[nd, RUN] >= 0:
        N[nd, PREQ] = 1
    if N[nd, RUN] < 0 or N[nd, PREQ]:
        _request_dispatch(S, N, DQ, nd)


@njit(cache=True)
def _finish(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t):
    nd = T[t, NODE]
    if N[nd, RUN] == t:
        N[nd, RUN] = -1
        N[nd, VER] += 1
        _log(S, LG, P, L_OFF, nd, t, OFF_FINISH, 0, 0)
        _request_dispatch(S, N, DQ, nd)
    T[t, STATE] = S_DONE
    T[t, OP] = O_DONE
    T[t, FIN] = S[NOW]
    N[nd, MEMD] -= T[t, VM]
    S[LIVE] -= 1
    if T[t, NRES] > 0:
        base = T[t, PBASE]
        for g in range(base, base + T[t, VM]):
            f = PT[g]
            if f >= 0:
                _lru_unlink(N, FR, nd, f)
                N[nd, LRUN] -= 1
                FR[f, 1] = N[nd, FREEH]
                N[nd, FREEH] = f
                PT[g] = -1
        T[t, NRES] = 0
        T[t, RESWS] = 0
        _log(S, LG, P, L_FREE, nd, t, 0, 0, 0)
    _log(S, LG, P, L_FINISH, nd, t, 0, 0, 0)


@njit(cache=True, inline="always")
def _burst(MT, left, mean, last):
    """csm._burst_draws: one CPU burst (µs) of ``left`` still to run, the rest when
    ``last``."""
    if last:
        return left
    return min(left, int(mean * expovariate(MT, RNG_PROG, 1.0)))


@njit(cache=True, inline="always")
def _start_round(T, F, MT, t):
    left = T[t, LEFT]
    b = _burst(MT, left, F[t, MEAN], T[t, K] == T[t, R] - 1)
    T[t, LEFT] = left - b
    T[t, OP] = O_COMPUTE
    T[t, REM] = b


@njit(cache=True)
def _advance_model(T, F, P, BU, MT, t):
    """Step ``csm.message_program`` (model ``P[P_MSG]``, not pairwise) of the distributed
    task ``t`` to its next op; True when the program ended.

    The program draws its R bursts at its first step (``csm._bursts``) into
    ``BU[T[t, BOFF]:][:R]``. Round ``K`` runs a compute, then the steps ``SUB = 0, 1, ...``
    of the model (a send to ``PEER`` with tag ``K``, or a receive from ``PEER`` with tag
    ``TAG``; -1 = any source / tag); after the last round (``K = R``) the model's final
    receives. ``GOT`` counts the probe model's non-blocking receives. ``PEER``, ``TAG``,
    ``SUB``, ``GOT`` live in ``BU[t * N_PG:][:N_PG]``.
    """
    op = T[t, OP]
    rounds = T[t, R]
    base = T[t, BOFF]
    if op == O_NEW:
        left = T[t, WORK]
        mean = F[t, MEAN]
        for k in range(rounds):
            b = _burst(MT, left, mean, k == rounds - 1)
            left -= b
            BU[base + k] = b
        T[t, K] = 0
        BU[t * N_PG + GOT] = 0
        T[t, OP] = O_COMPUTE
        T[t, REM] = T[t, WORK] if T[t, LOG2S] == 0 else BU[base]
        return False
    lg = T[t, LOG2S]
    if lg == 0:     # a job of one task: one compute of tc, no messages
        return True
    model = P[P_MSG]
    size = 1 << lg
    me = T[t, RANK]
    first = T[t, FIRST]
    k = T[t, K]
    s = 0 if op == O_COMPUTE else BU[t * N_PG + SUB] + 1
    while True:
        nxt = O_DONE    # O_DONE: this phase has no step s (end of round / program)
        peer = -1
        tag = -1
        if k < rounds:
            if model == MSG_EXCHANGE:
                lft = first + (me - 1) % size
                rgt = first + (me + 1) % size
                if s == 0 or s == 2:
                    nxt = O_SEND if s == 0 else O_RECV
                    peer = lft
                    tag = k
                elif s == 1 or s == 3:
                    if rgt == lft:      # two tasks: one neighbour (dict.fromkeys)
                        s += 1
                        continue
                    nxt = O_SEND if s == 1 else O_RECV
                    peer = rgt
                    tag = k
            elif model == MSG_RING:
                if s == 0:
                    nxt = O_SEND
                    peer = first + (me + 1) % size
                elif s == 1:
                    nxt = O_RECV
                    peer = first + (me - 1) % size
                    tag = k
            elif model == MSG_ASYNC:
                if s == 0:
                    nxt = O_SEND
                    peer = first + (me ^ (1 << (k % lg)))
                elif s == 1 and k > 0:
                    nxt = O_RECV
                    peer = first + (me ^ (1 << ((k - 1) % lg)))
                    tag = k - 1
            else:   # probe
                if s == 0:
                    nxt = O_SEND
                    peer = first + (me ^ (1 << (k % lg)))
                elif T[t, RMQN] > 0:    # csm._recv_all: one Recv() per queued message
                    nxt = O_RECV
                    BU[t * N_PG + GOT] += 1
        else:   # after the last round
            if model == MSG_ASYNC:
                if s == 0:
                    nxt = O_RECV
                    peer = first + (me ^ (1 << ((rounds - 1) % lg)))
                    tag = rounds - 1
            elif model == MSG_PROBE:
                if s < rounds - BU[t * N_PG + GOT]:
                    nxt = O_RECV
        if nxt != O_DONE:
            T[t, OP] = nxt
            BU[t * N_PG + PEER] = peer
            BU[t * N_PG + TAG] = tag
            BU[t * N_PG + SUB] = s
            T[t, K] = k
            return False
        if k >= rounds:
            return True
        k += 1
        T[t, K] = k
        if k < rounds:
            T[t, OP] = O_COMPUTE
            T[t, REM] = BU[base + k]
            return False
        s = 0


@njit(cache=True, inline="always")
def _advance(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t):
    """Step the task program (csm.exchange_program / local_program, or
    csm.message_program under another msg_model) to its next op."""
    if P[P_MSG] != MSG_PAIRWISE and T[t, JOB] >= 0:
        if _advance_model(T, F, P, BU, MT, t):
            _finish(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t)
        return
    op = T[t, OP]
    if op == O_NEW:
        T[t, K] = 0
    elif op == O_COMPUTE and T[t, LOG2S] > 0:
        T[t, OP] = O_SEND
        return
    elif op == O_SEND:
        T[t, OP] = O_RECV
        return
    else:
        T[t, K] += 1
        if T[t, K] >= T[t, R]:
            _finish(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t)
            return
    _start_round(T, F, MT, t)


@njit(cache=True, inline="always")
def _partner(T, t):
    return T[t, FIRST] + (T[t, RANK] ^ (1 << (T[t, K] % T[t, LOG2S])))


@njit(cache=True, inline="always")
def _send(S, T, H, MS, LG, P, BU, t):
    """The message of task ``t``'s pending send, on its way; False (and ``S[ERR]``) when
    no message slot is free."""
    slot = S[MFREE]
    if slot < 0:
        S[ERR] = ERR_MSG
        return False
    S[MFREE] = MS[slot, 4]
    mid = S[MSGID]
    S[MSGID] = mid + 1
    T[t, SMQ] += 1
    dst = _partner(T, t) if P[P_MSG] == MSG_PAIRWISE else BU[t * N_PG + PEER]
    _log(S, LG, P, L_SEND, T[t, NODE], t, mid, dst, 0)
    MS[slot, 0] = t
    MS[slot, 1] = dst
    MS[slot, 2] = T[t, K]
    MS[slot, 3] = mid
    MS[slot, 4] = -1
    _push(S, H, S[NOW] + P[P_LAT], E_DELIVER, slot, 0)
    return True


@njit(cache=True, inline="always")
def _match(T, MS, P, BU, t):
    """Slot of the first RMQ message matching the pending Recv, or -1."""
    m = T[t, RMQH]
    if P[P_MSG] == MSG_PAIRWISE:  # the hot default path: no wildcard tests
        src = _partner(T, t)
        tag = T[t, K]
        while m >= 0:
            if MS[m, 0] == src and MS[m, 2] == tag:
                return m
            m = MS[m, 4]
        return -1
    src = BU[t * N_PG + PEER]   # -1: any source / tag
    tag = BU[t * N_PG + TAG]
    while m >= 0:
        if (src < 0 or MS[m, 0] == src) and (tag < 0 or MS[m, 2] == tag):
            return m
        m = MS[m, 4]
    return -1


@njit(cache=True, inline="always")
def _rmq_remove(S, T, MS, t, slot):
    prev = -1
    m = T[t, RMQH]
    while m != slot:
        prev = m
        m = MS[m, 4]
    nxt = MS[m, 4]
    if prev >= 0:
        MS[prev, 4] = nxt
    else:
        T[t, RMQH] = nxt
    if nxt < 0:
        T[t, RMQT] = prev
    T[t, RMQN] -= 1
    MS[slot, 4] = S[MFREE]
    S[MFREE] = slot


@njit(cache=True, inline="always")
def _block(S, T, N, DQ, LG, P, nd, t):
    N[nd, RUN] = -1
    T[t, STATE] = S_BLOCKED
    T[t, BLK] = B_RECV
    _log(S, LG, P, L_OFF, nd, t, OFF_BLOCK, 0, 0)
    _log(S, LG, P, L_BLOCK, nd, t, 0, 0, 0)
    _request_dispatch(S, N, DQ, nd)


@njit(cache=True, inline="always")
def _expire(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t):
    N[nd, RUN] = -1
    T[t, STATE] = S_READY
    _log(S, LG, P, L_OFF, nd, t, OFF_QUANTUM, 0, 0)
    _insert(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t)
    _request_dispatch(S, N, DQ, nd)


@njit(cache=True, inline="always")
def _go(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t):
    """Cluster._go: run the program from now until a timed segment, a block, the quantum
    end or the program end. (Each step ends in the one call of :func:`_advance`: every
    copy of an inlined function costs numba's front end time, more the larger it is.)"""
    while True:
        op = T[t, OP]
        if op == O_COMPUTE:
            if T[t, REM] > 0:
                if T[t, QLEFT] <= 0:
                    _expire(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU,
                            nd, t)
                    return
                seg = min(T[t, REM], T[t, QLEFT])
                T[t, SEGST] = S[NOW]
                N[nd, VER] += 1
                _push(S, H, S[NOW] + seg, E_CPU_END, nd, N[nd, VER])
                return
        elif op == O_SEND:
            if not _send(S, T, H, MS, LG, P, BU, t):
                return
        elif op == O_RECV:
            m = _match(T, MS, P, BU, t)
            if m < 0:
                _block(S, T, N, DQ, LG, P, nd, t)
                return
            mid = MS[m, 3]
            _rmq_remove(S, T, MS, t, m)
            _log(S, LG, P, L_RECV, nd, t, mid, 0, 0)
        else:
            return
        _advance(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t)
        if S[ERR]:
            return


@njit(cache=True, inline="always")
def _account(S, T, N, nd, t):
    el = S[NOW] - T[t, SEGST]
    T[t, SEGST] = S[NOW]
    T[t, CPU] += el
    T[t, QLEFT] -= el
    N[nd, BUSY] += el
    T[t, REM] -= el
    T[t, WDONE] += el


@njit(cache=True, inline="always")
def _reference(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t):
    """The ``P[P_REFS]`` page references of a dispatch, stopping at the first miss;
    False = fault (the task went to sleep until the fault is served: ``P[P_FLAT]`` µs
    from now, or with ``P[P_FIFO]`` from when the node's fault server is free)."""
    if T[t, PHEND] >= 0 and T[t, CPU] >= T[t, PHEND]:
        _new_phase(T, F, PT, MT, GN, t, T[t, CPU])
    for _ in range(P[P_REFS]):
        page = T[t, OFF] + randbelow(MT, RNG_MEM, T[t, WRK])
        f = PT[T[t, PBASE] + page]
        if f >= 0:
            _lru_unlink(N, FR, nd, f)
            _lru_append(N, FR, nd, f)
            _log(S, LG, P, L_REF, nd, t, page, 1, 0)
            continue
        T[t, FAULTS] += 1
        _log(S, LG, P, L_REF, nd, t, page, 0, 0)
        _log(S, LG, P, L_OFF, nd, t, OFF_FAULT, 0, 0)
        T[t, STATE] = S_BLOCKED
        T[t, BLK] = B_FAULT
        _log(S, LG, P, L_BLOCK, nd, t, 1, 0, 0)
        done = S[NOW] + P[P_FLAT]
        if P[P_FIFO]:
            done = max(S[NOW], N[nd, DISKF]) + P[P_FLAT]
            N[nd, DISKF] = done
        _push(S, H, done, E_WAKE, t, page)
        return False
    return True


@njit(cache=True, inline="always")
def _preempt(S, T, F, N, RQ, LG, P, PF, nd):
    """The start of Cluster._dispatch on node ``nd``: the running task, if a dispatch was
    requested for it, goes back to the run queue; whether to dispatch (False: a task runs
    and no dispatch is pending)."""
    r = N[nd, RUN]
    if r >= 0:
        if N[nd, PREQ] == 0:
            return False
        _account(S, T, N, nd, r)
        N[nd, VER] += 1
        N[nd, RUN] = -1
        _log(S, LG, P, L_OFF, nd, r, OFF_PREEMPT, 0, 0)
        T[r, STATE] = S_READY
        _pol_insert(S, T, F, N, RQ, P, PF, nd, r, True)
    N[nd, PREQ] = 0
    return True


@njit(cache=True, inline="always")
def _pick(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd):
    """The loop body of Cluster._dispatch on an idle node: the first queued task whose
    pages can be referenced, made the running task with a new quantum; -1 when the
    queue runs out. :func:`run` then runs it (:func:`_go`) and asks again while the node
    is idle, so that ``_go`` and this function each have one call site."""
    while True:
        n = N[nd, RQN]
        if n == 0:
            return -1
        t = RQ[nd, 0]
        for j in range(n - 1):
            RQ[nd, j] = RQ[nd, j + 1]
        N[nd, RQN] = n - 1
        if P[P_DERESET] == 1:
            T[t, DE] = 0
        _log(S, LG, P, L_DISPATCH, nd, t, 0, 0, 0)
        if T[t, VM] > 0 and not _reference(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR,
                                           MT, GN, P, PF, BU, nd, t):
            continue
        T[t, STATE] = S_RUNNING
        N[nd, RUN] = t
        if P[P_QEXP]:
            T[t, QLEFT] = max(1, int(expovariate(MT, RNG_POL, 1.0 / P[P_QUANT])))
        else:
            T[t, QLEFT] = P[P_QUANT]
        return t


@njit(cache=True, inline="always")
def _deliver(S, T, MS, LG, P, BU, slot):
    """The message in ``slot`` delivered to its task's queue; the task when the message
    wakes it (blocked on a receive it matches), else -1."""
    T[MS[slot, 0], SMQ] -= 1
    t = MS[slot, 1]
    nd = T[t, NODE]
    MS[slot, 4] = -1
    if T[t, RMQT] >= 0:
        MS[T[t, RMQT], 4] = slot
    else:
        T[t, RMQH] = slot
    T[t, RMQT] = slot
    T[t, RMQN] += 1
    _log(S, LG, P, L_DELIVER, nd, t, MS[slot, 3], 0, 0)
    if T[t, STATE] == S_DONE or T[t, OP] != O_RECV:
        return -1
    if _match(T, MS, P, BU, t) < 0:
        return -1
    if T[t, STATE] == S_BLOCKED and T[t, BLK] == B_RECV:
        T[t, BLK] = B_WOKEN
        return t
    return -1


@njit(cache=True, inline="always")
def _wake(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t, page):
    """Wake ``t`` after its fault on ``page`` (>= 0) or its message (page -1)."""
    nd = T[t, NODE]
    if page >= 0:
        _load(S, T, N, PT, FR, LG, P, nd, t, page)
    T[t, STATE] = S_READY
    T[t, BLK] = B_NONE
    _log(S, LG, P, L_WAKE, nd, t, 0, 0, 0)
    _insert(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t)


@njit(cache=True)
def _spawn(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t, nd, res):
    """Cluster.spawn of task ``t`` (static fields already set) on node ``nd``."""
    T[t, NODE] = nd
    T[t, ARR] = S[NOW]
    T[t, STATE] = S_NEW
    vm = T[t, VM]
    _new_phase(T, F, PT, MT, GN, t, np.int64(0))
    N[nd, MEMD] += vm
    S[LIVE] += 1
    _log(S, LG, P, L_ARRIVE, nd, t, T[t, JOB], T[t, WORK], 0)
    n = min(res, vm)
    off = T[t, OFF]
    wrk = T[t, WRK]
    for j in range(n):
        if j < wrk:
            p = off + j
        else:
            p = j - wrk
            if p >= off:
                p += wrk
        _load(S, T, N, PT, FR, LG, P, nd, t, p)
    _advance(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t)
    if T[t, STATE] != S_DONE:
        T[t, STATE] = S_READY
        _insert(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t)


@njit(cache=True, inline="always")
def _resident(N, P, nd, vm):
    """Eq. 7 (csm.initial_resident) with N_k.mem including the new task."""
    nk = N[nd, MEMD] + vm
    m = P[P_PAGES]
    return vm if nk < m else (vm * m) // nk


@njit(cache=True)
def _arrival(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, A, i):
    """csm.schedule_arrivals' callback for arrival ``i`` (A rows: time, first task,
    size, node of a local task or -1)."""
    first = A[i, 1]
    size = A[i, 2]
    if A[i, 3] >= 0:
        nd = A[i, 3]
        _spawn(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, first, nd,
               _resident(N, P, nd, T[first, VM]))
        return
    nn = N.shape[0]
    order = np.arange(nn)
    for a in range(1, nn):          # stable insertion sort by (mem demand, id)
        x = order[a]
        b = a - 1
        while b >= 0 and N[order[b], MEMD] > N[x, MEMD]:
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = x
    rk = np.arange(size)
    for a in range(1, size):        # ranks by (-vir_mem, rank)
        x = rk[a]
        b = a - 1
        while b >= 0 and T[first + rk[b], VM] < T[first + x, VM]:
            rk[b + 1] = rk[b]
            b -= 1
        rk[b + 1] = x
    nodes = np.empty(size, np.int64)
    for slot in range(size):
        nodes[rk[slot]] = order[slot]
    res = np.empty(size, np.int64)
    for r in range(size):
        res[r] = _resident(N, P, nodes[r], T[first + r, VM])
    for r in range(size):
        _spawn(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, first + r,
               nodes[r], res[r])


@njit(cache=True, inline="always")
def _run_node(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t):
    """Run task ``t`` on node ``nd`` (:func:`_go`); with ``t = -1``, the rest of
    Cluster._dispatch: pick a task (:func:`_pick`) and run it while the node is idle.
    One call site in :func:`run`, and the one of ``_go`` and ``_pick``."""
    dispatch = t < 0
    while True:
        if dispatch:
            if N[nd, RUN] >= 0:
                return
            t = _pick(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd)
            if t < 0:
                return
        _go(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, nd, t)
        if S[ERR] or not dispatch:
            return


@njit(cache=True)
def run(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, A):
    """Cluster.run over every arrival of ``A``; returns the error code (0 = done)."""
    S, T, F, N, RQ, H, DQ = (_unmanaged(S), _unmanaged(T), _unmanaged(F), _unmanaged(N),
                             _unmanaged(RQ), _unmanaged(H), _unmanaged(DQ))
    MS, LG, PT, FR = _unmanaged(MS), _unmanaged(LG), _unmanaged(PT), _unmanaged(FR)
    MT, GN, P, PF = _unmanaged(MT), _unmanaged(GN), _unmanaged(P), _unmanaged(PF)
    BU, A = _unmanaged(BU), _unmanaged(A)
    # one arrival in the heap at a time (the next is pushed when it is popped): arrivals
    # are in time order and E_CALL is the last class, so the order of the events is the
    # one of pushing them all now, with a heap of the live events only
    S[PENDING] = A.shape[0]
    if A.shape[0] > 0:
        _push(S, H, A[0, 0], E_CALL, 0, 0)
    nn = DQ.shape[0]
    while S[HEAPN] > 0 or S[DQN] > 0:
        if S[ERR]:
            return S[ERR]
        if S[LIVE] == 0 and S[PENDING] == 0:
            break
        go_nd = -1  # the node whose task runs next (_run_node's one call site below)
        go_t = -1
        if S[DQN] > 0 and (S[HEAPN] == 0 or H[0, 0] > S[NOW]):
            nd = DQ[S[DQH]]
            S[DQH] = (S[DQH] + 1) % nn
            S[DQN] -= 1
            S[EVENTS] += 1
            N[nd, DPEND] = 0
            if _preempt(S, T, F, N, RQ, LG, P, PF, nd):
                go_nd = nd
        else:
            j = _pop(S, H)
            S[NOW] = H[j, 0]
            S[EVENTS] += 1
            cls = H[j, 1] >> _SEQ_BITS
            a = H[j, 2]
            b = H[j, 3]
            if cls == E_CPU_END:
                if b == N[a, VER]:
                    t = N[a, RUN]
                    _account(S, T, N, a, t)
                    if T[t, REM] <= 0:
                        _advance(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU,
                                 t)
                    go_nd = a
                    go_t = t
            elif cls == E_DELIVER or cls == E_WAKE:
                # one copy of _wake, whichever event wakes the task
                t = a
                page = b
                if cls == E_DELIVER:
                    t = _deliver(S, T, MS, LG, P, BU, a)
                    page = np.int64(-1)
                if t >= 0:
                    _wake(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, t, page)
            else:
                S[PENDING] -= 1
                if a + 1 < A.shape[0]:
                    _push(S, H, A[a + 1, 0], E_CALL, a + 1, 0)
                _arrival(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, A, a)
        if go_nd >= 0:
            _run_node(S, T, F, N, RQ, H, DQ, MS, LG, PT, FR, MT, GN, P, PF, BU, go_nd, go_t)
    if S[ERR]:
        return S[ERR]
    _log(S, LG, P, L_END, -1, -1, 1 if (S[LIVE] == 0 and S[PENDING] == 0) else 0, 0, 0)
    return S[ERR]


# numba does not see changes in the kernels this module calls: keep its cache honest
refresh(__name__, [mt])
