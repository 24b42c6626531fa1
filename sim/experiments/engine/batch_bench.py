"""Speed and memory of the batch simulator (figures, not a test).

Each case runs in a fresh subprocess so that its peak resident memory (ru_maxrss) is its
own; times are the median of ``--repeat`` runs of the simulation alone (the trace is read
once per run, and its read time is reported separately).

Cases: the whole KTH-SP2 year (128 processors) with conservative and with EASY; SDSC-BLUE
(1,152 processors) with EASY, and with conservative (one run: the overloaded-queue case);
synthetic workloads at a fixed offered load with growing numbers of jobs (cost against
job count); K-resource workloads (K = 8) with FF-EASY and BB-EASY at 10k to 80k jobs
(BB's cost against FF's, and cost against job count). Jobs are killed at their request.

The K-resource workloads come from ``kworkload`` below, a simple generator for this
benchmark only (not the paper's workload): arrivals, runtimes and processor counts of
``instances.synthetic.random_workload`` on 128 processors, and each of the K - 1 other
resources (capacity 128) needing ``round(processors * u)``, ``u`` uniform in [0.5, 1.5]
(clipped to the capacity). At offered load 0.85 FF-EASY's time-averaged queue holds
about 140 jobs at 10k jobs, within the paper's 64 to 256.

Run: ``python -m sim.experiments.engine.batch_bench [--repeat 5] [--quick]``; writes
``sim/experiments/engine/results/batch_bench.md`` (``--quick`` writes ``results/batch_bench.md``
at the repository top instead, and says it is partial).

``--conservative-scaling`` runs only conservative backfilling on the
synthetic workload above (offered load 0.8 on 256 processors, seed 1: a stationary
queue, whose time-averaged length the table gives) at 10k, 20k, 40k, 80k, 160k and 240k
jobs, median of ``min(--repeat, 3)`` runs, and writes
``sim/experiments/engine/results/batch_bench_conservative.md`` (with ``--quick`` only 10k-40k,
to ``results/`` at the top, partial). Flat CPU time per job means linear cost.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import markdown_table

RESULTS = Path(__file__).parent / "results"

CHILD = r"""
import json, resource, sys, time
from sim.experiments import common as provenance
from sim.batch.machine import simulate
from sim.registry import make_policy
kind, name, policy, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t = time.perf_counter()
if kind == "trace":
    from instances.bundled import load_trace
    w = load_trace(name, procs=(128 if name == "KTH-SP2" else None))
elif kind == "kres":
    from sim.experiments.engine.batch_bench import kworkload
    w = kworkload(n, int(name[1:]), seed=1, load=0.85)
else:
    from instances.synthetic import random_workload
    w = random_workload(n, (256,), seed=1, load=0.8)
read = time.perf_counter() - t
pol, _, sel = policy.partition("-")
cpu = time.process_time()
s = simulate(w, make_policy(pol, **({"select": sel} if sel else {})))
cpu = time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
submit = sum(j.submit for j in w.jobs)
span = max(int(s.end.max()), 1) - min(j.submit for j in w.jobs)
queue = (int(s.start.sum()) - submit) / max(span, 1)  # time-averaged waiting jobs
print(json.dumps({"jobs": len(w), "read": read, "sim": s.sim_seconds, "cpu": cpu,
                  "peak_mb": peak, "queue": queue}))
