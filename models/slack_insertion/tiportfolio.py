"""CP-SAT, then the time-indexed MIP (registered as ``cpsat+ti``). Seconds of wall clock;
both stages share ``time_limit``.

1. CP-SAT (:func:`models.slack_insertion.cpsat.solve_cpsat`) with its price stages on
   :data:`CPSAT_SHARE` of the time left after the sizing (:data:`CPSAT_SECONDS` without
   a limit): it proves most snapshots up to 50 waiting jobs within this, and its
   schedule is the incumbent that shrinks every job's domain in the next stage. When it
   proves the price within that share, its fewest-moved stage runs on the whole time
   left and the MIP is not run: it would start again from the price, and on
   ``kth-1997-04-insert-17706650-k21`` and ``kth-1997-05-remove-21351421-k24`` (price
   proved by CP-SAT in 3-7 s, load 2-5 on 2 cores) HiGHS gave no schedule in the 15 s
   left, nor in 30 s for the fewest-moved stage from CP-SAT's schedule, while CP-SAT's
   own fewest-moved stage proved the second in 7-18 s. Skipped when ``alpha_t != 1``
   (CP-SAT needs it).
2. The per-(job, start) MIP of :mod:`models.slack_insertion.timeindexed` on HiGHS
   (``backend="highs"``, the default) or SCIP (``"scip"``; CBC is refused before
   anything runs), presolve on, on the time left, in the MIP worker process (killed at
   the limit),
   both stages: price, then fewest moved jobs within the price tie. The MIP's fork
   server is started in the background when the portfolio starts.

Before stage 1 the MIP's model is sized from the current schedule (about 1 s on the KTH
snapshots) on at most :data:`SIZE_SHARE` of the limit: beyond
:data:`models.slack_insertion.timeindexed.MAX_NONZEROS` row nonzeros, or when the
candidate starts cannot be listed in that time (the MIP would have less than the rest
to list them again, build and solve), CP-SAT runs alone on the time left (measured by
``ti_bench`` at load 2.5-3.5: CP-SAT alone proved two k = 21-24 snapshots in 17-22 s,
which half the limit and a restart after the MIP's refusal lost). When the MIP refuses
the problem later (more binaries than it takes, or numbers beyond its exact range),
CP-SAT runs again on the time left, from its first schedule.

With ``fixing=True``, between the stages the certified LP bound
(:func:`models.slack_insertion.bounds.insertion_bound`) runs from CP-SAT's schedule on at
most :data:`BOUND_SHARE` of the limit; its reduced costs drop the MIP's candidates no
schedule of the price tie can use (the proof in :mod:`models.slack_insertion.timeindexed`),
SCIP is hinted with CP-SAT's schedule, and the LP's bound joins the others. The sizing
before stage 1 stays (unfixed): on the KTH snapshots whose unfixed model is too large the
LP got one solve in its share and the fixed model was too large as well, or gave no
schedule, while the restart of CP-SAT after it lost a proof CP-SAT alone makes
(``kth-1997-02-remove-13322517-k43``, 28.9 s). Off by default (measurements and the rule
for the default: ``sim/experiments/talby/REPORT.md``, exact insertion).

The result is the definition's best (:func:`sim.problems.insertion.best`) of the two
stages' schedules and the current one, with the best bound of the two that is not above
its price (CP-SAT's, or the MIP's made safe). OPTIMAL when CP-SAT proved its schedule,
or when the MIP proved the price within :func:`sim.problems.insertion.price_tolerance`
of its safe bound and proved the fewest-moved stage.
"""

from __future__ import annotations

import time
from typing import Any

from models.slack_insertion.bounds import InsertionBound, insertion_bound
from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.cpsat import solve_cpsat
from models.slack_insertion.timeindexed import (
    BACKENDS,
    MAX_NONZEROS,
    check_backend,
    check_form,
    model_size,
    solve_stages,
    start_worker_server,
)
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_cpsat_ti", "CPSAT_SECONDS", "CPSAT_SHARE"]

CPSAT_SECONDS = 15.0
"""Seconds of the CP-SAT stage when there is no limit."""
CPSAT_SHARE = 0.5
"""Share of the limit for the CP-SAT stage (measured by ``ti_bench`` at a 30 s limit,
load 8-10 on 2 cores: with 3 s, CP-SAT's proofs at 4-12 s were lost and HiGHS proved
none of them in the remaining 27 s)."""
SIZE_SHARE = 0.25
"""Largest share of the limit for sizing the MIP's model before stage 1 (10^4 waiting
jobs listed 200,000 candidate starts in 1.6 s before the MIP's refusal, leaving CP-SAT
0.4 s of a 2 s limit for a model it builds in 0.7 s)."""
BOUND_SHARE = 0.25
"""Largest share of the limit for the LP bound of the fixing (``fixing=True``)."""
NAME = "cpsat+ti"


