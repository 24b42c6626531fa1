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
    is its piecewise-linear inverse (:func:`footprint_after`, :func:`refs_to_footprint`). The
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

Fluctuations (our extension, ``fluctuations=True``)
---------------------------------------------------
Eq. 2 read per reference is a sharp threshold. A reference of ``p`` with own stack
distance ``d`` (``P(d) = m_p(d-1) - m_p(d)``) was last used ``k_p(d)`` own references
ago; meanwhile each other process made ``n_q = alpha_q / alpha_p k_p(d)`` references and
touched ``x_q(n_q)`` blocks, so the reference hits iff ``d + sum_q x_q(n_q) <= C``. The
left side grows with ``d``, so the hits are the references with ``d`` up to the share
``x_p`` of eq. 2 and the miss rate is ``m_p(x_p)``: eqs. 2-3 exactly. In a real run both
the reuse time and the others' footprints fluctuate around these means. For a smooth
curve that hardly matters (errors on both sides cancel), but a curve with a cliff (a
loop: its whole footprint has one reuse distance) sits entirely on one side of the
threshold, and the miss rate is set by how often the fluctuation crosses it.

The extension keeps the means and adds the spread:

- Eq. 1 read as a pure birth process: with ``i`` blocks touched, a reference brings a
  new one with probability ``m(i)``, so the references needed to reach ``d`` blocks are a
  sum of geometric waits, mean ``k(d)`` (eq. 1) and variance
  ``V(d) = sum_{i<d} (1 - m(i)) / m(i)^2`` (:attr:`MissRateCurve.warmup_var`).
- The footprint of ``q`` in a window of ``n`` references then has standard deviation
  ``m_q(x) sqrt(V_q(x))`` at ``x = x_q(n)`` (delta method). This is exact in the limit
  for streams without memory of their own (independent references); streams with phases
  or scans vary far more, and a spread measured from the trace
  (:func:`sim.memory.lru.footprint_spread`, a :class:`FootprintSpread`) can be passed instead.
- The depth ``d + S`` of the reference is taken Gaussian given ``d``: mean as above,
  variance ``sum_q sd_q(n_q)^2 + (sum_q m_q(x_q) alpha_q / alpha_p)^2 V_p(d)`` (the
  second term carries the reuse-time spread through the others' footprint growth). The
  reference misses with probability ``P(d + S > C)``, with a half-block continuity
  correction, and ``m_p = sum_d P(d) P(miss | d) + m_p(X)``.

In the time-sharing model the same spreads enter through ``w``: the reuse time is
averaged over 12 Gauss-Hermite nodes of its Gaussian, each node giving ``w`` and a
Gaussian depth ``d + O_p(w)``. With every spread zero both reduce to the models above
(up to the half-block correction). The interleaving is assumed even (the reference
counts ``n_q`` are not random), as in :func:`sim.memory.lru.interleave`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "MissRateCurve",
    "footprint_after",
    "refs_to_footprint",
    "miss_rate",
    "steady_state",
    "SteadyState",
    "idle_time",
    "round_robin",
    "RoundRobin",
    "FootprintSpread",
    "window_spread",
]


MAX_BLOCKS = 2**22
"""Largest footprint a curve given by knots (``points``) may reach, in blocks (4 Mi blocks:
its block grid takes about 200 MB)."""


