"""Seeded synthetic batch workloads for tests and scaling benchmarks.

A simple generator, not a published workload model (for a model-based log see the
bundled ``lublin_256`` trace). Each job draws, from one ``numpy.random.Generator``:

- processors: log-uniform on ``[1, P]``, rounded to a power of two with probability
  ``p_pow2`` (parallel logs are dominated by powers of two);
- other resources ``k >= 1``: uniform integers on ``[1, capacity[k]]``;
- actual runtime: lognormal with mean ``mean_runtime`` seconds and log-standard
  deviation ``runtime_sigma``, rounded, at least 1 s;
- requested time: with probability ``p_exact`` the runtime; with probability
  ``p_underestimate`` a value in ``[1, runtime)`` (the job will be killed at its
  request); otherwise ``ceil(runtime * f)`` with ``f`` uniform on ``[1, max_overestimate]``;
- interarrival times: exponential, scaled so that the offered load on the processors,
  ``sum(procs * min(runtime, requested)) / (P * span)``, is ``load`` in expectation
  (``span`` is the time from the first to the last arrival); submit times are the
  floored cumulative sums, in integer seconds, first job at 0.
"""

from __future__ import annotations

import math

import numpy as np

from instances.job import Job, Workload

__all__ = ["offered_load", "random_workload"]


def _check_prob(name: str, p: float) -> None:
    if not (0.0 <= p <= 1.0):
        raise ValueError(f"{name} must be in [0, 1], got {p!r}")


