"""Each policy declares its own guarantees; the validator checks what is declared.

The validator matches no policy names: a schedule is held to the guarantee kinds it
carries (``Schedule.guarantees``), whatever its policy is called.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from heuristics.backfill import EASY, FCFS, Conservative
from heuristics.slack import SlackPolicy
from instances.job import Job, Workload
from sim.batch import policy as pol
from sim.batch.machine import simulate
from sim.batch.validate import KNOWN_GUARANTEES, ValidationError, validate

W = Workload((Job(1, 0, 5, 5, (2,)), Job(2, 0, 5, 5, (2,)), Job(3, 1, 3, 9, (4,))), (4,))


def _with(s, **arrays):
    return dataclasses.replace(s, **{k: np.array(v, dtype=getattr(s, k).dtype)
                                     for k, v in arrays.items()})


def test_validator_knows_every_declared_kind():
    assert KNOWN_GUARANTEES == set(pol.GUARANTEES)
    assert set(pol.PROMISE_KINDS) < set(pol.GUARANTEES)


@pytest.mark.parametrize(("factory", "kill", "run"), [
    (FCFS, {pol.FCFS_ORDER}, {pol.FCFS_ORDER}),
    (EASY, {pol.HEAD_RESERVATION}, set()),
    (Conservative, {pol.ARRIVAL_RESERVATION}, set()),
    (SlackPolicy, {pol.SLACK_BOUND}, set()),
])
def test_policies_declare_what_holds_in_each_mode(factory, kill, run):
    assert simulate(W, factory(), overrun="kill").guarantees == kill
    assert simulate(W, factory(), overrun="run").guarantees == run


def test_fcfs_order_checked_by_declaration_not_by_name():
    s = simulate(W, FCFS())
    swapped = {"start": [5, 0, 10], "end": [10, 5, 13]}
    renamed = dataclasses.replace(_with(s, **swapped), policy="my-scheduler")
    with pytest.raises(ValidationError, match="my-scheduler: job 2 .*fcfs-order"):
        validate(renamed)
    # called "fcfs" but declaring nothing: only the machine rules apply
    validate(dataclasses.replace(_with(s, **swapped), guarantees=frozenset()))


def test_promises_checked_only_under_a_declared_promise_kind():
    s = simulate(W, EASY())
    assert s.promises == {3: 5}
    late = _with(s, start=[0, 0, 6], end=[5, 5, 9])
    with pytest.raises(ValidationError, match="later than promised 5 .head-reservation"):
        validate(late)
    validate(dataclasses.replace(late, guarantees=frozenset()))


def test_arrival_reservation_needs_a_promise_for_every_job():
    s = simulate(W, Conservative())
    validate(s)
    assert set(s.promises) == {1, 2, 3}
    with pytest.raises(ValidationError, match="job 2 got no reservation at arrival"):
        validate(dataclasses.replace(s, promises={1: 0, 3: 5}))


def test_unknown_guarantee_is_an_error_not_ignored():
    s = simulate(W, FCFS())
    with pytest.raises(ValidationError, match="cannot check"):
        validate(dataclasses.replace(s, guarantees=frozenset({"fcfs-order", "fairness"})))
