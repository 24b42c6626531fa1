"""Analytical memory model of Suh, Rudolph & Devadas (JSSPP'01), one implementation.

Units: memory and footprints in *blocks* (pages of the memory being modelled; 4 KB pages
in the paper's case study), time in *references* unless a function says otherwise.

Symbols (the paper's names)
---------------------------
m(x)
    Miss-rate curve: probability that a reference of a process misses when the process
    runs alone in a fully associative LRU memory of ``x`` blocks. :class:`MissRateCurve`
    holds ``m(0), m(1), ..., m(X)`` where ``X`` is the footprint (number of distinct
    blocks the process touches); ``m(X)`` is the residual miss rate (cold misses of a
    finite trace, or 0).
x(k) (eq. 1)
    Footprint after ``k`` references from a cold start, ``k = int_0^{x(k)} dx / m(x)``:
    every miss brings one block in, so ``dx/dk = m(x)``. On the block grid ``m`` is taken
    constant on ``[i, i+1)``, so ``k(x)`` is the cumulative sum of ``1/m(i)`` and ``x(k)``
    is its piecewise-linear inverse (:func:`footprint`, :func:`refs_to_footprint`). The
    footprint stops growing at ``X`` (or at the first ``i`` with ``m(i) = 0``).
Eq. 2
    ``P`` processes with reference rates ``r_p`` share ``C`` blocks. After ``K`` references
    in total, process ``p`` made ``alpha_p K`` of them, ``alpha_p = r_p / sum r``; in the
    steady state the memory is full: ``sum_p x_p(alpha_p K) = C``. :func:`steady_state`
    solves for ``K`` by bisection (``sum_p x_p`` is non-decreasing in ``K``); when all
    footprints fit (``sum_p X_p <= C``) every process keeps its whole footprint.
Eq. 3
    Combined miss rate ``m_comb = sum_p alpha_p m_p(x_p(alpha_p K))``. Between grid points
    ``m_p`` is interpolated linearly (the share ``x_p`` is fractional).
Shared memory
    Memory shared by the processes (libraries, the kernel) is one more conceptual process
    with its own curve and rate: pass it as one more curve (``shared=``).
Eq. 4
    Processor idle time ``= (total misses) * l + sum_s (P - N(s)) T(s)`` (:func:`idle_time`).

Time sharing (section 4.2, :func:`round_robin`)
-----------------------------------------------
``P`` processes run in turn, process ``p`` for ``n_p`` references per slice, in one LRU
memory of ``C`` blocks. Derivation from eq. 1 and LRU order:

1. In a window of ``k`` of its own references a process touches ``x(k)`` distinct blocks
   (the cold-start footprint of eq. 1 is the expected number of distinct blocks in any
   window of ``k`` references, because a reference is new to the window exactly when its
   stack distance exceeds the number of distinct blocks seen so far).
2. Take process ``p`` ``j`` references into its slice. Order its blocks by its own
   recency: the ``d``-th most recent one was last used about ``k_p(d)`` of its own
   references ago (``k_p`` is eq. 1 inverted). If ``k_p(d) <= j`` it was used in this
   slice; otherwise ``w = ceil((k_p(d) - j) / n_p)`` slices of each other process ran since
   its last use, and they touched ``O_p(w) = sum_{q != p} x_q(w n_q)`` distinct blocks,
   all more recent than it. Its global LRU depth is ``d + O_p(w)``; it is resident iff
   that depth is at most ``C``.
3. The depth grows with ``d``, so the resident blocks of ``p`` are its ``c_p(j)`` most
   recent ones, ``c_p(j) = max{d : d + O_p(w(d, j)) <= C}``, and a reference at offset
   ``j`` misses with probability ``m_p(c_p(j))``. Averaging over the offsets of the slice
   gives the misses per slice.

Limits: for long slices ``c_p(j)`` is the footprint grown since the slice began (a cold
start each slice, then ``m_p(C)``); for short slices ``w ~ (k_p(d) - j) / n_p`` and the
condition becomes ``sum_q x_q(alpha_q K) <= C`` with ``K = k_p(d) / alpha_p``, i.e. eq. 2.
Between the two the blocks of a process are evicted by the others but the slice is too
short to amortise reloading them, so the miss rate rises before it falls (Figure 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "MissRateCurve",
    "footprint",
    "refs_to_footprint",
    "miss_rate",
    "steady_state",
    "SteadyState",
    "idle_time",
    "round_robin",
    "RoundRobin",
]


@dataclass(frozen=True)
class MissRateCurve:
    """Miss-rate curve ``m(x)``, ``x = 0..X`` blocks, of one process in isolation.

    Parameters
    ----------
    m : tuple of float
        ``m[x]`` = miss probability per reference with ``x`` blocks of fully associative
        LRU memory. Non-increasing, each in [0, 1]; at least one value. ``X = len(m) - 1``
        is the footprint in blocks.
    name : str
        Label (for example the benchmark it models).

    Raises
    ------
    ValueError
        Naming the field ``m`` and the offending index when a value is not finite, is
        outside [0, 1], or is larger than its predecessor.
    """

    m: tuple[float, ...]
    name: str = ""
    _arr: np.ndarray = field(default=None, repr=False, compare=False, hash=False)  # type: ignore
    _k: np.ndarray = field(default=None, repr=False, compare=False, hash=False)  # type: ignore

    def __post_init__(self) -> None:
        try:
            arr = np.asarray(self.m, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"MissRateCurve {self.name!r}: field 'm' must be numbers") from None
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"MissRateCurve {self.name!r}: field 'm' must be a non-empty list")
        bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0) | (arr > 1))
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"MissRateCurve {self.name!r}: field 'm'[{i}] = {float(arr[i])!r} is not in [0, 1]")
        up = np.flatnonzero(np.diff(arr) > 0)
        if up.size:
            i = int(up[0]) + 1
            raise ValueError(
                f"MissRateCurve {self.name!r}: field 'm' is not non-increasing: "
                f"m[{i}] = {float(arr[i])!r} > m[{i - 1}] = {float(arr[i - 1])!r}")
        arr.setflags(write=False)
        object.__setattr__(self, "m", tuple(float(v) for v in arr))
        object.__setattr__(self, "_arr", arr)
        # eq. 1 on the block grid: k(i) = sum_{j < i} 1 / m(j) up to saturation.
        zero = np.flatnonzero(arr[:-1] == 0)
        sat = int(zero[0]) if zero.size else arr.size - 1
        k = np.zeros(sat + 1)
        if sat:
            k[1:] = np.cumsum(1.0 / arr[:sat])
        k.setflags(write=False)
        object.__setattr__(self, "_k", k)

    @property
    def array(self) -> np.ndarray:
        """``m`` as a read-only float array."""
        return self._arr

    @property
    def size(self) -> int:
        """Footprint ``X`` in blocks (``len(m) - 1``)."""
        return self._arr.size - 1

    @property
    def saturation(self) -> int:
        """Largest footprint eq. 1 reaches: ``X``, or the first ``i`` with ``m(i) = 0``."""
        return self._k.size - 1

    @property
    def warmup(self) -> np.ndarray:
        """``k(i)``, references from a cold start to a footprint of ``i`` blocks (eq. 1)."""
        return self._k

    @classmethod
    def from_points(cls, points: Sequence[Sequence[float]], name: str = "") -> MissRateCurve:
        """Curve linearly interpolated on the block grid between ``(x, m)`` knots.

        ``x`` must be integers, strictly increasing, starting at 0; the last knot is the
        footprint ``X``.
        """
        pts = np.asarray(points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] == 0:
            raise ValueError(f"MissRateCurve {name!r}: field 'points' must be [[x, m], ...]")
        xs = pts[:, 0]
        if xs[0] != 0 or np.any(xs != np.round(xs)) or np.any(np.diff(xs) <= 0):
            raise ValueError(
                f"MissRateCurve {name!r}: field 'points' x must be integers strictly "
                f"increasing from 0, got {xs[:5].tolist()}...")
        grid = np.arange(int(xs[-1]) + 1)
        return cls(tuple(np.interp(grid, xs, pts[:, 1])), name=name)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "m": list(self.m)}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "curve") -> MissRateCurve:
        """Read ``{"m": [...]}`` or ``{"points": [[x, m], ...]}`` (plus optional ``name``)."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object with 'm' or 'points'")
        name = str(data.get("name", ""))
        try:
            if "m" in data:
                return cls(tuple(data["m"]), name=name)
            if "points" in data:
                return cls.from_points(data["points"], name=name)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        raise ValueError(f"{where}: missing field 'm' (or 'points')")


