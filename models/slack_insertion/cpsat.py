"""CP-SAT model of the slack-constrained insertion problem (registered as ``cpsat``).

One interval per waiting job and for the new job, start domains bounded by the slack
(``[lb_i, te_i + floor(s_i)]``), one cumulative constraint with the running jobs as fixed
intervals ``[now, end)``. Objective: the price for ``alpha_t = 1``, which is linear in the
starts. ``alpha_t != 1`` raises ValueError (the price is then concave in the delay; use
``ilp`` or ``brute``). Exact strengthenings (each can be switched off; the tests compare
against the plain model): domains restricted to the dominant start times
(:func:`models.slack_insertion.domains.dominant_times`), domains tightened by the current
schedule's price (:func:`models.slack_insertion.domains.tighten_domains`), and ``S_i <=
S_j`` for interchangeable jobs (``_add_swap_orders``).

Long queues. Each job's domain is its own chain set
(:func:`models.slack_insertion.domains.chain_times`: its own ``te``, ``now`` and the
running ends plus the ends of other jobs whose own sets allow them; 2-7x fewer values
than the global dominant times on k = 25-29 snapshots). CP-SAT's presolve is off by
default (``presolve``): with the swap orders between variables of fragmented domains of
thousands of values it spent 4-25 s of CPU before any search on a k = 27 snapshot and
did not count that time as deterministic time. Hints are complete (starts and delays)
and left-shifted (:func:`models.slack_insertion.domains.left_shift`), so they lie in the
domains. Options, off by default: ``heuristic_start`` (warm start from the best of the
compress orders) and ``time_indexed`` (a redundant time-indexed copy of the capacity
constraint over the chain sets, for its LP bound, up to that many terms; used in the two
price stages, switched off for the fewest-moved stage). ``time_limit`` covers building
the model: the clock is looked at every 500 waiting jobs while it is built, and a stop
there returns the current schedule (FEASIBLE, no bound).

Three stages: the definition's optimum, not a rounded one
----------------------------------------------------------
CP-SAT needs integer coefficients, but the weights (``delay_weight`` of a waiting job,
``n_j^alpha_u`` of the new job) are reals such as ``8/9``. Minimising a rounded price and
then fixing it (what this model did before) can prefer a price-neutral swap that the
rounding makes look cheaper, and then move jobs that need not move. So:

1. **Price.** ``A = sum round(w_i 2^e) delay_i`` with the largest ``e`` that keeps every
   coefficient <= 2^40 and the objective's range <= 2^61 (the *fine* stage 1, default;
   ``fine=False``: 2^24 and 2^52, the coarse stage of earlier versions). Each schedule's price is
   within ``eps = sum_i |round(w_i 2^e) / 2^e - w_i| max|delay_i|`` of ``A / 2^e``
   (``params["rounding_error"]``), so ``bound_1 = (CP-SAT's bound on A) / 2^e - eps`` is a
   bound of the problem as defined. With 40-bit coefficients ``eps`` is 2e-7 to 4e-5
   price units on the snapshots with k = 21-24 (0.005-2 with 24 bits). **When stage 1's
   schedule has a true price within the tie tolerance of** ``bound_1`` (``P_1 <= bound_1
   + price_tolerance(bound_1)``), it is in the tie set of the optimum ``P* >= bound_1``,
   and stage 2 is skipped: stage 3 then runs on the window ``A <= (P_1 + tol + eps)
   2^e``, which holds every schedule of the tie set, and its pick counts as proved only
   when its own price is within ``bound_1``'s tie (``_fewest_moved_fine``). Otherwise
   (``eps`` not small against the tolerance, e.g. prices near 0) the three stages run.
2. **Exact price.** Only if ``eps > 0`` and not skipped: inside the window of stage-1
   prices that can hold a schedule within the tie tolerance of the optimum (``A <= (P_1 +
   tol + eps) 2^e``, ``P_1`` the true price of stage 1's schedule), minimise ``(A - A_lb)
   2^f + B``, where ``B = sum lo_i delay_i`` carries the next ``f`` bits of every weight
   (``lo_i = round((w_i 2^e - hi_i) 2^f)``) and ``f`` is as large as the window allows in
   2^53. Then every weight is represented to ``2^-(e+f+1)``; the remaining error
   ``params["refined_error"]`` is computed exactly (rational arithmetic) and is 0 when
   every weight fits in ``e + f`` bits, which holds on the bundled snapshots. Stage 2's
   bound is a bound of the problem as defined, to ``refined_error``.
3. **Fewest moved jobs** among the schedules whose exact price is within
   :func:`sim.problems.insertion.price_tolerance` of the optimum (a window on the stage-2
   objective that contains all of them), by boolean ``b_i = (start_i != te_i)``. The
   pick is re-checked by the definition's own price. CP-SAT's linear relaxation is off
   in this stage (``tie_linearization``, default 0): the price window and the
   implications between ``b_i`` and the starts give it little to bound the count with,
   and its cuts slow the search. ``python -m sim.experiments.talby.ti_bench
   --time-limit 30 --sample 0 --bins 21-30`` (commit b910b47, load average 1.6-2.0,
   level 2 in this stage as ``tie_linearization=None``): 31 of 40 snapshots proved
   against 30, ``kth-1996-10-remove-1149748-k22`` proved in 28.0 s (open in this stage
   with level 2), ``kth-1996-10-remove-2777367-k21`` in 4.6 s against 18.6 s,
   ``kth-1997-05-remove-21351421-k24`` in 9.8 s against 26.7 s.

So ``cpsat`` returns the definition's optimum (price within the tie tolerance, then fewest
moved jobs), up to ``refined_error``; when that error is not negligible against the tie
tolerance, or ``f`` cannot be positive, the status is FEASIBLE and the note says that a
rounded problem was solved.

Status and bound
----------------
OPTIMAL only when all stages were proved. A time limit that stops a stage gives FEASIBLE
with the best bound of the problem as defined (never the rounded model's bound). When
CP-SAT finds no solution in time, the current schedule (nobody moved, the new job at its
earliest fit) is returned as FEASIBLE with ``params["fallback"] = True``. A bound above
the returned schedule's price is dropped by :func:`sim.result.build` (and said in the
note).

Determinism: CP-SAT runs with ``num_workers=1`` (``workers``) and ``random_seed=seed``,
so the same problem and seed give the same schedule unless a time limit cuts the search
at a different point.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

from models.interrupt import run_cpsat
from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.domains import (
    CHAIN_CAP,
    chain_times,
    dominant_times,
    left_shift,
    start_bounds,
    tighten_domains,
)
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_cpsat"]

_MAX_COEF_BITS = 24  # coarse stage 1 (``fine=False``)
_MAX_RANGE_BITS = 52
_FINE_COEF_BITS = 40  # fine stage 1 (``fine=True``, the default)
_FINE_RANGE_BITS = 61  # CP-SAT checks every linear expression against 2^63
_EXACT_BITS = 53  # stage-2 objective range: integers exact in a double
_NEGLIGIBLE = 1e-3  # refined_error / tie tolerance below which stage 3 is called exact


def _scale_exponent(weights: list[float], ranges: list[int], coef_bits: int = _MAX_COEF_BITS,
                    range_bits: int = _MAX_RANGE_BITS) -> int:
    """Largest e with max(w) 2^e <= 2^coef_bits and sum(w 2^e range) <= 2^range_bits
    (see module doc; 24 and 52 for the coarse stage 1, 40 and 61 for the fine one)."""
    wmax = max(weights, default=0.0)
    total = sum(w * r for w, r in zip(weights, ranges, strict=True))
    if wmax <= 0:
        return 0
    e = math.floor(coef_bits - math.log2(wmax))
    if total > 0:
        e = min(e, math.floor(range_bits - math.log2(total)) - 1)
    return e


def _add_swap_orders(m: Any, problem: InsertionProblem, starts: dict[int, Any], sj: Any,
                     weights: list[float], wnew: float, margin: float,
                     stop: Any = None) -> int:
    """Add ``S_i <= S_j`` for interchangeable jobs; returns how many. ``stop()`` (asked
    before each job's pairs: a group of ``g`` jobs has ``g^2`` pairs, 2 x 10^6 of them a
    second and more) true ends the orders early; each is valid on its own.

    Jobs i and j (waiting jobs or the new job) with the same ``n`` and ``t`` have the same
    earliest start. If i's weight exceeds j's by more than ``margin`` (price units per
    second) and its latest start (``te + s``; none for the new job) is no later than j's,
    every schedule with ``S_i > S_j`` gets cheaper by more than ``margin`` by swapping the
    two starts, which stays feasible: the same processors are used over the same
    intervals and each job's start stays within its own bounds. With ``margin`` at least
    the tie tolerance, no schedule with ``S_i > S_j`` is in the tie set of the optimum, so
    no optimum (ties included) is cut off.
    """
    jobs = []
    for k, w in enumerate(problem.waiting):
        jobs.append(((w.n, w.t), weights[k], w.te + w.s, starts[w.id]))
    if sj is not None:
        jobs.append(((problem.new.n, problem.new.t), wnew, math.inf, sj))
    groups: dict[tuple[int, int], list[tuple[float, float, Any]]] = {}
    for key, weight, latest, var in jobs:
        groups.setdefault(key, []).append((weight, latest, var))
    added = 0
    for members in groups.values():
        for wi, ui, vi in members:
            if stop is not None and stop():
                return added
            for wj, uj, vj in members:
                if wi - wj > margin and ui <= uj:
                    m.add(vi <= vj)
                    added += 1
    return added


def _add_equal_orders(m: Any, problem: InsertionProblem, starts: dict[int, Any],
                      weights: list[float], lit: Any) -> int:
    """Add ``S_i <= S_j`` under literal ``lit`` for waiting jobs of the same ``n``, ``t``
    and *equal* weight with ``te_i + s_i <= te_j + s_j`` (ties by id); returns how many.

    Swapping the starts of two such jobs keeps feasibility (as in ``_add_swap_orders``)
    and the price exactly (``w S_i + w S_j`` is symmetric), so every price is reached with
    ``S_i <= S_j``: valid for the price stages. It can change which jobs count as moved,
    so ``lit`` is switched off for the fewest-moved stage.
    """
    groups: dict[tuple[int, int, float], list[tuple[float, int, Any]]] = {}
    for k, w in enumerate(problem.waiting):
        groups.setdefault((w.n, w.t, weights[k]), []).append((w.te + w.s, w.id, starts[w.id]))
    added = 0
    for members in groups.values():
        members.sort(key=lambda x: (x[0], x[1]))
        for (_, _, vi), (_, _, vj) in zip(members, members[1:], strict=False):
            m.add(vi <= vj).only_enforce_if(lit)
            added += 1
    return added


def _heuristic_incumbent(problem: InsertionProblem, orders: tuple[str, ...],
                         incumbent: InsertionSchedule | None,
                         deadline: Deadline) -> InsertionSchedule | None:
    """The definition's best of ``incumbent`` and the compress-order heuristics
    ``orders`` (``heuristics.slack.insert``; each stops at the deadline)."""
    from heuristics.slack import insert

    found = [] if incumbent is None else [incumbent]
    for order in orders:
        if deadline.expired():
            break
        found.append(insert(problem, order, stop=deadline.expired).schedule)
    return ins.best(problem, found)


def _add_time_indexed(m: Any, problem: InsertionProblem,
                      jobs: list[tuple[Any, int, int, list[int]]], max_terms: int,
                      lit: Any, stop: Any = None) -> int:
    """Add the time-indexed form of the capacity constraint, redundant with the
    cumulative one, for its linear relaxation (a much stronger bound on weighted start
    times than the cumulative's); returns the number of capacity rows (0 when the rows
    would hold more than ``max_terms`` terms: nothing is added; ``stop()`` true ends the
    rows early).

    ``jobs`` holds ``(start variable, estimate t, processors n, candidate starts)``; one
    boolean ``x[j, tau]`` per candidate start, ``sum_tau x = 1`` and ``start = sum_tau tau
    x``; at every candidate start ``u`` (the load only rises at starts), ``sum n_j x[j,
    tau] over tau <= u < tau + t_j`` is at most the capacity left by the running jobs.
    Exact: every schedule of the domains satisfies these rows. Every row is enforced by
    ``lit``, so that a later stage can switch them off.
    """
    import numpy as np

    pts = np.unique(np.concatenate([np.asarray(c, dtype=np.int64) for *_, c in jobs]))
    # terms: for each job, the candidates in (u - t, u] for each point u
    total = 0
    spans = []
    for _, t, _, cand in jobs:
        c = np.asarray(cand, dtype=np.int64)
        lo = np.searchsorted(c, pts - t, side="right")
        hi = np.searchsorted(c, pts, side="right")
        spans.append((lo, hi))
        total += int((hi - lo).sum())
        if total > max_terms:
            return 0
    prof = ins.profile_of(problem)
    xs = []
    for var, _, _, cand in jobs:
        x = [m.new_bool_var("") for _ in cand]
        m.add(sum(x) == 1).only_enforce_if(lit)
        m.add(var == sum(tau * b for tau, b in zip(cand, x, strict=True))).only_enforce_if(lit)
        xs.append(x)
    rows = 0
    for k, u in enumerate(pts.tolist()):
        if stop is not None and k % 64 == 0 and stop():
            break  # the rows added so far are valid on their own
        terms = []
        need = 0
        for (_, _, n, _), x, (lo, hi) in zip(jobs, xs, spans, strict=True):
            if hi[k] > lo[k]:
                terms.extend(n * b for b in x[lo[k]:hi[k]])
                need += n
        free = prof.free_at(u)[0]
        if need > free:  # the row can bind
            m.add(sum(terms) <= free).only_enforce_if(lit)
            rows += 1
    return rows


def _floor_bound(b: float) -> int:
    """An integer no larger than CP-SAT's (integer) objective bound ``b``, read as a double:
    ``ceil(b)`` less the double's own rounding (objectives of the fine stage exceed 2^53)."""
    return math.ceil(b - 1e-6 - abs(b) * 2.0 ** -50)


