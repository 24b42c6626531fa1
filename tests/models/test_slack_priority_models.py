"""The exact insertion models under Table 3's differential priorities (Talby & Feitelson):
their objective is the heuristics' price with the priority ratio ``p_i / p_j`` and the
slack ratio ``s0 / s`` of each job, checked against brute force, the ILP, the paper's
exhaustive order search and the optimal-insertion policy's own decisions."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pytest
from insertion_checks import assert_never_worse_than_every_order, tol
from strategies import small_random_workload

from heuristics.slack import solve as solve_order
from instances.priorities import high_priority_ids, priorities_of
from models import slack_insertion as si
from sim.batch.machine import simulate
from sim.batch.validate import validate
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, NewJob, WaitingJob
from sim.result import Status

SF_AWT = 6.0
"""SF * AWT of the small problems (s): slacks of a few seconds, as brute force needs."""


def table3(problem: InsertionProblem, seed: int) -> InsertionProblem:
    """``problem`` with the priorities and slacks the scheduler gives under Table 3's
    scenario: each job high priority (UP = PP = 1) with probability 1/5, else UP = PP = 0;
    a waiting job's SP in [0, 1], ``p = (UP + PP + SP) / 3``, ``s0 = (1 - p) SF AWT``
    (0 for a high-priority job with SP = 1) and some of it used; the new job's SP 1/2."""
    rng = random.Random(seed)
    waiting = []
    for w in problem.waiting:
        up = 1.0 if rng.random() < 0.2 else 0.0
        p = (2 * up + rng.randint(0, 4) / 4) / 3
        s0 = (1 - p) * SF_AWT
        s = max(0.0, s0 - rng.randint(0, 3)) if rng.random() < 0.5 else s0
        waiting.append(replace(w, p=p, s0=s0, s=s))
    new = problem.new
    if new is not None:
        new = replace(new, p=(2 * (1.0 if rng.random() < 0.2 else 0.0) + 0.5) / 3)
    return replace(problem, waiting=tuple(waiting), new=new)


def tiny(seed: int) -> InsertionProblem:
    pb = ins.random_problem(seed, 1 + seed % 3, capacity=4, max_t=3, max_slack=4,
                            new=seed % 5 != 0)
    return table3(pb, seed)


@pytest.mark.parametrize("seed", range(40))
def test_cpsat_ilp_and_brute_force_agree_under_table3_priorities(seed):
    pb = tiny(seed)
    rb, rc, ri = si.solve_brute(pb), si.solve_cpsat(pb), si.solve_ilp(pb)
    for r in (rb, rc, ri):
        assert r.status is Status.OPTIMAL
        assert ins.check(pb, r.solution) == []
        assert r.objective == ins.objective(pb, r.solution)  # the shared price, recomputed
    assert rc.objective == pytest.approx(rb.objective, abs=tol(rc, rb))
    assert ri.objective == pytest.approx(rb.objective, abs=tol(ri, rb))
    assert ins.moved(pb, rc.solution) == ins.moved(pb, rb.solution) == \
        ins.moved(pb, ri.solution)


def test_the_table3_problems_exercise_the_priorities():
    """The problems above hold both groups and, in some, a job with no slack at all."""
    pbs = [tiny(seed) for seed in range(40)]
    ps = {w.p for pb in pbs for w in pb.waiting}
    assert any(p >= 2 / 3 for p in ps) and any(p <= 1 / 3 for p in ps)
    assert any(w.s0 == w.s == 0.0 for pb in pbs for w in pb.waiting)
    assert {pb.new.p for pb in pbs if pb.new is not None} == {0.5 / 3, 2.5 / 3}


@pytest.mark.parametrize("seed", range(12))
def test_never_worse_than_the_exhaustive_search_under_table3_priorities(seed):
    pb = table3(ins.random_problem(200 + seed, 4 + seed % 3, capacity=8, max_t=6,
                                   max_slack=12, new=seed % 4 != 0), seed)
    rc = si.solve_cpsat(pb)
    assert rc.status is Status.OPTIMAL
    assert_never_worse_than_every_order(pb, rc)


