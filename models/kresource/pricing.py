"""Pricing for the Gilmore-Gomory set-cover LP of minimum epochs (vector bin packing).

A *pattern* is a set of jobs that fits one epoch: ``sum_{j in p} r_jk <= C_k`` for every
resource k. Pricing asks for the pattern of largest dual value ``sum_{j in p} y_j`` (a
K-dimensional 0/1 knapsack).

- :func:`greedy_patterns`: heuristic patterns (jobs in decreasing order of dual value per
  unit of normalised size, several size measures; every pattern completed with the jobs
  that still fit), float duals; used while they find an improving pattern.
- :func:`patterns_above`: every maximal pattern of integer weight at least a threshold,
  by a depth-first search (the columns of small reduced cost for the integer master).
- :func:`best_pattern`: the exact maximum for non-negative *integer* weights ``w_j``, by
  CP-SAT (one worker, integer arithmetic throughout). Its answer ``z`` is an upper bound
  on every pattern's weight: the optimum when proved, else CP-SAT's own bound. Farley's
  bound ``ceil(sum_j w_j / z)`` (:mod:`models.kresource.colgen`) rests on it.

All sizes are the problem's integers; nothing here rounds a demand or a capacity.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from models.deadline import Deadline
from models.interrupt import run_cpsat
from sim.problems.kresource import EpochProblem

__all__ = ["Pricing", "greedy_patterns", "swap_improve", "dp_pattern", "best_pattern", "fits",
           "complete", "job_sizes", "patterns_above"]

DP_STATES = 40_401
"""Most capacity states (``prod_k (C_k + 1)``, K <= 2) for :func:`dp_pattern` (201 x 201)."""
DP_WORK = 2 * 10**7
"""Most jobs x states for :func:`dp_pattern` (about 0.1 s of NumPy)."""

PRESOLVE = False
"""CP-SAT's presolve in :func:`best_pattern` (a knapsack of a few hundred 0/1 variables:
presolving it cost about as much as solving it)."""
LINEARIZATION = 2
"""CP-SAT's ``linearization_level`` in :func:`best_pattern` (2: the LP relaxation with
cuts at every node, which bounds a knapsack's weight early)."""


@dataclass(frozen=True)
class Pricing:
    """One exact pricing answer.

    Parameters
    ----------
    upper : int
        An upper bound on ``max_p sum_{j in p} w_j`` over every feasible pattern (the
        maximum itself when ``proved``).
    pattern : tuple of int
        The best pattern found (job indices, ascending; empty when none was found).
    value : int
        Its weight ``sum_{j in pattern} w_j``.
    proved : bool
        ``upper == value`` was proved by the solver.
    found : tuple of tuple of int
        The patterns of weight above the caller's threshold seen during the search.
    """

    upper: int
    pattern: tuple[int, ...]
    value: int
    proved: bool
    found: tuple[tuple[int, ...], ...] = ()


def fits(problem: EpochProblem, pattern: Sequence[int]) -> bool:
    """Whether the jobs of ``pattern`` fit one epoch (integer sums)."""
    return all(sum(problem.demands[j][k] for j in pattern) <= c
               for k, c in enumerate(problem.capacity))


def complete(problem: EpochProblem, pattern: Sequence[int], order: Sequence[int]
             ) -> tuple[int, ...]:
    """``pattern`` with every job of ``order`` added (in that order) that still fits."""
    dem, K = problem.demands, problem.K
    free = [c - sum(dem[j][k] for j in pattern) for k, c in enumerate(problem.capacity)]
    out = set(pattern)
    for j in order:
        if j in out:
            continue
        d = dem[j]
        if all(d[k] <= free[k] for k in range(K)):
            for k in range(K):
                free[k] -= d[k]
            out.add(j)
    return tuple(sorted(out))


def job_sizes(problem: EpochProblem) -> tuple[list[float], list[float]]:
    """Per job: the sum and the largest of its normalised demands ``r_jk / C_k``."""
    cap = problem.capacity
    norm = [[d[k] / cap[k] for k in range(problem.K)] for d in problem.demands]
    return [max(sum(v), 1e-12) for v in norm], [max(max(v), 1e-12) for v in norm]


