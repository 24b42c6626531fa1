"""The load calibration of Leinberger, Karypis & Kumar's K-resource workloads (spec
1.4.3): the Poisson arrival rate at which FF-EASY's time-averaged queue holds a target
number of jobs, found by simulating the workloads of :mod:`instances.kresource`.

Method: bisection on ``log(lam)`` until FF-EASY's time-averaged
number of waiting jobs over the arrival window (AMB-1.15 ``queue_window="arrivals"``:
from the first to the last submit) is within ``tol`` (5%) of the target. Near
saturation the queue is not continuous in the rate (one arrival moved by a second can
flip the schedule); when the bisection bracket collapses, rates are drawn (seeded)
between the closest ones seen on either side of the tolerance band.

Stationarity (``stationarity=s``, 0.15 in ``schedsearch generate kresource``): the
arrival window is cut at its midpoint in time and the time-averaged number of waiting
jobs (every job, whenever it arrived) is taken over each half, ``q1`` and ``q2``. The
queue is *stationary at the target Q* when ``|q1/Q - 1| <= s``, ``|q2/Q - 1| <= s`` and
``|q2/q1 - 1| <= s``: a queue that grows through the run (near saturation the mean can
hit the target while the second half holds twice the first) fails it. With it, a rate is
accepted only when both the mean and the halves pass; a rate whose mean is on target but
whose queue grows counts as too high. When no rate passes within ``max_iter``
simulations the calibration refuses (ValueError naming the closest halves seen).

Warm-up (``warmup=f``, a fraction of the jobs, 0 by default): the measured window starts at
the submit time of job ``floor(f * jobs)`` (in arrival order) instead of the first
submit, so that the queue's fill from an empty machine is not averaged in; the mean and
both halves are taken over ``[that submit, last submit]``, every job waiting in it
counted whichever time it arrived.

Engine (``engine``): the baseline simulations run on the Python engine or on the compiled
one (:mod:`sim.batch.fast.run`); both give the same start times, hence the same rate,
queue and history.

Times are integer seconds; rates are jobs per second.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from instances.kresource import KResourceSpec, generate, with_rate
from sim.batch.machine import ENGINES, simulate

__all__ = ["Calibration", "calibrate", "queue_average", "queue_halves", "is_stationary"]


def _window_start(submit: np.ndarray, skip: int) -> int:
    """Submit time (seconds) of the job of rank ``skip`` in arrival order."""
    if not 0 <= skip < len(submit):
        raise ValueError(f"warm-up of {skip} jobs out of range for {len(submit)} jobs")
    return int(submit.min()) if skip == 0 else int(np.partition(submit, skip)[skip])


def queue_average(start: np.ndarray, submit: np.ndarray, window: str = "arrivals",
                  skip: int = 0) -> float:
    """Time-averaged number of waiting jobs.

    Parameters
    ----------
    start, submit : arrays of int
        Start and submit times (seconds), one per job.
    window : {"arrivals", "all"}
        Average over ``[first submit, last submit]`` (AMB-1.15 default) or over
        ``[first submit, last start]``.
    skip : int
        Warm-up: the window starts at the submit of the job of rank ``skip`` in arrival
        order (0: the first submit); jobs that arrived before it still count while they
        wait.
    """
    if window not in ("arrivals", "all"):
        raise ValueError(f"queue_average: window must be 'arrivals' or 'all', got {window!r}")
    t0 = _window_start(submit, skip)
    t1 = int(submit.max()) if window == "arrivals" else int(start.max())
    if t1 <= t0:
        return 0.0
    t = np.concatenate([submit, start])
    d = np.concatenate([np.ones(len(submit)), -np.ones(len(start))])
    order = np.lexsort((-d, t))  # arrivals before starts at the same instant
    t, d = t[order], d[order]
    q = np.cumsum(d)
    tt = np.clip(t, t0, t1)
    dt = np.diff(np.append(tt, t1))
    return float((q * dt).sum() / (t1 - t0))


def queue_halves(start: np.ndarray, submit: np.ndarray, skip: int = 0,
                 ) -> tuple[float, float]:
    """Time-averaged number of waiting jobs over each half of the arrival window.

    The window ``[first submit, last submit]`` (``skip`` > 0: from the submit of the job of
    rank ``skip``, as in :func:`queue_average`) is cut at its midpoint (seconds); every
    job waiting at a time counts, whichever half it arrived in.

    Returns
    -------
    (q1, q2) : float
        Mean queue length (jobs) over the first and the second half.
    """
    t0, t1 = _window_start(submit, skip), int(submit.max())
    if t1 <= t0:
        return 0.0, 0.0
    tm = (t0 + t1) / 2
    t = np.concatenate([submit, start]).astype(float)
    d = np.concatenate([np.ones(len(submit)), -np.ones(len(start))])
    order = np.lexsort((-d, t))
    t, d = t[order], d[order]
    q = np.cumsum(d)

    def avg(a: float, b: float) -> float:
        tt = np.clip(t, a, b)
        return float((q * np.diff(np.append(tt, b))).sum() / (b - a))

    return avg(t0, tm), avg(tm, t1)


def is_stationary(q1: float, q2: float, target: float, s: float) -> bool:
    """The stationarity criterion (module docstring): each half's mean queue within
    ``s`` (relative) of ``target`` and of the other half's."""
    if q1 <= 0:
        return False
    return abs(q1 / target - 1) <= s and abs(q2 / target - 1) <= s and abs(q2 / q1 - 1) <= s


