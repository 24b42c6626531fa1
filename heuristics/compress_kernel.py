"""Compiled compression pass of conservative backfilling (numba).

``compress`` is the loop of ``heuristics.backfill.Conservative._compress`` over arrays:
every waiting job, in the order given, is re-placed at its earliest start with its own
reservation given back (never later than that reservation), or, with ``only_now``, moved
only when that start is now. The profile (``sim.profile.Profile``'s step function:
breakpoints ``times`` and free capacity ``free[k, i]`` on ``[times[i], times[i+1])``) is
updated in place with the same breakpoints the Python code would insert. The Python
loop costs about 2.5 us per waiting job and 10 us per move on SDSC-BLUE's overloaded
queue (206k compressions of 29 waiting jobs on average), which no pruning measured in
pure Python brought near the 10 s target; compiled, the pass costs its conversion.

A job that cannot move is the common case under overload, and its search visits every
candidate start before its reservation. After a run fails, the next candidate that can
fit is the first segment where the demand fits, so the search jumps there, skipping
whole blocks of ``BLOCK`` breakpoints whose largest free capacity (``bmax``, kept up to
date by every booking) is short of the demand. The search still costs one step per
hole that is wide enough but too short, and on SDSC-BLUE compressed 1.5x there are
about 36 of those per job at a queue of 1,100 (their number grows with the queue).

Importing this module needs numba (an optional dependency: ``pip install
'schedsearch[fast]'``); ``heuristics.backfill`` imports it lazily and uses the
pure-Python pass without it. The compiled functions are cached on disk by numba
(``cache=True``), so only the first run after an install compiles them. Times are
integer seconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# error codes of ``compress`` (a negative return value)
NEVER_FITS = -1  # a job without reservation never fits the profile
OVER_CAPACITY = -2  # a release would exceed the capacity (inconsistent profile)
UNDER_ZERO = -3  # a reservation would make free capacity negative
ERRORS = {NEVER_FITS: "a job never fits the profile",
          OVER_CAPACITY: "a release would exceed the capacity",
          UNDER_ZERO: "a reservation would make free capacity negative"}


#: :func:`add`'s signs. numba compiles a kernel once per constant that a call site passes as
#: a Python ``int`` or ``bool`` (typed ``Literal[int](1)``), and once more for a variable
#: that starts at such a constant (type inference calls the kernel with the constant's type
#: before the variable's type settles). So the constants passed to kernels are NumPy
#: scalars (typed ``int64``: one version serves every value), and counters passed to
#: kernels start at ``np.int64(0)``.
ADD, TAKE = np.int64(1), np.int64(-1)

SHIFT = 5
BLOCK = 1 << SHIFT  # breakpoints per block of the index


@njit(cache=True)
def index_blocks(free, n, bmax, i):
    """Recompute ``bmax[k, b]``, the largest free capacity of resource ``k`` on the
    segments ``[b * BLOCK, (b + 1) * BLOCK)`` (cut at ``n``), for every block from the
    one holding segment ``i`` on."""
    index_range(free, n, bmax, i >> SHIFT, (n + BLOCK - 1) >> SHIFT)


@njit(cache=True)
def index_range(free, n, bmax, b0, b1):
    """Recompute ``bmax[k, b]`` for the blocks ``b0 <= b < b1`` (segments cut at ``n``)."""
    K = free.shape[0]
    for b in range(b0, b1):
        lo = b << SHIFT
        hi = min(lo + BLOCK, n)
        for k in range(K):
            m = free[k, lo]
            for x in range(lo + 1, hi):
                m = max(m, free[k, x])
            bmax[k, b] = m


@njit(cache=True)
def split(times, free, n, t):
    """Ensure a breakpoint at ``t`` (>= times[0]); returns (index, new n)."""
    i = np.searchsorted(times[:n], t, side="right") - 1
    if times[i] == t:
        return i, n
    K = free.shape[0]
    for j in range(n, i + 1, -1):
        times[j] = times[j - 1]
        for k in range(K):
            free[k, j] = free[k, j - 1]
    times[i + 1] = t
    for k in range(K):
        free[k, i + 1] = free[k, i]
    return i + 1, n + 1

@njit(cache=True)
def add(times, free, n, start, duration, demand, sign, capacity, bmax):
    """Add ``sign * demand`` on ``[start, start + duration)``; new n, or an error. The
    block index ``bmax`` is kept up to date."""
    if duration <= 0:
        return n
    n0 = n
    a, n = split(times, free, n, start)
    b, n = split(times, free, n, start + duration)
    K = free.shape[0]
    for k in range(K):
        d = sign * demand[k]
        if d == 0:
            continue
        for i in range(a, b):
            v = free[k, i] + d
            if v < 0:
                return UNDER_ZERO
            if v > capacity[k]:
                return OVER_CAPACITY
    for k in range(K):
        d = sign * demand[k]
        for i in range(a, b):
            free[k, i] += d
    if n != n0:  # breakpoints moved: every block from the first new one changed
        index_blocks(free, n, bmax, a)
    else:  # only the blocks holding [a, b) changed
        index_range(free, n, bmax, a >> SHIFT, ((b - 1) >> SHIFT) + 1)
    return n

@njit(cache=True)
def fits_at(free, j, demand):
    for k in range(free.shape[0]):
        if free[k, j] < demand[k]:
            return False
    return True

@njit(cache=True)
def next_fit(free, bmax, x, stop, demand):
    """The first segment in ``[x, stop)`` where ``demand`` fits, or ``stop``; whole
    blocks whose largest free capacity is short of the demand are skipped."""
    K = free.shape[0]
    while x < stop:
        if x & (BLOCK - 1) == 0:
            b = x >> SHIFT
            while True:
                short = False
                for k in range(K):
                    if bmax[k, b] < demand[k]:
                        short = True
                        break
                if not short:
                    break
                b += 1
                x = b << SHIFT
                if x >= stop:
                    return stop
        if fits_at(free, x, demand):
            return x
        x += 1
    return stop

@njit(cache=True)
def earlier_start(times, free, n, duration, demand, old, bmax):
    """Earliest start before ``old`` with the own reservation [old, old + duration)
    given back (``_earlier_start`` in backfill.py); -1 when there is none.

    A start ``s < old`` fits when the demand fits on ``[s, min(s + duration, old))``
    (the rest of its run is the own reservation). The candidates are now and the
    breakpoints; after a run fails at segment ``j``, the next candidate that can fit
    is the first segment after ``j`` where the demand fits (a candidate where it does
    not fails at once), found with the block index ``bmax``."""
    if duration <= 0:
        return times[0] if times[0] < old else -1
    stop = np.searchsorted(times[:n], old)  # the candidates are the segments before old
    i = np.int64(0)
    while i < stop:
        start = times[i]
        lim = min(start + duration, old)
        j = i
        while j < n and times[j] < lim:
            if not fits_at(free, j, demand):
                break
            j += 1
        else:
            return start
        i = next_fit(free, bmax, j + 1, stop, demand)
    return -1

@njit(cache=True)
def earliest_start(times, free, n, duration, demand, not_before):
    """``Profile.earliest_start``; -1 when the demand never fits."""
    if not_before < times[0]:
        not_before = times[0]
    i = np.searchsorted(times[:n], not_before, side="right") - 1
    start = not_before
    if duration <= 0:
        return start
    while True:
        end = start + duration
        j = i
        while True:
            if not fits_at(free, j, demand):
                break
            j += 1
            if j >= n or times[j] >= end:
                return start
        if j == n - 1:
            return -1
        i = j + 1
        start = times[i]

@njit(cache=True)
def compress(times, free, n, now, res, duration, demand, only_now, capacity):
    """Re-place the waiting jobs (rows of ``res``/``duration``/``demand``, in
    processing order); ``res`` (s, -1 for none) is updated in place. ``times`` and
    ``free`` need room for 4 more breakpoints per job. Returns the new number of
    breakpoints, or a negative error code (``res`` then partly updated)."""
    K = free.shape[0]
    bmax = np.empty((K, (times.shape[0] >> SHIFT) + 1), np.int64)
    index_blocks(free, n, bmax, np.int64(0))
    for q in range(res.shape[0]):
        old = res[q]
        if old == now:
            continue
        dur = duration[q]
        dem = demand[q]
        if old >= 0:
            t = earlier_start(times, free, n, dur, dem, old, bmax)
            if t < 0 or (only_now and t != now):
                continue
            n = add(times, free, n, old, dur, dem, ADD, capacity, bmax)
            if n < 0:
                return n
        else:
            t = earliest_start(times, free, n, dur, dem, now)
            if t < 0:
                return NEVER_FITS
        n = add(times, free, n, t, dur, dem, TAKE, capacity, bmax)
        if n < 0:
            return n
        res[q] = t
    return n
