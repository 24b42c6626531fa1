"""The slot search of ``heuristics.slack_fast`` compiled with numba (arrays in, arrays out).

:func:`search` has the signature and the result of :func:`heuristics.slack_fast.search`,
which stays the readable reference: it runs the same search -- same slots, same compress
orders, same holds, the same float operations in the same order (``float ** float`` is
C's ``pow`` in both, skipped in the search where the exponent is 1.0, :func:`_pow`; sums
run left to right like CPython's ``sum``), the same pruning and the same tie rules -- on
int64 arrays of breakpoint times and free processors instead of lists. :func:`decide` is
the same search on the slack scheduler's own arrays, without an ``InsertionProblem``
(``sim.batch.slack_scheduler.SlackScheduler`` with a compiled inserter). What it does not
run is refused with a ``ValueError`` naming it: the exhaustive search over compress orders
and a ``stop`` callback (both for the offline solvers, not for the scheduler).

The differential tests (``tests/batch/test_slack_kernel.py``) compare the two searches
decision by decision on random problems and the bundled KTH snapshots, and whole
simulations start array against start array. The kernel is compiled on the first call
and cached on disk (``cache=True``).

The search and the decision allocate nothing: their scratch space comes from the caller
(:func:`ws_sizes`, :func:`decide_ws_sizes`; :func:`search` and :func:`decide` allocate
it), sorts run on it (:func:`_order_by`), and they are compiled without numba's reference
counting (``_nrt=False``), so passing arrays between them costs no atomic counting. Such a
function returns no array (only scalars), and numba checks no bounds in it: the sizes
above are what keeps it inside its arrays.

Times are integer seconds, capacities processors.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from operator import attrgetter

import numpy as np
from numba import njit

from heuristics.slack_fast import Best
from sim.problems.insertion import InsertionProblem, WaitingJob, new_weight

_REL_TIE = 1e-9
#: profile indices are cast to unsigned in the loops over the profile: numba tests a signed
#: index for a negative value at every access unless it can prove it is not (they are
#: never negative there)
_u = np.uint64
#: CPython >= 3.12 sums floats with Neumaier's compensation; the kernel follows the
#: interpreter it runs under
_NEUMAIER = sys.version_info >= (3, 12)


@njit(cache=True, inline="always")
def _pysum(x, idx, lo, hi, neumaier):
    """``sum([x[i] for i in idx[lo:hi]])`` as the running CPython computes it."""
    if hi <= lo:
        return 0.0
    f = 0.0 + x[idx[lo]]  # CPython's sum starts from the int 0
    if not neumaier:
        for q in range(lo + 1, hi):
            f += x[idx[q]]
        return f
    c = 0.0
    for q in range(lo + 1, hi):
        v = x[idx[q]]
        t = f + v
        if abs(f) >= abs(v):
            c += (f - t) + v
        else:
            c += (v - t) + f
        f = t
    if c != 0.0 and np.isfinite(c):
        f += c
    return f


@njit(cache=True, inline="always")
def _pow(x, y):
    """``x ** y``: ``x`` itself when ``y`` is 1.0 (the default of every alpha), which C's
    ``pow`` returns exactly, so the call is saved and the value is the same."""
    return x if y == 1.0 else x ** y


@njit(cache=True, inline="always")
def _bisect_right(T, lo, hi, x):
    """First index in ``[lo, hi)`` whose time exceeds ``x`` (``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if x < T[_u(mid)]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, inline="always")
