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
def add(times, free, n, start, duration, demand, sign, capacity):
    """Add ``sign * demand`` on ``[start, start + duration)``; new n, or an error."""
    if duration <= 0:
        return n
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
    return n

@njit(cache=True)
def fits_at(free, j, demand):
    for k in range(free.shape[0]):
        if free[k, j] < demand[k]:
            return False
    return True

@njit(cache=True)
def earlier_start(times, free, n, duration, demand, old):
    """Earliest start before ``old`` with the own reservation [old, old + duration)
    given back (``_earlier_start`` in backfill.py); -1 when there is none."""
    own_end = old + duration
    i = 0
    start = times[0]
    while start < old:
        end = start + duration
        j = i
        ok = True
        while j < n:
            tj = times[j]
            if tj >= end:
                break
            if not (old <= tj < own_end) and not fits_at(free, j, demand):
                ok = False
                break
            j += 1
        if ok:
            return start
        i = j + 1
        if i >= n:
            return -1
        start = times[i]
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
    for q in range(res.shape[0]):
        old = res[q]
        if old == now:
            continue
        dur = duration[q]
        dem = demand[q]
        if old >= 0:
            t = earlier_start(times, free, n, dur, dem, old)
            if t < 0 or (only_now and t != now):
                continue
            n = add(times, free, n, old, dur, dem, 1, capacity)
            if n < 0:
                return n
        else:
            t = earliest_start(times, free, n, dur, dem, now)
            if t < 0:
                return NEVER_FITS
        n = add(times, free, n, t, dur, dem, -1, capacity)
        if n < 0:
            return n
        res[q] = t
    return n