def greedy_patterns(problem: EpochProblem, duals: Sequence[float], *,
                    sizes: tuple[list[float], list[float]] | None = None,
                    rounds: int = 1) -> list[tuple[int, ...]]:
    """Distinct heuristic patterns for the dual values ``duals`` (one per job, >= 0),
    best first by dual value; each one maximal (no further job fits).

    Orders tried: dual per unit of the summed normalised size, per unit of the largest
    normalised size, and the dual alone; each filled greedily, then completed by the
    order of decreasing size (jobs of zero dual complete the epoch for free). With
    ``rounds`` r > 1, up to r - 1 more rounds fill the same orders without the jobs of
    every earlier round's best pattern (columns over other jobs, which move the LP
    together), while a round's best pattern is worth more than 1."""
    sum_size, max_size = sizes if sizes is not None else job_sizes(problem)
    n = problem.n
    pos = [j for j in range(n) if duals[j] > 0]
    by_size = sorted(range(n), key=lambda j: -sum_size[j])
    keys = (lambda j: duals[j] / sum_size[j], lambda j: duals[j] / max_size[j],
            lambda j: duals[j])
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[float, tuple[int, ...]]] = []
    taken: set[int] = set()
    for _ in range(rounds):
        top: tuple[float, tuple[int, ...]] = (0.0, ())
        free = [j for j in pos if j not in taken]
        for key in keys:
            order = sorted(free, key=lambda j: -key(j))
            p = complete(problem, complete(problem, (), order), by_size)
            v = sum(duals[j] for j in p)
            top = max(top, (v, p))
            if p not in seen:
                seen.add(p)
                out.append((v, p))
        if top[0] <= 1:
            break
        taken.update(top[1])
    out.sort(key=lambda t: -t[0])
    return [p for _, p in out]


def swap_improve(problem: EpochProblem, pattern: Sequence[int], duals: Sequence[float],
                 order: Sequence[int], max_passes: int = 20) -> tuple[int, ...]:
    """``pattern`` improved by exchanges: while some job of it can give its place to a
    job outside of larger dual value (the pattern still fits), the exchange of largest
    gain is made and the pattern completed by ``order`` (:func:`complete`); at most
    ``max_passes`` exchanges. Every fit is checked in integers."""
    dem, cap, K = problem.demands, problem.capacity, problem.K
    cur = tuple(pattern)
    for _ in range(max_passes):
        inside = set(cur)
        free = [cap[k] - sum(dem[j][k] for j in cur) for k in range(K)]
        best, move = 0.0, None
        for j in cur:
            room = [free[k] + dem[j][k] for k in range(K)]
            for i in range(problem.n):
                gain = duals[i] - duals[j]
                if gain > best and i not in inside \
                        and all(dem[i][k] <= room[k] for k in range(K)):
                    best, move = gain, (j, i)
        if move is None:
            return cur
        cur = complete(problem, tuple(sorted(inside - {move[0]} | {move[1]})), order)
    return cur


def _grid(problem: EpochProblem, weights: Sequence[int]) -> list[int] | None:
    """The two capacities of the capacity-grid dynamic programs (a missing second one 0),
    or None where they do not apply: K > 2, more than :data:`DP_STATES` states, or
    weights that could overflow 63 bits."""
    cap = list(problem.capacity) + [0] * (2 - problem.K)
    if problem.K > 2 or (cap[0] + 1) * (cap[1] + 1) > DP_STATES or sum(weights) >= 2**62:
        return None
    return cap


