"""The fast slot search (``heuristics.slack_fast``) against the reference and main's schedules.

``insert(..., fast=True)`` (the default) must return exactly the candidate of the
Profile-based reference search (``fast=False``): same slot, compress order, starts,
price and moved count, for every order, both compress readings and both ``delay_from``
choices, on random problems and on the bundled KTH snapshots. Whole simulations must
reproduce main's start arrays (``tests/batch/data/slack_starts_main.json``, made by main
at the commit it names) bit for bit. The fast path skips the capacity checks of
``sim.profile.Profile``; every schedule it returns is re-checked here with the problem's
own ``check`` and priced with its own ``price``.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from heuristics.slack import EXHAUSTIVE, ORDERS, Inserter, SlackPolicy, candidates, insert
from instances.months import split_months
from instances.priorities import priorities_of
from sim.batch.machine import simulate
from sim.batch.runner import load_workload
from sim.batch.slack_scheduler import SlackScheduler
from sim.batch.validate import validate
from sim.experiments.talby.speed import start_hash
from sim.problems.insertion import (
    InsertionProblem,
    InsertionSchedule,
    NewJob,
    RunningJob,
    WaitingJob,
    best,
    check,
    load,
    moved,
    objective,
    random_problem,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((Path(__file__).parent / "data" / "slack_starts_main.json").read_text())
SNAPSHOTS = sorted((ROOT / "instances" / "data" / "slack_snapshots").glob("*.json"))
ALPHAS = [{}, {"alpha_t": 0.5}, {"alpha_u": 0.0, "alpha_p": 0.3}, {"alpha_f": 0.0}]


def _problems(count: int, k: int, **kw):
    for seed in range(count):
        pb = random_problem(seed, k=k, new=seed % 3 != 0, **kw)
        yield pb.with_alphas(**ALPHAS[seed % len(ALPHAS)])


def _same(problem: InsertionProblem, order: str, **opts) -> None:
    ref = insert(problem, order, fast=False, **opts)
    fast = insert(problem, order, **opts)
    assert fast == ref, (order, opts, problem.to_dict())
    assert check(problem, fast.schedule) == []  # the checked definition accepts it
    assert fast.price == objective(problem, fast.schedule)


@pytest.mark.parametrize("compress", ["hold", "list"])
@pytest.mark.parametrize("delay_from", ["start", "overlap"])
@pytest.mark.parametrize("order", ORDERS)
def test_fast_equals_reference_on_random_problems(order, delay_from, compress):
    # loose queues, tight ones (gap 0: many equal starts, price ties) and small machines
    for pb in (*_problems(40, 6), *_problems(20, 9, gap=0, capacity=4),
               *_problems(10, 14, max_slack=30.0)):
        _same(pb, order, delay_from=delay_from, compress=compress)


@pytest.mark.parametrize("compress", ["hold", "list"])
@pytest.mark.parametrize("delay_from", ["start", "overlap"])
def test_fast_equals_reference_exhaustive(delay_from, compress):
    for pb in _problems(15, 5, gap=0, capacity=4):
        _same(pb, EXHAUSTIVE, delay_from=delay_from, compress=compress)


def test_fast_equals_reference_on_exact_ties():
    """Identical jobs and integral weights: many candidates tie on price exactly."""
    for seed in range(30):
        pb = random_problem(seed, k=6, capacity=4, max_t=3, gap=0, inf_slack=0.0,
                            new=seed % 2 == 0)
        same = tuple(replace(w, n=2, t=2, p=0.5, s=8.0, s0=8.0) for w in pb.waiting)
        try:
            pb = replace(pb, waiting=same)
        except ValueError:
            continue  # the widened jobs no longer fit their old starts
        for order in ORDERS:
            _same(pb, order)


def test_fast_picks_the_definitions_best_candidate():
    """The fast choice is the definition's best (``sim.problems.insertion.best``: lowest
    price, ties to the fewest moved) of every candidate the Profile-based search
    enumerates (``candidates``, each re-checked and priced by the problem's own code)."""
    for pb in _problems(30, 6):
        for order in ORDERS:
            cands = list(candidates(pb, order))
            for c in cands:
                assert check(pb, c.schedule) == []
            chosen = insert(pb, order)
            ref = best(pb, [c.schedule for c in cands])
            assert chosen.price == pytest.approx(objective(pb, ref), rel=1e-9, abs=1e-9)
            assert chosen.moved == moved(pb, ref)


def test_fast_stops_like_the_reference():
    """``stop`` is asked every 64 candidates on both paths, which then keep the same best."""
    pb = random_problem(3, k=10, gap=0)
    got = [insert(pb, EXHAUSTIVE, max_exhaustive=10, stop=lambda: True, fast=fast)
           for fast in (True, False)]
    assert got[0] == got[1] and got[0].stopped
    for new in (True, False):  # the fast path refuses like the reference, remove included
        for fast in (True, False):
            with pytest.raises(ValueError, match="max_exhaustive=3"):
                insert(random_problem(1, k=6, gap=0, new=new), EXHAUSTIVE, max_exhaustive=3,
                       fast=fast)


def test_fast_equals_reference_on_kth_snapshots():
    """The 284 insert and remove problems recorded on the KTH months (queues up to 65)."""
    assert len(SNAPSHOTS) > 200
    for f in SNAPSHOTS[::3]:
        pb = load(f)
        for order in ORDERS:
            _same(pb, order)
        _same(pb, "AST", compress="list")
        _same(pb, "DU", delay_from="overlap")


def _kth_months() -> dict[str, object]:
    return dict(split_months(load_workload("KTH-SP2", procs=128)))


@pytest.fixture(scope="module")
def kth_months():
    return _kth_months()


@pytest.mark.parametrize("compress", ["hold", "list"])
@pytest.mark.parametrize("order", ORDERS)
def test_kth_months_match_main(kth_months, order, compress):
    """Two KTH months (1996-11 and 1997-08) start every job exactly where main did."""
    for label in ("1996-11", "1997-08"):
        month = kth_months[label]
        s = simulate(month, SlackPolicy(order=order, compress=compress))
        want = FIXTURE["starts"][f"{order}-{compress}-{label}"]
        assert len(s.start) == want["jobs"]
        assert start_hash(s.start) == want["sha256"], (order, compress, label)


def test_reference_path_in_the_scheduler_gives_the_same_month(kth_months):
    """The scheduler with the reference search and with the checked schedule on every
    decision (``check=True``) reproduces the fast path's month, validated."""
    month = kth_months["1997-08"]
    fast = simulate(month, SlackPolicy(order="AST"))
    ref = simulate(month, SlackScheduler(Inserter("AST", fast=False), check=True,
                                         name="slack-AST"))
    checked = simulate(month, SlackPolicy(order="AST", check=True))
    assert np.array_equal(fast.start, ref.start)
    assert np.array_equal(fast.start, checked.start)
    validate(fast)


@pytest.mark.slow
@pytest.mark.parametrize("compress", ["hold", "list"])
@pytest.mark.parametrize("order", ORDERS)
def test_kth_year_and_every_month_match_main(kth_months, order, compress):
    w = load_workload("KTH-SP2", procs=128)
    s = simulate(w, SlackPolicy(order=order, compress=compress))
    assert start_hash(s.start) == FIXTURE["starts"][f"{order}-{compress}-year"]["sha256"]
    for label, month in kth_months.items():
        s = simulate(month, SlackPolicy(order=order, compress=compress))
        assert start_hash(s.start) == FIXTURE["starts"][f"{order}-{compress}-{label}"]["sha256"]


@pytest.mark.slow
@pytest.mark.parametrize("priorities,sf", [("fifth", 3.0), (None, 1.0), (None, 9.0)])
def test_talby_settings_match_reference(priorities, sf):
    """Settings of Talby tables 2-4 (SF 1 and 9, every fifth job high priority), each
    month from an empty machine: the fast search schedules as the reference search."""
    w = load_workload("KTH-SP2", procs=128)
    table = None if priorities is None else priorities_of(w, priorities)
    for _, month in split_months(w):
        fast = simulate(month, SlackPolicy(order="AST", sf=sf, priorities=table))
        ref = simulate(month, SlackScheduler(Inserter("AST", fast=False), sf=sf,
                                             priorities=table))
        assert np.array_equal(fast.start, ref.start)


# ------------------------------------------------------------ the checks keep their teeth
@pytest.mark.parametrize("field,value,match", [
    ("n", True, "must be an integer"),
    ("n", 0, "must be >= 1"),
    ("t", 2.5, "must be an integer"),
    ("te", float("nan"), "must be an integer"),
    ("s", -1.0, "must be >= 0"),
    ("s", float("nan"), "must be a number"),
    ("p", 1.5, "must be <= 1"),
    ("p", float("inf"), "must be finite"),
    ("arrival", "3", "must be an integer"),
])
def test_waiting_job_checks_still_reject(field, value, match):
    good = {"id": 1, "n": 2, "t": 3, "te": 5, "s": 4.0, "s0": 4.0, "p": 0.5, "arrival": 0}
    with pytest.raises(ValueError, match=match):
        WaitingJob(**{**good, field: value})


def test_checks_still_convert_non_canonical_values():
    w = WaitingJob(id=1, n=2.0, t=3, te=5, s=4, s0=4, p=1, arrival=0)
    assert (type(w.n), type(w.s), type(w.p)) == (int, float, float)
    r = RunningJob(id=2, n=1, end=7.0)
    assert type(r.end) is int
    j = NewJob(id=3, n=1, t=2, p=0, arrival=0)
    assert type(j.p) is float
    pb = InsertionProblem(now=0.0, capacity=4.0, running=(r,), waiting=(w,), new=j,
                          alpha_t=1, slack_floor=1)
    assert (type(pb.now), type(pb.capacity), type(pb.alpha_t), type(pb.slack_floor)) == \
        (int, int, float, float)
    sched = InsertionSchedule(new_start=7.0, starts={1.0: 5})
    assert sched.new_start == 7 and list(sched.starts) == [1] and type(sched.new_start) is int
    with pytest.raises(ValueError, match="must be an integer"):
        InsertionSchedule(new_start=None, starts={1: True})


@pytest.mark.parametrize("change,match", [
    ({"capacity": 1}, "exceeds capacity"),
    ({"now": 6}, "before now"),
    ({"running": (RunningJob(1, 1, 9),)}, "duplicate job id 1"),
    ({"running": (RunningJob(9, 1, 0),)}, "must be > now"),
    ({"new": NewJob(1, 1, 1, 0.5, 0)}, "duplicate job id 1"),
    ({"new": NewJob(8, 1, 1, 0.5, 4)}, "is after now"),
    ({"alpha_u": 1.5}, "alpha_u"),
    ({"p_floor": 0.0}, "p_floor"),
    ({"slack_floor": math.inf}, "slack_floor"),
    ({"waiting": (WaitingJob(1, 2, 3, 0, 4.0, 4.0, 0.5, 0),
                  WaitingJob(2, 2, 3, 1, 4.0, 4.0, 0.5, 0))}, "exceeds the capacity at job 2"),
])
def test_problem_checks_still_name_the_fault(change, match):
    good = {"now": 0, "capacity": 3,
            "waiting": (WaitingJob(1, 2, 3, 5, 4.0, 4.0, 0.5, 0),), "new": None}
    with pytest.raises(ValueError, match=match):
        InsertionProblem(**{**good, **change})
