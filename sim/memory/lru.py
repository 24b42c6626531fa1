"""Exact LRU miss-rate curves from reference traces, and a trace-driven LRU simulator.

Stack distances
---------------
The LRU stack distance of reference ``i`` to block ``a`` is one plus the number of
distinct blocks referenced since the previous reference to ``a`` at ``p_i`` (infinite
for a first reference). It misses in a fully associative LRU memory of ``c`` blocks iff
the distance exceeds ``c`` (Mattson et al.'s inclusion property), so one pass gives the
miss-rate curve for every size.

Distinct blocks in the window ``(p_i, i)`` = window length minus the number of repeats
inside it, and a repeat inside it is a reference ``t`` with ``p_i < p_t`` and ``t < i``
(its reuse interval nests in ours). Counting, for every ``i``, the earlier ``t`` with a
larger ``p_t`` is an inversion count, done here by a bottom-up merge sort whose levels are
numpy operations (``searchsorted`` across all runs at once, then a stable sort that only
merges adjacent sorted runs): ``O(n log n)`` work in ``log2 n`` vectorised passes.

Footprint spread
----------------
:func:`footprint_spread` gives the mean and standard deviation of the number of distinct
blocks over *all* windows of each length, exactly, in ``O(n)`` numpy work per length:
moving the window ``[s, s+k)`` one step drops block ``a[s]`` iff its next use is at or
after ``s + k`` and adds a new block iff the previous use of ``a[s+k]`` is before
``s + 1``.

Simulation
----------
:func:`interleave` merges several streams in proportion to their reference rates,
:func:`round_robin_trace` in round-robin slices; :func:`simulate_lru` counts the misses of
each stream in a shared LRU memory (via the stack distances of the merged trace).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sim.memory.model import FootprintSpread

__all__ = [
    "previous_use",
    "stack_distances",
    "miss_rate_curve",
    "naive_misses",
    "interleave",
    "round_robin_trace",
    "simulate_lru",
    "Simulation",
    "footprint_spread",
]

COLD = np.iinfo(np.int64).max
"""Stack distance of a first reference (misses at every size)."""


def previous_use(trace: np.ndarray) -> np.ndarray:
    """Index of the previous reference to the same block, -1 for a first reference."""
    a = np.asarray(trace)
    n = a.size
    order = np.argsort(a, kind="stable")
    s = a[order]
    prev = np.full(n, -1, dtype=np.int64)
    same = s[1:] == s[:-1]
    prev[order[1:][same]] = order[:-1][same]
    return prev


def _nested_counts(prev: np.ndarray) -> np.ndarray:
    """For each ``i``: number of ``t < i`` with ``prev[t] > prev[i]`` (merge-sort levels)."""
    n = prev.size
    cnt = np.zeros(n, dtype=np.int64)
    if n < 2:
        return cnt
    big = np.int64(n + 2)
    val = prev.astype(np.int64) + 1  # 0 .. n, sorted within runs as we go
    idx = np.arange(n, dtype=np.int64)  # original position of each slot
    pos = np.arange(n, dtype=np.int64)
    w = 1
    while w < n:
        pair = pos // (2 * w)
        right = (pos // w) % 2 == 1
        left = ~right
        lkeys = pair[left] * big + val[left]
        rkeys = pair[right] * big + val[right]
        # end (exclusive) of each pair's left run inside the concatenated left runs
        lcount = np.bincount(pair[left], minlength=int(pair[-1]) + 1)
        lend = np.cumsum(lcount)
        at = np.searchsorted(lkeys, rkeys, side="right")
        cnt[idx[right]] += lend[pair[right]] - at
        order = np.argsort(pair * big + val, kind="stable")
        val = val[order]
        idx = idx[order]
        w *= 2
    return cnt


def stack_distances(trace: Sequence[int] | np.ndarray) -> np.ndarray:
    """LRU stack distance of every reference (1-based; :data:`COLD` for first uses).

    Parameters
    ----------
    trace : array_like of int
        Block addresses.
    """
    a = np.asarray(trace)
    if a.ndim != 1:
        raise ValueError("field 'trace' must be one-dimensional")
    prev = previous_use(a)
    nested = _nested_counts(prev)
    i = np.arange(a.size, dtype=np.int64)
    dist = i - prev - nested  # (i - p - 1) distinct blocks in between, plus one
    return np.where(prev < 0, COLD, dist)


def miss_rate_curve(
    trace: Sequence[int] | np.ndarray, *, distances: np.ndarray | None = None,
    skip: int = 0,
) -> np.ndarray:
    """Exact LRU miss-rate curve ``m[c]``, ``c = 0 .. X`` blocks (``X`` distinct blocks).

    ``m[c]`` = fraction of the references (after the first ``skip``) whose stack distance
    exceeds ``c``; ``m[0] = 1`` and ``m[X]`` is the fraction of first references.
    Pass precomputed ``distances`` to avoid recomputing them.
    """
    d = stack_distances(trace) if distances is None else np.asarray(distances)
    d = d[skip:]
    n = d.size
    if n == 0:
        raise ValueError("field 'trace' is empty")
    X = int(np.unique(np.asarray(trace)).size)
    finite = d[d != COLD]
    hist = np.bincount(np.minimum(finite, X + 1), minlength=X + 2)  # hist[s] = #dist == s
    hits_le = np.cumsum(hist)[: X + 1]  # hits with c blocks = #dist <= c
    return 1.0 - hits_le / n


def naive_misses(trace: Sequence[int], capacity: int) -> int:
    """Misses of a fully associative LRU memory of ``capacity`` blocks (reference code)."""
    mem: OrderedDict[int, None] = OrderedDict()
    misses = 0
    for a in trace:
        a = int(a)
        if a in mem:
            mem.move_to_end(a)
        else:
            misses += 1
            if capacity > 0:
                mem[a] = None
                if len(mem) > capacity:
                    mem.popitem(last=False)
    return misses


def _disjoint(streams: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Shift address spaces so that the streams share no block."""
    out, base = [], 0
    for s in streams:
        s = np.asarray(s, dtype=np.int64)
        out.append(s + base)
        base += int(s.max()) + 1 if s.size else 0
    return out


