"""The Lublin-Feitelson workload model of rigid parallel jobs, seeded and reproducible.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", J. Parallel Distrib. Comput. 63(11):1105-1122, 2003. The
parameter values are those of the authors' reference implementation ``m_lublin99.c``
(Parallel Workloads Archive, "Models" page, model ``lublin99``) with job types on
(``INCLUDE_JOBS_TYPE 1``): two job classes, interactive and batch, each with its own
parameters, whose arrival streams are merged.

Per class (interactive / batch; the C constants ``*_ACTIVE`` / ``*_BATCH``):

Size (processors)
    With probability ``serial_prob`` (0.1541 / 0.2927) a serial job (1 processor).
    Otherwise ``par`` is drawn from a two-stage uniform: with probability ``uprob``
    (0.705 / 0.875) uniform on ``[ulow, umed]``, else uniform on ``[umed, uhi]``, with
    ``ulow`` = 1 / 1.2, ``umed`` = 3 / 5, ``uhi`` = 5.5 / 7 for 128 processors. With
    probability ``pow2_prob`` (0.625 / 0.6686) ``par`` is rounded to an integer (a
    power-of-two size); the size is ``round(2**par)``.
Run time (seconds)
    ``ln(runtime)`` is hyper-gamma: with probability ``p = pa * size + pb`` (clipped to
    [0, 1]) gamma(``a1``, ``b1``), else gamma(``a2``, ``b2``) (shape, scale), with
    ``a1, b1`` = 3.8351, 0.6605 / 6.57, 0.823; ``a2, b2`` = 7.073, 0.6856 / 639.1, 0.0156;
    ``pa, pb`` = -0.0118, 0.9156 / -0.003, 0.6986. A draw above 12 (``TOO_MUCH_TIME``,
    e^12 s, about 1.9 days) is drawn again; ``runtime = floor(exp(draw))``.
Arrivals (seconds)
    The day has 48 half-hour buckets; bucket ``idx = (i - 1) mod 48`` for
    ``i = 11 .. 58`` (``CYCLIC_DAY_START = 11``) gets the weight
    ``F(i + 0.5) - F(i - 0.5)`` of the gamma(``anum``, ``bnum``) distribution function
    ``F`` (``anum, bnum`` = 8.9186, 3.6680 / 6.1271, 5.2740), weights normalised to mean 1.
    Each inter-arrival draws ``g`` from gamma(``aarr * arar``, ``barr``) (``aarr, barr,
    arar`` = 6.5510, 0.6621, 0.9797 / 6.0415, 0.8531, 1.0519; a draw above 13 is drawn
    again) and gains ``exp(g) / 1800`` points; it pays each bucket's weight in points to
    pass that bucket, and the remainder of points places the arrival inside the bucket it
    stops in. Busy buckets (large weight) therefore hold more arrivals: the daily cycle.
    The simulation starts at midnight (``START 0``). The next job is of the class whose
    next arrival comes first (batch on a tie only when strictly earlier, as in the C code).

Machine size: the reference values are for 128 processors (``uhi`` = log2 128 = 7). For
``procs`` P, ``uhi`` is ``log2 P`` (batch) and ``log2 P - 1.5`` (interactive) and ``umed``
is ``uhi - 2`` / ``uhi - 2.5``, the reference's offsets (the source recommends
``umed`` in ``[uhi - 3.5, uhi - 1.5]``); ``umed`` is never below ``ulow``. A size above P
(possible when P is not a power of two) is drawn again.

Differences from the C program, none of which changes a distribution: numpy's gamma and
uniform generators replace the program's ``drand48``-based ones; arrival times accumulate
in floating point and are floored once (the program truncates each step); the user's
requested time, which the model does not describe, is the run time (at least 1 s; add
estimates with :func:`instances.tsafrir.add_estimates`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from instances.job import Job, Workload
from instances.swf import MAX_INT

__all__ = ["BATCH", "INTERACTIVE", "PARAMS", "ClassParams", "LublinSample", "daily_weights",
           "gamma_cdf", "generate", "sample"]

INTERACTIVE = 0  #: class index of interactive jobs (the C code's ACTIVE)
BATCH = 1  #: class index of batch jobs
BUCKETS = 48
SECONDS_IN_BUCKET = 86400 // BUCKETS
CYCLIC_DAY_START = 11
TOO_MUCH_TIME = 12.0
TOO_MUCH_ARRIVE_TIME = 13.0
REFERENCE_PROCS = 128
#: most jobs :func:`sample` draws (the K-resource generator's limit; the largest archive
#: logs hold well under a million jobs)
MAX_JOBS = 2_000_000
#: largest machine: the SWF reader's bound on every integer field (``instances.swf.MAX_INT``)
MAX_PROCS = MAX_INT


@dataclass(frozen=True)
class ClassParams:
    """The model's parameters for one job class (names as in ``m_lublin99.c``)."""

    serial_prob: float
    pow2_prob: float
    ulow: float
    umed: float  # for 128 processors
    uhi: float  # for 128 processors
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


