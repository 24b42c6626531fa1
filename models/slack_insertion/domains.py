"""Start-time domains of the slack-constrained insertion problem and their dominance proofs.

Shared by the exact solvers of :mod:`models.slack_insertion` (``cpsat``, ``ilp``,
``brute``). All times are integer seconds.

Dominant start times (used by ``ilp`` and ``cpsat``)
-----------------------------------------------------
Some optimal schedule (lowest price, then fewest moved) starts every job in
``C = {b + (sum of the estimates of a set of jobs) : b in {now, te_i, running ends}}``,
capped at :func:`sim.problems.insertion.horizon`. Proof: every cost is non-decreasing in
the start time (``delay_weight >= 0``, the signed power is monotone). Take an optimal
schedule and move any job one second earlier while that stays feasible, never below
``now`` and never
moving a job that sits at its ``te`` (moving it would add a moved job). This never
raises the price or the moved count and terminates. At the end each job is blocked: it
starts at ``now``, at its ``te``, or at an instant where the load of the others drops,
i.e. the end of another job (a running end, or another placed job's start plus its
estimate). Following the chain of blocking jobs back, each start is a base point plus
the estimates of the jobs on the chain; the chain's starts strictly decrease (estimates
are >= 1 s), so no job appears twice on it, and every start is in ``C``. (Shifting never
raises the price, so the argument also holds for the tie set of
:data:`sim.problems.insertion.PRICE_TOL`.) The load only rises at starts, so checking
the capacity at the points of ``C`` suffices. ``brute``
(all integer times) confirms it in the differential tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule

__all__ = ["start_bounds", "tighten_domains", "dominant_times", "chain_times"]


def start_bounds(problem: InsertionProblem, horizon: int
                 ) -> tuple[dict[int, tuple[int, int]], tuple[int, int] | None]:
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



def tighten_domains(problem: InsertionProblem, dom: dict[int, tuple[int, int]],
             new_dom: tuple[int, int] | None, cur: InsertionSchedule
             ) -> tuple[dict[int, tuple[int, int]], tuple[int, int] | None]:
    """Shrink the start domains to schedules no dearer than ``cur`` (any feasible schedule:
    the current one, or a better incumbent), plus the tie tolerance.

    With ``w`` the signed power, every term of a schedule of price <= ``P0 = price(cur) +
    price_tolerance(price(cur))`` satisfies ``term <= P0 + sum of the other jobs' largest
    gains`` (gain = the most negative cost, moving to the domain's lower bound). Inverting
    ``w`` bounds each delay. The optimum is never dearer than ``cur``, so no optimal
    schedule (ties of :data:`sim.problems.insertion.PRICE_TOL` included) is cut off.
    Needs ``alpha_t > 0``; returns the domains unchanged otherwise. Each bound keeps
    ``te`` (and the current new start) inside and adds one second against rounding.
    """
    at = problem.alpha_t
    if at <= 0:
        return dom, new_dom
    now = problem.now
    p0 = ins.objective(problem, cur)
    p0 += ins.price_tolerance(p0)
    wts = {w.id: ins.delay_weight(problem, w) for w in problem.waiting}
    gains = {w.id: wts[w.id] * abs(ins.signed_power(w.te - dom[w.id][0], at))
             for w in problem.waiting}
    room = p0 + math.fsum(gains.values())

    def inv(x: float) -> float:  # largest d with w(d) <= x (inf: no bound in floats)
        try:
            return x ** (1.0 / at) if x >= 0 else -((-x) ** (1.0 / at))
        except OverflowError:
            return math.inf if x >= 0 else -math.inf

    out = dict(dom)
    a = ins.new_weight(problem)
    if new_dom is not None and a > 0 and math.isfinite(d_new := inv(room / a)):
        ub = now + math.floor(d_new * (1 + 1e-9)) + 1
        new_dom = (new_dom[0], max(new_dom[0], cur.new_start, min(new_dom[1], ub)))
    for w in problem.waiting:
        c = wts[w.id]
        if c > 0 and math.isfinite(d := inv((room - gains[w.id]) / c)):
            ub = w.te + math.floor(d + 1e-9 * (1 + abs(d))) + 1
            lo, hi = dom[w.id]
            out[w.id] = (lo, max(w.te, min(hi, ub)))
    return out, new_dom



def incumbent_domains(problem: InsertionProblem, incumbent: InsertionSchedule
                      ) -> tuple[dict[int, tuple[int, int]], tuple[int, int] | None, int]:
    """Start domains over the problem's horizon tightened by ``incumbent``
    (:func:`start_bounds`, :func:`tighten_domains`), and the latest start any of them allows
    (s; ``problem.now`` when none): the horizon of the candidate times built on them."""
    dom, new_dom = start_bounds(problem, ins.horizon(problem))
    dom, new_dom = tighten_domains(problem, dom, new_dom, incumbent)
    latest = max([hi for _, hi in dom.values()] + ([new_dom[1]] if new_dom else [problem.now]))
    return dom, new_dom, latest


CHAIN_CAP = 10
"""The per-job sets of :func:`chain_times` may hold together at most this many times the
global set's cap (``max_points``) before a solver gives them up (the CP-SAT model falls
back on the global set; the time-indexed MIP refuses): beyond it one round of the fixed
point and the model built on it take seconds and gigabytes."""


def _merge_unique(parts: list[Any]) -> Any:
    """Sorted distinct values of the sorted integer arrays ``parts`` (a stable sort of
    sorted runs is a merge; ``numpy.unique`` hashes, which is far slower here)."""
    import numpy as np

    m = np.sort(np.concatenate(parts), kind="stable")
    if len(m) < 2:
        return m
    keep = np.empty(len(m), dtype=bool)
    keep[0] = True
    np.not_equal(m[1:], m[:-1], out=keep[1:])
    return m[keep]


def dominant_times(problem: InsertionProblem, horizon: int | None = None,
                   max_points: int = 20000,
                   stop: Callable[[], bool] | None = None) -> list[int]:
    """Sorted candidate start times ``C`` (see the module docstring), seconds.

    ``C = {b + s <= horizon : b in base, s a subset sum of the estimates}`` with ``base =
    {now} | {te_i} | {running ends}`` (each job's estimate used at most once in a sum).
    Raises ValueError when ``C`` has more than ``max_points`` points, or when ``stop``
    (asked after every estimate and base point) returns True.
    """
    import numpy as np

    T = ins.horizon(problem) if horizon is None else horizon
    now = problem.now
    durations = [w.t for w in problem.waiting]
    if problem.new is not None:
        durations.append(problem.new.t)
    base = sorted(c for c in ({now} | {w.te for w in problem.waiting}
                              | {r.end for r in problem.running}) if c <= T)

    def too_many(n: int) -> ValueError:
        return ValueError(
            f"more than {max_points} candidate start times ({n}+ over a horizon of "
            f"{T - now} s); the time-indexed model is for small instances (max_points)")

    def check_stop() -> None:
        if stop is not None and stop():
            raise ValueError("dominant_times: stopped (time limit)")

    sums = np.zeros(1, dtype=np.int64)  # sorted, distinct
    cap = T - now
    for d in sorted(durations):
        shifted = sums[: np.searchsorted(sums, cap - d, side="right")] + d
        if len(shifted):
            sums = _merge_unique([sums, shifted])
        if len(sums) > max_points:
            raise too_many(len(sums))
        check_stop()
    pts = np.zeros(0, dtype=np.int64)
    chunk: list[np.ndarray] = []
    size = 0
    for b in base:
        part = b + sums[: np.searchsorted(sums, T - b, side="right")]
        chunk.append(part)
        size += len(part)
        if size > 4 * max_points:  # merge now and then, so memory stays bounded
            pts = _merge_unique([pts] + chunk)
            chunk, size = [], 0
            if len(pts) > max_points:
                raise too_many(len(pts))
            check_stop()
    pts = _merge_unique([pts] + chunk)
    if len(pts) > max_points:
        raise too_many(len(pts))
    return [int(x) for x in pts]


def chain_times(problem: InsertionProblem, dom: dict[int, tuple[int, int]],
                new_dom: tuple[int, int] | None, values: list[int] | None = None,
                stop: Callable[[], bool] | None = None, max_points: int | None = None
                ) -> tuple[dict[int, list[int]], list[int] | None]:
    """Candidate start times per job (seconds): the least fixed point of

    ``C_i = (B_i | U_{j != i} (C_j + t_j)) & [lo_i, hi_i] & values``

    with ``B_i = {now, te_i} | {running ends}`` (``{now} | {running ends}`` for the new
    job), ``[lo_i, hi_i]`` the job's domain (``dom``/``new_dom``, e.g. after
    :func:`tighten_domains`) and ``values`` the global dominant times (all integers when
    None). Returns the sets of the waiting jobs by id and the new job's (None without a
    new job). Raises ValueError when the sets hold more than ``max_points`` points
    together (None: no cap), or when ``stop`` (asked before each job's update) returns
    True: one round over a long queue with large sets takes seconds.

    Proof that some optimal schedule (ties of the definition included) starts every job
    ``i`` in ``C_i``: shift an optimal schedule left as in the module docstring; the
    result is optimal too, so its starts lie in the domains (which keep every optimal
    schedule) and in ``values``. Each job is then at ``now``, at its own ``te`` (only its
    own: the shift stops a job there to keep it unmoved), at a running end, or at the
    end ``S_j + t_j`` of another job ``j`` that starts strictly earlier. By induction on
    the start times, ``S_j`` is in ``C_j``, so ``S_i`` is in ``C_i``. Against the global
    set this drops the other jobs' ``te`` as base points and the sums through jobs whose
    own domain cannot hold the chain's start.
    """
    import numpy as np

    ends = {problem.now} | {r.end for r in problem.running}
    jobs: list[tuple[int, tuple[int, int], set[int]]] = [
        (w.t, dom[w.id], ends | {w.te}) for w in problem.waiting]
    if problem.new is not None and new_dom is not None:
        jobs.append((problem.new.t, new_dom, ends))
    g = None if values is None else np.asarray(values, dtype=np.int64)

    def keep(v: Any) -> Any:
        if g is None or not len(v) or not len(g):
            return v if g is None else v[:0]
        pos = np.minimum(np.searchsorted(g, v), len(g) - 1)
        return v[g[pos] == v]

    def check_stop() -> None:
        if stop is not None and stop():
            raise ValueError("chain_times: stopped (time limit)")

    sets, front = [], []
    for _, (lo, hi), base in jobs:
        b = np.array(sorted(x for x in base if lo <= x <= hi), dtype=np.int64)
        b = keep(b)
        sets.append(b)
        front.append(b)
    total = sum(map(len, sets))
    while any(len(f) for f in front):
        check_stop()
        ends_now = np.concatenate([f + jobs[j][0] for j, f in enumerate(front)])
        label = np.concatenate([np.full(len(f), j) for j, f in enumerate(front)])
        order = np.argsort(ends_now, kind="stable")
        ends_now, label = ends_now[order], label[order]
        nxt = []
        for i, (_, (lo, hi), _) in enumerate(jobs):
            check_stop()
            a = np.searchsorted(ends_now, lo)
            b = np.searchsorted(ends_now, hi, side="right")
            v = np.unique(ends_now[a:b][label[a:b] != i])
            v = keep(v)
            v = v[~np.isin(v, sets[i], assume_unique=True)]
            if len(v):
                sets[i] = np.union1d(sets[i], v)
                total += len(v)
                if max_points is not None and total > max_points:
                    raise ValueError(
                        f"more than {max_points} candidate start times over all jobs "
                        f"({total}+); the per-job sets are for small instances")
            nxt.append(v)
        front = nxt
    out = {w.id: [int(x) for x in sets[k]] for k, w in enumerate(problem.waiting)}
    new = [int(x) for x in sets[-1]] if problem.new is not None and new_dom is not None \
        else None
    return out, new


def left_shift(problem: InsertionProblem, schedule: InsertionSchedule) -> InsertionSchedule:
    """``schedule`` (feasible) with every job moved to its earliest fit among the others,
    repeated until no job moves (seconds); a waiting job at its ``te`` stays there.

    The shift of the module docstring: the result is feasible, its price and moved count
    are no higher, and every job is blocked, so its starts lie in the sets of
    :func:`dominant_times` and :func:`chain_times` (a valid hint for models whose
    domains are those sets).
    """
    prof = ins.profile_of(problem)
    starts = dict(schedule.starts)
    new_start = schedule.new_start
    jobs: list[tuple[int | None, int, int]] = [(w.id, w.t, w.n) for w in problem.waiting]
    te = {w.id: w.te for w in problem.waiting}
    if problem.new is not None and new_start is not None:
        jobs.append((None, problem.new.t, problem.new.n))

    def at(jid: int | None) -> int:
        return new_start if jid is None else starts[jid]

    for jid, t, n in jobs:
        prof.reserve(at(jid), t, (n,))
    changed = True
    while changed:
        changed = False
        for jid, t, n in sorted(jobs, key=lambda j: at(j[0])):
            s = at(jid)
            if jid is not None and s == te[jid]:
                continue
            prof.release(s, t, (n,))
            e = prof.earliest_start(t, (n,), problem.now)
            if e < s:
                s, changed = e, True
                if jid is None:
                    new_start = e
                else:
                    starts[jid] = e
            prof.reserve(s, t, (n,))
    return InsertionSchedule(new_start, starts)
