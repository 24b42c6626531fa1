"""The slack scheduler's whole simulation compiled with numba: the Python engine's schedule.

:func:`run` is :func:`sim.batch.machine.simulate` driving
:class:`sim.batch.slack_scheduler.SlackScheduler` with a :class:`heuristics.slack.Inserter`
(compress orders AST, AAT, DU, DC, DP), on arrays: the event loop, the scheduler's
bookkeeping (slack, scheduled starts, promises, the first placement's priority update,
the overrun re-placement) and every decision (:func:`heuristics.slack_kernel._decide`,
the compiled slot search) run in one compiled call. The Python classes stay the readable
reference; every step below follows them in the same order with the same float
operations, so the start array is theirs (:mod:`tests.batch.test_slack_loop` checks it).

Event order at one instant (as ``sim.batch.machine.simulate``): every end (the scheduler
marks a ``remove`` as due when a job ends before its estimate), then the overrun notices
in the order they were scheduled (each extends the job's estimate to ``now + requested``
and re-places every waiting job greedily), then every arrival in workload order (each:
overdue estimates extended, the due ``remove`` run, the job inserted), then one decision
(overdue estimates extended, the due ``remove`` run, the jobs whose scheduled start has
come started in ``(te, id)`` order) and the policy's next wake-up.

State: ``JT[j]`` the int fields of job ``j`` (columns below), ``PF[j]`` its ``(UP, PP)``;
parameters ``P`` (ints) and ``Q`` (floats), columns below; counters and the error in
``R``; the loop's scalars in ``S`` (columns below). Times are integer seconds, slack real
seconds.

Only :func:`run` allocates: the event loop :func:`_events` and everything it calls are
compiled without numba's reference counting (``_nrt=False``) and work in arrays
:func:`run` made; before an instant the heap or the search's scratch space has no room
for, :func:`_events` returns :data:`GROW`, and :func:`run` grows them and calls it again
(the loop's state is in ``S``, so it goes on where it stopped).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from heuristics import compress_kernel
from heuristics import slack_kernel as SK
from sim.batch.fast import kernel as batch_kernel
from sim.batch.fast.kernel import HN, N_S, WAKE_UP, arrivals_at, grown_heap, hpop, hpush
from sim.numba_cache import refresh

# ---- job ints JT
ID, SUB, RUN, REQ, N, START, END, KILLED, PROM, HASP = range(10)
N_JT = 10
# ---- parameters P (ints)
P_CAP, P_ORDER, P_HOLD, P_FROM_START, P_NEUMAIER, P_KILL, P_PRIO_IN, P_RESET = range(8)
N_P = 8
# ---- parameters Q (floats)
Q_SF, Q_AWT, Q_AU, Q_AT, Q_AP, Q_AF, Q_PFLOOR, Q_SFLOOR = range(8)
N_Q = 8
# ---- priority_in codes
PRIO_BOTH, PRIO_PRICE, PRIO_SLACK = 0, 1, 2
# ---- results R: insert and remove counts, error code, the job it concerns
R_INSERT, R_REMOVE, R_ERR, R_JOB = range(4)
N_R = 4
# ---- error codes
OK = 0
#: jobs still waiting at the end
STUCK = -1
#: a job's scheduled start passed before the simulator called back
LATE = -2
#: a job due to start does not fit in the free processors
NO_ROOM = -3
#: the search found no candidate (cannot happen: the last slot leaves the machine empty)
NOT_FOUND = -4
#: :func:`_events`' answer when an array needs more room (:func:`run` grows it)
GROW = 1
# ---- scalars of the loop state S (after the heap's own columns of kernel.S): waiting and
# running jobs, overdue ones, free processors, a removal due, the next arrival, overrun
# notices scheduled, the pending wake-up (flag, time), the sizes :func:`run` grows to
WN, RN, NOVR, FREE, DUE, NA, OSEQ_N, HAS_WAKE, WAKE_AT = range(N_S, N_S + 9)
NEED_H, NEED_K, NEED_F, NEED_B = range(N_S + 9, N_S + 13)
N_SS = N_S + 13
# ---- rows of the int scratch Z (2 n + 4 columns): the profile of _replace_all (times,
# free processors), the running jobs' ends and processors, a sorted order and its merge
# scratch, the running jobs' order and its merge scratch
ZT, ZF, ZRE, ZRN, ZO, ZX, ZRO, ZRX = range(8)
N_Z = 8


@njit(cache=True, _nrt=False)
def _priority(up, pp, sp):
    """``SlackScheduler._priority``: ``(UP + PP + SP) / 3``, -inf over quota."""
    if pp == -np.inf:
        return -np.inf
    return (up + pp + sp) / 3.0


@njit(cache=True, _nrt=False)
def _split(up, pp, sp, prio_in):
    """``SlackScheduler._split``: ``(p in the price, p behind s0)``."""
    p = _priority(up, pp, sp)
    if prio_in == PRIO_BOTH or p == -np.inf:
        return p, p
    p_sp = _priority(0.0, 0.0, sp)
    if prio_in == PRIO_PRICE:
        return p, p_sp
    return p_sp, p


@njit(cache=True, _nrt=False)
def _slack0(p, sf, awt):
    """``SlackScheduler._slack0``: ``(1 - p) SF AWT`` seconds, inf when p = -inf."""
    if p == -np.inf:
        return np.inf
    return (1.0 - p) * sf * awt


@njit(cache=True, _nrt=False)
def _by_te_id(W, m, TE, JT, out, tmp):
    """The jobs ``W[:m]`` in ``(te, id)`` order, written into ``out[:m]`` (``tmp``: scratch
    of ``m`` entries at least)."""
    for q in range(m):
        out[q] = W[q]
    SK._order_by2(TE, JT, np.int64(ID), out, m, tmp)


@njit(cache=True, _nrt=False)
def _room(now, S, JT, HT, WK, WF, WB):
    """Whether the heap and the search's scratch space have room for everything one step
    at ``now`` can ask: two heap entries per job it can start and a wake-up, a decision on
    every waiting job and every arrival at ``now``
    (``heuristics.slack_kernel.decide_ws_sizes``). Else the sizes needed go to
    ``S[NEED_H]``, ``S[NEED_K]``, ``S[NEED_F]``, ``S[NEED_B]``."""
    m = S[WN] + arrivals_at(JT, S[NA], SUB, now)
    ni, nf, nb = SK.decide_ws_sizes(m, S[RN])
    S[NEED_H] = S[HN] + 2 * m + 1
    S[NEED_K] = ni
    S[NEED_F] = nf
    S[NEED_B] = nb
    return (S[NEED_H] <= HT.shape[0] and ni <= WK.shape[0] and nf <= WF.shape[0]
            and nb <= WB.shape[0])


@njit(cache=True, _nrt=False)
def _replace_all(now, S, JT, TE, SL, EST, W, RJ, cap, Z):
    """``SlackScheduler._replace_all``: every waiting job re-placed greedily, in ``(te,
    id)`` order, at its earliest start in the running jobs' profile; slack charged, never
    below 0. ``Z``: the int scratch (rows ``ZT`` ...)."""
    r = S[RN]
    m = S[WN]
    T = Z[ZT]
    F = Z[ZF]
    re_ = Z[ZRE]
    rn_ = Z[ZRN]
    for q in range(r):
        re_[q] = EST[RJ[q]]
        rn_[q] = JT[RJ[q], N]
    L = SK._running(now, cap, re_[:r], rn_[:r], T, F, Z[ZRO], Z[ZRX])
    order = Z[ZO]
    _by_te_id(W, m, TE, JT, order, Z[ZX])
    for q in range(m):
        j = order[q]
        n = JT[j, N]
        t = JT[j, REQ]
        st, _ = SK._earliest(T, F, L, t, n, now)
        L = SK._add(T, F, L, st, st + t, n)
        SL[j] = max(SL[j] - (st - TE[j]), 0.0)
        TE[j] = st


@njit(cache=True, _nrt=False)
def _extend_overdue(now, S, JT, TE, SL, EST, W, RJ, OV, cap, Z):
    """``SlackScheduler._extend_overdue``: the overdue jobs whose estimate has passed get
    ``now + requested``; then every waiting job is re-placed."""
    due = False
    for x in range(S[NOVR]):
        j = OV[x]
        if EST[j] <= now:
            EST[j] = now + JT[j, REQ]
            due = True
    if due:
        _replace_all(now, S, JT, TE, SL, EST, W, RJ, cap, Z)


@njit(cache=True, _nrt=False)
def _decide(now, j_new, p_new, S, JT, TE, SL, S0, PR, EST, W, RJ, DP, DQ, DJI, DTE, DX, DRE,
            DRN, OUT, WK, WF, WB):
    """``SlackScheduler._decide``: one insertion (``j_new >= 0``, priority ``p_new``) or
    remove (``j_new < 0``) on the compiled search, applied to the waiting jobs; returns the
    chosen slot ``ts``, or -1 if the search found none. ``WK``, ``WF``, ``WB``: the
    search's scratch (:func:`_room` saw to its size)."""
    m = S[WN]
    for q in range(m):
        j = W[q]
        DJI[q, 0] = JT[j, ID]
        DJI[q, 1] = JT[j, N]
        DJI[q, 2] = JT[j, REQ]
        DJI[q, 3] = JT[j, SUB]
        DTE[q] = TE[j]
        DX[q, 0] = SL[j]
        DX[q, 1] = S0[j]
        DX[q, 2] = PR[j]
    r = S[RN]
    for q in range(r):
        DRE[q] = EST[RJ[q]]
        DRN[q] = JT[RJ[q], N]
    DP[0] = now
    if j_new >= 0:
        DP[3] = JT[j_new, N]
        DP[4] = JT[j_new, REQ]
        DP[5] = 1
        DQ[6] = p_new
    else:
        DP[3] = 0
        DP[4] = 0
        DP[5] = 0
        DQ[6] = 1.0
    found, ts, count = SK._decide(DP, DQ, DRE[:r], DRN[:r], DJI[:m], DTE[:m], DX[:m], OUT,
                                  WK, WF, WB)
    if not found:
        return -1
    for q in range(count):
        j = W[OUT[2, q]]
        st = OUT[1, q]
        if st != TE[j]:
            SL[j] -= st - TE[j]
            TE[j] = st
    return ts