#: Parameters per class, ``PARAMS[INTERACTIVE]`` and ``PARAMS[BATCH]``.
PARAMS: tuple[ClassParams, ClassParams] = (
    ClassParams(serial_prob=0.1541, pow2_prob=0.625, ulow=1.0, umed=3.0, uhi=5.5,
                uprob=0.705, a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118,
                pb=0.9156, aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797),
    ClassParams(serial_prob=0.2927, pow2_prob=0.6686, ulow=1.2, umed=5.0, uhi=7.0,
                uprob=0.875, a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003,
                pb=0.6986, aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519),
)


def gamma_cdf(x: float, shape: float, scale: float) -> float:
    """Distribution function of gamma(``shape``, ``scale``) at ``x`` (regularised lower
    incomplete gamma by its power series, which converges for every ``x >= 0``)."""
    if x <= 0:
        return 0.0
    z = x / scale
    term = total = 1.0 / shape
    a = shape
    for _ in range(10_000):
        a += 1.0
        term *= z / a
        total += term
        if term < total * 1e-16:
            break
    return min(1.0, total * math.exp(-z + shape * math.log(z) - math.lgamma(shape)))


def daily_weights(anum: float, bnum: float) -> np.ndarray:
    """The 48 half-hour bucket weights of the daily cycle (mean 1), bucket 0 = 00:00-00:30."""
    w = np.zeros(BUCKETS)
    for i in range(CYCLIC_DAY_START, BUCKETS + CYCLIC_DAY_START):
        w[(i - 1) % BUCKETS] = gamma_cdf(i + 0.5, anum, bnum) - gamma_cdf(i - 0.5, anum, bnum)
    return w / w.mean()


def size_params(c: ClassParams, procs: int) -> tuple[float, float, float]:
    """``(ulow, umed, uhi)`` of class ``c`` for a machine of ``procs`` processors."""
    shift = math.log2(procs) - math.log2(REFERENCE_PROCS)
    uhi = c.uhi + shift
    umed = max(c.umed + shift, c.ulow)
    return c.ulow, umed, max(uhi, umed)


@dataclass(frozen=True)
class LublinSample:
    """Raw draws of the model, in arrival order (arrays of length n)."""

    submit: np.ndarray  # int64 seconds from midnight of day 0
    procs: np.ndarray  # int64
    runtime: np.ndarray  # int64 seconds
    job_class: np.ndarray  # int8: INTERACTIVE or BATCH


class _Arrivals:
    """One class's arrival stream (``calc_next_arrive`` of the reference)."""

    def __init__(self, c: ClassParams, rng: np.random.Generator) -> None:
        self.w = daily_weights(c.anum, c.bnum)
        self.shape, self.scale = c.aarr * c.arar, c.barr
        self.rng = rng
        self.bucket = 0  # START = 0: midnight
        self.points = 0.0
        self.reminder = 0.0
        self.time = 0.0
        self.advance()

    def advance(self) -> None:
        g = self.rng.gamma(self.shape, self.scale)
        while g > TOO_MUCH_ARRIVE_TIME:
            g = self.rng.gamma(self.shape, self.scale)
        self.points += math.exp(g) / SECONDS_IN_BUCKET
        nxt = 0.0
        w, b = self.w, self.bucket
        while self.points > w[b]:
            self.points -= w[b]
            b = (b + 1) % BUCKETS
            nxt += SECONDS_IN_BUCKET
        new_reminder = self.points / w[b]
        nxt += SECONDS_IN_BUCKET * (new_reminder - self.reminder)
        self.reminder = new_reminder
        self.time += nxt
        self.bucket = b