def _too_large(problem: InsertionProblem, deadline: Deadline, backend: str, form: str,
               params: dict[str, Any]) -> str:
    """Why the MIP stage is not run (its model from the current schedule has more than
    ``MAX_NONZEROS`` row nonzeros, its candidate starts cannot be listed within
    :data:`SIZE_SHARE` of the limit, or the MIP refuses the data), or ``""``. The
    sizing's wall seconds go to ``params["ti_size_seconds"]`` (the time CP-SAT alone then
    does not have)."""
    sizing = Deadline(None if deadline.limit is None else SIZE_SHARE * deadline.limit,
                      start=deadline.t0)
    t0 = time.perf_counter()
    try:
        size = model_size(problem, sizing, backend=backend, form=form)
    except ValueError as e:
        return f"MIP refused: {e}; CP-SAT alone"
    finally:
        params["ti_size_seconds"] = round(time.perf_counter() - t0, 3)
    if size is None:
        return (f"MIP model not sized in {SIZE_SHARE:g} of the limit (too many candidate "
                "starts): CP-SAT alone")
    params["ti_size"] = size
    if size[1] > MAX_NONZEROS:
        return (f"MIP model too large ({size[1]:,} row nonzeros from the current "
                f"schedule, more than {MAX_NONZEROS:,}; sized in "
                f"{params['ti_size_seconds']:g} s): CP-SAT alone")
    return ""


def _only_tie_open(r: Result) -> bool:
    """Whether CP-SAT's result ``r`` has its price proved (within the tie tolerance of
    its bound) and stopped in the fewest-moved stage only (CP-SAT's ``stage3_status``)."""
    return (r.bound is not None and r.params.get("stage3_status") in ("FEASIBLE", "UNKNOWN")
            and r.objective - r.bound <= ins.price_tolerance(r.bound))


def _cpsat_on(problem: InsertionProblem, first: Result, deadline: Deadline, seed: int,
              params: dict[str, Any], why: str) -> Result:
    """CP-SAT again on the time left, from the first run's schedule (the MIP refused)."""
    runs = [first]
    if not deadline.expired():
        runs.append(solve_cpsat(problem, seed=seed, time_limit=deadline.left(0.0),
                                incumbent=first.solution))
    last = runs[-1]
    if last.status is Status.OPTIMAL:
        return finish(NAME, problem, last.solution, Status.OPTIMAL, last.bound, deadline,
                      seed, params, note=f"{why}; proved by CP-SAT")
    sch = ins.best(problem, [r.solution for r in runs if r.solution is not None])
    price = ins.objective(problem, sch)
    bounds = [r.bound for r in runs
              if r.bound is not None and r.bound <= price + ins.price_tolerance(price)]
    return finish(NAME, problem, sch, Status.FEASIBLE, max(bounds) if bounds else None,
                  deadline, seed, params, note=f"{why}; CP-SAT on the time left")


def _fixing_bound(problem: InsertionProblem, inc: InsertionSchedule | None,
                  deadline: Deadline, params: dict[str, Any], notes: list[str]
                  ) -> InsertionBound | None:
    """The certified LP bound of :mod:`models.slack_insertion.bounds` from ``inc`` (CP-SAT's
    schedule, or None) on at most :data:`BOUND_SHARE` of the limit, for the MIP's
    reduced-cost fixing; None when it was not solved in that time or is too large."""
    limit = None if deadline.limit is None else min(BOUND_SHARE * deadline.limit,
                                                    deadline.left(0.0))
    lp = insertion_bound(problem, time_limit=limit, incumbent=inc)
    if lp is None:
        notes.append("LP bound for the fixing: none in time or too large")
        return None
    params.update(lp_bound=lp.bound, lp_seconds=round(lp.seconds, 3), lp_columns=lp.columns,
                  lp_rounds=lp.rounds, lp_cuts=lp.cuts)
    return lp