def footprint(curve: MissRateCurve, k: Any) -> np.ndarray:
    """Eq. 1: footprint ``x(k)`` in blocks after ``k`` references from a cold start.

    Vectorised over ``k`` (references, >= 0). Piecewise linear; saturates at
    ``curve.saturation``.
    """
    kk = curve.warmup
    return np.interp(np.asarray(k, dtype=float), kk, np.arange(kk.size, dtype=float))


def refs_to_footprint(curve: MissRateCurve, x: Any) -> np.ndarray:
    """Inverse of eq. 1: references ``k(x)`` from a cold start to reach ``x`` blocks.

    ``inf`` for ``x`` beyond the saturation footprint.
    """
    kk = curve.warmup
    xx = np.asarray(x, dtype=float)
    out = np.interp(xx, np.arange(kk.size, dtype=float), kk)
    return np.where(xx > kk.size - 1, np.inf, out)


def miss_rate(curve: MissRateCurve, x: Any) -> np.ndarray:
    """``m(x)`` at fractional sizes ``x`` (blocks), linear between grid points.

    Beyond the footprint ``X`` the rate stays ``m(X)``.
    """
    a = curve.array
    return np.interp(np.asarray(x, dtype=float), np.arange(a.size, dtype=float), a)


@dataclass(frozen=True)
class SteadyState:
    """Eq. 2/3 for ``G`` groups of processes sharing memory (arrays of shape ``(G, J)``).

    Attributes
    ----------
    K : ndarray (G,)
        Total references at which the memory is full (``inf`` when everything fits).
    x : ndarray (G, J)
        Memory share ``x_p(alpha_p K)`` in blocks (0 for non-members).
    m : ndarray (G, J)
        Miss rate ``m_p(x_p)`` of each member (0 for non-members).
    combined : ndarray (G,)
        Eq. 3, ``sum_p alpha_p m_p``.
    """

    K: np.ndarray
    x: np.ndarray
    m: np.ndarray
    combined: np.ndarray


