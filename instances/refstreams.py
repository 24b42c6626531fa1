"""Synthetic memory-reference streams and parametric miss-rate curves (data only).

Streams are int64 numpy arrays of block addresses ``0 .. footprint-1``; every generator
is seeded (``numpy.random.default_rng(seed)``) and returns the same array for the same
arguments. Parametric curves are float arrays ``m[0..X]`` (non-increasing, in [0, 1]);
wrap them in ``sim.memory.model.MissRateCurve`` to use them in the model.

The paper's case study (Suh, Rudolph & Devadas, Table 1) used SPEC CPU2000 traces, which
we do not have. :data:`CASESTUDY` gives, for each of its six benchmarks, the footprint of
Table 1 and the synthetic stream we use in its place (our choice, not the paper's).
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


CASESTUDY: dict[str, dict] = {
    # letter: benchmark, Table 1 footprint in MB, synthetic stream standing in for it
    "A": {"name": "bzip2", "mb": 6.2, "kind": "hot_cold", "hot_frac": 0.3, "p_hot": 0.9},
    "B": {"name": "gcc", "mb": 22.3, "kind": "phases", "ws_frac": 0.2, "phase_per_page": 8},
    "C": {"name": "gzip", "mb": 76.2, "kind": "hot_scan", "hot_frac": 0.02, "p_hot": 0.95},
    "D": {"name": "mcf", "mb": 9.9, "kind": "uniform"},
    "E": {"name": "vortex", "mb": 83.0, "kind": "hot_cold", "hot_frac": 0.1, "p_hot": 0.8},
    "F": {"name": "vpr", "mb": 1.6, "kind": "hot_cold", "hot_frac": 0.25, "p_hot": 0.8},
}
"""The six jobs of the paper's case study (Table 1 footprints, 4 KB pages). The stream
kinds and parameters are ours: there are no SPEC traces here."""


def casestudy_stream(letter: str, n: int, *, seed: int = 0) -> np.ndarray:
    """Synthetic stream of ``n`` references standing in for case-study job ``letter``."""
    spec = CASESTUDY[letter]
    fp = int(round(spec["mb"] * 2**20 / PAGE_BYTES))
    kind = spec["kind"]
    if kind == "uniform":
        return uniform(fp, n, seed=seed)
    if kind == "hot_cold":
        hot = max(1, int(round(spec["hot_frac"] * fp)))
        return hot_cold(fp, n, hot=hot, p_hot=spec["p_hot"], seed=seed)
    if kind == "hot_scan":
        hot = max(1, int(round(spec["hot_frac"] * fp)))
        return hot_scan(fp, n, hot=hot, p_hot=spec["p_hot"], seed=seed)
    if kind == "phases":
        ws = max(1, int(round(spec["ws_frac"] * fp)))
        return phases(fp, n, working_set=ws, phase_length=spec["phase_per_page"] * ws, seed=seed)
    raise ValueError(f"CASESTUDY[{letter!r}]: unknown kind {kind!r}")
