"""Cost per job against the queue: FCFS, EASY and conservative on both engines (figures, not a
test).

Two tables from one process, so that every figure sees the same machine load:

- **Stationary**: the Lublin-Feitelson model (``instances.lublin``, 256 processors, seed 1,
  arrivals compressed by ``--lublin-factor``, offered load printed) at 10k, 30k, 100k and 240k
  jobs. A flat CPU time per job beside a flat queue means a cost linear in the number of jobs.
- **Overload**: SDSC-BLUE (1,152 processors) with its arrivals compressed 1.5x (every submit
  time ``s`` becomes ``s0 + floor((s - s0) / 1.5)``, ``s0`` the first submit time), cut into
  windows of ``--window`` jobs in arrival order. For each window: the CPU time per job
  spent while its jobs arrived, beside the time-averaged number of waiting jobs over the
  window's span (from its first to its last arrival). A cost per job that grows no faster
  than the queue keeps ``us/job / queue`` roughly constant.

The Python engine (``simulate(..., engine="python")``, ``Conservative()`` with its compiled
compression pass once the queue holds 8 jobs) reports its CPU time at every 1,000 arrivals
(its ``progress`` callback), so a window's cost is read in one run of the whole log. The
compiled engine reports only at the end, so a window's cost is the difference of the CPU
times of two prefixes (jobs ``[:b]`` minus jobs ``[:a]``, each the least of ``--repeat``
runs; each prefix also drains its own queue, which the difference counts once; a window
whose cost is below the timer's noise can come out negative). The compiled kernel is loaded
before the first timed run. Both engines must give the same start array on every run; the
script checks it.

Run: ``python -m sim.experiments.engine.scaling_bench [--sizes 10000,30000,100000,240000]
[--policies fcfs,easy,conservative] [--window 20000] [--overload-jobs N]
[--no-python-overload] [--no-compiled-overload]``. Prints both
tables with the load average and writes them to ``results/scaling_bench.md`` at the
repository top (a measurement of this machine at this moment, not a committed result).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from itertools import pairwise
from pathlib import Path

import numpy as np

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import markdown_row, markdown_table

SIZES = (10_000, 30_000, 100_000, 240_000)
POLICIES = ("fcfs", "easy", "conservative")
ENGINES = ("python", "compiled")
OVERLOAD_FACTOR = 1.5


def compress_arrivals(workload, factor: float):
    """The same jobs with inter-arrival times divided by ``factor`` (submit ``s`` becomes
    ``s0 + floor((s - s0) / factor)``; the order is kept)."""
    from instances.job import Workload

    s0 = workload.jobs[0].submit
    jobs = tuple(dataclasses.replace(j, submit=s0 + math.floor((j.submit - s0) / factor))
                 for j in workload.jobs)
    return Workload(jobs, workload.capacity, f"{workload.name}/x{factor:g}", workload.header)


def offered_load(workload) -> float:
    """Processor-seconds of work (run length at most the request) over capacity x span."""
    jobs = workload.jobs
    work = sum(min(j.runtime, j.requested) * j.procs for j in jobs)
    span = max(jobs[-1].submit - jobs[0].submit, 1)
    return work / (span * workload.procs)


def queue_over(submit: np.ndarray, start: np.ndarray, t0: int, t1: int) -> float:
    """Time-averaged number of waiting jobs (submitted, not started) over ``[t0, t1)``."""
    overlap = np.minimum(start, t1) - np.maximum(submit, t0)
    return float(np.clip(overlap, 0, None).sum()) / max(t1 - t0, 1)


def run(workload, policy: str, engine: str) -> tuple[float, np.ndarray, list[tuple[int, float]]]:
    """One simulation: its CPU seconds, its start array, and (Python engine) the CPU clock
    after each progress report as ``(jobs arrived so far, process_time)``."""
    from sim.batch.machine import simulate
    from sim.registry import make_policy

    marks: list[tuple[int, float]] = []
    arrived = 0

    def progress(k: int) -> None:
        nonlocal arrived
        arrived += k
        marks.append((arrived, time.process_time()))

    t = time.process_time()
    marks.append((0, t))
    s = simulate(workload, make_policy(policy), engine=engine, progress=progress)
    return time.process_time() - t, s.start, marks


def stationary(sizes, policies, factor: float) -> list[list]:
    """Rows of the stationary table (printed as they come)."""
    from instances.lublin import generate

    rows = []
    for n in sizes:
        w = generate(n, 256, 1)
        if factor != 1:
            w = compress_arrivals(w, factor)
        submit = np.array([j.submit for j in w.jobs], dtype=np.int64)
        load = offered_load(w)
        for pol in policies:
            starts = {}
            for eng in ENGINES:
                cpu, start, _ = run(w, pol, eng)
                starts[eng] = start
                q = queue_over(submit, start, int(submit[0]), int(submit[-1]) + 1)
                rows.append([n, f"{load:.2f}", pol, eng, f"{cpu:.2f}", f"{1e6 * cpu / n:.1f}",
                             f"{q:.1f}", ""])
                print(f"stationary n={n:6d} load {load:.2f} {pol:12s} {eng:8s} cpu {cpu:7.2f} s "
                      f"{1e6 * cpu / n:7.1f} us/job queue {q:7.1f}  "
                      f"loadavg {os.getloadavg()[0]:.1f}", flush=True)
            same = "yes" if np.array_equal(starts["python"], starts["compiled"]) else "NO"
            rows[-1][-1] = rows[-2][-1] = same
            print(f"stationary n={n:6d} {pol:12s} same starts on both engines: {same}",
                  flush=True)
    return rows


def overload(policies, window: int, python: bool, repeat: int,
             jobs: int | None = None, compiled: bool = True) -> list[list]:
    """Rows of the overload table: one per (policy, engine, window)."""
    from instances.bundled import load_trace
    from instances.job import Workload

    w = compress_arrivals(load_trace("SDSC-BLUE"), OVERLOAD_FACTOR)
    if jobs is not None:
        w = Workload(w.jobs[:jobs], w.capacity, f"{w.name}[:{jobs}]")
    n = len(w)
    submit = np.array([j.submit for j in w.jobs], dtype=np.int64)
    bounds = list(range(0, n, window))[1:] + [n]
    bounds = [0] + [b for b in bounds if n - b >= window // 2 or b == n]
    print(f"overload: {w.name}, {n} jobs, offered load {offered_load(w):.2f}", flush=True)
    rows = []
    for pol in policies:
        ref = None
        if python:
            cpu, ref, marks = run(w, pol, "python")
            arr = np.array([m[0] for m in marks])
            clock = np.array([m[1] for m in marks])
            for a, b in pairwise(bounds):
                ia = int(np.searchsorted(arr, a))
                ib = int(np.searchsorted(arr, b))
                jobs_in = int(arr[ib] - arr[ia])
                cost = float(clock[ib] - clock[ia])
                rows.append(_window_row(pol, "python", a, b, jobs_in, cost, submit, ref))
            print(f"overload {pol:12s} python   whole log cpu {cpu:7.2f} s  "
                  f"loadavg {os.getloadavg()[0]:.1f}", flush=True)
        if not compiled:
            continue
        prev_cpu = 0.0
        costs = []
        for a, b in pairwise(bounds):
            prefix = Workload(w.jobs[:b], w.capacity, f"{w.name}[:{b}]")
            cpu, start, _ = run(prefix, pol, "compiled")
            for _ in range(repeat - 1):  # short runs: the least of a few
                cpu = min(cpu, run(prefix, pol, "compiled")[0])
            costs.append((a, b, cpu - prev_cpu))
            prev_cpu = cpu
        same = "n/a" if ref is None else ("yes" if np.array_equal(start, ref) else "NO")
        for a, b, cost in costs:
            rows.append(_window_row(pol, "compiled", a, b, b - a, cost, submit, start))
        for r in rows:
            if r[0] == pol:
                r[-1] = same
        print(f"overload {pol:12s} compiled whole log cpu {prev_cpu:7.2f} s (sum of window "
              f"differences)  same starts {same}  loadavg {os.getloadavg()[0]:.1f}", flush=True)
    return rows


def _window_row(pol: str, eng: str, a: int, b: int, jobs_in: int, cost: float,
                submit: np.ndarray, start: np.ndarray) -> list:
    """One overload row: jobs ``[a, b)``, ``cost`` CPU seconds for ``jobs_in`` arrivals."""
    t0, t1 = int(submit[a]), int(submit[b - 1]) + 1
    q = queue_over(submit, start, t0, t1)
    us = 1e6 * cost / max(jobs_in, 1)
    line = [pol, eng, f"{a}-{b}", f"{us:.1f}", f"{q:.1f}", f"{us / max(q, 1e-9):.2f}", ""]
    print(f"  {pol:12s} {eng:8s} jobs {a:6d}-{b:6d} {us:8.1f} us/job queue {q:7.1f} "
          f"us/job/queue {us / max(q, 1e-9):6.2f}", flush=True)
    return line


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--lublin-factor", type=float, default=1.0,
                    help="divide the Lublin inter-arrival times by this (1: the model's load)")
    ap.add_argument("--window", type=int, default=20_000, help="jobs per overload window")
    ap.add_argument("--repeat", type=int, default=3,
                    help="compiled overload prefixes: the least CPU time of this many runs")
    ap.add_argument("--overload-jobs", type=int, default=None,
                    help="overload table on the first this many jobs of the compressed log")
    ap.add_argument("--no-stationary", action="store_true")
    ap.add_argument("--no-overload", action="store_true")
    ap.add_argument("--no-python-overload", action="store_true",
                    help="overload table for the compiled engine only")
    ap.add_argument("--no-compiled-overload", action="store_true",
                    help="overload table for the Python engine only")
    args = ap.parse_args(argv)
    if args.no_stationary:  # the stationary table is what --sizes and the factor shape
        ap.refuse_unread(ap.options() - {"sizes", "lublin_factor"}, "--no-stationary")
    if args.no_overload:  # the overload table is what these shape
        ap.refuse_unread(ap.options() - {"window", "repeat", "overload_jobs",
                                         "no_python_overload", "no_compiled_overload"},
                         "--no-overload")
    policies = args.policies.split(",")
    from instances.job import Job, Workload
    from sim.batch.machine import simulate
    from sim.registry import make_policy

    # warm: numba import and the kernels' cache loads, paid once per process
    warm = Workload(tuple(Job(i + 1, i, 5, 5, (1 + i % 3,)) for i in range(200)), (4,), "warm")
    for pol in policies:
        for eng in ENGINES:
            simulate(warm, make_policy(pol), engine=eng)
    load0 = provenance.load_average()
    st = [] if args.no_stationary else stationary([int(x) for x in args.sizes.split(",")],
                                                    policies, args.lublin_factor)
    ov = [] if args.no_overload else overload(policies, args.window, not args.no_python_overload,
                                          args.repeat, args.overload_jobs,
                                          not args.no_compiled_overload)
    load1 = provenance.load_average()
    lines = [
        "# Cost per job against the queue",
        "",
        f"`{provenance.command(argv if argv is None else ['python', '-m', __name__, *argv])}` "
        f"at commit {provenance.commit()}; load average (1/5/15 min) {load0} at the start, "
        f"{load1} at the end. us/job is CPU time per job; queue is the time-averaged number "
        "of waiting jobs.",
        "",
    ]
    if st:
        lines += ["## Stationary: Lublin model, 256 processors, seed 1", "",
                  *markdown_table(["jobs", "offered load", "policy", "engine", "cpu [s]",
                                   "us/job", "queue", "same starts"], [], align="rrllrrrl")]
        lines += [markdown_row(r) for r in st]
        lines.append("")
    if ov:
        lines += [f"## Overload: SDSC-BLUE, arrivals compressed {OVERLOAD_FACTOR}x, windows of "
                  f"{args.window} jobs", "",
                  *markdown_table(["policy", "engine", "jobs", "us/job", "queue",
                                   "us/job / queue", "same starts"], [], align="llrrrrl")]
        lines += [markdown_row(r) for r in ov]
    print("\n".join(lines))
    out = Path("results")
    out.mkdir(exist_ok=True)
    write_atomic(out / "scaling_bench.md", "\n".join(lines) + "\n")
    bad = any(r[-1] == "NO" for r in st + ov)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
