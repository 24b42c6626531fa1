"""How much ``schedsearch bench`` costs beyond the solvers, and how it scales with workers.

``python -m sim.experiments.engine.bench_bench [--files 100] [--n 12] [--jobs 2]
[--repeats 3]`` generates ``--files`` small minimum-epochs problems
(``sim.problems.generate``, ``--n`` jobs, K = 3) and runs 10 solvers on each (1,000 runs by
default), each time into a fresh store. After one warm-up bench (the one-time imports of
the solvers' libraries, OR-Tools among them, which forked pool workers then inherit), it
alternates ``--repeats`` times: the bench on 1 worker, the bench on ``--jobs`` workers, and
a CPU-bound pure-Python loop run by 1 process and then by ``--jobs`` processes at once
(the machine's own scaling: ``--jobs`` on an idle machine, less when other processes
share the cores). It prints, from that one run:

- runs per second on 1 and on ``--jobs`` workers, and the speed-up (median over the
  repeats of each repeat's ratio of wall times, with the range);
- the overhead per run on 1 worker: (wall time - the solvers' own seconds) / runs
  (reading the file, building the problem, the store's commits, the pool's messages);
- the machine's scaling and the 1-minute load average beside every repeat;
- whether the stored results (status, objective, bound of every run) are identical on 1
  and on ``--jobs`` workers;
- the CPU seconds of each bench (on ``--jobs`` workers: this process and the pool workers
  apart) and the speed-up they allow on an idle machine with perfect balance, an estimate
  that a loaded machine disturbs less than the wall-clock figure (it does not replace it).

The targets (issue figures): overhead < 50 ms per run, speed-up >= 1.8x on 2 workers on
an idle machine. Nothing is written outside a temporary directory. Times are wall-clock
seconds.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from sim.argparser import Parser

SOLVERS = ("brute", "cpsat", "unc", "fcfs", "fcfs-ff", "fcfs-bl", "fcfs-bb", "unc-ff",
           "unc-bl", "unc-bb")

#: iterations of the calibration loop (about 0.3 s of one core)
SPIN = 4_000_000


def _spin(n: int) -> float:
    """A CPU-bound pure-Python loop of ``n`` iterations; its wall seconds."""
    t0 = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return time.perf_counter() - t0


def machine_scaling(pool: ProcessPoolExecutor, jobs: int) -> float:
    """Work done by ``jobs`` processes at once per unit of work done by one alone in the
    same time (``jobs`` on an idle machine)."""
    t0 = time.perf_counter()
    pool.submit(_spin, SPIN).result()
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    for f in [pool.submit(_spin, SPIN) for _ in range(jobs)]:
        f.result()
    many = time.perf_counter() - t0
    return jobs * one / many


def _results(summary: Any) -> list[tuple[Any, ...]]:
    """What must not depend on the workers: every run's status, objective and bound."""
    return sorted((r["file"], r["solver"], r["status"], r["objective"], r["bound"])
                  for r in summary.runs)


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _one_bench(probs: Path, out: Path, jobs: int) -> dict[str, Any]:
    from sim.sweep.bench import bench

    load = os.getloadavg()[0]
    own, kids = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    s = bench([probs], out, solvers=list(SOLVERS), time_limit=10, jobs=jobs, plots=False)
    wall = time.perf_counter() - t0
    return {"wall": wall, "solver": sum(r["seconds"] or 0.0 for r in s.runs), "load": load,
            "cpu": _cpu(resource.RUSAGE_SELF) - own,  # this process, all its threads
            "cpu_workers": _cpu(resource.RUSAGE_CHILDREN) - kids,  # pool workers, joined
            "failed": s.failed, "results": _results(s)}


def cpu_bound(one: dict[str, Any], many: dict[str, Any], jobs: int) -> float:
    """The speed-up the CPU times allow on an idle machine with perfect balance: the
    1-worker bench's CPU seconds over the least wall time the ``jobs``-worker bench's CPU
    seconds need (its parent, its busiest worker, all of it over the cores)."""
    cores = min(jobs + 1, os.cpu_count() or 1)
    parent, workers = many["cpu"], many["cpu_workers"]
    return one["cpu"] / max(parent, workers / jobs, (parent + workers) / cores)


