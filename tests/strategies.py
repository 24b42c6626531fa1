"""Hypothesis strategies for small valid workloads with many simultaneous events.

Times are small integers (seconds), so submits, ends and kills coincide often; requests
are sometimes equal to, above and below the runtime (so jobs get killed at their
request); runtimes may be 0.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from instances.job import Job, Workload

__all__ = ["jobs_for", "workloads"]


@st.composite
def jobs_for(
    draw: st.DrawFn,
    capacity: tuple[int, ...],
    *,
    job_id: int,
    max_submit: int = 10,
    max_runtime: int = 8,
) -> Job:
    """One job that fits ``capacity``, with small integer times (seconds)."""
    submit = draw(st.integers(0, max_submit))
    runtime = draw(st.integers(0, max_runtime))
    requested = draw(st.one_of(st.just(max(runtime, 1)), st.integers(1, max_runtime + 3)))
    demand = (draw(st.integers(1, capacity[0])),
              *(draw(st.integers(0, c)) for c in capacity[1:]))
    user = draw(st.integers(0, 2))
    return Job(job_id, submit, runtime, requested, demand, user, user % 2)


@st.composite
def workloads(
    draw: st.DrawFn,
    max_jobs: int = 12,
    max_procs: int = 8,
    K: int | None = 1,
    *,
    min_jobs: int = 0,
    max_K: int = 2,
    max_submit: int = 10,
    max_runtime: int = 8,
) -> Workload:
    """Small valid workloads.

    Parameters
    ----------
    max_jobs, min_jobs : int
        Bounds on the number of jobs.
    max_procs : int
        Largest capacity of every resource (each capacity is drawn from
        ``1..max_procs``).
    K : int or None
        Number of resources; ``None`` draws it from ``1..max_K``.
    max_submit, max_runtime : int
        Submit times are drawn from ``0..max_submit`` and runtimes from
        ``0..max_runtime`` seconds; requests from ``1..max_runtime + 3`` or exactly
        ``max(runtime, 1)``.

    Returns
    -------
    Workload
        Jobs sorted by submit time (ties in draw order) with ids ``1..n`` in that order.
    """
    k = draw(st.integers(1, max_K)) if K is None else K
    capacity = tuple(draw(st.integers(1, max_procs)) for _ in range(k))
    n = draw(st.integers(min_jobs, max_jobs))
    raw = [draw(jobs_for(capacity, job_id=i, max_submit=max_submit, max_runtime=max_runtime))
           for i in range(n)]
    raw.sort(key=lambda j: j.submit)
    jobs = tuple(Job(i + 1, j.submit, j.runtime, j.requested, j.demand, j.user, j.group)
                 for i, j in enumerate(raw))
    return Workload(jobs, capacity, f"hypothesis-{n}")


def small_random_workload(seed: int, n: int = 60, procs: int = 8, gap: int = 40) -> Workload:
    """A small seeded workload with integer times for policy tests: interarrivals
    uniform in [0, gap] s, runtimes in [0, 300] s, requests from 50 s short (killed) to
    300 s long, 1..procs processors on a machine of ``procs``."""
    rng = random.Random(seed)
    jobs, t = [], 0
    for i in range(n):
        t += rng.randint(0, gap)
        run = rng.randint(0, 300)
        req = max(1, run + rng.randint(-50, 300))
        jobs.append(Job(id=i, submit=t, runtime=run, requested=req,
                        demand=(rng.randint(1, procs),)))
    return Workload(tuple(jobs), (procs,), name=f"random{seed}")
