"""The slot search of ``heuristics.slack`` on plain lists (the fast path of ``insert``).

``heuristics.slack._Search`` states the search on :class:`sim.profile.Profile` objects:
every reservation is checked against the capacity, every candidate starts from a copy of
a checked profile. This module runs the *same* search (same slots, same compress orders,
same holds, same float operations in the same order, same pruning, same tie rules) on
two bare lists per candidate -- the breakpoint times and the free processors after each
-- without the capacity checks, which hold by construction:

- the running jobs and the waiting jobs kept at their ``te`` are the problem's current
  schedule, which ``InsertionProblem`` checked when it was built;
- the new job is placed only at a slot where it fits (checked here, as in the
  reference);
- the delayed jobs' holds at ``te + t_j`` fit: for ``x >= ts`` the load of the jobs
  fixed at slot ``ts`` (and of the running jobs) does not grow with time, so shifting the
  delayed jobs right by ``t_j``, past the new job, keeps the sum within the capacity;
- every compressed job goes to the earliest start at which it fits.

So the result is the reference's, decision for decision, checked differentially by
``tests/batch/test_slack_fast.py`` (``insert(..., fast=False)`` keeps the reference path);
the scheduler re-checks any schedule with ``sim.problems.insertion.check`` when asked
(``SlackScheduler(check=True)``). The shortcuts that skip work (a lower bound on every
start, the remove and insert cases in ``search``) are argued where they are made. The
one representational difference: breakpoints are not merged, which never changes an
earliest start (it depends only on the free-capacity step function, not on how it is
split into segments).

Times are integer seconds, capacities processors.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from operator import attrgetter

from sim.problems.insertion import InsertionProblem, WaitingJob, new_weight

_REL_TIE = 1e-9
_STOP_EVERY = 64
_STOP_WORK = 64
"""Steps between two calls of ``stop`` besides the one every :data:`_STOP_EVERY`
candidates; a step is a slot visited, a job added to a profile or a job compressed, each
O(breakpoints) list work. One candidate over 10^4 delayed jobs on a profile of 2 x 10^4
breakpoints takes seconds (10 s of CPU passed between two looks at the clock once every
64 candidates), so the clock is read within a candidate too (a candidate cut short is
dropped), and while the set-up and the slots that take no candidate add jobs."""

Best = tuple[float, int, int, tuple[int, ...], dict[int, int]]
"""``(price, moved, ts, compress order as job ids, {job id: start})`` of the best
candidate (seconds)."""


def _add(T: list[int], F: list[int], s: int, e: int, n: int) -> None:
    """Subtract ``n`` processors on ``[s, e)`` (``T[0] <= s < e``; ``n < 0`` adds)."""
    a = bisect_right(T, s) - 1
    if T[a] != s:
        a += 1
        T.insert(a, s)
        F.insert(a, F[a - 1])
    b = bisect_right(T, e, a) - 1
    if T[b] != e:
        b += 1
        T.insert(b, e)
        F.insert(b, F[b - 1])
    for i in range(a, b):
        F[i] -= n


def _fits(T: list[int], F: list[int], s: int, e: int, n: int) -> bool:
    """Whether ``n`` processors are free on ``[s, e)`` (``s >= T[0]``)."""
    i = bisect_right(T, s) - 1
    L = len(T)
    while i < L and T[i] < e:
        if F[i] < n:
            return False
        i += 1
    return True


def _merge(T0: list[int], F0: list[int], ev: dict[int, int]) -> tuple[list[int], list[int]]:
    """The profile ``(T0, F0)`` with ``ev`` (time -> processors taken from then on, a
    negative value gives them back; the values sum to 0, every time ``>= T0[0]``)."""
    if not ev:
        return T0.copy(), F0.copy()
    T: list[int] = []
    F: list[int] = []
    p = 0
    L = len(T0)
    acc = 0
    for x in sorted(ev):
        q = bisect_left(T0, x, p)
        if q > p:  # the breakpoints before x, shifted by what is taken so far
            T += T0[p:q]
            F += [f - acc for f in F0[p:q]] if acc else F0[p:q]
            p = q
        acc += ev[x]
        T.append(x)
        if p < L and T0[p] == x:
            F.append(F0[p] - acc)
            p += 1
        else:
            F.append(F0[p - 1] - acc)
    T.extend(T0[p:])
    F.extend(F0[p:])
    return T, F


def _earliest(T: list[int], F: list[int], t: int, n: int, not_before: int | None = None) -> int:
    """Earliest start ``>= not_before`` (default ``T[0]``) of ``n`` processors for ``t``
    seconds (the last segment must have ``n`` free)."""
    L = len(T)
    if not_before is None:
        a = 0
        st = T[0]
    else:
        st = not_before
        a = bisect_right(T, st) - 1
    while True:
        if F[a] < n:
            a += 1
            while F[a] < n:
                a += 1
            st = T[a]
        end = st + t
        j = a + 1
        while j < L and T[j] < end:
            if F[j] < n:
                break
            j += 1
        else:
            return st
        a = j


def search(problem: InsertionProblem, order: str, key: Callable[[WaitingJob], tuple] | None,
           *, max_exhaustive: int, delay_from: str, hold: bool,
           stop: Callable[[], bool] | None, frozen: frozenset[int] = frozenset(),
           block: bool = False) -> tuple[Best | None, bool]:
    """Run the slot search of ``heuristics.slack.insert`` and return ``(best, stopped)``.

    Parameters
    ----------
    problem : InsertionProblem
    order : str
        A compress order name or ``"exhaustive"`` (only used to tell the two apart and in
        the error message).
    key : callable or None
        Sort key of the compress order (``heuristics.slack._order_key``); None for the
        exhaustive search.
    max_exhaustive, delay_from, stop
        As in ``heuristics.slack.insert``.
    hold : bool
        ``compress="hold"`` (True) or ``"list"`` (False).
    frozen, block
        Ids of the waiting jobs that keep their start, and whether a slot that delays
        one of them is skipped (``heuristics.slack.frozen_ids``, ``zero_slack``).

    Returns
    -------
    tuple
        ``best`` (see :data:`Best`; None when stopped before any candidate) and whether
        ``stop`` ended the search.
    """
    now = problem.now
    cap = problem.capacity
    # running jobs: all hold their processors from now to their estimated end
    T0 = [now]
    F0 = [cap]
    ends: dict[int, int] = {}
    for r in problem.running:
        if r.end > now:
            ends[r.end] = ends.get(r.end, 0) + r.n
            F0[0] -= r.n
    for e in sorted(ends):
        T0.append(e)
        F0.append(F0[-1] + ends[e])
    W = sorted(problem.waiting, key=attrgetter("te", "id"))
    m = len(W)
    ids = [w.id for w in W]
    ns = [w.n for w in W]
    ts_ = [w.t for w in W]
    tes = [w.te for w in W]
    ss = [w.s for w in W]
    at = problem.alpha_t
    # delay_weight(problem, w), the same expression inlined
    pj = 1.0 if problem.new is None else problem.new.p
    pf, sfl = problem.p_floor, problem.slack_floor
    au, ap, apf = problem.alpha_u, problem.alpha_p, problem.alpha_p * problem.alpha_f
    pjf = max(pj, pf)
    dw = [float(w.n) ** au * (max(w.p, pf) / pjf) ** ap
          * (1.0 if w.s == w.s0 else w.s0 / max(w.s, sfl)) ** apf for w in W]
    # job_cost(problem, w, now): moved all the way to now (the least any start costs)
    mc = [0.0 if tes[i] == now else dw[i] * -(float(tes[i] - now) ** at) for i in range(m)]
    fz = [ids[i] in frozen for i in range(m)] if frozen else None
    new = problem.new
    jn = new.n if new is not None else 0
    jt = new.t if new is not None else 0
    jweight = new_weight(problem)
    # slots: now, the running jobs' ends (T0) and the waiting jobs' starts and ends
    pts = set(T0)
    pts.update(tes)
    pts.update([tes[i] + ts_[i] for i in range(m)])
    slots = sorted(pts)
    if delay_from == "start":
        fixv = tes
        by_fix = list(range(m))  # W is in (te, id) order already
    else:
        fixv = [w.te + w.t - 1 for w in W]
        by_fix = sorted(range(m), key=lambda i: (fixv[i], tes[i], ids[i]))
    exhaustive = key is None
    rank: list[int] = []
    if order == "AST":
        rank = list(range(m))  # its key is (te, id), the order of W
    elif not exhaustive:
        rank = [0] * m
        for r_, i in enumerate(sorted(range(m), key=lambda i: key(W[i]))):
            rank[i] = r_
    lb0 = [_earliest(T0, F0, ts_[i], ns[i]) for i in range(m)]
    if fz is not None:  # a frozen job starts at its te or later (then it is dropped)
        for i in range(m):
            if fz[i]:
                lb0[i] = max(lb0[i], tes[i])
                mc[i] = 0.0
    blocking = block and fz is not None and any(fz)
    rel = _REL_TIE
    all_held = hold and delay_from == "start"  # every delayed job starts at or after ts

    stay: list[bool] | None = None
    if hold and new is None:
        # S, the current schedule; stay[i]: job i cannot start earlier in S
        TS = T0.copy()
        FS = F0.copy()
        for i in range(m):  # O(m) per job on a long queue: the clock now and then
            if stop is not None and i % _STOP_WORK == _STOP_WORK - 1 and stop():
                return None, True
            _add(TS, FS, tes[i], tes[i] + ts_[i], ns[i])
        stay = []
        for i in range(m):
            if stop is not None and i % _STOP_WORK == _STOP_WORK - 1 and stop():
                return None, True
            if lb0[i] == tes[i]:
                stay.append(True)
                continue
            _add(TS, FS, tes[i], tes[i] + ts_[i], -ns[i])  # breakpoints exist: no insert
            stay.append(_earliest(TS, FS, ts_[i], ns[i], lb0[i]) == tes[i])
            _add(TS, FS, tes[i], tes[i] + ts_[i], ns[i])
        if (stop is None and all_held and all(stay) and not blocking
                and (not exhaustive or m <= max_exhaustive)):
            # no job can move: with every delayed job holding its place, every slot's
            # candidate is the current schedule at price 0 (the dummy job has no term),
            # so the first slot's, ``now`` with every job delayed, is taken and every
            # later one ties with it and moves as many jobs: it is the search's answer
            # (not shortcut: a ``stop``, which could end the search with another flag;
            # an exhaustive search that must refuse the first slot; delay_from="overlap",
            # where a delayed job that starts before the slot holds nothing)
            seq = sorted(range(m), key=rank.__getitem__) if not exhaustive else list(by_fix)
            return (0.0, 0, now, tuple(ids[i] for i in seq),
                    {ids[i]: tes[i] for i in seq}), False

    best: Best | None = None
    tried = 0
    work = 0  # steps (see _STOP_WORK), the clock read every _STOP_WORK of them
    stopped = False
    FT = T0.copy()  # fixed jobs (and running jobs), grown slot by slot
    FF = F0.copy()
    k = 0
    k_prev = -1
    sdel = 0.0
    # remove with every delayed job holding its place: each candidate starts from S, so
    # the profile of the fixed jobs is not needed
    s_only = stay is not None and all_held
    # insert with every delayed job holding its place: GT/GF is the fixed profile plus
    # every delayed job's hold, kept slot by slot (a job that becomes fixed gives up its
    # hold at te + jt and takes te); a candidate is then GT/GF plus the new job
    g_mode = all_held and jt > 0
    if g_mode:
        ev0: dict[int, int] = {}
        for i in range(m):
            h = tes[i] + jt
            ev0[h] = ev0.get(h, 0) + ns[i]
            h += ts_[i]
            ev0[h] = ev0.get(h, 0) - ns[i]
        GT, GF = _merge(T0, F0, ev0)
    for ts in slots:
        while k < m and fixv[by_fix[k]] < ts:
            work += 1
            if stop is not None and work % _STOP_WORK == 0 and stop():
                stopped = True
                break
            if not s_only:
                i = by_fix[k]
                _add(FT, FF, tes[i], tes[i] + ts_[i], ns[i])
                if g_mode:
                    h = tes[i] + jt
                    _add(GT, GF, h, h + ts_[i], -ns[i])
                    _add(GT, GF, tes[i], tes[i] + ts_[i], ns[i])
            k += 1
        work += 1
        if stopped or (stop is not None and work % _STOP_WORK == 0 and stop()):
            stopped = True
            break
        if jt > 0 and not _fits(FT, FF, ts, ts + jt, jn):
            continue
        if blocking and any(fz[i] for i in by_fix[k:]):  # type: ignore[index]
            continue
        if stopped:
            break
        delayed = by_fix[k:]
        if ts <= now or jweight == 0.0:
            term = 0.0
        else:
            term = jweight * float(ts - now) ** at
        if k != k_prev:
            sdel = sum([mc[i] for i in delayed])
        if best is not None:
            lb = term + sdel
            b0 = best[0]
            if lb > b0 and lb - b0 > rel * max(1.0, abs(lb), abs(b0)):
                break
        if new is None and k == k_prev and not exhaustive and (all_held or not hold):
            # remove: the same delayed jobs as at the slot before, holding the same places
            # (all of them, or none), so the same candidate on the same profile, priced
            # against the same best or tied with it (it is that best): not taken
            tried += 1
            if stop is not None and tried % _STOP_EVERY == 0 and stop():
                stopped = True
            continue
        k_prev = k
        if exhaustive:
            if len(delayed) > max_exhaustive:
                raise ValueError(
                    f"exhaustive search over compress orders needs {len(delayed)}! orders at "
                    f"t={now}; limit max_exhaustive={max_exhaustive}")
            seqs = itertools.permutations(delayed)
        else:
            seqs = (sorted(delayed, key=rank.__getitem__),)
        for seq in seqs:
            tried += 1
            if stop is not None and tried % _STOP_EVERY == 0 and stop():
                stopped = True
                break
            # ---- compress ``seq`` (heuristics.slack._Search.compress, inlined)
            bound = None if best is None else best[0]
            rest = sdel if seq == delayed else sum([mc[i] for i in seq])
            total = term
            starts: list[int] = []
            if all_held:
                held = None
            elif hold:
                held = [tes[i] >= ts for i in seq]
            else:
                held = [False] * len(seq)
            # remove, every job holding its place: the profile is the current schedule
            # S until the first job that moves, so a job that ``stay``s costs no work
            clean = stay is not None and (held is None or all(held))
            if g_mode:
                T = GT.copy()
                F = GF.copy()
                _add(T, F, ts, ts + jt, jn)
            elif not clean:
                # the fixed profile plus the new job and the holds, merged in one pass
                ev: dict[int, int] = {}
                if jt > 0:
                    ev[ts] = jn
                    ev[ts + jt] = -jn
                if hold:
                    get = ev.get
                    for pos, i in enumerate(seq):
                        if held is None or held[pos]:
                            h = tes[i] + jt
                            ev[h] = get(h, 0) + ns[i]
                            h += ts_[i]
                            ev[h] = get(h, 0) - ns[i]
                T, F = _merge(FT, FF, ev)
            ok = True
            for pos, i in enumerate(seq):
                n = ns[i]
                t = ts_[i]
                te = tes[i]
                if clean:
                    if stay[i]:  # type: ignore[index]
                        starts.append(te)
                        rest -= mc[i]
                        if bound is not None:
                            x = total + rest
                            if x > bound and x - bound > rel * max(1.0, abs(x), abs(bound)):
                                ok = False
                                break
                        continue
                    clean = False
                    T = TS.copy()
                    F = FS.copy()
                work += 1
                if stop is not None and work % _STOP_WORK == 0 and stop():
                    stopped, ok = True, False  # a candidate cut short is no candidate
                    break
                if held is None or held[pos]:  # give up the hold at te + jt
                    h = te + jt
                    ha = bisect_right(T, h) - 1  # a breakpoint: the hold made it
                    he = h + t
                    hb = bisect_right(T, he, ha) - 1
                    for x_ in range(ha, hb):
                        F[x_] += n
                # earliest start >= now (the last segment is all free); it is at least
                # lb0[i], the earliest start next to the running jobs alone, which every
                # profile of the search contains
                L = len(T)
                st = lb0[i]
                a = bisect_right(T, st) - 1
                while True:
                    if F[a] < n:  # skip the blocked segments
                        a += 1
                        while F[a] < n:
                            a += 1
                        st = T[a]
                    end = st + t
                    j = a + 1
                    while j < L and T[j] < end:
                        if F[j] < n:
                            break
                        j += 1
                    else:
                        break  # fits on [st, end)
                    a = j
                d = st - te
                if d > ss[i]:
                    ok = False
                    break
                # reserve [st, st + t)
                if T[a] != st:
                    a += 1
                    T.insert(a, st)
                    F.insert(a, F[a - 1])
                end = st + t
                b = bisect_right(T, end, a) - 1
                if T[b] != end:
                    b += 1
                    T.insert(b, end)
                    F.insert(b, F[b - 1])
                for x_ in range(a, b):
                    F[x_] -= n
                starts.append(st)
                rest -= mc[i]
                if d != 0:
                    if d > 0:
                        total += dw[i] * (float(d) ** at)
                    else:
                        total += dw[i] * -(float(-d) ** at)
                if bound is not None:
                    x = total + rest
                    if x > bound and x - bound > rel * max(1.0, abs(x), abs(bound)):
                        ok = False
                        break
            if stopped:
                break
            if not ok:
                continue
            moved = 0  # seq is an order of the delayed jobs
            for i, st in zip(seq, starts, strict=True):
                if st != tes[i]:
                    moved += 1
            if best is not None:
                b0 = best[0]
                if total == b0 or abs(total - b0) <= rel * max(1.0, abs(total), abs(b0)):
                    if moved >= best[1]:
                        continue
                elif total > b0:
                    continue
            best = (total, moved, ts, tuple(ids[i] for i in seq),
                    {ids[i]: st for i, st in zip(seq, starts, strict=True)})
    return best, stopped
