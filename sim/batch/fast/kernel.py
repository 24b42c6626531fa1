"""The numba kernel: :func:`sim.batch.machine.simulate` with the policies of
:mod:`heuristics.backfill` (FCFS, EASY, conservative, unconstrained; selections FF, BL, BB),
on arrays.

The event loop and every policy step follow the Python engine in the same order, so the
start array is the Python engine's (:mod:`tests.batch.test_compiled_engine` checks it).
The policies plan on the availability profile of :mod:`heuristics.compress_kernel`
(breakpoints ``T[:S[PN]]``, free capacity ``F[k, i]``); every query the policies make of it
depends only on the step function it holds, not on where redundant breakpoints lie, so
merging equal neighbours at other moments than ``sim.profile.Profile`` does changes no
decision. Times are integer seconds.

State: ``S`` the scalars (columns below), ``JI[j]`` the int fields of job ``j`` (columns
below), ``D[j, k]`` its demand, ``Q[S[QH]:S[QT]]`` the waiting queue in arrival order,
``HT``/``HP`` the event heap (time, payload: ``j`` an end, ``n + j`` an overrun notice,
-1 a wake-up), ``OV[:S[NOV]]`` the overdue running jobs, ``C`` scratch for candidates,
``G[j]`` the bit mask of BL's ``G_w(J)``, ``GB`` the capacity given back that the
compression's searches may use (:func:`may_move`). Parameters ``P`` (columns below).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from heuristics import compress_kernel
from heuristics.compress_kernel import ADD, NEVER_FITS, OVER_CAPACITY, TAKE, UNDER_ZERO
from sim.numba_cache import refresh

# ---- policies, selections, compressions, BL fallbacks
FCFS, EASY, CONS, UNC = 0, 1, 2, 3
FF, BL, BB = 0, 1, 2
C_ARRIVAL, C_START, C_NOW, C_NONE = 0, 1, 2, 3
FB_FF, FB_NEXT, FB_STOP = 0, 1, 2
# ---- parameters P
P_POL, P_SEL, P_KILL, P_WINDOW, P_FB, P_LARGEST, P_TIESLAST, P_MULT, P_COMPR = range(9)
N_P = 9
# ---- scalars S
PN, HN, NOV, QH, QT, COMPACTED, ERR, DIRTY, MINRES, NGB, NA, WAKE, NEED_T, NEED_H = range(14)
N_S = 14
#: ``S[MINRES]``: the earliest reservation in the queue, or one of these
MR_EMPTY, MR_UNKNOWN = -1, -2
# ---- job ints JI
SUB, RUN, REQ, EST, START, END, RES, PROM, HASP, KILLED, OVER = range(11)
N_JI = 11
#: error code: a job never started (the policy left it waiting at the end)
STUCK = -10
#: :func:`events`' answer when an array needs more room (:func:`run` grows it)
GROW = 1
#: the compression searches with :func:`earlier_start_back` on profiles longer than this
#: many breakpoints
BACK_MIN = 64
#: array indices in the loops over the profile are cast to unsigned: numba tests a signed
#: index for a negative value at every access unless it can prove it is not, which also
#: keeps the loop from being vectorised (the values are never negative there). The
#: compression's search, shifts and bookings so indexed: 0.62-0.65x the CPU of conservative
#: under overload (the first 40,000 and 70,000 jobs of SDSC-BLUE with arrivals compressed
#: 1.5x), 0.8-1.07x on the whole log (within the noise of those runs)
_u = np.uint64
#: The constants passed to kernels are NumPy scalars, and counters passed to kernels start
#: at ``np.int64(0)``: numba would compile a kernel once per Python ``int`` or ``bool``
#: constant (``heuristics.compress_kernel.ADD``). :func:`book`'s signs are ``ADD`` and
#: ``TAKE``; ``True`` and ``False``:
YES, NO = np.bool_(True), np.bool_(False)
#: the event heap's payload of a wake-up
WAKE_UP = np.int64(-1)


# ------------------------------------------------------------------ event heap
@njit(cache=True, _nrt=False)
def hpush(HT, HP, S, t, p):
    i = S[HN]
    S[HN] = i + 1
    while i > 0:
        par = (i - 1) >> 1
        if HT[par] <= t:
            break
        HT[i] = HT[par]
        HP[i] = HP[par]
        i = par
    HT[i] = t
    HP[i] = p


@njit(cache=True, _nrt=False)
def hpop(HT, HP, S):
    p = HP[0]
    n = S[HN] - 1
    S[HN] = n
    if n > 0:
        t = HT[n]
        q = HP[n]
        i = 0
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and HT[c + 1] < HT[c]:
                c += 1
            if HT[c] >= t:
                break
            HT[i] = HT[c]
            HP[i] = HP[c]
            i = c
        HT[i] = t
        HP[i] = q
    return p


# ------------------------------------------------------------------ profile
@njit(cache=True, _nrt=False)
def compact(T, F, S):
    """Merge adjacent segments with equal free capacity in every resource."""
    n = S[PN]
    K = F.shape[0]
    w = 1
    for i in range(1, n):
        same = True
        for k in range(K):
            if F[k, i] != F[k, w - 1]:
                same = False
                break
        if not same:
            T[w] = T[i]
            for k in range(K):
                F[k, w] = F[k, i]
            w += 1
    S[PN] = w
    S[COMPACTED] = w


@njit(cache=True, _nrt=False)
def advance(T, F, S, now):
    """Forget the profile before ``now``."""
    n = S[PN]
    if now <= T[0]:
        return
    i = last_le(T, n, now)
    if i > 0:
        K = F.shape[0]
        for x in range(i, n):
            T[_u(x - i)] = T[_u(x)]
            for k in range(K):
                F[k, _u(x - i)] = F[k, _u(x)]
        n -= i
        S[PN] = n
    T[0] = now
    if n > 2 * S[COMPACTED] + 8:
        compact(T, F, S)


@njit(cache=True)
def grown(T, F, S, need):
    """``T``, ``F`` with room for ``need`` more breakpoints."""
    n = S[PN]
    if n + need <= T.shape[0]:
        return T, F
    cap = 2 * (n + need)
    T2 = np.empty(cap, np.int64)
    F2 = np.empty((F.shape[0], cap), np.int64)
    T2[:n] = T[:n]
    F2[:, :n] = F[:, :n]
    return T2, F2


@njit(cache=True)
def grown_heap(HT, HP, S, need):
    """The event heap ``HT``, ``HP`` (``S[HN]`` entries) moved into arrays of ``2 * need``
    entries."""
    HT2 = np.empty(2 * need, np.int64)
    HP2 = np.empty(2 * need, np.int64)
    HT2[:S[HN]] = HT[:S[HN]]
    HP2[:S[HN]] = HP[:S[HN]]
    return HT2, HP2


@njit(cache=True, inline="always")
def last_le(T, n, t):
    """The index of the last breakpoint of ``T[:n]`` at or before ``t`` (``T[0] <= t``)."""
    return last_le_from(T, 0, n, t)


@njit(cache=True, inline="always")
def last_le_from(T, lo, n, t):
    """The index of the last breakpoint of ``T[lo:n]`` at or before ``t`` (``T[lo] <=
    t``)."""
    hi = n
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if T[mid] <= t:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def split(T, F, n, t):
    """Ensure a breakpoint at ``t`` (>= T[0]); returns (index, new n)."""
    i = last_le(T, n, t)
    if T[i] == t:
        return i, n
    K = F.shape[0]
    for x in range(n, i + 1, -1):
        T[_u(x)] = T[_u(x - 1)]
    T[i + 1] = t
    for k in range(K):
        for x in range(n, i, -1):
            F[k, _u(x)] = F[k, _u(x - 1)]
    return i + 1, n + 1


@njit(cache=True, inline="always")
def fits_at(F, i, D, j):
    for k in range(F.shape[0]):
        if F[k, i] < D[j, k]:
            return False
    return True


@njit(cache=True, _nrt=False)
def earliest_start(T, F, n, duration, D, j, not_before):
    """``heuristics.compress_kernel.earliest_start`` for the demand ``D[j]``: the earliest
    start at or after ``not_before`` (>= T[0]) of ``D[j]`` for ``duration``; -1 when it
    never fits."""
    if not_before < T[0]:
        not_before = T[0]
    i = last_le(T, n, not_before)
    start = not_before
    if duration <= 0:
        return start
    while True:
        end = start + duration
        x = i
        while True:
            if not fits_at(F, x, D, j):
                break
            x += 1
            if x >= n or T[x] >= end:
                return start
        if x == n - 1:
            return -1
        i = x + 1
        start = T[i]


@njit(cache=True, _nrt=False)
def earlier_start(T, F, n, duration, D, j, old):
    """``heuristics.compress_kernel.earlier_start`` for the demand ``D[j]``: the earliest
    start before ``old`` with the own reservation ``[old, old + duration)`` given back, as
    the index of its breakpoint in ``T`` (every candidate start is one); -1 when there is
    none."""
    own_end = old + duration
    i = 0
    start = T[0]
    while start < old:
        end = start + duration
        x = i
        ok = True
        while x < n:
            tx = T[x]
            if tx >= end:
                break
            if not (old <= tx < own_end) and not fits_at(F, x, D, j):
                ok = False
                break
            x += 1
        if ok:
            return i
        i = x + 1
        if i >= n:
            return -1
        start = T[i]
    return -1


@njit(cache=True, _nrt=False)
def earlier_start_scan(T, F, n, duration, D, j, old, OK):
    """:func:`earlier_start` in two passes over the segments starting before ``old``
    (``T[0] < old``): which of them hold ``D[j]`` (``OK``, one pass per resource without
    branches), then the first run of them long enough, or reaching ``old`` (the own
    reservation, given back, holds the rest of any run that starts before it)."""
    m = last_le(T, n, old - 1) + 1
    d = D[j, 0]
    for x in range(m):
        OK[x] = F[0, x] >= d
    for k in range(1, F.shape[0]):
        d = D[j, k]
        for x in range(m):
            OK[x] &= F[k, x] >= d
    s = 0
    lim = T[0] + duration
    for x in range(m):
        if T[x] >= lim:
            return s
        if OK[x] == 0:
            s = x + 1
            if s < m:
                lim = T[s] + duration
    return s if s < m else -1


@njit(cache=True, _nrt=False)
def earlier_start_back(T, F, n, duration, D, j, old, OK):
    """:func:`earlier_start` (``T[0] < old``) in passes without branches over the
    segments that start before ``old``: which of them hold ``D[j]`` (``OK``, at K > 1),
    then from the last to the first, the first segment ``e`` at or after each ``x`` that
    does not hold it; the start ``T[x]`` fits when ``e`` is past them (the own
    reservation, given back, holds the rest of the run) or ``T[e] >= T[x] + duration``,
    and the least such ``x`` is the answer (-1 when there is none). The last pass is
    written with selects, not a branch per hole, so a search that finds nothing (most of
    them under overload) costs no branch that follows the holes (not checked in the
    generated code). ``T[m]`` is read, ``m`` the number of segments before ``old`` (``n <
    T.shape[0]``). The arrays are indexed with unsigned integers (:data:`_u`)."""
    m = last_le(T, n, old - 1) + 1
    K = F.shape[0]
    um = _u(m)
    e = um
    best = -1
    if K == 1:
        d = D[j, 0]
        for x in range(m - 1, -1, -1):
            ux = _u(x)
            e = e if F[0, ux] >= d else ux
            best = x if (e == um) | (T[e] - T[ux] >= duration) else best
        return best
    d = D[j, 0]
    for ux in range(um):
        OK[ux] = F[0, ux] >= d
    for k in range(1, K):
        d = D[j, k]
        for ux in range(um):
            OK[ux] &= F[k, ux] >= d
    for x in range(m - 1, -1, -1):
        ux = _u(x)
        e = e if OK[ux] != 0 else ux
        best = x if (e == um) | (T[e] - T[ux] >= duration) else best
    return best


@njit(cache=True, _nrt=False)
def book(T, F, S, cap, start, duration, D, j, sign):
    """Subtract (sign -1) or add back (+1) ``D[j]`` on ``[start, start + duration)``
    (``heuristics.compress_kernel.add``); an error code in ``S[ERR]``."""
    if duration <= 0:
        return
    n = S[PN]
    a, n = split(T, F, n, start)
    b, n = split(T, F, n, start + duration)
    S[PN] = n
    K = F.shape[0]
    for k in range(K):
        d = sign * D[j, k]
        if d == 0:
            continue
        for i in range(a, b):
            v = F[k, _u(i)] + d
            if v < 0:
                S[ERR] = UNDER_ZERO
                return
            if v > cap[k]:
                S[ERR] = OVER_CAPACITY
                return
        for i in range(a, b):
            F[k, _u(i)] += d
    # the step function only changed inside [a, b): its ends may now be redundant
    if b < n and same_as_previous(F, b):
        n = remove(T, F, n, b)
    if a > 0 and same_as_previous(F, a):
        n = remove(T, F, n, a)
    S[PN] = n


@njit(cache=True, _nrt=False)
def move(T, F, S, i, old, duration, D, j, GB, col, W):
    """Move the reservation of ``D[j]`` for ``duration`` from ``[old, old + duration)`` to
    the breakpoint ``T[i]`` < ``old``: ``D[j]`` taken on ``[T[i], p)`` and given back on
    ``[q, old + duration)``, ``p``, ``q`` the earlier and the later of ``T[i] + duration``
    and ``old`` (on ``[p, q)`` the job holds its demand before and after). The segments
    from ``T[i]`` to the one holding ``old + duration`` are rewritten in one pass into
    ``W`` (row 0 the breakpoints, rows ``1 + k`` the free capacity; as long as ``T``),
    split at ``p``, ``q`` and ``old + duration`` and merged with equal neighbours, then
    copied back, the segments after them shifted once (not at all when their number is
    unchanged). Its new place was found free by the compression's search and its old place
    was booked, so neither step can leave the capacities (``book`` checks them). The
    largest free capacity on the part given back goes to ``GB[K + 2 + k, col]``
    (:func:`may_move`; 0 when nothing is given back)."""
    K = F.shape[0]
    for k in range(K):
        GB[K + 2 + k, col] = 0
    if duration <= 0:
        return
    n = S[PN]
    e = T[i] + duration
    p = min(e, old)
    q = max(e, old)
    oe = old + duration
    c = last_le_from(T, i, n, oe)
    w = 0
    for x in range(i, c + 1):
        t = T[x]
        t1 = T[x + 1] if x + 1 < n else oe + 1
        while True:
            # the piece of segment x from t: D[j] taken before p, given back from q to oe
            sgn = -1 if t < p else (1 if q <= t < oe else 0)
            W[0, w] = t
            same = w > 0 or i > 0
            for k in range(K):
                v = F[k, x] + sgn * D[j, k]
                W[1 + k, w] = v
                if sgn == 1 and v > GB[K + 2 + k, col]:
                    GB[K + 2 + k, col] = v
                if same:
                    same = v == (W[1 + k, w - 1] if w > 0 else F[k, i - 1])
            if not same:
                w += 1
            nt = p if p > t else (q if q > t else oe)
            if nt <= t or nt >= t1:
                break
            t = nt
    delta = w - (c + 1 - i)
    if delta > 0:
        for x in range(n - 1, c, -1):
            T[_u(x + delta)] = T[_u(x)]
        for k in range(K):
            for x in range(n - 1, c, -1):
                F[k, _u(x + delta)] = F[k, _u(x)]
    elif delta < 0:
        for x in range(c + 1, n):
            T[_u(x + delta)] = T[_u(x)]
        for k in range(K):
            for x in range(c + 1, n):
                F[k, _u(x + delta)] = F[k, _u(x)]
    for x in range(w):
        T[_u(i + x)] = W[0, x]
    for k in range(K):
        for x in range(w):
            F[k, _u(i + x)] = W[1 + k, x]
    S[PN] = n + delta


@njit(cache=True, inline="always")
def same_as_previous(F, i):
    """Whether segment ``i`` has the free capacity of segment ``i - 1``."""
    for k in range(F.shape[0]):
        if F[k, i] != F[k, i - 1]:
            return False
    return True


@njit(cache=True, inline="always")
def remove(T, F, n, i):
    """Drop breakpoint ``i`` of ``T[:n]`` (``F[:, i]``); returns the new n."""
    for x in range(i, n - 1):
        T[_u(x)] = T[_u(x + 1)]
    for k in range(F.shape[0]):
        for x in range(i, n - 1):
            F[k, _u(x)] = F[k, _u(x + 1)]
    return n - 1


@njit(cache=True, _nrt=False)
def fits_now(free, D, j):
    for k in range(free.shape[0]):
        if D[j, k] > free[k]:
            return False
    return True


# ------------------------------------------------------------------ machine steps
@njit(cache=True, _nrt=False)
def start_job(j, now, booked, S, T, F, HT, HP, free, cap, D, JI, P):
    """Start waiting job ``j`` at ``now``: the machine's bookkeeping and the planner's
    (``booked``: book ``[now, now + requested)`` in the profile)."""
    K = free.shape[0]
    for k in range(K):
        free[k] -= D[j, k]
    req = JI[j, REQ]
    JI[j, EST] = now + req
    if booked:
        book(T, F, S, cap, now, req, D, j, TAKE)
    JI[j, START] = now
    run = JI[j, RUN]
    if P[P_KILL] == 1 and run > req:
        length = req
        JI[j, KILLED] = 1
    else:
        length = run
        if run > req:
            hpush(HT, HP, S, now + req, JI.shape[0] + j)
    JI[j, END] = now + length
    hpush(HT, HP, S, now + length, j)


@njit(cache=True, _nrt=False)
def extend_due(now, S, T, F, cap, D, JI, OV, booked):
    """``Planner.extend(Planner.overdue_due(now))``; returns the number extended."""
    m = 0
    for x in range(S[NOV]):
        j = OV[x]
        if JI[j, EST] <= now:
            JI[j, EST] = now + JI[j, REQ]
            if booked:
                book(T, F, S, cap, now, JI[j, REQ], D, j, TAKE)
            m += 1
    return m


@njit(cache=True, _nrt=False)
def any_due(now, S, JI, OV):
    for x in range(S[NOV]):
        if JI[OV[x], EST] <= now:
            return True
    return False


@njit(cache=True, _nrt=False)
def next_overdue(S, JI, OV):
    """Earliest estimated end of an overdue job, or -1."""
    w = -1
    for x in range(S[NOV]):
        e = JI[OV[x], EST]
        if w < 0 or e < w:
            w = e
    return w


@njit(cache=True, _nrt=False)
def compact_queue(Q, S, JI):
    """Drop the started jobs from the queue (arrival order kept)."""
    w = S[QH]
    for x in range(S[QH], S[QT]):
        j = Q[x]
        if JI[j, START] < 0:
            Q[w] = j
            w += 1
    S[QT] = w


# ------------------------------------------------------------------ selection rules
@njit(cache=True, _nrt=False)
def ranked(values, ties_last, reverse, out):
    """``heuristics.selection._ranked``: resource indices by value (insertion sort), into
    ``out``. Returns nothing: an array returned from a function compiled without reference
    counting (:func:`run`) would be released once too often by a caller with it
    (:func:`bl_masks`)."""
    K = values.shape[0]
    for a in range(K):
        out[a] = a
    for a in range(1, K):
        x = out[a]
        vx = -values[x] if reverse else values[x]
        b = a - 1
        while b >= 0:
            y = out[b]
            vy = -values[y] if reverse else values[y]
            # y stays before x unless key(x) < key(y)
            if vx < vy or (vx == vy and ties_last and x > y):
                out[b + 1] = y
                b -= 1
            else:
                break
        out[b + 1] = x


@njit(cache=True)
def bl_masks(D, cap, window, ties_last):
    """BL's ``G_w(J)`` of every job as a bit mask over resources."""
    n, K = D.shape
    G = np.zeros(n, np.int64)
    r = np.empty(K, np.float64)
    o = np.empty(K, np.int64)
    for j in range(n):
        for k in range(K):
            r[k] = D[j, k] / cap[k]
        ranked(r, ties_last, YES, o)
        m = 0
        for x in range(window):
            m |= 1 << o[x]
        G[j] = m
    return G


