"""Time-indexed ILP of the slack-constrained insertion problem (PuLP/CBC, registered as ``ilp``).

Binary ``x[j, tau]`` = job j starts at tau, over the *dominant start times*
(:func:`models.slack_insertion.domains.dominant_times`) inside j's start domain where j
fits next to the running jobs; one start per job. The cost of each (job, start) pair is
:func:`sim.problems.insertion.job_cost` itself, so any alphas work and the model is the
problem as defined (no rounding).

Capacity: the direct form sums every ``x[j, tau]`` with ``tau`` in ``(u - t_j, u]`` at
every time ``u``: O(times^2 x jobs) nonzeros (with the old closure of candidate times it
took CBC to 19 GB on a k = 4 snapshot). It is kept while small (CBC solves it several
times faster); beyond that, O(candidate times x jobs) nonzeros by the cumulative
``z[j, k] = z[j, k-1] + x[j, tau_k]`` (continuous, in [0, 1]), which says whether j has
started by its k-th candidate: j runs at ``u`` iff ``z[j, k(u)] - z[j, k(u - t_j)] = 1``.
One row per time ``u`` at which the load can exceed the capacity, two terms per job;
the same LP relaxation as the direct form (``z`` is a linear substitution).

Lexicographic by a second solve: price ``<= P1 + price_tolerance(P1)`` (``P1`` the
proved optimum, :data:`sim.problems.insertion.PRICE_TOL`), fewest moved jobs. The pick is
re-checked in exact arithmetic; if CBC's own tolerances (about 1e-7 on a row) let in a
schedule beyond the tie, the cheaper one is kept and the result is FEASIBLE with a note.

Limits: ``time_limit`` covers model building, both CBC runs and reading the result
(building checks the clock; a stop returns the cheaper of CBC's incumbent and the current
schedule, FEASIBLE). CBC runs under :func:`models.cbc.solve_guarded`: its ``-sec`` is
what is left after PuLP wrote the model, and it is killed ``CBC_GRACE`` seconds after
the limit (on the k = 65 KTH snapshot it ignored an 18 s ``-sec`` for 50 s in its root
processing). PuLP's writing of the model cannot be interrupted, so CBC is started only
with at least ``WRITE_FACTOR`` times the build time left. When the limit passes
before CBC gives a schedule (model building stopped, too little time left to write the
model, CBC killed, or CBC stopped without an incumbent), the result is the better of the AST
heuristic's schedule (:func:`heuristics.slack.solve_ast`, given at most
``FALLBACK_SECONDS``; computed before CBC starts, so nothing runs after a kill) and the
current schedule, FEASIBLE, with CBC's bound if its log
has one. A model whose size estimate exceeds ``max_nonzeros`` (memory) or whose
candidate times exceed ``max_points`` is refused up front with a ValueError.

Status: OPTIMAL only when CBC proved both stages. CBC via PuLP reports ``LpStatus``
"Optimal" also after a time-limit stop with an incumbent; ``prob.sol_status ==
pulp.LpSolutionOptimal`` (versus ``LpSolutionIntegerFeasible``) tells a proved optimum
from a stopped run, and only the former is OPTIMAL. CBC runs serially.

Backends: ``backend="highs"`` or ``"scip"`` solves the same PuLP model with OR-Tools'
HiGHS or SCIP (:mod:`models.mip`: translated in memory, the translation charged to the
limit); ``sol_status`` then says what that backend proved (:func:`models.mip.solve`), and
the bound of a stopped run is SCIP's dual bound (HiGHS gives none through OR-Tools).
"""

from __future__ import annotations

import math
import os
from bisect import bisect_right
from types import EllipsisType
from typing import Any

from models import mip
from models.cbc import log_file, variable
from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.domains import dominant_times, start_bounds, tighten_domains
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_ilp", "CBC_GRACE", "FALLBACK_SECONDS", "WRITE_FACTOR"]

CBC_GRACE = 0.3
"""Seconds CBC may run past the time limit before it is killed (the fallback schedule is
ready before CBC starts, so a killed run returns within about this of the limit)."""
WRITE_FACTOR = 1.0
"""PuLP's MPS writing is estimated as this times the model's build time (measured 0.7);
CBC is not started with less time than that left."""
FALLBACK_SECONDS = 0.5
"""Most seconds the AST heuristic gets for the fallback schedule (it needs about 0.1 s
for 500 waiting jobs)."""

