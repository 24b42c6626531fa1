"""Benchmark of the memory-feasible gang schedule (spec 3.8 M7; target: 30 jobs on
32 nodes proved optimal or with its gap in 60 s).

``python -m sim.experiments.gine.gang_bench [--seeds N] [--time-limit S] [--jobs J] [--nodes N]``

Random instances (``sim.problems.gang_schedule.random_problem``): job widths drawn from
the CSM workload's sizes {1, 2, 4} (small) and {8, 16, 32} (large) half and half, task
pages U[10, 60] of M = 100, weights U{1..5} for the weighted objective. For each seed and
objective it prints CP-SAT and CBC (status, objective, bound, gap, seconds) beside the
networkx colouring heuristic and the clique lower bound. Times in seconds.
"""

from __future__ import annotations

import random
import time

from heuristics.gang_schedule import coloring
from models import gang_schedule as m
from sim.argparser import Parser
from sim.problems import gang_schedule as gs

SIZES = (1, 2, 4, 8, 16, 32)


def instance(seed: int, n_nodes: int, n_jobs: int, objective: str) -> gs.GangProblem:
    """CSM-like widths (capped at ``n_nodes``), pages U[10, 60] of 100, weights U{1..5}."""
    rng = random.Random(seed)
    jobs = []
    for i in range(n_jobs):
        w = min(n_nodes, rng.choice(SIZES))
        nodes = tuple(sorted(rng.sample(range(n_nodes), w)))
        jobs.append(gs.GangJob(f"J{i}", nodes, tuple(rng.randint(10, 60) for _ in nodes),
                               float(rng.randint(1, 5))))
    return gs.GangProblem(n_nodes, 100, tuple(jobs), (0,) * n_nodes, n_jobs, objective)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--jobs", type=int, default=30)
    ap.add_argument("--nodes", type=int, default=32)
    ap.add_argument("--linearization", type=int, default=2,
                    help="CP-SAT linearization_level (2 = default of the model; 1 = "
                         "CP-SAT's own default, for comparison)")
    a = ap.parse_args(argv)
    print(f"gang_schedule: {a.jobs} jobs on {a.nodes} nodes, time limit {a.time_limit:g} s "
          f"per solve, one thread, CP-SAT linearization_level {a.linearization}")
    print(f"{'seed':>4} {'objective':>9} {'LB':>6} {'colour':>7} | "
          f"{'solver':>6} {'status':>9} {'obj':>6} {'bound':>6} {'gap':>6} {'time s':>7}")
    worst = 0.0
    for seed in range(a.seeds):
        for obj in ("rows", "weighted"):
            p = instance(seed, a.nodes, a.jobs, obj)
            h = coloring(p)
            for name in ("cpsat", "ilp"):
                t0 = time.perf_counter()
                if name == "cpsat":
                    r = m.solve_cpsat(p, time_limit=a.time_limit,
                                      linearization_level=a.linearization)
                else:
                    r = m.solve_ilp(p, time_limit=a.time_limit)
                dt = time.perf_counter() - t0
                worst = max(worst, dt)
                gap = "-" if r.gap is None else f"{100 * r.gap:.1f}%"
                print(f"{seed:>4} {obj:>9} {gs.lower_bound(p):>6.0f} {h.objective:>7.0f} | "
                      f"{name:>6} {r.status.value:>9} {r.objective or float('nan'):>6.0f} "
                      f"{r.bound if r.bound is not None else float('nan'):>6.0f} {gap:>6} "
                      f"{dt:>7.2f}", flush=True)
    print(f"slowest solve: {worst:.2f} s (target: proved or with its gap within 60 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