def steady_state(
    curves: Sequence[MissRateCurve],
    rates: Any,
    capacity: float,
    *,
    shared: tuple[MissRateCurve, float] | None = None,
    iterations: int = 60,
) -> SteadyState:
    """Eqs. 2 and 3: steady state of processes sharing ``capacity`` blocks of LRU memory.

    Parameters
    ----------
    curves : sequence of MissRateCurve
        The ``J`` processes that may take part.
    rates : array_like, shape (J,) or (G, J)
        Reference rates (any unit; only ratios matter). Row ``g`` describes group ``g``;
        a zero rate means the process is not in that group. Vectorised over groups.
    capacity : float
        Memory ``C`` in blocks, > 0.
    shared : (MissRateCurve, float), optional
        Shared memory as one more conceptual process with its curve and rate; it is
        added to every group as the last column.
    iterations : int
        Bisection steps on ``K`` (each halves the bracket); a final secant step inside
        the last bracket is exact when both ends lie on one linear piece of eq. 1.

    Returns
    -------
    SteadyState
        With a leading group axis even when ``rates`` is one-dimensional.
    """
    if not capacity > 0:
        raise ValueError(f"field 'capacity' must be positive, got {capacity!r}")
    curves = list(curves)
    r = np.atleast_2d(np.asarray(rates, dtype=float))
    if shared is not None:
        curves.append(shared[0])
        r = np.hstack([r, np.full((r.shape[0], 1), float(shared[1]))])
    if r.shape[1] != len(curves):
        raise ValueError(f"field 'rates' has {r.shape[1]} columns for {len(curves)} curves")
    if np.any(~np.isfinite(r)) or np.any(r < 0):
        raise ValueError("field 'rates' must be finite and >= 0")
    tot = r.sum(axis=1)
    if np.any(tot <= 0):
        raise ValueError("every group needs a positive total reference rate")
    alpha = r / tot[:, None]
    G, J = alpha.shape
    members = alpha > 0

    cols = [(j, np.flatnonzero(members[:, j])) for j in range(J)]
    cols = [(j, rows, alpha[rows, j], curves[j].warmup, np.arange(curves[j].warmup.size,
                                                                  dtype=float))
            for j, rows in cols if rows.size]

    def shares(K: np.ndarray) -> np.ndarray:
        x = np.zeros((G, J))
        for j, rows, a, kk, grid in cols:
            x[rows, j] = np.interp(a * K[rows], kk, grid)  # eq. 1, as in footprint()
        return x

    # upper end of the bracket: every member saturated
    sat_k = np.array([c.warmup[-1] for c in curves])
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(members, sat_k[None, :] / np.where(members, alpha, 1.0), 0.0)
    hi = need.max(axis=1) * (1 + 1e-12) + 1.0
    full = shares(hi).sum(axis=1)
    fits = full <= capacity
    lo = np.zeros(G)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        over = shares(mid).sum(axis=1) > capacity
        hi = np.where(over, mid, hi)
        lo = np.where(over, lo, mid)
    f_lo, f_hi = shares(lo).sum(axis=1), shares(hi).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip((capacity - f_lo) / (f_hi - f_lo), 0.0, 1.0)
    K = np.where(f_hi > f_lo, lo + np.nan_to_num(t) * (hi - lo), lo)
    K = np.where(fits, np.inf, K)
    x = shares(np.where(fits, hi, K))
    m = np.zeros((G, J))
    for j, c in enumerate(curves):
        rows = members[:, j]
        if rows.any():
            m[rows, j] = miss_rate(c, x[rows, j])
    combined = (alpha * m).sum(axis=1)
    return SteadyState(K=K, x=x, m=m, combined=combined)


