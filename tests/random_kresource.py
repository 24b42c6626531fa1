"""Small random K-resource epoch, selection and response problems for the differential tests of
the exact solvers (drawn from a caller's ``random.Random``, so each test keeps its own
stream)."""

from __future__ import annotations

import random

from sim.problems.kresource import EpochProblem, ResponseProblem, SelectionProblem


def epochs_with_room(rng: random.Random) -> EpochProblem:
    """K in 1..3 resources, 4..11 jobs of a sixth to a half of each capacity: first fit
    leaves room to improve (the local searches' tests)."""
    K, n = rng.randint(1, 3), rng.randint(4, 11)
    cap = tuple(rng.randint(10, 30) for _ in range(K))
    return EpochProblem(cap, tuple(tuple(rng.randint(c // 6, c // 2) for c in cap)
                                   for _ in range(n)))


def selection(rng: random.Random, max_n: int = 9) -> SelectionProblem:
    """K in 1..3 resources, 2..``max_n`` candidates."""
    K, n = rng.randint(1, 3), rng.randint(2, max_n)
    cap = tuple([rng.randint(10, 30)] * K)
    free = tuple(rng.randint(0, c) for c in cap)
    extra = tuple(rng.randint(0, f) for f in free)
    dem = tuple(tuple(rng.randint(1, max(1, c // 3)) for c in cap) for _ in range(n))
    return SelectionProblem(cap, free, extra, dem, tuple(rng.random() < 0.5 for _ in range(n)))


def response(rng: random.Random) -> ResponseProblem:
    """K in 1..2 resources, 2..5 jobs."""
    K, n = rng.randint(1, 2), rng.randint(2, 5)
    cap = tuple(rng.randint(4, 8) for _ in range(K))
    return ResponseProblem(cap, tuple(rng.randint(0, 4) for _ in range(n)),
                           tuple(rng.randint(1, 3) for _ in range(n)),
                           tuple(tuple(rng.randint(1, c) for c in cap) for _ in range(n)),
                           tuple(rng.randint(1, 3) for _ in range(n)))


def response_with_weights(rng: random.Random, n: int, K: int, tight: bool) -> ResponseProblem:
    """``n`` jobs on ``K`` resources of capacity 4..10, releases 0..6, runtimes 1..4,
    weights 0..3, some demands 0 when K > 1; ``tight``: demands up to the capacity (many
    pairs do not fit), else up to half of it (the response bound's and the fixed MIP's
    differential tests)."""
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


def stage_from_list(stage, seed: int, tight: bool):  # noqa: ANN001, ANN201
    """Run an exact response stage (``stage(problem, bound, incumbent, time_limit=)``, the
    fixed MIP or the portfolio's fixed search) from the list schedule of the weighted
    problem drawn from ``seed`` (``tight`` as in :func:`response_with_weights`):
    ``(optimum by brute force, the list schedule, found, proved, note)``."""
    from heuristics.kresource import solve_list
    from models.kresource import brute
    from models.kresource.bounds import response_bound

    rng = random.Random(seed)
    p = response_with_weights(rng, rng.randint(3, 7), rng.randint(1, 3), tight=tight)
    inc = solve_list(p)
    found, proved, note = stage(p, response_bound(p), inc, time_limit=20.0)
    return brute.solve_response(p).objective, inc, found, proved, note