@njit(cache=True, _nrt=False)
def pick_bl(C, m, free, cap, D, G, P, U, RK):
    """``BackfillLowest.pick`` over candidates ``C[:m]``; ``U`` (float), ``RK`` (int):
    scratch of K."""
    K = cap.shape[0]
    for k in range(K):
        U[k] = (cap[k] - free[k]) / cap[k]
    ranked(U, P[P_TIESLAST] == 1, NO, RK)
    order = RK
    ntarget = K if P[P_FB] == FB_NEXT else 1
    for t in range(ntarget):
        if P[P_FB] == FB_NEXT:
            target = 1 << order[t]
        else:
            target = 0
            for x in range(P[P_WINDOW]):
                target |= 1 << order[x]
        best = -1
        bests = 0.0
        for i in range(m):
            j = C[i]
            if G[j] != target:
                continue
            if P[P_LARGEST] == 0:
                return i
            s = 0.0
            for k in range(K):
                s += (cap[k] - free[k] + D[j, k]) / cap[k]
            if best < 0 or s > bests:
                best = i
                bests = s
        if best >= 0:
            return best
    return -1 if P[P_FB] == FB_STOP else 0


@njit(cache=True, _nrt=False)
def pick_bb(C, m, free, cap, D, P):
    """``BackfillBalanced.pick`` over candidates ``C[:m]``."""
    K = cap.shape[0]
    best = 0
    bests = 0.0
    for i in range(m):
        j = C[i]
        s = 0.0
        mx = 0.0
        for k in range(K):
            v = (cap[k] - free[k] + D[j, k]) * (1.0 / cap[k])
            s += v
            if k == 0 or v > mx:
                mx = v
        mean = s / K
        bal = mx / mean
        sc = bal * (1.0 - mean) if P[P_MULT] == 1 else bal
        if i == 0 or sc < bests:
            best = i
            bests = sc
    return best


