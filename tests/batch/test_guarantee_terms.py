"""The slack bound and selective reservation are checked from the schedule and the job
data under the terms the policy declares (``guarantee_terms()``), not from its promises:
a policy that declares either and breaks it is invalid whatever it promises, one that
declares either without its terms is an error, and the built-in policies pass
(``sim.batch.evidence``)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from heuristics.selective import SelectiveReservation
from heuristics.slack import SlackPolicy
from instances.job import Job, Workload
from sim.batch.evidence import (
    adaptive_due,
    adaptive_reservation_error,
    reservation_error,
    slack_bound_error,
)
from sim.batch.machine import simulate
from sim.batch.validate import ValidationError, validate
from tests.batch.test_guarantee_evidence import Greedy, W


class Declaring(Greedy):
    """:class:`Greedy` (no reservation at all) declaring ``kinds`` under ``terms`` and
    promising every job a start it keeps (10**9)."""

    def __init__(self, kinds: frozenset[str], terms: dict | None) -> None:
        super().__init__(kinds, promise=10**9)
        self.terms = terms

    def guarantee_terms(self) -> dict:
        return {} if self.terms is None else self.terms


def test_a_broken_slack_bound_is_caught_though_every_promise_is_kept():
    # job 2 arrives at t=1: job 1 runs until 10, nothing waits, so it is placed by 10 + 5
    # (the horizon) and may wait max_slack = 3 s more: start 22 > 18
    s = simulate(W, Declaring(frozenset({"slack-bound"}),
                              {"slack-bound": {"max_slack": 3.0, "unbounded": []}}))
    assert s.start.tolist() == [0, 22, 2]
    with pytest.raises(ValidationError, match=r"liar: job 2 starts at 22, later than 18, "
                       r"the latest start its slack allows.*t=1.*slack-bound"):
        validate(s)
    free = simulate(W, Declaring(frozenset({"slack-bound"}),
                                 {"slack-bound": {"max_slack": 3.0, "unbounded": [2]}}))
    validate(free)  # job 2's slack is infinite: no bound


def test_a_broken_selective_reservation_is_caught_though_every_promise_is_kept():
    # threshold 1: job 2 gets its reservation at its arrival (t=1), at most 10 (job 1's end)
    s = simulate(W, Declaring(frozenset({"reservation"}),
                              {"reservation": {"threshold": 1.0}}))
    with pytest.raises(ValidationError, match=r"liar: job 2 starts at 22, after 10, the "
                       r"latest reservation .*reached 1 \(t=1\).*\(reservation\)"):
        validate(s)
    # threshold 5: job 2 reaches it at 1 + 4 * 5 = 21 and starts at 22, after job 3's
    # estimated end (22): a reservation at 22 is kept
    validate(simulate(W, Declaring(frozenset({"reservation"}),
                                   {"reservation": {"threshold": 5.0}})))


def test_a_broken_adaptive_reservation_is_caught_though_every_promise_is_kept():
    # Selective-Adaptive: job 1 started at 0 with expansion factor 1, so job 2 (of the
    # same category) reaches the running mean 1 at its arrival (t=1): a reservation by 10
    s = simulate(W, Declaring(frozenset({"reservation"}),
                              {"reservation": {"threshold": 5.0, "adaptive": True}}))
    with pytest.raises(ValidationError, match=r"liar: job 2 starts at 22, after 10, the "
                       r"latest reservation .*running mean \(t=1\).*\(reservation\)"):
        validate(s)


def test_the_adaptive_threshold_is_each_categorys_running_mean_of_the_schedule():
    # job 1 short narrow, started at once (factor 1); job 2 long narrow, started at 100
    # (factor 1.025); job 3 short narrow, waiting from 5 to 50; fixed threshold 3
    w = Workload((Job(1, 0, 10, 10, (1,)), Job(2, 0, 4000, 4000, (1,)),
                  Job(3, 5, 10, 10, (1,))), (16,))
    start = np.array([0, 100, 50])
    # strict: job 3's category mean is 1 from t=1 (job 1), so it is due at its arrival;
    # jobs 1 and 2 start before reaching 3 (due at 20 and 8000)
    assert adaptive_due(w, start, 3.0).tolist() == [math.inf, math.inf, 5]
    # inclusive: a job's own start counts at its start instant (due there, bound = start)
    assert adaptive_due(w, start, 3.0, inclusive=True).tolist() == [0, 100, 5]


@pytest.mark.parametrize("kind", ["slack-bound", "reservation"])
@pytest.mark.parametrize("terms", [None, {"other": {}}])
def test_a_parametrised_guarantee_declared_without_its_terms_is_an_error(kind, terms):
    s = simulate(W, Declaring(frozenset({kind}), terms))
    with pytest.raises(ValidationError, match=f"declares {kind} without its terms"):
        validate(s)


@pytest.mark.parametrize(("kind", "terms", "what"), [
    ("slack-bound", {"max_slack": -1}, "max_slack"),
    ("slack-bound", {"max_slack": math.inf}, "max_slack"),
    ("slack-bound", {"max_slack": 1, "unbounded": ["x"]}, "unbounded"),
    ("slack-bound", {"max_slack": 1, "placement": "anywhere"}, "placement"),
    ("reservation", {"threshold": 0.5}, "threshold"),
    ("reservation", {"threshold": "2"}, "threshold"),
    ("reservation", {"threshold": 2, "adaptive": "yes"}, "adaptive"),
])
def test_terms_that_bound_nothing_are_refused_by_name(kind, terms, what):
    s = simulate(W, Declaring(frozenset({kind}), {kind: terms}))
    with pytest.raises(ValidationError, match=f"{what}"):
        validate(s)


def _random_workload(rng: np.random.Generator, K: int) -> Workload:
    cap = tuple(int(c) for c in rng.integers(2, 9, K))
    jobs, t = [], 0
    for i in range(int(rng.integers(2, 30))):
        t += int(rng.integers(0, 5))
        req = int(rng.integers(1, 12))
        run = int(rng.integers(0, req + 1))
        jobs.append(Job(i + 1, t, run, req, tuple(int(rng.integers(1, c + 1)) for c in cap)))
    return Workload(tuple(jobs), cap)


def test_the_built_in_policies_keep_the_recomputed_bounds_on_random_workloads():
    """Ties, zero lengths, early ends, several resources (selective), over-quota jobs
    (slack): the recomputed bounds never reject the built-in policies."""
    rng = np.random.default_rng(11)
    for _ in range(80):
        w = _random_workload(rng, int(rng.integers(1, 3)))
        for thr in (1.0, 1.5, 2.0, 4.0):
            for select in ("ff", "bb"):
                s = simulate(w, SelectiveReservation(threshold=thr, select=select))
                assert reservation_error(w, s.start, s.end, "p", thr) is None, (thr, select)
                assert reservation_error(w, s.start, s.end, "p", thr, s.promises) is None
                validate(s)
        if w.K == 1:
            pr = {j.id: (float(rng.random()), -math.inf if rng.random() < 0.2 else 0.5)
                  for j in w.jobs}
            for kw in ({}, {"order": "DP", "sf": 0.01, "awt": 1.0},
                       {"sf": 0.0, "priorities": pr}, {"sf": 0.5, "awt": 3.0, "priorities": pr}):
                s = simulate(w, SlackPolicy(**kw))
                terms = s.terms["slack-bound"]
                assert terms.get("placement") == "breakpoint"  # the slot search
                for promises in (None, s.promises):
                    for breakpoint in (False, True):
                        assert slack_bound_error(
                            w, s.start, s.end, "p", terms["max_slack"],
                            frozenset(terms["unbounded"]), promises, breakpoint) is None
                validate(s)


def test_selective_adaptive_keeps_the_recomputed_bounds_on_random_workloads():
    """Every category (short and long requests, narrow and wide jobs), ties, zero
    lengths and early ends: the recomputed running means never reject the policy."""
    rng = np.random.default_rng(12)
    for _ in range(60):
        cap = int(rng.integers(9, 33))
        jobs, t = [], 0
        for i in range(int(rng.integers(2, 40))):
            t += int(rng.integers(0, 1200))
            req = int(rng.choice([rng.integers(1, 3600), rng.integers(3601, 9000)]))
            run = int(rng.integers(0, req + 1))
            jobs.append(Job(i + 1, t, run, req, (int(rng.integers(1, cap + 1)),)))
        w = Workload(tuple(jobs), (cap,))
        for thr in (1.0, 1.5, 3.0):
            s = simulate(w, SelectiveReservation(threshold=thr, adaptive=True))
            assert adaptive_reservation_error(w, s.start, s.end, "p", thr) is None, thr
            validate(s)


def _bundled_head(n: int) -> Workload:
    from instances.bundled import trace_path
    from sim.batch.runner import load_workload

    w = load_workload(Path(trace_path("lublin_256")))
    return Workload(tuple(w.jobs[:n]), w.capacity)


@pytest.mark.parametrize("policy", [
    lambda: SlackPolicy(), lambda: SlackPolicy(order="DP", sf=0.1),
    lambda: SelectiveReservation(), lambda: SelectiveReservation(threshold=1.0),
    lambda: SelectiveReservation(threshold=4.0, select="bl"),
    lambda: SelectiveReservation(adaptive=True),
])
def test_the_built_in_policies_pass_on_a_bundled_trace(policy):
    w = _bundled_head(1500)
    s = simulate(w, policy())
    assert s.terms  # a parametrised guarantee, declared with its terms
    validate(s)


def test_the_recomputed_slack_bound_catches_a_starved_job_of_a_real_schedule():
    w = _bundled_head(400)
    s = simulate(w, SlackPolicy(sf=0.1))
    validate(s)
    late = s.start.copy()
    late[200] += 10**7  # one job starved: its own promise dropped too
    promises = {j: t for j, t in s.promises.items() if j != w.jobs[200].id}
    starved = dataclasses.replace(s, start=late, end=s.end + (late - s.start),
                                  promises=promises)
    with pytest.raises(ValidationError, match=f"job {w.jobs[200].id} starts at "
                       f"{late[200]}, later than"):
        validate(starved, check_promises=True)


def test_the_optimal_insertion_policy_is_held_to_its_horizon():
    """The exact inserter may place a new job anywhere within its insertion problem's
    horizon: it declares no ``placement`` and passes the horizon's bound."""
    from models.slack_insertion.policy import OptimalInsertionPolicy

    rng = np.random.default_rng(3)
    for _ in range(6):
        w = _random_workload(rng, 1)
        s = simulate(w, OptimalInsertionPolicy(sf=0.5, awt=3.0, time_limit=2.0))
        assert "placement" not in s.terms["slack-bound"]
        validate(s)
