"""Compiled branch and bound of :func:`models.kresource.knapsack.knapsack_pattern`
(numba).

The same search as the reference ``_Search`` (the same order, bounds, node count and
patterns), with an explicit stack instead of recursion, over the arrays of
:class:`models.kresource.knapsack.Order`. All arithmetic is int64; the caller checks
that no sum or product can overflow before it calls. Importing this module needs numba
(an optional dependency: ``pip install 'schedsearch[fast]'``); the kernel is compiled at
its first call and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def count(small, free):
    """The most further jobs that fit ``free`` (``min_k c_k``, :class:`Order`)."""
    c = -1
    for k in range(free.shape[0]):
        ck = np.searchsorted(small[k], free[k], side="right") - 1
        if c < 0 or ck < c:
            c = ck
    return c


@njit(cache=True)
def bound(w, a, top, t, c, afree):
    """``Order.bound`` with ``c = count(small, free)``: the most weight jobs ``t..`` can
    add within ``free``/``afree``."""
    limited = c < top.shape[1]
    card = top[t, c] if limited else 0
    dantzig = 0
    for s in range(t, w.shape[0]):
        if a[s] <= afree:
            afree -= a[s]
            dantzig += w[s]
            if limited and dantzig >= card:
                return card
        else:
            dantzig += w[s] * afree // a[s]
            break
    if limited and card < dantzig:
        return card
    return dantzig


@njit(cache=True)
def search(w, d, a, A, cap, same, small, top, lower, above, nodes, enough, pattern,
           found, found_len):
    """The depth-first search from the root. Returns ``(best, length, visited, stopped,
    kept)``: the best weight (``lower`` when none above it), the positions of its
    pattern in ``pattern[:length]``, the nodes visited, whether the search stopped
    early (past ``nodes`` nodes, or at ``enough`` patterns above ``above``), and the
    improving patterns above ``above`` met (``found[i, :found_len[i]]``, a ring of
    ``found.shape[0]`` rows: the ``kept`` last of them, the oldest at ``kept % rows``
    when more were met than rows)."""
    m, K = w.shape[0], cap.shape[0]
    depth = pattern.shape[0]
    free = np.empty((depth + 1, K), dtype=np.int64)
    afree = np.empty(depth + 1, dtype=np.int64)
    cw = np.empty(depth + 1, dtype=np.int64)
    start = np.empty(depth + 1, dtype=np.int64)
    cur = np.empty(depth + 1, dtype=np.int64)
    chosen = np.empty(depth + 1, dtype=np.int64)
    fits = np.empty(depth + 1, dtype=np.int64)
    for k in range(K):
        free[0, k] = cap[k]
    fits[0] = count(small, free[0])
    afree[0], cw[0], start[0], cur[0] = A, 0, 0, 0
    best, length, visited, kept = lower, 0, 1, 0
    if visited > nodes:
        return best, length, visited, True, kept
    lvl = 0
    while lvl >= 0:
        t = cur[lvl]
        pop = t >= m
        if not pop and cw[lvl] + bound(w, a, top, t, fits[lvl], afree[lvl]) <= best:
            pop = True
        if pop:
            lvl -= 1
            if lvl >= 0:
                cur[lvl] += 1
            continue
        if same[t] and t > start[lvl]:
            cur[lvl] += 1
            continue
        fit = True
        for k in range(K):
            if d[t, k] > free[lvl, k]:
                fit = False
                break
        if not fit:
            cur[lvl] += 1
            continue
        visited += 1
        if visited > nodes:
            return best, length, visited, True, kept
        chosen[lvl] = t
        nxt = lvl + 1
        for k in range(K):
            free[nxt, k] = free[lvl, k] - d[t, k]
        afree[nxt] = afree[lvl] - a[t]
        cw[nxt] = cw[lvl] + w[t]
        start[nxt] = t + 1
        cur[nxt] = t + 1
        fits[nxt] = count(small, free[nxt])
        lvl = nxt
        if cw[lvl] > best:
            best, length = cw[lvl], lvl
            for i in range(lvl):
                pattern[i] = chosen[i]
            if cw[lvl] > above:
                row = kept % found.shape[0]
                for i in range(lvl):
                    found[row, i] = chosen[i]
                found_len[row] = lvl
                kept += 1
                if kept >= enough:
                    return best, length, visited, True, kept
    return best, length, visited, False, kept
