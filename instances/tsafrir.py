"""The Tsafrir-Etsion-Feitelson model of user run-time estimates, seeded and reproducible.

D. Tsafrir, Y. Etsion and D. G. Feitelson, "Modeling user runtime estimates", JSSPP 2005,
LNCS 3834, pp. 1-35. The values below are the defaults of the authors' implementation
(``est_model.cc`` / ``est_model.hh`` by D. Tsafrir, distributed as ``m_tsafrir05`` on the
Parallel Workloads Archive's "Models" page); only the model's default path is implemented
(no user-supplied bins).

The model first draws an estimate histogram for ``n`` jobs and a maximal estimate ``M``
(seconds, at least one hour; the head below needs ``M >= smallest_max_estimate()``, 95
minutes and a second, which is the default floor), then hands the estimates to the jobs:

Number of distinct estimates (bins)
    Piecewise linear in ``n`` through (0, 0), (20, 10), (200, 20), (1000, 35),
    (10000, 90), (70000, 340), (250000, 565); 565 above 250,000 jobs.
Head: the 20 most popular estimates
    Times: ``M``, then the 15 "joint" estimates found in all four traces the authors
    examined (5, 10, 15, 20, 30 min; 1, 2, 3, 4, 5, 6, 8, 10, 12, 18 h) that are below
    ``M``, completed to 20 by multiples of 200 h, 100 h, 50 h, 10 h, 5 h, 2 h, 1 h, 20 min,
    10 min, 5 min going down from ``M``. Sizes (percent of jobs) by popularity rank
    ``x = 2..20``: ``14.0491 * exp(-0.177531 x) + 0.462513``; rank 1 gets
    ``89 - sum(ranks 2..20)`` (the head holds 89% of the jobs) and is always ``M``. The
    other ranks go to the times through the table of time rank -> popularity rank of the
    four traces (SDSC-SP2, CTC, KTH, SDSC-BLUE): for each time rank in order, a
    popularity rank whose last appearance in the table is at this time rank is taken
    first (the most popular such), else the smaller of two ranks drawn from the shuffled
    pool of ranks seen so far.
Tail: the other bins
    Times ``M * (a - 1) x / (a - x)`` for ``x = i / K_tail`` (``i = 1..K_tail``) with
    ``a = 1 + 12.1039 K^-0.6026`` (``K`` the number of bins), rounded to minutes and moved
    by +30, -30, +20, -20, +10, -10 s to avoid a time already used. Sizes
    ``795.6 * x^-2.267`` for popularity ranks ``x = 21, 22, ...``, scaled to the remaining
    11%; times and sizes are matched at random.
Jobs per bin
    ``max(1, round(percent * n / 100))``, then equalised to ``n`` by the reference's
    heuristics (proportional, then +-1 per bin, then down to 1, then to 0).
Assignment
    Jobs sorted by run time (longest first) take estimates sorted longest first; job ``j``
    draws uniformly among the remaining estimates that are at least its run time, so an
    estimate is never below the run time.

numpy's ``Generator`` replaces ``lrand48``/``random_shuffle``, so a seed does not give
the C program's numbers, only the same model.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

import numpy as np

from instances.job import Job, Workload

__all__ = ["add_estimates", "estimate_distribution", "head_sizes", "n_bins",
           "smallest_max_estimate"]

MIN, HOUR = 60, 3600
TOP = 20
HEAD_PARAMS = (14.0491, -0.177531, 0.462513)
HEAD_SUM = 89.0
TAIL_PARAMS = (795.6, -2.267)
BINTIM_P, BINTIM_Q = 12.1039, -0.6026
# time rank (0 = the maximal estimate) -> popularity rank in SDSC-SP2, CTC, KTH, SDSC-BLUE
TIMRNK_TO_POPRNK = (
    (3, 1, 1, 1), (1, 3, 4, 6), (4, 4, 10, 5), (17, 2, 14, 3), (13, 12, 20, 7),
    (7, 9, 2, 2), (8, 8, 3, 18), (18, 18, 7, 19), (2, 6, 12, 4), (6, 7, 6, 11),
    (16, 11, 19, 20), (10, 20, 5, 9), (5, 16, 18, 10), (15, 5, 16, 14), (14, 14, 9, 13),
    (19, 13, 17, 16), (11, 10, 15, 15), (12, 15, 13, 17), (9, 17, 8, 8), (20, 19, 11, 12),
)
EST_JOINT = (5 * MIN, 15 * MIN, 10 * MIN, 20 * MIN, 30 * MIN, 1 * HOUR, 2 * HOUR, 3 * HOUR,
             4 * HOUR, 5 * HOUR, 6 * HOUR, 8 * HOUR, 10 * HOUR, 12 * HOUR, 18 * HOUR)
EST_ROUND = (200 * HOUR, 100 * HOUR, 50 * HOUR, 10 * HOUR, 5 * HOUR, 2 * HOUR, 1 * HOUR,
             20 * MIN, 10 * MIN, 5 * MIN)
BINNUM_LINEAR = ((0, 0), (20, 10), (200, 20), (1000, 35), (10000, 90), (70000, 340),
                 (250000, 565))


def n_bins(n_jobs: int) -> int:
    """Number of distinct estimates for ``n_jobs`` jobs (the linear model)."""
    if n_jobs > BINNUM_LINEAR[-1][0]:
        return BINNUM_LINEAR[-1][1]
    for (x0, y0), (x1, y1) in zip(BINNUM_LINEAR, BINNUM_LINEAR[1:], strict=False):
        if n_jobs <= x1:
            return y0 + round((n_jobs - x0) * (y1 - y0) / (x1 - x0))
    raise AssertionError("unreachable")


def _head_times(max_est: int) -> list[int]:
    v = [max_est] + [e for e in EST_JOINT if e < max_est]
    for mul in EST_ROUND:
        if len(v) >= TOP:
            break
        start = (max_est // mul) * mul
        est = start
        while est > 0 and len(v) < TOP:
            if est not in v:
                v.append(est)
            est -= mul
    return [v[0]] + sorted(v[1:])


@cache
def smallest_max_estimate() -> int:
    """The smallest maximal estimate (s, at least one hour) from which the head's rounding
    rules give the model's 20 most popular estimates (every larger one gives them too:
    ``tests/instances/test_tsafrir_bounds.py`` samples up to 10^9 s). Below it, from one
    hour, too few multiples of the rounding units fit under ``M``."""
    m = HOUR
    while len(_head_times(m)) != TOP:
        m += 1
    return m


def head_sizes() -> list[float]:
    """Percent of jobs of popularity ranks 1..20 (descending)."""
    a, b, c = HEAD_PARAMS
    rest = [a * math.exp(b * x) + c for x in range(2, TOP + 1)]
    return sorted([HEAD_SUM - sum(rest)] + rest, reverse=True)


def _timrnk_to_poprnk(rng: np.random.Generator) -> list[int]:
    bound: dict[int, int] = {}
    for ttr in range(TOP - 1, -1, -1):  # the largest time rank at which a rank appears
        for pr in TIMRNK_TO_POPRNK[ttr]:
            bound.setdefault(pr, ttr)
    mapping: list[int] = []
    chosen: set[int] = set()
    pool: list[int] = []
    for ttr in range(TOP):
        pool.extend(pr for pr in TIMRNK_TO_POPRNK[ttr] if pr not in chosen)
        pool = [pool[i] for i in rng.permutation(len(pool))]
        poprnk = 1 if ttr == 0 else -1
        if poprnk == -1:
            for pr in range(1, TOP + 1):
                if bound[pr] <= ttr and pr not in chosen:
                    poprnk = pr
                    break
        if poprnk == -1:
            for _ in range(2):  # favour popular ranks: the smaller of two draws
                cand = pool[int(rng.integers(len(pool)))]
                if poprnk == -1 or cand < poprnk:
                    poprnk = cand
        mapping.append(poprnk)
        chosen.add(poprnk)
        pool = [p for p in pool if p != poprnk]
    return mapping


def _adjust(time2j: dict[int, int], n_jobs: int) -> dict[int, int]:
    """Equalise the job counts to ``n_jobs`` (``adjust_njobs`` of the reference)."""
    total = sum(time2j.values())
    diff, sign = abs(n_jobs - total), (1 if n_jobs > total else -1)
    attempt = 0
    while diff:
        times = sorted(time2j, key=lambda t: -time2j[t])  # biggest bins first
        f = diff / sum(time2j.values()) if sum(time2j.values()) else 0.0
        cur = diff
        for t in times:
            nj = time2j[t]
            if nj == 0:
                continue
            adjust = (math.ceil(f * nj), 1, nj - 1, nj)[min(attempt, 3)]
            if sign < 0:
                adjust = min(adjust, nj)
                if adjust == nj and attempt < 3:
                    adjust -= 1
            adjust = min(adjust, cur)
            time2j[t] += sign * adjust
            cur -= adjust
            if cur == 0:
                break
        if cur == diff and attempt >= 3:
            raise ValueError(f"cannot spread {n_jobs} jobs over the estimate bins")
        diff = cur
        attempt += 1
    return time2j


def estimate_distribution(n_jobs: int, max_estimate: int,
                          rng: np.random.Generator) -> dict[int, int]:
    """The model's estimate histogram: estimate (seconds) -> number of jobs (sum ``n_jobs``).
    """
    if max_estimate < HOUR:
        raise ValueError(f"max_estimate must be at least one hour (3600 s), got {max_estimate}")
    binnum = n_bins(n_jobs)
    a = 1.0 + BINTIM_P * binnum**BINTIM_Q if binnum > 0 else 2.0
    times = _head_times(max_estimate)
    if len(times) != TOP:
        raise ValueError(
            f"max_estimate {max_estimate} s: the model's rounding rules give only "
            f"{len(times)} of its {TOP} most popular estimates below it; give at least "
            f"{smallest_max_estimate()} s")
    sizes = head_sizes()
    mapping = _timrnk_to_poprnk(rng)
    time2p = {t: sizes[mapping[i] - 1] for i, t in enumerate(times)}
    k_tail = binnum - TOP
    tail_t: list[int] = []
    for i in range(1, k_tail + 1):
        x = i / k_tail
        sec = int(round(((a - 1) * x) / (a - x) * max_estimate / 60.0) * 60)
        for off in (0, 30, -30, 20, -20, 10, -10):
            s = sec + off
            if s not in tail_t and s not in time2p and 0 < s < max_estimate:
                tail_t.append(s)
                break
    if tail_t:
        ta, tb = TAIL_PARAMS
        raw = [ta * (TOP + 1 + i) ** tb for i in range(len(tail_t))]
        tail_p = sorted((p * (100.0 - HEAD_SUM) / sum(raw) for p in raw), reverse=True)
        tail_t = sorted(tail_t)
        tt = [tail_t[i] for i in rng.permutation(len(tail_t))]
        tp = [tail_p[i] for i in rng.permutation(len(tail_p))]
        time2p.update(zip(tt, tp, strict=True))
    time2j = {t: max(1, round(p * n_jobs / 100.0)) for t, p in sorted(time2p.items())}
    return _adjust(time2j, n_jobs)


def add_estimates(workload: Workload, seed: int, *, max_estimate: int | None = None,
                  name: str | None = None) -> Workload:
    """The workload with every requested time replaced by a model estimate.

    Parameters
    ----------
    workload : Workload
        Any workload (its run times are kept).
    seed : int
        Seed of the ``numpy.random.Generator``; the same seed gives the same estimates.
    max_estimate : int, optional
        The system's maximal estimate in seconds (at least 3600, and at least
        :func:`smallest_max_estimate` for the model's head of 20 estimates); default the
        longest run time, at least :func:`smallest_max_estimate` (5701 s). A run time
        above it is an error (the reference
        truncates the run time; schedsearch never changes a run time).
    name : str, optional
        Workload name; default the original name with ``+tsafrir``.

    Returns
    -------
    Workload
        Same jobs with ``requested`` from the model: every estimate >= the run time and
        >= 1 s.

    Raises
    ------
    ValueError
        A run time above ``max_estimate``, a ``max_estimate`` too small for the head's 20
        estimates, or more long jobs than the model's long
        estimates (the reference's "FAILED" case; raise ``max_estimate``).
    """
    jobs = workload.jobs
    n = len(jobs)
    run = np.fromiter((j.runtime for j in jobs), dtype=np.int64, count=n)
    longest = int(run.max()) if n else 0
    m = max(longest, smallest_max_estimate()) if max_estimate is None else int(max_estimate)
    if m < HOUR:
        raise ValueError(f"max_estimate must be at least one hour (3600 s), got {m}")
    if longest > m:
        raise ValueError(f"max_estimate {m} s is below the longest run time {longest} s")
    rng = np.random.default_rng(seed)
    dist = estimate_distribution(n, m, rng)
    ests = np.repeat(np.array(sorted(dist), dtype=np.int64),
                     [dist[t] for t in sorted(dist)])[::-1].copy()
    order = np.argsort(-run, kind="stable")
    srun = run[order]
    bad = np.flatnonzero(srun > ests)
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"the model's estimates cannot cover the run times: the {k + 1}-th "
                         f"longest job runs {srun[k]} s, its estimate would be {ests[k]} s; "
                         "give a larger max_estimate")
    out = np.empty(n, dtype=np.int64)
    hi = 0
    for j in range(n):
        hi = max(hi, j)
        while hi < n - 1 and srun[j] <= ests[hi + 1]:
            hi += 1
        k = int(rng.integers(j, hi + 1))
        out[order[j]] = ests[k]
        ests[k], ests[j] = ests[j], ests[k]
    new = tuple(Job(j.id, j.submit, j.runtime, max(int(e), 1), j.demand, j.user, j.group,
                    j.wait) for j, e in zip(jobs, out, strict=True))
    header = dict(workload.header)
    notes = list(header.get("Note", [])) if isinstance(header.get("Note", []), list) else [
        header["Note"]]
    notes.append(f"requested times from the Tsafrir-Etsion-Feitelson 2005 estimate model "
                 f"(instances.tsafrir.add_estimates, seed={seed}, max_estimate={m})")
    header["Note"] = notes
    return replace(workload, jobs=new, header=header,
                   name=name or f"{workload.name}+tsafrir")
