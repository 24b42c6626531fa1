"""Time-indexed ILP of the slack-constrained insertion problem (PuLP/CBC, registered as ``ilp``).

Binary ``x[i, tau]`` = job i starts at tau, over the *dominant start times*
(:func:`models.slack_insertion.domains.dominant_times`): one start per job, capacity
checked at every candidate time, the cost of each (job, start) pair taken straight from
:func:`sim.problems.insertion.job_cost`, so any alphas work. Lexicographic by a second
solve (price <= optimum + 1e-7 relative, minimise moved jobs).

Status: OPTIMAL only when CBC proved both stages. A stopped ILP returns the cheaper of
CBC's incumbent and the current schedule as FEASIBLE. CBC via PuLP reports ``LpStatus``
"Optimal" also after a time-limit stop with an incumbent; ``prob.sol_status ==
pulp.LpSolutionOptimal`` (versus ``LpSolutionIntegerFeasible``) tells a proved optimum
from a stopped run, and only the former is OPTIMAL. CBC runs with ``threads=1``.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from bisect import bisect_right
from typing import Any

from models.slack_insertion.common import finish
from models.slack_insertion.domains import dominant_times, start_bounds, tighten_domains
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_ilp"]


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
    dom, new_dom = start_bounds(problem, T)
    if tighten:
        dom, new_dom = tighten_domains(problem, dom, new_dom, ins.current_schedule(problem))
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
                c = ins.new_weight(problem) * ins.signed_power(tau - now, problem.alpha_t)
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
        return finish("ilp", problem, sch, Status.OPTIMAL, ins.price(problem, sch), t0, seed,
                       params)
    try:
        run_cbc(time_limit)
        if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            cur = ins.current_schedule(problem)
            params["fallback"] = True
            return finish("ilp", problem, cur, Status.FEASIBLE, _cbc_bound(logfile), t0, seed,
                           params)
        sch1 = read()
        if prob.sol_status != pulp.LpSolutionOptimal:
            cur = ins.current_schedule(problem)
            if ins.key(problem, cur) < ins.key(problem, sch1):
                sch1 = cur  # CBC stopped with an incumbent dearer than the current schedule
            return finish("ilp", problem, sch1, Status.FEASIBLE, _cbc_bound(logfile), t0, seed,
                           params)
        p1 = float(pulp.value(price_expr) or 0.0)
        bound = p1
        if any(c != 0 for jid in cost for c in cost[jid].values()):
            prob += price_expr <= p1 + 1e-7 * max(1.0, abs(p1)), "price_fixed"
        prob.setObjective(pulp.lpSum(1 - x[w.id][w.te] if w.te in x[w.id] else 1
                                     for w in problem.waiting))
        if all(len(x[w.id]) == 1 for w in problem.waiting):
            return finish("ilp", problem, sch1, Status.OPTIMAL, bound, t0, seed, params)
        left = None if time_limit is None else float(time_limit) - (time.perf_counter() - t0)
        run_cbc(left)
        if prob.sol_status not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return finish("ilp", problem, sch1, Status.FEASIBLE, bound, t0, seed, params)
        sch2 = read()
        if not ins.is_feasible(problem, sch2) or ins.key(problem, sch1) < ins.key(problem, sch2):
            sch2 = sch1
        status = Status.OPTIMAL if prob.sol_status == pulp.LpSolutionOptimal else Status.FEASIBLE
        return finish("ilp", problem, sch2, status, bound, t0, seed, params)
    finally:
        os.unlink(logfile)

