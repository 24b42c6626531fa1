"""Column generation for minimum epochs (``models.kresource.colgen``): its answers match
brute force, its certified bound never exceeds the optimum (hostile magnitudes
included), its exact pricing matches enumeration, and its stages stay within the
time limit."""

from __future__ import annotations

import itertools
import random
import time

import pytest

from instances.vbp import CLASSES, instance
from models.kresource import brute, colgen
from models.kresource.pricing import best_pattern, dp_pattern, fits, greedy_patterns, swap_improve
from sim.problems.kresource import EpochProblem, check, from_dict
from sim.result import Status


def _random(rng: random.Random, max_n: int = 10) -> EpochProblem:
    K, n = rng.randint(1, 3), rng.randint(2, max_n)
    cap = tuple(rng.randint(10, 30) for _ in range(K))
    dem = tuple(tuple(rng.randint(1, max(1, c // rng.choice((2, 3, 4)))) for c in cap)
                for _ in range(n))
    return EpochProblem(cap, dem)


@pytest.fixture(scope="module", autouse=True)
def _ortools_imported() -> None:
    from ortools.linear_solver import pywraplp  # noqa: F401  (start-up, outside limits)
    from ortools.sat.python import cp_model  # noqa: F401


@pytest.mark.parametrize("seed", range(40))
def test_colgen_matches_brute_force(seed: int) -> None:
    p = _random(random.Random(seed))
    ref = brute.solve_epochs(p)
    assert ref.status is Status.OPTIMAL
    got = colgen.solve_epochs(p, time_limit=20)
    assert check(p, got.solution) == []
    assert got.status is Status.OPTIMAL, got.note
    assert got.objective == ref.objective
    assert got.bound == ref.objective


def _large(rng: random.Random) -> EpochProblem:
    """Jobs of a third to two thirds of a capacity: the volume bound is weak there."""
    K, n = rng.randint(1, 3), rng.randint(5, 12)
    cap = tuple(rng.randint(20, 40) for _ in range(K))
    return EpochProblem(cap, tuple(tuple(rng.randint(c // 5, 2 * c // 3) for c in cap)
                                   for _ in range(n)))


def test_certified_bound_never_above_the_optimum() -> None:
    """The bound of column generation alone (no search after it) against brute force;
    its certificate re-checked by enumeration. Most of these instances need Farley's
    bound: the volume bound is below it."""
    assert certified_bounds(range(1000, 1030)) >= 5


def certified_bounds(seeds: range, *, converged: bool = False) -> int:
    """Column generation's bound on :func:`_large` instances of ``seeds``: between the
    volume bound and brute force's optimum, its certificate re-checked by enumeration
    (no pattern weighs more than ``z``; Farley's bound from it is the bound); with
    ``converged`` the LP must have converged. Returns how many bounds beat the volume."""
    above_volume = 0
    for seed in seeds:
        p = _large(random.Random(seed))
        opt = brute.solve_epochs(p).objective
        columns = [tuple(sorted(ep)) for sol in colgen.ffd(p) for ep in sol]
        lb = colgen.lp_bound(p, columns, time_limit=20)
        assert p.lower_bound() <= lb.bound <= opt, seed
        assert lb.converged or not converged, seed
        if lb.certificate:
            weights, z = lb.certificate
            assert _max_pattern(p, weights) <= z
            assert colgen.farley(weights, z) == lb.bound
            above_volume += lb.bound > p.lower_bound()
    return above_volume


def _max_pattern(p: EpochProblem, weights) -> int:
    best = 0
    for r in range(1, p.n + 1):
        for sub in itertools.combinations(range(p.n), r):
            if fits(p, sub):
                best = max(best, sum(weights[j] for j in sub))
    return best


@pytest.mark.parametrize("seed", range(20))
def test_exact_pricing_matches_enumeration(seed: int) -> None:
    rng = random.Random(2000 + seed)
    p = _random(rng, max_n=11)
    w = [rng.choice((0, 1, 7, 10**6, 10**9 + 7)) for _ in range(p.n)]
    price = best_pattern(p, w, time_limit=20)
    assert price.proved and price.upper == price.value == _max_pattern(p, w)
    # the decision form: nothing at or above the maximum + 1, the maximum itself found
    top = _max_pattern(p, w)
    none = best_pattern(p, w, time_limit=20, at_least=top + 1)
    assert none.proved and none.upper == top
    some = best_pattern(p, w, time_limit=20, at_least=max(top, 1), above=max(top, 1) - 1)
    assert some.upper == top and all(fits(p, q) for q in some.found)


def test_farley_is_exact_where_floats_are_not() -> None:
    # 3 * (10**15 + 1) / (10**15 + 1) is 3 exactly; as floats, a hair above 3 would ceil
    # to 4 and overstate the bound
    assert colgen.farley([10**15 + 1] * 3, 10**15 + 1) == 3
    assert colgen.farley([2**53 + 1, 2**53 + 1], 2**53 + 1) == 2
    assert colgen.farley([0, 0], 5) == 0
    with pytest.raises(ValueError, match="z must be positive"):
        colgen.farley([1], 0)


def test_huge_demands_are_compared_as_integers() -> None:
    """Demands near the family's limit (sums up to 10^12): C/2 and C/2 + 1 share an
    epoch exactly (sum C), two of C/2 + 1 never do (sum C + 1)."""
    C = 4 * 10**11 + 1
    half = C // 2
    p = EpochProblem((C, C), ((half, 1), (half + 1, 1), (half, 1), (half + 1, 1)))
    got = colgen.solve_epochs(p, time_limit=20)
    assert got.status is Status.OPTIMAL
    assert got.objective == brute.solve_epochs(p).objective == 2
    q = EpochProblem((C, C), ((half + 1, 1), (half + 1, 1), (half + 1, 1)))
    got = colgen.solve_epochs(q, time_limit=20)
    assert got.status is Status.OPTIMAL and got.objective == got.bound == 3


@pytest.mark.parametrize("cls", CLASSES)
def test_benchmark_classes_load_and_solve(cls: str) -> None:
    p = from_dict(instance(cls, 21, 3, 7))
    r = colgen.solve_epochs(p, time_limit=5)
    assert check(p, r.solution) == []
    assert r.bound is not None and p.lower_bound() <= r.bound <= r.objective


def test_time_limit_covers_every_stage() -> None:
    p = from_dict(instance("ct1", 250, 10, 1))  # column generation alone takes longer
    for limit in (0.0, 1.0, 3.0):
        t = time.perf_counter()
        r = colgen.solve_epochs(p, time_limit=limit)
        wall = time.perf_counter() - t
        assert wall < limit + 0.75, (limit, wall, r.note)
        assert check(p, r.solution) == []
        assert r.status is Status.FEASIBLE and r.bound <= r.objective


def test_bad_options_are_refused() -> None:
    p = EpochProblem((4,), ((1,), (2,)))
    with pytest.raises(ValueError, match="lp_share"):
        colgen.solve_epochs(p, lp_share=0)
    with pytest.raises(ValueError, match="master_share"):
        colgen.solve_epochs(p, master_share=2)


@pytest.mark.parametrize("opts", [{"greedy_rounds": 10}, {"residual": False},
                                  {"greedy_rounds": 10, "residual": False},
                                  {"swaps": False}, {"local_search": False},
                                  {"swaps": False, "local_search": False},
                                  {"lns": False}])
def test_pricing_options_match_brute_force(opts: dict) -> None:
    """More greedy rounds change which columns enter and which weights certify, the
    residual packings which packing comes back, the swap columns (dual-optimal
    inequalities) which duals price, the local search which packing: answers and bounds
    match brute force."""
    for seed in range(25):
        for make in (_random, _large):
            p = make(random.Random(3000 + seed))
            ref = brute.solve_epochs(p).objective
            got = colgen.solve_epochs(p, time_limit=20, **opts)
            assert check(p, got.solution) == []
            assert got.status is Status.OPTIMAL, (seed, got.note)
            assert got.objective == got.bound == ref, (seed, got.note)


def test_certificate_with_greedy_rounds() -> None:
    """The bound of column generation alone with more greedy rounds, its certificate
    re-checked by enumeration."""
    for seed in range(20):
        p = _large(random.Random(4000 + seed))
        opt = brute.solve_epochs(p).objective
        columns = [tuple(sorted(ep)) for sol in colgen.ffd(p) for ep in sol]
        lb = colgen.lp_bound(p, columns, time_limit=20, greedy_rounds=10)
        assert p.lower_bound() <= lb.bound <= opt, seed
        if lb.certificate:
            weights, z = lb.certificate
            assert _max_pattern(p, weights) <= z
            assert colgen.farley(weights, z) == lb.bound


def test_greedy_rounds_give_fitting_distinct_patterns() -> None:
    p = from_dict(instance("ct6", 60, 2, 1))
    duals = [random.Random(j).random() for j in range(p.n)]
    one = greedy_patterns(p, duals)
    many = greedy_patterns(p, duals, rounds=10)
    assert len(many) > len(one) and set(one) <= set(many)
    assert len(set(many)) == len(many) and all(fits(p, q) for q in many)


def test_bad_pricing_options_are_refused() -> None:
    p = EpochProblem((4,), ((1,), (2,)))
    for bad in ({"greedy_rounds": 0}, {"greedy_rounds": 2.5}, {"greedy_rounds": True},
                {"residual": 1}, {"swaps": 1}, {"local_search": "yes"},
                {"lns": "yes"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            colgen.solve_epochs(p, **bad)


def test_residual_packing_packs_every_job_once() -> None:
    p = from_dict(instance("ct1", 60, 2, 1))
    columns = [tuple(sorted(ep)) for sol in colgen.ffd(p) for ep in sol]
    gen = colgen._Generator(p, columns, 0)
    gen.run(colgen.Deadline(5.0))
    packing = colgen.residual_packing(p, gen.columns, gen.out.lp_solution, gen.by_size)
    assert check(p, packing) == []
    assert sorted(j for ep in packing for j in ep) == list(range(p.n))
    # overlapping columns of value 1: the second keeps only the jobs the first left
    both = colgen.residual_packing(p, [(0, 1), (1, 2)], {0: 1.0, 1: 0.9}, range(p.n))
    assert check(p, both) == [] and [0, 1] in both and [2] in both


def test_residual_dives_return_valid_packings_below_the_incumbent() -> None:
    p = from_dict(instance("ct1", 60, 2, 1))
    packings = colgen.ffd(p)
    upper = min(len(s) for s in packings)
    gen = colgen._Generator(p, [tuple(sorted(ep)) for s in packings for ep in s], 0,
                           greedy_rounds=10)
    gen.run(colgen.Deadline(5.0), target=upper)
    sol = colgen.dive(gen, upper=upper, time_limit=5.0, residual=True)
    assert sol is not None and len(sol) < upper
    assert check(p, sol) == [] and sorted(j for ep in sol for j in ep) == list(range(p.n))


@pytest.mark.parametrize("K", [2, 5])
def test_residual_and_rounds_keep_the_bound_under_a_known_optimum(K: int) -> None:
    """ct10's triplets fill every epoch exactly: the optimum is n / 3."""
    p = from_dict(instance("ct10", 60, K, 3))
    r = colgen.solve_epochs(p, time_limit=5, residual=True, greedy_rounds=10)
    assert check(p, r.solution) == []
    assert r.bound <= 20 <= r.objective


def test_dive_from_the_swap_lp_packs_every_job() -> None:
    """The LP with swap columns covers a job through a dominating job's pattern; a dive
    from it holds them at 0 first, so an integral LP is a cover by patterns."""
    p = from_dict(instance("ct5", 60, 2, 1))
    packings = colgen.ffd(p)
    upper = min(len(s) for s in packings)
    gen = colgen._Generator(p, [tuple(sorted(ep)) for s in packings for ep in s], 0,
                           swaps=True)
    assert gen.master.swaps
    gen.run(colgen.Deadline(60.0), target=upper)  # about 1.5 s; the limit only a guard
    assert gen.swapping
    sol = colgen.dive(gen, upper=upper + 1, time_limit=60.0)
    assert not gen.swapping
    assert sol is not None
    assert check(p, sol) == [] and sorted(j for ep in sol for j in ep) == list(range(p.n))
    # an integral LP solution of the swap LP that leaves a job to a swap column: the
    # dive solves the plain LP again instead of reading it as a packing
    q = EpochProblem((10,), ((6,), (5,), (4,)))
    gen = colgen._Generator(q, [(0, 2), (1,)], 0, swaps=True)
    gen.run(colgen.Deadline(5.0))
    gen.out.lp, gen.out.lp_solution = 1.0, {0: 1.0}  # job 1 by the swap 0 -> 1
    sol = colgen.dive(gen, upper=3, time_limit=5.0)
    assert sol is not None and check(q, sol) == [] and len(sol) == 2


@pytest.mark.parametrize("seed", range(10))
def test_swap_improve_fits_and_leaves_no_better_exchange(seed: int) -> None:
    rng = random.Random(5000 + seed)
    p = from_dict(instance(rng.choice(CLASSES), 30, rng.choice((2, 5)), seed + 1))
    duals = [rng.random() for _ in range(p.n)]
    start = greedy_patterns(p, duals)[-1]
    got = swap_improve(p, start, duals, range(p.n), max_passes=10**6)
    assert fits(p, got) and len(set(got)) == len(got)
    assert sum(duals[j] for j in got) >= sum(duals[j] for j in start) - 1e-12
    for j in got:  # no exchange of one job for a better one outside still fits
        for i in set(range(p.n)) - set(got):
            if duals[i] > duals[j]:
                assert not fits(p, [x for x in got if x != j] + [i]), (j, i)


@pytest.mark.parametrize("seed", range(20))
def test_dp_pricing_matches_enumeration(seed: int) -> None:
    rng = random.Random(6000 + seed)
    K, n = rng.randint(1, 2), rng.randint(1, 11)
    cap = tuple(rng.randint(1, 40) for _ in range(K))
    dem = [[rng.randint(0, c) for c in cap] for _ in range(n)]
    for d in dem:  # a job needs some resource
        d[0] = max(d[0], 1)
    p = EpochProblem(cap, tuple(map(tuple, dem)))
    w = [rng.choice((0, 1, 7, 10**6, 10**9 + 7)) for _ in range(p.n)]
    price = dp_pattern(p, w, above=0)
    top = _max_pattern(p, w)
    assert price is not None and price.proved and price.upper == price.value == top
    assert fits(p, price.pattern) and sum(w[j] for j in price.pattern) == top
    assert price.found == ((price.pattern,) if top > 0 else ())


def test_dp_pricing_declines_what_it_cannot_do() -> None:
    assert dp_pattern(EpochProblem((5, 5, 5), ((1, 1, 1),)), [3]) is None  # K = 3
    assert dp_pattern(EpochProblem((10**6, 10**6), ((1, 1),)), [3]) is None  # states
    with pytest.raises(ValueError, match="non-negative integers"):
        dp_pattern(EpochProblem((5,), ((1,),)), [1.5])


def test_exchanges_only_up_to_their_k() -> None:
    for K in (1, 2, 3, 10):
        p = from_dict(instance("ct1", 20, K, 1))
        gen = colgen._Generator(p, [tuple(sorted(ep)) for ep in colgen.ffd(p)[0]], 0)
        assert gen.improve is (K <= colgen.IMPROVE_MAX_K)



def _compiled_pricer() -> None:
    """The compiled branch and bound in numba's cache (skip without numba)."""
    from models.kresource.knapsack import compile_kernel, compiled_available

    if not compiled_available():
        pytest.skip("numba is not installed")
    assert compile_kernel()

@pytest.fixture()
def deep_pricing(monkeypatch: pytest.MonkeyPatch) -> None:
    """CP-SAT's share of a pricing at K >= 3 cut to nothing, so every pricing the first
    branch and bound leaves goes to the deeper branch and bound (numba needed)."""
    _compiled_pricer()
    monkeypatch.setattr(colgen, "CPSAT_CAP", 0.0)
    monkeypatch.setattr(colgen, "BB_NODES", 1)  # the first search always misses


@pytest.mark.parametrize("seed", range(20))
def test_deep_pricing_bounds_every_pattern(deep_pricing: None, seed: int) -> None:
    """The deeper search's answer against enumeration, hostile weights: its upper bound
    is at or above every pattern's weight (the maximum itself when proved and some
    pattern reaches the threshold), its columns fit and reach the threshold."""
    rng = random.Random(3000 + seed)
    K, n = 3, rng.randint(4, 11)
    cap = tuple(rng.randint(10, 30) for _ in range(K))
    p = EpochProblem(cap, tuple(tuple(rng.randint(1, c // 2) for c in cap)
                                for _ in range(n)))
    w = [rng.choice((0, 1, 7, 10**6, 10**9 + 7, 10**12)) for _ in range(n)]
    top = _max_pattern(p, w)
    gen = colgen._Generator(p, [(j,) for j in range(n)], 0, compiled=True)
    for at_least in (1, top, top + 1):
        price = gen._cpsat_then_deep(w, max(at_least, 1), (), colgen.Deadline(20))
        assert price.upper >= top
        assert price.proved, "the deeper search has the nodes to prove these"
        assert price.upper == (top if top >= at_least else max(at_least, 1) - 1)
        assert all(fits(p, q) and sum(w[j] for j in q) >= at_least for q in price.found)


@pytest.mark.parametrize("seed", range(15))
def test_colgen_with_deep_pricing_matches_brute_force(deep_pricing: None, seed: int
                                                      ) -> None:
    rng = random.Random(4000 + seed)
    K, n = 3, rng.randint(5, 10)
    cap = tuple(rng.randint(20, 40) for _ in range(K))
    p = EpochProblem(cap, tuple(tuple(rng.randint(c // 5, 2 * c // 3) for c in cap)
                                for _ in range(n)))
    ref = brute.solve_epochs(p)
    got = colgen.solve_epochs(p, time_limit=20)
    assert check(p, got.solution) == []
    assert got.bound <= ref.objective <= got.objective
    assert got.status is Status.OPTIMAL, got.note
    assert got.objective == ref.objective



@pytest.mark.parametrize("cached", [True, False])
def test_the_note_says_when_pricing_lacks_the_compiled_search(monkeypatch, cached) -> None:
    """At K >= 3 the path depends on numba's cache (the branch and bound, or CP-SAT
    alone): a run without the compiled search says so, so a user comparing a fresh
    install's runs with later ones knows why they differ."""
    if cached:
        _compiled_pricer()
    monkeypatch.setattr(colgen, "compiled_ready", lambda: cached)
    r = colgen.solve_epochs(from_dict(instance("ct1", 20, 10, 1)), time_limit=20)
    assert r.status is Status.OPTIMAL and "exact pricings" in r.note, r.note
    assert ("`schedsearch compile`" in r.note) is not cached, r.note


def test_a_two_resource_solve_does_not_import_numba():
    """The compiled branch and bound prices only where K >= BB_MIN_K: a K = 2 solve leaves
    numba unloaded (about 0.25 s of a command-line run), whether or not its kernel is
    cached."""
    from processes import fresh_python

    code = ("import sys\n"
            "from instances.vbp import instance\n"
            "from models.kresource import colgen\n"
            "from sim.problems.kresource import from_dict\n"
            "p = from_dict(instance('ct1', 20, 2, seed=1))\n"
            "r = colgen.solve_epochs(p, time_limit=5)\n"
            "assert r.status.value == 'OPTIMAL', r\n"
            "print('numba' in sys.modules)\n")
    assert fresh_python(code).strip() == "False"
