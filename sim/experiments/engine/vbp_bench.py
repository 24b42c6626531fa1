"""Minimum epochs on the published vector-packing classes: CP-SAT alone against column
generation (``colgen``), per class and size.

Instances: :mod:`instances.vbp` (Caprara & Toth 2001 classes ``ct1``-``ct10``, the class
of Panigrahy et al. 2011 ``pan``), ``--sizes`` jobs (``ct10``: rounded down to a multiple
of 3), ``--K`` resources, seeds ``1 .. --seeds``. Every (instance, solver) runs in this
process, one after the other, one CP-SAT worker each, with ``--limit`` seconds (imports
done, and the compiled branch-and-bound pricing of ``colgen`` compiled where numba is
installed, before the first run). The load average is printed (and written) before and after.

Per class x size x solver the table gives: runs, proved (OPTIMAL), the median wall of
the ``solve`` call (a stopped run counts with its wall), the median certified gap
``(objective - best bound) / objective`` where the best bound is the larger of both
solvers' bounds on that instance (so a gap is certified, not self-reported), and the
runs whose wall went over the limit by more than 1 s. The runs not proved follow, one a
line.

Run: ``python -m sim.experiments.engine.vbp_bench`` (the full configuration: 11 classes,
sizes 20, 40, 60, 120, 250, K = 2 and 10, seed 1, 15 s: 110 instances, at most 55 min,
about 25 min where colgen proves most; writes
``sim/experiments/engine/results/vbp_bench.md``); any option changed writes ``--out``
(default ``/tmp/vbp_bench.md``) instead, e.g. ``--K 2,5,10 --seeds 2`` (330 instances).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import markdown_table

RESULTS = Path(__file__).parent / "results"
FULL_OUT = RESULTS / "vbp_bench.md"
QUICK_OUT = Path("/tmp/vbp_bench.md")
SOLVERS = ("cpsat", "colgen")
SIZES = (20, 40, 60, 120, 250)
KS = (2, 10)
SEEDS = 1
LIMIT = 15.0
OVERRUN = 1.0  # seconds past the limit that count as an overrun


def _instances(classes: list[str], sizes: list[int], ks: list[int], seeds: int):
    from instances.vbp import instance
    from sim.problems.kresource import from_dict

    for cls in classes:
        for n in sizes:
            m = n - n % 3 if cls == "ct10" else n
            for K in ks:
                for seed in range(1, seeds + 1):
                    yield cls, n, K, seed, from_dict(instance(cls, m, K, seed))


def run(classes: list[str], sizes: list[int], ks: list[int], seeds: int, limit: float,
        solvers: list[str], log: bool = True) -> list[dict]:
    """One row per (instance, solver): class, size, K, seed, solver, status, objective,
    bound, wall (s)."""
    from ortools.linear_solver import pywraplp  # noqa: F401  (start-up, outside the clock)
    from ortools.sat.python import cp_model  # noqa: F401

    from models.kresource.knapsack import compile_kernel
    from sim import registry

    if log:
        print(f"compiled branch-and-bound pricing: {compile_kernel()}", flush=True)
    else:
        compile_kernel()

    rows = []
    for cls, n, K, seed, p in _instances(classes, sizes, ks, seeds):
        for name in solvers:
            solve = registry.solver("kresource_epochs", name)
            t = time.perf_counter()
            r = solve(p, time_limit=limit, seed=0)
            wall = time.perf_counter() - t
            rows.append({"class": cls, "n": n, "K": K, "seed": seed, "solver": name,
                         "status": r.status.value, "objective": r.objective,
                         "bound": r.bound, "wall": wall})
            if log:
                print(f"{cls} n={n} K={K} s={seed} {name}: {r.status.value} "
                      f"{r.objective} >= {r.bound} {wall:.1f} s", flush=True)
    return rows


def table(rows: list[dict], limit: float) -> list[str]:
    """The Markdown table of the module docstring."""
    best: dict[tuple, float] = {}
    for r in rows:
        key = (r["class"], r["n"], r["K"], r["seed"])
        if r["bound"] is not None:
            best[key] = max(best.get(key, 0.0), r["bound"])
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["class"], r["n"], r["solver"]), []).append(r)
    out = []
    for (cls, n, solver), rs in groups.items():
        gaps = [(r["objective"] - best[(r["class"], r["n"], r["K"], r["seed"])])
                / r["objective"] for r in rs
                if r["objective"] and (r["class"], r["n"], r["K"], r["seed"]) in best]
        out.append((cls, n, solver, len(rs), sum(r["status"] == "OPTIMAL" for r in rs),
                    f"{statistics.median(r['wall'] for r in rs):.2f}",
                    f"{100 * statistics.median(gaps):.1f}%" if gaps else "-",
                    sum(r["wall"] > limit + OVERRUN for r in rs)))
    return markdown_table(("class", "jobs", "solver", "runs", "proved", "median s",
                           "median certified gap", "overruns"), out, "llrrrrrr")


def totals(rows: list[dict]) -> list[str]:
    """Proved / runs per solver and size."""
    out = []
    for solver in sorted({r["solver"] for r in rows}):
        for n in sorted({r["n"] for r in rows}):
            rs = [r for r in rows if r["solver"] == solver and r["n"] == n]
            out.append((solver, n, f"{sum(r['status'] == 'OPTIMAL' for r in rs)} / "
                        f"{len(rs)}"))
    return markdown_table(("solver", "jobs", "proved / runs"), out, "lrr")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:g}"


def open_runs(rows: list[dict]) -> list[str]:
    """One line per run not proved: solver, instance, objective and bound, wall."""
    return [f"- {r['solver']}: {r['class']} n={r['n']} K={r['K']} seed {r['seed']}: "
            f"{r['status']} {_num(r['objective'])} >= {_num(r['bound'])}, {r['wall']:.1f} s"
            for r in rows if r["status"] != "OPTIMAL"]


def main(argv: list[str] | None = None) -> int:
    from instances.vbp import CLASSES

    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--classes", default=",".join(CLASSES))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--K", default=",".join(map(str, KS)))
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--limit", type=float, default=LIMIT)
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--out", help=f"result file (default {QUICK_OUT} unless the full "
                                  f"configuration runs)")
    args = ap.parse_args(argv)
    classes = args.classes.split(",")
    bad = sorted(set(classes) - set(CLASSES))
    if bad:
        ap.error(f"--classes: unknown {bad}; known {', '.join(CLASSES)}")
    sizes = [int(x) for x in args.sizes.split(",")]
    ks = [int(x) for x in args.K.split(",")]
    solvers = args.solvers.split(",")
    full = (classes == list(CLASSES) and tuple(sizes) == SIZES and tuple(ks) == KS
            and args.seeds == SEEDS and args.limit == LIMIT and tuple(solvers) == SOLVERS)
    out = Path(args.out) if args.out else (FULL_OUT if full else QUICK_OUT)
    before = provenance.load_average()
    print(f"load average before: {before}", flush=True)
    rows = run(classes, sizes, ks, args.seeds, args.limit, solvers)
    after = provenance.load_average()
    print(f"load average after: {after}")
    text = "\n".join([
        "# Minimum epochs on the vector-packing classes: CP-SAT against colgen", "",
        f"{provenance.stamp(argv)}; limit {args.limit:g} s, one worker each; load "
        f"average (1 / 5 / 15 min) {before} before, {after} after; "
        f"{'full configuration' if full else 'partial configuration'}.", "",
        *totals(rows), "", *table(rows, args.limit), "", "Runs not proved:", "",
        *open_runs(rows), ""])
    print(text)
    provenance.write_atomic(out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
