"""Exact slot references for Karl's scheduling servers (spec 2.7 M4 and M5).

1. **Slot assignment** (``sim.problems.slots``): a 64-node, 20-application, 50-slot
   instance, objectives ``round`` and ``gap``; CP-SAT and ILP (time limit 60 s) against
   round robin and networkx colouring. Each resulting slot table is then simulated under
   synchronized servers (``sim.timeshare.bsp.run_apps``): every application is a BSP
   program with one thread per node of its node set (g = 10 ms, v = 50%, n = 20
   supersteps, barrier pattern, blocking), slots of 20 ms; we report the mean and the
   largest application runtime.
2. **Slot placement** (``sim.problems.placement``): for every granularity of the grid
   (v = 50%, barrier, blocking, both wake-up settings), every placement class of 2 of 10
   slots simulated (n = 20 supersteps, i = 200 seeds, common random numbers: seed s gives
   every placement the same compute times and draws; with 20 ms slots, a multiple of the
   tick, every rotation of a class has the same objective, so the classes cover every
   placement). Per class the mean over the seeds with its 95% confidence interval, and the
   paired difference of the best class against the contiguous default (slots 0, 1): is
   the default the best, and is the difference larger than the noise?

Run ``python -m sim.experiments.karl.slots`` (full; writes
``sim/experiments/karl/results/slots.md``) or ``--quick`` (partial, 10 s limits, i = 4,
written to ``results/bsp_quick/``). Simulated times are µs; tables show ms.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from pathlib import Path

from heuristics.slots import coloring, round_robin
from models.slots import solve_cpsat, solve_ilp
from sim.argparser import Parser
from sim.experiments.common import (
    PARTIAL_DIR,
    load_average,
    markdown_row,
    markdown_table,
    mean_ci,
    write_atomic,
)
from sim.experiments.common import stamp as provenance
from sim.problems import placement as pl
from sim.problems import slots as sp
from sim.timeshare.bsp import App, BSPParams, run_apps
from sim.timeshare.servers import ServerParams, SlotSchedule

FULL = Path(__file__).resolve().parent / "results" / "slots.md"
QUICK = PARTIAL_DIR / "bsp_quick" / "slots.md"
G_US = (100, 500, 1_000, 5_000, 10_000, 100_000)
SEEDS = 200
"""Seeds (measurements) per placement in the full configuration."""


def placement_cell(prob: pl.PlacementProblem) -> dict[str, list[float]]:
    """Per candidate placement of ``prob`` (``placement.iter_placements``, keyed "0,1"),
    the objective of every seed ``prob.seed .. prob.seed + prob.i - 1`` alone (µs): their
    mean is ``placement.objective(prob, c)``, and seed s is common to every placement."""
    out = {}
    for c in pl.iter_placements(prob):
        out[",".join(map(str, c))] = [
            pl.objective(dataclasses.replace(prob, i=1, seed=prob.seed + j), c)
            for j in range(prob.i)]
    return out


def _ms_ci(xs: list[float]) -> str:
    m, h = mean_ci(xs)
    return f"{m / 1000:.1f} ± {h / 1000:.1f}"


def simulate_table(problem: sp.SlotProblem, table: list[list[str]], *, n: int = 20,
                   g_us: int = 10_000, v: float = 0.5, seed: int = 0) -> list[int]:
    """Runtimes (µs) of every application of ``problem`` under the slot ``table``."""
    index = {a.name: i for i, a in enumerate(problem.apps)}
    owner = tuple(None if not slot else tuple(index[x] for x in slot) for slot in table)
    sch = SlotSchedule(problem.slot_us, owner)
    apps = [App(a.nodes, BSPParams(g_us=g_us, v=v, n=n, p=len(a.nodes)))
            for a in problem.apps]
    return run_apps(apps, sch, ServerParams(regime="sync"), problem.n_nodes,
                    seed=seed)["runtimes_us"]


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.karl.slots")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    limit = 10.0 if args.quick else 60.0
    stamp = provenance()   # the commit is read once, at the start (the run is long)
    out = QUICK if args.quick else FULL
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    if args.quick:
        lines.append("**PARTIAL (quick run: 10 s limits, i = 4); not the full configuration."
                     "**\n")
    lines += ["# Exact slot references (spec 2.7)", "",
              "## M4: slot assignment, 64 nodes, 20 applications, 50 slots", "",
              "Instance: `sim.problems.slots.random_problem(0, nodes_range=(4, 24), "
              "demand_range=(2, 5))` (each application on 4-24 random nodes, 2-5 slots per "
              "round, 5 free slots per node). Each table simulated under synchronized "
              "servers: every application a BSP program (g = 10 ms, v = 50%, n = 20, "
              "barrier, blocking), slots of 20 ms.", "",
              *markdown_table(["objective", "solver", "status", "value", "bound", "wall (s)",
                               "mean app runtime (ms)", "largest app runtime (ms)"], [])]
    for obj in ("round", "gap"):
        p = sp.random_problem(0, nodes_range=(4, 24), demand_range=(2, 5), objective=obj)
        for f in (round_robin, coloring, solve_cpsat, solve_ilp):
            r = f(p, time_limit=limit)
            if r.solution is None:
                lines.append(markdown_row([obj, r.solver, r.status.value, "-", "-",
                                           f"{r.runtime:.1f}", "-", "-"]))
                continue
            rts = simulate_table(p, r.solution)
            lines.append(markdown_row([
                obj, r.solver, r.status.value, f"{r.objective:g}",
                "-" if r.bound is None else f"{r.bound:g}", f"{r.runtime:.1f}",
                f"{statistics.fmean(rts) / 1000:.0f}", f"{max(rts) / 1000:.0f}"]))
            print(lines[-1], flush=True)
    seeds = 4 if args.quick else SEEDS
    lines += ["", "## M5: slot placement of one program (2 of 10 slots of 20 ms)", "",
              "Every rotation class of placements (5 classes: slot 0 with slot 1..5; every "
              "rotation of a class has the same objective, so they cover all 45 placements) "
              "simulated under synchronized servers, v = 50%, barrier pattern, blocking, "
              f"n = 20, {seeds} seeds per placement (seeds 0..{seeds - 1}, common random "
              "numbers across placements). Each class: mean runtime (ms) ± the half-width of "
              "its 95% confidence interval over the seeds (Student t); the best mean in bold "
              "(the exhaustive solver's optimum, `models.slots.solve_placement`, for the "
              "same problem). Last columns: the paired difference best - {0,1} per seed, "
              "mean ± 95% half-width (ms), and whether that interval excludes 0. The best "
              "is chosen by the same seeds, so its interval is slightly optimistic.", "",
              *markdown_table(["wake-up", "g", "{0,1} (default)", "{0,2}", "{0,3}", "{0,4}",
                               "{0,5}", "best", "best - {0,1} (ms)", "CI excludes 0"], [])]
    t = time.perf_counter()
    for wake in ("immediate", "tick"):
        for g in G_US:
            prob = pl.PlacementProblem(g_us=g, v=0.5, n=20, i=seeds, k=2, n_slots=10,
                                       ctl_block_wakeup=wake)
            runs = placement_cell(prob)
            means = {c: statistics.fmean(x) for c, x in runs.items()}
            best = min(means, key=lambda c: (means[c], tuple(map(int, c.split(",")))))
            cells = [f"**{_ms_ci(runs[c])}**" if c == best else _ms_ci(runs[c])
                     for c in ("0,1", "0,2", "0,3", "0,4", "0,5")]
            diff = [b - a for a, b in zip(runs["0,1"], runs[best], strict=True)]
            m, h = mean_ci(diff)
            sep = "-" if best == "0,1" else ("yes" if abs(m) > h else "no")
            lines.append(markdown_row([wake, f"{g} µs", *cells, "{" + best + "}",
                                       f"{m / 1000:.1f} ± {h / 1000:.1f}", sep]))
            print(lines[-1], flush=True)
    lines += ["", f"Placement study: {time.perf_counter() - t:.0f} s (load average "
              f"{load_average()}).", "", f"Produced at {stamp}.", ""]
    write_atomic(out, "\n".join(lines))
    print(f"written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
