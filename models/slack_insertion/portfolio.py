"""Portfolio for optimal insertion (registered as ``portfolio``): CP-SAT for the
schedule, the certified LP bound of :mod:`models.slack_insertion.bounds` for the gap.
Seconds of wall clock; the stages share ``time_limit``, the bound included.

1. CP-SAT on :data:`SEARCH_SHARE` of the limit (the small queues are proved there, and
   the run ends).
2. The LP bound (:func:`models.slack_insertion.bounds.insertion_bound`) on the time left,
   with CP-SAT's schedule as the incumbent that shrinks its domains. CP-SAT's own bound
   on the open KTH snapshots is far weaker (the engine study's report, "Where the
   targets fail").

The result is the best schedule of the CP-SAT runs (lowest price, then fewest moved)
and the best bound of all stages that is not above its price (a bound above it would be
a bug; it is dropped and said in the note). OPTIMAL only when CP-SAT proved its
schedule optimal (price and fewest moved jobs): an LP bound that meets the price proves
the price only, which the note says.
"""

from __future__ import annotations

from typing import Any

from models.slack_insertion.bounds import insertion_bound
from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.cpsat import solve_cpsat
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem
from sim.result import Result, Status

__all__ = ["solve_portfolio", "SEARCH_SHARE"]

SEARCH_SHARE = 0.6
"""Share of the limit for CP-SAT; the LP bound gets the rest (it took 0.5-4.5 s of wall
clock on the open KTH snapshots at 21-50 waiting jobs, load average 2.5-3)."""


def solve_portfolio(problem: InsertionProblem, *, time_limit: float | None = None,
                    seed: int = 0) -> Result:
    """The portfolio of the module docstring (needs ``alpha_t == 1``, as CP-SAT does).

    Parameters
    ----------
    problem : InsertionProblem
    time_limit : float, optional
        Seconds for all stages.
    seed : int
        CP-SAT's seed.
    """
    deadline = Deadline(time_limit)
    params: dict[str, Any] = {"time_limit": time_limit}
    first = solve_cpsat(problem, seed=seed,
                        time_limit=None if time_limit is None else SEARCH_SHARE * time_limit)
    if first.status is Status.OPTIMAL:
        return finish("portfolio", problem, first.solution, Status.OPTIMAL, first.bound,
                      deadline, seed, params, note="proved by CP-SAT")
    runs = [first]
    lp = None if deadline.expired() else insertion_bound(
        problem, time_limit=deadline.left(0.0), incumbent=first.solution)
    notes = ["LP bound: " + ("none in time or too large" if lp is None else
                             f"{lp.bound:.10g} ({lp.columns} columns, {lp.rows} rows, "
                             f"{lp.seconds:.2f} s)")]
    if lp is not None:
        params.update(lp_bound=lp.bound, lp_seconds=lp.seconds, lp_columns=lp.columns)
    found = [r.solution for r in runs if r.solution is not None]
    sch = ins.best(problem, found + [ins.current_schedule(problem)])
    price = ins.objective(problem, sch)
    bounds = [r.bound for r in runs if r.bound is not None] + \
        ([lp.bound] if lp is not None else [])
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
