"""Combinations of exact solvers: run several in turn, keep the best solution of any and
the best proved bound of any, so that a stopped run's gap is a certificate.

A combination is named by its members joined with ``+`` (``SEPARATOR``), e.g.
``cpsat+scip`` or ``cpsat+highs+scip``: each member is a solver registered for the
family (``sim.registry.SOLVERS[family]``: ``cpsat``, ``ilp``, ``brute``...; ``cpsat``
and ``ilp`` also name grouping's ``exact-cpsat`` and ``exact-ilp``) or a MIP backend
(``cbc``, ``highs``, ``scip``: the family's ILP, ``models.mip.ILP_SOLVERS``, on that
backend), so ``cpsat+scip`` names the same combination in every family with an ILP.
``sim.registry.solver(family, "cpsat+scip")`` (``Family.solver``) and ``schedsearch solve
FILE --solver cpsat+scip`` run it; :func:`solve` is the same in Python with the members
given as a sequence. The functions here take the family resolved once
(:class:`sim.problems.Family`), never its name.

Time: the members run in the order named, each with an equal share of what is left of
``time_limit`` (the last one with all that is left; one left less than
:data:`MIN_SECONDS` is not run, and said); the run ends as soon as the best solution
meets the best bound. A member refusing the instance (ValueError: too large for its
model) is said in the note; when every member refuses, the first refusal is raised.
Seconds of wall clock.

Honesty (each member's own :class:`sim.result.Result` is already checked by
``sim.result.build``):

- the solution is the best one any member found, its objective recomputed;
- a member's bound on the wrong side of any member's objective (beyond the tolerance
  ``BOUND_TOL`` of ``sim.result.build``) is dropped and said in the note; the bound is
  the best one left;
- OPTIMAL only when that bound meets that objective within ``BOUND_TOL``; else
  FEASIBLE with the bound (a certified gap), UNKNOWN without a solution, INFEASIBLE when
  a member proved infeasibility and no member found a solution (a member's INFEASIBLE
  contradicted by another's solution is ignored and said).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from models import interrupt
from models.deadline import limit_of
from sim.result import Result, Status, build

if TYPE_CHECKING:
    from sim.problems import Family

__all__ = ["SEPARATOR", "BOUND_TOL", "members_of", "combination", "solve",
           "combine", "meets"]

SEPARATOR = "+"
"""Joins the members of a combination's name."""
BOUND_TOL = 1e-6
"""Relative tolerance (of ``max(1, |objective|)``) within which a bound meets an
objective: ``sim.result.build``'s default, the one every family's exact solvers use."""


MIN_SECONDS = 0.01
"""A member after the first is not run with less time than this left (said in the
note)."""


def _member(family: Family, token: str) -> tuple[str, dict[str, Any]]:
    """``(registered solver name, keyword options)`` of one member."""
    from models.mip import BACKENDS
    from sim.problems.family import is_combination

    names = family.solvers
    if token in BACKENDS:
        if family.ilp is None:
            raise ValueError(f"combination member {token!r}: {family.name} has no ILP to "
                             "run on a MIP backend")
        return family.ilp, {"backend": token}
    if token in names and not is_combination(token):
        return token, {}
    if f"exact-{token}" in names:  # grouping's exact-cpsat, exact-ilp
        return f"exact-{token}", {}
    valid = sorted(names) + ([b for b in BACKENDS] if family.ilp is not None else [])
    raise ValueError(f"unknown combination member {token!r} for {family.name}; members are "
                     f"solvers of the family or MIP backends: {', '.join(valid)}")


def members_of(family: Family, name: str | Sequence[str]) -> list[tuple[str, str,
                                                                           dict[str, Any]]]:
    """The members of the combination ``name`` (``"cpsat+scip"`` or a sequence of
    member tokens) as ``(token, registered solver, options)``; ValueError naming an
    unknown or repeated member, or fewer than two."""
    tokens = name.split(SEPARATOR) if isinstance(name, str) else list(name)
    tokens = [t.strip() for t in tokens]
    if len(tokens) < 2 or any(not t for t in tokens):
        raise ValueError(f"a combination names two or more members joined by "
                         f"{SEPARATOR!r}, got {SEPARATOR.join(tokens)!r}")
    if len(set(tokens)) != len(tokens):
        raise ValueError(f"combination {SEPARATOR.join(tokens)!r} repeats a member")
    return [(t, *_member(family, t)) for t in tokens]


def combination(family: Family, name: str) -> Callable[..., Result]:
    """The ``solve(problem, *, time_limit=None, seed=0) -> Result`` function of the
    combination ``name`` for ``family`` (members checked now)."""
    members = members_of(family, name)
    label = SEPARATOR.join(t for t, _, _ in members)

    def solve_combination(problem: Any, *, time_limit: float | None = None,
                          seed: int = 0) -> Result:
        return _run(family, label, members, problem, time_limit, seed)

    solve_combination.__name__ = f"solve_{label.replace(SEPARATOR, '_')}"
    solve_combination.__doc__ = (f"The combination {label} of {family.name} "
                                 "(models.portfolio).")
    solve_combination.kind = "exact"  # type: ignore[attr-defined]
    return solve_combination


