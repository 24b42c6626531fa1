"""The insertion problem definition: validation, JSON, feasibility check and price."""

from __future__ import annotations

import json
import math

import pytest

from sim.problems import Infeasible, ensure_feasible
from sim.problems import insertion as ins
from sim.problems.insertion import (
    InsertionProblem,
    InsertionSchedule,
    NewJob,
    RunningJob,
    WaitingJob,
)


def small_problem(**kw) -> InsertionProblem:
    """4 processors; one running job (2 procs until 10); two waiting jobs."""
    args = dict(
        now=0,
        capacity=4,
        running=(RunningJob(1, 2, 10),),
        waiting=(
            WaitingJob(id=2, n=2, t=5, te=0, s=6.0, s0=8.0, p=0.5, arrival=0),
            WaitingJob(id=3, n=4, t=3, te=10, s=math.inf, s0=math.inf, p=0.25, arrival=0),
        ),
        new=NewJob(id=4, n=2, t=4, p=0.5, arrival=0),
    )
    args.update(kw)
    return InsertionProblem(**args)


def test_price_follows_the_paper_formula():
    pb = small_problem()
    # new job at 5 (after job 2), job 2 stays, job 3 delayed by 2 s
    sch = InsertionSchedule(5, {2: 0, 3: 12})
    # (5 - 0) * 2  +  cost(job 3) = 4 * 2 * (0.25/0.5) * (inf/inf -> 1) = 4
    assert ins.objective(pb, sch) == pytest.approx(5 * 2 + 4 * 2 * 0.5)
    assert ins.moved(pb, sch) == 1
    # moving job 2 later by 3 s: n * t * (p ratio 1) * (s0/s = 8/6)
    sch2 = InsertionSchedule(0, {2: 3, 3: 12})
    assert ins.job_cost(pb, pb.job(2), 3) == pytest.approx(2 * 3 * 1.0 * (8 / 6))
    assert ins.objective(pb, sch2) == pytest.approx(0 + 2 * 3 * 8 / 6 + 4)


def test_alphas_enter_as_exponents():
    pb = small_problem(alpha_u=0.5, alpha_t=0.5, alpha_p=1.0, alpha_f=0.5)
    sch = InsertionSchedule(5, {2: 3, 3: 12})
    expect = (5 ** 0.5 * 2 ** 0.5
              + 2 ** 0.5 * 3 ** 0.5 * 1.0 * (8 / 6) ** 0.5
              + 4 ** 0.5 * 2 ** 0.5 * 0.5 * 1.0)
    assert ins.objective(pb, sch) == pytest.approx(expect)


def test_moving_earlier_costs_negative_and_beyond_slack_is_infinite():
    pb = small_problem()
    w3 = pb.job(3)
    assert ins.job_cost(pb, w3, 8) == pytest.approx(-4 * 2 * 0.5)
    assert ins.job_cost(pb, w3, 10) == 0.0
    w2 = pb.job(2)
    assert ins.job_cost(pb, w2, 6) == pytest.approx(2 * 6 * 8 / 6)
    assert ins.job_cost(pb, w2, 7) == math.inf
    assert ins.objective(pb, InsertionSchedule(5, {2: 7, 3: 10})) == math.inf


def test_zero_delay_costs_zero_even_with_alpha_t_zero():
    pb = small_problem(alpha_t=0.0)
    assert ins.objective(pb, InsertionSchedule(0, {2: 0, 3: 10})) == 0.0
    assert ins.objective(pb, InsertionSchedule(3, {2: 0, 3: 10})) == pytest.approx(2.0)


def test_open_choices_p_floor_and_slack_floor():
    # p_j = 0 is clamped at p_floor: delaying a p=0.5 job costs 0.5/0.01 = 50x its n*t
    pb = small_problem(new=NewJob(4, 2, 4, 0.0, 0))
    assert ins.job_cost(pb, pb.job(3), 11) == pytest.approx(4 * 1 * 0.25 / 0.01)
    pb2 = small_problem(new=NewJob(4, 2, 4, 0.0, 0), p_floor=0.05)
    assert ins.job_cost(pb2, pb2.job(3), 11) == pytest.approx(4 * 0.25 / 0.05)
    # slack used up: ratio s0 / slack_floor; equal s and s0 (even 0/0): ratio 1
    w = WaitingJob(2, 2, 5, 0, 0.0, 8.0, 0.5, 0)
    pb3 = small_problem(waiting=(w,))
    assert ins.job_cost(pb3, w, 0) == 0.0
    pb3b = small_problem(waiting=(replace_te(w, 3),))
    assert ins.job_cost(pb3b, pb3b.job(2), 1) == pytest.approx(-2 * 2 * 1.0 * 8 / 1.0)
    pb3c = small_problem(waiting=(replace_te(w, 3),), slack_floor=4.0)
    assert ins.job_cost(pb3c, pb3c.job(2), 1) == pytest.approx(-2 * 2 * 8 / 4.0)
    z = WaitingJob(2, 2, 5, 3, 0.0, 0.0, 0.5, 0)
    pb4 = small_problem(waiting=(z,))
    assert ins.job_cost(pb4, z, 1) == pytest.approx(-2 * 2)


def replace_te(w: WaitingJob, te: int) -> WaitingJob:
    return WaitingJob(w.id, w.n, w.t, te, w.s, w.s0, w.p, w.arrival)


def test_dummy_job_of_remove_has_no_term_and_priority_one():
    pb = small_problem(new=None, running=())  # the running job left early
    sch = InsertionSchedule(None, {2: 0, 3: 5})
    # only job 3 moved 5 s earlier: n * t * max(p, floor) / 1
    assert ins.objective(pb, sch) == pytest.approx(-4 * 5 * 0.25)
    assert ins.check(pb, sch) == []
    with pytest.raises(Infeasible, match="no new job"):
        ensure_feasible(pb, InsertionSchedule(0, {2: 0, 3: 10}))


