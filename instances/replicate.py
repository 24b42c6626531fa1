"""Seeded replicas of a log, so that a study on a trace has more than one run per cell.

A trace is one sample of a site's workload: simulating it again gives the same schedule,
so a mean over one run has no confidence interval. Each method below turns a log and a
seed into another plausible workload of the same site; the spread of a metric over seeds
is then the spread over such workloads (what the interval measures depends on the
method, and the report names it).

``resample``
    User-level bootstrap after Zakay & Feitelson ("Workload resampling for performance
    evaluation of parallel job schedulers", ICPE 2013), who build new logs from the
    users' job streams. This is the basic form of their idea: the users (the job streams
    of one ``user`` id; each job of unknown user, -1, is a stream of its own) are drawn
    with replacement, as many as the log has, and every drawn user's jobs keep their own
    submit times (a user drawn twice submits each job twice). Not their full scheme
    (long-term users always kept, temporary users drawn per week, feedback). Job ids are
    renumbered 1..n in submit order.
``jitter``
    Every run time multiplied by a factor drawn uniformly from ``[1 - amount, 1 +
    amount]`` (rounded to whole seconds); submit times and requested times are kept, so a
    job that now runs past its request is killed at it, as in the log.
``estimates``
    Requested times replaced by Tsafrir's model of user estimates
    (``instances.tsafrir.add_estimates``), run times kept.

Times are integer seconds. Every method keeps the machine (capacity) and returns a
workload named ``NAME+METHOD(seed)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from instances.job import Workload

METHODS = ("resample", "jitter", "estimates")
#: default half-width of the jitter factor's range
JITTER = 0.1


def replicate(workload: Workload, method: str, seed: int, *, amount: float = JITTER
              ) -> Workload:
    """The replica of ``workload`` by ``method`` (module docstring) with ``seed``.

    Raises
    ------
    ValueError
        An unknown method, an ``amount`` outside [0, 1), or a workload the method cannot
        take (naming it).
    """
    if method not in METHODS:
        raise ValueError(f"replicate: unknown method {method!r}; one of {', '.join(METHODS)}")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) \
            or not 0 <= amount < 1:
        raise ValueError(f"replicate: amount must be in [0, 1), got {amount!r}")
    rng = np.random.default_rng(seed)
    name = f"{workload.name}+{method}({seed})"
    if method == "estimates":
        from instances.tsafrir import add_estimates

        return add_estimates(workload, seed, name=name)
    if method == "jitter":
        factor = rng.uniform(1 - amount, 1 + amount, len(workload))
        jobs = tuple(dataclasses.replace(j, runtime=int(round(j.runtime * f)))
                     for j, f in zip(workload.jobs, factor, strict=True))
        return dataclasses.replace(workload, jobs=jobs, name=name, cleaning=None)
    return _resample(workload, rng, name)


def _resample(workload: Workload, rng: np.random.Generator, name: str) -> Workload:
    streams: dict[Any, list[int]] = {}
    for i, j in enumerate(workload.jobs):
        streams.setdefault(j.user if j.user >= 0 else ("job", i), []).append(i)
    users = list(streams)
    drawn = rng.integers(0, len(users), len(users))
    picked = sorted((workload.jobs[i].submit, k, i) for k, u in enumerate(drawn)
                    for i in streams[users[u]])
    jobs = tuple(dataclasses.replace(workload.jobs[i], id=n)
                 for n, (_, _, i) in enumerate(picked, 1))
    if not jobs:
        raise ValueError(f"replicate: {workload.name} has no jobs to resample")
    return dataclasses.replace(workload, jobs=jobs, name=name, cleaning=None)
