"""Brute-force enumeration of the slack-constrained insertion problem (registered as ``brute``).

The reference of the differential tests: every integer start time of every job, tiny
instances only. Times are integer seconds.
"""

from __future__ import annotations

import math
import time
from typing import Any

from models.slack_insertion.common import finish
from models.slack_insertion.domains import start_bounds
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_brute"]


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
    dom, new_dom = start_bounds(problem, T)
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
    return finish("brute", problem, best[1], Status.OPTIMAL, best[0][0], t0, seed, params)