def _fix(m: Any, lit: Any, value: int) -> None:
    """Fix the boolean ``lit`` to ``value`` (its domain in the model proto)."""
    dom = m.proto.variables[lit.index].domain
    dom.clear()
    dom.extend([value, value])


def solve_cpsat(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
                workers: int = 1, tighten: bool = True, dominant: bool = True,
                symmetry: bool = True, max_points: int = 200_000, log: bool = False,
                sat_params: dict[str, Any] | None = None, warmup: float = 0.0,
                warm_start: bool = True, equal_orders: bool = True,
                chains: bool = True, heuristic_start: tuple[str, ...] = (),
                time_indexed: int = 0, presolve: bool = False, fine: bool = True,
                incumbent: InsertionSchedule | None = None,
                forbidden: Mapping[int, Collection[int]] | None = None,
                price_time_limit: float | None = None,
                tie_linearization: int | None = 0) -> Result:
    """Optimal insertion by CP-SAT (see the module docstring).

    With ``warmup > 0`` the plain model runs first with a *deterministic* time limit of
    ``warmup`` (CP-SAT's deterministic time units, roughly seconds) per stage; if it does
    not prove every stage, the strengthened model runs with the remaining time.
    ``params["proved_by"]`` says which one proved the optimum. Both are exact, and the
    deterministic limit keeps the result reproducible. The default is 0 (no plain run):
    with the subset-sum dominant times the strengthened model is the faster one on
    small queues too (20 snapshots with 6 <= k <= 30, one interleaved run: never slower,
    and 8 of them 2-100x faster; see the README).

    Parameters
    ----------
    problem : InsertionProblem
        Needs ``alpha_t == 1``.
    time_limit : float, optional
        Seconds for everything (model building and every stage).
    seed : int
        CP-SAT ``random_seed`` (taken modulo 2^31: CP-SAT's seed is a 32-bit integer).
    workers : int
        CP-SAT ``num_workers`` (1 = deterministic).
    tighten : bool
        Shrink the start domains with the price of the current schedule (any schedule
        cheaper than it keeps each job within a computable delay); exact either way.
    dominant : bool
        Restrict every start domain to the dominant start times (``dominant_times``,
        capped at the largest domain end); exact. Falls back to plain intervals when
        there are more than ``max_points`` such times.
    symmetry : bool
        Order interchangeable jobs (``_add_swap_orders``); exact.
    max_points : int
        See ``dominant``.
    log : bool
        Print the CP-SAT search log.
    sat_params : dict, optional
        Extra CP-SAT parameters (``SatParameters`` field name -> value).
    warmup : float
        Deterministic time limit of the plain-model pass (0 = skip it).
    warm_start : bool
        With ``warmup > 0``: tighten the strengthened model's domains with the plain
        pass's best schedule (instead of the current schedule) and start from it; exact.
    equal_orders : bool
        In the two price stages, order interchangeable jobs of equal weight (see
        ``_add_equal_orders``); released for the fewest-moved stage; exact.
    chains : bool
        With ``dominant``: each job's domain is its own chain set (``chain_times``)
        instead of the global dominant times; exact.
    heuristic_start : tuple of str
        Compress orders of ``heuristics.slack`` (e.g. ``("AST",)``) whose best schedule,
        shifted left, tightens the domains and is the first hint; exact. Empty (the
        default): start from the current schedule. Off by default: it proved no more
        snapshots and made the small ones slower (see the README).
    time_indexed : int
        Add the time-indexed capacity rows over the chain sets when they hold at most
        this many terms (0 = never; ``_add_time_indexed``); exact.
    presolve : bool
        CP-SAT's ``cp_model_presolve`` (see the module docstring for why it is off).
    fine : bool
        Stage 1 with 40-bit coefficients instead of 24-bit ones; when its schedule is
        then proved within the tie tolerance of the optimum, the exact-price stage is
        skipped (module docstring); exact either way.
    incumbent : InsertionSchedule, optional
        A feasible schedule to start from (and tighten the domains with) when it is
        cheaper than the current one; exact.
    forbidden : mapping of job id to start times, optional
        Start times (seconds) to drop from each job's domain (the new job's under its
        id), e.g. :meth:`models.slack_insertion.bounds.InsertionBound.forbidden` of a
        price: exact when no schedule within the tie tolerance of the optimum uses them.
        A job whose whole candidate set would be dropped keeps it.
    price_time_limit : float, optional
        Seconds (from the call, at most ``time_limit``) within which the price stages
        (1 and 2, and the model's building) must end; the fewest-moved stage may then
        run until ``time_limit`` (without one: until it ends). None: every stage has
        ``time_limit``. A caller with another way to the price (``cpsat+ti``'s MIP)
        gives CP-SAT a share of the limit for the price, and the whole limit for the
        fewest-moved stage once the price is proved.
    tie_linearization : int or None
        CP-SAT's ``linearization_level`` (0, 1 or 2) in the fewest-moved stage, set after
        ``sat_params``; None: as in the price stages (2, or ``sat_params``'s). Exact
        either way (a search parameter).
    """
    if problem.alpha_t != 1.0:
        raise ValueError(
            f"cpsat: the price is linear only for alpha_t = 1, got alpha_t={problem.alpha_t}; "
            "use the 'ilp' or 'brute' solver for other alpha_t")
    from ortools.sat.python import cp_model  # noqa: F401  (a one-time import, before the clock)

    deadline = Deadline(time_limit)
    if price_time_limit is not None and not (
            0 <= price_time_limit <= (math.inf if time_limit is None else time_limit)):
        raise ValueError(f"cpsat: price_time_limit must be in [0, time_limit], got "
                         f"{price_time_limit!r} with time_limit={time_limit!r}")
    price_deadline = deadline if price_time_limit is None \
        else Deadline(price_time_limit, start=deadline.t0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not -2**63 <= seed < 2**64:
        raise ValueError(f"cpsat: seed must be an integer in [-2^63, 2^64), got {seed!r}")
    if tie_linearization is not None and (
            isinstance(tie_linearization, bool) or not isinstance(tie_linearization, int)
            or not 0 <= tie_linearization <= 2):
        raise ValueError(f"cpsat: tie_linearization must be None, 0, 1 or 2, got "
                         f"{tie_linearization!r}")
    ids = {w.id for w in problem.waiting} | ({problem.new.id} if problem.new else set())
    unknown = sorted(set(forbidden or ()) - ids)
    if unknown:
        raise ValueError(f"cpsat: forbidden names jobs that are not in the problem: {unknown}")
    wrong = [] if incumbent is None else ins.check(problem, incumbent)
    if wrong:
        raise ValueError(f"cpsat: the incumbent schedule is infeasible: {wrong[0]}")
    common = dict(seed=seed, workers=workers, max_points=max_points, log=log,
                  sat_params=sat_params, chains=chains, time_indexed=time_indexed,
                  presolve=presolve, fine=fine, forbidden=forbidden or {},
                  tie_linearization=tie_linearization)
    extra = {"time_limit": time_limit, "warmup": warmup}
    if warmup and (tighten or dominant or symmetry):
        r = _cpsat_once(problem, deadline=price_deadline, tighten=False, dominant=False,
                        symmetry=False, dtime=warmup, incumbent=None, equal_orders=False,
                        **common)
        if r.status is Status.OPTIMAL or price_deadline.expired():
            return replace(r, runtime=deadline.elapsed(),
                           params={**r.params, **extra, "proved_by": "plain"
                                   if r.status is Status.OPTIMAL else None})
        # a better warm start: the plain run's best schedule tightens the domains further
        # (any feasible schedule bounds the optimum) and is the strengthened run's hint
        incumbent = ins.best(problem, [s for s in (r.solution if warm_start else None,
                                                   incumbent) if s is not None])
    if heuristic_start:
        incumbent = _heuristic_incumbent(problem, heuristic_start, incumbent, price_deadline)
    r = _cpsat_once(problem, deadline=price_deadline, tie_deadline=deadline,
                    tighten=tighten, dominant=dominant,
                    symmetry=symmetry, dtime=None, incumbent=incumbent,
                    equal_orders=equal_orders, **common)
    return replace(r, runtime=deadline.elapsed(),
                   params={**r.params, **extra, "proved_by": "strengthened"
                           if r.status is Status.OPTIMAL else None})


def _cpsat_once(problem: InsertionProblem, *, deadline: Deadline, seed: int, workers: int,
                tighten: bool, dominant: bool, symmetry: bool, max_points: int, log: bool,
                sat_params: dict[str, Any] | None, dtime: float | None,
                incumbent: InsertionSchedule | None, equal_orders: bool,
                chains: bool, time_indexed: int, presolve: bool, fine: bool,
                forbidden: Mapping[int, Collection[int]],
                tie_linearization: int | None, tie_deadline: Deadline | None = None
                ) -> Result:
    """One CP-SAT run (all stages) of :func:`solve_cpsat`; ``dtime`` = deterministic
    time limit per stage; the building and the price stages end by ``deadline``, the
    fewest-moved stage by ``tie_deadline`` (``deadline`` when None)."""
    from ortools.sat.python import cp_model

    params: dict[str, Any] = {"workers": workers, "tighten": tighten, "dominant": dominant,
                              "symmetry": symmetry, "tie_linearization": tie_linearization}
    now = problem.now
    T = ins.horizon(problem)
    dom, new_dom = start_bounds(problem, T)
    cur = ins.current_schedule(problem)
    p_cur = ins.objective(problem, cur)
    waiting = problem.waiting
    wts = [ins.delay_weight(problem, w) for w in waiting]
    a = ins.new_weight(problem)

    start = cur
    if incumbent is not None and ins.objective(problem, incumbent) < p_cur:
        start = left_shift(problem, incumbent)  # no dearer; its starts are in the domains
        params["warm_start_price"] = ins.objective(problem, start)
    if tighten:
        dom, new_dom = tighten_domains(problem, dom, new_dom, start)
    ranges = [max(abs(dom[w.id][0] - w.te), abs(dom[w.id][1] - w.te)) for w in waiting]
    new_range = 0 if new_dom is None else new_dom[1] - now
    allw, allr = wts + [a], ranges + [new_range]
    e = (_scale_exponent(allw, allr, _FINE_COEF_BITS, _FINE_RANGE_BITS) if fine
         else _scale_exponent(allw, allr))
    S = 2.0 ** e
    hi = [round(c * S) for c in allw]
    eps = math.fsum(abs(i - c * S) / S * r for i, c, r in zip(hi, allw, allr, strict=True))
    params.update(scale_exponent=e, rounding_error=eps)

    values: list[int] | None = None
    if dominant:
        cap_t = max([h for _, h in dom.values()] + ([new_dom[1]] if new_dom else [now]))
        try:
            values = dominant_times(problem, cap_t, max_points, stop=deadline.expired)
        except ValueError:
            values = None
        params["dominant_points"] = None if values is None else len(values)
    per_job: dict[int, list[int]] = {}
    new_vals: list[int] | None = None
    if values is not None and chains:
        try:
            per_job, new_vals = chain_times(problem, dom, new_dom, values,
                                            stop=deadline.expired,
                                            max_points=CHAIN_CAP * max_points)
        except ValueError:
            per_job, new_vals = {}, None
        else:
            params["chain_points"] = sum(map(len, per_job.values())) + len(new_vals or ())

    m = cp_model.CpModel()

    def start_var(lo: int, hi_: int, name: str, own: list[int] | None, jid: int) -> Any:
        if own:
            cand = own
        elif values is None:
            return m.new_int_var(lo, hi_, name)
        else:
            cand = values[bisect_left(values, lo):bisect_right(values, hi_)]
        banned = forbidden.get(jid, ())
        kept = [v for v in cand if v not in banned] if banned else cand
        if kept:  # a job whose whole set is forbidden keeps it
            params["forbidden_dropped"] = \
                params.get("forbidden_dropped", 0) + len(cand) - len(kept)
            cand = kept
        return m.new_int_var_from_domain(cp_model.Domain.from_values(cand), name)

    def stopped() -> Result:
        """The current schedule, the time limit reached while the model is built (stage 1
        never started: its seconds 0, as :func:`run` says of a stage with no time left)."""
        params["fallback"] = True
        params.setdefault("stage_seconds", []).append(0.0)
        return finish("cpsat", problem, cur, Status.FEASIBLE, None, deadline, seed, params,
                      "time limit reached while building the model: current schedule, "
                      "no bound")

    starts: dict[int, Any] = {}
    intervals, demands = [], []
    for r in problem.running:
        intervals.append(m.new_fixed_size_interval_var(now, r.end - now, f"run{r.id}"))
        demands.append(r.n)
    for w in waiting:  # a job's domain may hold 10^5 times: the clock at every job
        if deadline.expired():
            return stopped()
        lo, up = dom[w.id]
        s = start_var(lo, up, f"s{w.id}", per_job.get(w.id), w.id)
        starts[w.id] = s
        intervals.append(m.new_fixed_size_interval_var(s, w.t, f"i{w.id}"))
        demands.append(w.n)
        m.add_hint(s, start.starts[w.id])
    sj = None
    if problem.new is not None:
        sj = start_var(new_dom[0], new_dom[1], "snew", new_vals, problem.new.id)
        intervals.append(m.new_fixed_size_interval_var(sj, problem.new.t, "inew"))
        demands.append(problem.new.n)
        m.add_hint(sj, start.new_start)
    m.add_cumulative(intervals, demands, problem.capacity)
    ti_lit = None
    if time_indexed and per_job and all(per_job.values()) and (sj is None or new_vals):
        ti_lit = m.new_bool_var("time_indexed_on")
        params["time_indexed_rows"] = _add_time_indexed(
            m, problem, [(starts[w.id], w.t, w.n, per_job[w.id]) for w in waiting]
            + ([] if sj is None else [(sj, problem.new.t, problem.new.n, new_vals)]),
            time_indexed, ti_lit, deadline.expired)
        _fix(m, ti_lit, 1)
    # delays as variables of their own (small domains, so that the large coefficients of
    # stage 2 never meet absolute times in an overflow check), in the order of allw
    delays: list[Any] = []
    if deadline.expired():
        return stopped()
    for w in waiting:
        lo, up = dom[w.id]
        d = m.new_int_var(lo - w.te, up - w.te, f"d{w.id}")
        m.add(d == starts[w.id] - w.te)
        m.add_hint(d, start.starts[w.id] - w.te)
        delays.append(d)
    if sj is not None:
        d = m.new_int_var(new_dom[0] - now, new_dom[1] - now, "dnew")
        m.add(d == sj - now)
        m.add_hint(d, start.new_start - now)
        delays.append(d)
    else:
        delays.append(0)
    if symmetry:
        # a price magnitude no optimum exceeds: the current price and every possible gain
        mag = abs(p_cur) + math.fsum(c * r for c, r in zip(allw, allr, strict=True))
        margin = ins.price_tolerance(mag)
        params["order_constraints"] = _add_swap_orders(m, problem, starts, sj, wts, a, margin,
                                                       deadline.expired)
    if deadline.expired():
        return stopped()
    sym_lit = None
    if equal_orders and symmetry:
        sym_lit = m.new_bool_var("equal_orders_on")
        params["equal_orders"] = _add_equal_orders(m, problem, starts, wts, sym_lit)
        _fix(m, sym_lit, 1)
    def hint(sch: InsertionSchedule) -> None:
        """Hint ``sch``'s starts and delays (a complete hint of the price model)."""
        m.clear_hints()
        for k, w in enumerate(waiting):
            m.add_hint(starts[w.id], sch.starts[w.id])
            m.add_hint(delays[k], sch.starts[w.id] - w.te)
        if sj is not None:
            m.add_hint(sj, sch.new_start)
            m.add_hint(delays[-1], sch.new_start - now)

    A = sum(c * d for c, d in zip(hi, delays, strict=True) if c) if any(hi) else 0
    m.minimize(A)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed % 2**31  # CP-SAT's seed is a 32-bit int
    solver.parameters.log_search_progress = log
    solver.parameters.linearization_level = 2  # cumulative energy cuts: ~1.5x faster here
    solver.parameters.cp_model_presolve = presolve
    for name, value in (sat_params or {}).items():
        setattr(solver.parameters, name, value)
    if dtime is not None:
        solver.parameters.max_deterministic_time = dtime

    def run(final: bool = False) -> int:
        if final and tie_linearization is not None:  # the fewest-moved stage
            solver.parameters.linearization_level = tie_linearization
        left = ((tie_deadline or deadline) if final else deadline).solver_time()
        if left is not None and left <= 0:  # never start a stage with nothing left
            params.setdefault("stage_seconds", []).append(0.0)
            return cp_model.UNKNOWN
        if left is not None:
            solver.parameters.max_time_in_seconds = left
        st = run_cpsat(solver, m)
        params.setdefault("stage_seconds", []).append(round(solver.wall_time, 4))
        if st == cp_model.MODEL_INVALID:  # a bug of this model, never a time limit
            raise RuntimeError(f"cpsat: invalid model: {m.validate()}")
        return st

    def read() -> InsertionSchedule:
        return InsertionSchedule(None if sj is None else solver.value(sj),
                                 {w.id: solver.value(starts[w.id]) for w in waiting})

    def done(sch: InsertionSchedule, status: Status, bound: float | None,
             note: str = "") -> Result:
        return finish("cpsat", problem, sch, status, bound, deadline, seed, params, note)

    # ---------------------------------------------------------------- stage 1: coarse price
    st1 = run()
    params["stage1_status"] = solver.status_name(st1)
    if st1 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if st1 == cp_model.UNKNOWN:
            params["fallback"] = True
            return done(cur, Status.FEASIBLE, None,
                        "CP-SAT found no schedule in time: current schedule, no bound")
        raise RuntimeError(f"cpsat: unexpected status {solver.status_name(st1)} "
                           "(the current schedule is always feasible)")
    sch1 = read()
    a_lb = _floor_bound(solver.best_objective_bound) if any(hi) else 0
    bound1 = a_lb / S - eps
    if st1 != cp_model.OPTIMAL:
        return done(ins.best(problem, [sch1, start, cur]), Status.FEASIBLE, bound1,
                    "stopped by the time limit in stage 1 (price)")
    p1 = ins.objective(problem, sch1)
    if fine and eps > 0 and p1 <= bound1 + ins.price_tolerance(bound1):
        # stage 1's schedule is in the tie set of every price >= bound1: no exact stage
        return _fewest_moved_fine(problem, m, solver, run, read, done, hint, params, starts,
                                  A, e, eps, sch1, bound1, sym_lit, ti_lit)

    # ---------------------------------------------------------------- stage 2: exact price
    tol_w = ins.price_tolerance(abs(p1) + 2 * eps) + 2 * eps
    a_max = math.floor((Fraction(p1) + Fraction(tol_w) + Fraction(eps)) * Fraction(2) ** e) + 1
    a_max = max(a_max, a_lb)
    R = sum(allr)
    if eps > 0:
        f = math.floor(_EXACT_BITS - math.log2(max(1, (a_max - a_lb) + R / 2 + 1))) - 1
    else:
        f = 0
    params["refine_bits"] = f
    lo_w = [round((c * S - i) * 2.0 ** f) for c, i in zip(allw, hi, strict=True)] if f > 0 \
        else [0] * len(allw)
    den = Fraction(2) ** (e + f)
    refined_err = sum(abs(Fraction(c) - Fraction(i * 2 ** f + lw) / den) * r
                      for c, i, lw, r in zip(allw, hi, lo_w, allr, strict=True)) if f > 0 \
        else Fraction(eps)
    params["refined_error"] = float(refined_err)
    approx_ok = float(refined_err) <= _NEGLIGIBLE * ins.price_tolerance(p1)
    # the refined objective R(X) = (A - a_lb) 2^f + B, with R / 2^(e+f) + a_lb / 2^e within
    # refined_err of the exact price
    if any(hi):
        a_var = m.new_int_var(0, a_max - a_lb, "a_window")
        m.add(a_var == A - a_lb)
    else:
        a_var = 0
    b_max = sum(abs(lw) * r for lw, r in zip(lo_w, allr, strict=True))
    if f > 0 and b_max > 0:
        b_var = m.new_int_var(-b_max, b_max, "b_fine")
        m.add(b_var == sum(lw * d for lw, d in zip(lo_w, delays, strict=True) if lw))
        refined = a_var * (2 ** f) + b_var
    else:
        refined = a_var * (2 ** f) if f > 0 else a_var
    hint(sch1)
    sch2, bound2 = sch1, bound1
    if f > 0 and b_max > 0:
        m.minimize(refined)
        st2 = run()
        params["stage2_status"] = solver.status_name(st2)
        if st2 in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            sch2 = ins.best(problem, [sch1, read()])
            v_lb = _floor_bound(solver.best_objective_bound)
            bound2 = max(bound1, float((Fraction(v_lb) + Fraction(a_lb) * 2 ** f) / den
                                       - refined_err))
        if st2 != cp_model.OPTIMAL:
            return done(sch2, Status.FEASIBLE, bound2,
                        "stopped by the time limit in stage 2 (exact price)")
        v_best = round(solver.objective_value)
    else:
        v_best = (round(solver.objective_value) - a_lb) * (2 ** f if f > 0 else 1)
        bound2 = bound1 if eps > 0 else a_lb / S
    p2 = ins.objective(problem, sch2)

    # ---------------------------------------------------------------- stage 3: fewest moved
    if ins.moved(problem, sch2) == 0:  # nothing to improve: no schedule moves fewer jobs
        params["stage3_status"] = "skipped (no job moved)"
        if not approx_ok:
            return done(sch2, Status.FEASIBLE, bound2,
                        f"solved a rounded problem: weights represented to within "
                        f"{float(refined_err):.3g} price units")
        return done(sch2, Status.OPTIMAL, min(bound2, p2))
    tie = ins.price_tolerance(max(abs(p2), abs(bound2)))
    v_max = math.floor((Fraction(p2) + Fraction(tie) + refined_err) * den
                       - Fraction(a_lb) * 2 ** f) + 1
    if not isinstance(refined, int):  # (an int when no weight is positive: price 0)
        m.add(refined <= max(v_max, v_best))
    st3 = _fewest_moved_stage(m, problem, starts, hint, sch2, sym_lit, ti_lit, run)
    params["stage3_status"] = solver.status_name(st3)
    if st3 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return done(sch2, Status.FEASIBLE, bound2,
                    "stopped by the time limit in stage 3 (fewest moved jobs)")
    sch3 = read()
    # the definition's choice between the exact-price optimum and the fewest-moved pick
    final = ins.best(problem, [sch2, sch3])
    if st3 != cp_model.OPTIMAL:
        return done(final, Status.FEASIBLE, bound2,
                    "stopped by the time limit in stage 3 (fewest moved jobs)")
    if not approx_ok:
        return done(final, Status.FEASIBLE, bound2,
                    f"solved a rounded problem: weights represented to within "
                    f"{float(refined_err):.3g} price units, not negligible against the tie "
                    f"tolerance {ins.price_tolerance(p1):.3g}")
    if final is sch2 and ins.moved(problem, sch3) < ins.moved(problem, sch2):
        return done(final, Status.FEASIBLE, bound2,
                    "the fewest-moved pick was beyond the price tie; not proved")
    return done(final, Status.OPTIMAL, min(bound2, ins.objective(problem, final)))


def _fewest_moved_stage(m: Any, problem: InsertionProblem, starts: dict[int, Any], hint: Any,
                        sch: InsertionSchedule, sym_lit: Any, ti_lit: Any, run: Any) -> int:
    """Stage 3 on the model ``m`` (its price window already added): minimise the number
    of waiting jobs moved from their current start, ``b_i = (start_i != te_i)`` both ways
    (one way, ``not b_i -> start_i = te_i``, is enough for the minimum; the other spares
    the search every ``b_i = 1`` branch on which job i stays: on
    ``kth-1997-04-insert-17706650-k21`` the stage proved 16 moved jobs in 16.2 s instead
    of 30.4 s, load average 1.8, throwaway script), hinted with ``sch``; the symmetry
    and time-indexed rows are switched off (equal-weight orders are price-neutral, not
    moved-neutral; the time-indexed rows bound the price, not the moved count). Returns
    CP-SAT's status."""
    hint(sch)  # first: it clears the model's hints
    moved = []
    for w in problem.waiting:
        b = m.new_bool_var(f"b{w.id}")
        m.add(starts[w.id] == w.te).only_enforce_if(~b)
        m.add(starts[w.id] != w.te).only_enforce_if(b)
        m.add_hint(b, sch.starts[w.id] != w.te)
        moved.append(b)
    if sym_lit is not None:
        _fix(m, sym_lit, 0)
    if ti_lit is not None:
        _fix(m, ti_lit, 0)
    m.minimize(sum(moved))
    return run(True)


def _fewest_moved_fine(problem: InsertionProblem, m: Any, solver: Any, run: Any, read: Any,
                       done: Any, hint: Any, params: dict[str, Any], starts: dict[int, Any],
                       A: Any, e: int, eps: float, sch1: InsertionSchedule, bound1: float,
                       sym_lit: Any, ti_lit: Any) -> Result:
    """Stage 3 straight after a fine stage 1 whose schedule ``sch1`` (price ``p1``) is
    within the tie tolerance of its proved bound ``bound1`` (no exact-price stage).

    Every schedule of the tie set (price ``<= P* + tol(P*)``, ``P* <= p1`` the optimum)
    has a coarse objective ``A <= (p1 + tol + eps) 2^e`` (``p + tol(p)`` rises with ``p``),
    so minimising the moved count under that window misses none of them. The pick is in
    the tie set when its price is at most ``bound1 + tol(bound1)`` (``P* >= bound1``);
    otherwise the status is FEASIBLE.
    """
    from ortools.sat.python import cp_model

    params["stage2_status"] = "skipped (fine stage 1 within the tie tolerance)"
    p1 = ins.objective(problem, sch1)
    if ins.moved(problem, sch1) == 0:
        params["stage3_status"] = "skipped (no job moved)"
        return done(sch1, Status.OPTIMAL, min(bound1, p1))
    tie = ins.price_tolerance(max(abs(p1), abs(bound1)))
    a_win = math.floor((Fraction(p1) + Fraction(tie) + Fraction(eps)) * Fraction(2) ** e) + 1
    if not isinstance(A, int):
        m.add(A <= a_win)
    st3 = _fewest_moved_stage(m, problem, starts, hint, sch1, sym_lit, ti_lit, run)
    params["stage3_status"] = solver.status_name(st3)
    if st3 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return done(sch1, Status.FEASIBLE, bound1,
                    "stopped by the time limit in stage 3 (fewest moved jobs)")
    sch3 = read()
    final = ins.best(problem, [sch1, sch3])
    if st3 != cp_model.OPTIMAL:
        return done(final, Status.FEASIBLE, bound1,
                    "stopped by the time limit in stage 3 (fewest moved jobs)")
    p_final = ins.objective(problem, final)
    if ins.moved(problem, final) > ins.moved(problem, sch3) \
            or p_final > bound1 + ins.price_tolerance(bound1):
        return done(final, Status.FEASIBLE, bound1,
                    "the fewest-moved pick was beyond the proved price tie; not proved")
    return done(final, Status.OPTIMAL, min(bound1, p_final))