@njit(cache=True, inline="always")
def _take_out(A, POS, S, count, j):
    """Take ``j`` out of the set ``A[:S[count]]`` (``POS``: each member's place in ``A``),
    the last member moving into its place."""
    x = POS[j]
    last = A[S[count] - 1]
    A[x] = last
    POS[last] = x
    POS[j] = -1
    S[count] -= 1


@njit(cache=True, _nrt=False)
def _remove_decision(now, S, JT, TE, SL, S0, PR, EST, W, RJ, DP, DQ, DJI, DTE, DX, DRE, DRN,
                     OUT, WK, WF, WB, R):
    """The decision a removal owes (the Python scheduler's ``remove_due``), if any job
    waits: every waiting job placed again, no new job. Returns whether it found one, with
    ``R[R_ERR]`` set when no insertion was found."""
    if S[WN] == 0:
        return True
    R[R_REMOVE] += 1
    if _decide(now, np.int64(-1), 1.0, S, JT, TE, SL, S0, PR, EST, W, RJ, DP, DQ, DJI, DTE, DX, DRE,
               DRN, OUT, WK, WF, WB) < 0:
        R[R_ERR] = NOT_FOUND
        return False
    return True


@njit(cache=True, _nrt=False)
def _events(JT, PF, P, Q, R, S, HT, HP, TE, EST, SL, S0, PR, W, WPOS, RJ, RPOS, OV, OSEQ, OR_,
            DP, DQ, DJI, DTE, DX, DRE, DRN, OUT, WK, WF, WB, Z):
    """:func:`run`'s event loop, from the state in ``S`` (``S[NA]`` the next arrival,
    ``S[OSEQ_N]`` the overrun notices scheduled so far, ``S[HAS_WAKE]`` and ``S[WAKE_AT]``
    the pending wake-up, ``S[DUE]`` a removal due); returns :data:`GROW` before a step the
    arrays have no room for (:func:`_room`), else :func:`run`'s answer."""
    n = JT.shape[0]
    cap = P[P_CAP]
    kill = P[P_KILL] == 1
    prio_in = P[P_PRIO_IN]
    reset = P[P_RESET] == 1
    sf = Q[Q_SF]
    awt = Q[Q_AWT]
    order = Z[ZO]
    while S[NA] < n or S[HN] > 0:
        na = S[NA]
        if S[HN] == 0 or (na < n and JT[na, SUB] < HT[0]):
            now = JT[na, SUB]
        else:
            now = HT[0]
        if not _room(now, S, JT, HT, WK, WF, WB):
            return GROW
        # 1. ends, then the overrun notices (in the order scheduled); wake-ups are instants
        no = np.int64(0)  # np.int64: one version of the sort (compress_kernel.ADD)
        while S[HN] > 0 and HT[0] == now:
            p = hpop(HT, HP, S)
            if p < 0:
                continue
            if p < n:
                S[FREE] += JT[p, N]
                _take_out(RJ, RPOS, S, RN, p)
                for x in range(S[NOVR]):
                    if OV[x] == p:
                        OV[x] = OV[S[NOVR] - 1]
                        S[NOVR] -= 1
                        break
                if EST[p] > now:
                    S[DUE] = 1
            else:
                OR_[no] = p - n
                no += 1
        if no > 0:
            SK._order_by(OSEQ, OR_, no, Z[ZX])
            for q in range(no):
                j = OR_[q]
                OV[S[NOVR]] = j
                S[NOVR] += 1
                EST[j] = now + JT[j, REQ]
                _replace_all(now, S, JT, TE, SL, EST, W, RJ, cap, Z)
        # 2. arrivals, in workload order
        while na < n and JT[na, SUB] == now:
            j = na
            na += 1
            S[NA] = na
            if S[NOVR] > 0:
                _extend_overdue(now, S, JT, TE, SL, EST, W, RJ, OV, cap, Z)
            if S[DUE] == 1:
                S[DUE] = 0
                if not _remove_decision(now, S, JT, TE, SL, S0, PR, EST, W, RJ, DP, DQ, DJI,
                                        DTE, DX, DRE, DRN, OUT, WK, WF, WB, R):
                    return NOT_FOUND
            up = PF[j, 0]
            pp = PF[j, 1]
            p, p_s = _split(up, pp, 0.5, prio_in)
            R[R_INSERT] += 1
            te = _decide(now, j, max(p, 0.0), S, JT, TE, SL, S0, PR, EST, W, RJ, DP, DQ, DJI,
                         DTE, DX, DRE, DRN, OUT, WK, WF, WB)
            if te < 0:
                R[R_ERR] = NOT_FOUND
                R[R_JOB] = j
                return NOT_FOUND
            # first placement: SP, p and s0 recomputed once, the job not moved
            s0_first = _slack0(p_s, sf, awt)
            sp = min((te - now) / (2.0 * awt), 1.0)
            p, p_s = _split(up, pp, sp, prio_in)
            s0 = _slack0(p_s, sf, awt)
            s = s0 if reset else s0_first
            TE[j] = te
            SL[j] = s
            S0[j] = s0
            PR[j] = p
            W[S[WN]] = j
            WPOS[j] = S[WN]
            S[WN] += 1
            if np.isfinite(s):
                JT[j, PROM] = np.int64(np.floor(te + s))
                JT[j, HASP] = 1
        if S[HAS_WAKE] == 1 and S[WAKE_AT] <= now:
            S[HAS_WAKE] = 0
        # 3. one decision: the jobs whose scheduled start has come
        if S[NOVR] > 0:
            _extend_overdue(now, S, JT, TE, SL, EST, W, RJ, OV, cap, Z)
        if S[DUE] == 1:
            S[DUE] = 0
            if not _remove_decision(now, S, JT, TE, SL, S0, PR, EST, W, RJ, DP, DQ, DJI, DTE,
                                    DX, DRE, DRN, OUT, WK, WF, WB, R):
                return NOT_FOUND
        nd = np.int64(0)
        for q in range(S[WN]):
            if TE[W[q]] <= now:
                OR_[nd] = W[q]
                nd += 1
        if nd > 0:
            _by_te_id(OR_, nd, TE, JT, order, Z[ZX])
            for q in range(nd):
                j = order[q]
                if TE[j] < now:
                    R[R_ERR] = LATE
                    R[R_JOB] = j
                    return LATE
                if JT[j, N] > S[FREE]:
                    R[R_ERR] = NO_ROOM
                    R[R_JOB] = j
                    return NO_ROOM
                _take_out(W, WPOS, S, WN, j)
                # the machine's start and the planner's booking
                S[FREE] -= JT[j, N]
                RJ[S[RN]] = j
                RPOS[j] = S[RN]
                S[RN] += 1
                req = JT[j, REQ]
                EST[j] = now + req
                JT[j, START] = now
                rt = JT[j, RUN]
                if kill and rt > req:
                    length = req
                    JT[j, KILLED] = 1
                else:
                    length = rt
                    if rt > req:
                        hpush(HT, HP, S, now + req, n + j)
                        OSEQ[j] = S[OSEQ_N]
                        S[OSEQ_N] += 1
                JT[j, END] = now + length
                hpush(HT, HP, S, now + length, j)
        # the policy's wake-up: the next scheduled start, the next overdue estimate
        w = np.int64(-1)
        for q in range(S[WN]):
            t = TE[W[q]]
            if t > now and (w < 0 or t < w):
                w = t
        for x in range(S[NOVR]):
            t = EST[OV[x]]
            if t > now and (w < 0 or t < w):
                w = t
        if w >= 0 and (S[HAS_WAKE] == 0 or w < S[WAKE_AT]):
            S[HAS_WAKE] = 1
            S[WAKE_AT] = w
            hpush(HT, HP, S, w, WAKE_UP)
    if S[WN] > 0:
        R[R_ERR] = STUCK
        R[R_JOB] = W[0]
        return STUCK
    return OK