def dp_pattern(problem: EpochProblem, weights: Sequence[int], *, above: int | None = None
               ) -> Pricing | None:
    """The pattern of largest integer weight by dynamic programming over the capacity
    grid, for K <= 2 and at most :data:`DP_STATES` capacity states (``prod_k (C_k + 1)``);
    None elsewhere (or when the weights could overflow 63 bits). The answer is proved:
    ``upper == value``, in integer arithmetic (NumPy int64). ``found`` holds the pattern
    when its weight is above ``above``."""
    import numpy as np

    if any(isinstance(w, bool) or not isinstance(w, int) or w < 0 for w in weights):
        raise ValueError("dp_pattern: weights must be non-negative integers")
    cap = _grid(problem, weights)
    if cap is None:
        return None
    jobs = [j for j in range(problem.n) if weights[j] > 0]
    if len(jobs) * (cap[0] + 1) * (cap[1] + 1) > DP_WORK:
        return None
    dem = [list(problem.demands[j]) + [0] * (2 - problem.K) for j in jobs]
    value = np.zeros((cap[0] + 1, cap[1] + 1), dtype=np.int64)
    take = np.zeros((len(jobs), cap[0] + 1, cap[1] + 1), dtype=bool)
    for t, j in enumerate(jobs):
        a, b = dem[t]
        cand = value[:cap[0] + 1 - a, :cap[1] + 1 - b] + weights[j]
        better = cand > value[a:, b:]
        take[t, a:, b:] = better
        value[a:, b:] = np.where(better, cand, value[a:, b:])
    c0, c1 = cap
    pattern = []
    for t in range(len(jobs) - 1, -1, -1):  # back from the full capacity
        if take[t, c0, c1]:
            pattern.append(jobs[t])
            c0, c1 = c0 - dem[t][0], c1 - dem[t][1]
    pattern.sort()
    best = int(value[cap[0], cap[1]])
    if sum(weights[j] for j in pattern) != best or not fits(problem, pattern):
        raise RuntimeError("dp_pattern: the pattern does not match the table")
    found = (tuple(pattern),) if above is not None and best > above else ()
    return Pricing(best, tuple(pattern), best, True, found)


def best_pattern(problem: EpochProblem, weights: Sequence[int], *,
                 time_limit: float | None, seed: int = 0, hint: Sequence[int] = (),
                 above: int | None = None, enough: int | None = None,
                 at_least: int | None = None) -> Pricing:
    """The pattern of largest integer weight (module docstring), by CP-SAT.

    Parameters
    ----------
    weights : sequence of int
        ``w_j >= 0`` per job; jobs of weight 0 are left out of the model.
    time_limit : float or None
        Seconds of wall clock for CP-SAT.
    hint : sequence of int
        A feasible pattern to start from.
    above : int or None
        Patterns of weight above ``above`` found during the search are collected in
        ``Pricing.found`` (the columns that price out).
    enough : int or None
        Stop the search once this many of them are found (the answer is then not
        proved: ``upper`` is CP-SAT's bound at the stop).
    at_least : int or None
        Search only the patterns of weight at least ``at_least`` (a decision: when
        there is none, ``upper`` is ``at_least - 1``, proved; it is much easier to
        prove than the maximum).

    Returns
    -------
    Pricing
        ``upper`` is a proved upper bound on every pattern's weight, valid also when
        CP-SAT stops early (its bound, rounded up); with no answer at all, the trivial
        ``sum_j w_j``.
    """
    from ortools.sat.python import cp_model

    if any(isinstance(w, bool) or not isinstance(w, int) or w < 0 for w in weights):
        raise ValueError("best_pattern: weights must be non-negative integers")
    jobs = [j for j in range(problem.n) if weights[j] > 0]
    total = sum(weights[j] for j in jobs)
    floor = 0 if at_least is None else max(0, at_least - 1)
    if not jobs or floor >= total:
        return Pricing(min(total, floor), (), 0, True)
    if time_limit is not None and time_limit <= 0:
        return Pricing(total, (), 0, False)
    m = cp_model.CpModel()
    x = {j: m.new_bool_var(f"x{j}") for j in jobs}
    for k, c in enumerate(problem.capacity):
        terms = [(problem.demands[j][k], x[j]) for j in jobs if problem.demands[j][k]]
        if sum(a for a, _ in terms) > c:
            m.add(sum(a * v for a, v in terms) <= c)
    value_expr = sum(weights[j] * x[j] for j in jobs)
    if at_least is not None:
        m.add(value_expr >= at_least)
    m.maximize(value_expr)
    for j in hint:
        if j in x:
            m.add_hint(x[j], 1)
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = int(seed)
    s.parameters.cp_model_presolve = PRESOLVE
    s.parameters.linearization_level = LINEARIZATION
    if time_limit is not None:
        s.parameters.max_time_in_seconds = float(time_limit)
    cb = _Collector(x, weights, above, enough)
    st = run_cpsat(s, m, cb)
    found = tuple(p for p in cb.found if fits(problem, p))
    if len(found) < len(cb.found):  # a solver bug: never trusted
        raise RuntimeError("CP-SAT pricing returned a pattern over a capacity")
    if st == cp_model.INFEASIBLE:
        return Pricing(floor, (), 0, True, found)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Pricing(total, (), 0, False, found)
    pattern = tuple(j for j in jobs if s.value(x[j]))
    value = sum(weights[j] for j in pattern)
    if not fits(problem, pattern):
        raise RuntimeError("CP-SAT pricing returned a pattern over a capacity")
    if st == cp_model.OPTIMAL:
        return Pricing(value, pattern, value, True, found)
    upper = max(floor, value, min(total, math.ceil(s.best_objective_bound)))
    return Pricing(upper, pattern, value, upper <= value, found)