@njit(cache=True, _nrt=False)
def pick(C, m, free, cap, D, G, P, U, RK):
    if P[P_SEL] == BL:
        return pick_bl(C, m, free, cap, D, G, P, U, RK)
    return pick_bb(C, m, free, cap, D, P)


# ------------------------------------------------------------------ admissibility
@njit(cache=True, _nrt=False)
def easy_adm(j, now, shadow, xf, D, JI):
    """EASY's ``admissible`` for a job that fits now, given ``xf`` the free capacity at the
    shadow time (the head's reservation counted). Every booking in the profile but the
    head's starts at or before now (running jobs, extended estimates, jobs started now), so
    free capacity never decreases on [now, shadow) nor from the shadow time on: a job that
    fits now fits until the shadow time, and beyond it exactly when it fits at the shadow
    time. This is ``Profile.fits(now, requested, demand)``, without the scan."""
    if now + JI[j, REQ] <= shadow:
        return True
    for k in range(xf.shape[0]):
        if D[j, k] > xf[k]:
            return False
    return True


@njit(cache=True, _nrt=False)
def taken_at_shadow(j, now, shadow, xf, D, JI):
    """Job ``j`` starts now: it holds its demand at the shadow time when it runs past it."""
    if now + JI[j, REQ] > shadow:
        for k in range(xf.shape[0]):
            xf[k] -= D[j, k]