@njit(cache=True)
def run(JT, PF, P, Q, R):
    """Simulate (module docstring); fills ``JT``'s START, END, KILLED, PROM and HASP
    columns and ``R``. Returns ``R[R_ERR]``: 0, or a negative error code with the job's
    index in ``R[R_JOB]``. Allocates the state and scratch, runs :func:`_events` and grows
    the heap and the search's scratch (doubled) when it asks for more room."""
    n = JT.shape[0]
    cap = P[P_CAP]
    S = np.zeros(N_SS, np.int64)
    S[FREE] = cap
    HT = np.empty(2 * n + 64, np.int64)
    HP = np.empty(2 * n + 64, np.int64)
    TE = np.zeros(n, np.int64)
    EST = np.zeros(n, np.int64)
    SL = np.zeros(n, np.float64)
    S0 = np.zeros(n, np.float64)
    PR = np.zeros(n, np.float64)
    W = np.empty(n, np.int64)  # waiting jobs (any order)
    WPOS = np.full(n, -1, np.int64)
    RJ = np.empty(n, np.int64)  # running jobs (any order)
    RPOS = np.full(n, -1, np.int64)
    OV = np.empty(n, np.int64)  # overdue running jobs
    OSEQ = np.zeros(n, np.int64)  # order in which the overrun notices were scheduled
    OR_ = np.empty(n, np.int64)
    # the decision's arrays (SK._decide): ints, floats, waiting and running rows, output
    DP = np.zeros(9, np.int64)
    DP[1] = cap
    DP[2] = P[P_ORDER]
    DP[6] = P[P_HOLD]
    DP[7] = P[P_FROM_START]
    DP[8] = P[P_NEUMAIER]
    DQ = np.array((Q[Q_AT], Q[Q_AU], Q[Q_AP], Q[Q_AP] * Q[Q_AF], Q[Q_PFLOOR], Q[Q_SFLOOR],
                   1.0))
    DJI = np.empty((n, 4), np.int64)
    DTE = np.empty(n, np.int64)
    DX = np.empty((n, 3), np.float64)
    DRE = np.empty(n, np.int64)
    DRN = np.empty(n, np.int64)
    OUT = np.empty((3, n), np.int64)
    WK = np.empty(0, np.int64)  # the search's scratch space (grown on demand)
    WF = np.empty(0, np.float64)
    WB = np.empty(0, np.bool_)
    # _replace_all's profile (1 + r + 2 m breakpoints at most) and the sorts' scratch
    Z = np.empty((N_Z, 2 * n + 4), np.int64)
    for j in range(n):
        JT[j, START] = -1
        JT[j, END] = -1
        JT[j, KILLED] = 0
        JT[j, HASP] = 0
        JT[j, PROM] = 0
    while True:
        err = _events(JT, PF, P, Q, R, S, HT, HP, TE, EST, SL, S0, PR, W, WPOS, RJ, RPOS, OV,
                      OSEQ, OR_, DP, DQ, DJI, DTE, DX, DRE, DRN, OUT, WK, WF, WB, Z)
        if err != GROW:
            return err
        if S[NEED_H] > HT.shape[0]:
            HT, HP = grown_heap(HT, HP, S, S[NEED_H])
        if S[NEED_K] > WK.shape[0]:
            WK = np.empty(2 * S[NEED_K], np.int64)
        if S[NEED_F] > WF.shape[0]:
            WF = np.empty(2 * S[NEED_F], np.float64)
        if S[NEED_B] > WB.shape[0]:
            WB = np.empty(2 * S[NEED_B], np.bool_)


# numba does not see changes in the kernels this module calls: keep its cache honest
refresh(__name__, [SK, batch_kernel, compress_kernel])
