"""Random instances of every problem family, for gap studies on many instances.

``instance(family, seed, **size)`` returns one problem as its JSON dictionary (the file
format, ``to_dict``); ``write_set(family, count, seed, out)`` writes ``count`` of them with
seeds ``seed .. seed + count - 1``. Each family's size parameters, their defaults and the
distributions drawn from are in :data:`GENERATORS` (``schedsearch generate FAMILY
--help`` prints them). The same family, size, and seed give byte-identical files.

Distributions (all integer draws inclusive, uniform unless said):

- ``slack_insertion``: ``k`` waiting jobs on ``capacity`` processors; running jobs end within
  ``max_t`` s, waiting jobs placed in order at the earliest fit after a gap in [0, 2] s,
  slacks in [0, ``max_slack``] s (infinite with probability 0.1), priorities multiples of
  1/6 (``insertion.random_problem``).
- ``grouping``: ``jobs`` jobs on ``processors`` processors, parametric miss-rate curves
  with footprints drawn against ``memory`` pages (``grouping.random_problem``).
- ``kresource_epochs``: ``n`` jobs, ``K`` resources of capacity ``capacity`` each; every
  demand in [1, ``capacity`` * ``max_share``].
- ``kresource_selection``: ``n`` waiting jobs drawn as for epochs; ``free`` = capacity
  minus a used share in [0, 0.5] per resource, ``extra`` = free; no job late.
- ``kresource_response``: ``n`` jobs, releases in [0, ``horizon``] s, durations in
  [1, ``max_duration``] s, demands as for epochs, unit weights.
- ``kresource_vbp`` (files of family ``kresource_epochs``): the published vector-packing
  classes of :mod:`instances.vbp`, ``cls`` 1-10 the Caprara-Toth classes ``ct1``-``ct10``,
  11 the class of Panigrahy et al. (``pan``); ``n`` jobs (a multiple of 3 for class 10),
  ``K`` resources (at least 2 for classes 7 and 8).
- ``task_mapping``: ``n_jobs`` jobs on ``n_nodes`` nodes as the CSM workload draws them
  (``task_mapping.random_problem``).
- ``gang_schedule``: ``n_jobs`` jobs on ``n_nodes`` nodes, widths in [1, ``max_width``],
  per-task pages in [10, 60] of 100 (``gang_schedule.random_problem``).
- ``slot_assignment``: ``n_apps`` applications on ``n_nodes`` nodes and ``n_slots`` slots,
  2..16 nodes and demand 1..min(5, n_slots - 1) each, one slot per node kept free for
  local work; ``n_slots`` is the largest round allowed (``slots.random_problem``).
- ``slot_placement``: one BSP cell with ``g_us`` in {100, 1000, 10000} µs, ``v`` in
  {0, 0.25, 0.5}, ``k`` of ``n_slots`` slots.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instances.atomic import write_atomic


@dataclass(frozen=True)
class Size:
    """One size parameter of a generator: its default, smallest and largest value."""

    default: int | float
    minimum: int | float
    maximum: int | float
    meaning: str


def _demands(rng: random.Random, n: int, K: int, cap: int, share: float) -> list[list[int]]:
    hi = max(1, int(cap * share))
    return [[rng.randint(1, hi) for _ in range(K)] for _ in range(n)]


def _epochs(rng: random.Random, n: int, K: int, capacity: int, max_share: float
            ) -> dict[str, Any]:
    return {"problem": "kresource_epochs", "capacity": [capacity] * K,
            "demands": _demands(rng, n, K, capacity, max_share)}


def _selection(rng: random.Random, n: int, K: int, capacity: int, max_share: float
               ) -> dict[str, Any]:
    free = [capacity - rng.randint(0, capacity // 2) for _ in range(K)]
    return {"problem": "kresource_selection", "capacity": [capacity] * K, "free": free,
            "extra": list(free), "demands": _demands(rng, n, K, capacity, max_share),
            "late": [False] * n}


def _response(rng: random.Random, n: int, K: int, capacity: int, max_share: float,
              horizon: int, max_duration: int) -> dict[str, Any]:
    return {"problem": "kresource_response", "capacity": [capacity] * K,
            "release": sorted(rng.randint(0, horizon) for _ in range(n)),
            "duration": [rng.randint(1, max_duration) for _ in range(n)],
            "demands": _demands(rng, n, K, capacity, max_share)}


def _placement(rng: random.Random, k: int, n_slots: int, i: int, n: int) -> dict[str, Any]:
    return {"problem": "slot_placement", "g_us": rng.choice([100, 1000, 10_000]),
            "v": rng.choice([0.0, 0.25, 0.5]), "n": n, "i": i, "k": k, "n_slots": n_slots,
            "slot_us": 20_000, "seed": rng.randint(0, 10_000)}


def _vbp(rng: random.Random, cls: int, n: int, K: int) -> dict[str, Any]:
    from instances.vbp import CLASSES, instance

    return instance(CLASSES[cls - 1], n, K, rng.randint(0, 2**31 - 1))


def _from_module(family: str, make: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    def gen(rng: random.Random, **size: Any) -> dict[str, Any]:
        from sim import problems

        return problems.module(family).to_dict(make(rng.randint(0, 2**31 - 1), **size))
    return gen


def _insertion(seed: int, k: int, capacity: int, max_t: int, max_slack: int) -> Any:
    from sim.problems.insertion import random_problem

    return random_problem(seed, k, capacity=capacity, max_t=max_t, max_slack=max_slack)


def _grouping(seed: int, jobs: int, processors: int, memory: int) -> Any:
    from sim.problems.grouping import random_problem

    return random_problem(jobs, processors, seed=seed, memory=memory)


def _mapping(seed: int, n_nodes: int, n_jobs: int) -> Any:
    from sim.problems.task_mapping import random_problem

    return random_problem(n_nodes, n_jobs, seed)


def _gang(seed: int, n_nodes: int, n_jobs: int, max_width: int) -> Any:
    from sim.problems.gang_schedule import random_problem

    return random_problem(seed, n_nodes=n_nodes, n_jobs=n_jobs,
                          width=(1, min(max_width, n_nodes)))


def _slots(seed: int, n_nodes: int, n_apps: int, n_slots: int) -> Any:
    from sim.problems.slots import random_problem

    free = 1  # one slot per node kept for local work
    return random_problem(seed, n_nodes=n_nodes, n_apps=n_apps, n_slots=n_slots, free=free,
                          nodes_range=(2, min(16, n_nodes)),
                          demand_range=(1, max(1, min(5, n_slots - free))))


_K = {"n": Size(10, 1, 10_000, "jobs"), "K": Size(2, 1, 16, "resources"),
      "capacity": Size(10, 1, 10**6, "capacity of each resource (units)"),
      "max_share": Size(0.6, 0.01, 1.0, "largest demand as a share of the capacity")}

FAMILY_OF = {"kresource_vbp": "kresource_epochs"}
"""Generators whose files are of another family than their name."""

#: generator (a family, or a key of :data:`FAMILY_OF`) -> (generator, size parameters)
GENERATORS: dict[str, tuple[Callable[..., dict[str, Any]], dict[str, Size]]] = {
    "slack_insertion": (_from_module("slack_insertion", _insertion), {
        "k": Size(6, 0, 200, "waiting jobs"),
        "capacity": Size(8, 1, 10**6, "processors"),
        "max_t": Size(6, 1, 10**6, "running jobs end within this many seconds"),
        "max_slack": Size(10, 0, 10**6, "largest finite slack [s]")}),
    "grouping": (_from_module("grouping", _grouping), {
        "jobs": Size(8, 1, 200, "jobs"), "processors": Size(4, 1, 200, "processors"),
        "memory": Size(1000, 1, 10**9, "memory [pages]")}),
    "kresource_epochs": (_epochs, dict(_K)),
    "kresource_vbp": (_vbp, {
        "cls": Size(1, 1, 11, "class: 1-10 Caprara & Toth (2001), 11 Panigrahy et al. (2011)"),
        "n": Size(60, 1, 10_000, "jobs (class 10: a multiple of 3)"),
        "K": Size(2, 1, 20, "resources (classes 7 and 8: at least 2)")}),
    "kresource_selection": (_selection, dict(_K)),
    "kresource_response": (_response, {
        **_K, "n": Size(8, 1, 1000, "jobs"),
        "horizon": Size(20, 0, 10**6, "releases in [0, horizon] s"),
        "max_duration": Size(10, 1, 10**6, "durations in [1, max_duration] s")}),
    "task_mapping": (_from_module("task_mapping", _mapping), {
        "n_nodes": Size(4, 1, 1024, "nodes"), "n_jobs": Size(4, 1, 1000, "jobs")}),
    "gang_schedule": (_from_module("gang_schedule", _gang), {
        "n_nodes": Size(8, 1, 1024, "nodes"), "n_jobs": Size(8, 1, 1000, "jobs"),
        "max_width": Size(4, 1, 1024, "largest job width (nodes)")}),
    "slot_assignment": (_from_module("slot_assignment", _slots), {
        "n_nodes": Size(8, 2, 1024, "nodes"), "n_apps": Size(4, 1, 1000, "applications"),
        "n_slots": Size(20, 2, 1000, "largest round allowed (slots)")}),
    "slot_placement": (_placement, {
        "k": Size(2, 1, 20, "slots owned"), "n_slots": Size(6, 2, 20, "slots of the round"),
        "i": Size(3, 1, 100, "measured runs per placement"),
        "n": Size(10, 1, 1000, "supersteps per run")}),
}


def sizes(family: str) -> dict[str, Size]:
    """The size parameters of ``family``'s generator."""
    if family not in GENERATORS:
        raise ValueError(f"unknown problem family {family!r}; known: "
                         f"{', '.join(sorted(GENERATORS))}")
    return GENERATORS[family][1]