def solve_cpsat_ti(problem: InsertionProblem, *, time_limit: float | None = None,
                   seed: int = 0, backend: str = "highs", tie_break: bool = True,
                   form: str = "start", fixing: bool = False) -> Result:
    """The portfolio of the module docstring.

    Parameters
    ----------
    problem : InsertionProblem
        Any alphas (the CP-SAT stage only with ``alpha_t == 1``).
    time_limit : float, optional
        Seconds for both stages.
    seed : int
        CP-SAT's and the MIP backend's seed.
    backend : {"highs", "scip"}
        The MIP backend (``"cbc"`` is refused, ValueError, before anything runs).
    tie_break : bool
        The MIP's fewest-moved stage (without it, a MIP answer is never OPTIMAL: the
        fewest moved jobs are not proved).
    form : {"start", "step"}
        The MIP's form (:data:`models.slack_insertion.timeindexed.FORMS`).
    fixing : bool
        Between CP-SAT and the MIP, the certified LP bound from CP-SAT's schedule on at
        most :data:`BOUND_SHARE` of the limit, whose reduced costs drop the MIP's
        candidates no schedule of the price tie can use; on SCIP, the MIP hinted with
        CP-SAT's schedule.
    """
    from ortools.sat.python import cp_model  # noqa: F401  (a one-time import, before the clock)

    deadline = Deadline(time_limit)
    check_backend(backend)
    check_form(form)
    params: dict[str, Any] = {"time_limit": time_limit, "backend": backend,
                              "tie_break": tie_break, "form": form, "fixing": fixing}
    notes: list[str] = []
    first = None
    if problem.alpha_t == 1.0:
        why = _too_large(problem, deadline, backend, form, params)
        if why:  # CP-SAT alone, on the whole limit
            r = solve_cpsat(problem, seed=seed, time_limit=deadline.left(0.0)
                            if time_limit is not None else None)
            return finish(NAME, problem, r.solution, r.status, r.bound, deadline, seed,
                          params, note="; ".join(x for x in (why, r.note) if x))
    start_worker_server()  # meanwhile: else the MIP stage pays its start past the limit
    if problem.alpha_t == 1.0:
        left = None if time_limit is None else deadline.left(0.0)
        share = CPSAT_SECONDS if left is None else CPSAT_SHARE * left
        first = solve_cpsat(problem, seed=seed, time_limit=left, price_time_limit=share)
        params["cpsat_status"] = first.status.value
        params["cpsat_stage_seconds"] = first.params.get("stage_seconds")
        if first.status is Status.OPTIMAL:
            return finish(NAME, problem, first.solution, Status.OPTIMAL, first.bound,
                          deadline, seed, params, note="proved by CP-SAT")
        if _only_tie_open(first):  # its fewest-moved stage had the time the MIP would get
            return finish(NAME, problem, first.solution, first.status, first.bound,
                          deadline, seed, params, note=f"price proved by CP-SAT; {first.note}")
    else:
        notes.append("CP-SAT skipped (alpha_t != 1)")
    inc = None if first is None else first.solution
    lp = _fixing_bound(problem, inc, deadline, params, notes) if fixing else None
    try:
        out = solve_stages(problem, deadline=deadline, seed=seed, backend=backend,
                           incumbent=inc, tie_break=tie_break, form=form, fixing=lp,
                           hint=fixing)
    except ValueError as e:  # the MIP refuses (too large, beyond its exact range)
        if first is None:
            raise
        return _cpsat_on(problem, first, deadline, seed, params, f"MIP refused: {e}")
    params.update(out.params)
    notes.extend(out.notes)
    found = [s for s in (out.schedule, inc) if s is not None]
    sch = ins.best(problem, found + [ins.current_schedule(problem)])
    price = ins.objective(problem, sch)
    bounds = [b for b in (None if first is None else first.bound, out.bound,
                          None if lp is None else lp.bound) if b is not None]
    valid = [b for b in bounds if b <= price + ins.price_tolerance(price)]
    if len(valid) < len(bounds):
        notes.append(f"bounds {sorted(set(bounds) - set(valid))} dropped: above the price "
                     f"{price!r}")
    bound = max(valid) if valid else None
    proved = (out.schedule is not None and out.price_proved and out.moved_proved
              and ins.moved(problem, sch) <= ins.moved(problem, out.schedule))
    if proved:
        notes.append(f"proved by the time-indexed MIP on {backend}")
        bound = min(bound, price)
    return finish(NAME, problem, sch, Status.OPTIMAL if proved else Status.FEASIBLE, bound,
                  deadline, seed, params, note="; ".join(notes))


solve_cpsat_ti.backends = BACKENDS  # type: ignore[attr-defined]  # --backend takes these