@dataclass(frozen=True)
class Calibration:
    """Outcome of :func:`calibrate` (recorded beside every experiment).

    Attributes
    ----------
    target : float
        Wanted time-averaged queue length (jobs).
    rate : float
        Arrival rate found, jobs per second.
    queue : float
        FF-EASY's achieved time-averaged queue length at ``rate``.
    iterations : int
        Simulations run by the bisection.
    history : list of (rate, queue)
    first_half, second_half : float
        Time-averaged queue length over each half of the arrival window
        (:func:`queue_halves`).
    stationarity : float or None
        The tolerance ``s`` of the stationarity criterion enforced, None when only the
        mean was calibrated.
    stationary : bool
        Whether the halves pass the criterion at ``s = 0.15`` (or at ``stationarity``
        when it is given), enforced or not.
    warmup : float
        Fraction of the jobs whose arrival interval was left out of the measured window.
    engine : str
        The engine of the baseline simulations ("python" or "compiled").
    """

    target: float
    rate: float
    queue: float
    iterations: int
    history: list
    first_half: float
    second_half: float
    stationarity: float | None = None
    stationary: bool = False
    warmup: float = 0.0
    engine: str = "python"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def warmup_jobs(jobs: int, warmup: float) -> int:
    """Number of warm-up jobs (``floor(warmup * jobs)``) of a run of ``jobs`` jobs."""
    return int(math.floor(warmup * jobs))


def _ff_easy_queue(spec: KResourceSpec, policy_factory: Any, window: str = "arrivals",
                   warmup: float = 0.0, engine: str = "python",
                   ) -> tuple[float, float, float]:
    """Mean queue and its two halves (jobs) of the baseline at ``spec``'s rate."""
    w = generate(spec)
    s = simulate(w, policy_factory(), engine=engine)
    submit = w.columns().submit
    skip = warmup_jobs(len(submit), warmup)
    q = queue_average(s.start, submit, window, skip)
    a, b = queue_halves(s.start, submit, skip)
    return q, a, b