_CHECK_EVERY = 2000  # model entries between two looks at the clock
_DIRECT_MAX = 100_000  # largest direct-form model (nonzeros) formulation="auto" builds


class _Stopped(Exception):
    """The time limit ran out while building the model."""


def solve_ilp(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
              max_points: int = 20000, max_nonzeros: int = 1_000_000,
              tighten: bool = True, formulation: str = "auto", backend: str = "cbc") -> Result:
    """Optimal insertion by a time-indexed ILP over the dominant start times (PuLP/CBC).

    Parameters
    ----------
    problem : InsertionProblem
        Any alphas.
    time_limit : float, optional
        Seconds for everything (model building, both stages).
    seed : int
        Recorded only (CBC runs single-threaded and deterministically).
    max_points : int
        Refuse instances with more candidate start times (ValueError).
    max_nonzeros : int
        Refuse instances whose model would have more variables plus nonzeros than this
        (ValueError; about 1 GB of PuLP and CBC memory at 2.5 million).
    tighten : bool
        Shrink the start domains by the price of the current schedule (exact; needs
        ``alpha_t > 0``, else ignored).
    formulation : {"auto", "direct", "cumulative"}
        Capacity rows summing the ``x`` (direct; CBC solves small models of this form
        several times faster) or through the cumulative ``z`` (linear size). ``auto``
        takes the direct form while it has at most ``_DIRECT_MAX`` nonzeros.
    backend : {"cbc", "highs", "scip"}
        The MIP solver (:mod:`models.mip`); CBC through PuLP by default.
    """
    import pulp

    if formulation not in ("auto", "direct", "cumulative"):
        raise ValueError(f"ilp: formulation must be 'auto', 'direct' or 'cumulative', "
                         f"got {formulation!r}")
    mip.check_backend(backend)
    deadline = Deadline(time_limit)
    params: dict[str, Any] = {"time_limit": time_limit, "max_points": max_points,
                              "max_nonzeros": max_nonzeros, "tighten": tighten,
                              "backend": backend}
    now = problem.now
    cur = ins.current_schedule(problem)
    T = ins.horizon(problem)
    dom, new_dom = start_bounds(problem, T)
    if tighten:
        dom, new_dom = tighten_domains(problem, dom, new_dom, cur)
    cap_t = max([hi for _, hi in dom.values()] + ([new_dom[1]] if new_dom else [now]))
    try:
        C = dominant_times(problem, cap_t, max_points, stop=deadline.expired)
    except ValueError:
        if not deadline.expired():
            raise
        return _fallback(problem, cur, deadline, seed, params, None,
                         "stopped by the time limit while listing candidate times")
    run = ins.profile_of(problem)
    params["candidate_times"] = len(C)

    jobs = [(w.id, w.n, w.t) for w in problem.waiting]
    if problem.new is not None:
        jobs.append((problem.new.id, problem.new.n, problem.new.t))
    is_new = {jid: problem.new is not None and jid == problem.new.id for jid, _, _ in jobs}

    # candidate starts and their costs (cheap, no PuLP objects yet)
    cand: dict[int, list[int]] = {}
    cost: dict[int, dict[int, float]] = {}
    for jid, n, t in jobs:
        lo, hi = new_dom if is_new[jid] else dom[jid]
        a, b = bisect_right(C, lo - 1), bisect_right(C, hi)
        taus, cs = [], {}
        for tau in C[a:b]:
            if not run.fits(tau, t, (n,)):
                continue
            if is_new[jid]:
                c = ins.new_weight(problem) * ins.signed_power(tau - now, problem.alpha_t)
            else:
                c = ins.job_cost(problem, problem.job(jid), tau)
                if math.isinf(c):
                    continue
            taus.append(tau)
            cs[tau] = c
        if not taus:
            raise RuntimeError(f"ilp: no candidate start for job {jid}")
        cand[jid], cost[jid] = taus, cs
        if deadline.expired():
            return _fallback(problem, cur, deadline, seed, params, None,
                             "stopped by the time limit while listing candidate starts")

    # capacity rows: times at which the jobs that can run may exceed the free capacity
    free = {u: problem.capacity - sum(r.n for r in problem.running if r.end > u) for u in C}
    starts_all = sorted({tau for taus in cand.values() for tau in taus})
    rows = []
    for u in starts_all:
        maxload = 0
        for jid, n, t in jobs:
            ts = cand[jid]
            if bisect_right(ts, u) > bisect_right(ts, u - t):
                maxload += n
        if maxload > free[u]:
            rows.append(u)
    n_x = sum(len(v) for v in cand.values())
    direct_nz = 2 * n_x + sum(bisect_right(cand[jid], u) - bisect_right(cand[jid], u - t)
                              for u in rows for jid, _n, t in jobs)
    if formulation == "auto":
        formulation = "direct" if direct_nz <= _DIRECT_MAX else "cumulative"
    if formulation == "direct":
        n_vars, nonzeros = n_x, direct_nz
    else:
        n_vars = 2 * n_x
        nonzeros = 4 * n_x + 2 * len(jobs) * len(rows)
    params.update(formulation=formulation, variables=n_vars, capacity_rows=len(rows),
                  nonzeros_estimate=nonzeros)
    if n_vars + nonzeros > max_nonzeros:
        raise ValueError(
            f"ilp: the model would have about {n_vars + nonzeros:,} variables and nonzeros "
            f"({len(C)} candidate times, {len(jobs)} jobs), more than max_nonzeros="
            f"{max_nonzeros:,}; too large for the time-indexed ILP in bounded memory")

    if all(len(v) == 1 for v in cand.values()):
        # nothing to decide (CBC's presolve would leave an empty model it cannot report)
        only = {jid: v[0] for jid, v in cand.items()}
        sch = InsertionSchedule(only[problem.new.id] if problem.new is not None else None,
                                {w.id: only[w.id] for w in problem.waiting})
        return finish("ilp", problem, sch, Status.OPTIMAL, ins.objective(problem, sch), deadline,
                      seed, params)

    t_build = deadline.elapsed()
    try:
        prob, x, price_expr = _build(problem, jobs, cand, cost, rows, free, deadline,
                                     formulation == "cumulative")
    except _Stopped:
        return _fallback(problem, cur, deadline, seed, params, None,
                         "stopped by the time limit while building the model")

    # PuLP writes the model for CBC in about the time it took to build (0.9 s against
    # 1.3 s at k = 65), and that cannot be interrupted: CBC runs only with that much left
    t_write = WRITE_FACTOR * (deadline.elapsed() - t_build)
    if deadline.limit is not None and deadline.left(0.0) < t_write:
        return _fallback(problem, cur, deadline, seed, params, None,
                         f"too little time left to write the model for {mip.NAMES[backend]}")
    ast = _ast(problem)
    logfile = log_file("slack_")

    def run_cbc() -> bool:
        return mip.solve(prob, backend=backend, time_limit=deadline.left(0.01),
                         grace=CBC_GRACE, log_path=logfile, data=problem)

    def read() -> InsertionSchedule:
        chosen = {jid: max(x[jid], key=lambda tau: (x[jid][tau].value() or 0.0, -tau))
                  for jid in x}
        new_start = chosen[problem.new.id] if problem.new is not None else None
        return InsertionSchedule(new_start, {w.id: chosen[w.id] for w in problem.waiting})

    try:
        if not run_cbc():
            return _fallback(problem, cur, deadline, seed, params, mip.bound(prob, logfile),
                             mip.killed_note(backend, prob), ast)
        if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return _fallback(problem, cur, deadline, seed, params, mip.bound(prob, logfile),
                             f"the schedule of {mip.NAMES[backend]} violated the model "
                             "beyond 1e-6 (numerics) and was rejected" if mip.rejected(prob)
                             else f"{mip.NAMES[backend]} found no schedule in time", ast)
        sch1 = read()
        if ins.check(problem, sch1):  # the solver's tolerances let in a bad pick
            return _fallback(problem, cur, deadline, seed, params, None,
                             f"the schedule of {mip.NAMES[backend]} failed the exact check "
                             "(solver tolerances); not proved", ast)
        if prob.sol_status != pulp.LpSolutionOptimal:
            return finish("ilp", problem, ins.best(problem, [sch1, cur]), Status.FEASIBLE,
                          mip.bound(prob, logfile), deadline, seed, params,
                          note="stopped by the time limit")
        p1 = ins.objective(problem, sch1)
        bound = p1
        if all(len(x[w.id]) == 1 for w in problem.waiting):
            return finish("ilp", problem, sch1, Status.OPTIMAL, bound, deadline, seed, params)
        prob += price_expr <= p1 + ins.price_tolerance(p1), "price_tie"
        prob.setObjective(pulp.lpSum(1 - x[w.id][w.te] if w.te in x[w.id] else 1
                                     for w in problem.waiting))
        if deadline.expired(t_write):
            return finish("ilp", problem, sch1, Status.FEASIBLE, bound, deadline, seed, params,
                          note="stopped by the time limit before the tie-break stage")
        if not run_cbc() or prob.sol_status not in (pulp.LpSolutionOptimal,
                                                     pulp.LpSolutionIntegerFeasible):
            return finish("ilp", problem, sch1, Status.FEASIBLE, bound, deadline, seed, params,
                          note="tie-break stage stopped without a schedule")
        sch2 = read()
        status = Status.OPTIMAL if prob.sol_status == pulp.LpSolutionOptimal else Status.FEASIBLE
        note = "" if status is Status.OPTIMAL else "tie-break stage stopped by the time limit"
        if ins.check(problem, sch2) or ins.objective(problem, sch2) > \
                p1 + ins.price_tolerance(p1):
            sch2, status = sch1, Status.FEASIBLE
            note = ("the tie-break pick of CBC was beyond the price tie (CBC tolerances); "
                    "fewest moved jobs not proved")
        return finish("ilp", problem, sch2, status, bound, deadline, seed, params, note=note)
    finally:
        os.unlink(logfile)


