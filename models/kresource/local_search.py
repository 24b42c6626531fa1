"""Fewer epochs by local search: a simplified consistent neighbourhood search
(Buljubasic & Vasquez 2016, "Consistent neighborhood search for one-dimensional bin
packing and two-dimensional vector packing", Computers & Operations Research 76).

To pack ``m`` epochs into ``m - 1``, one epoch is emptied and its jobs wait in a pool.
A job leaves the pool into an epoch where it fits, or into the epoch where it fits once
at most two of that epoch's jobs go to the pool instead (those of the least total
*weight*: a job's weight starts at its summed normalised demand and grows each step it
spends in the pool, so jobs that keep coming back are held in place). A job just put
into an epoch is not taken out of it again for :data:`TABU` steps. The pool empty, the
``m - 1`` epochs are a packing and the search aims at one fewer, down to the lower bound.
Every fit is checked on the problem's integer demands; the weights only choose moves.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

from models.deadline import Deadline
from models.kresource.common import relabel
from sim.problems.kresource import EpochProblem

__all__ = ["fewer_epochs", "TABU", "GROWTH", "CLOCK_EVERY", "MAX_STEPS"]

MAX_STEPS = 20_000
"""Most moves of one call (a search without a time limit ends too)."""
TABU = 10
"""Steps during which a job put into an epoch stays there."""
GROWTH = 0.1
"""Weight a job in the pool gains per step, relative to its starting weight."""
CLOCK_EVERY = 64
"""Epochs scanned between two looks at the clock while a move is sought."""


def fewer_epochs(problem: EpochProblem, epochs: Sequence[Sequence[int]], *, lower: int,
                 time_limit: float | None, seed: int = 0, max_steps: int = MAX_STEPS
                 ) -> list[list[int]]:
    """The smallest packing found from ``epochs`` (a packing of ``problem``) within
    ``time_limit`` seconds (or ``max_steps`` moves), stopping at ``lower`` epochs; the
    input packing when no smaller one is found."""
    deadline = Deadline(time_limit)
    rng = random.Random(seed)
    cap, dem, K = problem.capacity, problem.demands, problem.K
    size = [sum(d[k] / cap[k] for k in range(K)) for d in dem]
    best = [list(ep) for ep in epochs]
    steps = 0
    while len(best) > lower and steps < max_steps and not deadline.expired():
        order = sorted(range(len(best)), key=lambda e: sum(size[j] for j in best[e]))
        drop = order[0] if steps == 0 else rng.choice(order[:3])
        bins = [list(ep) for e, ep in enumerate(best) if e != drop]
        pool = list(best[drop])
        found, steps = _empty_pool(bins, pool, cap, dem, size, deadline, rng, steps,
                                   max_steps)
        if not found:
            break
        best = bins
    return relabel(best)


def _empty_pool(bins: list[list[int]], pool: list[int], cap: Sequence[int],
                dem: Sequence[Sequence[int]], size: list[float], deadline: Deadline,
                rng: random.Random, steps: int, max_steps: int) -> tuple[bool, int]:
    """Moves until ``pool`` is empty (True; ``bins`` then hold every job) or the time or
    ``max_steps`` runs out (False); returns the step count too."""
    K = len(cap)
    free = [[cap[k] - sum(dem[j][k] for j in ep) for k in range(K)] for ep in bins]
    weight = list(size)
    tabu: dict[tuple[int, int], int] = {}
    while pool:
        steps += 1
        if steps >= max_steps or deadline.expired():
            return False, steps
        pool.sort(key=lambda j: -weight[j])
        i = pool[0] if rng.random() < 0.8 else rng.choice(pool)
        move = _best_move(i, bins, free, dem, weight, tabu, steps, deadline)
        if move is None:
            for j in pool:
                weight[j] += GROWTH * size[j]
            continue
        e, out = move
        pool.remove(i)
        for j in out:
            bins[e].remove(j)
            pool.append(j)
            for k in range(K):
                free[e][k] += dem[j][k]
        bins[e].append(i)
        for k in range(K):
            free[e][k] -= dem[i][k]
        tabu[i, e] = steps + TABU
        for j in pool:
            weight[j] += GROWTH * size[j]
    return True, steps


def _best_move(i: int, bins: list[list[int]], free: list[list[int]],
               dem: Sequence[Sequence[int]], weight: list[float],
               tabu: dict[tuple[int, int], int], step: int, deadline: Deadline
               ) -> tuple[int, tuple[int, ...]] | None:
    """The epoch and the (at most two) jobs to take out of it for job ``i`` to fit, of
    least total weight (none when ``i`` fits as it is); jobs held by :data:`TABU` stay;
    None when no such move exists or ``deadline`` expires during the scan."""
    d = dem[i]
    K = len(d)
    best: tuple[float, int, tuple[int, ...]] | None = None
    for e, ep in enumerate(bins):
        if e % CLOCK_EVERY == 0 and e and deadline.expired():
            return None
        f = free[e]
        if all(d[k] <= f[k] for k in range(K)):
            return e, ()
        movable = [j for j in ep if tabu.get((j, e), -1) < step]
        for r in (1, 2):
            for out in combinations(movable, r):
                w = sum(weight[j] for j in out)
                if best is not None and w >= best[0]:
                    continue
                if all(d[k] <= f[k] + sum(dem[j][k] for j in out) for k in range(K)):
                    best = (w, e, out)
    return None if best is None else (best[1], best[2])
