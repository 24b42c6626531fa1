"""The certified lower bound of the offline response problem
(``models.kresource.bounds``): never above the brute-force optimum on random small
instances, never above any feasible schedule found, at least the trivial bound and the
plain time-indexed LP, and honest under a time limit."""

from __future__ import annotations

import random

import pytest

from heuristics.kresource import serial_schedule, solve_list
from models.kresource import brute
from models.kresource.bounds import BoundOptions, response_bound, trivial_bound
from sim.problems.kresource import ResponseProblem, objective


def _problem(rng: random.Random, n: int, K: int, tight: bool) -> ResponseProblem:
    """Random jobs, weights 0..3, some demands 0 when K > 1; ``tight``: demands up to
    the capacity (many pairs do not fit)."""
    cap = tuple(rng.randint(4, 10) for _ in range(K))
    top = (lambda c: c) if tight else (lambda c: max(1, c // 2))
    dem = []
    for _ in range(n):
        d = [rng.randint(0 if K > 1 else 1, top(c)) for c in cap]
        if not any(d):
            d[0] = 1
        dem.append(tuple(d))
    return ResponseProblem(cap, tuple(rng.randint(0, 6) for _ in range(n)),
                           tuple(rng.randint(1, 4) for _ in range(n)), tuple(dem),
                           tuple(rng.randint(0, 3) for _ in range(n)))


@pytest.mark.parametrize("seed", range(40))
def test_the_bound_never_exceeds_the_brute_force_optimum(seed):
    rng = random.Random(9100 + seed)
    p = _problem(rng, rng.randint(2, 7), rng.randint(1, 3), tight=seed % 2 == 0)
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
    p = _problem(rng, 14, 3, tight=True)
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
    p = _problem(rng, 30, 2, tight=False)
    p = ResponseProblem(p.capacity, tuple(100 * a for a in p.release),
                        tuple(50 * d for d in p.duration), p.demands, p.weights)
    assert response_bound(p, options=BoundOptions(max_columns=1000)) is None
    assert response_bound(p, options=BoundOptions(max_nonzeros=1000)) is None


def test_a_time_limit_gives_none_or_a_valid_bound_quickly():
    import time

    rng = random.Random(9300)
    p = _problem(rng, 40, 4, tight=False)
    t0 = time.perf_counter()
    b = response_bound(p, time_limit=0.3)
    assert time.perf_counter() - t0 < 0.3 + 1.5
    assert b is None or b.bound <= solve_list(p).objective


@pytest.mark.parametrize("seed", range(12))
def test_reduced_cost_fixing_keeps_every_schedule_within_its_value(seed):
    """``domains(v)`` keeps the starts of the brute-force optimum (``v`` = optimum) and of
    every serial schedule (``v`` = its objective)."""
    rng = random.Random(9400 + seed)
    p = _problem(rng, rng.randint(3, 7), rng.randint(1, 3), tight=True)
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

    rng = random.Random(9500 + seed)
    p = _problem(rng, rng.randint(3, 7), rng.randint(1, 3), tight=seed % 2 == 0)
    opt = brute.solve_response(p).objective
    inc = solve_list(p)
    found, proved, note = portfolio.fixed_search(p, response_bound(p), inc, time_limit=20.0)
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