@njit(cache=True, _nrt=False)
def cons_adm(j, now, T, F, S, D, JI):
    """Conservative's ``_select_now`` admissibility (own reservation given back)."""
    r = JI[j, RES]
    if r == now:
        return False
    req = JI[j, REQ]
    end = now + req
    r_end = r + req if r >= 0 else now
    n = S[PN]
    i = last_le(T, n, now)
    K = F.shape[0]
    while i < n and T[i] < end:
        own = r >= 0 and T[i] >= r and T[i] < r_end
        for k in range(K):
            if F[k, i] + (D[j, k] if own else 0) < D[j, k]:
                return False
        i += 1
    return True


@njit(cache=True, _nrt=False)
def adm(kind, j, now, shadow, xf, T, F, S, D, JI):
    if kind == EASY:
        return easy_adm(j, now, shadow, xf, D, JI)
    if kind == CONS:
        return cons_adm(j, now, T, F, S, D, JI)
    return True


@njit(cache=True, _nrt=False)
def fill_select(kind, lo, now, shadow, xf, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, G, U,
                RK):
    """``Planner.fill`` with a BL or BB rule over ``Q[lo:S[QT]]``; returns whether a job
    started (the queue is not compacted here). ``xf``: EASY's free capacity at the shadow
    time; ``U``, ``RK``: :func:`pick_bl`'s scratch."""
    m = np.int64(0)
    for x in range(lo, S[QT]):
        j = Q[x]
        if fits_now(free, D, j):
            if adm(kind, j, now, shadow, xf, T, F, S, D, JI):
                C[m] = j
                m += 1
    moved = False
    while m > 0:
        i = pick(C, m, free, cap, D, G, P, U, RK)
        if i < 0:
            break
        j = C[i]
        for x in range(i + 1, m):
            C[x - 1] = C[x]
        m -= 1
        if kind == CONS:  # take its reservation out
            r = JI[j, RES]
            JI[j, RES] = -1
            if r >= 0:
                book(T, F, S, cap, r, JI[j, REQ], D, j, ADD)
        elif kind == EASY:
            taken_at_shadow(j, now, shadow, xf, D, JI)
        start_job(j, now, kind != UNC, S, T, F, HT, HP, free, cap, D, JI, P)
        moved = True
        w = np.int64(0)
        for x in range(m):
            c = C[x]
            if fits_now(free, D, c):
                if adm(kind, c, now, shadow, xf, T, F, S, D, JI):
                    C[w] = c
                    w += 1
        m = w
    return moved


