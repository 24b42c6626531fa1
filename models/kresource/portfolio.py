"""Portfolio for the offline minimum response time (``kresource_response``). Seconds of
wall clock; the stages share ``time_limit``, bound computation included.

1. A short CP-SAT run (``min(1 s, 10%)`` of the limit; most small instances are proved
   there).
2. Small models (the time-indexed model within ``max_vars`` / ``max_nonzeros``): the
   time-indexed CBC model (its LP relaxation is strong on short horizons, where CP-SAT's
   cumulative bound is weak) on half the time left, then CP-SAT on the rest.
3. Larger models (:func:`_large`) whose LP fits :class:`models.kresource.bounds.
   BoundOptions`' size limits (beyond them CP-SAT's one worker goes on with the time
   left: measured on a 500-job model, it finds better schedules than the interleaved
   search):

   a. CP-SAT with :data:`INTERLEAVE` subsolvers interleaved in its one thread (its
      large-neighbourhood searches among them, its LP-based ones, :data:`IGNORED`, left
      out) on :data:`SEARCH_SHARE` of the time left;
   b. the certified bound of :func:`models.kresource.bounds.response_bound` (time-indexed
      LP with packing cuts, Lagrangian certificate) on at most :data:`BOUND_SHARE` of
      the time left;
   c. reduced-cost fixing: with the best objective ``U`` so far, each job keeps only the
      starts a schedule of cost ``<= U - 1`` can use, and CP-SAT (interleaved) searches
      that restricted model with ``objective <= U - 1`` on the time left. Its answer
      proves more than it says: INFEASIBLE proves ``U`` optimal, and its bound ``b``
      proves ``min(U, b)``. Without an LP bound (out of time) the interleaved search
      goes on instead.

   A stage shorter than :data:`MIN_INTERLEAVE` seconds runs CP-SAT's one worker.

The best solution of all stages and the best bound (every one valid for the full
problem) are kept; OPTIMAL only when that bound meets that solution.
"""

from __future__ import annotations

import time

from models.kresource import bounds, cpsat, ilp
from models.kresource.common import remaining
from models.portfolio import meets
from sim.problems import checker, scorer
from sim.problems.kresource import ResponseProblem
from sim.result import Result, Status, build

INTERLEAVE = 8
"""CP-SAT subsolvers interleaved in one thread on the larger models."""
IGNORED = ("core", "default_lp", "max_lp", "pseudo_costs", "reduced_costs")
"""CP-SAT's LP-based subsolvers, left out of the interleaved search: in one thread each
task of theirs takes a deterministic second (about 14 s of wall clock on a loaded
machine), which starved the large-neighbourhood search (on the 40-job K = 4 target,
reduced-cost fixed below 494, 30 s: 474 with them, 466 without), and their bound stays
below the LP bound of stage b."""
MIN_INTERLEAVE = 2.0
"""Seconds below which a stage runs CP-SAT's one-worker search instead (setting up the
interleaved subsolvers of a 500-job model overran a 0.4 s stage by 0.7 s)."""
SEARCH_SHARE = 0.3
"""Share of the time left (after the short run) for the first interleaved search."""
BOUND_SHARE = 0.35
"""Largest share of the time left (after the first search) for the certified bound."""


def solve_response(problem: ResponseProblem, *, time_limit: float | None = None,
                   seed: int = 0, max_vars: int = 5_000,
                   max_nonzeros: int = 60_000) -> Result:
    """The portfolio of the module docstring."""
    t0 = time.perf_counter()
    quick = 1.0 if time_limit is None else min(1.0, 0.1 * time_limit)
    r = cpsat.solve_response(problem, time_limit=quick, seed=seed)
    if r.status is Status.OPTIMAL:
        return _result(problem, t0, time_limit, seed, [r], [r.bound], "CP-SAT")
    results = [r]
    first = None if time_limit is None else 0.5 * remaining(t0, time_limit)
    try:
        r = ilp.solve_response(problem, time_limit=first, seed=seed, max_vars=max_vars,
                               max_nonzeros=max_nonzeros)
    except ValueError:  # too large for the time-indexed model
        return _large(problem, t0, time_limit, seed, results)
    results.append(r)
    if r.status is Status.OPTIMAL:
        return _result(problem, t0, time_limit, seed, [r], [r.bound], "time-indexed ILP")
    left = remaining(t0, time_limit)
    if left is None or left > 0.05:
        results.append(cpsat.solve_response(problem, time_limit=left, seed=seed))
    return _result(problem, t0, time_limit, seed, results, [r.bound for r in results],
                   "; ".join(f"{r.solver}: {r.status.value}" for r in results))