def _numbers(values: Any, name: str, what: str) -> None:
    """Refuse an entry of ``values`` that is not a number: a bool or a numeric string would
    otherwise be read by NumPy as 1.0 or as the number it spells."""
    if not isinstance(values, (list, tuple, np.ndarray)):
        return  # the array check names the shape
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
            raise ValueError(f"MissRateCurve {name!r}: field '{what}' holds {v!r} at "
                             f"[{i}], not a number")


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
    _kvar: np.ndarray = field(default=None, repr=False, compare=False, hash=False)  # type: ignore

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
        v = np.zeros(sat + 1)
        if sat:
            v[1:] = np.cumsum((1.0 - arr[:sat]) / arr[:sat] ** 2)
        k.setflags(write=False)
        v.setflags(write=False)
        object.__setattr__(self, "_k", k)
        object.__setattr__(self, "_kvar", v)

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

    @property
    def warmup_var(self) -> np.ndarray:
        """``V(i)``, variance of the references needed to reach ``i`` blocks, eq. 1 read as
        a pure birth process: ``sum_{j<i} (1 - m(j)) / m(j)^2`` (references squared)."""
        return self._kvar

    @classmethod
    def from_points(cls, points: Sequence[Sequence[float]], name: str = "") -> MissRateCurve:
        """Curve linearly interpolated on the block grid between ``(x, m)`` knots.

        ``x`` must be integers, strictly increasing, starting at 0; the last knot is the
        footprint ``X``.
        """
        if not isinstance(points, (list, tuple)) or not all(
                isinstance(p, (list, tuple)) for p in points):
            raise ValueError(f"MissRateCurve {name!r}: field 'points' must be [[x, m], ...]")
        for k, p in enumerate(points):
            _numbers(p, name, f"points[{k}]")
        pts = np.asarray(points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] == 0:
            raise ValueError(f"MissRateCurve {name!r}: field 'points' must be [[x, m], ...]")
        xs = pts[:, 0]
        if xs[0] != 0 or np.any(xs != np.round(xs)) or np.any(np.diff(xs) <= 0):
            raise ValueError(
                f"MissRateCurve {name!r}: field 'points' x must be integers strictly "
                f"increasing from 0, got {xs[:5].tolist()}...")
        if xs[-1] > MAX_BLOCKS:  # the grid below would not fit in memory
            raise ValueError(f"MissRateCurve {name!r}: field 'points' x must be at most "
                             f"{MAX_BLOCKS} blocks, got {xs[-1]:g}")
        grid = np.arange(int(xs[-1]) + 1)
        return cls(tuple(np.interp(grid, xs, pts[:, 1])), name=name)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "m": list(self.m)}

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "curve") -> MissRateCurve:
        """Read ``{"m": [...]}`` or ``{"points": [[x, m], ...]}`` (plus optional ``name``)."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected an object with 'm' or 'points'")
        unknown = sorted(str(k) for k in data if k not in ("m", "points", "name"))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown[:5]}; known: ['m', 'name', "
                             f"'points']")
        if "m" in data and "points" in data:
            raise ValueError(f"{where}: give 'm' or 'points', not both")
        name = data.get("name", "")
        if not isinstance(name, str):
            raise ValueError(f"{where}: field 'name' must be a string, got "
                             f"{type(name).__name__}")
        try:
            if "m" in data:
                if not isinstance(data["m"], (list, tuple)):
                    raise ValueError(f"MissRateCurve {name!r}: field 'm' must be a list")
                _numbers(data["m"], name, "m")
                return cls(tuple(data["m"]), name=name)
            if "points" in data:
                return cls.from_points(data["points"], name=name)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        raise ValueError(f"{where}: missing field 'm' (or 'points')")


def footprint_after(curve: MissRateCurve, k: Any) -> np.ndarray:
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
class FootprintSpread:
    """Spread of a process's footprint in a window: the standard deviation of the number of
    distinct blocks it touches in a window of ``k`` of its references.

    Used by the fluctuation extension (module docstring) in place of the spread derived
    from the miss-rate curve. :func:`sim.memory.lru.footprint_spread` measures one from a trace.

    Parameters
    ----------
    k : tuple of float
        Window lengths in references, strictly increasing, ``>= 0``.
    sd : tuple of float
        Standard deviation in blocks at each length, finite and ``>= 0``. Linear between
        lengths, held constant beyond the last one.
    mean : tuple of float, optional
        Mean distinct blocks at each length (for reference; the model takes the mean from
        eq. 1).
    name : str
    """

    k: tuple[float, ...]
    sd: tuple[float, ...]
    mean: tuple[float, ...] = ()
    name: str = ""

    def __post_init__(self) -> None:
        k = np.asarray(self.k, dtype=float)
        sd = np.asarray(self.sd, dtype=float)
        who = f"FootprintSpread {self.name!r}"
        if k.ndim != 1 or k.size == 0 or sd.shape != k.shape:
            raise ValueError(f"{who}: fields 'k' and 'sd' must be non-empty lists of one length")
        if np.any(~np.isfinite(k)) or k[0] < 0 or np.any(np.diff(k) <= 0):
            raise ValueError(f"{who}: field 'k' must be finite, >= 0 and strictly increasing")
        bad = np.flatnonzero(~np.isfinite(sd) | (sd < 0))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"{who}: field 'sd'[{i}] = {float(sd[i])!r} is not finite and >= 0")
        if self.mean:
            mean = np.asarray(self.mean, dtype=float)
            if mean.shape != k.shape or np.any(~np.isfinite(mean)) or np.any(mean < 0):
                raise ValueError(f"{who}: field 'mean' must hold one finite value >= 0 "
                                 "per length")
        object.__setattr__(self, "k", tuple(float(v) for v in k))
        object.__setattr__(self, "sd", tuple(float(v) for v in sd))
        object.__setattr__(self, "mean", tuple(float(v) for v in self.mean))

    def __call__(self, n: Any) -> np.ndarray:
        """Standard deviation (blocks) at window lengths ``n`` (references)."""
        return np.interp(np.asarray(n, dtype=float), self.k, self.sd)


def window_spread(curve: MissRateCurve, n: Any) -> np.ndarray:
    """Footprint spread implied by the curve alone: ``m(x) sqrt(V(x))`` at ``x = x(n)``.

    Eq. 1 read as a pure birth process (module docstring), delta method. Vectorised over
    window lengths ``n`` (references); blocks.
    """
    return _curve_spread_at(curve, footprint_after(curve, n))


def _curve_spread_at(curve: MissRateCurve, x: np.ndarray) -> np.ndarray:
    """:func:`window_spread` at a footprint ``x`` already computed by eq. 1."""
    v = np.interp(x, np.arange(curve.saturation + 1, dtype=float), curve.warmup_var)
    return miss_rate(curve, x) * np.sqrt(v)


def _normal_cdf(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF (Abramowitz & Stegun 7.1.26, absolute error < 1.5e-7)."""
    z = np.asarray(z, dtype=float)
    a = np.abs(z) / np.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
            + 0.254829592) * t
    erf = 1.0 - poly * np.exp(-a * a)
    return np.where(z >= 0, 0.5 * (1.0 + erf), 0.5 * (1.0 - erf))