# ------------------------------------------------------------------ policies
@njit(cache=True, _nrt=False)
def fcfs_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q):
    qh = S[QH]
    while qh < S[QT] and fits_now(free, D, Q[qh]):
        start_job(Q[qh], now, NO, S, T, F, HT, HP, free, cap, D, JI, P)
        qh += 1
    S[QH] = qh


@njit(cache=True, _nrt=False)
def unc_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, OV, G, U, RK):
    extend_due(now, S, T, F, cap, D, JI, OV, NO)
    if S[QH] == S[QT]:
        return
    if P[P_SEL] == FF:
        moved = False
        for x in range(S[QH], S[QT]):
            j = Q[x]
            if fits_now(free, D, j):
                start_job(j, now, NO, S, T, F, HT, HP, free, cap, D, JI, P)
                moved = True
    else:
        moved = fill_select(np.int64(UNC), S[QH], now, np.int64(0), free, S, T, F, HT, HP,
                            free, cap, D, JI, P, Q, C, G, U, RK)
    if moved:
        compact_queue(Q, S, JI)


@njit(cache=True, _nrt=False)
def easy_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, OV, G, xf, U, RK):
    """``xf``: scratch for the free capacity at the shadow time."""
    advance(T, F, S, now)
    if S[NOV] > 0:
        extend_due(now, S, T, F, cap, D, JI, OV, YES)
    qh = S[QH]
    qt = S[QT]
    while qh < qt and fits_now(free, D, Q[qh]):
        start_job(Q[qh], now, YES, S, T, F, HT, HP, free, cap, D, JI, P)
        qh += 1
    S[QH] = qh
    if qh == qt:
        return
    head = Q[qh]
    hreq = JI[head, REQ]
    shadow = earliest_start(T, F, S[PN], hreq, D, head, now)
    if shadow < 0:
        S[ERR] = NEVER_FITS
        return
    if JI[head, HASP] == 0:
        JI[head, HASP] = 1
        JI[head, PROM] = shadow
    if qt - qh > 1 and free[0] > 0:
        # the free capacity at the shadow time with the head's reservation in it; the
        # reservation itself is not booked: the backfill reads only ``xf`` (easy_adm)
        i = last_le(T, S[PN], shadow)
        for k in range(xf.shape[0]):
            xf[k] = F[k, i] - D[head, k]
        if P[P_SEL] == FF:
            moved = False
            for x in range(qh + 1, qt):
                j = Q[x]
                if fits_now(free, D, j) and easy_adm(j, now, shadow, xf, D, JI):
                    taken_at_shadow(j, now, shadow, xf, D, JI)
                    start_job(j, now, YES, S, T, F, HT, HP, free, cap, D, JI, P)
                    moved = True
        else:
            moved = fill_select(np.int64(EASY), qh + 1, now, shadow, xf, S, T, F, HT, HP, free,
                                cap, D, JI, P, Q, C, G, U, RK)
        if moved:
            compact_queue(Q, S, JI)


