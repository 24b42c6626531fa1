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

   a. the certified bound of :func:`models.kresource.bounds.response_bound` (time-indexed
      LP with packing cuts, Lagrangian certificate) on at most :data:`BOUND_SHARE` of
      the time left; without it (out of time) CP-SAT's interleaved search (below) goes
      on with the time left;
   b. a schedule from the LP: the local search over list-schedule orders of
      :func:`models.kresource.fixedmip.lp_order_schedule`, from the LP's mean starts, on
      at most :data:`HINT_SHARE` of the time left;
   c. reduced-cost fixing: a schedule of cost ``<= v`` starts each job only where the
      LP's reduced costs allow (:meth:`models.kresource.bounds.ResponseBound.domains`),
      so a model restricted to those starts misses no such schedule, and its answer
      proves more than it says. With ``U`` the best objective so far, where the
      time-indexed model on the starts fixed at ``U`` fits
      :class:`models.kresource.fixedmip.FixedMipOptions`:

      - CP-SAT with :data:`INTERLEAVE` subsolvers interleaved in its one thread (its
        large-neighbourhood searches among them, its LP-based ones, :data:`IGNORED`,
        left out), hinted with the best schedule, on :data:`HINT_SEARCH_SHARE` of the
        time left;
      - SCIP on that model hinted with the best schedule (:func:`models.kresource.
        fixedmip.solve_fixed`, presolve and its own cuts on) on the time left: its
        optimum is the problem's, its bound ``b`` (made safe) proves ``min(U, b)``;
      - CP-SAT's search below ``U`` (:func:`fixed_search`) if :data:`MIN_INTERLEAVE`
        seconds are left unproved.

      On the 40-job K = 4 target (``sim/experiments/engine/mip_bench.py``, the optimum
      459), SCIP hinted with the local search's 469 proved 459 in 43 s (alone, load
      average 4); the CP-SAT stages below reached 462-490 and bounds of 439-444 in
      60 s;
   d. where that model does not fit (the CP-SAT stages, with the LP bound):

      - the interleaved search on :data:`SEARCH_SHARE` of the time left;
      - bound probes (:func:`probe_bound`, on at most :data:`PROBE_SHARE` of the time
        left): the time-indexed CP-SAT model (a Boolean per start left, the LP's
        capacity rows and packing cuts, one worker at linearization level 2: CP-SAT
        branches on the bound's own LP) on the starts fixed at ``B - 1`` with
        ``objective <= B - 1``, for targets ``L < B <= U`` (``L`` the LP bound)
        climbing in steps (:data:`PROBE_STEP` of ``L``) towards the smallest ``B``
        certifying a gap of :data:`PROBE_GAP`, then halfway to ``U``; INFEASIBLE proves
        ``B``, a schedule found lowers ``U``, a stop without an answer proves ``min(B,
        b)`` from CP-SAT's bound ``b`` and ends the probes;
      - the search below ``U`` (:func:`fixed_search`, on the time left): CP-SAT
        (interleaved) on the starts fixed at ``U - 1`` with ``objective <= U - 1``;
        INFEASIBLE proves ``U`` optimal, its bound ``b`` proves ``min(U, b)``, a
        schedule found lowers ``U``.

   A stage shorter than :data:`MIN_INTERLEAVE` seconds runs CP-SAT's one worker.

The best solution of all stages and the best bound (every one valid for the full
problem) are kept; OPTIMAL only when that bound meets that solution.
"""

from __future__ import annotations

import dataclasses
import math
import time

from models.deadline import Deadline
from models.kresource import bounds, cpsat, fixedmip, ilp
from models.portfolio import BOUND_TOL, meets
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
below the LP bound of stage a."""
MIN_INTERLEAVE = 2.0
"""Seconds below which a stage runs CP-SAT's one-worker search instead (setting up the
interleaved subsolvers of a 500-job model overran a 0.4 s stage by 0.7 s)."""
SEARCH_SHARE = 0.3
"""Share of the time left (after the LP bound) for the interleaved search of stage 3d."""
HINT_SHARE = 0.1
"""Share of the time left (after the LP bound) for the local search over list schedules
that gives the fixed model its hint (:func:`models.kresource.fixedmip.lp_order_schedule`)."""
HINT_SEARCH_SHARE = 0.05
"""Share of the time left (after the local search) for CP-SAT's interleaved search from its
schedule, before SCIP. Measured at 60 s, one run each, load average 1.7-2.6, niced: on the
40-job K = 4 target seed 1, 0.05 proved the optimum 459 twice (57.4 and 56.7 s), 0.1 gave
461 / 450 and 0.15 459 / 453-454 in three runs (SCIP needs about 45 s from the hint of
469); on seed 4 the schedule needs CP-SAT: 0.05 gave 422 / 383, 0.1 401 / 384, 0.15 403 /
382 (423 / 383 without the stage)."""
BOUND_SHARE = 0.35
"""Largest share of the time left (after the short run) for the certified bound."""
PROBE_SHARE = 0.35
"""Largest share of stage c's time for the bound probes (:func:`probe_bound`), before the
search below the best objective (which takes what the probes leave)."""
PROBE_GAP = 0.02
"""The probes aim first at the smallest bound that certifies this relative gap."""
PROBE_STEP = 0.01
"""A probe below that aim targets this share of the LP bound above the bound proved so
far (at least 1 time unit): a probe a few units above the LP bound is proved in seconds,
one 19 above not in 40 s (the 40-job K = 4 target, LP bound 434: 440 in 7 s, 447 in
16 s, 453 stopped at 444, one worker at load average 4-5 on 2 cores)."""
PROBE_MIN = 0.5
"""Seconds below which no probe starts (building the model and checking a schedule
found take a few tenths of a second: shorter last probes overran a 60 s limit by
0.6 ms)."""


def solve_response(problem: ResponseProblem, *, time_limit: float | None = None,
                   seed: int = 0, max_vars: int = 5_000,
                   max_nonzeros: int = 60_000) -> Result:
    """The portfolio of the module docstring. The stages after the short run share
    ``time_limit`` less twice the time the short run's answer took to check and score
    (once for the last stage's answer, once for the portfolio's own result)."""
    res = _portfolio(problem, time_limit, seed, max_vars, max_nonzeros)
    return dataclasses.replace(res, params={**res.params, "time_limit": time_limit})


def _portfolio(problem: ResponseProblem, time_limit: float | None, seed: int, max_vars: int,
               max_nonzeros: int) -> Result:
    """:func:`solve_response`'s stages (its result's ``time_limit`` may be the one the
    later stages shared)."""
    t0 = time.perf_counter()
    dl = Deadline(time_limit, start=t0)
    quick = 1.0 if time_limit is None else min(1.0, 0.1 * time_limit)
    r = cpsat.solve_response(problem, time_limit=quick, seed=seed)
    if r.status is Status.OPTIMAL:
        return _result(problem, t0, time_limit, seed, [r], [r.bound], "CP-SAT")
    # the seconds the short run's answer took to check and score after its clock stopped:
    # each later CP-SAT stage's answer takes as long again, and so does the portfolio's own
    post = max(0.0, time.perf_counter() - t0 - r.runtime)
    time_limit = None if time_limit is None else max(0.0, time_limit - 2 * post)
    dl = dl.shortened(2 * post)
    results = [r]
    left = dl.left(0.0)  # 0 after a Ctrl-C, with or without a limit
    first = None if left is None else 0.5 * left
    if first is not None and first <= 0.05:  # no time for another stage
        return _result(problem, t0, time_limit, seed, results, [r.bound],
                       f"cpsat: {r.status.value}; no time for another stage")
    try:
        r = ilp.solve_response(problem, time_limit=first, seed=seed, max_vars=max_vars,
                               max_nonzeros=max_nonzeros)
    except ValueError:  # too large for the time-indexed model
        return _large(problem, dl, seed, results)
    results.append(r)
    if r.status is Status.OPTIMAL:
        return _result(problem, t0, time_limit, seed, [r], [r.bound], "time-indexed ILP")
    left = dl.left(0.0)
    if left is None or left > 0.05:
        results.append(cpsat.solve_response(problem, time_limit=left, seed=seed))
    return _result(problem, t0, time_limit, seed, results, [r.bound for r in results],
                   "; ".join(f"{r.solver}: {r.status.value}" for r in results))


def _large(problem: ResponseProblem, dl: Deadline, seed: int, results: list[Result]
           ) -> Result:
    """Stages 3a-3d of the module docstring after the short run ``results[0]``, within
    ``dl`` (a Ctrl-C since the portfolio began ends it: no further stage starts)."""
    t0, time_limit = dl.t0, dl.limit
    notes = ["cpsat: " + results[0].status.value]
    found = [r.bound for r in results]
    left = dl.left(0.0)
    hint = results[0].solution
    if not bounds.lp_fits(problem):
        if left is None or left > 0.05:  # CP-SAT's one worker goes on
            r = cpsat.solve_response(problem, time_limit=left, seed=seed, hint=hint)
            results.append(r)
            found.append(r.bound)
            notes.append(f"cpsat: {r.status.value}; no LP bound (beyond its size limits)")
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    fixedmip.start_worker_server()  # about 1 s: ready by the time SCIP runs
    lb = bounds.response_bound(problem, time_limit=None if left is None else BOUND_SHARE * left)
    if lb is None:
        notes.append("no LP bound (out of time)")
    else:
        found.append(lb.bound)
        notes.append(f"LP bound {lb.bound} ({lb.rounds} LP solves, {lb.cuts} packing cuts, "
                     f"{lb.seconds:.1f} s)")
        left = dl.left(0.0)
        sol = fixedmip.lp_order_schedule(problem, lb, seed=seed, time_limit=None if left is None
                                         else HINT_SHARE * left)
        results.append(build(solver="list", status=Status.FEASIBLE, solution=sol,
                             check=checker(problem), objective=scorer(problem), runtime=0.0,
                             seed=seed))
    best = _best(results)
    left = dl.left(0.0)
    if left is not None and left <= 0.05 or best is None or lb is not None \
            and lb.bound >= best.objective:
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    if lb is None:  # no bound to fix with: the interleaved search goes on
        r = cpsat.solve_response(problem, time_limit=left, seed=seed,
                                 interleave=_interleave(left), ignore=IGNORED,
                                 hint=best.solution)
        results.append(r)
        found.append(r.bound)
        notes.append(f"{_name(left)}: {r.status.value}")
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    return _fixed_stages(problem, dl, seed, lb, results, found, notes)


def _fixed_stages(problem: ResponseProblem, dl: Deadline, seed: int,
                  lb: bounds.ResponseBound, results: list[Result], found: list[float | None],
                  notes: list[str]) -> Result:
    """Stage 3c of the module docstring (3d where SCIP's model does not fit), from the
    best schedule of ``results`` and the LP bound ``lb``."""
    t0, time_limit = dl.t0, dl.limit
    best = _best(results)
    left = dl.left(0.0)
    if fixedmip.fits(lb, best.objective):
        share = None if left is None else HINT_SEARCH_SHARE * left
        r = _search(problem, share, seed, best, lb, results, found, notes)
        best = _best(results)
        left = dl.left(0.0)
        if r.status is Status.OPTIMAL or left is not None and left <= 0.05:
            return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    better, proved, note = fixedmip.solve_fixed(problem, lb, best, time_limit=left, seed=seed)
    results += better
    found.append(proved)
    notes.append(note)
    if note.startswith(fixedmip.NOT_RUN):
        return _cpsat_stages(problem, dl, seed, lb, results, found, notes)
    best = _best(results)
    left = dl.left(0.0)
    unproved = proved is None or proved < best.objective
    if unproved and (left is None or left >= MIN_INTERLEAVE):
        better, proved, note = fixed_search(problem, lb, best, time_limit=left, seed=seed)
        results += better
        found.append(proved)
        notes.append(note)
    return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))