def _fits(slack: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``P(S <= slack)`` for a Gaussian excess ``S`` of mean 0 and deviation ``sd``; a step
    where ``sd`` is 0."""
    safe = np.where(sd > 0, sd, 1.0)
    return np.where(sd > 0, _normal_cdf(slack / safe), (slack >= 0).astype(float))


Spread = FootprintSpread | None


def _window(curve: MissRateCurve, spread: Spread, n: np.ndarray) -> tuple[np.ndarray, ...]:
    """Mean footprint (eq. 1) and its spread in windows of ``n`` references: from the curve,
    or measured when ``spread`` is given."""
    x = footprint_after(curve, n)
    return x, (_curve_spread_at(curve, x) if spread is None else spread(n))


def _own_distances(curve: MissRateCurve, capacity: float) -> tuple[np.ndarray, ...]:
    """Own stack distances ``d = 1..D`` that can hit, their probabilities, the rest that
    always misses, and the reuse time (mean, variance) of eq. 1 read as a birth process."""
    a = curve.array
    dmax = int(min(curve.saturation, np.floor(capacity)))
    d = np.arange(1, dmax + 1, dtype=float)
    pd = a[:dmax] - a[1 : dmax + 1]
    return d, pd, float(a[dmax]), curve.warmup[1 : dmax + 1], curve.warmup_var[1 : dmax + 1]


def _fluctuating_miss_rates(
    curves: Sequence[MissRateCurve], alpha: np.ndarray, capacity: float,
    spreads: Sequence[Spread],
) -> np.ndarray:
    """Per-process miss rates of one group under eq. 2 with fluctuations (docstring)."""
    out = np.zeros(len(curves))
    members = np.flatnonzero(alpha > 0)
    for p in members:
        d, pd, rest, kd, vd = _own_distances(curves[p], capacity)
        mean = d.copy()
        var = np.zeros_like(d)
        growth = np.zeros_like(d)
        for q in members:
            if q == p:
                continue
            xq, sd = _window(curves[q], spreads[q], alpha[q] / alpha[p] * kd)
            mean += xq
            var += sd**2
            growth += miss_rate(curves[q], xq) * alpha[q] / alpha[p]
        var += growth**2 * vd
        hit = _fits(capacity + 0.5 - mean, np.sqrt(var))
        out[p] = float(np.sum(pd * (1.0 - hit)) + rest)
    return out


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
        Miss rate ``m_p(x_p)`` of each member (0 for non-members); with fluctuations the
        rate of the extension (module docstring), while ``x`` stays the mean share.
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
    fluctuations: bool = False,
    spreads: Sequence[Spread] | None = None,
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
    fluctuations : bool
        ``False`` (default): the paper's eqs. 2-3. ``True``: our extension with the spread
        of reuse times and footprints (module docstring); costs ``O(J^2 C)`` per group.
    spreads : sequence of FootprintSpread or None, optional
        With ``fluctuations``, a measured footprint spread per curve of ``curves`` (None
        entries, and the shared process, use the spread implied by the curve).

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
    if spreads is not None and not fluctuations:
        raise ValueError("field 'spreads' is only used with fluctuations=True")
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
            x[rows, j] = np.interp(a * K[rows], kk, grid)  # eq. 1, as in footprint_after()
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
    if fluctuations:
        spread_list = _spread_list(spreads, len(curves) - (shared is not None), len(curves))
        for g in range(G):
            m[g] = _fluctuating_miss_rates(curves, alpha[g], float(capacity), spread_list)
    combined = (alpha * m).sum(axis=1)
    return SteadyState(K=K, x=x, m=m, combined=combined)


def _spread_list(spreads: Sequence[Spread] | None, given: int, total: int) -> list[Spread]:
    if spreads is None:
        return [None] * total
    if isinstance(spreads, FootprintSpread) or not isinstance(spreads, Sequence):
        raise ValueError("field 'spreads' must be a list with one FootprintSpread or None "
                         "per curve")
    spreads = list(spreads)
    if len(spreads) != given:
        raise ValueError(f"field 'spreads' has {len(spreads)} entries for {given} curves")
    for i, sp in enumerate(spreads):
        if sp is not None and not isinstance(sp, FootprintSpread):
            raise ValueError(f"field 'spreads'[{i}] must be a FootprintSpread or None")
    return spreads + [None] * (total - given)


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
    fluctuations: bool = False,
    spreads: Sequence[Spread] | None = None,
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
    fluctuations : bool
        ``True``: our extension with the spread of reuse times and footprints (module
        docstring); ``resident`` then holds the expected number of resident blocks.
    spreads : sequence of FootprintSpread or None, optional
        With ``fluctuations``, a measured footprint spread per curve (None: implied by
        the curve).
    """
    if not capacity > 0:
        raise ValueError(f"field 'capacity' must be positive, got {capacity!r}")
    n = np.asarray(slice_refs, dtype=float)
    if n.shape != (len(curves),) or np.any(~(n > 0)):
        raise ValueError("field 'slice_refs' needs one positive value per curve")
    if spreads is not None and not fluctuations:
        raise ValueError("field 'spreads' is only used with fluctuations=True")
    C = int(capacity)
    P = len(curves)
    res = np.zeros((P, offsets))
    rates = np.zeros(P)
    spread_list = _spread_list(spreads, P, P) if fluctuations else []
    for p in range(P):
        if fluctuations:
            res[p], rates[p] = _fluctuating_slice(curves, n, C, p, offsets, spread_list)
        else:
            res[p], rates[p] = _mean_slice(curves, n, C, p, offsets)
    combined = float(np.sum(n * rates) / np.sum(n))
    return RoundRobin(resident=res, miss_rates=rates, combined=combined)


def _turns_since(k: np.ndarray, n_p: float, offsets: int) -> np.ndarray:
    """``w``: slices of every other process since a use ``k`` own references ago, seen from
    each sampled offset ``j`` of the current slice (shape ``(offsets, k.size)``)."""
    j = (np.arange(offsets) + 0.5) * n_p / offsets
    gap = k[None, :] - j[:, None]
    return np.where(gap > 0, np.ceil(np.maximum(gap, 0.0) / n_p), 0.0)


def _mean_slice(
    curves: Sequence[MissRateCurve], n: np.ndarray, capacity: int, p: int, offsets: int,
) -> tuple[np.ndarray, float]:
    """Resident blocks ``c_p(j)`` per offset and the miss rate of process ``p`` over its
    slice, section 4.2 as derived in the module docstring."""
    d, _, _, kd, _ = _own_distances(curves[p], capacity)
    w = _turns_since(kd, n[p], offsets)
    other = np.zeros_like(w)
    for q, cq in enumerate(curves):
        if q != p:
            other += footprint_after(cq, w * n[q])
    # depth is non-decreasing in d, so the resident blocks are a prefix
    c = (d[None, :] + other <= capacity).sum(axis=1).astype(float)
    return c, float(np.mean(miss_rate(curves[p], c)))


_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(12)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def _fluctuating_slice(
    curves: Sequence[MissRateCurve], n: np.ndarray, capacity: int, p: int, offsets: int,
    spreads: Sequence[Spread],
) -> tuple[np.ndarray, float]:
    """Resident blocks per offset and the miss rate of process ``p`` over its slice, with
    the reuse time averaged over Gauss-Hermite nodes and a Gaussian footprint of the
    others (module docstring)."""
    d, pd, rest, kd, vd = _own_distances(curves[p], capacity)
    hit = np.zeros((offsets, d.size))
    for z, weight in zip(_NODES, _WEIGHTS, strict=True):
        k = np.maximum(kd + z * np.sqrt(vd), d)  # d blocks take at least d references
        w = _turns_since(k, n[p], offsets)
        mean = np.broadcast_to(d, w.shape).copy()
        var = np.zeros_like(w)
        for q, cq in enumerate(curves):
            if q != p:
                xq, sd = _window(cq, spreads[q], w * n[q])
                mean += xq
                var += sd**2
        hit += weight * _fits(capacity + 0.5 - mean, np.sqrt(var))
    resident = hit.sum(axis=1)  # the d-th most recent block is resident w.p. hit[:, d]
    miss = (pd[None, :] * (1.0 - hit)).sum(axis=1) + rest
    return resident, float(np.mean(miss))
