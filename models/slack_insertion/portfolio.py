"""Portfolio for optimal insertion (registered as ``portfolio``): CP-SAT for the
schedule, the certified LP bound of :mod:`models.slack_insertion.bounds` for the gap,
and CP-SAT again on the domains that bound's reduced costs leave. Seconds of wall
clock; the stages share ``time_limit``, the bound included.

1. CP-SAT on :data:`SEARCH_SHARE` of the limit (the small queues are proved there, and
   the run ends).
2. The LP bound with cardinality cuts
   (:func:`models.slack_insertion.bounds.insertion_bound`) on up to :data:`BOUND_SHARE`
   of the limit, with CP-SAT's schedule as the incumbent that shrinks its domains.
   CP-SAT's own bound on the open KTH snapshots is far weaker (the engine study's
   report, "Exact solvers per family").
3. CP-SAT on the time left, started from the best schedule so far (price ``P``), with
   every start time dropped that no schedule within the tie tolerance of ``P`` can use
   (:meth:`models.slack_insertion.bounds.InsertionBound.forbidden`, reduced-cost
   fixing). Every schedule in the tie set of the optimum (price at most ``P`` plus the
   tie width) keeps its starts, so a proof of this restricted model is a proof of the
   problem, and its bound ``b`` gives ``min(b, P)`` for the problem (a schedule outside
   the restricted domains costs more than ``P``).

The result is the best schedule of the CP-SAT runs (lowest price, then fewest moved)
and the best bound of all stages that is not above its price (a bound above it would be
a bug; it is dropped and said in the note). OPTIMAL only when a CP-SAT run proved its
schedule optimal (price and fewest moved jobs): an LP bound that meets the price proves
the price only, which the note says.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from models.slack_insertion.bounds import InsertionBound, insertion_bound
from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.cpsat import solve_cpsat
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_portfolio", "SEARCH_SHARE", "BOUND_SHARE"]

SEARCH_SHARE = 0.5
"""Share of the limit for the first CP-SAT run (its bound grows with uninterrupted time,
and is the better one on some open KTH snapshots)."""
BOUND_SHARE = 0.25
"""Largest share of the limit for the LP bound (its first solve alone took 0.5-10 s of
wall clock on the open KTH snapshots at 21-50 waiting jobs, load average 2.5-3.5); the
rest is CP-SAT's on the fixed domains."""


def solve_portfolio(problem: InsertionProblem, *, time_limit: float | None = None,
                    seed: int = 0) -> Result:
    """The portfolio of the module docstring (needs ``alpha_t == 1``, as CP-SAT does).

    Parameters
    ----------
    problem : InsertionProblem
    time_limit : float, optional
        Seconds for all stages.
    seed : int
        CP-SAT's seed (both runs).
    """
    deadline = Deadline(time_limit)
    params: dict[str, Any] = {"time_limit": time_limit}

    def share(f: float) -> float | None:  # a limit over MAX_SECONDS is none (models.deadline)
        limit = deadline.limit
        return None if limit is None else min(f * limit, deadline.left(0.0))

    first = solve_cpsat(problem, seed=seed, time_limit=share(SEARCH_SHARE))
    if first.status is Status.OPTIMAL:
        return finish("portfolio", problem, first.solution, Status.OPTIMAL, first.bound,
                      deadline, seed, params, note="proved by CP-SAT")
    runs = [first]
    lp = None if deadline.expired() else insertion_bound(
        problem, time_limit=share(BOUND_SHARE), incumbent=first.solution)
    notes = [_lp_note(lp)]
    bounds = [first.bound] if first.bound is not None else []
    if lp is not None:
        params.update(lp_bound=lp.bound, lp_seconds=lp.seconds, lp_columns=lp.columns,
                      lp_rounds=lp.rounds, lp_cuts=lp.cuts)
        bounds.append(lp.bound)
        fixed = _fixed_search(problem, lp, runs, deadline, seed, params, notes)
        if fixed is not None:
            runs.append(fixed[0])
            if fixed[1] is not None:
                bounds.append(fixed[1])
            if fixed[0].status is Status.OPTIMAL:
                return finish("portfolio", problem, fixed[0].solution, Status.OPTIMAL,
                              fixed[0].bound, deadline, seed, params,
                              note="; ".join(notes + ["proved by CP-SAT on the domains "
                                                      "fixed by the LP's reduced costs"]))
    sch = _best(problem, runs)
    price = ins.objective(problem, sch)
    valid = [b for b in bounds if b <= price + ins.price_tolerance(price)]
    if len(valid) < len(bounds):
        notes.append(f"bounds {sorted(set(bounds) - set(valid))} dropped: above the price "
                     f"{price!r}")
    bound = max(valid) if valid else None
    if bound is not None and price - bound <= ins.price_tolerance(price):
        notes.append("the price is proved optimal by the bound; fewest moved jobs not "
                     "proved")
        bound = min(bound, price)
    return finish("portfolio", problem, sch, Status.FEASIBLE, bound, deadline, seed, params,
                  note="; ".join(notes))


def _best(problem: InsertionProblem, runs: list[Result]) -> InsertionSchedule:
    """The best schedule of the runs and the current one (:func:`sim.problems.insertion.best`)."""
    found = [r.solution for r in runs if r.solution is not None]
    return ins.best(problem, found + [ins.current_schedule(problem)])


def _lp_note(lp: InsertionBound | None) -> str:
    if lp is None:
        return "LP bound: none in time or too large"
    return (f"LP bound: {lp.bound:.10g} ({lp.columns} columns, {lp.rows} rows, "
            f"{lp.cuts} cuts in {lp.rounds} solves, {lp.seconds:.2f} s)")


def _fixed_search(problem: InsertionProblem, lp: InsertionBound, runs: list[Result],
                  deadline: Deadline, seed: int, params: dict[str, Any],
                  notes: list[str]) -> tuple[Result, float | None] | None:
    """Stage 3 of the module docstring: CP-SAT's result on the fixed domains and its
    bound for the whole problem (None without time left)."""
    inc = _best(problem, runs)
    price = ins.objective(problem, inc)
    drop = lp.forbidden(price)
    params["fixed_starts"] = sum(map(len, drop.values()))
    if deadline.expired():
        return None
    r = solve_cpsat(problem, seed=seed, time_limit=deadline.left(0.0), incumbent=inc,
                    forbidden=drop)
    notes.append(f"CP-SAT on fixed domains ({params['fixed_starts']} of {lp.columns} "
                 f"starts dropped): {r.status.value}")
    if r.status is Status.OPTIMAL and r.objective > price + ins.price_tolerance(price):
        # cannot happen when the incumbent lies in the fixed domains; never claimed
        notes.append("its optimum is above the incumbent: not a proof")
        r = replace(r, status=Status.FEASIBLE)
    return r, None if r.bound is None else min(r.bound, price)
