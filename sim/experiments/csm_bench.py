"""Speed of the time-sharing simulator on one CSM experiment point.

``python -m sim.experiments.csm_bench [--scale S] [--policy csm]`` runs the issue's point
(32 nodes, 1000 jobs, one seed, memory load 1.0, mfreq 100 ms) at tc / memory scale S
(default 0.01, the reproduction's scale; 1.0 = the paper's sizes, see --full-extrapolate),
then the growth with the number of nodes (8, 16, 32 at 1000 jobs) and of jobs (250, 500,
1000 at 32 nodes). Prints simulated events, wall seconds and events per second.
``--full`` also runs 100 jobs at scale 1.0 and extrapolates the full-size point linearly
in jobs. Times inside the simulator are microseconds; wall times are seconds.
"""

from __future__ import annotations

import argparse
import time

from heuristics.coscheduling import by_name
from sim.timeshare.csm import run_point
from sim.timeshare.workload import CSMConfig


def one(n_nodes: int, jobs: int, scale: float, policy: str, seed: int = 0) -> tuple[int, float]:
    cfg = CSMConfig(n_nodes=n_nodes, n_jobs=jobs, mem_load=1.0, tc_scale=scale,
                    mem_scale=scale, mfreq_ms=100.0,
                    large_sizes=tuple(s for s in (8, 16, 32) if s <= n_nodes))
    t = time.perf_counter()
    r = run_point(cfg, by_name(policy), seed)
    return r.events, time.perf_counter() - t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.01)
    ap.add_argument("--policy", default="csm")
    ap.add_argument("--full", action="store_true", help="also extrapolate scale 1.0")
    args = ap.parse_args(argv)
    print(f"policy {args.policy}, tc/memory scale {args.scale}, mem_load 1.0, mfreq 100 ms")
    ev, dt = one(32, 1000, args.scale, args.policy)
    print(f"point 32 nodes x 1000 jobs: {ev} events, {dt:.2f} s, {ev / dt:,.0f} events/s "
          f"(target < 20 s)")
    print("growth with nodes (1000 jobs):")
    for n in (8, 16, 32):
        ev, dt = one(n, 1000, args.scale, args.policy)
        print(f"  n = {n:2d}: {ev:9d} events {dt:7.2f} s {ev / dt:10,.0f} ev/s")
    print("growth with jobs (32 nodes):")
    for j in (250, 500, 1000):
        ev, dt = one(32, j, args.scale, args.policy)
        print(f"  jobs = {j:4d}: {ev:9d} events {dt:7.2f} s {ev / dt:10,.0f} ev/s")
    if args.full:
        ev, dt = one(32, 100, 1.0, args.policy)
        print(f"scale 1.0, 100 jobs: {ev} events, {dt:.1f} s, {ev / dt:,.0f} ev/s; "
              f"linear extrapolation to 1000 jobs: {10 * dt:.0f} s")


if __name__ == "__main__":
    main()
