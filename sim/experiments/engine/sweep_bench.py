"""Benchmark of the sweep layer: overhead per cell, and speed-up of two workers.

    python -m sim.experiments.engine.sweep_bench            # writes results/sweep_bench.md
    python -m sim.experiments.engine.sweep_bench --quick    # smaller, printed only

1. Overhead per cell beyond the simulation: 100 cells of a 30-job synthetic workload
   (FCFS, so the simulation itself is negligible) run in this process into a fresh store;
   overhead = (sweep wall time - sum of the cells' simulation times) / cells. It holds
   building the workload, the policy, the validator, the metrics, the row and its
   committed store write. Measured in-process (``--jobs 1``) and on a pool of 2.
2. Speed-up: a 216-cell sweep on the KTH-SP2 months (12 months x 6 policies x 3 load
   factors: FCFS, EASY, conservative with its four compression readings; 128
   processors), once on 1 worker and once on 2, each into a fresh store; the two stores
   are checked to hold the same cells and metrics.

The resume target (SIGKILL 20 times, same store) is a test:
``tests/sweep/test_execution.py::test_sigkill_at_random_moments_twenty_times...``.
The machine is shared: the load average before each measurement is printed with it.
Times are wall-clock seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from instances.atomic import write_atomic
from sim.experiments.common import load_average, markdown_row, markdown_table, stamp
from sim.sweep import Store, run_sweep

RESULTS = Path(__file__).resolve().parent / "results"


def overhead_spec(n_cells: int) -> dict:
    return {"version": 1, "name": "overhead", "seeds": list(range(n_cells)),
            "workloads": [{"name": "tiny", "synthetic": {"n_jobs": 30, "capacity": 16}}],
            "policies": [{"name": "fcfs"}]}


def kth_spec(loads: list[float]) -> dict:
    return {"version": 1, "name": "kth-months", "procs": [128],
            "workloads": [{"name": "kth", "trace": "KTH-SP2", "months": "each",
                           "load": loads}],
            "policies": [{"name": "fcfs"}, {"name": "easy"}]
            + [{"name": "conservative", "label": f"cons-{c}", "options": {"compression": c}}
               for c in ("arrival", "start", "now", "none")]}


def _sim_total(path: Path) -> float:
    with Store.open(path, create=False) as st:
        return sum(r["sim_seconds"] or 0.0 for r in st.rows())


def _content(path: Path) -> dict:
    with Store.open(path, create=False) as st:
        return {r["key"]: json.dumps(r["metrics"], sort_keys=True) for r in st.rows(None)}


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, ch.ru_utime + ch.ru_stime


def _load() -> str:
    try:
        return f"load average {os.getloadavg()[0]:.2f}"
    except OSError:
        return "load average n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.experiments.engine.sweep_bench",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="40 overhead cells and 72 KTH cells (one load factor); "
                         "printed only")
    args = ap.parse_args(argv)
    lines = ["# Sweep layer benchmark", "",
             f"Produced at {stamp()} on {os.cpu_count()} cores (shared with other work), "
             f"load average {load_average()} at the start.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        n = 40 if args.quick else 100
        lines += ["## Overhead per cell beyond the simulation", "",
                  *markdown_table(["executor", "cells", "wall (s)", "simulation (s)",
                                   "overhead per cell (ms)", "machine"], [])]
        for jobs in (1, 2):
            out = d / f"overhead{jobs}.sqlite"
            load = _load()
            t0 = time.perf_counter()
            s = run_sweep(overhead_spec(n), out, jobs=jobs)
            wall = time.perf_counter() - t0
            sim = _sim_total(out)
            per = (wall - sim) / s.cells * 1000
            lines.append(markdown_row([f"{jobs} worker{'s' if jobs > 1 else ''}", s.cells,
                                       f"{wall:.2f}", f"{sim:.3f}", f"{per:.1f}", load]))
            print(lines[-1], file=sys.stderr)
        lines += ["", "With 2 workers the overhead includes starting the pool (once per "
                  "sweep), shared over the cells.", ""]
        loads = [1.0] if args.quick else [1.0, 1.2, 1.4]
        spec = kth_spec(loads)
        lines += ["## Speed-up on the KTH-SP2 months", "",
                  *markdown_table(["workers", "cells", "wall (s)", "speed-up",
                                   "CPU s: this process / workers", "machine"], [])]
        walls, cpu = {}, {}
        for jobs in (1, 2):
            out = d / f"kth{jobs}.sqlite"
            load = _load()
            r0, c0 = _cpu()
            t0 = time.perf_counter()
            s = run_sweep(spec, out, jobs=jobs)
            walls[jobs] = time.perf_counter() - t0
            r1, c1 = _cpu()
            cpu[jobs] = (r1 - r0, c1 - c0)
            assert s.failed == 0, s.text()
            lines.append(markdown_row([jobs, s.cells, f"{walls[jobs]:.1f}",
                                       f"{walls[1] / walls[jobs]:.2f}x",
                                       f"{cpu[jobs][0]:.1f} / {cpu[jobs][1]:.1f}", load]))
            print(lines[-1], file=sys.stderr)
        work1 = sum(cpu[1])
        main2, work2 = cpu[2]
        bound = work1 / max(work2 / 2, main2)
        lines += ["", "CPU-time bound on the speed-up with two free cores (the machine is "
                  "shared, so the wall-clock speed-up above depends on what else runs): the "
                  f"1-worker run takes {work1:.1f} CPU s, the 2-worker run {work2:.1f} CPU s "
                  f"in its workers and {main2:.1f} CPU s in the process that writes the "
                  f"store, so two idle cores would give at most {bound:.2f}x "
                  "(= CPU 1 worker / max(worker CPU / 2, writer CPU); balance and pool "
                  "start-up not counted)."]
        same = _content(d / "kth1.sqlite") == _content(d / "kth2.sqlite")
        lines += ["", f"Both stores hold the same cells and metrics: {same}.", ""]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        RESULTS.mkdir(parents=True, exist_ok=True)
        write_atomic(RESULTS / "sweep_bench.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
