"""The slack scheduler's compiled loop (``sim.batch.fast.slack_loop``) against the Python
engine.

``simulate(..., engine="compiled")`` runs the whole slack simulation in one compiled call:
the same start array (byte for byte), ends, kills, promises, guarantees and insert/remove
counts as the Python engine with the Python scheduler and search, for every compress
order, on a KTH-SP2 window and random workloads, with jobs killed at their request and run
on (overrun notices at one instant, extended estimates passing again), and with the
scheduler's options (priority tables with over-quota jobs, ``priority_in``,
``reset_slack``, the price exponents, ``compress``, ``delay_from``). What the loop does not
run is refused by name.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.compiled

from schedules import assert_same_schedule  # noqa: E402

from heuristics.slack import ORDERS, Inserter, SlackPolicy  # noqa: E402
from instances.bundled import load_trace  # noqa: E402
from instances.job import Job, Workload  # noqa: E402
from instances.synthetic import random_workload  # noqa: E402
from sim.batch.machine import simulate  # noqa: E402
from sim.batch.slack_scheduler import SlackScheduler  # noqa: E402


@functools.cache
def _kth() -> Workload:
    w = load_trace("KTH-SP2")
    return Workload(w.jobs[3000:3300], w.capacity, "KTH-SP2[3000:+300]")


@functools.cache
def _random(seed: int) -> Workload:
    # a small machine, many underestimates: overruns, extended estimates passing again
    return random_workload(250, (16,), seed=seed, load=0.95, p_underestimate=0.4,
                           mean_runtime=300.0)


@functools.cache
def _ties() -> Workload:
    """Simultaneous arrivals, equal requests (overrun notices at one instant, in the
    order scheduled), zero runtimes and early ends at one instant."""
    jobs = []
    for i in range(60):
        submit = 10 * (i // 4)
        runtime = (0, 5, 40, 100, 100)[i % 5]
        jobs.append(Job(id=1000 - 7 * i, submit=submit, runtime=runtime, requested=30,
                        demand=(1 + i % 3,)))
    return Workload(jobs, (4,), "ties")


WORKLOADS = {"kth": _kth, "random-a": lambda: _random(5), "random-b": lambda: _random(11),
             "ties": _ties}


def _same(w: Workload, overrun: str, **options) -> None:
    ref = SlackPolicy(**options)
    py = simulate(w, ref, overrun=overrun)
    got = SlackPolicy(**options)
    co = simulate(w, got, overrun=overrun, engine="compiled")
    assert_same_schedule(co, py, (w.name, overrun, options))
    assert (got.n_insert, got.n_remove) == (ref.n_insert, ref.n_remove)
    assert got.promises() == ref.promises()


@pytest.mark.parametrize("overrun", ["kill", "run"])
def test_loop_sizes_its_arrays_for_bursts_of_arrivals(overrun):
    """120 jobs submitted at two instants, 60 at each (the loop sizes its heap and the
    search's scratch by the arrivals at each step, ``sim.batch.fast.kernel.arrivals_at``):
    the Python engine's schedule."""
    w = _random(5)
    jobs = tuple(dataclasses.replace(j, submit=0 if i < 60 else 5000)
                 for i, j in enumerate(w.jobs[:120]))
    _same(Workload(jobs, w.capacity, "bursts"), overrun, order="AST")


@pytest.mark.parametrize("overrun", ["kill", "run"])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
@pytest.mark.parametrize("order", ORDERS)
def test_loop_gives_the_python_schedule(order, name, overrun):
    _same(WORKLOADS[name](), overrun, order=order)


def _table(w: Workload, seed: int) -> dict[int, tuple[float, float]]:
    """UP and PP for most jobs, some over quota (PP = -inf); the rest get the default."""
    rng = np.random.default_rng(seed)
    out = {}
    for job in w.jobs:
        if rng.random() < 0.8:
            pp = -math.inf if rng.random() < 0.15 else float(rng.random())
            out[job.id] = (float(rng.random()), pp)
    return out


@pytest.mark.parametrize("options", [
    {"order": "DP", "priority_in": "price", "default_priority": 0.3},
    {"order": "DC", "priority_in": "slack", "reset_slack": False, "sf": 1.0},
    {"order": "AAT", "alpha_u": 0.5, "alpha_t": 0.3, "alpha_p": 0.0, "alpha_f": 0.7,
     "p_floor": 0.2, "slack_floor": 30.0},
    {"order": "AST", "compress": "list", "awt": 600.0},
    {"order": "DU", "delay_from": "overlap", "sf": 0.0},
])
@pytest.mark.parametrize("overrun", ["kill", "run"])
def test_loop_with_options_and_priorities(options, overrun):
    w = _random(7)
    _same(w, overrun, priorities=_table(w, 1), **options)


class _Later(SlackScheduler):
    """A scheduler that changes a step: the compiled loop would not run it."""

    def next_wakeup(self, now: int) -> int | None:
        w = super().next_wakeup(now)
        return None if w is None else w + 1


def test_loop_refuses_by_name():
    with pytest.raises(ValueError, match="zero_slack='fixed'"):
        simulate(_random(5), SlackPolicy(zero_slack="fixed"), engine="compiled")
    with pytest.raises(ValueError, match="policy _Later, a subclass of SlackScheduler"):
        simulate(_random(5), _Later(Inserter("AST")), engine="compiled")