def sample(n_jobs: int, procs: int, seed: int) -> LublinSample:
    """Draw ``n_jobs`` jobs (at most ``MAX_JOBS``) of the model for a machine of ``procs``
    processors (``8 .. MAX_PROCS``).

    One ``numpy.random.Generator`` (PCG64 seeded by ``seed``) drives every draw, so the
    same arguments give the same arrays on every platform numpy supports.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or not 0 <= n_jobs <= MAX_JOBS:
        raise ValueError(f"n_jobs must be an integer in [0, {MAX_JOBS}], got {n_jobs!r}")
    if isinstance(procs, bool) or not isinstance(procs, int) or not 8 <= procs <= MAX_PROCS:
        raise ValueError(f"procs must be an integer in [8, 2**53] (the model's size parameters "
                         f"need log2(procs) - 2.5 >= 1; the SWF reader takes at most 2**53), "
                         f"got {procs!r}")
    rng = np.random.default_rng(seed)
    streams = [_Arrivals(PARAMS[INTERACTIVE], rng), _Arrivals(PARAMS[BATCH], rng)]
    sizes = [size_params(c, procs) for c in PARAMS]
    submit = np.empty(n_jobs, dtype=np.int64)
    nodes = np.empty(n_jobs, dtype=np.int64)
    run = np.empty(n_jobs, dtype=np.int64)
    kind = np.empty(n_jobs, dtype=np.int8)
    for i in range(n_jobs):
        t = BATCH if streams[BATCH].time < streams[INTERACTIVE].time else INTERACTIVE
        c = PARAMS[t]
        submit[i] = math.floor(streams[t].time)
        streams[t].advance()
        ulow, umed, uhi = sizes[t]
        while True:  # size
            u = rng.random()
            if u <= c.serial_prob:
                size = 1
                break
            lo, hi = (ulow, umed) if rng.random() <= c.uprob else (umed, uhi)
            par = rng.uniform(lo, hi)
            if u <= c.serial_prob + c.pow2_prob:
                par = math.floor(par + 0.5)
            size = math.floor(2.0**par + 0.5)
            if size <= procs:
                break
        p = min(1.0, max(0.0, c.pa * size + c.pb))
        while True:  # run time
            if rng.random() <= p:
                hg = rng.gamma(c.a1, c.b1)
            else:
                hg = rng.gamma(c.a2, c.b2)
            if hg <= TOO_MUCH_TIME:
                break
        nodes[i], run[i], kind[i] = size, math.floor(math.exp(hg)), t
    return LublinSample(submit, nodes, run, kind)


def generate(n_jobs: int, procs: int, seed: int, *, name: str | None = None) -> Workload:
    """A workload of ``n_jobs`` jobs of the Lublin-Feitelson model on ``procs`` processors.

    Parameters
    ----------
    n_jobs : int
        Number of jobs; ids ``1 .. n_jobs`` in arrival order.
    procs : int
        Machine size (>= 8 processors).
    seed : int
        Seed of the ``numpy.random.Generator``; the same seed gives the same workload.
    name : str, optional
        Workload name; default ``lublin_<n_jobs>_<procs>_s<seed>``.

    Returns
    -------
    Workload
        K = 1; submit times in seconds from midnight of day 0; requested time = run time
        (at least 1 s). The header says which model and seed produced it, so
        ``instances.swf.write_swf`` records it.
    """
    s = sample(n_jobs, procs, seed)
    jobs = tuple(Job(i + 1, int(s.submit[i]), int(s.runtime[i]), max(int(s.runtime[i]), 1),
                     (int(s.procs[i]),)) for i in range(n_jobs))
    header = {
        "Computer": f"Lublin-Feitelson model (JPDC 2003), {procs} processors",
        "Note": [f"generated by schedsearch (instances.lublin.generate) with n_jobs={n_jobs}, "
                 f"procs={procs}, seed={seed}",
                 "parameters of the reference implementation m_lublin99.c, job types on; "
                 "requested time = run time"],
    }
    return Workload(jobs, (procs,), name or f"lublin_{n_jobs}_{procs}_s{seed}", header)