def _search(problem: ResponseProblem, share: float | None, seed: int, best: Result,
            lb: bounds.ResponseBound, results: list[Result], found: list[float | None],
            notes: list[str]) -> Result:
    """CP-SAT's interleaved search for ``share`` seconds from ``best``'s schedule, above the
    LP bound ``lb``; its result, bound and status are added to ``results``, ``found`` and
    ``notes``."""
    r = cpsat.solve_response(problem, time_limit=share, seed=seed,
                             interleave=_interleave(share), hint=best.solution,
                             lower_bound=lb.bound, ignore=IGNORED)
    results.append(r)
    found.append(r.bound)
    notes.append(f"{_name(share)}: {r.status.value}")
    return r


def _best(results: list[Result]) -> Result | None:
    """The result with the best schedule among ``results`` (None if none has one)."""
    return min((r for r in results if r.solution is not None), key=lambda r: r.objective,
               default=None)


def _cpsat_stages(problem: ResponseProblem, dl: Deadline, seed: int,
                  lb: bounds.ResponseBound, results: list[Result], found: list[float | None],
                  notes: list[str]) -> Result:
    """Stage 3d of the module docstring: the interleaved search, the bound probes and the
    search below the best objective, each on the LP bound ``lb``."""
    t0, time_limit = dl.t0, dl.limit
    left = dl.left(0.0)
    if left is not None and left <= 0.05:
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    share = None if left is None else SEARCH_SHARE * left
    r = _search(problem, share, seed, _best(results), lb, results, found, notes)
    best = _best(results)
    left = dl.left(0.0)
    if r.status is Status.OPTIMAL or left is not None and left <= 0.05:
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    better, proved, note = probe_bound(
        problem, lb, best, time_limit=None if left is None else PROBE_SHARE * left, seed=seed)
    results += better
    found.append(proved)
    notes.append(note)
    best = min(better + [best], key=lambda r: r.objective)
    left = dl.left(0.0)
    if proved is not None and proved >= best.objective or left is not None and left <= 0.05:
        return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))
    better, proved, note = fixed_search(problem, lb, best, time_limit=left, seed=seed)
    results += better
    found.append(proved)
    notes.append(note)
    return _result(problem, t0, time_limit, seed, results, found, "; ".join(notes))