def calibrate(spec: KResourceSpec, target: float, *, tol: float = 0.05,
              max_iter: int = 60, policy_factory: Any = None,
              window: str = "arrivals", memo: dict | None = None,
              stationarity: float | None = None, warmup: float = 0.0,
              engine: str = "python") -> Calibration:
    """Bisect the Poisson rate until FF-EASY's time-averaged queue length is within
    ``tol`` (relative) of ``target`` jobs.

    ``policy_factory`` builds the baseline (default ``heuristics.backfill.EASY``, first
    fit); ``window`` is the averaging window of :func:`queue_average` (AMB-1.15). The
    halves reported (``first_half``, ``second_half``) are the queue averages over each
    half of the arrival window (:func:`queue_halves`). ``stationarity`` (a relative
    tolerance, e.g. 0.15) also requires them to pass :func:`is_stationary`; None (the
    default, the reading of the committed Figures 2/3) calibrates the mean only.
    ``warmup`` (a fraction of ``spec.jobs`` in [0, 0.9]) starts the measured window at the
    arrival of that many jobs (module docstring). ``engine`` ("python" or "compiled")
    runs the baseline simulations; the result does not depend on it.

    ``memo`` (optional, a dict the caller keeps between calls) holds the outcome of every
    baseline simulation run, keyed by the spec without its rate, the window, the warm-up
    and the rate (not the engine, which gives the same schedule):
    calibrating the same spec to several targets (64, 128, 256) then reuses the
    simulations the bisections share (the first bracket and often the first midpoints
    are the same rates) instead of rerunning them. The result is identical with or
    without it (the queue length at a rate is deterministic); ``iterations`` and
    ``history`` still count every rate the bisection visited. Only used with the
    default baseline (``policy_factory=None``).

    Raises
    ------
    ValueError
        When no rate reaches the target (the target is beyond what ``spec.jobs`` jobs
        can queue, or the bisection does not converge within ``max_iter``), naming the
        target and the closest queue length seen; with ``stationarity``, when no rate
        gives a stationary queue, naming the closest halves seen.
    """
    if not (isinstance(target, (int, float)) and target > 0):
        raise ValueError(f"calibrate: field 'queue' must be > 0, got {target!r}")
    if stationarity is not None and not 0 < stationarity < 1:
        raise ValueError(f"calibrate: field 'stationarity' must be in (0, 1), "
                         f"got {stationarity!r}")
    if isinstance(warmup, bool) or not isinstance(warmup, (int, float)) \
            or not 0 <= warmup <= 0.9:
        raise ValueError(f"calibrate: field 'warmup' must be in [0, 0.9], got {warmup!r}")
    if engine not in ENGINES:
        raise ValueError(f"calibrate: field 'engine' must be 'python' or 'compiled', "
                         f"got {engine!r}")
    if policy_factory is None:
        from heuristics.backfill import EASY

        policy_factory = EASY
    else:
        memo = None  # the memo is keyed for the default baseline only
    hist: list[tuple[float, float]] = []
    halves: dict[float, tuple[float, float]] = {}
    spec_key = tuple(asdict(replace(spec, rate=1.0)).values())

    def q_at(rate: float) -> tuple[float, float, float]:
        key = (spec_key, window, warmup, rate)
        if memo is not None and key in memo:
            out = memo[key]
        else:
            out = _ff_easy_queue(with_rate(spec, rate), policy_factory, window, warmup,
                                 engine)
            if memo is not None:
                memo[key] = out
        hist.append((rate, out[0]))
        halves[rate] = (out[1], out[2])
        return out

    # offered work per second at rate 1: mean over jobs of max_k demand fraction * runtime
    w = generate(with_rate(spec, 1.0))
    cap = np.array(w.capacity, float)
    work = np.mean([max(np.array(j.demand) / cap) * j.runtime for j in w.jobs])
    lo, hi = 0.5 / work, 2.0 / work  # load 0.5 and 2 in the most used resource
    s_chk = 0.15 if stationarity is None else stationarity

    def ok(out: tuple[float, float, float]) -> bool:
        if abs(out[0] - target) > tol * target:
            return False
        return stationarity is None or is_stationary(out[1], out[2], target, stationarity)

    def too_high(out: tuple[float, float, float]) -> bool:
        """Above the band, or on it with a queue that grows (stationarity enforced)."""
        return out[0] > target * (1 + tol) or (
            stationarity is not None and out[0] >= target * (1 - tol) and out[2] > out[1])

    qlo = q_at(lo)
    while qlo[0] > target and len(hist) < max_iter:
        hi, lo = lo, lo / 2
        qlo = q_at(lo)
    qhi = q_at(hi)
    while qhi[0] < target and len(hist) < max_iter:
        if hi * work > 1e3:
            break
        lo, hi = hi, hi * 2
        qhi = q_at(hi)
    if qhi[0] < target:
        raise ValueError(
            f"calibrate: queue length {target} unreachable with {spec.jobs} jobs (K={spec.K}, "
            f"{spec.dist}, {spec.scaling}): at most {max(q for _, q in hist):.1f} seen up to "
            f"rate {hi:.4g}/s; use more jobs or a lower target")
    last = qlo if ok(qlo) else qhi if ok(qhi) else None
    rate = lo if last is qlo else hi
    rng = np.random.default_rng([spec.seed, 7919])
    while last is None and len(hist) < max_iter:
        if hi / lo - 1 > 1e-3:
            mid = math.sqrt(lo * hi)
        else:
            # Near saturation the queue is not a continuous function of the rate (moving
            # one arrival by a second can flip the schedule): once the bracket has
            # collapsed, draw rates between the closest ones seen on either side whose
            # queue is off by more than the tolerance (recorded in the history).
            seen = [(r, (q, *halves[r])) for r, q in hist]
            below = [r for r, o in seen if not ok(o) and not too_high(o)]
            above = [r for r, o in seen if too_high(o)]
            a_, b_ = max(below, default=min(r for r, _ in hist)), \
                min(above, default=max(r for r, _ in hist))
            if b_ <= a_:
                a_, b_ = min(a_, b_), max(a_, b_)
            a_, b_ = a_ * 0.98, b_ * 1.02
            mid = float(math.exp(rng.uniform(math.log(a_), math.log(b_))))
        qm = q_at(mid)
        if ok(qm):
            last, rate = qm, mid
            break
        if not too_high(qm):
            lo = max(lo, mid) if mid < hi else lo
        else:
            hi = min(hi, mid) if mid > lo else hi
    if last is None and stationarity is not None:
        on = [(r, q) for r, q in hist if abs(q - target) <= tol * target] or hist
        r_, q_ = min(on, key=lambda x: max(abs(halves[x[0]][0] / target - 1),
                                            abs(halves[x[0]][1] / target - 1)))
        h1, h2 = halves[r_]
        raise ValueError(
            f"calibrate: no stationary queue of {target:g} jobs (each half of the arrival "
            f"window within {stationarity:.0%} of the target and of the other) after "
            f"{len(hist)} simulations with {spec.jobs} jobs (K={spec.K}, {spec.dist}, "
            f"{spec.scaling}); closest: mean {q_:.1f}, halves {h1:.1f} / {h2:.1f} at rate "
            f"{r_:.4g}/s; use more jobs (--jobs) or a lower queue")
    if last is None:
        best = min(hist, key=lambda x: abs(x[1] - target))
        raise ValueError(
            f"calibrate: no rate within {tol:.0%} of queue length {target} after {len(hist)} "
            f"simulations (closest {best[1]:.1f} at rate {best[0]:.4g}/s)")
    return Calibration(target=float(target), rate=rate, queue=last[0], iterations=len(hist),
                       history=hist, first_half=last[1], second_half=last[2],
                       stationarity=stationarity,
                       stationary=is_stationary(last[1], last[2], target, s_chk),
                       warmup=float(warmup), engine=engine)