def _large(problem: ResponseProblem, t0: float, time_limit: float | None, seed: int,
           results: list[Result]) -> Result:
    """Stages 3a-3c of the module docstring after the short run ``results[0]``."""
    notes = ["cpsat: " + results[0].status.value]
    found = [r.bound for r in results]
    left = remaining(t0, time_limit)
    hint = results[0].solution
    if not bounds.lp_fits(problem):
        if left is None or left > 0.05:  # CP-SAT's one worker goes on
            r = cpsat.solve_response(problem, time_limit=left, seed=seed)
            results.append(r)
            found.append(r.bound)
            notes.append(f"cpsat: {r.status.value}; no LP bound (beyond its size limits)")
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    if left is None or left > 0.05:
        share = None if left is None else SEARCH_SHARE * left
        r = cpsat.solve_response(problem, time_limit=share, seed=seed,
                                 interleave=_interleave(share), hint=hint, ignore=IGNORED)
        results.append(r)
        found.append(r.bound)
        notes.append(f"{_name(share)}: {r.status.value}")
        if r.status is Status.OPTIMAL:
            return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    left = remaining(t0, time_limit)
    lb = bounds.response_bound(problem, time_limit=None if left is None else BOUND_SHARE * left)
    best = min((r for r in results if r.solution is not None), key=lambda r: r.objective,
               default=None)
    if lb is None:
        notes.append("no LP bound (out of time)")
    else:
        found.append(lb.bound)
        notes.append(f"LP bound {lb.bound} ({lb.rounds} LP solves, {lb.cuts} packing cuts, "
                     f"{lb.seconds:.1f} s)")
    left = remaining(t0, time_limit)
    if left is not None and left <= 0.05 or best is not None and lb is not None \
            and lb.bound >= best.objective:
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    if lb is not None and best is not None:
        better, proved, note = fixed_search(problem, lb, best, time_limit=left, seed=seed)
        results += better
        found.append(proved)
    else:  # no bound to fix with: the interleaved search goes on
        r = cpsat.solve_response(problem, time_limit=left, seed=seed,
                                 interleave=_interleave(left), ignore=IGNORED,
                                 hint=None if best is None else best.solution)
        results.append(r)
        found.append(r.bound)
        note = f"{_name(left)}: {r.status.value}"
    notes.append(note)
    return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))


def fixed_search(problem: ResponseProblem, lb: bounds.ResponseBound, best: Result, *,
                 time_limit: float | None, seed: int = 0,
                 ) -> tuple[list[Result], float | None, str]:
    """Stage 3c: CP-SAT below the objective ``U`` of the best schedule so far (first
    ``best``) on the starts that reduced-cost fixing with ``lb`` leaves, in rounds: CP-SAT's
    interleaved search can return before its limit (it does not start a batch it expects
    to overrun), and a round that found a better schedule lets the next one fix more
    starts. Rounds go on (seed + 1 each) while :data:`MIN_INTERLEAVE` seconds are left.

    Returns the best schedule found (a list of zero or one FEASIBLE result), the best
    bound the rounds prove on the full problem (``U`` when no schedule costs less than
    ``U``, ``min(U, b)`` from a round's bound ``b``; None if none) and a note."""
    t0 = time.perf_counter()
    sol, value, proved, rounds, last = best.solution, best.objective, None, 0, Status.UNKNOWN
    improved = False
    while True:
        left = remaining(t0, time_limit)
        if left is not None and (left <= 0.05 or rounds and left < MIN_INTERLEAVE):
            break
        upper = int(round(value))
        last, found, b = cpsat.search_response(
            problem, time_limit=left, seed=seed + rounds, interleave=_interleave(left),
            domains=lb.domains(upper - 1, problem.n), below=upper, lower_bound=lb.bound,
            hint=sol, ignore=IGNORED)
        rounds += 1
        if last is Status.INFEASIBLE:  # no schedule costs less than U
            proved = _higher(proved, float(upper))
            break
        if b is not None:
            proved = _higher(proved, min(float(upper), b))
        if found is not None:
            sol, value, improved = found, float(scorer(problem)(found)), True
        if last is Status.OPTIMAL or time_limit is None:
            break
    out = [build(solver="cpsat", status=Status.FEASIBLE, solution=sol, check=checker(problem),
                 objective=scorer(problem), runtime=0.0, seed=seed)] if improved else []
    return out, proved, (f"reduced-cost fixed {_name(time_limit)} below "
                         f"{int(round(best.objective))}: {rounds} round(s), last "
                         f"{last.value}")


def _higher(bound: float | None, new: float) -> float:
    """The better of two lower bounds (``bound`` None: none yet)."""
    return new if bound is None else max(bound, new)


def _interleave(seconds: float | None) -> int:
    """:data:`INTERLEAVE`, or 0 (one worker) for a stage shorter than
    :data:`MIN_INTERLEAVE` seconds."""
    return INTERLEAVE if seconds is None or seconds >= MIN_INTERLEAVE else 0


def _name(seconds: float | None) -> str:
    """The CP-SAT search a stage of ``seconds`` runs, for notes."""
    return f"cpsat ({INTERLEAVE} interleaved)" if _interleave(seconds) else "cpsat"


def _result(problem: ResponseProblem, t0: float, time_limit: float | None, seed: int,
            results: list[Result], found: list[float | None], note: str) -> Result:
    """The best solution of ``results`` with the best of the valid bounds ``found``."""
    sols = [r for r in results if r.solution is not None]
    best = min(sols, key=lambda r: r.objective) if sols else None
    valid = [b for b in found if b is not None]
    bound = max(valid) if valid else None
    status = Status.UNKNOWN if best is None else (
        Status.OPTIMAL if meets(best.objective, bound) else Status.FEASIBLE)
    return build(solver="portfolio", status=status, solution=best.solution if best else None,
                 bound=bound, check=checker(problem), objective=scorer(problem),
                 runtime=time.perf_counter() - t0, seed=seed, params={"time_limit": time_limit},
                 note=note)
