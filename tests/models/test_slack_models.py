"""Exact insertion models: CP-SAT, ILP and brute force agree; never worse than the
paper's exhaustive search; honest statuses; the optimal-insertion policy."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from insertion_checks import assert_never_worse_than_every_order, tol
from strategies import small_random_workload

from heuristics.slack import EXHAUSTIVE
from heuristics.slack import solve as solve_order
from models import slack_insertion as si
from sim import registry
from sim.batch.machine import simulate
from sim.batch.validate import validate
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionSchedule
from sim.result import Status

SNAPSHOTS = Path(__file__).resolve().parents[2] / "instances" / "data" / "slack_snapshots"


def assert_valid(problem, res):
    sch = res.solution
    assert isinstance(sch, InsertionSchedule)  # typed; JSON only at the edge
    assert ins.check(problem, sch) == []
    assert res.objective == ins.objective(problem, sch)  # recomputed, not copied
    back = json.loads(json.dumps(res.to_dict()))
    assert InsertionSchedule.from_dict(back["solution"]) == sch
    return sch


def moved(problem, res) -> int:
    return ins.moved(problem, res.solution)


def tiny(seed: int, **kw):
    k = 1 + seed % 3
    return ins.random_problem(seed, k, capacity=4, max_t=3, max_slack=4, new=seed % 5 != 0, **kw)


@pytest.mark.parametrize("seed", range(40))
def test_cpsat_ilp_and_brute_force_agree_on_tiny_instances(seed):
    pb = tiny(seed)
    rb = si.solve_brute(pb)
    rc = si.solve_cpsat(pb)
    ri = si.solve_ilp(pb)
    for r in (rb, rc, ri):
        assert r.status is Status.OPTIMAL
        assert_valid(pb, r)
    assert rc.objective == pytest.approx(rb.objective, abs=tol(rc, rb))
    assert ri.objective == pytest.approx(rb.objective, abs=tol(ri, rb))
    # the tie-break (fewest moved jobs among the cheapest) is exact too
    assert moved(pb, rc) == moved(pb, rb) == moved(pb, ri)
    assert rc.bound <= rc.objective + 1e-9 and ri.bound <= ri.objective + 1e-9


@pytest.mark.parametrize("seed", range(15))
def test_ilp_handles_any_alphas_like_brute_force(seed):
    pb = tiny(seed).with_alphas(alpha_t=0.5, alpha_u=0.3, alpha_p=0.8, alpha_f=0.6)
    rb = si.solve_brute(pb)
    ri = si.solve_ilp(pb)
    assert ri.status is Status.OPTIMAL
    assert_valid(pb, ri)
    assert ri.objective == pytest.approx(rb.objective, abs=tol(ri, rb))
    assert moved(pb, ri) == moved(pb, rb)


@pytest.mark.parametrize("seed", range(8))
def test_model_strengthening_loses_nothing(seed):
    """The plain CP-SAT model (all integer starts, no tightening, no symmetry orders) and
    the strengthened one find the same optimum; max_t=3 makes interchangeable jobs common."""
    pb = ins.random_problem(100 + seed, 7, capacity=10, max_t=7 if seed % 2 else 3,
                            max_slack=15, new=seed % 4 != 0)
    full = si.solve_cpsat(pb, dominant=False, tighten=False, symmetry=False)
    dom = si.solve_cpsat(pb, warmup=0)  # the strengthened model alone
    assert dom.params["proved_by"] == "strengthened"
    warm = si.solve_cpsat(pb, warmup=0.02)  # plain pass first, its schedule warm-starts
    assert warm.status is Status.OPTIMAL
    assert warm.objective == pytest.approx(dom.objective, abs=tol(warm, dom))
    assert moved(pb, warm) == moved(pb, dom)
    ri = si.solve_ilp(pb, tighten=False)
    assert full.status is dom.status is ri.status is Status.OPTIMAL
    assert dom.objective == pytest.approx(full.objective, abs=tol(dom, full))
    assert ri.objective == pytest.approx(full.objective, abs=tol(ri, full))
    assert moved(pb, dom) == moved(pb, full) == moved(pb, ri)


def test_cpsat_rejects_nonlinear_price():
    with pytest.raises(ValueError, match="alpha_t = 1"):
        si.solve_cpsat(tiny(1).with_alphas(alpha_t=0.5))


@pytest.mark.parametrize("seed", range(12))
def test_never_worse_than_the_papers_exhaustive_search_or_any_order(seed):
    pb = ins.random_problem(200 + seed, 4 + seed % 3, capacity=8, max_t=6, max_slack=12,
                            new=seed % 4 != 0)
    rc = si.solve_cpsat(pb)
    assert rc.status is Status.OPTIMAL
    assert_never_worse_than_every_order(pb, rc)


def snapshot_files(kmax: int) -> list[Path]:
    out = []
    for f in sorted(SNAPSHOTS.glob("*.json")):
        k = int(f.stem.rsplit("-k", 1)[1])
        if 1 <= k <= kmax:
            out.append(f)
    return out


def test_bundled_kth_snapshots_small_queues():
    """On real KTH insertion problems: CP-SAT <= the exhaustive search, = the ILP where
    the ILP is small enough to prove its optimum quickly."""
    files = snapshot_files(4)[:12]
    assert files, "the bundled snapshot set is missing"
    compared = 0
    for f in files:
        pb = ins.load(f)
        rc = si.solve_cpsat(pb, time_limit=20)
        assert rc.status is Status.OPTIMAL, f.name
        assert_valid(pb, rc)
        rx = solve_order(pb, order=EXHAUSTIVE)
        assert rc.objective <= rx.objective + tol(rc), f.name
        try:
            ri = si.solve_ilp(pb, time_limit=5, max_points=400)
        except ValueError:
            continue  # too many candidate times for the time-indexed ILP
        assert_valid(pb, ri)
        if ri.status is Status.OPTIMAL:
            compared += 1
            assert ri.objective == pytest.approx(rc.objective, abs=tol(ri, rc)), f.name
        assert ri.bound is None or ri.bound <= rc.objective + tol(ri, rc), f.name
    assert compared >= 3


def test_time_limit_stop_is_never_optimal():
    f = SNAPSHOTS / "kth-1997-05-insert-21174800-k17.json"
    pb = ins.load(f)
    r = si.solve_cpsat(pb, time_limit=0.05)
    assert r.status is Status.FEASIBLE
    assert_valid(pb, r)  # still a feasible schedule (at worst the current one)
    assert r.note  # says why it is not optimal
    assert r.bound is None or r.bound <= r.objective


def test_ilp_time_limit_stop_is_never_optimal():
    pb = ins.random_problem(18, 10, capacity=16, max_t=8, max_slack=20)
    r = si.solve_ilp(pb, time_limit=0.5)
    assert r.status is Status.FEASIBLE
    assert_valid(pb, r)


def test_determinism_and_registry():
    pb = ins.random_problem(7, 8, capacity=10, max_t=7, max_slack=15)
    a = registry.solver("slack_insertion", "cpsat")(pb, seed=3)
    b = registry.solver("slack_insertion", "cpsat")(pb, seed=3)
    assert a.solution == b.solution and a.objective == b.objective and a.seed == 3
    for name in ("ilp", "brute"):
        fn = registry.solver("slack_insertion", name)
        assert fn in (si.solve_ilp, si.solve_brute)
    fam, back = registry.load_problem(json.loads(json.dumps(pb.to_dict())), "p.json")
    assert fam == "slack_insertion" and back == pb


def test_size_guards_are_clear_errors():
    pb = ins.random_problem(3, 12, capacity=8, max_t=50, max_slack=200)
    with pytest.raises(ValueError, match="brute: more than 1000 search nodes"):
        si.solve_brute(pb, max_nodes=1000)
    with pytest.raises(ValueError, match="candidate start times"):
        si.solve_ilp(pb, max_points=50)
    with pytest.raises(ValueError, match="max_nonzeros"):
        si.solve_ilp(pb, max_nonzeros=100)




def test_optimal_insertion_policy_valid_deterministic_and_optimal_per_insertion():
    w = small_random_workload(5, n=30, gap=90)
    pol = registry.make_policy("slack-optimal", sf=1.0, awt=200.0, check=True, record=True)
    a = simulate(w, pol)
    validate(a)  # capacity and the slack promises
    assert pol.name == "slack-optimal" and a.promises
    st = pol.inserter.stats
    assert st["OPTIMAL"] + st["trivial"] == pol.n_insert + pol.n_remove  # all proved
    b = simulate(w, si.OptimalInsertionPolicy(sf=1.0, awt=200.0))
    assert np.array_equal(a.start, b.start)
    # each decision it took is at least as cheap as the AST order's on the same problem
    for pb in pol.snapshots[:30]:
        mine = si.solve_cpsat(pb)
        ast = solve_order(pb, order="AST")
        assert mine.objective <= ast.objective + tol(mine)


def test_policy_factory_errors():
    with pytest.raises(ValueError, match="compress order"):
        si.OptimalInsertionPolicy(order="AST")
    with pytest.raises(ValueError, match="alpha_t = 1"):
        si.OptimalInsertionPolicy(alpha_t=0.5)


def test_optimal_policy_stays_valid_when_cpsat_is_stopped():
    """With a tiny limit many calls stop early; the schedule must still keep every
    promise and the capacity (a stopped call keeps a feasible schedule)."""
    w = small_random_workload(11, n=40, gap=25)
    pol = si.OptimalInsertionPolicy(sf=1.0, awt=200.0, time_limit=0.005, check=True)
    validate(simulate(w, pol))
    st = pol.inserter.stats
    assert st["OPTIMAL"] + st["FEASIBLE"] + st["trivial"] == pol.n_insert + pol.n_remove
