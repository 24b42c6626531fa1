"""The certified lower bound of the offline response problem
(``models.kresource.bounds``): never above the brute-force optimum on random small
instances, never above any feasible schedule found, at least the trivial bound and the
plain time-indexed LP, and honest under a time limit."""

from __future__ import annotations

import math
import random

import pytest
from random_kresource import response_with_weights, stage_from_list

from heuristics.kresource import serial_schedule, solve_list
from models.kresource import brute
from models.kresource.bounds import BoundOptions, response_bound, trivial_bound
from sim.problems.kresource import ResponseProblem, objective


@pytest.mark.parametrize("seed", range(40))
def test_the_bound_never_exceeds_the_brute_force_optimum(seed):
    rng = random.Random(9100 + seed)
    p = response_with_weights(rng, rng.randint(2, 7), rng.randint(1, 3), tight=seed % 2 == 0)
    opt = brute.solve_response(p)
    b = response_bound(p)
    assert b is not None
    assert trivial_bound(p) <= b.bound <= opt.objective + 1e-9, (b, opt.objective)
    plain = response_bound(p, options=BoundOptions(cuts=False))
    assert plain.bound <= b.bound


def test_the_cuts_close_a_gap_the_plain_lp_leaves():
    """Two jobs that cannot run together, both released at 0 with p = 2: the plain LP
    runs 2/3 of the second beside the first (value 2 + 8/3, bound 5); the packing cut
    ``y_0 + y_1 <= 1`` forces one to wait (optimum 2 + 4 = 6)."""
    p = ResponseProblem((10,), (0, 0), (2, 2), ((6,), (6,)))
    assert brute.solve_response(p).objective == 6
    assert response_bound(p, options=BoundOptions(cuts=False)).bound < 6
    assert response_bound(p).bound == 6


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_is_below_every_schedule_found_on_larger_instances(seed):
    rng = random.Random(9200 + seed)
    p = response_with_weights(rng, 14, 3, tight=True)
    b = response_bound(p, time_limit=20.0)
    assert b is not None
    assert b.bound <= solve_list(p).objective
    order = sorted(range(p.n), key=lambda j: b.mean_start[j])
    assert b.bound <= objective(p, serial_schedule(p, order))
    for _ in range(20):
        order = rng.sample(range(p.n), p.n)
        assert b.bound <= objective(p, serial_schedule(p, order))


def test_no_lp_beyond_its_size_limits():
    rng = random.Random(9310)
    p = response_with_weights(rng, 30, 2, tight=False)
    p = ResponseProblem(p.capacity, tuple(100 * a for a in p.release),
                        tuple(50 * d for d in p.duration), p.demands, p.weights)
    assert response_bound(p, options=BoundOptions(max_columns=1000)) is None
    assert response_bound(p, options=BoundOptions(max_nonzeros=1000)) is None


def test_a_time_limit_gives_none_or_a_valid_bound_quickly():
    import time

    rng = random.Random(9300)
    p = response_with_weights(rng, 40, 4, tight=False)
    t0 = time.perf_counter()
    b = response_bound(p, time_limit=0.3)
    assert time.perf_counter() - t0 < 0.3 + 1.5
    assert b is None or b.bound <= solve_list(p).objective


@pytest.mark.parametrize("seed", range(12))
def test_reduced_cost_fixing_keeps_every_schedule_within_its_value(seed):
    """``domains(v)`` keeps the starts of the brute-force optimum (``v`` = optimum) and of
    every serial schedule (``v`` = its objective)."""
    rng = random.Random(9400 + seed)
    p = response_with_weights(rng, rng.randint(3, 7), rng.randint(1, 3), tight=True)
    b = response_bound(p)
    opt = brute.solve_response(p)
    dom = b.domains(opt.objective, p.n)
    assert all(opt.solution[j] in dom[j] for j in range(p.n))
    for _ in range(10):
        s = serial_schedule(p, rng.sample(range(p.n), p.n))
        dom = b.domains(objective(p, s), p.n)
        assert all(s[j] in dom[j] for j in range(p.n))
    assert any(not d for d in b.domains(b.bound - 1, p.n))  # below the bound: nothing


@pytest.mark.parametrize("seed", range(12))
def test_the_fixed_search_proves_the_optimum_from_any_incumbent(seed):
    """Stage 3c of the portfolio from the list schedule: it finds the optimum when the
    list schedule is worse, proves the list schedule optimal when it is not."""
    from models.kresource import portfolio

    opt, inc, found, proved, note = stage_from_list(portfolio.fixed_search, 9500 + seed,
                                                    seed % 2 == 0)
    assert proved == opt, note
    if inc.objective > opt:
        assert [r.objective for r in found] == [opt]
    else:
        assert found == [] and "INFEASIBLE" in note


@pytest.mark.timed
def test_the_portfolio_keeps_its_limit_and_an_honest_bound_at_40_jobs():
    """A 40-job K = 4 instance (beyond the time-indexed ILP): every stage, the LP bound
    included, within the limit; the bound below the schedule; OPTIMAL only if proved."""
    from models.kresource import portfolio
    from sim.problems import generate
    from sim.problems.kresource import from_dict

    p = from_dict(generate.instance("kresource_response", 2, n=40, K=4, horizon=100))
    r = portfolio.solve_response(p, time_limit=8.0)
    assert r.runtime <= 8.0 + 0.5, r.note
    assert r.solution is not None and r.bound is not None
    assert trivial_bound(p) <= r.bound <= r.objective
    assert (r.status.value == "OPTIMAL") == (r.bound >= r.objective)
    assert "LP bound" in r.note


