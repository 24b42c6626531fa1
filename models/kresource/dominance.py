"""Dominance between jobs of minimum epochs, for the dual-optimal inequalities of the
set-cover LP (Ben Amor, Desrosiers & Valerio de Carvalho 2006; for vector packing
Hessler, Gschwind & Irnich 2018).

Job ``i`` *dominates* job ``j`` when ``r_ik >= r_jk`` for every resource k: any pattern
holding ``i`` stays feasible with ``j`` in its place, so the set-cover LP has an optimal
dual solution with ``y_i >= y_j``. Only the covering relations (the transitive
reduction of strict dominance between distinct demand vectors) are returned, with a
cycle through every group of identical jobs (their duals equal); the rest follow.
"""

from __future__ import annotations

from models.deadline import Deadline
from sim.problems.kresource import EpochProblem

__all__ = ["dominance_pairs", "MAX_JOBS", "MAX_PER_JOB"]

MAX_JOBS = 1000
"""Most jobs for which the relation is computed (quadratic time and memory)."""
MAX_PER_JOB = 20
"""Most pairs per job; a denser relation is not returned (too many LP columns)."""


def dominance_pairs(problem: EpochProblem, deadline: Deadline | None = None
                    ) -> list[tuple[int, int]]:
    """Pairs ``(big, small)`` of job indices with ``big`` dominating ``small`` (module
    docstring). Empty above :data:`MAX_JOBS` jobs, above
    :data:`MAX_PER_JOB` pairs per job, or when ``deadline`` expires part way. Demands
    are compared as 64-bit integers (the family bounds them by 10^12), never rounded."""
    import numpy as np

    if not 2 <= problem.n <= MAX_JOBS:
        return []
    d = np.asarray(problem.demands, dtype=np.int64)
    uniq, inverse = np.unique(d, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    u = len(uniq)
    strict = np.zeros((u, u), dtype=bool)
    for a in range(u):
        if a % 64 == 0 and deadline is not None and deadline.expired():
            return []
        strict[a] = (uniq[a] >= uniq).all(axis=1)
        strict[a, a] = False  # rows are distinct: >= everywhere means strictly larger
    s = strict.astype(np.float32)  # counts of paths of length 2, exact below 2^24
    cover = strict & ~((s @ s) > 0)
    groups: list[list[int]] = [[] for _ in range(u)]
    for j, g in enumerate(inverse.tolist()):
        groups[g].append(j)
    pairs = [(groups[a][0], groups[b][0]) for a, b in zip(*np.nonzero(cover), strict=True)]
    for g in groups:
        if len(g) > 1:
            pairs += [(g[i], g[(i + 1) % len(g)]) for i in range(len(g))]
    if len(pairs) > MAX_PER_JOB * problem.n:
        return []
    return [(int(a), int(b)) for a, b in pairs]
