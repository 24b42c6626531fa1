"""CP-SAT model of the slack-constrained insertion problem (registered as ``cpsat``).

One interval per waiting job and for the new job, start domains bounded by the slack
(``[lb_i, te_i + floor(s_i)]``), one cumulative constraint with the running jobs as fixed
intervals ``[now, end)``. Objective: the price for ``alpha_t = 1``, which is linear in the
starts. Lexicographic tie-break by a second solve: the (scaled) price fixed at its
optimum, minimise the number of moved jobs (boolean ``b_i`` with ``not b_i -> start_i =
te_i``). Exact strengthenings (each can be switched off; the tests compare against the
plain model): domains restricted to the dominant start times
(:func:`models.slack_insertion.domains.dominant_times`), domains tightened by the current
schedule's price (:func:`models.slack_insertion.domains.tighten_domains`), and ``S_i <=
S_j`` for interchangeable jobs (``_add_swap_orders``). ``alpha_t != 1`` raises ValueError
(the price is then concave in the delay; use ``ilp`` or ``brute``).

Integer scaling
---------------
CP-SAT needs integer coefficients. Each weight ``w`` (``delay_weight`` of a waiting job,
``n_j^alpha_u`` of the new job) becomes ``round(w * 2^e)``, with the largest ``e`` that
keeps the largest coefficient <= 2^24 and the objective's range <= 2^52. The rounding
error of a schedule's price is at most ``eps = sum_i |round(w_i 2^e) - w_i 2^e| / 2^e *
max|delay_i|`` (the max over the start domain), recorded as ``params["rounding_error"]``.
So the schedule CP-SAT proves optimal for the scaled objective is within ``2 eps`` of the
true optimum, and ``bound = scaled bound / 2^e - eps`` is a valid lower bound of the true
optimum (so ``bound`` can sit a hair below ``objective`` even when OPTIMAL). The reported
``objective`` is always :func:`sim.problems.insertion.price` of the returned schedule. On the
bundled snapshots ``eps`` is below 1e-3 price units (the prices are in the thousands).

Status
------
OPTIMAL only when the solver proved both stages (price, then moved jobs) optimal. A
time limit that stopped either stage gives FEASIBLE with the price bound of stage 1.
When CP-SAT finds no solution in time, the current schedule (nobody moved, the new job
at its earliest fit) is returned as FEASIBLE with ``params["fallback"] = True``.

Determinism: CP-SAT runs with ``num_workers=1`` (``workers``) and ``random_seed=seed``,
so the same problem and seed give the same schedule unless a time limit cuts the search
at a different point.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left, bisect_right
from dataclasses import replace
from typing import Any

from models.slack_insertion.common import finish
from models.slack_insertion.domains import dominant_times, start_bounds, tighten_domains
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_cpsat"]

_MAX_COEF_BITS = 24
_MAX_RANGE_BITS = 52


def _scale_exponent(weights: list[float], ranges: list[int]) -> int:
    """Largest e with max(w) 2^e <= 2^24 and sum(w 2^e range) <= 2^52 (see module doc)."""
    wmax = max(weights, default=0.0)
    total = sum(w * r for w, r in zip(weights, ranges, strict=True))
    if wmax <= 0:
        return 0
    e = math.floor(_MAX_COEF_BITS - math.log2(wmax))
    if total > 0:
        e = min(e, math.floor(_MAX_RANGE_BITS - math.log2(total)) - 1)
    return e



def _add_swap_orders(m: Any, problem: InsertionProblem, starts: dict[int, Any], sj: Any,
                     iw: list[int], ia: int) -> int:
    """Add ``S_i <= S_j`` for interchangeable jobs; returns how many.

    Jobs i and j (waiting jobs or the new job) with the same ``n`` and ``t`` have the same
    earliest start. If i's integer weight is strictly larger and its latest start
    (``te + s``; none for the new job) is no later than j's, every schedule with
    ``S_i > S_j`` gets strictly cheaper (in the scaled objective CP-SAT minimises) by
    swapping the two starts, which stays feasible: the same processors are used over the
    same intervals and each job's start stays within its own bounds. So every optimum
    has ``S_i <= S_j``; no lexicographic optimum is cut off.
    """
    jobs = []
    for k, w in enumerate(problem.waiting):
        jobs.append(((w.n, w.t), iw[k], w.te + w.s, starts[w.id]))
    if sj is not None:
        jobs.append(((problem.new.n, problem.new.t), ia, math.inf, sj))
    groups: dict[tuple[int, int], list[tuple[int, float, Any]]] = {}
    for key, weight, latest, var in jobs:
        groups.setdefault(key, []).append((weight, latest, var))
    added = 0
    for members in groups.values():
        for wi, ui, vi in members:
            for wj, uj, vj in members:
                if wi > wj and ui <= uj:
                    m.add(vi <= vj)
                    added += 1
    return added



def solve_cpsat(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
                workers: int = 1, tighten: bool = True, dominant: bool = True,
                symmetry: bool = True, max_points: int = 200_000, log: bool = False,
                sat_params: dict[str, Any] | None = None, warmup: float = 0.1) -> Result:
    """Optimal insertion by CP-SAT (see the module docstring).

    Easy problems are proved fastest by the plain model (no set-up cost), hard ones need
    the strengthened one. So the plain model runs first with a *deterministic* time
    limit of ``warmup`` (CP-SAT's deterministic time units, roughly seconds); if it does
    not prove both stages, the strengthened model runs with the remaining time.
    ``params["proved_by"]`` says which one proved the optimum. Both are exact, and the
    deterministic limit keeps the result reproducible. ``warmup=0`` skips the plain run.

    Parameters
    ----------
    problem : InsertionProblem
        Needs ``alpha_t == 1``.
    time_limit : float, optional
        Seconds for both stages together.
    seed : int
        CP-SAT ``random_seed``.
    workers : int
        CP-SAT ``num_workers`` (1 = deterministic).
    tighten : bool
        Shrink the start domains with the price of the current schedule (any schedule
        cheaper than it keeps each job within a computable delay); exact either way.
    dominant : bool
        Restrict every start domain to the dominant start times (:func:`dominant_times`,
        capped at the largest domain end); exact (see the module docstring). Falls back
        to plain intervals when there are more than ``max_points`` such times.
    max_points : int
        See ``dominant``.
    symmetry : bool
        Order interchangeable jobs (:func:`_add_swap_orders`); exact.
    log : bool
        Print the CP-SAT search log.
    sat_params : dict, optional
        Extra CP-SAT parameters (``SatParameters`` field name -> value).
    warmup : float
        Deterministic time limit of the plain-model pass (0 = skip it).
    """
    t0 = time.perf_counter()
    if warmup and (tighten or dominant or symmetry):
        r = _cpsat_once(problem, time_limit=time_limit, seed=seed, workers=workers,
                        tighten=False, dominant=False, symmetry=False, max_points=max_points,
                        log=log, sat_params=sat_params, dtime=warmup)
        if r.status is Status.OPTIMAL:
            return replace(r, runtime=time.perf_counter() - t0,
                           params={**r.params, "time_limit": time_limit, "warmup": warmup,
                                   "proved_by": "plain"})
    left = None
    if time_limit is not None:
        left = max(float(time_limit) - (time.perf_counter() - t0), 1e-3)
    r = _cpsat_once(problem, time_limit=left, seed=seed, workers=workers, tighten=tighten,
                    dominant=dominant, symmetry=symmetry, max_points=max_points, log=log,
                    sat_params=sat_params, dtime=None)
    return replace(r, runtime=time.perf_counter() - t0,
                   params={**r.params, "time_limit": time_limit, "warmup": warmup,
                           "proved_by": "strengthened" if r.status is Status.OPTIMAL
                           else None})



def _cpsat_once(problem: InsertionProblem, *, time_limit: float | None, seed: int,
                workers: int, tighten: bool, dominant: bool, symmetry: bool,
                max_points: int, log: bool, sat_params: dict[str, Any] | None,
                dtime: float | None) -> Result:
    """One CP-SAT run (both stages) of :func:`solve_cpsat`; ``dtime`` = deterministic
    time limit per stage."""
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    if problem.alpha_t != 1.0:
        raise ValueError(
            f"cpsat: the price is linear only for alpha_t = 1, got alpha_t={problem.alpha_t}; "
            "use the 'ilp' or 'brute' solver for other alpha_t")
    params: dict[str, Any] = {"time_limit": time_limit, "workers": workers, "tighten": tighten}
    now = problem.now
    T = ins.horizon(problem)
    dom, new_dom = start_bounds(problem, T)
    cur = ins.current_schedule(problem)
    waiting = problem.waiting
    wts = [ins.delay_weight(problem, w) for w in waiting]
    a = ins.new_weight(problem)

    if tighten:
        dom, new_dom = tighten_domains(problem, dom, new_dom, cur)
    ranges = [max(abs(dom[w.id][0] - w.te), abs(dom[w.id][1] - w.te)) for w in waiting]
    new_range = 0 if new_dom is None else new_dom[1] - now
    e = _scale_exponent(wts + [a], ranges + [new_range])
    scale = 2.0 ** e
    iw = [round(c * scale) for c in wts]
    ia = round(a * scale)
    eps = math.fsum(abs(i - c * scale) / scale * r
                    for i, c, r in zip(iw + [ia], wts + [a], ranges + [new_range], strict=True))
    params.update(scale_exponent=e, rounding_error=eps)

    values: list[int] | None = None
    if dominant:
        cap_t = max([hi for _, hi in dom.values()] + ([new_dom[1]] if new_dom else [now]))
        try:
            values = dominant_times(problem, cap_t, max_points)
        except ValueError:
            values = None
        params["dominant_points"] = None if values is None else len(values)

    m = cp_model.CpModel()

    def start_var(lo: int, hi: int, name: str) -> Any:
        if values is None:
            return m.new_int_var(lo, hi, name)
        a, b = bisect_left(values, lo), bisect_right(values, hi)
        return m.new_int_var_from_domain(cp_model.Domain.from_values(values[a:b]), name)

    starts = {}
    intervals, demands = [], []
    for r in problem.running:
        intervals.append(m.new_fixed_size_interval_var(now, r.end - now, f"run{r.id}"))
        demands.append(r.n)
    for w in waiting:
        lo, hi = dom[w.id]
        s = start_var(lo, hi, f"s{w.id}")
        starts[w.id] = s
        intervals.append(m.new_fixed_size_interval_var(s, w.t, f"i{w.id}"))
        demands.append(w.n)
        m.add_hint(s, w.te)
    sj = None
    if problem.new is not None:
        sj = start_var(new_dom[0], new_dom[1], "snew")
        intervals.append(m.new_fixed_size_interval_var(sj, problem.new.t, "inew"))
        demands.append(problem.new.n)
        m.add_hint(sj, cur.new_start)
    m.add_cumulative(intervals, demands, problem.capacity)
    if symmetry:
        params["order_constraints"] = _add_swap_orders(m, problem, starts, sj, iw, ia)
    terms = [iw[k] * (starts[w.id] - w.te) for k, w in enumerate(waiting) if iw[k]]
    if sj is not None and ia:
        terms.append(ia * (sj - now))
    obj = sum(terms) if terms else 0
    m.minimize(obj)

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    solver.parameters.log_search_progress = log
    solver.parameters.linearization_level = 2  # cumulative energy cuts: ~1.5x faster here
    for name, value in (sat_params or {}).items():
        setattr(solver.parameters, name, value)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(float(time_limit), 1e-3)
    if dtime is not None:
        solver.parameters.max_deterministic_time = dtime
    st1 = solver.solve(m)

    def read() -> InsertionSchedule:
        return InsertionSchedule(None if sj is None else solver.value(sj),
                                 {w.id: solver.value(starts[w.id]) for w in waiting})

    if st1 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        if st1 == cp_model.UNKNOWN:
            bound = (solver.best_objective_bound / scale - eps) if terms else None
            params["fallback"] = True
            return finish("cpsat", problem, cur, Status.FEASIBLE, bound, t0, seed, params)
        raise RuntimeError(f"cpsat: unexpected status {solver.status_name(st1)} "
                           "(the current schedule is always feasible)")
    sch1 = read()
    lb = solver.best_objective_bound / scale - eps
    if st1 != cp_model.OPTIMAL:
        return finish("cpsat", problem, sch1, Status.FEASIBLE, lb, t0, seed, params)

    # stage 2: the scaled price fixed at its optimum, fewest moved jobs
    best = round(solver.objective_value)
    if terms:
        m.add(obj == best)
    moved = []
    for w in waiting:
        b = m.new_bool_var(f"b{w.id}")
        m.add(starts[w.id] == w.te).only_enforce_if(~b)
        moved.append(b)
    m.clear_hints()
    for w in waiting:
        m.add_hint(starts[w.id], sch1.starts[w.id])
    if sj is not None:
        m.add_hint(sj, sch1.new_start)
    m.minimize(sum(moved))
    if time_limit is not None:
        left = float(time_limit) - (time.perf_counter() - t0)
        solver.parameters.max_time_in_seconds = max(left, 1e-3)
    st2 = solver.solve(m)
    params["stage2_status"] = solver.status_name(st2)
    if st2 not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return finish("cpsat", problem, sch1, Status.FEASIBLE, lb, t0, seed, params)
    sch2 = read()
    if ins.moved(problem, sch1) < ins.moved(problem, sch2):  # never worse than stage 1
        sch2 = sch1
    status = Status.OPTIMAL if st2 == cp_model.OPTIMAL else Status.FEASIBLE
    return finish("cpsat", problem, sch2, status, lb, t0, seed, params)