def probe_bound(problem: ResponseProblem, lb: bounds.ResponseBound, best: Result, *,
                time_limit: float | None, seed: int = 0,
                ) -> tuple[list[Result], float | None, str]:
    """Stage 3c's bound probes: with ``L`` = ``lb.bound`` and ``U`` the objective of the
    best schedule so far (first ``best``), ask the time-indexed CP-SAT model
    (:func:`models.kresource.cpsat.probe_indexed`: the starts that reduced-cost fixing
    at ``B - 1`` leaves, the LP's rows and packing cuts) for a schedule of cost ``<= B -
    1``, for targets ``L < B <= U`` (:func:`_target`: steps of :data:`PROBE_STEP` of
    ``L`` towards the smallest ``B`` that certifies a gap of :data:`PROBE_GAP`, then
    halfway to ``U``). Every schedule of cost ``<= B - 1`` lies in that model, so
    INFEASIBLE proves ``B`` for the full problem (and the next probe targets higher); a
    schedule found is a new incumbent (``U`` drops, the targets with it); a stop without
    an answer proves ``min(B, b)`` from CP-SAT's bound ``b`` and ends the probes (on the
    instances measured, halved steps after such a stop proved nothing more). Each
    probe has the time left (seconds), seed + 1 each; none starts with less than
    :data:`PROBE_MIN` seconds left.

    Returns the best schedule found (a list of zero or one FEASIBLE result), the best
    bound proved on the full problem (None if none) and a note."""
    dl = Deadline(time_limit)
    sol, value, proved, probes = best.solution, best.objective, None, []
    improved = False
    step = max(1, math.ceil(PROBE_STEP * lb.bound))
    target = _target(lb.bound, value, step)
    while target is not None:
        left = dl.left(0.0)
        if left is not None and left < PROBE_MIN:
            break
        status, found, b = cpsat.probe_indexed(problem, lb, target, time_limit=left,
                                               seed=seed + len(probes))
        probes.append(f"{target}: {status.value}")
        if status is Status.INFEASIBLE:  # no schedule costs less than the target
            proved = _higher(proved, float(target))
        elif b is not None:
            proved = _higher(proved, min(float(target), b))
        if found is not None:
            sol, value, improved = found, float(scorer(problem)(found)), True
        elif status is not Status.INFEASIBLE:  # no answer in the time given
            break
        if proved is not None and proved >= value:
            break
        # CP-SAT's bound on a stopped probe may lie below the LP bound: never climb from there
        target = _target(lb.bound if proved is None else max(lb.bound, int(proved)), value,
                         step)
    note = f"bound probes, time-indexed cpsat ({len(probes)}: {', '.join(probes) or 'none'})"
    return _found(problem, sol, seed, improved), proved, note


