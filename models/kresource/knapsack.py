"""Exact pricing for minimum epochs at any K: the 0/1 multidimensional knapsack
``max sum_j w_j x_j`` s.t. ``sum_j r_jk x_j <= C_k`` (every resource k) by depth-first
branch and bound, in integers throughout.

The jobs of positive weight are searched in decreasing order of weight per unit of
*surrogate* size ``a_j = sum_k u_k r_jk`` with ``u_k = max(1, floor(2^20 / C_k))`` (any
non-negative multipliers give a valid surrogate constraint ``sum_j a_j x_j <= sum_k u_k
C_k``; these make every resource count by its share of the capacity). A node (the jobs
chosen so far, the next position t, the free capacities ``f_k``) is bounded by the
smaller of

- Dantzig's bound of the surrogate knapsack over the jobs from t (the jobs in that
  order while their surrogate sizes fit, then the fraction of the next one, rounded
  down: the weight of a pattern is an integer), and
- a cardinality bound: no more than ``c = min_k c_k`` further jobs fit, ``c_k`` the
  number of the smallest demands of resource k (over every job) whose sum fits in
  ``f_k``, so at most the ``c`` largest weights among the jobs from t are added.

Both bounds only fall as t grows (fewer jobs, the same capacities), so the first
position whose bound cannot beat the incumbent ends the node. Identical jobs (the same
demand vector and weight, adjacent in the order) are taken as a count: a job is only
taken when the identical one just before it is taken, or was never a choice (every
pattern has an equivalent of that form).

:func:`knapsack_pattern` is the readable reference. The search is sequential and
deterministic, so its answer, the patterns it collects and the nodes it visits depend only
on its inputs.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Sequence

from models.kresource.pricing import Pricing, fits
from sim.problems.kresource import EpochProblem

__all__ = ["knapsack_pattern", "compiled_available", "compiled_ready", "compile_kernel",
           "Order", "order", "SURROGATE", "NODES",
           "MAX_DEPTH", "CARD", "FOUND"]

SURROGATE = 2**20
"""``u_k = max(1, floor(SURROGATE / C_k))``: the surrogate multipliers (module docstring)."""
NODES = 200_000
"""Default most nodes of one search; past it the search stops unproved."""
MAX_DEPTH = 400
"""Most jobs a pattern can hold (``min_k`` of the smallest demands that fit ``C_k``) for
the search to run: deeper patterns are refused (None), as the recursion would be."""
CARD = 64
"""Most further jobs the cardinality bound counts; where more could fit, it is not used."""
FOUND = 64
"""Most improving patterns kept in ``Pricing.found`` (the last ones, the best among
them)."""


class Order:
    """The search data of one (problem, weights): the jobs of positive weight in search
    order with their weights ``w``, demands ``d``, surrogate sizes ``a``, the surrogate
    capacity ``A``, ``same[t]`` (job t identical to job t - 1), ``top[t][c]`` (the sum of
    the ``c`` largest weights from t, ``c`` up to the deepest pattern) and ``small[k]``
    (prefix sums of the sorted demands of resource k over every searched job)."""

    def __init__(self, problem: EpochProblem, weights: Sequence[int]) -> None:
        cap, K = problem.capacity, problem.K
        u = [max(1, SURROGATE // c) if c > 0 else 1 for c in cap]
        jobs = [j for j in range(problem.n) if weights[j] > 0
                and all(problem.demands[j][k] <= cap[k] for k in range(K))]
        size = {j: sum(u[k] * problem.demands[j][k] for k in range(K)) for j in jobs}

        def before(i: int, j: int) -> int:  # w_i / a_i > w_j / a_j, in integers
            left, right = weights[i] * size[j], weights[j] * size[i]
            if left != right:
                return -1 if left > right else 1
            key_i, key_j = (problem.demands[i], -weights[i], i), (problem.demands[j],
                                                                  -weights[j], j)
            return -1 if key_i < key_j else 1

        jobs.sort(key=functools.cmp_to_key(before))
        self.jobs, self.K, self.cap = jobs, K, list(cap)
        self.w = [weights[j] for j in jobs]
        self.d = [tuple(problem.demands[j]) for j in jobs]
        self.a = [size[j] for j in jobs]
        self.A = sum(u[k] * cap[k] for k in range(K))
        m = len(jobs)
        self.same = [t > 0 and self.d[t] == self.d[t - 1] and self.w[t] == self.w[t - 1]
                     for t in range(m)]
        self.small = [[0, *_accumulate(sorted(x[k] for x in self.d))] for k in range(K)]
        self.depth = min((bisect.bisect_right(self.small[k], cap[k]) - 1 for k in range(K)),
                         default=0)
        self.top = _suffix_tops(self.w, min(self.depth, CARD))

    def bound(self, t: int, free: Sequence[int], afree: int) -> int:
        """The most weight the jobs from position t can add within ``free`` (module
        docstring)."""
        c = min(bisect.bisect_right(self.small[k], free[k]) - 1 for k in range(self.K))
        top = self.top[t]
        card = top[c] if c < len(top) else None
        dantzig = 0
        for s in range(t, len(self.w)):
            if self.a[s] <= afree:
                afree -= self.a[s]
                dantzig += self.w[s]
                if card is not None and dantzig >= card:
                    return card
            else:
                dantzig += self.w[s] * afree // self.a[s]
                break
        return dantzig if card is None else min(card, dantzig)


def order(problem: EpochProblem, weights: Sequence[int]) -> Order:
    """The search data of :class:`Order` (validates the weights)."""
    if any(isinstance(w, bool) or not isinstance(w, int) or w < 0 for w in weights):
        raise ValueError("knapsack_pattern: weights must be non-negative integers")
    if len(weights) != problem.n:
        raise ValueError(f"knapsack_pattern: {len(weights)} weights for {problem.n} jobs")
    return Order(problem, weights)


def _accumulate(xs: Sequence[int]) -> list[int]:
    out, s = [], 0
    for x in xs:
        s += x
        out.append(s)
    return out


def _suffix_tops(w: Sequence[int], depth: int) -> list[list[int]]:
    """``top[t][c]``: the sum of the ``c`` largest of ``w[t:]`` (all of them where
    fewer), ``c <= depth``."""
    tops: list[list[int]] = [[0] * (depth + 1)] * (len(w) + 1)
    best: list[int] = []  # the largest of w[t:], ascending, at most depth of them
    for t in range(len(w) - 1, -1, -1):
        bisect.insort(best, w[t])
        if len(best) > depth:
            best.pop(0)
        sums = [0, *_accumulate(reversed(best))]
        tops[t] = sums + [sums[-1]] * (depth + 1 - len(sums))
    return tops


def knapsack_pattern(problem: EpochProblem, weights: Sequence[int], *, at_least: int = 1,
                     above: int | None = None, nodes: int = NODES, enough: int | None = None,
                     compiled: bool = False) -> Pricing | None:
    """The pattern of largest integer weight among those of weight at least
    ``at_least``, by branch and bound (module docstring); None when the patterns can be
    deeper than :data:`MAX_DEPTH` jobs, or (``compiled``) when numba is not installed
    or a sum could overflow 62 bits.

    Parameters
    ----------
    weights : sequence of int
        ``w_j >= 0`` per job; jobs of weight 0 are left out.
    at_least : int
        Only patterns of weight at least this are sought (a decision, easier to prove
        than the maximum): when there is none, ``upper`` is ``at_least - 1``, proved.
    above : int or None
        Each improving pattern of weight above ``above`` met during the search is kept
        in ``Pricing.found`` (ascending weight, the best last; the last :data:`FOUND`).
    nodes : int
        Most nodes visited; past it the search stops, unproved, with ``upper`` the
        root's bound.
    enough : int or None
        Stop (unproved, as above) once this many patterns above ``above`` are kept.
    compiled : bool
        Run the search by :mod:`models.kresource.knapsack_kernel` (numba; the same
        answer, patterns and nodes as this module's search).

    Returns
    -------
    Pricing
        Proved: ``upper`` the maximum (``value``) or ``at_least - 1``; unproved: an
        upper bound on every pattern's weight.
    """
    data = order(problem, weights)
    if data.depth > MAX_DEPTH:
        return None
    lower = max(at_least, 1) - 1
    root = data.bound(0, data.cap, data.A)
    positions: tuple[int, ...] = ()
    kept: list[tuple[int, ...]] = []
    stopped = False
    best = lower
    if root > lower:
        if compiled:
            run = _compiled(data, lower, above, nodes, enough)
            if run is None:
                return None
            best, positions, kept, stopped = run
        else:
            search = _Search(data, lower, above, nodes, enough)
            search.node(0, 0, list(data.cap), data.A, ())
            best, positions, kept, stopped = (search.best, search.pattern,
                                              search.found[-FOUND:], search.stopped)
    pattern = tuple(sorted(data.jobs[t] for t in positions))
    value = sum(weights[j] for j in pattern)
    if pattern and not fits(problem, pattern) or pattern and not stopped and value != best:
        raise RuntimeError("knapsack_pattern: a pattern over a capacity or off its weight")
    found = tuple(tuple(sorted(data.jobs[t] for t in p)) for p in kept)
    if stopped:
        return Pricing(max(root, value), pattern, value, False, found)
    return Pricing(best, pattern, value, True, found)


LIMIT = 2**62
"""Largest sum or product the compiled search may form (int64 with room)."""


def compiled_available() -> bool:
    """Whether numba is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def compiled_ready() -> bool:
    """Whether the compiled search can run without compiling: numba is installed and
    the kernel is in numba's on-disk cache for this source and machine (importing numba
    and loading the kernel then takes about half a second, once per process). A solver
    under a time limit uses the kernel only then; :func:`compile_kernel` fills the
    cache."""
    from sim.batch.fast.cache import kernels_cached

    return kernels_cached((("models.kresource.knapsack_kernel", "search"),))


def compile_kernel() -> bool:
    """Compile the kernel (a few seconds the first time; a small search) and cache it;
    whether it is ready (:func:`compiled_ready`)."""
    if not compiled_available():
        return False
    problem = EpochProblem((5, 5), ((1, 2), (2, 1), (3, 3)))
    knapsack_pattern(problem, [3, 4, 5], above=0, compiled=True)
    return compiled_ready()


def _compiled(data: Order, lower: int, above: int | None, nodes: int, enough: int | None
              ) -> tuple[int, tuple[int, ...], list[tuple[int, ...]], bool] | None:
    """The search of :func:`knapsack_pattern` by the compiled kernel: best weight,
    pattern positions, kept patterns, stopped; None without numba or where int64
    could overflow."""
    import numpy as np

    top_w = max(data.w, default=0)
    if not compiled_available() or sum(data.w) + top_w * data.A >= LIMIT \
            or data.A >= LIMIT or lower >= LIMIT or nodes >= LIMIT:
        return None
    from models.kresource import knapsack_kernel

    m, K = len(data.w), data.K
    above_v = LIMIT if above is None else min(max(above, -1), LIMIT)
    pattern = np.zeros(max(data.depth, 1) + 1, dtype=np.int64)
    found = np.zeros((FOUND, max(data.depth, 1) + 1), dtype=np.int64)
    found_len = np.zeros(FOUND, dtype=np.int64)
    best, length, _, stopped, kept = knapsack_kernel.search(
        np.asarray(data.w, dtype=np.int64), np.asarray(data.d, dtype=np.int64).reshape(m, K),
        np.asarray(data.a, dtype=np.int64), np.int64(data.A),
        np.asarray(data.cap, dtype=np.int64), np.asarray(data.same, dtype=np.bool_),
        np.asarray(data.small, dtype=np.int64), np.asarray(data.top, dtype=np.int64),
        np.int64(lower), np.int64(above_v), np.int64(nodes),
        np.int64(LIMIT if enough is None else max(enough, 1)), pattern, found, found_len)
    rows = [(kept - min(kept, FOUND) + i) % FOUND for i in range(min(kept, FOUND))]
    found_pos = [tuple(int(x) for x in found[r, :found_len[r]]) for r in rows]
    return int(best), tuple(int(x) for x in pattern[:length]), found_pos, bool(stopped)


class _Search:
    """The depth-first search of :func:`knapsack_pattern` over an :class:`Order`."""

    def __init__(self, data: Order, lower: int, above: int | None, nodes: int,
                 enough: int | None) -> None:
        self.data, self.best, self.above, self.nodes = data, lower, above, nodes
        self.enough = enough
        self.pattern: tuple[int, ...] = ()
        self.found: list[tuple[int, ...]] = []
        self.visited, self.stopped = 0, False

    def node(self, i: int, cw: int, free: list[int], afree: int,
             chosen: tuple[int, ...]) -> None:
        data = self.data
        self.visited += 1
        if self.visited > self.nodes:
            self.stopped = True
            return
        if cw > self.best:
            self.best, self.pattern = cw, chosen
            if self.above is not None and cw > self.above:
                self.found.append(chosen)
                if self.enough is not None and len(self.found) >= max(self.enough, 1):
                    self.stopped = True
                    return
        for t in range(i, len(data.w)):
            if cw + data.bound(t, free, afree) <= self.best:
                return
            if data.same[t] and t > i:
                continue  # the identical job t - 1 is left out here: so is t
            dt = data.d[t]
            if all(dt[k] <= free[k] for k in range(data.K)):
                self.node(t + 1, cw + data.w[t], [free[k] - dt[k] for k in range(data.K)],
                          afree - data.a[t], chosen + (t,))
                if self.stopped:
                    return