"""


def kworkload(n_jobs: int, K: int, *, seed: int, load: float, capacity: int = 128):
    """A K-resource workload for this benchmark (module docstring); seeded, so the same
    arguments give the same jobs. Times in seconds."""
    import dataclasses

    import numpy as np

    from instances.job import Workload
    from instances.synthetic import random_workload

    base = random_workload(n_jobs, (capacity,), seed=seed, load=load)
    rng = np.random.default_rng(seed + 7919)
    jobs = []
    for j in base.jobs:
        p = j.demand[0]
        other = np.clip(np.rint(p * rng.uniform(0.5, 1.5, K - 1)), 0, capacity).astype(int)
        jobs.append(dataclasses.replace(j, demand=(p, *(int(x) for x in other))))
    return Workload(tuple(jobs), (capacity,) * K, f"kres-n{n_jobs}-K{K}-seed{seed}")


def measure(kind: str, name: str, policy: str, n: int, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", CHILD, kind, name, policy, str(n)],
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out))
    label = {"trace": f"{name} {policy}", "kres": f"K-resource {name} n={n} {policy}"}
    return {
        "case": label.get(kind, f"synthetic n={n} {policy}"),
        "jobs": runs[0]["jobs"],
        "sim_median": statistics.median(r["sim"] for r in runs),
        "sim_min": min(r["sim"] for r in runs),
        "sim_max": max(r["sim"] for r in runs),
        "cpu_median": statistics.median(r["cpu"] for r in runs),
        "read_median": statistics.median(r["read"] for r in runs),
        "peak_mb": max(r["peak_mb"] for r in runs),
        "queue": runs[0]["queue"],
        "runs": repeat,
    }


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip SDSC-BLUE and the largest n")
    ap.add_argument("--conservative-scaling", action="store_true",
                    help="only conservative on the stationary synthetic workload, 10k-240k jobs")
    args = ap.parse_args(argv)
    if args.conservative_scaling:
        return conservative_scaling(args.repeat, args.quick, argv)
    cases = [("trace", "KTH-SP2", "conservative", 0), ("trace", "KTH-SP2", "easy", 0)]
    if not args.quick:
        cases.append(("trace", "SDSC-BLUE", "easy", 0))
    sizes = (10_000, 20_000, 40_000) if args.quick else (10_000, 20_000, 40_000, 80_000)
    for pol in ("easy", "conservative"):
        cases += [("synthetic", "synthetic", pol, n) for n in sizes]
    for n in sizes:
        cases += [("kres", "K8", "easy-ff", n), ("kres", "K8", "easy-bb", n)]
    if not args.quick:
        cases.append(("trace", "SDSC-BLUE", "conservative", 0))
    rows = []
    for c in cases:
        # the long cases (K-resource, SDSC-BLUE conservative) at most 3 runs / 1 run
        rep = 1 if c[1:3] == ("SDSC-BLUE", "conservative") else (
            min(args.repeat, 3) if c[0] == "kres" else args.repeat)
        r = measure(*c, repeat=rep)
        r["us_per_job"] = 1e6 * r["sim_median"] / r["jobs"]
        rows.append(r)
        print(f"{r['case']:32s} jobs {r['jobs']:7d}  sim median {r['sim_median']:7.2f} s "
              f"(min {r['sim_min']:.2f}, max {r['sim_max']:.2f}, {r['runs']} runs)  "
              f"{r['us_per_job']:6.1f} us/job  cpu {r['cpu_median']:.2f} s  "
              f"read {r['read_median']:.2f} s  "
              f"peak {r['peak_mb']:.0f} MB", flush=True)
    commit = provenance.commit()
    try:
        import numba
        compiled = f"numba {numba.__version__} (compiled conservative compression)"
    except ImportError:
        compiled = "no numba (pure-Python conservative compression)"
    load = provenance.load_average()
    lines = [
        "# Batch simulator benchmark",
        "",
        f"`python -m sim.experiments.engine.batch_bench --repeat {args.repeat}"
        f"{' --quick' if args.quick else ''}` at commit {commit}, Python "
        f"{platform.python_version()}, {platform.machine()}; median of {args.repeat} runs "
        "(K-resource cases at most 3, SDSC-BLUE conservative 1), each in a fresh process; "
        "jobs killed at their request; synthetic workloads at offered load 0.8 on 256 "
        "processors (seed 1); K-resource workloads from `kworkload` (K = 8, capacity 128 "
        f"each, offered load 0.85, seed 1); {compiled}; load average at the end "
        f"(1/5/15 min) {load}; 'cpu' is the simulation's process time." + (
            " QUICK RUN: partial, not the committed configuration." if args.quick else ""),
        "",
        *markdown_table(
            ["case", "jobs", "sim median [s]", "min", "max", "cpu median [s]", "us/job",
             "read [s]", "peak RSS [MB]"],
            [[r["case"], r["jobs"], f"{r['sim_median']:.2f}", f"{r['sim_min']:.2f}",
              f"{r['sim_max']:.2f}", f"{r['cpu_median']:.2f}", f"{r['us_per_job']:.1f}",
              f"{r['read_median']:.2f}", f"{r['peak_mb']:.0f}"] for r in rows],
            align="lrrrrrrrr"),
    ]
    by = {r["case"]: r for r in rows}
    ratios = []
    for n in sizes:
        ff, bb = (by.get(f"K-resource K8 n={n} easy-{x}") for x in ("ff", "bb"))
        if ff and bb:
            ratios.append(f"n={n}: {bb['sim_median'] / ff['sim_median']:.2f}")
    if ratios:
        lines += ["", "BB-EASY / FF-EASY simulation time (K = 8): " + ", ".join(ratios) + "."]
        print(lines[-1])
    out = Path("results") if args.quick else RESULTS
    out.mkdir(exist_ok=True)
    write_atomic(out / "batch_bench.md", "\n".join(lines) + "\n")
    return 0


SCALING_SIZES = (10_000, 20_000, 40_000, 80_000, 160_000, 240_000)


def conservative_scaling(repeat: int, quick: bool, argv: list[str] | None) -> int:
    """Conservative backfilling's cost per job against the number of jobs of the
    stationary synthetic workload (module docstring); times in seconds."""
    sizes = SCALING_SIZES[:3] if quick else SCALING_SIZES
    rep = min(repeat, 3)
    rows = []
    for n in sizes:
        r = measure("synthetic", "synthetic", "conservative", n, rep)
        r["us_cpu"] = 1e6 * r["cpu_median"] / r["jobs"]
        r["us_wall"] = 1e6 * r["sim_median"] / r["jobs"]
        rows.append(r)
        print(f"n={r['jobs']:7d}  sim median {r['sim_median']:7.2f} s  cpu median "
              f"{r['cpu_median']:6.2f} s  {r['us_cpu']:5.1f} us/job cpu  {r['us_wall']:5.1f} "
              f"us/job wall  queue {r['queue']:6.1f}  peak {r['peak_mb']:.0f} MB", flush=True)
    cmd = "python -m sim.experiments.engine.batch_bench " + " ".join(
        argv if argv is not None else sys.argv[1:])
    lines = [
        "# Conservative backfilling: cost per job on a stationary workload",
        "",
        f"`{cmd}` at commit {provenance.commit()}, Python {platform.python_version()}, "
        f"{platform.machine()}; synthetic workload (offered load 0.8 on 256 processors, "
        f"seed 1, jobs killed at their request); median of {rep} runs, each in a fresh "
        f"process; load average at the end (1/5/15 min) {provenance.load_average()}. "
        "'queue' is the time-averaged number of waiting jobs (sum of waits / span)."
        + (" QUICK RUN: partial, not the committed configuration." if quick else ""),
        "",
        *markdown_table(
            ["jobs", "sim median [s]", "cpu median [s]", "us/job (cpu)", "us/job (wall)",
             "queue", "peak RSS [MB]"],
            [[r["jobs"], f"{r['sim_median']:.2f}", f"{r['cpu_median']:.2f}",
              f"{r['us_cpu']:.1f}", f"{r['us_wall']:.1f}", f"{r['queue']:.1f}",
              f"{r['peak_mb']:.0f}"] for r in rows],
            align="rrrrrrr"),
    ]
    out = Path("results") if quick else RESULTS
    out.mkdir(exist_ok=True)
    write_atomic(out / "batch_bench_conservative.md", "\n".join(lines) + "\n")
    print(f"written to {out / 'batch_bench_conservative.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