def _target(lower: int, upper: float, step: int) -> int | None:
    """The next probe's target bound (time units) between the bound ``lower`` proved so
    far and the best objective ``upper``: below the aim (the smallest bound certifying
    a gap of :data:`PROBE_GAP`), ``lower + step`` (at most the aim); from the aim on,
    halfway to ``upper``; None when ``lower`` meets ``upper``."""
    upper = int(round(upper))
    if lower >= upper:
        return None
    aim = math.ceil((1.0 - PROBE_GAP) * upper - 1e-9)
    if aim > lower:
        return min(aim, lower + max(1, step))
    return max(lower + 1, (lower + upper + 1) // 2)


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
    dl = Deadline(time_limit)
    sol, value, proved, rounds, last = best.solution, best.objective, None, 0, Status.UNKNOWN
    improved = False
    while True:
        left = dl.left(0.0)
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
    note = (f"reduced-cost fixed {_name(time_limit)} below {int(round(best.objective))}: "
            f"{rounds} round(s), last {last.value}")
    return _found(problem, sol, seed, improved), proved, note


def _found(problem: ResponseProblem, sol: list[int], seed: int, improved: bool
           ) -> list[Result]:
    """The schedule ``sol`` (job starts) a stage found, as a list of one FEASIBLE result
    checked and scored against ``problem``; empty when the stage found nothing better."""
    if not improved:
        return []
    return [build(solver="cpsat", status=Status.FEASIBLE, solution=sol, check=checker(problem),
                  objective=scorer(problem), runtime=0.0, seed=seed)]


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
    """The best solution of ``results`` with the best of the bounds ``found`` that no
    stage's solution contradicts (a bound above a stage's objective, beyond
    ``models.portfolio.BOUND_TOL``, is dropped and said in the note)."""
    sols = [r for r in results if r.solution is not None]
    best = min(sols, key=lambda r: r.objective) if sols else None
    valid = []
    for b in found:
        if b is None or math.isnan(b):
            continue
        beyond = [r.objective for r in sols if b > r.objective + BOUND_TOL *
                  max(1.0, abs(r.objective))]
        if beyond:
            note += f"; bound {b!r} dropped: above the objective {beyond[0]!r} of a stage"
        else:
            valid.append(b)
    bound = max(valid) if valid else None
    status = Status.UNKNOWN if best is None else (
        Status.OPTIMAL if meets(best.objective, bound) else Status.FEASIBLE)
    return build(solver="portfolio", status=status, solution=best.solution if best else None,
                 bound=bound, check=checker(problem), objective=scorer(problem),
                 runtime=time.perf_counter() - t0, seed=seed, params={"time_limit": time_limit},
                 note=note)