def interleave(
    streams: Sequence[np.ndarray], rates: Sequence[float], n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Merge streams in proportion to ``rates`` (deterministic, evenly spread).

    Stream ``p`` contributes about ``n * alpha_p`` references, its ``k``-th at time
    ``(k + 0.5) / alpha_p``; ties go to the lower index. Streams are consumed from their
    start and must be long enough. Address spaces are made disjoint.

    Returns
    -------
    (trace, owner)
        The merged addresses and the index of the stream each came from.
    """
    r = np.asarray(rates, dtype=float)
    if r.shape != (len(streams),) or np.any(~(r > 0)):
        raise ValueError("field 'rates' needs one positive rate per stream")
    alpha = r / r.sum()
    counts = np.floor(n * alpha).astype(np.int64)
    counts[: n - int(counts.sum())] += 1
    ss = _disjoint(streams)
    parts, owners, times = [], [], []
    for p, (s, c) in enumerate(zip(ss, counts, strict=True)):
        if s.size < c:
            raise ValueError(f"stream {p} has {s.size} references, {c} needed")
        parts.append(s[:c])
        owners.append(np.full(c, p, dtype=np.int64))
        times.append((np.arange(c) + 0.5) / alpha[p])
    t = np.concatenate(times)
    o = np.concatenate(owners)
    order = np.lexsort((o, t))
    return np.concatenate(parts)[order], o[order]


def round_robin_trace(
    streams: Sequence[np.ndarray], slice_refs: Sequence[int], rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Round-robin time slices: stream ``p`` runs ``slice_refs[p]`` references per turn,
    continuing where it stopped, for ``rounds`` rounds. Returns ``(trace, owner)``."""
    ss = _disjoint(streams)
    n = [int(v) for v in slice_refs]
    if len(n) != len(ss) or min(n) < 1:
        raise ValueError("field 'slice_refs' needs one positive count per stream")
    parts, owners = [], []
    for r in range(rounds):
        for p, s in enumerate(ss):
            if s.size < (r + 1) * n[p]:
                raise ValueError(f"stream {p} has {s.size} references, {(r + 1) * n[p]} needed")
            parts.append(s[r * n[p] : (r + 1) * n[p]])
            owners.append(np.full(n[p], p, dtype=np.int64))
    return np.concatenate(parts), np.concatenate(owners)


@dataclass(frozen=True)
class Simulation:
    """Misses of each stream in one LRU memory, counted after the warm-up.

    Attributes
    ----------
    refs : ndarray (P,)
        References counted per stream.
    misses : ndarray (P,)
    miss_rates : ndarray (P,)
    combined : float
        Total misses / total references.
    """

    refs: np.ndarray
    misses: np.ndarray
    miss_rates: np.ndarray
    combined: float


def simulate_lru(
    trace: np.ndarray, owner: np.ndarray, capacity: int, *, warmup: int = 0,
    distances: np.ndarray | None = None,
) -> Simulation:
    """Count each stream's misses in a fully associative LRU memory of ``capacity`` blocks,
    ignoring the first ``warmup`` references of the merged trace."""
    if capacity < 0:
        raise ValueError(f"field 'capacity' must be >= 0, got {capacity!r}")
    d = stack_distances(trace) if distances is None else distances
    d, o = d[warmup:], np.asarray(owner)[warmup:]
    P = int(np.asarray(owner).max()) + 1
    miss = d > capacity
    refs = np.bincount(o, minlength=P)
    misses = np.bincount(o, weights=miss, minlength=P)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(refs > 0, misses / np.maximum(refs, 1), 0.0)
    return Simulation(refs=refs, misses=misses, miss_rates=rates,
                      combined=float(misses.sum() / max(refs.sum(), 1)))


def footprint_spread(
    trace: Sequence[int] | np.ndarray, lengths: Sequence[int] | None = None, *,
    skip: int = 0, name: str = "",
) -> FootprintSpread:
    """Mean and standard deviation of the distinct blocks in every window of each length.

    Parameters
    ----------
    trace : array_like of int
        Block addresses of one process.
    lengths : sequence of int, optional
        Window lengths in references, each in ``[1, n - skip]``. Default: 48 lengths
        spaced geometrically from 1 to ``n - skip``.
    skip : int
        Windows start at or after this reference (a warm-up to leave out).
    name : str
        Label of the result.

    Returns
    -------
    FootprintSpread
        Exact over all ``n - skip - k + 1`` windows of each length ``k`` (no sampling).
    """
    a = np.asarray(trace)
    if a.ndim != 1:
        raise ValueError("field 'trace' must be one-dimensional")
    n = a.size
    if isinstance(skip, bool) or not isinstance(skip, (int, np.integer)) or not 0 <= skip < n:
        raise ValueError(f"field 'skip' must be an integer in [0, {n}), got {skip!r}")
    if lengths is None:
        ks = np.unique(np.round(np.geomspace(1, n - skip, 48)).astype(np.int64))
    else:
        raw = np.asarray(lengths, dtype=float)
        if raw.ndim != 1 or np.any(~np.isfinite(raw)) or np.any(raw != np.round(raw)):
            raise ValueError(f"field 'lengths' must be whole numbers of references, got "
                             f"{np.asarray(lengths).tolist()[:5]}")
        ks = np.unique(raw.astype(np.int64))
        if ks.size == 0 or ks[0] < 1 or ks[-1] > n - skip:
            raise ValueError(f"field 'lengths' must lie in [1, {n - skip}]")
    prev = previous_use(a)
    nxt = np.full(n, n, dtype=np.int64)
    has = prev >= 0
    nxt[prev[has]] = np.flatnonzero(has)
    means, sds = [], []
    for k in ks:
        k = int(k)
        first = int(np.count_nonzero(prev[skip : skip + k] < skip))
        s = np.arange(skip, n - k, dtype=np.int64)
        step = (prev[s + k] <= s).astype(np.int64) - (nxt[s] >= s + k)
        counts = first + np.concatenate(([0], np.cumsum(step)))
        means.append(float(counts.mean()))
        sds.append(float(counts.std()))
    return FootprintSpread(k=tuple(float(v) for v in ks), sd=tuple(sds), mean=tuple(means),
                           name=name)
