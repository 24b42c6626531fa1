"""A declared guarantee is checked from the schedule and the job data, not from the policy's
own promises: a user's policy that declares a reservation it breaks is invalid whatever it
promises (``sim.batch.evidence``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from heuristics.backfill import EASY, Conservative
from instances.job import Job, Workload
from sim.batch.evidence import arrival_reservation_error, head_reservation_error
from sim.batch.machine import simulate
from sim.batch.policy import BasePolicy, MachineInfo
from sim.batch.validate import ValidationError, validate

# job 2 (4 processors) waits behind job 1 until t=10; job 3 fits at once but runs past 10
W = Workload((Job(1, 0, 10, 10, (2,)), Job(2, 1, 5, 5, (4,)), Job(3, 2, 20, 20, (2,))), (4,))


class Greedy(BasePolicy):
    """Starts every waiting job that fits now, in arrival order (no reservation), while
    declaring ``kinds`` and promising ``promise`` seconds to every job."""

    def __init__(self, kinds: frozenset[str], promise: int | None = None) -> None:
        self.name = "liar"
        self.kinds = kinds
        self.promise = promise

    def reset(self, machine: MachineInfo) -> None:
        self.free = machine.capacity[0]
        self.queue: list[Job] = []
        self.ids: list[int] = []

    def on_arrival(self, job: Job, now: int) -> None:
        self.queue.append(job)
        self.ids.append(job.id)

    def on_end(self, job: Job, now: int) -> None:
        self.free += job.demand[0]

    def schedule(self, now: int) -> list[Job]:
        out = []
        for j in self.queue:
            if j.demand[0] <= self.free:
                self.free -= j.demand[0]
                out.append(j)
        self.queue = [j for j in self.queue if j not in out]
        return out

    def promises(self) -> dict[int, int]:
        return {} if self.promise is None else dict.fromkeys(self.ids, self.promise)

    def guarantees(self) -> frozenset[str]:
        return self.kinds


def test_easy_and_conservative_keep_their_recomputed_reservations():
    for policy in (EASY(), Conservative()):
        s = simulate(W, policy)
        assert s.start.tolist() == [0, 10, 15]
        validate(s)


def test_head_reservation_without_promises_is_checked_from_the_schedule():
    s = simulate(W, Greedy(frozenset({"head-reservation"})))
    assert s.start.tolist() == [0, 22, 2] and s.promises == {}
    with pytest.raises(ValidationError, match=r"liar: job 2 starts at 22, later than its "
                       r"head reservation 10 .*head of the queue at t=1"):
        validate(s)


def test_arrival_reservation_with_empty_promises_kept_is_still_broken():
    s = simulate(W, Greedy(frozenset({"arrival-reservation"}), promise=10**9))
    with pytest.raises(ValidationError, match=r"liar: job 2 starts at 22, after 10, the "
                       r"latest reservation .*arrival-reservation"):
        validate(s)


def test_slack_bound_with_nothing_to_check_is_an_error():
    s = simulate(W, Greedy(frozenset({"slack-bound"})))
    with pytest.raises(ValidationError, match="promises no job a latest start"):
        validate(s)


def test_reservations_declared_where_jobs_outlive_their_request_are_an_error():
    s = simulate(W, Greedy(frozenset({"head-reservation"})), overrun="run")
    with pytest.raises(ValidationError, match="overrun='run'"):
        validate(s)


def test_tampered_easy_schedule_without_its_promises_is_invalid():
    s = simulate(W, EASY())
    late = dataclasses.replace(s, promises={}, start=np.array([0, 11, 16]),
                               end=np.array([10, 16, 36]))
    with pytest.raises(ValidationError, match="job 2 starts at 11, later than its head "
                       "reservation 10"):
        validate(late)


def test_recomputed_bounds_hold_on_random_workloads():
    """On random workloads (several resources, ties, zero lengths, early ends) EASY and
    conservative always pass the recomputed checks."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        K = int(rng.integers(1, 3))
        cap = tuple(int(c) for c in rng.integers(2, 9, K))
        jobs, t = [], 0
        for i in range(int(rng.integers(2, 25))):
            t += int(rng.integers(0, 4))
            req = int(rng.integers(1, 12))
            run = int(rng.integers(0, req + 1))
            jobs.append(Job(i + 1, t, run, req, tuple(int(rng.integers(1, c + 1)) for c in cap)))
        w = Workload(tuple(jobs), cap)
        for policy in (EASY(), EASY(select="bb")):
            s = simulate(w, policy)
            assert head_reservation_error(w, s.start, s.end, "p") is None
        for policy in (Conservative(), Conservative(compression="none"),
                       Conservative(select="bl")):
            s = simulate(w, policy)
            assert arrival_reservation_error(w, s.start, s.end, "p") is None
