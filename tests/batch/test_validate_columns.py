"""The validator and the metrics read a workload's columns: the same verdicts and numbers.

``sim.batch.validate.promise_error`` checks the promises on arrays; its readable reference
``promise_error_reference`` walks the promise dict and the ``Job`` objects. Both must give
the same verdict with the same message, on true schedules and on schedules with a promise
broken in every way. ``validate`` and ``summary`` must say the same on a workload given
as ``Job`` objects and on the same workload given as columns.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from heuristics.backfill import EASY, FCFS, Conservative
from heuristics.slack import SlackPolicy
from instances.job import JobColumns, Workload
from instances.synthetic import random_workload
from sim.batch.machine import simulate
from sim.batch.metrics import summary, utilization_per_resource
from sim.batch.validate import (
    ValidationError,
    promise_error,
    promise_error_reference,
    validate,
)

POLICIES = {"fcfs": FCFS, "easy": EASY, "conservative": Conservative, "slack": SlackPolicy}


def _workload(K: int, seed: int, policy: str) -> Workload:
    """300 jobs at offered load 1.1 on K resources (one for the slack scheduler, which
    plans processors only)."""
    return random_workload(300, (16,) * (1 if policy == "slack" else K), seed=seed, load=1.1)


def _verdict(schedule) -> str:
    try:
        validate(schedule)
    except ValidationError as exc:
        return str(exc)
    return "valid"


def _broken(s, rng: np.random.Generator) -> list:
    """``s`` with its promises broken: a late start, an unknown job, a promise missing."""
    ids = [j.id for j in s.workload.jobs]
    out = []
    if s.promises:
        keys = list(s.promises)
        k = keys[int(rng.integers(len(keys)))]
        out.append({**s.promises, k: s.promises[k] - 1 - int(rng.integers(5))})
        out.append({**s.promises, max(ids) + 7: 0})
        out.append({k: v for k, v in s.promises.items() if k != keys[-1]})
        out.append(dict(reversed(list({**s.promises, k: -1, keys[0]: -1}.items()))))
    out.append({})
    out.append({ids[0]: float(s.start[0]) - 0.5, ids[-1]: float(s.start[-1])})
    return [dataclasses.replace(s, promises=p) for p in out]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("K", [1, 2])
def test_promise_check_agrees_with_its_reference(policy, K):
    rng = np.random.default_rng(K)
    w = _workload(K, K, policy)
    s = simulate(w, POLICIES[policy]())
    every_kind = dataclasses.replace(
        s, guarantees=frozenset({"arrival-reservation", "head-reservation", "slack-bound"}))
    seen = set()
    for t in [s, every_kind, *_broken(s, rng), *_broken(every_kind, rng)]:
        got, ref = promise_error(t), promise_error_reference(t)
        assert got == ref
        seen.add(got is None)
    assert seen == {True, False}  # both verdicts occur


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("overrun", ["kill", "run"])
def test_columns_and_jobs_give_the_same_verdicts_and_metrics(policy, overrun):
    jobs = _workload(2, 3, policy)
    cols = Workload(JobColumns.from_jobs(jobs.jobs, jobs.K), jobs.capacity, jobs.name)
    assert "_columns" not in jobs.__dict__
    s = simulate(jobs, POLICIES[policy](), overrun=overrun)
    t = dataclasses.replace(s, workload=cols)
    assert summary(t) | {"sim_seconds": 0} == summary(s) | {"sim_seconds": 0}
    assert utilization_per_resource(t) == utilization_per_resource(s)
    wrong = [dataclasses.replace(s, start=s.start - 1, end=s.end - 1),
             dataclasses.replace(s, end=s.end + (np.arange(len(s.end)) == 5)),
             dataclasses.replace(s, killed=~s.killed),
             dataclasses.replace(s, start=s.start[::-1].copy(), end=s.end[::-1].copy())]
    verdicts = [_verdict(x) for x in [s, *wrong]]
    assert verdicts == [_verdict(dataclasses.replace(x, workload=cols)) for x in [s, *wrong]]
    assert verdicts[0] == "valid" and all(v != "valid" for v in verdicts[1:])
