"""How much ``schedsearch bench`` costs beyond the solvers, and how it scales with workers.

``python -m sim.experiments.engine.bench_bench [--files 100] [--jobs 2]`` generates
``--files`` small minimum-epochs problems (``sim.problems.generate``, ``--n`` jobs, K = 3),
runs 10 solvers on each (1,000 runs by default) once on 1 worker and once on ``--jobs``
workers, each into a fresh store, and prints:

- the overhead per run: (wall time of the 1-worker bench - the solvers' own seconds) / runs
  (loading the file, building the problem, the store commit, the tables);
- the speed-up of ``--jobs`` workers over 1 (wall time), with the machine's load average,
  since the figure means something only on an idle machine.

Nothing is written outside a temporary directory. Times are wall-clock seconds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

SOLVERS = ("brute", "cpsat", "unc", "fcfs", "fcfs-ff", "fcfs-bl", "fcfs-bb", "unc-ff",
           "unc-bl", "unc-bb")


def measure(files: int, jobs: int, args_n: int = 12) -> dict[str, float]:
    from sim.problems.generate import write_set
    from sim.sweep.bench import bench

    with tempfile.TemporaryDirectory() as tmp:
        probs = Path(tmp) / "problems"
        write_set("kresource_epochs", files, 1, probs, n=args_n, K=3)
        out: dict[str, float] = {"runs": files * len(SOLVERS)}
        for label, workers in (("one", 1), ("many", jobs)):
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            s = bench([probs], Path(tmp) / f"out-{label}", solvers=list(SOLVERS),
                      time_limit=10, jobs=workers, plots=False)
            out[f"wall_{label}"] = time.perf_counter() - t0
            out[f"solver_{label}"] = sum(r["seconds"] or 0.0 for r in s.runs)
            out[f"load_{label}"] = load
            out[f"failed_{label}"] = s.failed
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--n", type=int, default=12, help="jobs per problem")
    args = ap.parse_args(argv)
    m = measure(args.files, args.jobs, args.n)
    runs = m["runs"]
    overhead = (m["wall_one"] - m["solver_one"]) / runs
    print(f"{int(runs)} runs ({args.files} files x {len(SOLVERS)} solvers), "
          f"failed {int(m['failed_one'])} / {int(m['failed_many'])}")
    print(f"1 worker: {m['wall_one']:.2f} s wall, solvers' own {m['solver_one']:.2f} s, "
          f"load average {m['load_one']:.2f}")
    print(f"{args.jobs} workers: {m['wall_many']:.2f} s wall, solvers' own "
          f"{m['solver_many']:.2f} s, load average {m['load_many']:.2f}")
    print(f"overhead per run beyond the solver: {1000 * overhead:.1f} ms (target < 50 ms)")
    print(f"speed-up {args.jobs} workers / 1: {m['wall_one'] / m['wall_many']:.2f}x "
          "(target >= 1.8x on an idle machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