def measure(files: int, jobs: int, n: int = 12, repeats: int = 3) -> dict[str, Any]:
    """The figures of the module docstring; ``repeats`` rounds of (1 worker, ``jobs``
    workers, machine scaling)."""
    from sim.problems.generate import write_set
    from sim.sweep.bench import bench

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        probs = root / "problems"
        write_set("kresource_epochs", files, 1, probs, n=n, K=3)
        t0 = time.perf_counter()
        bench([sorted(probs.glob("*.json"))[0]], root / "warm", solvers=list(SOLVERS),
              time_limit=10, plots=False)
        out: dict[str, Any] = {"runs": files * len(SOLVERS),
                               "warmup": time.perf_counter() - t0, "rounds": []}
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            pool.submit(_spin, 1).result()
            for i in range(repeats):
                one = _one_bench(probs, root / f"one-{i}", 1)
                many = _one_bench(probs, root / f"many-{i}", jobs)
                load = os.getloadavg()[0]
                out["rounds"].append({"one": one, "many": many,
                                      "scaling": machine_scaling(pool, jobs),
                                      "scaling_load": load})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--n", type=int, default=12, help="jobs per problem")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    m = measure(args.files, args.jobs, args.n, args.repeats)
    runs, k = m["runs"], args.jobs
    print(f"{runs} runs ({args.files} files x {len(SOLVERS)} solvers, n = {args.n}); "
          f"warm-up bench (one-time imports) {m['warmup']:.2f} s; {os.cpu_count()} cores")
    print(f"| round | 1 worker: s, runs/s, load | {k} workers: s, runs/s, load | speed-up | "
          f"machine scaling ({k} processes), load | overhead ms/run | CPU s: 1 worker; "
          f"{k} workers: parent + workers | CPU-time bound on the speed-up |")
    print("|---|---|---|---|---|---|---|---|")
    ratios, overheads, bounds = [], [], []
    for i, r in enumerate(m["rounds"], 1):
        one, many = r["one"], r["many"]
        ratios.append(one["wall"] / many["wall"])
        overheads.append(1000 * (one["wall"] - one["solver"]) / runs)
        bounds.append(cpu_bound(one, many, k))
        print(f"| {i} | {one['wall']:.2f}, {runs / one['wall']:.0f}, {one['load']:.2f} | "
              f"{many['wall']:.2f}, {runs / many['wall']:.0f}, {many['load']:.2f} | "
              f"{ratios[-1]:.2f}x | {r['scaling']:.2f}x, {r['scaling_load']:.2f} | "
              f"{overheads[-1]:.1f} | {one['cpu']:.2f}; {many['cpu']:.2f} + "
              f"{many['cpu_workers']:.2f} | {bounds[-1]:.2f}x |")
    same = all(r["one"]["results"] == r["many"]["results"] for r in m["rounds"])
    failed = sum(r["one"]["failed"] + r["many"]["failed"] for r in m["rounds"])
    print(f"failed runs: {failed}; status, objective and bound of every run identical on 1 "
          f"and {k} workers: {'yes' if same else 'NO'}")
    print(f"overhead per run beyond the solver (1 worker, median): "
          f"{statistics.median(overheads):.1f} ms (target < 50 ms)")
    print(f"speed-up {k} workers / 1 (median of {len(ratios)}): "
          f"{statistics.median(ratios):.2f}x, range {min(ratios):.2f}-{max(ratios):.2f} "
          f"(target >= 1.8x on an idle machine; the machine's own scaling, median: "
          f"{statistics.median(r['scaling'] for r in m['rounds']):.2f}x)")
    print(f"CPU-time bound on the speed-up (median): {statistics.median(bounds):.2f}x (what "
          "the CPU seconds allow on an idle machine with perfect balance; an estimate, the "
          "wall-clock speed-up above is the measurement)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
