"""The sweep's priority scenarios: a per-job table of the whole trace, given to the slack
policies and to the metrics, hashed into ``workload_sha256``, recorded by scheme name."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from heuristics.slack import SlackPolicy
from instances.months import split_months
from instances.priorities import is_high_priority
from sim.batch.machine import simulate
from sim.batch.runner import load_workload
from sim.sweep.cell import build_workload, run_cell

MONTH = "1996-10"  # not the first month: its positions in the log do not start at 0


def _cell(policy: str, scheme: str | None, **extra):
    return {"trace": "KTH-SP2", "procs": 128, "wide": "error", "month": MONTH,
            "max_jobs": 60, "priorities": scheme,
            "priority_high": None if scheme is None else 1.0, "policy": policy,
            "options": {}, **extra}


@pytest.fixture(scope="module")
def kth():
    w = load_workload("KTH-SP2", procs=128)
    # UP = PP by position over the whole log, written out here independently
    fifth = {j.id: 1.0 if pos % 5 == 4 else 0.0 for pos, j in enumerate(w.jobs)}
    month = dict(split_months(w))[MONTH]
    return w, fifth, month


def _expected_sha(month, ups):
    """The checksum format of the committed stores: capacity, then per job
    ``repr((id, submit, runtime, requested, demand, UP, PP))``."""
    jobs = month.jobs[:60]
    h = hashlib.sha256(repr(month.capacity).encode())
    for j in jobs:
        up = None if ups is None else ups[j.id]
        h.update(repr((j.id, j.submit, j.runtime, j.requested, j.demand, up, up)).encode())
    return h.hexdigest()


def test_workload_checksum_hashes_the_table_in_the_stored_format(kth):
    _, fifth, month = kth
    assert build_workload(_cell("slack", "fifth"))[1]["workload_sha256"] == \
        _expected_sha(month, fifth)
    equal = dict.fromkeys(fifth, 0.0)
    assert build_workload(_cell("slack", "equal"))[1]["workload_sha256"] == \
        _expected_sha(month, equal)
    assert build_workload(_cell("slack", None))[1]["workload_sha256"] == \
        _expected_sha(month, None)
    high = {jid: 0.5 if v == 1.0 else v for jid, v in fifth.items()}
    assert build_workload(_cell("slack", "fifth", priority_high=0.5))[1]["workload_sha256"] \
        == _expected_sha(month, high)


def test_slack_cell_uses_the_global_table_and_records_the_scheme(kth):
    w, fifth, month = kth
    row = run_cell(_cell("slack", "fifth", options={"order": "AST"}))
    assert row["status"] == "done", row["error"]
    cfg = row["policy_config"]
    assert cfg["priorities"] == "fifth" and cfg["priority_high"] == 1.0
    assert not any(isinstance(v, dict) for v in cfg.values())  # never the table
    # the same month simulated directly with the table of the whole log
    jobs = month.jobs[:60]
    part = type(month)(jobs, month.capacity)
    table = {jid: (v, v) for jid, v in fifth.items()}
    direct = simulate(part, SlackPolicy(order="AST", priorities=table))
    wait = direct.start - np.array([j.submit for j in jobs])
    m = row["metrics"]
    assert m["avg_wait"] == pytest.approx(float(wait.mean()))
    high = np.array([fifth[j.id] == 1.0 for j in jobs])
    pos = {j.id: p for p, j in enumerate(w.jobs)}
    assert high.sum() == sum(is_high_priority(pos[j.id]) for j in jobs) == m["jobs_high"]
    assert m["avg_wait_high"] == pytest.approx(float(wait[high].mean()))
    assert m["avg_wait_low"] == pytest.approx(float(wait[~high].mean()))


def test_policies_without_priorities_get_groups_but_no_table():
    row = run_cell(_cell("conservative", "fifth"))
    assert row["status"] == "done", row["error"]
    assert "priorities" not in row["policy_config"]
    assert row["metrics"]["jobs_high"] > 0 and row["metrics"]["avg_wait_low"] is not None
    plain = run_cell(_cell("conservative", None))
    assert "jobs_high" not in plain["metrics"]
    assert plain["metrics"]["avg_wait"] == row["metrics"]["avg_wait"]


def test_priorities_as_a_policy_option_is_refused():
    row = run_cell(_cell("slack", "fifth", options={"priorities": {1: (1.0, 1.0)}}))
    assert row["status"] == "failed" and "workload's 'priorities'" in row["error"]


def test_both_slack_policies_take_the_table_and_the_runner_passes_it_only_to_them():
    import math

    from sim.batch.runner import run
    from sim.registry import make_policy, policy_spec

    assert policy_spec("slack").takes_priorities
    assert policy_spec("slack-optimal").takes_priorities
    assert not policy_spec("conservative").takes_priorities
    assert not policy_spec("easy").takes_priorities
    table = {7: (1.0, -math.inf)}
    assert make_policy("slack-optimal", priorities=table).priorities == table
    with pytest.raises(ValueError, match="job 7: UP"):
        make_policy("slack-optimal", priorities={7: (2.0, 0.0)})
    from instances.synthetic import random_workload

    w = random_workload(40, (16,), seed=3, load=0.9)
    easy = policy_spec("easy")
    row = run(w, easy, priorities="fifth")  # ignored by a policy that takes none
    assert row["avg_wait"] == run(w, easy)["avg_wait"]
    assert "priorities" not in row["policy_config"]
