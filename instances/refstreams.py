"""Synthetic memory-reference streams and parametric miss-rate curves (data only).

Streams are int64 numpy arrays of block addresses ``0 .. footprint-1``; every generator
is seeded (``numpy.random.default_rng(seed)``) and returns the same array for the same
arguments. Parametric curves are float arrays ``m[0..X]`` (non-increasing, in [0, 1]);
wrap them in ``sim.memory.model.MissRateCurve`` to use them in the model.

The paper's case study (Suh, Rudolph & Devadas, Table 1) used SPEC CPU2000 traces, which
we do not have. :data:`CASESTUDY` gives, for each of its six benchmarks, the footprint of
Table 1 and the hot/cold stream we use in its place, its two parameters fitted to the
paper's Table 2 miss rates; :func:`hot_cold_curve` is that stream's LRU curve.
:func:`stack_model` builds a stream with a given curve and no other structure.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "loop",
    "uniform",
    "hot_cold",
    "hot_scan",
    "phases",
    "knee_curve",
    "exponential_curve",
    "hot_cold_curve",
    "stack_model",
    "CASESTUDY",
    "PAGE_BYTES",
    "casestudy_stream",
]

PAGE_BYTES = 4096
"""Block size of the case study: 4 KB pages."""


def _check(footprint: int, n: int) -> None:
    if int(footprint) != footprint or footprint < 1:
        raise ValueError(f"field 'footprint' must be a positive integer, got {footprint!r}")
    if int(n) != n or n < 0:
        raise ValueError(f"field 'n' must be a non-negative integer, got {n!r}")


def _check_hot(footprint: int, n: int, hot: int, p_hot: float) -> None:
    _check(footprint, n)
    if not 1 <= hot <= footprint:
        raise ValueError(f"field 'hot' must be in [1, footprint], got {hot!r}")
    if not 0 <= p_hot <= 1:
        raise ValueError(f"field 'p_hot' must be in [0, 1], got {p_hot!r}")


def loop(footprint: int, n: int, *, start: int = 0) -> np.ndarray:
    """Sequential loop over ``footprint`` blocks: ``start, start+1, ...`` modulo footprint.

    Its LRU curve is a cliff: every reference misses below ``footprint`` blocks.
    """
    _check(footprint, n)
    return (np.arange(n, dtype=np.int64) + int(start)) % int(footprint)


def uniform(footprint: int, n: int, *, seed: int = 0) -> np.ndarray:
    """Independent uniform references within ``footprint`` blocks (``m(x) ~ 1 - x/F``)."""
    _check(footprint, n)
    return np.random.default_rng(seed).integers(0, footprint, size=n, dtype=np.int64)


def hot_cold(footprint: int, n: int, *, hot: int, p_hot: float, seed: int = 0) -> np.ndarray:
    """References to a hot set of ``hot`` blocks with probability ``p_hot``, else uniform
    over the whole footprint. The curve has a knee near ``hot`` blocks."""
    _check_hot(footprint, n, hot, p_hot)
    rng = np.random.default_rng(seed)
    is_hot = rng.random(n) < p_hot
    out = rng.integers(0, footprint, size=n, dtype=np.int64)
    out[is_hot] = rng.integers(0, hot, size=int(is_hot.sum()), dtype=np.int64)
    return out


def hot_scan(footprint: int, n: int, *, hot: int, p_hot: float, seed: int = 0) -> np.ndarray:
    """References to a hot set of ``hot`` blocks with probability ``p_hot``; the others
    sweep sequentially through the whole footprint (a streaming buffer). The curve has a
    knee near ``hot`` and a cliff at the footprint, where the sweep starts to hit."""
    _check_hot(footprint, n, hot, p_hot)
    rng = np.random.default_rng(seed)
    is_hot = rng.random(n) < p_hot
    out = np.empty(n, dtype=np.int64)
    out[is_hot] = rng.integers(0, hot, size=int(is_hot.sum()), dtype=np.int64)
    out[~is_hot] = np.arange(int((~is_hot).sum()), dtype=np.int64) % footprint
    return out


def phases(
    footprint: int, n: int, *, working_set: int, phase_length: int, seed: int = 0,
    lengths: str = "fixed",
) -> np.ndarray:
    """Working-set phases: each phase draws uniformly from a fresh random set of
    ``working_set`` blocks out of ``footprint``.

    ``lengths="fixed"``: every phase is ``phase_length`` references, so phase changes fall
    on multiples of it (and line up with time slices that divide it). ``"geometric"``:
    phase lengths are independent geometric draws with mean ``phase_length``, so the
    stream looks the same from every starting point.
    """
    _check(footprint, n)
    if not 1 <= working_set <= footprint:
        raise ValueError(f"field 'working_set' must be in [1, footprint], got {working_set!r}")
    if phase_length < 1:
        raise ValueError(f"field 'phase_length' must be >= 1, got {phase_length!r}")
    if lengths not in ("fixed", "geometric"):
        raise ValueError(f"field 'lengths' must be 'fixed' or 'geometric', got {lengths!r}")
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=np.int64)
    s = 0
    while s < n:
        size = phase_length if lengths == "fixed" else int(rng.geometric(1.0 / phase_length))
        e = min(n, s + size)
        ws = rng.choice(footprint, size=working_set, replace=False)
        out[s:e] = ws[rng.integers(0, working_set, size=e - s)]
        s = e
    return out


def knee_curve(footprint: int, knee: int, *, at_knee: float, floor: float = 0.0) -> np.ndarray:
    """Two-segment parametric curve: ``m`` falls linearly from 1 at 0 blocks to ``at_knee``
    at ``knee`` blocks, then linearly to ``floor`` at ``footprint`` blocks."""
    _check(footprint, 0)
    if not 0 < knee <= footprint:
        raise ValueError(f"field 'knee' must be in (0, footprint], got {knee!r}")
    if not 0 <= floor <= at_knee <= 1:
        raise ValueError(f"need 0 <= floor <= at_knee <= 1, got {floor!r}, {at_knee!r}")
    x = np.arange(footprint + 1, dtype=float)
    return np.interp(x, [0.0, knee, footprint], [1.0, at_knee, floor])


def exponential_curve(footprint: int, knee: float, *, floor: float = 0.0) -> np.ndarray:
    """``m(x) = floor + (1 - floor) exp(-x / knee)`` for ``x < footprint``, ``m(F) = floor``."""
    _check(footprint, 0)
    if not knee > 0:
        raise ValueError(f"field 'knee' must be positive, got {knee!r}")
    if not 0 <= floor <= 1:
        raise ValueError(f"field 'floor' must be in [0, 1], got {floor!r}")
    x = np.arange(footprint + 1, dtype=float)
    m = floor + (1 - floor) * np.exp(-x / knee)
    m[-1] = floor
    return m


def hot_cold_curve(footprint: int, hot: int, p_hot: float) -> np.ndarray:
    """LRU miss-rate curve ``m[0..F]`` of the :func:`hot_cold` stream in steady state.

    Independent references (the stream of :func:`hot_cold`): each of the ``hot`` hot
    blocks is referenced with probability ``q_h = p_hot / hot + (1 - p_hot) / F``, each
    other block with ``q_c = (1 - p_hot) / F``. LRU with ``x`` blocks is computed with the
    characteristic-time approximation (Che et al.): the time ``T`` at which
    ``hot (1 - exp(-q_h T)) + (F - hot)(1 - exp(-q_c T)) = x``, then
    ``m(x) = hot q_h exp(-q_h T) + (F - hot) q_c exp(-q_c T)``; ``m(F) = 0``. First
    references (a finite stream's cold misses) are not in it.
    """
    _check(footprint, 0)
    if not 0 < hot <= footprint:  # a real number: curves of scaled blocks need < 1 block
        raise ValueError(f"field 'hot' must be in (0, footprint], got {hot!r}")
    if not 0 <= p_hot <= 1:
        raise ValueError(f"field 'p_hot' must be in [0, 1], got {p_hot!r}")
    F, H = int(footprint), float(hot)
    qh = p_hot / H + (1 - p_hot) / F
    qc = (1 - p_hot) / F
    x = np.arange(F + 1, dtype=float)

    def filled(T: np.ndarray) -> np.ndarray:
        return H * -np.expm1(-qh * T) + (F - H) * -np.expm1(-qc * T)

    lo = np.zeros(F + 1)
    hi = np.full(F + 1, 1.0)
    while np.any(filled(hi[:-1]) < x[:-1]):
        hi = np.where(filled(hi) < x, hi * 4, hi)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        below = filled(mid) < x
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    T = 0.5 * (lo + hi)
    m = H * qh * np.exp(-qh * T) + (F - H) * qc * np.exp(-qc * T)
    m[0] = 1.0
    m[-1] = 0.0
    return np.minimum.accumulate(np.clip(m, 0.0, 1.0))


def stack_model(curve: np.ndarray, n: int, *, seed: int = 0) -> np.ndarray:
    """A stream whose LRU curve is ``curve``, with no other structure (the stack model).

    Every reference draws its LRU stack distance independently, ``P(D > x) = m(x)`` for
    ``x = 0 .. X`` (``m[X]`` is the chance of a block never seen, or, once all ``X`` blocks
    are in use, of the least recent one), and references the block at that depth of an
    LRU stack. Its LRU curve converges to ``curve`` once the stack holds ``X`` blocks,
    while phases, loops and scans of the stream the curve was measured from are gone: a
    twin with the same curve and different timing. Pure Python, about 1-3 s per 10^6
    references.
    """
    m = np.asarray(curve, dtype=float)
    X = m.size - 1
    _check(max(X, 1), n)
    if X < 1 or np.any(np.diff(m) > 1e-12) or not 0 <= m[-1] <= m[0] <= 1:
        raise ValueError("field 'curve' must be a non-increasing miss-rate curve m[0..X]")
    p = np.append(np.clip(-np.diff(m), 0.0, None), max(m[-1], 0.0))
    draws = np.random.default_rng(seed).choice(X + 1, size=int(n), p=p / p.sum())
    stack: list[int] = []
    fresh = 0
    out = np.empty(int(n), dtype=np.int64)
    for i, k in enumerate(draws.tolist()):
        if k < len(stack):
            b = stack.pop(k)
        elif fresh < X:
            b = fresh
            fresh += 1
        else:
            b = stack.pop()
        stack.insert(0, b)
        out[i] = b
    return out


CASESTUDY: dict[str, dict] = {
    # letter: benchmark, Table 1 footprint (MB), hot set (4 KB pages) and p_hot of the
    # hot/cold stream standing in for it; hot and p_hot fitted to the paper's Table 2 by
    # ``python -m sim.experiments.suh.casestudy --fit`` (sum of squared log-ratios
    # 0.234 over its 18 miss rates)
    "A": {"name": "bzip2", "mb": 6.2, "hot": 433.7, "p_hot": 0.959226},
    "B": {"name": "gcc", "mb": 22.3, "hot": 8.8, "p_hot": 0.986092},
    "C": {"name": "gzip", "mb": 76.2, "hot": 169.6, "p_hot": 0.994580},
    "D": {"name": "mcf", "mb": 9.9, "hot": 21.7, "p_hot": 0.964958},
    "E": {"name": "vortex", "mb": 83.0, "hot": 1435.6, "p_hot": 0.998465},
    "F": {"name": "vpr", "mb": 1.6, "hot": 57.2, "p_hot": 0.999318},
}
"""The six jobs of the paper's case study (Table 1 footprints, 4 KB pages). There are no
SPEC traces here: each job is a hot/cold stream (:func:`hot_cold`) whose two parameters
were fitted to the paper's Table 2 (see ``sim.experiments.suh.casestudy``)."""


def casestudy_stream(letter: str, n: int, *, seed: int = 0, block_pages: int = 1) -> np.ndarray:
    """Hot/cold stream of ``n`` references standing in for case-study job ``letter``, in
    blocks of ``block_pages`` pages (footprint and hot set divided by it, at least 1)."""
    spec = CASESTUDY[letter]
    fp = max(1, int(round(spec["mb"] * 2**20 / PAGE_BYTES / block_pages)))
    hot = int(min(fp, max(1, round(spec["hot"] / block_pages))))
    return hot_cold(fp, n, hot=hot, p_hot=spec["p_hot"], seed=seed)
