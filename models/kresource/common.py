"""Helpers shared by the K-resource backends (upper bounds and hints from heuristics)."""

from __future__ import annotations

from typing import Any

from sim.problems.kresource import EpochProblem, SelectionProblem


def best_packing(problem: EpochProblem, time_limit: float | None = None,
                 ) -> list[list[int]]:
    """The fewest-epoch packing among the greedy rules (an upper bound and a hint),
    epochs relabelled by their smallest job (so job j sits in an epoch <= j). With a
    ``time_limit`` (seconds) only first fit runs once a tenth of it is spent, and once
    three tenths are spent it packs its remaining jobs FCFS (``pack_epochs``'s ``stop``)."""
    import time

    from heuristics.kresource import pack_epochs

    t0 = time.perf_counter()
    best = None
    stop = None if time_limit is None else (
        lambda: time.perf_counter() - t0 > 0.3 * time_limit)
    for rule, full in (("unc-ff", "mult"), ("unc-bb", "none"), ("unc-bb", "mult"),
                       ("unc-bl", "mult"), ("fcfs-ff", "mult")):
        if best is not None and time_limit is not None \
                and time.perf_counter() - t0 > 0.1 * time_limit:
            break
        sol = pack_epochs(problem, rule, full, stop=stop)
        if best is None or len(sol) < len(best):
            best = sol
    return sorted((sorted(e) for e in best), key=lambda e: e[0])


def epochs_variables(n: int, epochs: int) -> int:
    """Number of ``x[j,e]`` variables of the epochs model over ``n`` jobs and ``epochs``
    epochs (job ``j`` only in epochs ``e <= j``)."""
    full = min(n, epochs)
    return full * (full + 1) // 2 + (n - full) * epochs


def relabel(epochs: list[list[int]]) -> list[list[int]]:
    """Non-empty epochs, each sorted, ordered by their smallest job."""
    return sorted((sorted(e) for e in epochs if e), key=lambda e: e[0])


def selection_bound(problem: SelectionProblem) -> int:
    """An upper bound on the optimum of a backfill selection (its objective ``W (n + 1)
    + count``, :func:`sim.problems.kresource.objective`): the least over the model's
    rows (``sum_j r_jk x_j <= F_k``; ``sum_{j late} r_jk x_j <= E_k``) and their
    surrogates (each kind's rows summed with the weights ``L / C_k``, ``L = lcm(C)``:
    ``sum_j w_j x_j <= sum_k F_k L / C_k``) of the Lagrangian bound of that row alone,
    at the multiplier of its LP relaxation's critical candidate (Dantzig's order).
    Every multiplier gives a valid bound, so the float order only weakens it; the sum
    is in integers (exact), rounded down."""
    import math

    import numpy as np

    n, K = problem.n, problem.K
    if not n:
        return 0
    big = max(max(problem.weights), max(map(max, problem.demands))) * (n + 2) * \
        max(sum(problem.weights), 1) * (n + 2) >= 2**62  # int64 could overflow
    kind = object if big else np.int64
    dem = np.array(problem.demands, dtype=kind).reshape(n, K)
    late = np.array(problem.late, dtype=bool)
    fits = np.all(dem <= np.array(problem.free, dtype=kind), axis=1)  # eligible: fits now,
    fits &= ~late | np.all(dem <= np.array(problem.extra, dtype=kind), axis=1)  # E if late
    dem, late = dem[fits], late[fits]
    w = np.array(problem.weights, dtype=kind)[fits]
    value = w * (n + 1) + 1
    scale = [math.lcm(*problem.capacity) // c for c in problem.capacity]
    rows = [(problem.free[k], dem[:, k], None) for k in range(K)] + \
        [(problem.extra[k], dem[:, k], late) for k in range(K)] + \
        [(sum(f * c for f, c in zip(problem.free, scale, strict=True)), w, None),
         (sum(e * c for e, c in zip(problem.extra, scale, strict=True)), w, late)]
    total = int(value.sum())
    best = total  # every eligible candidate
    for cap, size, only in rows:
        v, sz = (value, size) if only is None else (value[only], size[only])
        best = min(best, total - int(v.sum()) + _knapsack_lp_bound(v, sz, int(cap)))
    return best


def _knapsack_lp_bound(values: Any, sizes: Any, cap: int) -> int:
    """``floor(L)``, ``L = lam cap + sum_i max(0, v_i - lam s_i)`` at ``lam = v_c / s_c``
    of the first item ``c`` in order of ``v / s`` that does not fit whole (0 when all
    fit): an upper bound on ``max sum v_i x_i, sum s_i x_i <= cap, x`` 0/1 (weak
    duality of the LP relaxation), computed in integers (``values``, ``sizes``: NumPy
    arrays of int64, or of Python ints where int64 could overflow)."""
    import numpy as np

    pos = np.nonzero(sizes > 0)[0]
    order = pos[np.argsort(-(values[pos].astype(float) / sizes[pos].astype(float)),
                           kind="stable")]
    over = np.nonzero(np.cumsum(sizes[order]) > cap)[0]
    if not len(over):
        return int(values.sum())
    crit = order[over[0]]
    vc, sc = values[crit], sizes[crit]
    gain = values * sc - sizes * vc
    return int((vc * cap + gain[gain > 0].sum()) // sc)
