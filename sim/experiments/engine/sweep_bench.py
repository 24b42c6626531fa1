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

3. Where the second worker's time goes, on the same 216 cells:
   - the pool's own cost: the 1-worker and the 2-worker sweep with this process (and so
     the pool's workers) pinned to one core, where the workers cannot slow each other
     down: the extra CPU of the 2-worker run is the sweep layer's (pool start, per-process
     caches of the trace and the kernels, results sent back);
   - the machine's own scaling on this work: the 1-worker sweep alone, then two copies of
     it at once in two processes (separate stores). ``2 x alone / pair`` (wall) is the
     most any split of this work over two processes can give on the machine at that
     moment, and the copies' CPU against the lone run's is what sharing the machine costs
     each process (memory bandwidth, caches, clock).

The resume target (SIGKILL 20 times, same store) is a test:
``tests/sweep/test_execution.py::test_sigkill_at_random_moments_twenty_times...``.
The machine is shared: the load average before each measurement is printed with it.
Times are wall-clock seconds.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from instances.atomic import write_atomic
from sim.argparser import Parser
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


def _timed_sweep(spec: dict, out: str, jobs: int) -> tuple[float, float]:
    """``(wall s, CPU s of this process and its finished children)`` of one sweep."""
    r0, c0 = _cpu()
    t0 = time.perf_counter()
    s = run_sweep(spec, out, jobs=jobs)
    wall = time.perf_counter() - t0
    r1, c1 = _cpu()
    if s.failed:
        raise RuntimeError(s.text())
    return wall, (r1 - r0) + (c1 - c0)


def pinned_pool_cpu(spec: dict, d: Path) -> dict[int, float]:
    """CPU seconds of the sweep on 1 and on 2 workers with every process on one core (the
    first this process may use), so the two workers take turns instead of sharing the
    machine: what the 2-worker run spends beyond the 1-worker run is the sweep layer's."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        return {jobs: _timed_sweep(spec, str(d / f"pinned{jobs}.sqlite"), jobs)[1]
                for jobs in (1, 2)}
    finally:
        os.sched_setaffinity(0, before)


def machine_pair(spec: dict, d: Path) -> tuple[tuple[float, float], list[tuple[float, float]]]:
    """The 1-worker sweep alone, then two copies at once in two fresh processes:
    ``((wall, CPU) alone, [(wall, CPU) of each copy])``."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2) as pool:
        alone = pool.submit(_timed_sweep, spec, str(d / "alone.sqlite"), 1).result()
        pair = [pool.submit(_timed_sweep, spec, str(d / f"pair{i}.sqlite"), 1)
                for i in (1, 2)]
        return alone, [f.result() for f in pair]


def where_it_goes(spec: dict, d: Path, speedup: float) -> list[str]:
    """Section 3 of the results: the pool's own cost and the machine's own scaling."""
    pinned = pinned_pool_cpu(spec, d)
    load_pair = _load()
    alone, pair = machine_pair(spec, d)
    ceiling = 2 * alone[0] / max(w for w, _ in pair)
    extra = [c / alone[1] - 1 for _, c in pair]
    return ["## Where the second worker's time goes", "",
            *markdown_table(["measure", "value", "machine"], [
                ["CPU s, every process on one core: 1 worker / 2 workers",
                 f"{pinned[1]:.1f} / {pinned[2]:.1f} "
                 f"({100 * (pinned[2] / pinned[1] - 1):+.0f}%: the sweep layer's own cost)",
                 "pinned to one core"],
                ["the 1-worker sweep alone: wall / CPU s", f"{alone[0]:.1f} / {alone[1]:.1f}",
                 load_pair],
                ["two copies at once: wall / CPU s of each",
                 "; ".join(f"{w:.1f} / {c:.1f}" for w, c in pair)
                 + f" (CPU {', '.join(f'{100 * e:+.0f}%' for e in extra)})", _load()],
                ["the machine's own scaling on this work (2 x alone / pair)",
                 f"{ceiling:.2f}x", ""],
                ["the 2-worker sweep's speed-up above", f"{speedup:.2f}x", ""]]),
            "",
            "The 2-worker sweep cannot beat the machine's own scaling on the same work; the "
            "pinned run's extra CPU is all the sweep layer adds."]


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.engine.sweep_bench",
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
        lines += [*where_it_goes(spec, d, walls[1] / walls[2]), ""]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        RESULTS.mkdir(parents=True, exist_ok=True)
        write_atomic(RESULTS / "sweep_bench.md", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