def test_check_accepts_feasible_and_rejects_each_violation():
    pb = small_problem()
    # 2+2 procs on [5,9), then job 3
    assert ins.check(pb, InsertionSchedule(5, {2: 0, 3: 10})) == []
    with pytest.raises(Infeasible, match="capacity"):
        ensure_feasible(pb, InsertionSchedule(8, {2: 0, 3: 10}))  # new job overlaps job 3 (4 procs)
    with pytest.raises(Infeasible, match="capacity"):
        ensure_feasible(pb, InsertionSchedule(0, {2: 0, 3: 10}))  # 2 running + 2 + 2 > 4
    with pytest.raises(Infeasible, match="slack"):
        ensure_feasible(pb, InsertionSchedule(0, {2: 7, 3: 12}))
    with pytest.raises(Infeasible, match="before now"):
        ensure_feasible(small_problem(now=0), InsertionSchedule(-1, {2: 0, 3: 10}))
    with pytest.raises(Infeasible, match="no start"):
        ensure_feasible(pb, InsertionSchedule(5, {2: 0}))
    with pytest.raises(Infeasible, match="unknown"):
        ensure_feasible(pb, InsertionSchedule(5, {2: 0, 3: 10, 99: 0}))
    assert ins.check(pb, InsertionSchedule(0, {2: 0, 3: 10}))


def test_current_schedule_apply_and_profile():
    pb = small_problem()
    cur = ins.current_schedule(pb)
    # job 3 needs all 4 procs on [10, 13); the new job fits next to job 2 only from 5
    assert cur.new_start == 5
    assert ins.check(pb, cur) == []
    after = ins.apply(pb, InsertionSchedule(5, {2: 2, 3: 8}))
    assert [(w.te, w.s) for w in after] == [(2, 4.0), (8, math.inf)]
    prof = ins.profile_of(pb)
    assert prof.free_at(0) == (2,) and prof.free_at(10) == (4,)
    prof2 = ins.profile_of(pb, include_waiting=True)
    assert prof2.free_at(0) == (0,) and prof2.free_at(11) == (0,) and prof2.free_at(13) == (4,)


def test_horizon_bounds_the_current_schedule():
    pb = small_problem()
    assert ins.horizon(pb) == 13 + 5 + 3 + 4


def test_json_round_trip_including_infinite_slack(tmp_path):
    pb = small_problem(alpha_f=0.5, p_floor=0.02)
    d = pb.to_dict()
    assert d["problem"] == "slack_insertion"
    assert d["waiting"][1]["s"] == "inf"
    text = json.dumps(d)
    back = ins.from_dict(json.loads(text))
    assert back == pb
    path = tmp_path / "p.json"
    pb.dump(path)
    assert ins.load(path) == pb
    removal = small_problem(new=None)
    assert ins.from_dict(removal.to_dict()) == removal


def test_registry_loader():
    from sim import registry

    fam, pb = registry.load_problem(small_problem().to_dict(), "x.json")
    assert fam == "slack_insertion" and pb == small_problem()


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d["waiting"][0].update(s=-1), r"field 'waiting\[0\]\.s' must be >= 0"),
        (lambda d: d.update(alpha_p=1.5), "alpha_p' must be <= 1"),
        (lambda d: d.update(alpha_u=-0.1), "alpha_u' must be >= 0"),
        (lambda d: d["new"].update(n=5), r"new \(job 4\): n=5 exceeds capacity 4"),
        (lambda d: d["waiting"][1].update(n=9), r"waiting\[1\].*n=9 exceeds capacity"),
        (lambda d: d["waiting"][0].update(te=-3), r"waiting\[0\].*te=-3 is before now"),
        (lambda d: d["running"][0].update(end=0), r"running\[0\].*end=0 must be > now"),
        (lambda d: d["waiting"][0].pop("p"), r"field 'waiting\[0\]': missing key 'p'"),
        (lambda d: d["waiting"][0].update(q=1), r"field 'waiting\[0\]': unknown key"),
        (lambda d: d.update(extra=1), r"unknown key\(s\) \['extra'\]"),
        (lambda d: d.pop("now"), "missing key 'now'"),
        (lambda d: d.update(problem="other"), "field 'problem'"),
        (lambda d: d["waiting"][0].update(t="abc"), r"waiting\[0\]\.t' must be an integer"),
        (lambda d: d["waiting"][0].update(p=2), r"waiting\[0\]\.p' must be <= 1"),
        (lambda d: d["waiting"][0].update(s="inf"), "both finite or both infinite"),
        (lambda d: d["waiting"][1].update(id=2), "duplicate job id 2"),
        (lambda d: d["waiting"][1].update(te=2), "current schedule"),
        (lambda d: d.update(waiting={}), "'waiting' must be a list"),
        (lambda d: d.update(problem=[1]), "field 'problem' must be 'slack_insertion'"),
        (lambda d: d["waiting"][0].update(te=10**400), r"waiting\[0\]\.te' must be <= .*\.\.\.$"),
        (lambda d: d.update(alpha_t=float("nan")), "alpha_t' must be a number"),
    ],
)
def test_bad_input_names_the_field(mutate, match):
    d = small_problem().to_dict()
    mutate(d)
    with pytest.raises(ValueError, match=match) as e:
        ins.from_dict(d, source="bad.json")
    assert "bad.json" in str(e.value)


def test_malformed_json_names_the_source(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: line 1: invalid JSON"):
        ins.load(bad)
