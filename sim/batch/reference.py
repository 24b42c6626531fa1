"""The Python engine of the batch machine: the reference every other engine matches.

:func:`simulate_python` drives a policy through one simulation event by event and checks
every decision (the job is waiting, it fits now). :func:`sim.batch.machine.simulate`
chooses the engine; the compiled engine (:mod:`sim.batch.fast.run`) calls this one for
the slack runs it does not compile whole. Times are integer seconds.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import time as _time
from collections.abc import Callable, Mapping

import numpy as np

from instances.job import Job, Workload
from sim.batch.policy import MachineInfo, Policy, guarantee_terms
from sim.batch.schedule import OVERRUN_MODES, PolicyError, Schedule
from sim.events import ARRIVAL, END, OVERRUN, WAKEUP, EventQueue


def _whole_seconds(policy: Policy, w: object) -> int | None:
    """A policy's wake-up time as an int: an integer, or a float of whole seconds (100.0);
    anything else is a PolicyError (a NaN would never come after now and stall the event
    queue for ever; a fraction of a second is no time of this integer clock)."""
    if w is None:
        return None
    if isinstance(w, (float, np.floating)) and math.isfinite(w) and w == int(w):
        return int(w)
    if isinstance(w, (bool, np.bool_)) or not isinstance(w, (int, np.integer)):
        raise PolicyError(f"{policy.name}: wake-up {w!r} is not a time in whole seconds")
    return int(w)


def simulate_python(
    workload: Workload,
    policy: Policy,
    *,
    overrun: str = "kill",
    progress: Callable[[int], None] | None = None,
    dependencies: Mapping[int, tuple[int, int]] | None = None,
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
    dependencies : mapping, optional
        User feedback (``instances.dependencies.dependencies`` of ``workload``): job id ->
        ``(id of the job it waits for, think time in seconds)``. A job in the table is
        submitted when its predecessor has ended in this simulation plus its think time,
        not at its submit time in the log; the policy sees it arrive then, with ``submit``
        that time. Every other job arrives at its own submit time.

    Returns
    -------
    Schedule
        With ``dependencies``, ``Schedule.workload`` is the realised workload: every job
        with the submit time it arrived at, in the order of arrival (the arrays follow
        it), so that the validator and the metrics measure from the realised times.

    Notes
    -----
    Simultaneous events are processed in the order of ``sim.events``: every end at
    time t, then overrun notices, then every arrival at t (in workload order), and
    then the policy is asked once which jobs start at t. Jobs that start at t with a
    zero run length end at t and trigger another decision at t. With ``dependencies``, the
    end of a job at t releases the jobs waiting for it at ``t + think`` (a think time of 0
    arrives at t, with the other arrivals at t); arrivals at one instant come in
    workload order.
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
    feedback = _Feedback(jobs, index, dependencies) if dependencies else None
    arriving = feedback if feedback is not None else _LogArrivals(jobs)
    jobs = arriving.live  # each job as the policy sees it (submit: when it arrived)
    start = np.full(n, -1, dtype=np.int64)
    end = np.full(n, -1, dtype=np.int64)
    killed = np.zeros(n, dtype=bool)
    waiting: set[int] = set()
    running = 0  # jobs started and not yet ended

    policy.reset(MachineInfo(capacity=capacity, kill_at_request=kill))
    events = EventQueue()
    wakeup_at: int | None = None
    pending_progress = 0

    while arriving or events:
        # next instant
        t_evt = events.peek_time()
        t_arr = arriving.next_time()
        if t_evt is None or (t_arr is not None and t_arr < t_evt):
            now = t_arr
        else:
            now = t_evt
        # 1. ends and overrun notices (classes END, OVERRUN) at `now`
        while events and events.peek_time() == now and events.peek()[1] < ARRIVAL:
            _, cls, _, i = events.pop()
            job = jobs[i]
            if cls == END:
                running -= 1
                for k in range(K):
                    free[k] += job.demand[k]
                arriving.ended(i, now)
                policy.on_end(job, now)
            else:  # OVERRUN
                policy.on_overrun(job, now)
        # 2. arrivals at `now`
        for i in arriving.arrivals(now):
            waiting.add(i)
            policy.on_arrival(jobs[i], now)
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
            running += 1
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
        w = _whole_seconds(policy, policy.next_wakeup(now))
        if w is not None:
            if w <= now:
                raise PolicyError(f"{policy.name}: wake-up {w} is not after now={now}")
            # once every job has ended nothing is left to wake for: the run ends
            busy = waiting or running or arriving
            if busy and (wakeup_at is None or w < wakeup_at):
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
    if feedback is not None:
        workload, order = feedback.realised(workload)
        start, end, killed = start[order], end[order], killed[order]
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


class _LogArrivals:
    """The arrivals of a simulation without feedback: every job at its own submit time, in
    workload order (the interface of :class:`_Feedback`)."""

    def __init__(self, jobs: tuple[Job, ...]) -> None:
        self.live = jobs
        self.next = 0  # position of the next job to arrive

    def __bool__(self) -> bool:
        return self.next < len(self.live)

    def next_time(self) -> int | None:
        """Time of the next arrival, None after the last."""
        return self.live[self.next].submit if self.next < len(self.live) else None

    def ended(self, i: int, now: int) -> None:
        """Job ``i`` ended at ``now``: no arrival depends on it."""

    def arrivals(self, now: int) -> range:
        """Positions of the jobs arriving at ``now``, in workload order."""
        first, jobs = self.next, self.live
        while self.next < len(jobs) and jobs[self.next].submit == now:
            self.next += 1
        return range(first, self.next)


class _Feedback:
    """The arrivals of a simulation with user feedback: the jobs without a predecessor at
    their own submit times, each other one its think time after its predecessor's end in
    the simulation (``simulate_python``'s ``dependencies``)."""

    def __init__(self, jobs: tuple[Job, ...], index: dict[int, int],
                 table: Mapping[int, tuple[int, int]]) -> None:
        self.live = list(jobs)
        self.released: dict[int, list[tuple[int, int]]] = {}  # predecessor -> (job, think)
        heap = []
        for i, j in enumerate(jobs):
            dep = table.get(j.id)
            if dep is None:
                heap.append((j.submit, i))
                continue
            pred, think = dep
            p = index.get(pred)
            if p is None or p == i or isinstance(think, bool) or not isinstance(think, int) \
                    or think < 0:
                raise ValueError(f"dependencies: job {j.id} waits for {pred!r} with think "
                                 f"time {think!r}: not another job of the workload and a "
                                 "whole number of seconds >= 0")
            self.released.setdefault(p, []).append((i, think))
        unknown = set(table) - set(index)
        if unknown:
            raise ValueError(f"dependencies: job {min(unknown, key=str)!r} is not in the "
                             "workload")
        heapq.heapify(heap)
        self.heap = heap  # (arrival time, position)
        self.order: list[int] = []  # positions in the order of arrival

    def __bool__(self) -> bool:
        return bool(self.heap)

    def next_time(self) -> int | None:
        """Time of the next arrival known, None when none is."""
        return self.heap[0][0] if self.heap else None

    def ended(self, i: int, now: int) -> None:
        """Job ``i`` ended at ``now``: release the jobs waiting for it."""
        for k, think in self.released.pop(i, ()):
            heapq.heappush(self.heap, (now + think, k))

    def arrivals(self, now: int) -> list[int]:
        """Positions of the jobs arriving at ``now``, in workload order; each is given its
        realised submit time."""
        out = []
        while self.heap and self.heap[0][0] == now:
            out.append(heapq.heappop(self.heap)[1])
        for i in out:
            if self.live[i].submit != now:
                self.live[i] = dataclasses.replace(self.live[i], submit=now)
        self.order += out
        return out

    def realised(self, workload: Workload) -> tuple[Workload, np.ndarray]:
        """The realised workload (the jobs in the order they arrived, with the submit times
        they arrived at) and the positions of ``workload`` in that order."""
        order = np.array(self.order, dtype=np.int64)
        if len(order) != len(self.live):  # a cycle: its jobs wait for each other
            never = sorted(self.live[i].id for i in set(range(len(self.live))) - set(order))
            raise ValueError(f"dependencies: jobs {never[:10]} never arrived (they wait for "
                             "each other)")
        header = dict(workload.header)
        note = header.get("Note", [])
        header["Note"] = [*([note] if isinstance(note, str) else note), FEEDBACK_NOTE]
        jobs = tuple(self.live[i] for i in self.order)
        return dataclasses.replace(workload, jobs=jobs, header=header), order


#: the header note of a realised workload
FEEDBACK_NOTE = ("submit times realised with user feedback (Zakay & Feitelson): a dependent "
                 "job submitted its think time after its predecessor's simulated end")