def patterns_above(problem: EpochProblem, weights: Sequence[int], at_least: int, *,
                   deadline: Deadline | None = None, most: int = 5000
                   ) -> tuple[list[tuple[int, ...]], bool]:
    """The maximal patterns of integer weight ``sum_{j in p} w_j >= at_least`` over the
    jobs of positive weight (jobs of weight 0 are left out; maximal: no further job of
    positive weight fits), at most ``most`` of them, until ``deadline``.

    Depth-first search over the jobs in decreasing order of weight, pruned by a
    cardinality bound: with free capacities ``f_k``, at most ``c = min_k c_k(f_k)``
    more jobs fit, ``c_k`` counting the smallest demands of resource k that fit in
    ``f_k``, so the weight still reachable from position t is at most the next ``c``
    weights. Where the dynamic program applies (K <= 2, :data:`DP_STATES` and
    :data:`DP_WORK` as in :func:`dp_pattern`), the exact bound replaces it: the largest
    weight the jobs from position t can add within the free capacities, a table per
    position (:func:`_reach_table`), so no branch is opened that cannot reach the
    threshold. Every non-maximal pattern of the threshold lies in a maximal one found.
    All sums are the problem's integers. (CP-SAT's enumeration of the same patterns was
    30-100 times slower: ct10 60 K=2, 152 patterns in 1.6 s against 0.05 s.)

    Returns the patterns (job indices, ascending) and whether the enumeration is
    complete (every such maximal pattern returned; never with a pattern of more than
    :data:`ENUM_DEPTH` jobs)."""
    if any(isinstance(w, bool) or not isinstance(w, int) or w < 0 for w in weights):
        raise ValueError("patterns_above: weights must be non-negative integers")
    if at_least < 1:
        raise ValueError(f"patterns_above: at_least must be positive, got {at_least}")
    jobs = sorted((j for j in range(problem.n) if weights[j] > 0), key=lambda j: -weights[j])
    w, d = [weights[j] for j in jobs], [problem.demands[j] for j in jobs]
    search = _Enumeration(problem, w, d, at_least, deadline, most,
                          reach=_reach_table(problem, w, d))
    search.run()
    return [tuple(sorted(jobs[t] for t in p)) for p in search.found], not search.stopped


def _reach_table(problem: EpochProblem, w: list[int], d: list[Sequence[int]]) -> Any:
    """``table[t, a, b]``: the largest weight of jobs ``t..m-1`` (weights ``w``, demands
    ``d``) fitting capacities ``(a, b)``, K <= 2 (NumPy int32, or int64 when the weights
    sum to ``2^31`` or more); None above :data:`DP_STATES` states, :data:`REACH_CELLS`
    cells, or weights that could overflow 63 bits."""
    import numpy as np

    cap = _grid(problem, w)
    if cap is None or (len(w) + 1) * (cap[0] + 1) * (cap[1] + 1) > REACH_CELLS:
        return None
    kind = np.int32 if sum(w) < 2**31 else np.int64
    table = np.zeros((len(w) + 1, cap[0] + 1, cap[1] + 1), dtype=kind)
    for t in range(len(w) - 1, -1, -1):
        a, b = (list(d[t]) + [0] * (2 - problem.K))[:2]
        table[t] = table[t + 1]
        if a <= cap[0] and b <= cap[1]:
            cand = table[t + 1, :cap[0] + 1 - a, :cap[1] + 1 - b] + w[t]
            np.maximum(table[t, a:, b:], cand, out=table[t, a:, b:])
    return table