@njit(cache=True, _nrt=False)
def cons_start_reserved(now, S, T, F, HT, HP, free, cap, D, JI, P, Q):
    """Start the waiting jobs reserved at ``now``; ``S[MINRES]`` becomes the earliest
    reservation of the jobs left (``MR_EMPTY`` when none, ``MR_UNKNOWN`` when one has
    none)."""
    moved = False
    w = MR_EMPTY
    for x in range(S[QH], S[QT]):
        j = Q[x]
        r = JI[j, RES]
        if r == now:
            start_job(j, now, NO, S, T, F, HT, HP, free, cap, D, JI, P)
            moved = True
        elif r < 0 or w == MR_UNKNOWN:
            w = MR_UNKNOWN
        elif w < 0 or r < w:
            w = r
    S[MINRES] = w
    if moved:
        compact_queue(Q, S, JI)


@njit(cache=True, _nrt=False)
def given_back(T, F, S, a, b, GB):
    """Capacity given back on ``[a, b)`` since the last compression (an early end): raise
    ``GB[1 + k, -1]`` to the largest free capacity on it (:func:`may_move`)."""
    n = S[PN]
    top = GB.shape[1] - 1
    i = last_le(T, n, a)
    while i < n and T[i] < b:
        for k in range(F.shape[0]):
            if F[k, i] > GB[1 + k, top]:
                GB[1 + k, top] = F[k, i]
        i += 1


@njit(cache=True, _nrt=False)
def may_move(j, ptr, nprev, D, GB):
    """Whether a search can find an earlier start for waiting job ``j`` in a compression
    in arrival order (used at K > 1).

    Each waiting job's last search (or its placement at arrival) found no earlier start
    than its reservation, on the profile of that moment with its own reservation given
    back. Since then the profile changed by capacity taken (arrivals, moves' new places),
    by capacity given back (early ends, the old places of jobs that moved after ``j`` in
    the last compression and before ``j`` in this one), and by the passing of time, which
    makes no start feasible that was not. A start now feasible and not then holds ``D[j]``
    at some point where capacity was given back, so some given-back segment has at least
    ``D[j, k]`` free in every resource ``k`` (the free capacity there can since only have
    fallen). ``GB`` keeps, per resource, the largest free capacity on each part given back
    just after it was: column -1 rows ``1 + k`` since the last compression, rows
    ``K + 2 + k`` in this one so far; columns ``x < nprev`` the last compression's moves
    (row 0 the job, in arrival order; rows ``1 + k`` the largest over that move and every
    later one). ``ptr``: the first of them that moved after ``j``.

    Returns
    -------
    bool
        False when no search can move ``j`` (its demand exceeds that bound in a resource).
    """
    K = D.shape[1]
    top = GB.shape[1] - 1
    for k in range(K):
        u = max(GB[1 + k, top], GB[K + 2 + k, top])
        if ptr < nprev:
            u = max(u, GB[1 + k, ptr])
        if D[j, k] > u:
            return False
    return True


@njit(cache=True, _nrt=False)
def gb_close(S, GB, nmoved, K):
    """End of a compression: its moves (``GB`` columns ``< nmoved``, rows ``K + 1`` and
    ``K + 2 + k``) become the last compression's, with maxima over each move and the later
    ones; nothing given back since."""
    top = GB.shape[1] - 1
    for x in range(nmoved - 1, -1, -1):
        GB[0, x] = GB[K + 1, x]
        for k in range(K):
            v = GB[K + 2 + k, x]
            if x + 1 < nmoved and GB[1 + k, x + 1] > v:
                v = GB[1 + k, x + 1]
            GB[1 + k, x] = v
    S[NGB] = nmoved
    for k in range(K):
        GB[1 + k, top] = 0
        GB[K + 2 + k, top] = 0


@njit(cache=True, _nrt=False)
def by_reservation(Q, qh, q, JI, R):
    """The waiting jobs ``Q[qh:qh + q]`` stably sorted by reservation (``np.argsort``'s
    mergesort order), bottom-up in ``R`` (2 x at least ``q``); returns the row holding
    them."""
    for x in range(q):
        R[0, x] = Q[qh + x]
    src = 0
    width = 1
    while width < q:
        dst = 1 - src
        for lo in range(0, q, 2 * width):
            mid = min(lo + width, q)
            hi = min(lo + 2 * width, q)
            a = lo
            b = mid
            for o in range(lo, hi):
                if b < hi and (a >= mid or JI[R[src, b], RES] < JI[R[src, a], RES]):
                    R[dst, o] = R[src, b]
                    b += 1
                else:
                    R[dst, o] = R[src, a]
                    a += 1
        src = dst
        width *= 2
    return src


