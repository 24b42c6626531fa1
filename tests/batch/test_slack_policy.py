"""Slack-based priority scheduler: policy, inserters, priorities, snapshots."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from strategies import small_random_workload

from heuristics.slack import (
    COMPRESS,
    EXHAUSTIVE,
    ORDERS,
    Inserter,
    SlackPolicy,
    candidates,
    insert,
    solve,
)
from instances.job import Job, Workload
from instances.priorities import high_priority_ids, priorities_of
from sim import registry
from sim.batch.machine import simulate
from sim.batch.slack_scheduler import SlackScheduler
from sim.batch.validate import validate
from sim.problems.insertion import (
    InsertionProblem,
    NewJob,
    RunningJob,
    WaitingJob,
    check,
    from_dict,
    moved,
    objective,
)
from sim.result import Status


def random_problem(seed: int, k: int = 5, cap: int = 6, new: bool = True,
                   **alphas: float) -> InsertionProblem:
    """A feasible insertion problem: waiting jobs placed greedily at random offsets."""
    from sim.profile import Profile

    rng = random.Random(seed)
    now = 100
    running = []
    prof = Profile((cap,), now)
    for r in range(rng.randint(0, 3)):
        n = rng.randint(1, cap)
        if prof.fits(now, 1, (n,)):
            end = now + rng.randint(1, 80)
            prof.reserve(now, end - now, (n,))
            running.append(RunningJob(id=1000 + r, n=n, end=end))
    waiting = []
    for i in range(k):
        n, t = rng.randint(1, cap), rng.randint(1, 60)
        te = prof.earliest_start(t, (n,), now + rng.randint(0, 50))
        prof.reserve(te, t, (n,))
        s0 = rng.choice([0.0, 20.0, 100.0, 400.0, math.inf])
        s = s0 if math.isinf(s0) else rng.uniform(0, s0)
        waiting.append(WaitingJob(id=i, n=n, t=t, te=te, s=s, s0=s0,
                                  p=rng.choice([0.0, 0.2, 0.5, 1.0]), arrival=rng.randint(0, now)))
    nj = NewJob(id=99, n=rng.randint(1, cap), t=rng.randint(1, 60), p=rng.choice([0.1, 0.5, 1.0]),
                arrival=now) if new else None
    return InsertionProblem(now=now, capacity=cap, running=tuple(running),
                            waiting=tuple(waiting), new=nj, **alphas)


# ---------------------------------------------------------------------- priorities
def test_priorities_equal_and_fifth():
    w = small_random_workload(0, n=12)
    eq = priorities_of(w, "equal")
    assert eq == {j.id: (0.0, 0.0) for j in w.jobs}
    ff = priorities_of(w, "fifth")
    assert list(ff) == [j.id for j in w.jobs]  # one entry per job, in submit order
    high = [jid for jid, (up, pp) in ff.items() if up == 1.0]
    assert high == [w.jobs[4].id, w.jobs[9].id]
    assert all(pp == up for up, pp in ff.values())
    assert high_priority_ids(w) == set(high)
    # levels of the ordinary and the high-priority jobs
    ff2 = priorities_of(w, "fifth", level=0.25, high=0.75)
    assert {v for jid, v in ff2.items() if jid in high} == {(0.75, 0.75)}
    assert {v for jid, v in ff2.items() if jid not in high} == {(0.25, 0.25)}
    assert set(priorities_of(w, "equal", level=0.5, high=0.0).values()) == {(0.5, 0.5)}
    with pytest.raises(ValueError, match="priority scheme"):
        priorities_of(w, "half")
    with pytest.raises(ValueError, match="level"):
        priorities_of(w, "equal", level=2.0)
    with pytest.raises(ValueError, match="high"):
        priorities_of(w, "fifth", high=-0.1)


def test_priority_table_is_validated_and_copied():
    def build(table):
        return SlackPolicy(priorities=table)

    for bad, match in (({1: (1.5, 0.0)}, "job 1: UP"), ({2: (0.0, 2.0)}, "job 2: PP"),
                       ({3: (-math.inf, 0.0)}, "job 3: UP"), ({4: (0.5,)}, "job 4"),
                       ([(1, 0.0)], "mapping")):
        with pytest.raises(ValueError, match=match):
            build(bad)
    table = {1: (0.0, -math.inf)}  # over quota is allowed in PP
    pol = build(table)
    table[1] = (1.0, 1.0)
    assert pol.priorities == {1: (0.0, -math.inf)}


def test_priority_table_changes_the_schedule_and_unknown_ids_get_the_default():
    w = small_random_workload(2, n=70, gap=20)
    table = priorities_of(w, "fifth")
    with_table = simulate(w, SlackPolicy(order="AST", priorities=table))
    without = simulate(w, SlackPolicy(order="AST"))
    assert not np.array_equal(with_table.start, without.start)
    # a table that misses jobs: they get default_priority (0 here, as under "equal")
    ordinary = {jid: v for jid, v in table.items() if v == (0.0, 0.0)}
    assert len(ordinary) < len(table)
    partial = simulate(w, SlackPolicy(order="AST", priorities=ordinary))
    assert np.array_equal(partial.start, without.start)
    high_only = {jid: v for jid, v in table.items() if v == (1.0, 1.0)}
    assert np.array_equal(simulate(w, SlackPolicy(order="AST", priorities=high_only)).start,
                          with_table.start)


# ---------------------------------------------------------------------- inserters
def test_hand_example_delay_within_slack():
    # capacity 1; R runs until 10; A waits at 10 for 100 s; B (5 s) arrives at 0.
    def pb(slack: float) -> InsertionProblem:
        return InsertionProblem(
            now=0, capacity=1, running=(RunningJob(id=1, n=1, end=10),),
            waiting=(WaitingJob(id=2, n=1, t=100, te=10, s=slack, s0=slack, p=0.5, arrival=0),),
            new=NewJob(id=3, n=1, t=5, p=0.5, arrival=0))

    # enough slack: B goes first at 10 (price 10 for B + 5 for A's 5 s delay)
    c = insert(pb(1000.0), "AST")
    assert (c.ts, dict(c.schedule.starts), c.price, c.moved) == (10, {2: 15}, 15.0, 1)
    # 2 s of slack cannot absorb 5 s: B waits behind A
    c = insert(pb(2.0), "AST")
    assert (c.ts, dict(c.schedule.starts), c.price, c.moved) == (110, {2: 10}, 110.0, 0)


ALPHAS = ({}, {"alpha_t": 0.5, "alpha_u": 0.5}, {"alpha_p": 0.0, "alpha_u": 0.0},
          {"alpha_t": 0.0, "alpha_f": 0.3})


@pytest.mark.parametrize("delay_from", ["start", "overlap"])
@pytest.mark.parametrize("order", ORDERS + (EXHAUSTIVE,))
def test_chosen_candidate_is_feasible_and_cheapest(order, delay_from):
    for seed in range(25):
        problem = random_problem(seed, k=5, new=seed % 4 != 0, **ALPHAS[seed % len(ALPHAS)])
        cands = list(candidates(problem, order, delay_from=delay_from))
        assert cands, "the last slot always gives a candidate"
        for c in cands:
            assert check(problem, c.schedule) == []
            assert c.price == objective(problem, c.schedule)
            assert c.moved == moved(problem, c.schedule)
        best = insert(problem, order, delay_from=delay_from)
        assert check(problem, best.schedule) == []
        assert best.price == pytest.approx(min(c.price for c in cands), rel=1e-9, abs=1e-9)
        fewest = min(c.moved for c in cands if c.price == pytest.approx(best.price, rel=1e-9))
        assert best.moved == fewest


@pytest.mark.parametrize("delay_from", ["start", "overlap"])
def test_exhaustive_never_worse_than_any_order(delay_from):
    for seed in range(30):
        problem = random_problem(seed, k=6)
        ex = insert(problem, EXHAUSTIVE, delay_from=delay_from).price
        for order in ORDERS:
            p = insert(problem, order, delay_from=delay_from).price
            assert ex <= p + 1e-9 * max(1.0, abs(ex))


def test_bundled_snapshots_load_and_solve():
    from sim.experiments.talby.snapshots import snapshot_paths
    from sim.problems.insertion import load

    paths = snapshot_paths()
    assert len(paths) >= 200
    problems = [load(p) for p in paths]
    ks = [p.k for p in problems]
    assert min(ks) == 0 and max(ks) >= 40
    assert any(p.new is None for p in problems) and any(p.new is not None for p in problems)
    for p in problems[::9]:
        for order in ORDERS:
            assert check(p, insert(p, order).schedule) == []


def test_remove_never_raises_the_price():
    for seed in range(20):
        problem = random_problem(seed, k=6, new=False)
        c = insert(problem, "AST")
        assert c.schedule.new_start is None
        assert c.price <= 0.0


def test_exhaustive_limit_is_a_clear_error():
    problem = random_problem(3, k=6)
    with pytest.raises(ValueError, match="max_exhaustive"):
        insert(problem, EXHAUSTIVE, max_exhaustive=2)
    with pytest.raises(ValueError, match="order must be one of"):
        Inserter("SJF")


def test_solve_wrappers_via_registry():
    problem = random_problem(7, k=5)
    for name in ORDERS + (EXHAUSTIVE,):
        res = registry.solver("slack_insertion", name)(problem, time_limit=5, seed=3)
        assert res.status is Status.FEASIBLE and res.bound is None and res.seed == 3
        sched = res.solution
        assert check(problem, sched) == []
        assert res.objective == objective(problem, sched)
        assert res.to_dict()["solver"] == name
    assert solve(problem, order="DU").objective == insert(problem, "DU").price


# ---------------------------------------------------------------------- policy
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("delay_from", ["start", "overlap"])
def test_policy_valid_and_slack_bound_kept(order, delay_from):
    w = small_random_workload(11, n=80, gap=25)
    pol = SlackPolicy(order=order, sf=1.0, awt=200.0, check=True, delay_from=delay_from,
                      priorities=priorities_of(w, "fifth"))
    sched = simulate(w, pol)
    validate(sched)  # capacity, run lengths, and the promises (slack bound)
    assert sched.promises, "finite slack gives every job a promise"
    for i, j in enumerate(w.jobs):
        assert sched.start[i] <= sched.promises[j.id]
    assert pol.n_insert == len(w.jobs)


@pytest.mark.parametrize("compress", COMPRESS)
def test_policy_exhaustive_small_queue(compress):
    # gap 150 s keeps the queue at most 8 deep under both compress readings
    w = small_random_workload(5, n=30, gap=150)
    sched = simulate(w, SlackPolicy(order=EXHAUSTIVE, check=True, max_exhaustive=8,
                                    compress=compress))
    validate(sched)


def test_policy_deterministic():
    w = small_random_workload(2, n=70, gap=20)
    a = simulate(w, SlackPolicy(order="DC", priorities=priorities_of(w, "fifth")))
    b = simulate(w, SlackPolicy(order="DC", priorities=priorities_of(w, "fifth")))
    assert np.array_equal(a.start, b.start) and a.promises == b.promises


def test_first_placement_recomputes_sp_and_slack():
    # an empty machine: the first job starts at once, so SP = 0 and s0 = (1 - 0) SF AWT
    jobs = (Job(id=1, submit=0, runtime=50, requested=100, demand=(4,)),
            Job(id=2, submit=1, runtime=10, requested=10, demand=(4,)))
    w = Workload(jobs, (4,))
    pol = SlackPolicy(sf=2.0, awt=1000.0)
    sched = simulate(w, pol)
    assert sched.promises[1] == 0 + 2000
    # job 2 is placed at 100 (behind running job 1's estimate): SP = 99 / 2000, p = SP / 3
    sp = 99 / 2000
    assert sched.promises[2] == math.floor(100 + (1 - sp / 3) * 2.0 * 1000.0)
    assert list(sched.start) == [0, 50]  # job 1 ended early: job 2 moved up
    # without the reset the job keeps the slack of SP = 1/2
    sched = simulate(w, SlackPolicy(sf=2.0, awt=1000.0, reset_slack=False))
    assert sched.promises[2] == math.floor(100 + (1 - 0.5 / 3) * 2.0 * 1000.0)


def test_early_end_moves_jobs_earlier():
    # job 1 requests 100 s but ends after 10 s: job 2 (scheduled at 100) moves to 10
    jobs = (Job(id=1, submit=0, runtime=10, requested=100, demand=(4,)),
            Job(id=2, submit=1, runtime=5, requested=5, demand=(4,)))
    sched = simulate(Workload(jobs, (4,)), SlackPolicy())
    assert list(sched.start) == [0, 10]


def test_overrun_run_mode():
    jobs = (Job(id=1, submit=0, runtime=200, requested=100, demand=(4,)),
            Job(id=2, submit=1, runtime=5, requested=5, demand=(3,)),
            Job(id=3, submit=2, runtime=5, requested=5, demand=(1,)))
    sched = simulate(Workload(jobs, (4,)), SlackPolicy(), overrun="run")
    validate(sched)
    assert sched.start[1] >= 200
    # a job that overruns its estimate several times over (one notice, then wake-ups)
    jobs = (Job(id=1, submit=0, runtime=350, requested=100, demand=(4,)),
            Job(id=2, submit=150, runtime=5, requested=5, demand=(2,)),
            Job(id=3, submit=250, runtime=5, requested=5, demand=(4,)))
    sched = simulate(Workload(jobs, (4,)), SlackPolicy(check=True), overrun="run")
    validate(sched)
    assert sched.start[0] == 0 and sorted(sched.start[1:]) == [350, 355]


@pytest.mark.parametrize("order", ORDERS)
def test_overrun_run_mode_random(order):
    for seed in range(4):
        w = small_random_workload(seed, n=50, gap=20)
        validate(simulate(w, SlackPolicy(order=order, sf=1.0, awt=300.0, check=True,
                                         priorities=priorities_of(w, "fifth")),
                          overrun="run"))


def test_snapshot_capture_round_trips():
    w = small_random_workload(4, n=40, gap=15)
    pol = SlackPolicy(record=True)
    simulate(w, pol)
    assert len(pol.snapshots) == pol.n_insert + pol.n_remove
    assert max(p.k for p in pol.snapshots) >= 3
    for p in pol.snapshots[:20]:
        q = from_dict(json.loads(json.dumps(p.to_dict())))
        assert q.to_dict() == p.to_dict()


def test_factory_options_and_errors():
    p = registry.make_policy("slack", order="DP", sf=5.0, awt=100.0, alpha_u=0.5, alpha_t=1.0,
                             alpha_p=0.0, alpha_f=1.0)
    assert isinstance(p, SlackScheduler) and p.name == "slack-DP" and p.sf == 5.0
    with pytest.raises(ValueError, match="alpha_u"):
        SlackPolicy(alpha_u=1.5)
    with pytest.raises(ValueError, match="awt"):
        SlackPolicy(awt=0)
    with pytest.raises(ValueError, match="order"):
        SlackPolicy(order="XYZ")
    with pytest.raises(ValueError, match="delay_from"):
        SlackPolicy(delay_from="end")


def test_cancel_reoptimises():
    pol = SlackPolicy()
    from sim.batch.policy import MachineInfo

    pol.reset(MachineInfo(capacity=(4,)))
    jobs = [Job(id=i, submit=0, runtime=100, requested=100, demand=(4,)) for i in range(3)]
    for j in jobs:
        pol.on_arrival(j, 0)
    assert sorted(e.te for e in pol.waiting.values()) == [0, 100, 200]
    first = min(pol.waiting.values(), key=lambda e: e.te).job
    pol.cancel(first, 0)
    assert sorted(e.te for e in pol.waiting.values()) == [0, 100]
    assert first.id not in pol.promises()
    with pytest.raises(ValueError, match="not waiting"):
        pol.cancel(first, 0)


def test_cli_simulate_slack_options(tmp_path, capsys):
    import json

    from instances.swf import read_swf, write_swf
    from sim.cli import main

    path = tmp_path / "small.swf"
    write_swf(path, small_random_workload(8, n=60, gap=30))
    w = read_swf(path)  # exactly what the CLI reads
    assert main(["simulate", str(path), "--policy", "slack", "--order", "DP", "--sf", "5",
                 "--awt", "300", "--alpha-u", "0.5", "--priorities", "fifth", "--json",
                 "--quiet"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["policy"] == "slack-DP" and row["validated"]
    assert row["policy_config"]["priorities"] == "fifth"  # the scheme, not the table
    direct = simulate(w, SlackPolicy(order="DP", sf=5.0, awt=300.0, alpha_u=0.5,
                                     priorities=priorities_of(w, "fifth")))
    wait = direct.start - np.array([j.submit for j in w.jobs])
    assert row["avg_wait"] == pytest.approx(float(wait.mean()))
    # the options matter: equal priorities give a different schedule here
    assert main(["simulate", str(path), "--policy", "slack", "--order", "DP", "--sf", "5",
                 "--awt", "300", "--alpha-u", "0.5", "--priorities", "equal", "--json",
                 "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["avg_wait"] != row["avg_wait"]


def test_cli_solve_snapshot(capsys):
    import json

    from sim.cli import main
    from sim.experiments.talby.snapshots import snapshot_paths
    from sim.problems.insertion import load

    path = next(p for p in snapshot_paths() if load(p).k >= 5)
    assert main(["solve", str(path), "--solver", "DC", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["solver"] == "DC" and d["status"] == "FEASIBLE" and d["problem"] == "slack_insertion"
    assert d["objective"] == pytest.approx(insert(load(path), "DC").price, rel=1e-12)


def test_over_quota_job_has_infinite_slack():
    jobs = [Job(id=1, submit=0, runtime=100, requested=100, demand=(4,)),
            Job(id=2, submit=1, runtime=10, requested=10, demand=(4,)),
            Job(id=3, submit=2, runtime=10, requested=10, demand=(4,))]
    pol = SlackPolicy(sf=1.0, awt=100.0, check=True, priorities={2: (0.0, -math.inf)})
    sched = simulate(Workload(tuple(jobs), (4,)), pol)
    validate(sched)
    assert 2 not in sched.promises and 3 in sched.promises
    # job 3 jumps ahead of the over-quota job, which has slack to spare
    assert sched.start[2] < sched.start[1]


# ---------------------------------------------------------------------- compress readings
def test_hold_never_starts_a_job_after_its_delayed_start():
    # the paper's reading: delayed jobs sit at te + t_j and are only moved up from there
    for seed in range(40):
        problem = random_problem(seed, k=5)
        jt = problem.new.t
        for order in ORDERS:
            for c in candidates(problem, order, compress="hold"):
                for w in problem.waiting:
                    assert c.schedule.starts[w.id] <= w.te + jt, (seed, order, c)


def test_readings_diverge_on_the_four_job_example():
    from sim.experiments.talby.orders import example_problem

    pb = example_problem()
    slot0 = {cmp: next(c for c in candidates(pb, "DU", compress=cmp) if c.ts == 0)
             for cmp in COMPRESS}
    # hold: B moves into the hole left while A holds [5, 15), then A moves back to 0
    assert dict(slot0["hold"].schedule.starts) == {1: 0, 2: 15}
    # list: B takes [5, 15) in a profile without A, which is pushed to 15 (> 0 + 5)
    assert dict(slot0["list"].schedule.starts) == {1: 15, 2: 5}


def test_compress_option_is_checked():
    with pytest.raises(ValueError, match="compress"):
        SlackPolicy(compress="lazy")
    with pytest.raises(ValueError, match="compress"):
        insert(random_problem(0), "AST", compress="lazy")