def idle_time(misses: Any, latency: float, processors: int, used: Any, slice_length: Any) -> float:
    """Eq. 4: processor idle time ``misses * l + sum_s (P - N(s)) T(s)``.

    Parameters
    ----------
    misses : float or array_like
        Total misses (summed).
    latency : float
        Miss penalty ``l`` in seconds.
    processors : int
        ``P``.
    used : array_like
        ``N(s)``, processors busy in each slice.
    slice_length : float or array_like
        ``T(s)`` in seconds (one value for all slices or one per slice).

    Returns
    -------
    float
        Idle processor-seconds.
    """
    n = np.asarray(used, dtype=float)
    t = np.broadcast_to(np.asarray(slice_length, dtype=float), n.shape)
    return float(np.sum(misses) * latency + np.sum((processors - n) * t))


@dataclass(frozen=True)
class RoundRobin:
    """Result of :func:`round_robin`.

    Attributes
    ----------
    resident : ndarray (P, offsets)
        ``c_p(j)``: blocks of process ``p`` resident at each sampled offset of its slice.
    miss_rates : ndarray (P,)
        Average miss rate of each process over its slice.
    combined : float
        ``sum_p n_p miss_rate_p / sum_p n_p``.
    """

    resident: np.ndarray
    miss_rates: np.ndarray
    combined: float


def round_robin(
    curves: Sequence[MissRateCurve],
    slice_refs: Any,
    capacity: int,
    *,
    offsets: int = 64,
) -> RoundRobin:
    """Section 4.2: miss rates of processes taking turns in slices of ``n_p`` references.

    See the module docstring for the derivation.

    Parameters
    ----------
    curves : sequence of MissRateCurve
    slice_refs : array_like (P,)
        References each process makes per slice, > 0.
    capacity : int
        Memory ``C`` in blocks, > 0.
    offsets : int
        Offsets ``j`` sampled (midpoints of equal parts of the slice).
    """
    if not capacity > 0:
        raise ValueError(f"field 'capacity' must be positive, got {capacity!r}")
    n = np.asarray(slice_refs, dtype=float)
    if n.shape != (len(curves),) or np.any(~(n > 0)):
        raise ValueError("field 'slice_refs' needs one positive value per curve")
    C = int(capacity)
    P = len(curves)
    res = np.zeros((P, offsets))
    rates = np.zeros(P)
    for p, cp in enumerate(curves):
        dmax = min(cp.saturation, C)
        d = np.arange(1, dmax + 1, dtype=float)
        kd = cp.warmup[1 : dmax + 1]
        j = (np.arange(offsets) + 0.5) * n[p] / offsets
        gap = kd[None, :] - j[:, None]
        w = np.where(gap > 0, np.ceil(np.maximum(gap, 0) / n[p]), 0.0)
        other = np.zeros_like(w)
        for q, cq in enumerate(curves):
            if q != p:
                other += footprint(cq, w * n[q])
        ok = d[None, :] + other <= C
        # depth is non-decreasing in d, so the resident blocks are a prefix
        c = ok.sum(axis=1).astype(float)
        res[p] = c
        rates[p] = float(np.mean(miss_rate(cp, c)))
    combined = float(np.sum(n * rates) / np.sum(n))
    return RoundRobin(resident=res, miss_rates=rates, combined=combined)