@njit(cache=True, _nrt=False)
def cons_compress(now, S, T, F, cap, D, JI, P, Q, OK, GB, W, R):
    """``Conservative._compress``: re-place the waiting jobs in processing order. ``OK``:
    scratch for :func:`earlier_start_scan` and :func:`earlier_start_back`, at least as
    long as ``T``; ``W``: :func:`move`'s; ``R``: :func:`by_reservation`'s; in arrival
    order, a job whose search cannot succeed (:func:`may_move`, ``GB``) is not
    searched."""
    qh = S[QH]
    q = S[QT] - qh
    by_start = P[P_COMPR] == C_START
    row = by_reservation(Q, qh, q, JI, R) if by_start else 0
    only_now = P[P_COMPR] == C_NOW
    # K > 1: each candidate's test costs K comparisons and an unpredictable branch; the
    # two-pass search compares without branches (at K = 1 its passes cost more than the
    # candidates they replace). On a profile longer than BACK_MIN breakpoints most
    # searches find nothing (about 80% on SDSC-BLUE, 83-90% on it with arrivals compressed
    # 1.5x), and earlier_start_back visits every segment before the reservation without a
    # branch per hole
    scan = F.shape[0] > 1
    K = F.shape[0]
    # the searches skipped by may_move (arrival order: the queue's order is by job); at
    # K = 1 a search is as cheap as the bookkeeping that would skip it
    skip = P[P_COMPR] == C_ARRIVAL and K > 1
    top = GB.shape[1] - 1
    nprev = S[NGB]
    ptr = 0
    nmoved = np.int64(0)
    for x in range(q):
        j = R[row, x] if by_start else Q[qh + x]
        old = JI[j, RES]
        if old == now:
            continue
        req = JI[j, REQ]
        if old >= 0:
            if skip:
                while ptr < nprev and GB[0, ptr] <= j:
                    ptr += 1
                if not may_move(j, ptr, nprev, D, GB):
                    continue
            if S[PN] > BACK_MIN:
                i = earlier_start_back(T, F, S[PN], req, D, j, old, OK)
            elif scan:
                i = earlier_start_scan(T, F, S[PN], req, D, j, old, OK)
            else:
                i = earlier_start(T, F, S[PN], req, D, j, old)
            if i < 0 or (only_now and T[i] != now):
                continue
            JI[j, RES] = T[i]
            move(T, F, S, i, old, req, D, j, GB, nmoved, W)
            if skip:
                GB[K + 1, nmoved] = j
                for k in range(K):
                    GB[K + 2 + k, top] = max(GB[K + 2 + k, top], GB[K + 2 + k, nmoved])
                nmoved += 1
            continue
        t = earliest_start(T, F, S[PN], req, D, j, now)
        if t < 0:
            S[ERR] = NEVER_FITS
            return
        book(T, F, S, cap, t, req, D, j, TAKE)
        JI[j, RES] = t
    gb_close(S, GB, nmoved, K)


@njit(cache=True, _nrt=False)
def cons_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, OV, G, OK, GB, W, R, U, RK):
    """``Conservative.decide``; ``OK``, ``GB``, ``W``, ``R``: the compression's
    (:func:`cons_compress`); ``U``, ``RK``: :func:`pick_bl`'s."""
    advance(T, F, S, now)
    if S[NOV] > 0 and any_due(now, S, JI, OV):
        for x in range(S[QH], S[QT]):
            j = Q[x]
            if JI[j, RES] >= 0:
                book(T, F, S, cap, JI[j, RES], JI[j, REQ], D, j, ADD)
            JI[j, RES] = -1
        extend_due(now, S, T, F, cap, D, JI, OV, YES)
        S[DIRTY] = 1
    if S[DIRTY] == 1:
        if P[P_SEL] != FF:
            cons_start_reserved(now, S, T, F, HT, HP, free, cap, D, JI, P, Q)
            if fill_select(np.int64(CONS), S[QH], now, np.int64(0), free, S, T, F, HT, HP, free,
                           cap, D, JI, P, Q, C, G, U, RK):
                compact_queue(Q, S, JI)
                # the reservations taken out were given back: no search is skipped
                for k in range(cap.shape[0]):
                    GB[1 + k, GB.shape[1] - 1] = cap[k]
        cons_compress(now, S, T, F, cap, D, JI, P, Q, OK, GB, W, R)
        S[DIRTY] = 0
    cons_start_reserved(now, S, T, F, HT, HP, free, cap, D, JI, P, Q)


# ------------------------------------------------------------------ the event loop
@njit(cache=True)
def run(D, JI, cap, P):
    """Simulate; fills ``JI``'s START, END, KILLED, PROM, HASP columns. Returns 0, or a
    negative error code (``heuristics.compress_kernel.ERRORS``, ``STUCK``).

    The arrays are allocated here and grown here whenever :func:`events` stops for room;
    the event loop itself allocates nothing, so it is compiled without numba's reference
    counting (``_nrt=False``: an array passed to a function called millions of times
    otherwise costs two atomic counter updates per call)."""
    n = JI.shape[0]
    K = cap.shape[0]
    pol = P[P_POL]
    S = np.zeros(N_S, np.int64)
    S[MINRES] = MR_EMPTY
    S[WAKE] = -1
    T = np.empty(64, np.int64)
    F = np.empty((K, 64), np.int64)
    T[0] = 0
    for k in range(K):
        F[k, 0] = cap[k]
    S[PN] = 1
    S[COMPACTED] = 1
    free = cap.copy()
    XF = np.empty(K, np.int64)
    U = np.empty(K, np.float64)  # pick_bl's scratch
    RK = np.empty(K, np.int64)
    HT = np.empty(2 * n + 64, np.int64)
    HP = np.empty(2 * n + 64, np.int64)
    Q = np.empty(n, np.int64)
    C = np.empty(n, np.int64)
    OV = np.empty(n, np.int64)
    if P[P_SEL] == BL:
        G = bl_masks(D, cap, P[P_WINDOW], P[P_TIESLAST] == 1)
    else:
        G = np.zeros(1, np.int64)
    cons = pol == CONS
    # the compression's scratch: its searches' (earlier_start_scan, earlier_start_back),
    # as long as T; its moves' (move), longer by 4; its order by reservation
    # (by_reservation)
    OK = np.empty(T.shape[0] if cons else 0, np.int64)
    W = np.empty((K + 1, T.shape[0] + 4 if cons else 0), np.int64)
    R = np.empty((2, n if cons and P[P_COMPR] == C_START else 0), np.int64)
    # the capacity given back for the compression's searches (may_move: K > 1, arrival
    # order); one column where the rule is off (cons_compress still writes column 0)
    skips = K > 1 and cons and P[P_COMPR] == C_ARRIVAL
    GB = np.zeros((2 * K + 2, n + 2 if skips else 1), np.int64)
    while True:
        err = events(D, JI, cap, P, S, T, F, free, XF, U, RK, HT, HP, Q, C, OV, G, OK, W, R,
                     GB)
        if err != GROW:
            return err
        if S[NEED_T] > T.shape[0]:
            T, F = grown(T, F, S, S[NEED_T] - S[PN])
        if cons and OK.shape[0] < T.shape[0]:
            OK = np.empty(T.shape[0], np.int64)
            W = np.empty((K + 1, T.shape[0] + 4), np.int64)
        if S[NEED_H] > HT.shape[0]:
            HT, HP = grown_heap(HT, HP, S, S[NEED_H])


