"""The batch (space-shared) machine: K resources, jobs arrive, start, end or are killed.

One simulation takes a workload and a policy and returns a ``Schedule``: the start and
end time of every job, whether it was killed at its requested time, and the policy's
promises for the validator. Times are integer seconds.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from instances.job import Workload
from sim.batch.policy import MachineInfo, Policy
from sim.events import ARRIVAL, END, OVERRUN, WAKEUP, EventQueue

OVERRUN_MODES = ("kill", "run")
#: ``simulate(engine=...)``: the Python engine (the reference) or the compiled one
ENGINES = ("python", "compiled")
#: ``engine=`` values: an engine, or ``"auto"`` (:func:`choose_engine`)
ENGINE_CHOICES = ("auto", *ENGINES)


def choose_engine(workload: Workload, policy: Policy, *, overrun: str = "kill") -> str:
    """The engine ``engine="auto"`` runs: ``"compiled"`` when numba is installed, the
    compiled engine runs this policy with these options (``sim.batch.fast.run.unsupported``)
    and the kernels it needs are already compiled and cached on this machine
    (:mod:`sim.batch.fast.cache`); else ``"python"``. Both give the same schedule, so the
    choice changes only the time a run takes: the compiled engine is 10-45x faster, but its
    first use compiles for 30-90 s, which ``auto`` never starts on its own.
    """
    from sim.batch.fast import cache

    if not cache.kernels_cached(cache.kernels_for(policy)):  # imports numba only if cached
        return "python"
    from sim.batch.fast.run import unsupported

    return "python" if unsupported(policy, workload, overrun=overrun) else "compiled"


class PolicyError(RuntimeError):
    """A policy returned an impossible decision (job not waiting, or not fitting now)."""


@dataclass(frozen=True)
class Schedule:
    """Outcome of one simulation.

    Parameters
    ----------
    workload : Workload
    policy : str
        Name of the policy that produced it.
    start, end : numpy.ndarray of int64
        Start and end time of each job (seconds), aligned with ``workload.jobs``.
    killed : numpy.ndarray of bool
        True where the job was killed at its requested time.
    overrun : str
        ``"kill"`` (jobs killed at their request) or ``"run"`` (run to completion).
    promises : dict
        Job id -> latest start the policy guaranteed.
    guarantees : frozenset of str
        The guarantee kinds the policy declared (``sim.batch.policy.GUARANTEES``); the
        validator checks each of them.
    sim_seconds : float
        Wall-clock seconds the simulation took.
    engine : {"python", "compiled"}
        The engine that ran it.
    """

    workload: Workload
    policy: str
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    overrun: str = "kill"
    promises: dict[int, int] = field(default_factory=dict)
    sim_seconds: float = 0.0
    guarantees: frozenset[str] = frozenset()
    engine: str = "python"


def simulate(
    workload: Workload,
    policy: Policy,
    *,
    overrun: str = "kill",
    progress: Callable[[int], None] | None = None,
    engine: str = "python",
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
    engine : {"python", "compiled", "auto"}
        ``"compiled"`` runs :func:`sim.batch.fast.run.simulate_compiled` (numba): the same
        schedule for the policies it implements, a ValueError naming anything else
        (``sim.batch.fast.run.unsupported``). ``"auto"`` runs whichever
        :func:`choose_engine` picks (the schedule is the same either way).

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
    if engine == "auto":
        engine = choose_engine(workload, policy, overrun=overrun)
    if engine != "python":
        if engine != "compiled":
            raise ValueError(f"engine must be one of {ENGINE_CHOICES}, got {engine!r}")
        from sim.batch.fast.run import simulate_compiled

        return simulate_compiled(workload, policy, overrun=overrun, progress=progress)
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
        sim_seconds=_time.perf_counter() - t_wall,
    )
