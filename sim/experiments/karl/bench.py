"""Benchmark of the BSP scheduling-server simulator and the slot-assignment models.

Prints:

1. one grid cell (4 nodes, n = 50 supersteps, i = 50 measurements) for a few (g, v,
   pattern, regime) cells, each run back to back with the servers acting at every
   boundary (``skip_idle=False``, the cost before the idle skip) and with the default
   ``skip_idle=True``: wall and CPU seconds, events per second, and a check that the two
   give identical runtimes (target: under 2 s);
2. the whole grid of one figure (Fig. 9: complete pattern, spin-blocking, ratio server /
   uncontrolled, both wake-up settings: 90 cells of 50 measurements) on ``--workers``
   processes (target: under 5 minutes on 2 cores); ``--grid-reference`` also runs it
   with ``skip_idle=False``;
3. slot assignment, 64 nodes, 20 applications, 50 slots, both objectives: CP-SAT and ILP
   with a 60 s limit, round robin and colouring (target: proved optimal or with its gap
   in 60 s).

Run ``python -m sim.experiments.karl.bench`` (``--skip-grid`` leaves out part 2). Times in
the simulator are µs; the printed wall times are seconds.
"""

from __future__ import annotations

import os
import sys
import time
from multiprocessing import Pool

from heuristics.slots import coloring, round_robin
from models.slots import solve_cpsat, solve_ilp
from sim.argparser import Parser
from sim.experiments.common import markdown_row, markdown_table
from sim.problems import slots as sp
from sim.timeshare.bsp import BSPParams, NetParams, measure_cell
from sim.timeshare.servers import ServerParams, SlotSchedule

CELLS = [
    (1_000, 0.5, "barrier", 0, "sync", "immediate"),
    (10_000, 0.5, "barrier", 0, "sync", "immediate"),
    (100_000, 1.0, "barrier", 100, "sync", "tick"),
    (1_000, 0.5, "complete", 100, "sync", "tick"),
    (100_000, 1.0, "complete", 100, "sync", "tick"),
    (100_000, 1.0, "complete", 100, "none", "immediate"),
]


def _cell(args: tuple) -> tuple[float, int, float, float, list[int]]:
    """(wall s, events, mean runtime µs, CPU s, runtimes µs) of one cell."""
    g, v, pattern, spin, regime, wake, every, skip = args
    t, c = time.perf_counter(), time.process_time()
    st = measure_cell(BSPParams(g_us=g, v=v, n=50, pattern=pattern, spin_us=spin),
                      SlotSchedule.for_share(0.2),
                      ServerParams(regime=regime, ctl_block_wakeup=wake,
                                   act_every_slot=every, skip_idle=skip), NetParams(), i=50)
    return (time.perf_counter() - t, st["events"], st["mean_us"], time.process_time() - c,
            st["times_us"])


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def _table_head(header: list[str]) -> None:
    """Print a Markdown table's header and rule (the rows follow as they are measured)."""
    print("\n".join(markdown_table(header, [])))


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.karl.bench")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-grid", action="store_true")
    ap.add_argument("--skip-slots", action="store_true")
    ap.add_argument("--grid-fast", action="store_true",
                    help="grid with act_every_slot=False (server wakes only on changes)")
    ap.add_argument("--grid-reference", action="store_true",
                    help="also run the grid with skip_idle=False (before/after)")
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args(argv)
    if args.skip_grid:  # section 2, the whole grid, is what the workers and its modes run
        ap.refuse_unread(ap.options() - {"workers", "grid_fast", "grid_reference"},
                         "--skip-grid")
    if args.skip_slots:  # section 3, the slot assignment, is what the time limit bounds
        ap.refuse_unread(ap.options() - {"time_limit"}, "--skip-slots")

    from sim.experiments.karl.figs import provenance
    print(f"# bsp_bench, {provenance()}, load average {_load()} on {os.cpu_count()} "
          "CPUs\n")
    print("## 1. One grid cell: 4 nodes, n = 50, i = 50 (target < 2 s)\n")
    print("skip_idle = False: every server acts at every slot boundary (the cost before "
          "the idle skip); True (default): servers sleep through the boundaries where "
          "nothing changes and their node's tasks are all stopped. Same model, same "
          "results (checked: 'identical'). Load = 1-minute load average before the cell "
          "(2 cores).\n")
    _table_head(["g (µs)", "v", "pattern", "spin (µs)", "regime", "wake-up", "skip_idle",
                 "wall (s)", "CPU (s)", "events", "events/s (CPU)", "mean runtime (ms)",
                 "identical", "load"])
    for c in CELLS:
        ref = None
        for skip in ((False, True) if c[4] != "none" else (True,)):
            load = _load()
            wall, ev, mean, cpu, times = _cell((*c, True, skip))
            same = "-" if ref is None else ("yes" if times == ref else "**NO**")
            ref = times
            print(markdown_row([*c[:6], skip, f"{wall:.2f}", f"{cpu:.2f}", ev,
                                f"{ev / cpu:,.0f}", f"{mean / 1000:.1f}", same, load]),
                  flush=True)

    if not args.skip_grid:
        print("\n## 2. Whole grid of Fig. 9 (complete, spin 100 µs; sync x 2 wake-ups + "
              f"none; 90 cells x 50 measurements) on {args.workers} workers "
              "(target < 300 s)\n")
        _table_head(["skip_idle", "act_every_slot", "wall (s)", "CPU (s, all workers)",
                     "events", "events/s (wall)", "load before", "load after"])
        variants = [(True, not args.grid_fast)]
        if args.grid_reference:
            variants.insert(0, (False, True))
        for skip, every in variants:
            jobs = [(g, v, "complete", 100, regime, wake, every, skip)
                    for g in (100, 500, 1_000, 5_000, 10_000, 100_000)
                    for v in (0.0, 0.25, 0.5, 0.75, 1.0)
                    for regime, wake in (("sync", "immediate"), ("sync", "tick"),
                                         ("none", "immediate"))]
            load = _load()
            t = time.perf_counter()
            with Pool(args.workers) as pool:
                res = pool.map(_cell, jobs)
            wall = time.perf_counter() - t
            ev = sum(r[1] for r in res)
            cpu = sum(r[3] for r in res)
            print(markdown_row([skip, every, f"{wall:.1f}", f"{cpu:.1f}", ev,
                                f"{ev / wall:,.0f}", load, _load()]), flush=True)
    if args.skip_slots:
        return 0

    print(f"## 3. Slot assignment: 64 nodes, 20 applications, 50 slots "
          f"(time limit {args.time_limit:.0f} s)\n")
    _table_head(["instance", "objective", "solver", "status", "value", "bound", "gap",
                 "wall (s)"])
    for label, nr, dr in (("nodes 4-24, demand 2-5", (4, 24), (2, 5)),
                          ("nodes 8-32, demand 1-5", (8, 32), (1, 5))):
        for obj in ("round", "gap"):
            p = sp.random_problem(0, nodes_range=nr, demand_range=dr, objective=obj)
            for f in (round_robin, coloring, solve_cpsat, solve_ilp):
                r = f(p, time_limit=args.time_limit)
                gap = r.gap
                print(markdown_row([
                    label, obj, r.solver, r.status.value,
                    "-" if r.objective is None else f"{r.objective:g}",
                    "-" if r.bound is None else f"{r.bound:g}",
                    "-" if gap is None else f"{gap:.1%}", f"{r.runtime:.1f}"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