def _bisect_left(T, lo, hi, x):
    """First index in ``[lo, hi)`` whose time is ``>= x`` (``hi`` if none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if T[_u(mid)] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


#: the stable sorts below order runs of this many entries by insertion, then merge them
_RUN = 32


@njit(cache=True, _nrt=False)
def _order_by(key, idx, m, tmp):
    """Sort ``idx[:m]`` (indices into ``key``) stably by ``key``: the order
    ``np.argsort(key[idx[:m]], kind="mergesort")`` gives, applied to ``idx`` (keys
    without NaN, which a stable sort orders one way only). Runs of :data:`_RUN` entries
    by insertion, then bottom-up merges through ``tmp`` (at least ``m`` entries)."""
    for lo in range(0, m, _RUN):
        hi = min(lo + _RUN, m)
        for q in range(lo + 1, hi):
            v = idx[q]
            kv = key[v]
            z = q
            while z > lo and key[idx[z - 1]] > kv:
                idx[z] = idx[z - 1]
                z -= 1
            idx[z] = v
    width = _RUN
    in_tmp = False
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            a = tmp if in_tmp else idx
            b = idx if in_tmp else tmp
            x = lo
            y = mid
            for o in range(lo, hi):
                if y < hi and (x >= mid or key[a[y]] < key[a[x]]):
                    b[o] = a[y]
                    y += 1
                else:
                    b[o] = a[x]
                    x += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for q in range(m):
            idx[q] = tmp[q]


@njit(cache=True, inline="always")
def _before(k1, k2, c, u, v):
    """Whether ``u`` comes before ``v`` by ``(k1[u], k2[u, c])``."""
    return k1[u] < k1[v] or (k1[u] == k1[v] and k2[u, c] < k2[v, c])


@njit(cache=True, _nrt=False)
def _order_by2(k1, k2, c, idx, m, tmp):
    """Sort ``idx[:m]`` stably by ``(k1[i], k2[i, c])`` (as :func:`_order_by`; ``tmp``
    at least ``m`` entries)."""
    for lo in range(0, m, _RUN):
        hi = min(lo + _RUN, m)
        for q in range(lo + 1, hi):
            v = idx[q]
            z = q
            while z > lo and _before(k1, k2, c, v, idx[z - 1]):
                idx[z] = idx[z - 1]
                z -= 1
            idx[z] = v
    width = _RUN
    in_tmp = False
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            a = tmp if in_tmp else idx
            b = idx if in_tmp else tmp
            x = lo
            y = mid
            for o in range(lo, hi):
                if y < hi and (x >= mid or _before(k1, k2, c, a[y], a[x])):
                    b[o] = a[y]
                    y += 1
                else:
                    b[o] = a[x]
                    x += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for q in range(m):
            idx[q] = tmp[q]


@njit(cache=True, _nrt=False)
def _sort_values(x, m, tmp):
    """Sort ``x[:m]`` ascending in place (runs by insertion, then bottom-up merges through
    ``tmp``, at least ``m`` entries)."""
    for lo in range(0, m, _RUN):
        hi = min(lo + _RUN, m)
        for q in range(lo + 1, hi):
            v = x[q]
            z = q
            while z > lo and x[z - 1] > v:
                x[z] = x[z - 1]
                z -= 1
            x[z] = v
    width = _RUN
    in_tmp = False
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            a = tmp if in_tmp else x
            b = x if in_tmp else tmp
            p = lo
            y = mid
            for o in range(lo, hi):
                if y < hi and (p >= mid or a[y] < a[p]):
                    b[o] = a[y]
                    y += 1
                else:
                    b[o] = a[p]
                    p += 1
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for q in range(m):
            x[q] = tmp[q]


@njit(cache=True, inline="always")
def _split(T, F, L, a, x):
    """Insert breakpoint ``x`` at index ``a`` (free processors those of ``a - 1``)."""
    for q in range(L, a, -1):
        T[_u(q)] = T[_u(q - 1)]
        F[_u(q)] = F[_u(q - 1)]
    T[a] = x
    F[a] = F[a - 1]
    return L + 1


@njit(cache=True, _nrt=False)
def _add(T, F, L, s, e, n):
    """Subtract ``n`` processors on ``[s, e)`` (``T[0] <= s < e``); the new length."""
    a = _bisect_right(T, 0, L, s) - 1
    if T[a] != s:
        a += 1
        L = _split(T, F, L, a, s)
    b = _bisect_right(T, a, L, e) - 1
    if T[b] != e:
        b += 1
        L = _split(T, F, L, b, e)
    for q in range(a, b):
        F[_u(q)] -= n
    return L


@njit(cache=True, _nrt=False)
def _fits(T, F, L, s, e, n):
    """Whether ``n`` processors are free on ``[s, e)`` (``s >= T[0]``)."""
    i = _bisect_right(T, 0, L, s) - 1
    while i < L and T[_u(i)] < e:
        if F[_u(i)] < n:
            return False
        i += 1
    return True


@njit(cache=True, _nrt=False)
def _earliest(T, F, L, t, n, st):
    """Earliest start ``>= st`` (``st >= T[0]``) of ``n`` processors for ``t`` seconds,
    and the index of the segment it falls in."""
    a = _bisect_right(T, 0, L, st) - 1
    while True:
        if F[_u(a)] < n:
            a += 1
            while F[_u(a)] < n:
                a += 1
            st = T[_u(a)]
        end = st + t
        j = a + 1
        ok = True
        while j < L and T[_u(j)] < end:
            if F[_u(j)] < n:
                ok = False
                break
            j += 1
        if ok:
            return st, a
        a = j


@njit(cache=True, _nrt=False)
def _merge(T0, F0, L0, evt, evd, ne, T, F):
    """``(T0, F0)`` with the events ``evt[:ne]`` (times, sorted, distinct) taking
    ``evd[:ne]`` processors from then on, written into ``(T, F)``; the new length."""
    L = 0
    p = 0
    acc = 0
    for q in range(ne):
        x = evt[q]
        r = _bisect_left(T0, p, L0, x)
        while p < r:
            T[L] = T0[p]
            F[L] = F0[p] - acc
            L += 1
            p += 1
        acc += evd[q]
        T[L] = x
        if p < L0 and T0[p] == x:
            F[L] = F0[p] - acc
            p += 1
        else:
            F[L] = F0[p - 1] - acc
        L += 1
    while p < L0:
        T[L] = T0[p]
        F[L] = F0[p]
        L += 1
        p += 1
    return L


@njit(cache=True, _nrt=False)
def _events(et, ed, ne, evt, evd, order, tmp):
    """Sort the events ``et[:ne]`` by time and add up the ones at one time (``evt``,
    ``evd``); the number of distinct times. ``order`` and ``tmp``: scratch of ``ne``
    entries at least."""
    if ne > 32:
        for q in range(ne):
            order[q] = q
        _order_by(et, order, ne, tmp)
        k = 0
        for q in range(ne):
            x = et[order[q]]
            if k > 0 and evt[k - 1] == x:
                evd[k - 1] += ed[order[q]]
            else:
                evt[k] = x
                evd[k] = ed[order[q]]
                k += 1
        return k
    # few events: insertion into (evt, evd), equal times added up (the sums are integers,
    # so their order does not matter)
    k = 0
    for q in range(ne):
        x = et[q]
        lo = _bisect_left(evt, 0, k, x)
        if lo < k and evt[lo] == x:
            evd[lo] += ed[q]
            continue
        for z in range(k, lo, -1):
            evt[z] = evt[z - 1]
            evd[z] = evd[z - 1]
        evt[lo] = x
        evd[lo] = ed[q]
        k += 1
    return k


@njit(cache=True, _nrt=False)
def ws_sizes(m, r):
    """Entries of the int64, float64 and bool scratch space :func:`_search` needs for ``m``
    waiting and ``r`` running jobs."""
    B = 16 + 2 * r + 10 * m
    return 12 * B + 6 * (2 * m + 2) + 8 * m + 2 * r, 2 * m, 2 * m


@njit(cache=True, _nrt=False)
def _stable_order(x, m, out, tmp):
    """``np.argsort(x[:m], kind="mergesort")`` written into ``out[:m]`` (:func:`_order_by`;
    ``tmp``: scratch of ``m`` entries at least)."""
    for q in range(m):
        out[q] = q
    _order_by(x, out, m, tmp)


@njit(cache=True, _nrt=False)
def _running(now, cap, run_end, run_n, T0, F0, o, tmp):
    """The running jobs' profile from ``now``: each holds its processors until its
    estimated end (those ending by ``now`` are ignored), written into ``(T0, F0)`` (room
    for ``1 + len(run_end)`` breakpoints); its length. ``o`` and ``tmp``: scratch of
    ``len(run_end)`` entries at least."""
    r = run_end.shape[0]
    T0[0] = now
    F0[0] = cap
    L0 = 1
    live = np.int64(0)  # np.int64: one version of the sort (compress_kernel.ADD)
    for q in range(r):
        if run_end[q] > now:
            o[live] = q
            F0[0] -= run_n[q]
            live += 1
    _order_by(run_end, o, live, tmp)
    for q in range(live):
        e = run_end[o[q]]
        if T0[L0 - 1] == e and L0 > 1:
            F0[L0 - 1] += run_n[o[q]]
        else:
            T0[L0] = e
            F0[L0] = F0[L0 - 1] + run_n[o[q]]
            L0 += 1
    return L0


@njit(cache=True, inline="always")
def _copy(T, F, T0, F0, n):
    """``T[:n], F[:n] = T0[:n], F0[:n]`` (a loop: numba's slice assignment may allocate)."""
    for q in range(n):
        T[q] = T0[q]
        F[q] = F0[q]


@njit(cache=True, _nrt=False)
def _search(now, cap, run_end, run_n, ns, ts_, tes, ss, ps, s0s, rank, at, au, ap, apf, pf,
            sfl, pjf, jweight, jn, jt, is_new, hold, from_start, neumaier, out_seq,
            out_starts, wk, wf, wb):
    """The search of ``heuristics.slack_fast.search`` on arrays (module docstring).

    The waiting jobs are given in ``(te, id)`` order; ``rank`` is each one's place in the
    compress order. Returns ``(found, price, moved, ts)``; the best candidate's compress
    order (indices of the waiting jobs) and their starts are written to ``out_seq`` and
    ``out_starts`` (as many as the jobs delayed at ``ts``, which is ``m`` minus the
    number of jobs with ``out_seq < 0`` left at the end). ``wk``, ``wf`` and ``wb`` are
    scratch space (int64, float64, bool) of :func:`ws_sizes` entries at least (not
    checked: the search allocates nothing).
    """
    rel = 1e-9
    m = ns.shape[0]
    r = run_end.shape[0]
    B = 16 + 2 * r + 10 * m
    T0 = wk[0:B]
    F0 = wk[B:2 * B]
    TS = wk[2 * B:3 * B]
    FS = wk[3 * B:4 * B]
    FT = wk[4 * B:5 * B]
    FF = wk[5 * B:6 * B]
    T = wk[6 * B:7 * B]
    F = wk[7 * B:8 * B]
    GT = wk[8 * B:9 * B]
    GF = wk[9 * B:10 * B]
    o_ = 10 * B
    E = 2 * m + 2
    et = wk[o_:o_ + E]
    ed = wk[o_ + E:o_ + 2 * E]
    evt = wk[o_ + 2 * E:o_ + 3 * E]
    evd = wk[o_ + 3 * E:o_ + 4 * E]
    eo = wk[o_ + 4 * E:o_ + 5 * E]
    ex = wk[o_ + 5 * E:o_ + 6 * E]
    o_ += 6 * E
    allp = wk[o_:o_ + B]
    ax = wk[o_ + B:o_ + 2 * B]
    o_ += 2 * B
    fixv = wk[o_:o_ + m]
    by_fix = wk[o_ + m:o_ + 2 * m]
    lb0 = wk[o_ + 2 * m:o_ + 3 * m]
    by_rank = wk[o_ + 3 * m:o_ + 4 * m]
    pos_fix = wk[o_ + 4 * m:o_ + 5 * m]
    seq = wk[o_ + 5 * m:o_ + 6 * m]
    starts = wk[o_ + 6 * m:o_ + 7 * m]
    sx = wk[o_ + 7 * m:o_ + 8 * m]
    o_ += 8 * m
    ro = wk[o_:o_ + r]
    rx = wk[o_ + r:o_ + 2 * r]
    dw = wf[0:m]
    mc = wf[m:2 * m]
    stay = wb[0:m]
    held = wb[m:2 * m]
    # ---- running jobs: they hold their processors from now to their estimated end
    L0 = _running(now, cap, run_end, run_n, T0, F0, ro, rx)
    # ---- price weights: delay_weight and the cost of moving a job all the way to now
    for i in range(m):
        sv = ss[i]
        s0 = s0s[i]
        f = 1.0 if sv == s0 else s0 / max(sv, sfl)
        dw[i] = _pow(float(ns[i]), au) * _pow(max(ps[i], pf) / pjf, ap) * _pow(f, apf)
        mc[i] = 0.0 if tes[i] == now else dw[i] * -_pow(float(tes[i] - now), at)
    # ---- slots
    nsl = L0 + 2 * m
    for q in range(L0):
        allp[q] = T0[q]
    for i in range(m):
        allp[L0 + 2 * i] = tes[i]
        allp[L0 + 2 * i + 1] = tes[i] + ts_[i]
    _sort_values(allp, nsl, ax)
    ns_ = 0
    for q in range(nsl):  # the distinct slots, ascending (np.unique)
        if ns_ == 0 or allp[q] != allp[ns_ - 1]:
            allp[ns_] = allp[q]
            ns_ += 1
    slots = allp[:ns_]
    if from_start:
        for i in range(m):
            fixv[i] = tes[i]
            by_fix[i] = i
    else:
        for i in range(m):
            fixv[i] = tes[i] + ts_[i] - 1
        _stable_order(fixv, m, by_fix, sx)  # ties keep the (te, id) order
    for i in range(m):
        lb0[i], _ = _earliest(T0, F0, L0, ts_[i], ns[i], now)
    all_held = hold and from_start
    for q in range(m):
        by_rank[rank[q]] = q  # rank is a permutation of 0..m-1
    for q in range(m):
        pos_fix[by_fix[q]] = q

    have_stay = hold and not is_new
    stay[:] = False
    LS = 0
    if have_stay:
        _copy(TS, FS, T0, F0, L0)
        LS = L0
        for i in range(m):
            LS = _add(TS, FS, LS, tes[i], tes[i] + ts_[i], ns[i])
        every = True
        for i in range(m):
            if lb0[i] == tes[i]:
                stay[i] = True
                continue
            LS = _add(TS, FS, LS, tes[i], tes[i] + ts_[i], -ns[i])
            st, _ = _earliest(TS, FS, LS, ts_[i], ns[i], lb0[i])
            stay[i] = st == tes[i]
            every = every and stay[i]
            LS = _add(TS, FS, LS, tes[i], tes[i] + ts_[i], ns[i])
        if all_held and every:
            # no job can move: the first slot's candidate, everyone where they are
            for q in range(m):
                out_seq[q] = by_rank[q]
                out_starts[q] = tes[by_rank[q]]
            return True, 0.0, 0, now

    found = False
    best_p = 0.0
    best_mv = 0
    best_ts = 0
    best_len = 0
    _copy(FT, FF, T0, F0, L0)
    LF = L0
    L = 0
    held[:] = True
    k = 0
    k_prev = -1
    sdel = 0.0
    s_only = have_stay and all_held
    g_mode = all_held and jt > 0
    LG = 0
    if g_mode:
        for i in range(m):
            h = tes[i] + jt
            et[2 * i] = h
            ed[2 * i] = ns[i]
            et[2 * i + 1] = h + ts_[i]
            ed[2 * i + 1] = -ns[i]
        ne = _events(et, ed, 2 * m, evt, evd, eo, ex)
        LG = _merge(T0, F0, L0, evt, evd, ne, GT, GF)
    for ts in slots:
        while k < m and fixv[by_fix[k]] < ts:
            if not s_only:
                i = by_fix[k]
                LF = _add(FT, FF, LF, tes[i], tes[i] + ts_[i], ns[i])
                if g_mode:
                    h = tes[i] + jt
                    LG = _add(GT, GF, LG, h, h + ts_[i], -ns[i])
                    LG = _add(GT, GF, LG, tes[i], tes[i] + ts_[i], ns[i])
            k += 1
        if jt > 0 and not _fits(FT, FF, LF, ts, ts + jt, jn):
            continue
        nd = m - k
        if ts <= now or jweight == 0.0:
            term = 0.0
        else:
            term = jweight * _pow(float(ts - now), at)
        if k != k_prev:
            sdel = _pysum(mc, by_fix, k, m, neumaier)
        if found:
            lb = term + sdel
            b0 = best_p
            if lb > b0 and lb - b0 > rel * max(1.0, abs(lb), abs(b0)):
                break
        if not is_new and k == k_prev and (all_held or not hold):
            continue
        k_prev = k
        # the compress order: the delayed jobs by rank
        same = True
        c = 0
        for q in range(m):  # the ranks are distinct: by_rank filtered is the sorted order
            i = by_rank[q]
            if pos_fix[i] >= k:
                seq[c] = i
                if i != by_fix[k + c]:
                    same = False
                c += 1
        rest = sdel if same else _pysum(mc, seq, 0, nd, neumaier)
        total = term
        all_h = True
        for q in range(nd):
            if all_held:
                held[q] = True
            elif hold:
                held[q] = tes[seq[q]] >= ts
            else:
                held[q] = False
            all_h = all_h and held[q]
        clean = have_stay and all_h
        if g_mode:
            _copy(T, F, GT, GF, LG)
            L = _add(T, F, LG, ts, ts + jt, jn)
        elif not clean:
            ne = 0
            if jt > 0:
                et[0] = ts
                ed[0] = jn
                et[1] = ts + jt
                ed[1] = -jn
                ne = 2
            if hold:
                for q in range(nd):
                    if held[q]:
                        i = seq[q]
                        h = tes[i] + jt
                        et[ne] = h
                        ed[ne] = ns[i]
                        et[ne + 1] = h + ts_[i]
                        ed[ne + 1] = -ns[i]
                        ne += 2
            ne = _events(et, ed, ne, evt, evd, eo, ex)
            L = _merge(FT, FF, LF, evt, evd, ne, T, F)
        ok = True
        for pos in range(nd):
            i = seq[pos]
            n = ns[i]
            t = ts_[i]
            te = tes[i]
            if clean:
                if stay[i]:
                    starts[pos] = te
                    rest -= mc[i]
                    if found:
                        x = total + rest
                        if x > best_p and x - best_p > rel * max(1.0, abs(x), abs(best_p)):
                            ok = False
                            break
                    continue
                clean = False
                _copy(T, F, TS, FS, LS)
                L = LS
            if held[pos]:  # give up the hold at te + jt (breakpoints: the hold made them)
                h = te + jt
                ha = _bisect_right(T, 0, L, h) - 1
                hb = _bisect_right(T, ha, L, h + t) - 1
                for x_ in range(ha, hb):
                    F[_u(x_)] += n
            st, a = _earliest(T, F, L, t, n, lb0[i])
            d = st - te
            if d > ss[i]:
                ok = False
                break
            if T[a] != st:
                a += 1
                L = _split(T, F, L, a, st)
            end = st + t
            b = _bisect_right(T, a, L, end) - 1
            if T[b] != end:
                b += 1
                L = _split(T, F, L, b, end)
            for x_ in range(a, b):
                F[_u(x_)] -= n
            starts[pos] = st
            rest -= mc[i]
            if d != 0:
                if d > 0:
                    total += dw[i] * _pow(float(d), at)
                else:
                    total += dw[i] * -_pow(float(-d), at)
            if found:
                x = total + rest
                if x > best_p and x - best_p > rel * max(1.0, abs(x), abs(best_p)):
                    ok = False
                    break
        if not ok:
            continue
        mv = 0
        for q in range(nd):
            if starts[q] != tes[seq[q]]:
                mv += 1
        if found:
            b0 = best_p
            if total == b0 or abs(total - b0) <= rel * max(1.0, abs(total), abs(b0)):
                if mv >= best_mv:
                    continue
            elif total > b0:
                continue
        found = True
        best_p = total
        best_mv = mv
        best_ts = ts
        best_len = nd
        for q in range(nd):
            out_seq[q] = seq[q]
            out_starts[q] = starts[q]
    for q in range(best_len, m):
        out_seq[q] = -1
    return found, best_p, best_mv, best_ts


#: compress order codes of :func:`decide`
ORDER_CODE = {"AST": 0, "AAT": 1, "DU": 2, "DC": 3, "DP": 4}


@njit(cache=True, _nrt=False)
def _by_te_id(JI, TE, m, o, tmp):
    """The rows ``0..m-1`` of ``JI`` in ``(te, id)`` order (ids distinct) into ``o[:m]``
    (``tmp``: scratch of ``m`` entries at least)."""
    for q in range(m):
        o[q] = q
    _order_by2(TE, JI, np.int64(0), o, m, tmp)  # np.int64: compress_kernel.ADD


@njit(cache=True, _nrt=False)
def decide_ws_sizes(m, r):
    """Entries of the int64, float64 and bool scratch space :func:`_decide` needs for ``m``
    waiting and ``r`` running jobs (:func:`ws_sizes` and its own)."""
    ni, nf, nb = ws_sizes(m, r)
    return ni + 12 * m, nf + 6 * m, nb


@njit(cache=True, _nrt=False)
def _decide(P, Q, run_end, run_n, JI, TE, X, out, wk, wf, wb):
    """The search on the scheduler's own arrays: the waiting jobs in any order (``JI``: id,
    n, t, arrival; ``TE``: te; ``X``: s, s0, p, the priority clamped here to >= 0), sorted
    here by ``(te, id)``, the compress order's rank computed here from its key
    (``heuristics.slack._order_key``: a stable sort of the ``(te, id)`` order on the key's
    leading fields). ``P`` holds the integers ``now, capacity, order code, n_j, t_j, new?,
    hold?, delay from start?, Neumaier sums?`` and ``Q`` the floats ``alpha_t, alpha_u,
    alpha_p, alpha_p alpha_f, p_floor, slack_floor, p_j``. Returns ``(found, ts, count)``;
    the delayed jobs' ids, starts and rows (indices into ``JI``) are written to
    ``out[0, :count]``, ``out[1, :count]`` and ``out[2, :count]``. ``wk``, ``wf``, ``wb``
    are scratch space (int64, float64, bool) of :func:`decide_ws_sizes` entries at least
    (not checked: the decision allocates nothing).
    """
    now, cap, code, jn, jt = P[0], P[1], P[2], P[3], P[4]
    is_new, hold, from_start, neumaier = P[5] != 0, P[6] != 0, P[7] != 0, P[8] != 0
    at, au, ap, apf, pf, sfl, jp = Q[0], Q[1], Q[2], Q[3], Q[4], Q[5], Q[6]
    out_ids = out[0]
    out_starts = out[1]
    m = JI.shape[0]
    o = wk[0:m]
    ids = wk[m:2 * m]
    ns = wk[2 * m:3 * m]
    ts_ = wk[3 * m:4 * m]
    arr = wk[4 * m:5 * m]
    tes = wk[5 * m:6 * m]
    by = wk[6 * m:7 * m]
    rank = wk[7 * m:8 * m]
    seq = wk[8 * m:9 * m]
    by_arr = wk[9 * m:10 * m]
    ki = wk[10 * m:11 * m]
    sx = wk[11 * m:12 * m]
    ss = wf[0:m]
    s0s = wf[m:2 * m]
    ps = wf[2 * m:3 * m]
    kv = wf[3 * m:4 * m]
    _by_te_id(JI, TE, m, o, sx)
    for q in range(m):
        x = o[q]
        ids[q] = JI[x, 0]
        ns[q] = JI[x, 1]
        ts_[q] = JI[x, 2]
        arr[q] = JI[x, 3]
        tes[q] = TE[x]
        ss[q] = X[x, 0]
        s0s[q] = X[x, 1]
        ps[q] = max(X[x, 2], 0.0)
    pjf = max(jp, pf)
    if code == 0:  # AST: (te, id)
        for q in range(m):
            by[q] = q
    elif code == 1:  # AAT: (arrival, te, id)
        _stable_order(arr, m, by, sx)
    elif code == 2:  # DU: (-n t, te, id)
        for q in range(m):
            ki[q] = -(ns[q] * ts_[q])
        _stable_order(ki, m, by, sx)
    elif code == 3:  # DC: (-cost(i, te + 1), te, id), delay_weight(i) * 1.0 ** alpha_t
        for i in range(m):
            if 1 > ss[i]:
                kv[i] = -np.inf
            else:
                f = 1.0 if ss[i] == s0s[i] else s0s[i] / max(ss[i], sfl)
                w = float(ns[i]) ** au * (max(ps[i], pf) / pjf) ** ap * f ** apf
                kv[i] = -(w * 1.0 ** at)
        _stable_order(kv, m, by, sx)
    else:  # DP: (-p, arrival, te, id)
        _stable_order(arr, m, by_arr, sx)
        for q in range(m):
            kv[q] = -ps[by_arr[q]]
        _stable_order(kv, m, ki, sx)
        for q in range(m):
            by[q] = by_arr[ki[q]]
    for q in range(m):
        rank[by[q]] = q
    jweight = float(jn) ** au if is_new else 0.0
    found, _, _, ts = _search(now, cap, run_end, run_n, ns, ts_, tes, ss, ps, s0s, rank, at,
                              au, ap, apf, pf, sfl, pjf, jweight, jn, jt, is_new, hold,
                              from_start, neumaier, seq, out_starts, wk[12 * m:],
                              wf[4 * m:], wb)
    count = 0
    out_rows = out[2]
    while count < m and seq[count] >= 0:
        out_ids[count] = ids[seq[count]]
        out_rows[count] = o[seq[count]]
        count += 1
    return found, ts, count


def decide(now: int, capacity: int, run_end: np.ndarray, run_n: np.ndarray, JI: np.ndarray,
           TE: np.ndarray, X: np.ndarray, new: tuple[int, int, float] | None, *, order: str,
           alphas: tuple[float, float, float, float], p_floor: float, slack_floor: float,
           delay_from: str, hold: bool) -> tuple[int, list[int], list[int]]:
    """The slack scheduler's decision without an ``InsertionProblem`` (arrays in).

    Parameters
    ----------
    now, capacity : int
        Seconds, processors.
    run_end, run_n : ndarray of int64
        Estimated ends (s) and processors of the running jobs, any order (those ending
        by ``now`` are ignored).
    JI, TE, X : ndarray
        One row per waiting job, any order: ``JI`` (int64) id, processors, requested
        time (s), arrival (s); ``TE`` (int64) scheduled start ``te`` (s); ``X`` (float64)
        slack ``s``, initial slack ``s0`` (s), priority ``p`` (a negative one counts
        as 0).
    new : (n, t, p) or None
        The new job's processors, requested time (s) and priority (>= 0); None for
        ``remove``.
    order, delay_from, hold
        As in :func:`search`.
    alphas, p_floor, slack_floor
        The price's ``alpha_u, alpha_t, alpha_p, alpha_f`` and clamps (as in
        ``sim.problems.insertion.InsertionProblem``).

    Returns
    -------
    tuple
        The chosen candidate's slot ``ts`` (the new job's start), and the ids and starts of
        the jobs the chosen candidate re-placed (the others keep ``te``): exactly the
        decision of ``heuristics.slack.insert`` on the same problem.
    """
    au, at, ap, af = alphas
    jn, jt, jp = (0, 0, 1.0) if new is None else new
    P = np.array((now, capacity, ORDER_CODE[order], jn, jt, new is not None, hold,
                  delay_from == "start", _NEUMAIER), np.int64)
    Q = np.array((at, au, ap, ap * af, p_floor, slack_floor, jp), np.float64)
    out = np.empty((3, JI.shape[0]), np.int64)
    ni, nf, nb = decide_ws_sizes(JI.shape[0], run_end.shape[0])
    found, ts, count = _decide(P, Q, run_end, run_n, JI, TE, X, out, np.empty(ni, np.int64),
                               np.empty(nf, np.float64), np.empty(nb, np.bool_))
    if not found:  # cannot happen: the last slot leaves the machine empty
        raise RuntimeError(f"no feasible insertion found at t={now}")
    return int(ts), out[0, :count].tolist(), out[1, :count].tolist()


def unsupported(order: str, stop: Callable[[], bool] | None) -> str | None:
    """Why the compiled search cannot run this search, or None when it can."""
    if order not in ("AST", "AAT", "DU", "DC", "DP"):
        return (f"order {order!r} (the compiled search runs the compress orders AST, AAT, "
                "DU, DC and DP)")
    if stop is not None:
        return "a stop callback (time limits belong to the offline solvers)"
    return None


def search(problem: InsertionProblem, order: str, key: Callable[[WaitingJob], tuple] | None,
           *, max_exhaustive: int, delay_from: str, hold: bool,
           stop: Callable[[], bool] | None) -> tuple[Best | None, bool]:
    """:func:`heuristics.slack_fast.search` on the compiled kernel (the same result).

    Raises ValueError naming what the kernel does not run (:func:`unsupported`);
    ``max_exhaustive`` only matters to the exhaustive search, which is refused.
    """
    why = unsupported(order, stop)
    if why is not None:
        raise ValueError(f"the compiled slack search does not support {why}; "
                         "use the Python search")
    W = sorted(problem.waiting, key=attrgetter("te", "id"))
    m = len(W)
    if m:
        J = np.array([(w.n, w.t, w.te) for w in W], np.int64)
        X = np.array([(w.s, w.s0, w.p) for w in W], np.float64)  # slack, initial slack, p
    else:
        J = np.zeros((0, 3), np.int64)
        X = np.zeros((0, 3), np.float64)
    R = np.array([(r.end, r.n) for r in problem.running], np.int64).reshape(-1, 2)
    if order == "AST":
        rank = np.arange(m, dtype=np.int64)
    else:
        rank = np.empty(m, np.int64)
        rank[sorted(range(m), key=lambda i: key(W[i]))] = np.arange(m)  # type: ignore[misc]
    new = problem.new
    pj = 1.0 if new is None else new.p
    pf = problem.p_floor
    out_seq = np.empty(m, np.int64)
    out_starts = np.empty(m, np.int64)
    ni, nf, nb = ws_sizes(m, R.shape[0])
    found, price, mv, ts = _search(
        problem.now, problem.capacity, R[:, 0].copy(), R[:, 1].copy(), J[:, 0].copy(),
        J[:, 1].copy(), J[:, 2].copy(), X[:, 0].copy(), X[:, 2].copy(), X[:, 1].copy(), rank,
        float(problem.alpha_t), float(problem.alpha_u), float(problem.alpha_p),
        float(problem.alpha_p * problem.alpha_f), float(pf), float(problem.slack_floor),
        float(max(pj, pf)), float(new_weight(problem)), new.n if new is not None else 0,
        new.t if new is not None else 0, new is not None, hold, delay_from == "start",
        _NEUMAIER, out_seq, out_starts, np.empty(ni, np.int64), np.empty(nf, np.float64),
        np.empty(nb, np.bool_))
    if not found:
        return None, False
    nd = int((out_seq >= 0).sum())
    seq = out_seq[:nd].tolist()
    st = out_starts[:nd].tolist()
    ids = [W[i].id for i in seq]
    return (float(price), int(mv), int(ts), tuple(ids), dict(zip(ids, st, strict=True))), False
