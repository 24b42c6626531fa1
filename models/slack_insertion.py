"""Exact models of the slack-constrained insertion problem (Talby & Feitelson).

The problem, its feasibility check and its price live in :mod:`sim.problems.insertion`; this
module only searches. Unlike the paper's exhaustive search, which tries every compress
order of the delayed jobs for every time slot, these models range over *all* feasible
start times. Three exact solvers, each ``solve(problem, *, time_limit=None, seed=0,
**params) -> Result``:

``solve_cpsat`` (registered as ``cpsat``)
    CP-SAT: one interval per waiting job and for the new job, start domains bounded by
    the slack (``[lb_i, te_i + floor(s_i)]``), one cumulative constraint with the running
    jobs as fixed intervals ``[now, end)``. Objective: the price for ``alpha_t = 1``,
    which is linear in the starts. Lexicographic tie-break by a second solve: the
    (scaled) price fixed at its optimum, minimise the number of moved jobs (boolean
    ``b_i`` with ``not b_i -> start_i = te_i``). Exact strengthenings (each can be
    switched off; the tests compare against the plain model): domains restricted to the
    dominant start times (below), domains tightened by the current schedule's price
    (``_tighten``), and ``S_i <= S_j`` for interchangeable jobs (``_add_swap_orders``).
    ``alpha_t != 1`` raises ValueError (the price is then concave in the delay; use
    ``ilp`` or ``brute``).
``solve_ilp`` (registered as ``ilp``)
    PuLP/CBC time-indexed ILP over the *dominant start times* (below): binary
    ``x[i, tau]`` = job i starts at tau, one start per job, capacity checked at every
    candidate time, the cost of each (job, start) pair taken straight from
    :func:`sim.problems.insertion.job_cost`, so any alphas work. Lexicographic by a second solve
    (price <= optimum + 1e-7 relative, minimise moved jobs).
``solve_brute`` (registered as ``brute``)
    Depth-first enumeration of every integer start time on tiny instances (refuses more
    than ``max_nodes`` search nodes). The reference of the differential tests.

Dominant start times (used by ``ilp`` and ``cpsat``)
-----------------------------------------------------
Some optimal schedule (lowest price, then fewest moved) starts every job in
``C = {now, te_i, running ends}`` closed under adding any job's estimate, capped at
:func:`sim.problems.insertion.horizon`. Proof: every cost is non-decreasing in the start time
(``delay_weight >= 0``, the signed power is monotone). Take an optimal schedule and move
any job one second earlier while that stays feasible, never below ``now`` and never
moving a job that sits at its ``te`` (moving it would add a moved job). This never
raises the price or the moved count and terminates. At the end each job is blocked: it
starts at ``now``, at its ``te``, or at an instant where the load of the others drops,
i.e. the end of another job (a running end, or another placed job's start plus its
estimate). By induction on the chain of blocking jobs, every start is in ``C``. The load
only rises at starts, so checking the capacity at the points of ``C`` suffices. ``brute``
(all integer times) confirms it in the differential tests.

Integer scaling (``cpsat``)
---------------------------
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
at its earliest fit) is returned as FEASIBLE with ``params["fallback"] = True``; a
stopped ILP returns the cheaper of CBC's incumbent and that schedule. CBC via
PuLP reports ``LpStatus`` "Optimal" also after a time-limit stop with an incumbent;
``prob.sol_status == pulp.LpSolutionOptimal`` (versus ``LpSolutionIntegerFeasible``)
tells a proved optimum from a stopped run, and only the former is OPTIMAL.

Determinism: CP-SAT runs with ``num_workers=1`` (``workers``) and ``random_seed=seed``,
so the same problem and seed give the same schedule unless a time limit cuts the search
at a different point. CBC runs with ``threads=1``.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = [
    "solve_cpsat",
    "solve_ilp",
    "solve_brute",
    "insert",
    "dominant_times",
    "CpsatInserter",
    "OptimalInsertionPolicy",
]

_MAX_COEF_BITS = 24
_MAX_RANGE_BITS = 52


# ---------------------------------------------------------------------------- shared
def _start_bounds(problem: InsertionProblem, horizon: int) -> tuple[dict[int, tuple[int, int]],
                                                                     tuple[int, int] | None]:
    """Start domain per waiting job and for the new job (seconds).

    Lower bound: earliest fit next to the running jobs alone (valid since other jobs only
    take capacity away). Upper bound: ``te + floor(s)`` capped at ``horizon``.
    """
    run = ins.profile_of(problem)
    dom: dict[int, tuple[int, int]] = {}
    for w in problem.waiting:
        lb = run.earliest_start(w.t, (w.n,), problem.now)
        ub = horizon if math.isinf(w.s) else min(horizon, w.te + math.floor(w.s))
        dom[w.id] = (lb, max(ub, w.te))
    new = None
    if problem.new is not None:
        lb = run.earliest_start(problem.new.t, (problem.new.n,), problem.now)
        new = (lb, max(horizon, lb))
    return dom, new


def _solution(problem: InsertionProblem, sch: InsertionSchedule) -> dict[str, Any]:
    d = sch.to_dict()
    d["moved"] = ins.moved(problem, sch)
    return d


def _result(name: str, problem: InsertionProblem, sch: InsertionSchedule, status: Status,
            bound: float | None, t0: float, seed: int, params: dict[str, Any]) -> Result:
    ins.check(problem, sch)  # never hand out an infeasible schedule
    obj = ins.price(problem, sch)
    if status is Status.OPTIMAL and bound is not None:
        bound = min(bound, obj)
    return Result(name, status, obj, bound, time.perf_counter() - t0, _solution(problem, sch),
                  seed, params)


def _tighten(problem: InsertionProblem, dom: dict[int, tuple[int, int]],
             new_dom: tuple[int, int] | None, cur: InsertionSchedule
             ) -> tuple[dict[int, tuple[int, int]], tuple[int, int] | None]:
    """Shrink the start domains to schedules no dearer than the current one ``cur``.

    With ``w`` the signed power, every term of a schedule of price <= ``P0 = price(cur)``
    satisfies ``term <= P0 + sum of the other jobs' largest gains`` (gain = the most
    negative cost, moving to the domain's lower bound). Inverting ``w`` bounds each
    delay. The optimum is never dearer than ``cur``, so no optimal schedule is cut off.
    Needs ``alpha_t > 0``; returns the domains unchanged otherwise. Each bound keeps
    ``te`` (and the current new start) inside and adds one second against rounding.
    """
    at = problem.alpha_t
    if at <= 0:
        return dom, new_dom
    now = problem.now
    p0 = ins.price(problem, cur)
    wts = {w.id: ins.delay_weight(problem, w) for w in problem.waiting}
    gains = {w.id: wts[w.id] * abs(ins._spow(w.te - dom[w.id][0], at)) for w in problem.waiting}
    room = p0 + math.fsum(gains.values())

    def inv(x: float) -> float:  # largest d with w(d) <= x
        return x ** (1.0 / at) if x >= 0 else -((-x) ** (1.0 / at))

    out = dict(dom)
    a = ins.new_weight(problem)
    if new_dom is not None and a > 0:
        ub = now + math.floor(inv(room / a) * (1 + 1e-9)) + 1
        new_dom = (new_dom[0], max(new_dom[0], cur.new_start, min(new_dom[1], ub)))
    for w in problem.waiting:
        c = wts[w.id]
        if c > 0:
            r = room - gains[w.id]
            d = inv(r / c)
            ub = w.te + math.floor(d + 1e-9 * (1 + abs(d))) + 1
            lo, hi = dom[w.id]
            out[w.id] = (lo, max(w.te, min(hi, ub)))
    return out, new_dom


# ---------------------------------------------------------------------------- CP-SAT
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
    dom, new_dom = _start_bounds(problem, T)
    cur = ins.current_schedule(problem)
    waiting = problem.waiting
    wts = [ins.delay_weight(problem, w) for w in waiting]
    a = ins.new_weight(problem)

    if tighten:
        dom, new_dom = _tighten(problem, dom, new_dom, cur)
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
            return _result("cpsat", problem, cur, Status.FEASIBLE, bound, t0, seed, params)
        raise RuntimeError(f"cpsat: unexpected status {solver.status_name(st1)} "
                           "(the current schedule is always feasible)")
    sch1 = read()
    lb = solver.best_objective_bound / scale - eps
    if st1 != cp_model.OPTIMAL:
        return _result("cpsat", problem, sch1, Status.FEASIBLE, lb, t0, seed, params)

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
        return _result("cpsat", problem, sch1, Status.FEASIBLE, lb, t0, seed, params)
    sch2 = read()
    if ins.moved(problem, sch1) < ins.moved(problem, sch2):  # never worse than stage 1
        sch2 = sch1
    status = Status.OPTIMAL if st2 == cp_model.OPTIMAL else Status.FEASIBLE
    return _result("cpsat", problem, sch2, status, lb, t0, seed, params)


# ---------------------------------------------------------------------------- ILP
def dominant_times(problem: InsertionProblem, horizon: int | None = None,
                   max_points: int = 20000) -> list[int]:
    """Sorted candidate start times ``C`` (see the module docstring), seconds.

    Raises ValueError when ``C`` has more than ``max_points`` points.
    """
    T = ins.horizon(problem) if horizon is None else horizon
    durations = sorted({w.t for w in problem.waiting}
                       | ({problem.new.t} if problem.new is not None else set()))
    base = {problem.now} | {w.te for w in problem.waiting} | {r.end for r in problem.running}
    seen = {c for c in base if c <= T}
    stack = sorted(seen)
    while stack:
        c = stack.pop()
        for d in durations:
            x = c + d
            if x <= T and x not in seen:
                seen.add(x)
                if len(seen) > max_points:
                    raise ValueError(
                        f"ilp: more than {max_points} candidate start times (horizon "
                        f"{T - problem.now} s); the time-indexed ILP is for small instances")
                stack.append(x)
    return sorted(seen)


def _cbc_bound(logfile: str) -> float | None:
    try:
        text = open(logfile).read()
    except OSError:
        return None
    found = re.findall(r"best possible\s+(-?[0-9.eE+-]+)", text)
    if found:
        return float(found[-1])
    found = re.findall(r"Continuous objective value is\s+(-?[0-9.eE+-]+)", text)
    return float(found[-1]) if found else None


def solve_ilp(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
              max_points: int = 20000, tighten: bool = True) -> Result:
    """Optimal insertion by a time-indexed ILP over the dominant start times (PuLP/CBC).

    Parameters
    ----------
    problem : InsertionProblem
        Any alphas.
    time_limit : float, optional
        Seconds for both stages together.
    seed : int
        Recorded only (CBC runs single-threaded and deterministically).
    max_points : int
        Refuse instances with more candidate start times (ValueError).
    tighten : bool
        Shrink the start domains by the price of the current schedule (exact; needs
        ``alpha_t > 0``, else ignored).
    """
    import pulp

    t0 = time.perf_counter()
    params: dict[str, Any] = {"time_limit": time_limit, "max_points": max_points,
                              "tighten": tighten}
    now = problem.now
    T = ins.horizon(problem)
    dom, new_dom = _start_bounds(problem, T)
    if tighten:
        dom, new_dom = _tighten(problem, dom, new_dom, ins.current_schedule(problem))
    cap_t = max([hi for _, hi in dom.values()] + ([new_dom[1]] if new_dom else [now]))
    C = dominant_times(problem, cap_t, max_points)
    run = ins.profile_of(problem)
    params["candidate_times"] = len(C)

    jobs = [(w.id, w.n, w.t) for w in problem.waiting]
    if problem.new is not None:
        jobs.append((problem.new.id, problem.new.n, problem.new.t))
    prob = pulp.LpProblem("slack_insertion", pulp.LpMinimize)
    x: dict[int, dict[int, Any]] = {}
    cost: dict[int, dict[int, float]] = {}
    for jid, n, t in jobs:
        is_new = problem.new is not None and jid == problem.new.id
        lo, hi = new_dom if is_new else dom[jid]
        x[jid], cost[jid] = {}, {}
        for tau in C:
            if tau < lo or tau > hi or not run.fits(tau, t, (n,)):
                continue
            if is_new:
                c = ins.new_weight(problem) * ins._spow(tau - now, problem.alpha_t)
            else:
                c = ins.job_cost(problem, problem.job(jid), tau)
                if math.isinf(c):
                    continue
            x[jid][tau] = pulp.LpVariable(f"x_{jid}_{tau}", cat="Binary")
            cost[jid][tau] = c
        if not x[jid]:
            raise RuntimeError(f"ilp: no candidate start for job {jid}")
        prob += pulp.lpSum(x[jid].values()) == 1, f"one_{jid}"
    running_load = {u: sum(r.n for r in problem.running if r.end > u) for u in C}
    taus = {jid: sorted(x[jid]) for jid in x}
    for u in C:
        terms = []
        for jid, n, t in jobs:
            ts = taus[jid]
            for tau in ts[bisect_right(ts, u - t):bisect_right(ts, u)]:
                terms.append(n * x[jid][tau])
        if len(terms) > 1:
            prob += pulp.lpSum(terms) <= problem.capacity - running_load[u], f"cap_{u}"
    price_expr = pulp.lpSum(cost[jid][tau] * v for jid in x for tau, v in x[jid].items())
    prob += price_expr

    fd, logfile = tempfile.mkstemp(suffix=".log", prefix="cbc_")
    os.close(fd)

    def run_cbc(limit: float | None) -> None:
        kw: dict[str, Any] = {"msg": False, "threads": 1, "logPath": logfile}
        if limit is not None:
            kw["timeLimit"] = max(limit, 0.01)
        prob.solve(pulp.PULP_CBC_CMD(**kw))

    def read() -> InsertionSchedule:
        chosen = {jid: max(x[jid], key=lambda tau: (x[jid][tau].value() or 0.0, -tau))
                  for jid in x}
        new_start = chosen[problem.new.id] if problem.new is not None else None
        return InsertionSchedule(new_start, {w.id: chosen[w.id] for w in problem.waiting})

    if all(len(v) == 1 for v in x.values()):
        # nothing to decide (CBC's presolve would leave an empty model it cannot report)
        os.unlink(logfile)
        only = {jid: next(iter(v)) for jid, v in x.items()}
        sch = InsertionSchedule(only[problem.new.id] if problem.new is not None else None,
                                {w.id: only[w.id] for w in problem.waiting})
        return _result("ilp", problem, sch, Status.OPTIMAL, ins.price(problem, sch), t0, seed,
                       params)
    try:
        run_cbc(time_limit)
        if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            cur = ins.current_schedule(problem)
            params["fallback"] = True
            return _result("ilp", problem, cur, Status.FEASIBLE, _cbc_bound(logfile), t0, seed,
                           params)
        sch1 = read()
        if prob.sol_status != pulp.LpSolutionOptimal:
            cur = ins.current_schedule(problem)
            if ins.key(problem, cur) < ins.key(problem, sch1):
                sch1 = cur  # CBC stopped with an incumbent dearer than the current schedule
            return _result("ilp", problem, sch1, Status.FEASIBLE, _cbc_bound(logfile), t0, seed,
                           params)
        p1 = float(pulp.value(price_expr) or 0.0)
        bound = p1
        if any(c != 0 for jid in cost for c in cost[jid].values()):
            prob += price_expr <= p1 + 1e-7 * max(1.0, abs(p1)), "price_fixed"
        prob.setObjective(pulp.lpSum(1 - x[w.id][w.te] if w.te in x[w.id] else 1
                                     for w in problem.waiting))
        if all(len(x[w.id]) == 1 for w in problem.waiting):
            return _result("ilp", problem, sch1, Status.OPTIMAL, bound, t0, seed, params)
        left = None if time_limit is None else float(time_limit) - (time.perf_counter() - t0)
        run_cbc(left)
        if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return _result("ilp", problem, sch1, Status.FEASIBLE, bound, t0, seed, params)
        sch2 = read()
        if not ins.is_feasible(problem, sch2) or ins.key(problem, sch1) < ins.key(problem, sch2):
            sch2 = sch1
        status = Status.OPTIMAL if prob.sol_status == pulp.LpSolutionOptimal else Status.FEASIBLE
        return _result("ilp", problem, sch2, status, bound, t0, seed, params)
    finally:
        os.unlink(logfile)


# ---------------------------------------------------------------------------- brute force
def solve_brute(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
                max_nodes: int = 2_000_000, rel_tol: float = 1e-9) -> Result:
    """Optimal insertion by enumerating every integer start time (tiny instances only).

    Jobs are placed one by one (waiting jobs in order, then the new job) on a copy of the
    running jobs' profile, each at every start of its domain ``[lb, min(te + s, horizon)]``
    where it fits. The best schedule by (price, moved jobs) wins; prices within
    ``rel_tol`` count as equal. Raises ValueError beyond ``max_nodes`` search nodes.
    ``time_limit`` and ``seed`` are accepted for the common interface and ignored.
    """
    t0 = time.perf_counter()
    T = ins.horizon(problem)
    dom, new_dom = _start_bounds(problem, T)
    order = [(w.id, w.n, w.t, dom[w.id]) for w in problem.waiting]
    if problem.new is not None:
        order.append((problem.new.id, problem.new.n, problem.new.t, new_dom))
    prof = ins.profile_of(problem)
    chosen: dict[int, int] = {}
    best: list[Any] = [None, None]  # key, schedule
    nodes = [0]

    def better(k: tuple[float, int], b: tuple[float, int] | None) -> bool:
        if b is None:
            return True
        if math.isclose(k[0], b[0], rel_tol=rel_tol, abs_tol=rel_tol):
            return k[1] < b[1]
        return k[0] < b[0]

    def rec(i: int) -> None:
        if i == len(order):
            new_start = chosen[problem.new.id] if problem.new is not None else None
            sch = InsertionSchedule(new_start, {w.id: chosen[w.id] for w in problem.waiting})
            k = ins.key(problem, sch)
            if better(k, best[0]):
                best[0], best[1] = k, sch
            return
        jid, n, t, (lo, hi) = order[i]
        for tau in range(lo, hi + 1):
            nodes[0] += 1
            if nodes[0] > max_nodes:
                raise ValueError(f"brute: more than {max_nodes} search nodes; instance too large")
            if prof.fits(tau, t, (n,)):
                prof.reserve(tau, t, (n,))
                chosen[jid] = tau
                rec(i + 1)
                prof.release(tau, t, (n,))
        chosen.pop(jid, None)

    rec(0)
    params = {"nodes": nodes[0]}
    return _result("brute", problem, best[1], Status.OPTIMAL, best[0][0], t0, seed, params)


# ---------------------------------------------------------------------------- inserter
_SOLVERS: dict[str, Callable[..., Result]] = {
    "cpsat": solve_cpsat, "ilp": solve_ilp, "brute": solve_brute}


def insert(problem: InsertionProblem, *, solver: str = "cpsat", time_limit: float | None = None,
           seed: int = 0) -> InsertionSchedule:
    """The optimal schedule as an :class:`InsertionSchedule` (an *inserter* callable)."""
    res = _SOLVERS[solver](problem, time_limit=time_limit, seed=seed)
    return InsertionSchedule.from_dict(res.solution)


class CpsatInserter:
    """Inserter callable for ``sim.batch.slack_scheduler.SlackScheduler``: CP-SAT at every call.

    Parameters
    ----------
    time_limit : float, optional
        Seconds per insertion; a stopped search returns its best schedule (never worse
        than the current one, which is always feasible).
    seed : int
        CP-SAT random seed (one worker, so deterministic without a time limit).

    Attributes
    ----------
    stats : dict
        Counts of calls by status (``OPTIMAL``, ``FEASIBLE``) and ``trivial`` (empty
        queue, answered without CP-SAT), and the total solver seconds.
    """

    def __init__(self, time_limit: float | None = 10.0, seed: int = 0) -> None:
        self.time_limit = time_limit
        self.seed = seed
        self.stats: dict[str, float] = {"OPTIMAL": 0, "FEASIBLE": 0, "trivial": 0,
                                        "seconds": 0.0}

    def __call__(self, problem: InsertionProblem) -> InsertionSchedule:
        if not problem.waiting:
            # nothing can move: the optimum is the new job at its earliest fit
            self.stats["trivial"] += 1
            return ins.current_schedule(problem)
        res = solve_cpsat(problem, time_limit=self.time_limit, seed=self.seed)
        self.stats[res.status.value] += 1
        self.stats["seconds"] += res.runtime
        return InsertionSchedule.from_dict(res.solution)

    def __repr__(self) -> str:
        return f"CpsatInserter(time_limit={self.time_limit!r})"


def OptimalInsertionPolicy(  # noqa: N802 (a factory named like the policy it builds)
    *,
    sf: float = 3.0,
    awt: float = 2401.0,
    alpha_u: float = 1.0,
    alpha_t: float = 1.0,
    alpha_p: float = 1.0,
    alpha_f: float = 1.0,
    time_limit: float | None = 10.0,
    seed: int = 0,
    reset_slack: bool = True,
    default_priority: float = 0.0,
    record: bool = False,
    check: bool = False,
    order: str | None = None,
) -> Any:
    """The slack-based priority scheduler with the optimal (CP-SAT) inserter.

    The state machine is ``sim.batch.slack_scheduler.SlackScheduler``; at every insert and
    remove it calls :class:`CpsatInserter`, so it differs from ``SlackPolicy`` only in
    how each insertion problem is solved.

    Parameters
    ----------
    sf : float
        Slack factor SF.
    awt : float
        Average wait time AWT, seconds.
    alpha_u, alpha_t, alpha_p, alpha_f : float
        Price exponents; ``alpha_t`` must be 1 (the CP-SAT model is linear in delays).
    time_limit : float, optional
        CP-SAT seconds per insertion (default 10).
    seed : int
        CP-SAT seed.
    reset_slack, default_priority, record, check
        See ``sim.batch.slack_scheduler.SlackScheduler``.
    order : None
        Accepted so the CLI's ``--order`` can be passed through; any value other than
        None or ``"optimal"`` raises ValueError (this policy has no compress order).

    Returns
    -------
    SlackScheduler
        Named ``"slack-optimal"``; its ``inserter.stats`` counts proved and stopped calls.
    """
    from sim.batch.slack_scheduler import SlackScheduler

    if order not in (None, "optimal"):
        raise ValueError(f"slack-optimal has no compress order; got order={order!r}")
    if float(alpha_t) != 1.0:
        raise ValueError(f"slack-optimal needs alpha_t = 1 (CP-SAT model), got {alpha_t!r}")
    return SlackScheduler(
        CpsatInserter(time_limit=time_limit, seed=seed), sf=sf, awt=awt, alpha_u=alpha_u,
        alpha_t=alpha_t, alpha_p=alpha_p, alpha_f=alpha_f, reset_slack=reset_slack,
        default_priority=default_priority, record=record, check=check, name="slack-optimal")
