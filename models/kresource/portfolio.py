"""Portfolio for the offline minimum response time (``kresource_response``): a short
CP-SAT run (``min(1 s, 10%)`` of the limit; most instances are proved there), then the
time-indexed CBC model when it is small (its LP relaxation is strong on short
horizons, where CP-SAT's cumulative bound is weak), then CP-SAT with the time left; the
best solution and the best proved bound of the two are kept. Seconds of wall clock.
"""

from __future__ import annotations

import time

from models.kresource import cpsat, ilp
from models.kresource.common import remaining
from sim.problems import checker, scorer
from sim.problems.kresource import ResponseProblem
from sim.result import Result, Status, build


def solve_response(problem: ResponseProblem, *, time_limit: float | None = None,
                   seed: int = 0, max_vars: int = 5_000,
                   max_nonzeros: int = 60_000) -> Result:
    """Time-indexed ILP (when at most ``max_vars`` variables) then CP-SAT; see module."""
    t0 = time.perf_counter()
    quick = 1.0 if time_limit is None else min(1.0, 0.1 * time_limit)
    r = cpsat.solve_response(problem, time_limit=quick, seed=seed)
    if r.status is Status.OPTIMAL:
        return build(solver="portfolio", status=r.status, solution=r.solution, bound=r.bound,
                     check=checker(problem), objective=scorer(problem),
                     runtime=time.perf_counter() - t0, seed=seed,
                     params={"time_limit": time_limit}, note="CP-SAT")
    results = [r]
    first = None if time_limit is None else 0.5 * remaining(t0, time_limit)
    try:
        r = ilp.solve_response(problem, time_limit=first, seed=seed, max_vars=max_vars,
                               max_nonzeros=max_nonzeros)
    except ValueError:  # too large for the time-indexed model
        r = None
    if r is not None:
        results.append(r)
        if r.status is Status.OPTIMAL:
            return build(solver="portfolio", status=r.status, solution=r.solution,
                         bound=r.bound, check=checker(problem), objective=scorer(problem),
                         runtime=time.perf_counter() - t0, seed=seed,
                         params={"time_limit": time_limit}, note="time-indexed ILP")
    left = remaining(t0, time_limit)
    if left is None or left > 0.05:
        results.append(cpsat.solve_response(problem, time_limit=left, seed=seed))
    sols = [r for r in results if r.solution is not None]
    best = min(sols, key=lambda r: r.objective) if sols else None
    bounds = [r.bound for r in results if r.bound is not None]
    bound = max(bounds) if bounds else None
    status = Status.OPTIMAL if any(r.status is Status.OPTIMAL for r in results) else (
        Status.FEASIBLE if best else Status.UNKNOWN)
    return build(solver="portfolio", status=status, solution=best.solution if best else None,
                 bound=bound, check=checker(problem), objective=scorer(problem),
                 runtime=time.perf_counter() - t0, seed=seed, params={"time_limit": time_limit},
                 note="; ".join(f"{r.solver}: {r.status.value}" for r in results))