def random_workload(
    n_jobs: int,
    capacity: int | tuple[int, ...] = (64,),
    *,
    seed: int,
    load: float = 0.7,
    mean_runtime: float = 600.0,
    runtime_sigma: float = 1.0,
    p_exact: float = 0.1,
    p_underestimate: float = 0.1,
    max_overestimate: float = 5.0,
    p_pow2: float = 0.75,
    n_users: int = 16,
    name: str | None = None,
) -> Workload:
    """Draw a random workload with K = ``len(capacity)`` resources.

    Parameters
    ----------
    n_jobs : int
        Number of jobs (>= 0); ids are ``1..n_jobs`` in submit order.
    capacity : int or tuple of int
        Machine capacity per resource; ``capacity[0]`` is processors. An int means
        ``(capacity,)``.
    seed : int
        Seed of ``numpy.random.default_rng``; the same arguments give the same workload.
    load : float
        Target offered load on the processors (> 0), see the module docstring.
    mean_runtime : float
        Mean actual runtime in seconds (> 0).
    runtime_sigma : float
        Standard deviation of the runtime's logarithm (>= 0).
    p_exact, p_underestimate : float
        Probabilities of a request equal to the runtime and of one below it
        (``p_exact + p_underestimate <= 1``).
    max_overestimate : float
        Largest factor between request and runtime for the other jobs (>= 1).
    p_pow2 : float
        Probability that a job's processor count is rounded to a power of two.
    n_users : int
        Users are drawn uniformly from ``0..n_users-1``; the group is ``user // 4``.
    name : str, optional
        Workload name; default ``"synthetic-n<n>-K<K>-seed<seed>"``.

    Returns
    -------
    Workload
        Valid workload (sorted submits, unique ids, demands within capacity), empty
        header, no cleaning report.
    """
    if isinstance(capacity, int) and not isinstance(capacity, bool):
        capacity = (capacity,)
    capacity = tuple(capacity)
    if not capacity or any(isinstance(c, bool) or not isinstance(c, int) or c < 1
                           for c in capacity):
        raise ValueError(f"capacity must be positive integers, got {capacity!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 0:
        raise ValueError(f"n_jobs must be a non-negative integer, got {n_jobs!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not (load > 0 and math.isfinite(load)):
        raise ValueError(f"load must be a positive number, got {load!r}")
    if not (mean_runtime > 0 and math.isfinite(mean_runtime)):
        raise ValueError(f"mean_runtime must be a positive number of seconds, got {mean_runtime!r}")
    if not (runtime_sigma >= 0 and math.isfinite(runtime_sigma)):
        raise ValueError(f"runtime_sigma must be >= 0, got {runtime_sigma!r}")
    _check_prob("p_exact", p_exact)
    _check_prob("p_underestimate", p_underestimate)
    _check_prob("p_pow2", p_pow2)
    if p_exact + p_underestimate > 1.0:
        raise ValueError(f"p_exact + p_underestimate must be <= 1, got {p_exact + p_underestimate}")
    if not (max_overestimate >= 1 and math.isfinite(max_overestimate)):
        raise ValueError(f"max_overestimate must be >= 1, got {max_overestimate!r}")
    if isinstance(n_users, bool) or not isinstance(n_users, int) or n_users < 1:
        raise ValueError(f"n_users must be a positive integer, got {n_users!r}")

    K = len(capacity)
    P = capacity[0]
    n = n_jobs
    rng = np.random.default_rng(seed)

    # Processors: log-uniform on [1, P], some rounded to a power of two <= P.
    procs = np.floor(np.exp(rng.uniform(0.0, math.log(P + 1), n))).astype(np.int64)
    procs = np.clip(procs, 1, P)
    pow2 = 2 ** np.floor(np.log2(procs)).astype(np.int64)
    procs = np.where(rng.random(n) < p_pow2, pow2, procs)
    others = [rng.integers(1, capacity[k] + 1, n) for k in range(1, K)]

    # Runtimes: lognormal with the given mean, at least 1 s.
    mu = math.log(mean_runtime) - runtime_sigma ** 2 / 2
    runtime = np.maximum(1, np.rint(rng.lognormal(mu, runtime_sigma, n))).astype(np.int64)

    # Requests: exact, under (killed), or over by a factor in [1, max_overestimate].
    u = rng.random(n)
    under = np.floor(runtime * rng.uniform(0.0, 1.0, n)).astype(np.int64)
    under = np.clip(under, 1, np.maximum(1, runtime - 1))
    over = np.ceil(runtime * rng.uniform(1.0, max_overestimate, n)).astype(np.int64)
    requested = np.where(u < p_exact, runtime,
                         np.where(u < p_exact + p_underestimate, under, over))

    # Arrivals: exponential interarrivals scaled to the target load.
    work = float(np.sum(procs * np.minimum(runtime, requested)))
    mean_gap = work / (P * load * max(n - 1, 1)) if n else 1.0
    gaps = rng.exponential(mean_gap, n)
    if n:
        gaps[0] = 0.0
    submit = np.floor(np.cumsum(gaps)).astype(np.int64)

    users = rng.integers(0, n_users, n)

    submit_l, run_l, req_l = submit.tolist(), runtime.tolist(), requested.tolist()
    procs_l, users_l = procs.tolist(), users.tolist()
    others_l = [o.tolist() for o in others]
    jobs = tuple(
        Job(i + 1, submit_l[i], run_l[i], req_l[i],
            (procs_l[i], *(o[i] for o in others_l)), users_l[i], users_l[i] // 4)
        for i in range(n)
    )
    label = name if name is not None else f"synthetic-n{n}-K{K}-seed{seed}"
    return Workload(jobs, capacity, label)


def offered_load(workload: Workload, kill_at_request: bool = True) -> float:
    """Offered load on the processors: ``sum(procs * run) / (P * span)``.

    ``run`` is ``min(runtime, requested)`` when jobs are killed at their request, else
    the runtime; ``span`` is the time from the first to the last submit in seconds
    (at least 1). Returns 0.0 for an empty workload.
    """
    if not workload.jobs:
        return 0.0
    work = sum(j.procs * j.run_length(kill_at_request) for j in workload.jobs)
    span = max(1, workload.jobs[-1].submit - workload.jobs[0].submit)
    return work / (workload.procs * span)