def test_the_probe_targets_step_towards_the_gap_then_climb_to_the_schedule():
    from models.kresource.portfolio import PROBE_GAP, _target

    assert PROBE_GAP == 0.02
    # ceil(0.98 * 462) = 453 certifies 2%: steps of 5 from the LP bound 434 up to it
    assert [_target(lo, 462, 5) for lo in (434, 439, 444, 449)] == [439, 444, 449, 453]
    assert _target(453, 462, 5) == 458  # then halfway to the schedule
    assert _target(461, 462, 5) == 462  # the last probe: the schedule itself
    assert _target(462, 462, 5) is None and _target(470, 462, 5) is None
    assert _target(10, 11, 0) == 11
    lower = 100
    while (t := _target(lower, 140, 3)) is not None:  # each above the bound proved
        assert lower < t <= 140
        lower = t
    assert lower == 140


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_probes_never_exceed_the_optimum_and_reach_it(seed):
    """Probes from the list schedule on small instances: each answer is definite, so they
    end at the optimum: the bound proved is the brute-force optimum, never above it, and
    a schedule found (only when the list schedule is worse) is optimal."""
    from models.kresource import portfolio

    rng = random.Random(9600 + seed)
    p = response_with_weights(rng, rng.randint(3, 7), rng.randint(1, 3), tight=seed % 2 == 0)
    opt = brute.solve_response(p).objective
    inc = solve_list(p)
    lb = response_bound(p)
    found, proved, note = portfolio.probe_bound(p, lb, inc, time_limit=20.0)
    if lb.bound >= inc.objective:  # nothing to probe: the LP bound proves the schedule
        assert proved is None and found == [] and "(0: none)" in note
        return
    assert proved == opt, note
    if inc.objective > opt:
        assert [r.objective for r in found] == [opt]
    else:
        assert found == []


def test_an_infeasible_probe_raises_the_bound_to_its_target(monkeypatch):
    """A probe's INFEASIBLE proves its target and the next climbs a step; a stop without
    an answer proves CP-SAT's bound capped at the target and ends the probes."""
    import dataclasses

    from models.kresource import cpsat, portfolio
    from sim.result import Status

    rng = random.Random(9700)
    p = response_with_weights(rng, 6, 2, tight=True)
    lb = response_bound(p)
    inc = solve_list(p)
    upper = max(int(inc.objective), lb.bound) + 400  # a loose incumbent: room to climb
    loose = dataclasses.replace(inc, objective=float(upper))
    monkeypatch.setattr(portfolio, "PROBE_STEP", 0.25)  # a step of several units
    step = max(1, math.ceil(0.25 * lb.bound))
    assert step >= 4
    answers = [(Status.INFEASIBLE, None, None), (Status.INFEASIBLE, None, None),
               (Status.UNKNOWN, None, float(lb.bound + 2 * step + 1))]
    asked = []

    def fake(problem, bound, below, **kw):
        asked.append(below)
        return answers[len(asked) - 1]

    monkeypatch.setattr(cpsat, "probe_indexed", fake)
    found, proved, note = portfolio.probe_bound(p, lb, loose, time_limit=10.0)
    assert found == []
    assert asked == [lb.bound + step, lb.bound + 2 * step, lb.bound + 3 * step]
    assert proved == lb.bound + 2 * step + 1  # min(target, CP-SAT's bound) of the stop
    assert "INFEASIBLE" in note and "UNKNOWN" in note


def test_a_stopped_probe_with_a_low_bound_proves_nothing_more(monkeypatch):
    """CP-SAT's bound on a stopped probe may lie below the LP bound: it ends the probes
    and the bound returned is not above the LP bound."""
    import dataclasses

    from models.kresource import cpsat, portfolio
    from sim.result import Status

    rng = random.Random(9700)
    p = response_with_weights(rng, 6, 2, tight=True)
    lb = response_bound(p)
    inc = solve_list(p)
    loose = dataclasses.replace(inc, objective=float(max(int(inc.objective), lb.bound) + 400))
    asked = []

    def fake(problem, bound, below, **kw):
        asked.append(below)
        return Status.UNKNOWN, None, float(lb.bound - 7)

    monkeypatch.setattr(cpsat, "probe_indexed", fake)
    found, proved, _ = portfolio.probe_bound(p, lb, loose, time_limit=10.0)
    assert found == [] and len(asked) == 1 and asked[0] > lb.bound
    assert proved is None or proved <= lb.bound


def test_the_portfolio_drops_a_stage_bound_above_another_stages_schedule():
    """A stage's bound above the objective of another stage's schedule is wrong (a
    floating backend's, say): dropped and said, the other stages' bounds kept."""
    import time

    from models.kresource import cpsat
    from models.kresource.portfolio import _result
    from sim.result import Status

    rng = random.Random(5)
    p = response_with_weights(rng, 5, 2, tight=False)
    r = cpsat.solve_response(p)
    assert r.status is Status.OPTIMAL
    out = _result(p, time.perf_counter(), None, 0, [r], [r.bound, r.objective + 5], "t")
    assert out.status is Status.OPTIMAL and out.bound == r.objective
    assert "dropped" in out.note
