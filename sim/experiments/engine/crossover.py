"""Where the compiled batch engine pays for itself: the figures behind ``--engine auto``.

A compiled run costs, once per process, the import of numba and the load of its kernels
from numba's on-disk cache (they are already compiled); after that it saves
``python - compiled`` seconds per job. ``auto`` (:mod:`sim.batch.engine`) runs the compiled
engine when the jobs in front of it times the saving exceed the load. This script
measures both:

- **load** (s): a fresh interpreter imports the engine and runs it on a 6-job workload,
  minus a fresh interpreter running the Python engine on the same workload; the median of
  ``--repeat`` pairs, per kernel group (the batch kernel; the slack loop).
- **saving per job** (us): ``sim_seconds`` of the Python engine minus that of the compiled
  engine (kernels loaded before), over the first ``--jobs`` jobs of each ``--traces``,
  summed over the traces and divided by their jobs, per policy.

It prints one row per policy: the two engines' microseconds per job, the saving, the load,
and the crossover ``load / saving`` in jobs, which is what :data:`sim.batch.engine.CROSSOVER`
holds (rounded). Both engines must give the same start array; the script checks it.

Run: ``python -m sim.experiments.engine.crossover [--traces lublin_256,KTH-SP2]
[--jobs 10000] [--repeat 3]``; it prints the load average beside the figures.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

import numpy as np

from sim.argparser import Parser

#: policy label -> (registered name, options, kernel group of sim.batch.engine.CROSSOVER)
POLICIES = {
    "fcfs": ("fcfs", {}),
    "easy": ("easy", {}),
    "conservative": ("conservative", {}),
    "unconstrained": ("unconstrained", {}),
    "slack": ("slack", {"order": "AST"}),
}
#: a fresh interpreter: build a 6-job workload, time one simulation on ``engine``
_LOAD = """
import time
t0 = time.perf_counter()
from instances.job import Job, Workload
from sim.batch.machine import simulate
from sim.registry import make_policy
jobs = tuple(Job(id=i + 1, submit=i, runtime=5 + i, requested=10 + i, demand=(1,))
             for i in range(6))
w = Workload(jobs=jobs, capacity=(2,), name="load")
simulate(w, make_policy({name!r}, **{options!r}), engine={engine!r})
print(time.perf_counter() - t0)
"""


def load_seconds(name: str, options: dict, repeat: int) -> float:
    """Median extra seconds a fresh process spends on its first compiled run of ``name``
    (numba and the kernels loaded) over its first Python run."""
    def one(engine: str) -> float:
        code = _LOAD.format(name=name, options=options, engine=engine)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)
        return float(out.stdout.strip())

    return statistics.median(one("compiled") - one("python") for _ in range(repeat))


def per_job(name: str, options: dict, traces: Sequence[str], jobs: int
            ) -> tuple[float, float, int]:
    """Seconds per job of the Python and the compiled engine over the traces' first
    ``jobs`` jobs (the compiled kernels loaded first), and the jobs counted."""
    from instances.job import Workload
    from sim.batch.machine import simulate
    from sim.batch.runner import load_workload
    from sim.registry import make_policy

    py = comp = 0.0
    n = 0
    for trace in traces:
        w = load_workload(trace)
        w = Workload(jobs=w.jobs[:jobs], capacity=w.capacity, name=w.name)
        simulate(Workload(jobs=w.jobs[:5], capacity=w.capacity, name="warm"),
                 make_policy(name, **options), engine="compiled")
        a = simulate(w, make_policy(name, **options), engine="python")
        b = simulate(w, make_policy(name, **options), engine="compiled")
        if not np.array_equal(a.start, b.start):
            raise RuntimeError(f"{name} on {trace}: the engines' start times differ")
        py, comp, n = py + a.sim_seconds, comp + b.sim_seconds, n + len(w)
    return py / n, comp / n, n


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.engine.crossover",
                description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="lublin_256,KTH-SP2")
    ap.add_argument("--jobs", type=int, default=10_000, help="first jobs of each trace")
    ap.add_argument("--repeat", type=int, default=3, help="fresh-process pairs per load")
    ap.add_argument("--policies", default=",".join(POLICIES))
    args = ap.parse_args(argv)
    traces = [t for t in args.traces.split(",") if t]
    print(f"load average {os.getloadavg()[0]:.2f} at start; traces {traces}, first "
          f"{args.jobs} jobs each")
    print(f"{'policy':<14} {'python us/job':>13} {'compiled us/job':>15} "
          f"{'saved us/job':>12} {'load s':>7} {'crossover jobs':>14}")
    t0 = time.perf_counter()
    for label in args.policies.split(","):
        name, options = POLICIES[label]
        py, comp, _ = per_job(name, options, traces, args.jobs)
        load = load_seconds(name, options, args.repeat)
        saved = py - comp
        cross = load / saved if saved > 0 else float("inf")
        print(f"{label:<14} {py * 1e6:13.1f} {comp * 1e6:15.1f} {saved * 1e6:12.1f} "
              f"{load:7.2f} {cross:14.0f}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end; {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