def _ast(problem: InsertionProblem) -> InsertionSchedule | None:
    """The AST heuristic's schedule in at most ``FALLBACK_SECONDS`` (None if it has none)."""
    from heuristics.slack import solve_ast

    return solve_ast(problem, time_limit=FALLBACK_SECONDS).solution


def _fallback(problem: InsertionProblem, cur: InsertionSchedule, deadline: Deadline,
              seed: int, params: dict[str, Any], bound: float | None, why: str,
              ast: InsertionSchedule | None | EllipsisType = ...) -> Result:
    """FEASIBLE with the better of the AST heuristic's (``ast``, computed here when not
    given) and the current schedule (CBC gave none in time); ``bound`` is CBC's, if
    any."""
    if ast is ...:
        ast = _ast(problem)
    sch = cur if ast is None else ins.best(problem, [ast, cur])
    which = "AST heuristic's" if sch is ast else "current"
    return finish("ilp", problem, sch, Status.FEASIBLE, bound, deadline, seed, params,
                  note=f"{why}; the {which} schedule" + ("" if bound is not None
                                                         else ", no bound"))


def _build(problem: InsertionProblem, jobs: list[tuple[int, int, int]],
           cand: dict[int, list[int]], cost: dict[int, dict[int, float]], rows: list[int],
           free: dict[int, int], deadline: Deadline, cumulative: bool
           ) -> tuple[Any, dict[int, dict[int, Any]], Any]:
    """The PuLP model (see the module docstring); raises :class:`_Stopped` on the limit."""
    import pulp

    prob = pulp.LpProblem("slack_insertion", pulp.LpMinimize)
    x: dict[int, dict[int, Any]] = {}
    z: dict[int, list[Any]] = {}
    count = 0
    for jid, _n, _t in jobs:
        x[jid], z[jid] = {}, []
        prev = None
        for k, tau in enumerate(cand[jid]):
            v = variable(prob, f"x_{jid}_{tau}", pulp.LpBinary)
            x[jid][tau] = v
            if cumulative:
                zk = variable(prob, f"z_{jid}_{k}", pulp.LpContinuous, 0, 1)
                prob += (zk == v if prev is None else zk == prev + v), f"cum_{jid}_{k}"
                z[jid].append(zk)
                prev = zk
            count += 1
            if count % _CHECK_EVERY == 0 and deadline.expired():
                raise _Stopped
        if cumulative:
            prob += z[jid][-1] == 1, f"one_{jid}"
        else:
            prob += pulp.lpSum(x[jid].values()) == 1, f"one_{jid}"
    for u in rows:
        terms = []
        for jid, n, t in jobs:
            ts = cand[jid]
            hi, lo = bisect_right(ts, u), bisect_right(ts, u - t)
            if hi <= lo:
                continue
            if not cumulative:
                terms.extend(n * x[jid][tau] for tau in ts[lo:hi])
                continue
            terms.append(n * z[jid][hi - 1])
            if lo > 0:
                terms.append(-n * z[jid][lo - 1])
        prob += pulp.lpSum(terms) <= free[u], f"cap_{u}"
        count += len(terms)
        if count % _CHECK_EVERY < len(terms) and deadline.expired():
            raise _Stopped
    price_expr = pulp.lpSum(cost[jid][tau] * v for jid in x for tau, v in x[jid].items())
    prob += price_expr
    return prob, x, price_expr