@pytest.mark.parametrize("seed", range(8))
def test_model_strengthening_loses_nothing_under_table3_priorities(seed):
    """Jobs of one size (n, t) at different weights, Table 3's priority levels among
    them, are what the swap orders of the strengthened model act on: it finds the plain
    model's optimum (capacity 4 and t <= 2 make same-size jobs common)."""
    pb = table3(ins.random_problem(100 + seed, 7, capacity=4, max_t=2, max_slack=15,
                                   new=seed % 4 != 0), seed)
    full = si.solve_cpsat(pb, dominant=False, tighten=False, symmetry=False)
    dom = si.solve_cpsat(pb)
    assert full.status is dom.status is Status.OPTIMAL
    assert dom.objective == pytest.approx(full.objective, abs=tol(dom, full))
    assert ins.moved(pb, dom.solution) == ins.moved(pb, full.solution)


def _one_slot(p_waiting: float, p_new: float) -> InsertionProblem:
    """One processor; waiting job 1 (2 s long) at 0 with 5 s of slack; a new job of
    1 s. Either it waits 2 s (price 2) or it runs first and delays job 1 by 1 s (price
    ``p_waiting / p_new``)."""
    w = WaitingJob(id=1, n=1, t=2, te=0, s=5.0, s0=5.0, p=p_waiting, arrival=0)
    return InsertionProblem(now=0, capacity=1, waiting=(w,),
                            new=NewJob(id=2, n=1, t=1, p=p_new, arrival=0))


@pytest.mark.parametrize("solve", [si.solve_brute, si.solve_cpsat, si.solve_ilp])
def test_the_priorities_decide_who_waits(solve):
    """A high-priority waiting job is not delayed for an ordinary new job (ratio 5 > 2),
    an ordinary one is delayed for a high-priority new job (ratio 1/5 < 2)."""
    high, low = 2.5 / 3, 0.5 / 3
    keep = solve(_one_slot(high, low)).solution
    assert (keep.new_start, keep.starts) == (2, {1: 0})
    moved = solve(_one_slot(low, high)).solution
    assert (moved.new_start, moved.starts) == (0, {1: 1})


def test_the_optimal_policy_decides_by_the_priority_table():
    """Each decision of ``slack-optimal`` under Table 3's table sees the table's
    priorities, is proved optimal, and its price equals the ILP's (an independent model)
    and is no dearer than the paper's orders; the table changes the schedule."""
    w = small_random_workload(5, n=30, gap=90)
    table = priorities_of(w, "fifth")
    high = high_priority_ids(w)
    pol = si.OptimalInsertionPolicy(sf=1.0, awt=200.0, priorities=table, record=True,
                                    check=True)
    a = simulate(w, pol)
    validate(a)
    st = pol.inserter.stats
    assert st["OPTIMAL"] + st["trivial"] == pol.n_insert + pol.n_remove
    news = [pb.new for pb in pol.snapshots if pb.new is not None]
    assert all(math.isclose(n.p, 2.5 / 3 if n.id in high else 0.5 / 3) for n in news)
    assert any(n.id in high for n in news)
    small = [pb for pb in pol.snapshots if 1 <= pb.k <= 5]  # CBC proves these quickly
    assert len(small) >= 10
    for pb in small[:20]:
        rc, ri = si.solve_cpsat(pb), si.solve_ilp(pb)
        assert rc.objective == pytest.approx(ri.objective, abs=tol(rc, ri))
        for order in ("AST", "AAT", "DP"):
            assert rc.objective <= solve_order(pb, order=order).objective + tol(rc)
    b = simulate(w, si.OptimalInsertionPolicy(sf=1.0, awt=200.0))
    assert not np.array_equal(a.start, b.start)