ENUM_CLOCK = 2048
"""Steps (jobs tried) of :func:`patterns_above`'s search between two looks at the
clock."""
ENUM_DEPTH = 400
"""Most jobs in a pattern :func:`patterns_above` follows (its recursion depth); a deeper
one stops the search, incomplete."""
REACH_CELLS = 6 * 10**6
"""Most cells of :func:`_reach_table` (24 MB as int32: ct7 250 jobs, K = 2, 151 x 151
states)."""


class _Enumeration:
    """The depth-first search of :func:`patterns_above` over jobs ``0..m-1`` (sorted
    by decreasing weight ``w``, demands ``d``)."""

    def __init__(self, problem: EpochProblem, w: list[int], d: list[Sequence[int]],
                 at_least: int, deadline: Deadline | None, most: int, reach: Any = None
                 ) -> None:
        self.cap, self.K, self.w, self.d = list(problem.capacity), problem.K, w, d
        self.at_least, self.deadline, self.most = at_least, deadline, most
        self.prefix = [0, *accumulate(w)]
        self.smallest = [list(accumulate(sorted(x[k] for x in d))) for k in range(self.K)]
        self.found: list[tuple[int, ...]] = []
        self.steps, self.stopped = 0, False
        self.reach = reach  # the exact bound of :func:`_reach_table`, where it applies

    def run(self) -> None:
        if self.prefix[-1] >= self.at_least:
            self._node(0, 0, self.cap, ())

    def _fits(self, t: int, free: Sequence[int]) -> bool:
        dt = self.d[t]
        return all(dt[k] <= free[k] for k in range(self.K))

    def _step(self) -> bool:
        """Count a step of the search; whether it is to stop (``most`` patterns found,
        or the deadline passed, looked at every :data:`ENUM_CLOCK` steps)."""
        self.steps += 1
        if self.steps % ENUM_CLOCK == 0 and self.deadline is not None \
                and self.deadline.expired():
            self.stopped = True
        return self.stopped

    def _node(self, i: int, cw: int, free: list[int], chosen: tuple[int, ...]) -> None:
        if len(chosen) >= ENUM_DEPTH:
            self.stopped = True  # recursion this deep: the enumeration is left incomplete
        if self._step():
            return
        m = len(self.w)
        if cw >= self.at_least:
            inside = set(chosen)
            if not any(t not in inside and self._fits(t, free) for t in range(m)):
                self.found.append(chosen)
                if len(self.found) >= self.most:
                    self.stopped = True
            if self.deadline is not None and self.deadline.expired():
                self.stopped = True  # the check above took m steps
            if self.stopped:
                return
        c = min(bisect.bisect_right(self.smallest[k], free[k]) for k in range(self.K))
        for t in range(i, m):
            if self._step() or cw + self.prefix[min(m, t + c)] - self.prefix[t] \
                    < self.at_least:
                return
            if self.reach is not None and cw + int(self.reach[
                    t, free[0], free[1] if self.K == 2 else 0]) < self.at_least:
                return
            if self._fits(t, free):
                dt = self.d[t]
                self._node(t + 1, cw + self.w[t], [free[k] - dt[k] for k in range(self.K)],
                           chosen + (t,))
                if self.stopped:
                    return


def _Collector(x: dict, weights: Sequence[int], above: int | None,  # noqa: N802
               enough: int | None) -> Any:
    """A CP-SAT solution callback collecting the patterns of weight above ``above``; it
    stops the search after ``enough`` of them (the class is made here: importing this
    module imports no solver)."""
    from ortools.sat.python import cp_model

    class Collector(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[tuple[int, ...]] = []

        def on_solution_callback(self) -> None:
            if above is None:
                return
            p = tuple(j for j, v in x.items() if self.boolean_value(v))
            if sum(weights[j] for j in p) > above:
                self.found.append(p)
                if enough is not None and len(self.found) >= enough:
                    self.stop_search()

    return Collector()
