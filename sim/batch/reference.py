"""The Python engine of the batch machine: the reference every other engine matches.

:func:`simulate_python` drives a policy through one simulation event by event and checks
every decision (the job is waiting, it fits now). :func:`sim.batch.machine.simulate`
chooses the engine; the compiled engine (:mod:`sim.batch.fast.run`) calls this one for
the slack runs it does not compile whole. Times are integer seconds.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable

import numpy as np

from instances.job import Workload
from sim.batch.policy import MachineInfo, Policy, guarantee_terms
from sim.batch.schedule import OVERRUN_MODES, PolicyError, Schedule
from sim.events import ARRIVAL, END, OVERRUN, WAKEUP, EventQueue


def simulate_python(
    workload: Workload,
    policy: Policy,
    *,
    overrun: str = "kill",
    progress: Callable[[int], None] | None = None,
) -> Schedule:
    """Run ``policy`` on ``workload`` from an empty machine.

    Parameters
    ----------
    workload : Workload
    policy : Policy
        Fresh or reusable policy object; ``reset`` is called first.
    overrun : {"kill", "run"}
        What happens when a job runs past its requested time: killed at the request
        (the papers' setting, default) or runs to completion (the policy gets an
        ``on_overrun`` notice at ``start + requested``).
    progress : callable, optional
        Called with the number of jobs that arrived since the previous call (the
        compiled engine calls it once, at the end).

    Returns
    -------
    Schedule

    Notes
    -----
    Simultaneous events are processed in the order of ``sim.events``: every end at
    time t, then overrun notices, then every arrival at t (in workload order), and
    then the policy is asked once which jobs start at t. Jobs that start at t with a
    zero run length end at t and trigger another decision at t.
    """
    if overrun not in OVERRUN_MODES:
        raise ValueError(f"overrun must be one of {OVERRUN_MODES}, got {overrun!r}")
    t_wall = _time.perf_counter()
    kill = overrun == "kill"
    jobs = workload.jobs
    n = len(jobs)
    K = workload.K
    capacity = workload.capacity
    free = list(capacity)
    index = {j.id: i for i, j in enumerate(jobs)}
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    killed = np.zeros(n, dtype=bool)
    waiting: set[int] = set()

    policy.reset(MachineInfo(capacity=capacity, kill_at_request=kill))
    events = EventQueue()
    next_arrival = 0
    wakeup_at: int | None = None
    pending_progress = 0

    while next_arrival < n or events:
        # next instant
        t_evt = events.peek_time()
        t_arr = jobs[next_arrival].submit if next_arrival < n else None
        if t_evt is None or (t_arr is not None and t_arr < t_evt):
            now = t_arr
        else:
            now = t_evt
        # 1. ends and overrun notices (classes END, OVERRUN) at `now`
        while events and events.peek_time() == now and events.peek()[1] < ARRIVAL:
            _, cls, _, i = events.pop()
            job = jobs[i]
            if cls == END:
                for k in range(K):
                    free[k] += job.demand[k]
                policy.on_end(job, now)
            else:  # OVERRUN
                policy.on_overrun(job, now)
        # 2. arrivals at `now`
        while next_arrival < n and jobs[next_arrival].submit == now:
            job = jobs[next_arrival]
            waiting.add(next_arrival)
            policy.on_arrival(job, now)
            next_arrival += 1
            pending_progress += 1
        # 3. wake-ups at `now`
        while events and events.peek_time() == now and events.peek()[1] == WAKEUP:
            events.pop()
        if wakeup_at is not None and wakeup_at <= now:
            wakeup_at = None
        # 4. one decision
        for job in policy.schedule(now):
            i = index.get(job.id)
            if i is None or i not in waiting:
                raise PolicyError(f"{policy.name}: job {job.id} started at {now} is not waiting")
            for k in range(K):
                if job.demand[k] > free[k]:
                    raise PolicyError(
                        f"{policy.name}: job {job.id} started at {now} needs {job.demand[k]} of "
                        f"resource {k}, {free[k]} free")
            for k in range(K):
                free[k] -= job.demand[k]
            waiting.discard(i)
            start[i] = now
            if kill and job.runtime > job.requested:
                length = job.requested
                killed[i] = True
            else:
                length = job.runtime
                if job.runtime > job.requested:
                    events.push(now + job.requested, OVERRUN, i)
            end[i] = now + length
            events.push(now + length, END, i)
        w = policy.next_wakeup(now)
        if w is not None:
            if w <= now:
                raise PolicyError(f"{policy.name}: wake-up {w} is not after now={now}")
            if wakeup_at is None or w < wakeup_at:
                wakeup_at = w
                events.push(w, WAKEUP, None)
        if progress is not None and pending_progress >= 1000:
            progress(pending_progress)
            pending_progress = 0

    if progress is not None and pending_progress:
        progress(pending_progress)
    if waiting:
        stuck = sorted(jobs[i].id for i in waiting)[:10]
        raise PolicyError(f"{policy.name}: jobs never started: {stuck}")
    return Schedule(
        workload=workload,
        policy=policy.name,
        start=start,
        end=end,
        killed=killed,
        overrun=overrun,
        promises=dict(policy.promises()),
        guarantees=frozenset(getattr(policy, "guarantees", frozenset)()),
        terms=guarantee_terms(policy),
        sim_seconds=_time.perf_counter() - t_wall,
    )
