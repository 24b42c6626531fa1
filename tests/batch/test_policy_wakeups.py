"""A policy's wake-up time is checked as its start decisions are: a time in whole seconds
after now, or the run stops with a PolicyError naming the policy (a NaN wake-up would
otherwise never come after now and stall the simulation). Times are integer seconds."""

from __future__ import annotations

import math

import pytest

from heuristics.backfill import FCFS
from instances.job import Job, Workload
from sim.batch.machine import simulate
from sim.batch.schedule import PolicyError


class _WakesAt(FCFS):
    """FCFS that asks to be woken at ``at(now)``."""

    def __init__(self, at) -> None:
        super().__init__()
        self.at = at

    def next_wakeup(self, now: int):
        return self.at(now)


def _workload() -> Workload:
    return Workload(tuple(Job(i, 10 * i, 100, 100, (4,)) for i in range(1, 40)), (4,))


@pytest.mark.parametrize("at", [lambda now: math.nan, lambda now: now + 0.5,
                                lambda now: math.inf, lambda now: True,
                                lambda now: "soon"],
                         ids=["nan", "half-second", "inf", "bool", "text"])
def test_a_wake_up_that_is_not_a_whole_second_is_refused(at):
    with pytest.raises(PolicyError, match="is not a time in whole seconds"):
        simulate(_workload(), _WakesAt(at), engine="python")


@pytest.mark.parametrize("at", [lambda now: now + 7, lambda now: float(now + 7)],
                         ids=["int", "whole-float"])
def test_a_whole_second_wake_up_still_runs(at):
    """A whole number of seconds runs, given as an int or as a float (7.0 is 7)."""
    s = simulate(_workload(), _WakesAt(at), engine="python")
    assert s.start.tolist() == [10 + 100 * i for i in range(39)]