def solve(problem: Any, *, members: Sequence[str] = ("cpsat", "scip"),
          time_limit: float | None = None, seed: int = 0) -> Result:
    """Run the combination of ``members`` on ``problem`` (module docstring)."""
    from sim import registry
    from sim.problems import family_of

    family = registry.problem_family(family_of(problem))
    found = members_of(family, members)
    return _run(family, SEPARATOR.join(t for t, _, _ in found), found, problem, time_limit,
                seed)


def _run(family: Family, label: str, members: list[tuple[str, str, dict[str, Any]]],
         problem: Any, time_limit: float | None, seed: int) -> Result:
    sense = family.sense
    time_limit = limit_of(time_limit)
    t0 = time.perf_counter()
    results: list[tuple[str, Result]] = []
    refused: list[str] = []
    first_error: ValueError | None = None
    ctrl_c = interrupt.count()
    for i, (token, name, options) in enumerate(members):
        limit = None
        if time_limit is not None:
            left = max(float(time_limit) - (time.perf_counter() - t0), 0.0)
            if left < MIN_SECONDS and results:
                refused.append(f"{token} not run: no time left")
                continue
            limit = left / (len(members) - i)
        try:
            r = family.solver(name)(problem, time_limit=limit, seed=seed, **options)
        except ValueError as exc:  # the member refuses the instance (too large, ...)
            first_error = first_error or exc
            refused.append(f"{token} refused: {exc}")
            continue
        results.append((token, r))
        if _closed(sense, results):
            break
        if interrupt.count() > ctrl_c:  # Ctrl-C: the best answer so far stands
            refused.extend(f"{t} not run: stopped by Ctrl-C" for t, _, _ in members[i + 1:])
            break
    if not results and first_error is not None:
        raise first_error
    return combine(family, problem, label, results, runtime=time.perf_counter() - t0,
                   seed=seed, params={"time_limit": time_limit,
                                      "members": [t for t, _, _ in members]},
                   extra=refused)


def _tol(value: float) -> float:
    return BOUND_TOL * max(1.0, abs(value))


def _best(sense: str, results: Sequence[tuple[str, Result]]
          ) -> tuple[tuple[str, Result] | None, float | None, list[str]]:
    """The member with the best solution (None: none), the best bound on the right side
    of every member's objective, and the notes of the bounds dropped."""
    better = min if sense == "min" else max
    objectives = [(t, r.objective) for t, r in results if r.objective is not None]
    bounds, notes = [], []
    for t, r in results:
        if r.bound is None or math.isnan(r.bound):
            continue
        beyond = [(u, v) for u, v in objectives
                  if (r.bound > v + _tol(v) if sense == "min" else r.bound < v - _tol(v))]
        if beyond:
            u, v = beyond[0]
            notes.append(f"bound {r.bound!r} of {t} dropped: beyond the objective {v!r} "
                         f"of {u}")
        else:
            bounds.append(r.bound)
    with_solution = [(t, r) for t, r in results if r.solution is not None]
    best = better(with_solution, key=lambda tr: tr[1].objective) if with_solution else None
    tightest = max if sense == "min" else min  # the largest lower / smallest upper bound
    return best, (tightest(bounds) if bounds else None), notes


def meets(objective: float, bound: float | None) -> bool:
    """Whether ``bound`` proves ``objective`` optimal (within :data:`BOUND_TOL`)."""
    return bound is not None and abs(objective - bound) <= _tol(objective)


def _closed(sense: str, results: Sequence[tuple[str, Result]]) -> bool:
    """Whether the best solution meets the best bound, or a member proved infeasibility."""
    best, bound, _ = _best(sense, results)
    if best is None:
        return any(r.status is Status.INFEASIBLE for _, r in results)
    return meets(best[1].objective, bound)


def combine(family: Family, problem: Any, label: str, results: Sequence[tuple[str, Result]], *,
            runtime: float, seed: int, params: dict[str, Any],
            extra: Sequence[str] = ()) -> Result:
    """The combined :class:`Result` of the members' ``results`` (``(token, Result)``
    pairs; module docstring)."""
    from sim.problems import checker, scorer

    sense = family.sense
    notes = [f"{t}: {r.status.value}" + (f" {r.objective:.10g}" if r.objective is not None
                                          else "")
             + (f" bound {r.bound:.10g}" if r.bound is not None else "")
             for t, r in results]
    notes += list(extra)
    found, bound, dropped = _best(sense, results)
    notes += dropped
    if found is not None:
        token, best = found
        notes.insert(0, f"solution of {token}")
        status = Status.OPTIMAL if meets(best.objective, bound) else Status.FEASIBLE
        for t, r in results:
            if r.status is Status.INFEASIBLE:
                notes.append(f"{t} said INFEASIBLE, contradicted by the solution of {token}; "
                             "ignored")
        return build(solver=label, status=status, solution=best.solution,
                     check=checker(problem), objective=scorer(problem), bound=bound,
                     runtime=runtime, seed=seed, params=params, sense=sense,
                     tolerance=BOUND_TOL, note="; ".join(notes))
    infeasible = any(r.status is Status.INFEASIBLE for _, r in results)
    return build(solver=label, status=Status.INFEASIBLE if infeasible else Status.UNKNOWN,
                 solution=None, check=checker(problem), objective=scorer(problem),
                 bound=None if infeasible else bound, runtime=runtime, seed=seed,
                 params=params, sense=sense, tolerance=BOUND_TOL, note="; ".join(notes))