def _checked(family: str, size: dict[str, Any]) -> dict[str, Any]:
    spec = sizes(family)
    out = {k: s.default for k, s in spec.items()}
    for k, v in size.items():
        if k not in spec:
            raise ValueError(f"{family}: unknown size parameter {k!r}; it takes "
                             f"{', '.join(spec)}")
        s = spec[k]
        want_int = isinstance(s.default, int)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or \
                not math.isfinite(v) or (want_int and v != int(v)) or \
                not s.minimum <= v <= s.maximum:
            raise ValueError(f"{family}: size parameter {k!r} must be "
                             f"{'an integer' if want_int else 'a number'} in "
                             f"[{s.minimum}, {s.maximum}], got {v!r}")
        out[k] = int(v) if want_int else float(v)
    return out


def instance(family: str, seed: int, **size: Any) -> dict[str, Any]:
    """One random instance of ``family`` as its JSON dictionary."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63 - 1], got {seed!r}")
    params = _checked(family, size)
    gen = GENERATORS[family][0]
    data = gen(random.Random(seed), **params)
    from sim import problems, registry

    if "name" in problems.schema(FAMILY_OF.get(family, family)).get("properties", {}):
        data["name"] = f"{family} seed {seed} " + " ".join(f"{k}={v}"
                                                          for k, v in params.items())
    registry.load_problem(data, source=f"{family} seed {seed}")  # every generated file loads
    return data


def write_set(family: str, count: int, seed: int, out: str | Path, **size: Any
              ) -> list[Path]:
    """Write ``count`` instances (seeds ``seed .. seed + count - 1``) to
    ``out/FAMILY-SEED.json``; refuses to overwrite an existing file."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 100_000:
        raise ValueError(f"--n must be an integer in [1, 100000], got {count!r}")
    _checked(family, size)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a directory")
    paths = [out / f"{family}-{seed + i}.json" for i in range(count)]
    clash = [p for p in paths if p.exists()]
    if clash:
        raise ValueError(f"--out {out}: {clash[0].name} exists; nothing was written "
                         "(use another directory)")
    texts = [json.dumps(instance(family, seed + i, **size)) + "\n" for i in range(count)]
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    try:
        for p, text in zip(paths, texts, strict=True):
            write_atomic(p, text)
            written.append(p)
    except BaseException:  # all or nothing: a failed set leaves no part of itself
        for p in written:
            p.unlink(missing_ok=True)
        raise
    return paths
