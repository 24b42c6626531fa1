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
   slots simulated (i = 20 measurements of n = 20 supersteps, common seeds); is the
   contiguous default (slots 0, 1) the best?

Run ``python -m sim.experiments.karl.slots`` (full; writes
``sim/experiments/karl/results/slots.md``) or ``--quick`` (partial, 10 s limits, i = 4,
written to ``results/bsp_quick/``). Simulated times are µs; tables show ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from heuristics.slots import coloring, round_robin
from models.slots import solve_cpsat, solve_ilp, solve_placement
from sim.experiments.common import PARTIAL_DIR, markdown_row, markdown_table
from sim.problems import placement as pl
from sim.problems import slots as sp
from sim.timeshare.bsp import App, BSPParams, run_apps
from sim.timeshare.servers import ServerParams, SlotSchedule

FULL = Path(__file__).resolve().parent / "results" / "slots.md"
QUICK = PARTIAL_DIR / "bsp_quick" / "slots.md"
G_US = (100, 500, 1_000, 5_000, 10_000, 100_000)


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
    ap = argparse.ArgumentParser(prog="python -m sim.experiments.karl.slots")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    limit = 10.0 if args.quick else 60.0
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
    lines += ["", "## M5: slot placement of one program (2 of 10 slots of 20 ms)", "",
              "Every rotation class of placements (5 classes: slot 0 with slot 1..5) "
              "simulated under synchronized servers, v = 50%, barrier pattern, blocking, "
              f"n = 20, i = {4 if args.quick else 20} measurements (common seeds). Mean "
              "runtime (ms) per placement; the best in bold.", "",
              *markdown_table(["wake-up", "g", "{0,1} (default)", "{0,2}", "{0,3}", "{0,4}",
                               "{0,5}", "contiguous best?"], [])]
    t = time.perf_counter()
    for wake in ("immediate", "tick"):
        for g in G_US:
            prob = pl.PlacementProblem(g_us=g, v=0.5, n=20, i=4 if args.quick else 20, k=2,
                                       n_slots=10, ctl_block_wakeup=wake)
            r = solve_placement(prob)
            rt = r.params["runtimes_us"]
            best = ",".join(map(str, r.solution))
            cells = []
            for c in ("0,1", "0,2", "0,3", "0,4", "0,5"):
                txt = f"{rt[c] / 1000:.1f}"
                cells.append(f"**{txt}**" if c == best else txt)
            best_note = (f"{'yes' if r.params['contiguous_best'] else 'no'} (rank "
                         f"{r.params['contiguous_rank']})")
            lines.append(markdown_row([wake, f"{g} µs", *cells, best_note]))
            print(lines[-1], flush=True)
    lines += ["", f"Placement study: {time.perf_counter() - t:.0f} s.", ""]
    out.write_text("\n".join(lines))
    print(f"written to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