@njit(cache=True, inline="always")
def arrivals_at(A, x, col, now):
    """The number of rows of ``A`` from row ``x`` on whose column ``col`` is ``now``, up to
    the first that is not (the arrivals at ``now`` when ``A`` is in submit order and ``x``
    is the next arrival)."""
    end = x
    while end < A.shape[0] and A[end, col] == now:
        end += 1
    return end - x


@njit(cache=True, _nrt=False)
def room(now, S, T, HT, JI, pol):
    """Whether ``T`` and the heap have room for everything one step at ``now`` can add:
    two breakpoints per end (the capacity given back) and per arrival (its reservation),
    eight per waiting job and two per overdue one for the decision, two heap entries per
    job it can start and a wake-up. Else the sizes needed go to ``S[NEED_T]``,
    ``S[NEED_H]``."""
    arrivals = arrivals_at(JI, S[NA], SUB, now)
    q = S[QT] - S[QH] + arrivals
    need_h = S[HN] + 2 * q + 8
    need_t = 0
    if pol == EASY or pol == CONS:
        need_t = S[PN] + 2 * (S[HN] + arrivals) + 8 * q + 2 * S[NOV] + 16
    S[NEED_T] = need_t
    S[NEED_H] = need_h
    return need_t <= T.shape[0] and need_h <= HT.shape[0]


@njit(cache=True, _nrt=False)
def events(D, JI, cap, P, S, T, F, free, XF, U, RK, HT, HP, Q, C, OV, G, OK, W, R, GB):
    """:func:`run`'s event loop, from the state in ``S`` (``S[NA]`` the next arrival,
    ``S[WAKE]`` the pending wake-up or -1); returns :data:`GROW` before a step the arrays
    have no room for (:func:`room`), else :func:`run`'s answer."""
    n = JI.shape[0]
    K = cap.shape[0]
    pol = P[P_POL]
    profiled = pol == EASY or pol == CONS
    skips = K > 1 and pol == CONS and P[P_COMPR] == C_ARRIVAL
    while S[NA] < n or S[HN] > 0:
        na = S[NA]
        if S[HN] == 0 or (na < n and JI[na, SUB] < HT[0]):
            now = JI[na, SUB]
        else:
            now = HT[0]
        if not room(now, S, T, HT, JI, pol) or (pol == CONS and OK.shape[0] < T.shape[0]):
            return GROW
        # ends, overrun notices and wake-ups at now
        while S[HN] > 0 and HT[0] == now:
            p = hpop(HT, HP, S)
            if p < 0:
                continue
            if p < n:
                for k in range(K):
                    free[k] += D[p, k]
                if JI[p, OVER] == 1:
                    JI[p, OVER] = 0
                    for x in range(S[NOV]):
                        if OV[x] == p:
                            OV[x] = OV[S[NOV] - 1]
                            S[NOV] -= 1
                            break
                est = JI[p, EST]
                if est > now:
                    if profiled:
                        book(T, F, S, cap, now, est - now, D, p, ADD)
                    if pol == CONS and P[P_COMPR] != C_NONE:
                        S[DIRTY] = 1
                        if skips:
                            given_back(T, F, S, now, est, GB)
            else:
                j = p - n
                JI[j, OVER] = 1
                OV[S[NOV]] = j
                S[NOV] += 1
        # arrivals at now
        while na < n and JI[na, SUB] == now:
            if pol == CONS:
                advance(T, F, S, now)
                t = earliest_start(T, F, S[PN], JI[na, REQ], D, na, now)
                if t < 0:
                    return NEVER_FITS
                book(T, F, S, cap, t, JI[na, REQ], D, na, TAKE)
                JI[na, RES] = t
                JI[na, PROM] = t
                JI[na, HASP] = 1
                if S[MINRES] == MR_EMPTY or (S[MINRES] >= 0 and t < S[MINRES]):
                    S[MINRES] = t
            Q[S[QT]] = na
            S[QT] += 1
            na += 1
        S[NA] = na
        if S[WAKE] >= 0 and S[WAKE] <= now:
            S[WAKE] = -1
        # one decision
        if pol == FCFS:
            fcfs_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q)
        elif pol == EASY:
            easy_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, OV, G, XF, U, RK)
        elif pol == CONS:
            if S[DIRTY] == 1 or S[NOV] > 0:
                cons_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, OV, G, OK, GB, W, R,
                            U, RK)
            else:  # cons_decide when nothing is due and no capacity came back early
                if now > T[0]:
                    advance(T, F, S, now)
                if S[MINRES] != MR_EMPTY and S[MINRES] <= now:
                    cons_start_reserved(now, S, T, F, HT, HP, free, cap, D, JI, P, Q)
        else:
            unc_decide(now, S, T, F, HT, HP, free, cap, D, JI, P, Q, C, OV, G, U, RK)
        if S[ERR] < 0:
            return S[ERR]
        # the policy's wake-up
        w = np.int64(-1)
        if pol != FCFS:
            w = next_overdue(S, JI, OV)
        if pol == CONS:
            r = S[MINRES]
            if r == MR_UNKNOWN:
                for x in range(S[QH], S[QT]):
                    r = JI[Q[x], RES]
                    if w < 0 or r < w:
                        w = r
            elif r != MR_EMPTY and (w < 0 or r < w):
                w = r
        if w >= 0 and (S[WAKE] < 0 or w < S[WAKE]):
            S[WAKE] = w
            hpush(HT, HP, S, w, WAKE_UP)
    if S[QT] > S[QH]:
        return STUCK
    return 0


# the constants of compress_kernel are compiled in: recompile when it changes
refresh(__name__, [compress_kernel])
