"""Brute-force enumeration of the slack-constrained insertion problem (registered as ``brute``).

The reference of the differential tests: every integer start time of every job, tiny
instances only. It implements the definition's optimum literally (see
:data:`sim.problems.insertion.PRICE_TOL`): it keeps, for every number ``m`` of moved jobs,
the cheapest schedule moving ``m`` jobs; the answer is the fewest ``m`` whose cheapest
price is within the tie tolerance of the overall lowest price. Times are integer seconds.
"""

from __future__ import annotations

import math
from typing import Any

from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.domains import start_bounds
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_brute", "search_nodes"]

_CHECK_EVERY = 4096  # search nodes between two looks at the clock


def search_nodes(problem: InsertionProblem, cap: int | None = None) -> int:
    """Upper bound on the search nodes of :func:`solve_brute`: ``sum over levels of the
    product of the start-domain sizes`` (the placements that fit are fewer). With
    ``cap``, counting stops at the first level beyond it (the result is then > cap)."""
    dom, new_dom = start_bounds(problem, ins.horizon(problem))
    sizes = [hi - lo + 1 for lo, hi in dom.values()]
    if new_dom is not None:
        sizes.append(new_dom[1] - new_dom[0] + 1)
    total, prod = 0, 1
    for n in sizes:
        prod *= n
        total += prod
        if cap is not None and total > cap:
            break
    return total


def solve_brute(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
                max_nodes: int = 2_000_000) -> Result:
    """Optimal insertion by enumerating every integer start time (tiny instances only).

    Jobs are placed one by one (waiting jobs in order, then the new job) on a copy of the
    running jobs' profile, each at every start of its domain ``[lb, min(te + s, horizon)]``
    where it fits (all times in seconds).

    Parameters
    ----------
    problem : InsertionProblem
        Any alphas.
    time_limit : float, optional
        Seconds; when it runs out the best schedule found so far (at worst the current
        schedule) is returned as FEASIBLE without a bound.
    seed : int
        Recorded only (the enumeration is deterministic).
    max_nodes : int
        Refuse up front (ValueError) when :func:`search_nodes` exceeds this.
    """
    deadline = Deadline(time_limit)
    est = search_nodes(problem, cap=max_nodes)
    if est > max_nodes:
        raise ValueError(f"brute: more than {max_nodes} search nodes (max_nodes) for "
                         f"{problem.k} waiting jobs; the enumeration is for tiny instances")
    T = ins.horizon(problem)
    dom, new_dom = start_bounds(problem, T)
    order = [(w.id, w.n, w.t, dom[w.id]) for w in problem.waiting]
    if problem.new is not None:
        order.append((problem.new.id, problem.new.n, problem.new.t, new_dom))
    prof = ins.profile_of(problem)
    chosen: dict[int, int] = {}
    # cheapest schedule per moved count (exact prices; ties broken by the first found)
    by_moved: dict[int, tuple[float, InsertionSchedule]] = {}
    nodes = [0]

    class _Stop(Exception):
        pass

    def rec(i: int) -> None:
        if i == len(order):
            new_start = chosen[problem.new.id] if problem.new is not None else None
            sch = InsertionSchedule(new_start, {w.id: chosen[w.id] for w in problem.waiting})
            p, m = ins.key(problem, sch)
            if m not in by_moved or p < by_moved[m][0]:
                by_moved[m] = (p, sch)
            return
        jid, n, t, (lo, hi) = order[i]
        for tau in range(lo, hi + 1):
            nodes[0] += 1
            if nodes[0] % _CHECK_EVERY == 0 and deadline.expired():
                raise _Stop
            if prof.fits(tau, t, (n,)):
                prof.reserve(tau, t, (n,))
                chosen[jid] = tau
                rec(i + 1)
                prof.release(tau, t, (n,))
        chosen.pop(jid, None)

    stopped = False
    try:
        rec(0)
    except _Stop:
        stopped = True
    params: dict[str, Any] = {"time_limit": time_limit, "max_nodes": max_nodes,
                              "nodes": nodes[0]}
    if stopped:
        cands = [s for _, s in by_moved.values()] + [ins.current_schedule(problem)]
        return finish("brute", problem, ins.best(problem, cands), Status.FEASIBLE, None,
                      deadline, seed, params,
                      note=f"stopped by the time limit after {nodes[0]} of up to {est} nodes; "
                           "best schedule found so far, no bound")
    low = min(p for p, _ in by_moved.values())
    m = min(k for k, (p, _) in by_moved.items() if p <= low + ins.price_tolerance(low))
    if math.isinf(low):  # cannot happen: the current schedule is feasible
        raise RuntimeError("brute: no feasible schedule")
    return finish("brute", problem, by_moved[m][1], Status.OPTIMAL, low, deadline, seed,
                  params)
