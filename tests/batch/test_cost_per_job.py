"""Cost per job flat in the number of jobs on a stationary workload, for every policy of the
compiled engine on both engines.

A cost that grows superlinearly with the number of jobs (a scan of every job seen so far,
a list that is never trimmed) makes the CPU time per job at 16k jobs several times that at
2k. The Lublin-Feitelson model on 256 processors at its own offered load (about 0.5) keeps
the queue stationary (``sim.experiments.engine.scaling_bench``: FCFS, EASY and conservative
cost 2-32 us per job from 10k to 240k jobs). The test takes the least CPU time of three
runs and allows 3x, so that a loaded machine does not make it fail.
"""

from __future__ import annotations

import time

import pytest

from instances.job import Workload
from instances.lublin import generate
from sim.batch.machine import simulate
from sim.registry import make_policy

SMALL, LARGE = 2_000, 16_000
FACTOR = 3.0


@pytest.fixture(scope="module")
def workloads() -> tuple[Workload, Workload]:
    w = generate(LARGE, 256, 1)
    return Workload(w.jobs[:SMALL], w.capacity, "lublin_small"), w


def cpu_per_job(workload: Workload, policy: str, engine: str, runs: int = 3) -> float:
    """Least CPU seconds per job over ``runs`` simulations."""
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        simulate(workload, make_policy(policy), engine=engine)
        best = min(best, time.process_time() - t)
    return best / len(workload)


@pytest.mark.parametrize("engine", ["python", pytest.param("compiled", marks=pytest.mark.compiled)])
@pytest.mark.parametrize("policy", ["fcfs", "easy", "conservative"])
def test_cost_per_job_does_not_grow_with_the_number_of_jobs(workloads, policy, engine):
    small, large = workloads
    simulate(small, make_policy(policy), engine=engine)  # warm: imports, kernel loads
    a = cpu_per_job(small, policy, engine)
    b = cpu_per_job(large, policy, engine)
    assert b <= FACTOR * a, (
        f"{policy} on the {engine} engine: {1e6 * b:.1f} us/job at {LARGE} jobs against "
        f"{1e6 * a:.1f} at {SMALL} (more than {FACTOR}x): the cost grows with n")
