"""The published vector-packing benchmark classes, as minimum-epochs problems.

Every instance is a ``kresource_epochs`` problem dictionary (the family's file format:
``{"problem": "kresource_epochs", "capacity": [...], "demands": [...], "name": ...}``),
drawn from :class:`random.Random` ``(seed)``: the same class, size and seed give the same
instance. Integer draws are inclusive and uniform.

Classes (``CLASSES``):

- ``ct1`` .. ``ct10``: Caprara & Toth (2001), "Lower bounds and algorithms for the
  2-dimensional vector packing problem", Discrete Applied Mathematics 111, 231-262, their
  classes 1-10 (classes 1-4 after Spieksma 1994). Demands per resource:

  ====  =================================================  ============
  ct1   [100, 400]                                          capacity 1000
  ct2   [1, 1000]                                           capacity 1000
  ct3   [200, 800]                                          capacity 1000
  ct4   [50, 200]                                           capacity 1000
  ct5   [25, 100]                                           capacity 1000
  ct6   [20, 100]                                           capacity 150
  ct7   pairs of resources (a, b): a in [20, 100],          capacity 150
        b in [a - 10, a + 10] (positively correlated)
  ct8   pairs: a in [20, 100], b in [110 - a, 130 - a]      capacity 150
        (negatively correlated)
  ct9   [100, 400]; capacity of resource k                  per resource
        ``ceil(S_k / L)``, ``S_k`` its total demand,
        ``L = ceil(max_k S_k / 1000)``
  ct10  triplets: per resource, a, b in [25, 50] and        capacity 100
        c = 100 - a - b (three jobs filling an epoch;
        a triplet whose c is all 0 is drawn again;
        the jobs shuffled)
  ====  =================================================  ============

  For K > 2 the classes go to K resources as Panigrahy et al. (2011) and Mommessin et
  al. (2025) do: classes 1-6 and 9 draw every resource alike; classes 7 and 8 draw
  resources in pairs (2k, 2k + 1), an odd last resource uniform in [20, 100]; class 10
  draws the triplet of every resource independently. The reading of class 9 (its
  capacities) follows the generator of Stillwell's ``vpack`` library.
- ``pan``: the class Panigrahy, Talwar, Uyeda & Wieder (2011), "Heuristics for vector bin
  packing" (Microsoft Research) add (class 9 of the "Panigrahy" benchmark of Mommessin et
  al. 2025, "Classification and evaluation of the algorithms for vector bin packing",
  Computers & Operations Research 173): capacity 100; per job, ``2K`` units thrown at
  random among the K resources (counts ``m_k``), a scale ``s`` in [10, 40] and demand
  ``s m_k + u_k``, ``u_k`` in [0, 1]; a job over the capacity is drawn again.

``ct10`` needs a multiple of 3 jobs (its optimum is ``n / 3`` epochs).
"""

from __future__ import annotations

import math
import random
from typing import Any

__all__ = ["CLASSES", "instance", "MIN_JOBS", "MAX_JOBS", "MAX_K"]

CLASSES = tuple(f"ct{i}" for i in range(1, 11)) + ("pan",)
"""The class names (module docstring)."""
MIN_JOBS, MAX_JOBS = 1, 10_000
"""Jobs per instance."""
MAX_K = 20
"""Most resources."""

_UNIFORM = {"ct1": (100, 400, 1000), "ct2": (1, 1000, 1000), "ct3": (200, 800, 1000),
            "ct4": (50, 200, 1000), "ct5": (25, 100, 1000), "ct6": (20, 100, 150)}


def _uniform(rng: random.Random, n: int, K: int, lo: int, hi: int) -> list[list[int]]:
    return [[rng.randint(lo, hi) for _ in range(K)] for _ in range(n)]


def _paired(rng: random.Random, n: int, K: int, negative: bool) -> list[list[int]]:
    out = []
    for _ in range(n):
        row = []
        for _ in range(K // 2):
            a = rng.randint(20, 100)
            b = rng.randint(110 - a, 130 - a) if negative else rng.randint(a - 10, a + 10)
            row += [a, b]
        if K % 2:
            row.append(rng.randint(20, 100))
        out.append(row)
    return out


def _triplets(rng: random.Random, n: int, K: int) -> list[list[int]]:
    out: list[list[int]] = []
    while len(out) < n:
        a = [rng.randint(25, 50) for _ in range(K)]
        b = [rng.randint(25, 50) for _ in range(K)]
        c = [100 - x - y for x, y in zip(a, b, strict=True)]
        if any(c):  # a job needing nothing at all is not a job: the triplet is drawn again
            out += [a, b, c]
    rng.shuffle(out)  # in drawn order, first fit in queue order would find the triplets
    return out


def _panigrahy(rng: random.Random, n: int, K: int) -> list[list[int]]:
    out = []
    while len(out) < n:
        m = [0] * K
        for _ in range(2 * K):
            m[rng.randrange(K)] += 1
        s = rng.randint(10, 40)
        row = [s * x + rng.randint(0, 1) for x in m]
        if max(row) <= 100 and sum(row) > 0:
            out.append(row)
    return out


def instance(cls: str, n: int, K: int, seed: int) -> dict[str, Any]:
    """One instance of class ``cls`` with ``n`` jobs and ``K`` resources, as the
    ``kresource_epochs`` JSON dictionary; a bad argument raises ValueError naming it."""
    if cls not in CLASSES:
        raise ValueError(f"class must be one of {', '.join(CLASSES)}, got {cls!r}")
    for name, v, lo, hi in (("n", n, MIN_JOBS, MAX_JOBS), ("K", K, 1, MAX_K)):
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
    if cls in ("ct7", "ct8") and K < 2:
        raise ValueError(f"K must be at least 2 for class {cls} (correlated pairs), got {K}")
    if cls == "ct10" and n % 3:
        raise ValueError(f"n must be a multiple of 3 for class ct10 (triplets), got {n}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63 - 1], got {seed!r}")
    rng = random.Random(seed)
    if cls in _UNIFORM:
        lo, hi, c = _UNIFORM[cls]
        dem, cap = _uniform(rng, n, K, lo, hi), [c] * K
    elif cls in ("ct7", "ct8"):
        dem, cap = _paired(rng, n, K, cls == "ct8"), [150] * K
    elif cls == "ct9":
        dem = _uniform(rng, n, K, 100, 400)
        tot = [sum(d[k] for d in dem) for k in range(K)]
        L = math.ceil(max(tot) / 1000)
        cap = [max(-(-t // L), max(d[k] for d in dem)) for k, t in enumerate(tot)]
    elif cls == "ct10":
        dem, cap = _triplets(rng, n, K), [100] * K
    else:
        dem, cap = _panigrahy(rng, n, K), [100] * K
    return {"problem": "kresource_epochs", "name": f"vbp {cls} n={n} K={K} seed={seed}",
            "capacity": cap, "demands": dem}
