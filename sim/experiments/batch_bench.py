"""Speed and memory of the batch simulator (issue 2 benchmark; figures, not a test).

Each case runs in a fresh subprocess so that its peak resident memory (ru_maxrss) is its
own; times are the median of ``--repeat`` runs of the simulation alone (the trace is read
once per run, and its read time is reported separately).

Cases: the whole KTH-SP2 year (128 processors) with conservative and with EASY; SDSC-BLUE
(1,152 processors) with EASY; synthetic workloads at a fixed offered load with growing
numbers of jobs (cost against job count). Jobs are killed at their request.

Run: ``python -m sim.experiments.batch_bench [--repeat 5] [--quick]``; writes
``sim/experiments/results/batch_bench.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).parent / "results"

CHILD = r"""
import json, resource, sys, time
from heuristics.backfill import EASY, Conservative
from sim.batch.machine import simulate
kind, name, policy, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t = time.perf_counter()
if kind == "trace":
    from instances.bundled import load_trace
    w = load_trace(name, procs=(128 if name == "KTH-SP2" else None))
else:
    from instances.synthetic import random_workload
    w = random_workload(n, (256,), seed=1, load=0.8)
read = time.perf_counter() - t
s = simulate(w, {"easy": EASY, "conservative": Conservative}[policy]())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"jobs": len(w), "read": read, "sim": s.sim_seconds, "peak_mb": peak}))
"""


def measure(kind: str, name: str, policy: str, n: int, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, kind, name, policy, str(n)],
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out))
    return {
        "case": f"{name} {policy}" if kind == "trace" else f"synthetic n={n} {policy}",
        "jobs": runs[0]["jobs"],
        "sim_median": statistics.median(r["sim"] for r in runs),
        "sim_min": min(r["sim"] for r in runs),
        "sim_max": max(r["sim"] for r in runs),
        "read_median": statistics.median(r["read"] for r in runs),
        "peak_mb": max(r["peak_mb"] for r in runs),
        "runs": repeat,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip SDSC-BLUE and the largest n")
    args = ap.parse_args(argv)
    cases = [("trace", "KTH-SP2", "conservative", 0), ("trace", "KTH-SP2", "easy", 0)]
    if not args.quick:
        cases.append(("trace", "SDSC-BLUE", "easy", 0))
    sizes = (10_000, 20_000, 40_000) if args.quick else (10_000, 20_000, 40_000, 80_000)
    for pol in ("easy", "conservative"):
        cases += [("synthetic", "synthetic", pol, n) for n in sizes]
    rows = []
    for c in cases:
        r = measure(*c, repeat=args.repeat)
        r["us_per_job"] = 1e6 * r["sim_median"] / r["jobs"]
        rows.append(r)
        print(f"{r['case']:32s} jobs {r['jobs']:7d}  sim median {r['sim_median']:7.2f} s "
              f"(min {r['sim_min']:.2f}, max {r['sim_max']:.2f}, {r['runs']} runs)  "
              f"{r['us_per_job']:6.1f} us/job  read {r['read_median']:.2f} s  "
              f"peak {r['peak_mb']:.0f} MB", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    lines = [
        "# Batch simulator benchmark",
        "",
        f"`python -m sim.experiments.batch_bench --repeat {args.repeat}"
        f"{' --quick' if args.quick else ''}` at commit {commit}, Python "
        f"{platform.python_version()}, {platform.machine()}; median of {args.repeat} runs, "
        "each in a fresh process; jobs killed at their request; synthetic workloads at "
        "offered load 0.8 on 256 processors (seed 1).",
        "",
        "| case | jobs | sim median [s] | min | max | us/job | read [s] | peak RSS [MB] |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['case']} | {r['jobs']} | {r['sim_median']:.2f} | {r['sim_min']:.2f}"
                     f" | {r['sim_max']:.2f} | {r['us_per_job']:.1f} | {r['read_median']:.2f}"
                     f" | {r['peak_mb']:.0f} |")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "batch_bench.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
