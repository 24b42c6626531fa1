"""The benchmark library: a small curated set of problem files per family, each with its
best known value, whether that value is proved optimal, and the certificate (a solution
attaining it) that anyone can re-check with the family's ``check`` and ``objective``.

Files live in ``instances/data/library/FAMILY/``; :func:`build` (``python -m
sim.sweep.library``) regenerates them: the papers' own instances where the project has
them (Figure 1 of Leinberger et al., the Suh et al. case study, KTH-SP2 insertion
snapshots), and generated instances across sizes (``sim.problems.generate``), each solved
by every exact solver of its family under ``time_limit`` seconds; the best solution found
is the certificate, and ``proved`` is true when an exact solver proved it optimal.
``schedsearch bench --library FAMILY --update-library --out DIR`` then writes the table of
every solver's gap (``TABLE.md`` beside the files).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from instances.atomic import write_atomic
from sim.argparser import Parser

#: generated sizes per family: (label, size parameters), smallest first
SIZES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "slack_insertion": [("k4", {"k": 4}), ("k8", {"k": 8}), ("k12", {"k": 12})],
    "grouping": [("j6", {"jobs": 6, "processors": 3}), ("j9", {"jobs": 9, "processors": 3}),
                 ("j12", {"jobs": 12, "processors": 4})],
    "kresource_epochs": [("n8", {"n": 8, "K": 2}), ("n12", {"n": 12, "K": 3}),
                         ("n16", {"n": 16, "K": 4})],
    "kresource_selection": [("n8", {"n": 8, "K": 2}), ("n16", {"n": 16, "K": 3}),
                            ("n30", {"n": 30, "K": 4})],
    "kresource_response": [("n6", {"n": 6, "K": 2}), ("n8", {"n": 8, "K": 2}),
                           ("n10", {"n": 10, "K": 3})],
    "task_mapping": [("n4j4", {"n_nodes": 4, "n_jobs": 4}), ("n6j5", {"n_nodes": 6, "n_jobs": 5}),
                     ("n8j6", {"n_nodes": 8, "n_jobs": 6})],
    "gang_schedule": [("n8j8", {"n_nodes": 8, "n_jobs": 8}),
                      ("n12j12", {"n_nodes": 12, "n_jobs": 12, "max_width": 6}),
                      ("n16j16", {"n_nodes": 16, "n_jobs": 16, "max_width": 8})],
    "slot_assignment": [("a4", {"n_apps": 4}), ("a6", {"n_apps": 6, "n_nodes": 12}),
                        ("a8", {"n_apps": 8, "n_nodes": 16, "n_slots": 40})],
    "slot_placement": [("k2s6", {"k": 2, "n_slots": 6}), ("k3s6", {"k": 3, "n_slots": 6}),
                       ("k2s8", {"k": 2, "n_slots": 8})],
}

#: seeds of the generated instances of each size
SEEDS = (1, 2)


def _papers(family: str) -> list[tuple[str, dict[str, Any]]]:
    """The papers' own instances the project bundles, as (name, problem dict)."""
    import instances

    data = Path(instances.__file__).resolve().parent / "data"
    picks: list[Path] = []
    if family == "kresource_epochs":
        picks = [data / "kresource" / "figure1.json"]
    elif family == "grouping":
        picks = [data / "grouping" / f"casestudy_{m}mb.json" for m in (8, 32, 128)]
    elif family == "slack_insertion":
        snaps = sorted((data / "slack_snapshots").glob("kth-*.json"))
        by_k = {int(p.stem.rsplit("-k", 1)[1]): p for p in reversed(snaps)}
        picks = [by_k[k] for k in (3, 6, 11, 16) if k in by_k]  # the first of each k
    return [(p.stem, json.loads(p.read_text())) for p in picks]


def _solve_best(family: str, data: dict[str, Any], time_limit: float) -> dict[str, Any]:
    from sim import registry
    from sim.result import Status, _jsonable
    from sim.sweep.bench import run_solver

    fam, problem = registry.load(data, source=family)
    how = fam.sense
    best = None
    proved = False
    for name, target in sorted(fam.solvers.items()):
        if not target.startswith("models.") or name == "brute":
            continue
        try:
            r = run_solver(fam, name, problem, time_limit=time_limit, seed=0)
        except ValueError:  # a model that refuses this size
            continue
        if r.objective is None:
            continue
        better = best is None or (r.objective < best.objective if how == "min"
                                  else r.objective > best.objective)
        if better:
            best, proved = r, r.status is Status.OPTIMAL
        elif r.objective == best.objective and r.status is Status.OPTIMAL:
            proved = True
    if best is None:
        raise ValueError(f"{family}: no exact solver found a solution in {time_limit} s")
    return {"best_known": best.objective, "proved": proved,
            "certificate": _jsonable(best.solution)}


def build(families: list[str] | None = None, *, time_limit: float = 30.0,
          out: Path | None = None) -> list[Path]:
    """Write the library files (overwriting) and return their paths."""
    from sim.problems.generate import instance
    from sim.sweep.bench import library_dir

    written = []
    for family in families or sorted(SIZES):
        d = out / family if out is not None else library_dir(family)
        d.mkdir(parents=True, exist_ok=True)
        items = list(_papers(family))
        items += [(f"gen-{label}-s{seed}", instance(family, seed, **size))
                  for label, size in SIZES[family] for seed in SEEDS]
        for name, data in items:
            data = {**data, **_solve_best(family, data, time_limit)}
            path = d / f"{name}.json"
            write_atomic(path, json.dumps(data, sort_keys=False) + "\n")
            written.append(path)
            print(f"{path}: best {data['best_known']} proved {data['proved']}",
                  file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:

    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("families", nargs="*", help="families (default: all)")
    ap.add_argument("--time-limit", type=float, default=30.0, help="seconds per solver")
    args = ap.parse_args(argv)
    build(args.families or None, time_limit=args.time_limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
