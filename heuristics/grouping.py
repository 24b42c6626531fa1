"""Grouping heuristics of Suh, Rudolph & Devadas for memory-aware time slicing.

All three take a :class:`sim.problems.grouping.GroupingProblem` and return a ``Result`` with
``Status.FEASIBLE`` and ``bound=None`` (or ``Status.INFEASIBLE`` when, with a fixed
number of slices, they cannot place every job). Ties are broken by job order, then slice
order, so the results are deterministic; ``seed`` is recorded but not used.

- :func:`greedy` (section 4.1.1): start with ``S = ceil(sum Q / P)`` slices; repeatedly
  assign the (job, slice) pair of largest gain among the pairs that fit in ``P``
  processors. With ``delta(j, s) = cost(s + j) - cost(s)`` the increase of the slice's
  eq. 4 cost, the gain (our reading of "gain") is by default ``gain="regret"``: the
  saving of slice ``s`` over the job's worst slice, ``max_s' delta(j, s') - delta(j, s)``
  (a job with a single slice left goes first; ties go to the costlier placement), so the
  jobs that interfere most are separated first. ``gain="marginal"`` uses ``-delta(j, s)``
  itself, which places the cheap jobs first and leaves the memory-hungry ones no choice
  (compared in ``sim.experiments.suh.gap``). "Within capacity" is read with a
  look-ahead (``look_ahead=True``, default): a pair is considered only if the jobs still
  unassigned then fit in the free processors by first-fit decreasing (when no pair
  passes, all pairs that fit are considered); without it the small jobs get spread over
  every slice and the wide ones need extra slices. When the number of slices is free, repeat
  with ``S + 1``, ``S + 2``, ... while the schedule improves. If no pair fits while jobs
  remain (processor packing failed), a free ``S`` opens a new slice.

The two balancing heuristics below get the same search over ``S`` when it is free (so the
comparison is about the grouping, not the number of slices).
- :func:`footprint_balancing` (section 2, the naive approach): jobs by decreasing footprint, each to
  the slice with the smallest total footprint among those with enough free processors.
- :func:`knee` (section 4.1.2): replace each miss-rate curve by its knee (the memory a job
  needs before its curve flattens; here the point of the curve farthest below the chord
  from ``(0, m(0))`` to ``(X, m(X))``) and pack knees: jobs by decreasing knee, first
  slice whose knees still fit in ``C`` and has processors, else the slice with the
  smallest knee total that has processors.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from sim.memory.model import MissRateCurve
from sim.problems import checker, scorer
from sim.problems.grouping import GroupingProblem, SliceCosts, objective
from sim.result import Result, Status, build

__all__ = ["greedy", "footprint_balancing", "knee", "curve_knee", "scoring_seconds"]


CHUNK_CELLS = 1 << 21
"""Most cells (candidate groups x jobs) of one vectorised costing call of the greedy
algorithm: its arrays stay near 16 MB each, and the deadline is checked between calls."""


def scoring_seconds(problem: GroupingProblem, slices: list[list[str]]) -> float:
    """Seconds that costing ``slices`` by eq. 4 (the objective) will take, extrapolated
    from costing its first slices (about 64 jobs): the steady state of a batch of slices
    costs in proportion to the jobs in them (about 0.4 ms each, 4 s at 10^4 jobs)."""
    sample: list[list[str]] = []
    for g in slices:
        if sum(map(len, sample)) >= 64:
            break
        sample.append(g)
    members = sum(map(len, sample))
    if not members:
        return 0.0
    t = time.perf_counter()
    problem.slice_costs(sample)
    return (time.perf_counter() - t) * sum(map(len, slices)) / members


def _result(name: str, problem: GroupingProblem, slices: list[list[str]] | None, t0: float,
            seed: int, params: dict[str, Any], deadline: float | None = None) -> Result:
    stopped = deadline is not None and time.perf_counter() >= deadline
    note = "stopped by the time limit" if stopped else ""
    if slices is not None and deadline is not None:
        # costed twice: here (``build``) and again where every answer is verified
        # (``sim.result.verify``, outside the solver's runtime but inside the caller's
        # wall time: 3.4 s of CPU at 10^4 jobs)
        need = 2 * scoring_seconds(problem, slices)
        grace = min(0.5, 0.1 * (deadline - t0))  # seconds the costing may run past it
        if time.perf_counter() + need > deadline + grace:  # too late to cost the schedule
            slices, stopped = None, True
            note = (f"stopped by the time limit: costing the schedule by eq. 4 twice (here "
                    f"and in its verification) would take about {need:.2g} s, past the "
                    "limit")
    if slices is None:  # a stopped search proves nothing: UNKNOWN, not INFEASIBLE
        return Result(name, Status.UNKNOWN if stopped else Status.INFEASIBLE, None, None,
                      time.perf_counter() - t0, None, seed, params, note)
    if problem.slices is None:  # with S free an empty slice only adds P * T idle time
        slices = [g for g in slices if g]
    return build(solver=name, status=Status.FEASIBLE, solution=problem.canonical(slices),
                 check=checker(problem), objective=scorer(problem),
                 runtime=time.perf_counter() - t0, seed=seed, params=params, note=note)


def _deadline(t0: float, time_limit: float | None) -> float | None:
    """Wall-clock deadline in ``time.perf_counter`` seconds (None: no limit)."""
    return None if time_limit is None else t0 + float(time_limit)


def _packs(demands: list[int], free: list[int]) -> bool:
    """First-fit decreasing: do the ``demands`` fit into slices with ``free`` processors?"""
    free = list(free)
    for q in sorted(demands, reverse=True):
        for i, f in enumerate(free):
            if q <= f:
                free[i] -= q
                break
        else:
            return False
    return True


def _greedy_fixed(problem: GroupingProblem, S: int, grow: bool, gain: str,
                  look_ahead: bool = True, deadline: float | None = None) -> \
        list[list[str]] | None:
    names = problem.names
    Q = problem.demand
    P = problem.processors
    slices: list[list[str]] = [[] for _ in range(S)]
    used = [0] * S
    left = list(range(len(names)))
    costs = SliceCosts(problem)
    while left:
        if deadline is not None and time.perf_counter() >= deadline:
            # stopped: the jobs left go first-fit decreasing (a new slice when S is free)
            return _first_fit(problem, slices, used, left, grow)
        best = None
        cur = costs.many(slices)
        # cost all candidates in a few vectorised calls, of at most CHUNK_CELLS cells
        # (groups x jobs) each, the deadline checked between them
        cands = (slices[s] + [names[j]] for j in left for s in range(len(slices))
                 if used[s] + Q[j] <= P)
        while chunk := list(itertools.islice(cands, max(1, CHUNK_CELLS // len(names)))):
            if deadline is not None and time.perf_counter() >= deadline:
                return _first_fit(problem, slices, used, left, grow)
            costs.many(chunk)
        for j in left:
            if deadline is not None and time.perf_counter() >= deadline:
                return _first_fit(problem, slices, used, left, grow)
            room = [s for s in range(len(slices)) if used[s] + Q[j] <= P]
            if not room:
                continue
            if look_ahead:  # keep only placements after which the rest still packs
                ok = [s for s in room if _packs([Q[i] for i in left if i != j],
                                                [P - used[r] - (Q[j] if r == s else 0)
                                                 for r in range(len(slices))])]
                room = ok or room
            delta = {s: costs(slices[s] + [names[j]]) - cur[s] for s in room}
            worst = max(delta.values())
            for s in room:
                if gain == "marginal":
                    key = (-delta[s], 0.0)
                else:  # saving over the job's worst slice; a job with one slice left first
                    key = (np.inf if len(room) == 1 else worst - delta[s], delta[s])
                if best is None or key > best[0]:
                    best = (key, j, s)
        if best is None:
            if not grow:
                return None
            slices.append([])
            used.append(0)
            continue
        _, j, s = best
        slices[s].append(names[j])
        used[s] += int(Q[j])
        left.remove(j)
    return slices


def _first_fit(problem: GroupingProblem, slices: list[list[str]], used: list[int],
               left: list[int], grow: bool) -> list[list[str]] | None:
    """Complete a partial schedule: jobs ``left`` by decreasing demand, each to the first
    slice with room (a new slice when ``grow``); None when a job finds none."""
    Q = problem.demand
    names = problem.names  # built per access
    free = problem.processors - np.asarray(used, dtype=np.int64)  # scanned in C
    for j in sorted(left, key=lambda i: (-int(Q[i]), i)):
        room = np.flatnonzero(free >= Q[j])
        if room.size:
            s = int(room[0])
        else:
            if not grow:
                return None
            slices.append([])
            used.append(0)
            free = np.append(free, problem.processors)
            s = len(slices) - 1
        slices[s].append(names[j])
        used[s] += int(Q[j])
        free[s] -= int(Q[j])
    return slices


def _search_slices(problem: GroupingProblem, build, t0: float,
                   time_limit: float | None) -> list[list[str]] | None:
    """``build(S)`` with the fixed ``S``, or, when ``S`` is free, with ``S = ceil(sum Q/P)``,
    ``S + 1``, ... while the eq. 4 cost improves (at most ``J`` slices)."""
    if problem.slices is not None:
        return build(problem.slices, False)
    S = problem.min_slices
    t = time.perf_counter()
    best = build(S, True)
    if best is None:  # stopped by the time limit
        return None
    if time_limit is not None and time.perf_counter() - t0 + \
            2 * scoring_seconds(problem, best) > time_limit:
        return best  # no time to cost it twice: the first schedule stands
    best_obj = objective(problem, best)
    step = time.perf_counter() - t  # one more S costs about as much as the last one
    while S < len(problem.jobs):
        # the next S and the final costing of the schedule (at most a step) must fit
        if time_limit is not None and time.perf_counter() + 2 * step - t0 > time_limit:
            break
        S += 1
        t = time.perf_counter()
        cand = build(S, True)
        if cand is None:
            break
        obj = objective(problem, cand)
        step = time.perf_counter() - t
        if not obj < best_obj - 1e-12 * max(1.0, abs(best_obj)):
            break
        best, best_obj = cand, obj
    return best


def greedy(problem: GroupingProblem, *, time_limit: float | None = None, seed: int = 0,
           gain: str = "regret", look_ahead: bool = True) -> Result:
    """Greedy gain algorithm (section 4.1.1). See the module docstring.

    Parameters
    ----------
    time_limit : float, optional
        Seconds.
    seed : int
        Recorded only (the algorithm is deterministic).
    gain : {"regret", "marginal"}
        How a pair's gain is scored.
    look_ahead : bool
        Consider only placements after which the remaining jobs still pack.
    """
    t0 = time.perf_counter()
    if gain not in ("regret", "marginal"):
        raise ValueError(f"greedy: parameter 'gain' must be 'regret' or 'marginal', got {gain!r}")
    look = bool(look_ahead)
    params: dict[str, Any] = {"gain": gain, "look_ahead": look}
    end = _deadline(t0, time_limit)
    # stop placing pairs at 3/4 of the limit: the rest goes to costing the schedule
    place_by = None if time_limit is None else t0 + 0.75 * float(time_limit)
    sol = _search_slices(problem,
                         lambda S, grow: _greedy_fixed(problem, S, grow, gain, look, place_by),
                         t0, time_limit)
    return _result("greedy", problem, sol, t0, seed, params, end)


def _balance(problem: GroupingProblem, size: np.ndarray, S: int, grow: bool,
             deadline: float | None = None) -> list[list[str]] | None:
    """Jobs by decreasing ``size``, each to the slice with the smallest total size among
    those with enough free processors (a new slice when none has and ``grow``); None
    when none has and not ``grow``, or once ``deadline`` (``time.perf_counter``) passed."""
    names = problem.names
    Q = problem.demand
    P = problem.processors
    slices: list[list[str]] = [[] for _ in range(S)]
    used = [0] * S
    total = [0.0] * S
    for n, j in enumerate(sorted(range(len(names)), key=lambda i: (-size[i], i))):
        if deadline is not None and n % 64 == 0 and time.perf_counter() >= deadline:
            return None
        room = [s for s in range(len(slices)) if used[s] + Q[j] <= P]
        if not room:
            if not grow:
                return None
            slices.append([])
            used.append(0)
            total.append(0.0)
            room = [len(slices) - 1]
        s = min(room, key=lambda r: (total[r], r))
        slices[s].append(names[j])
        used[s] += int(Q[j])
        total[s] += float(size[j])
    return slices


def footprint_balancing(problem: GroupingProblem, *, time_limit: float | None = None,
                        seed: int = 0) -> Result:
    """Footprint balancing (section 2). See the module docstring; ``time_limit`` in
    seconds, ``seed`` recorded only."""
    t0 = time.perf_counter()
    params: dict[str, Any] = {}
    size = np.array([j.curve.saturation for j in problem.jobs], dtype=float)
    end = _deadline(t0, time_limit)
    sol = _search_slices(problem, lambda S, grow: _balance(problem, size, S, grow, end), t0,
                         time_limit)
    return _result("footprint", problem, sol, t0, seed, params, end)


def curve_knee(curve: MissRateCurve) -> int:
    """Knee of a miss-rate curve in blocks: the grid point farthest below the chord from
    ``(0, m(0))`` to ``(X, m(X))`` (both axes scaled to [0, 1]); 0 for a flat curve."""
    m = curve.array
    X = m.size - 1
    if X == 0 or m[0] == m[-1]:
        return 0
    x = np.arange(X + 1) / X
    y = (m - m[-1]) / (m[0] - m[-1])
    below = (1 - x) - y  # chord from (0, 1) to (1, 0) minus the curve
    return int(np.argmax(below))


def knee(problem: GroupingProblem, *, time_limit: float | None = None,
         seed: int = 0) -> Result:
    """Miss-rate-curve knee approach (section 4.1.2). See the module docstring;
    ``time_limit`` in seconds, ``seed`` recorded only."""
    t0 = time.perf_counter()
    params: dict[str, Any] = {}
    size = np.array([curve_knee(j.curve) for j in problem.jobs], dtype=float)
    end = _deadline(t0, time_limit)
    sol = _search_slices(problem, lambda S, grow: _balance(problem, size, S, grow, end), t0,
                         time_limit)
    return _result("knee", problem, sol, t0, seed, params, end)
