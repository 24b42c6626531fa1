"""Speed of the Gymnasium environment (``sim.batch.env``) beside the batch simulator.

On the same windows of a trace (default: 40 random windows of 256 jobs of lublin_256,
seed 1), it runs

- the environment with always action 0 (FCFS; with ``--backfill easy`` EASY), counting
  environment steps (agent decisions) per second, observation and info included, the
  episode's metrics and validation included (``check=True``, the default);
- ``simulate(window, FCFS())`` / ``EASY()``, counting the policy's decisions (calls of
  ``schedule``: one per event instant) per second.

Both report jobs per second too. Rates are given per second of process CPU time (the
one core this process ran on, unaffected by other processes waiting for a core) and per
wall-clock second. The window list is drawn once and shared by both.

Run: ``python -m sim.experiments.engine.env_bench [--trace lublin_256] [--windows 40]
[--length 256] [--repeat 3]``; prints a table (nothing is written).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.argparser import Parser


def _timed(fn) -> tuple[Any, float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


def bench_env(env, windows: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """Run action 0 on every window; returns (steps, jobs)."""
    steps = jobs = 0
    for start, length in windows:
        env.reset(options={"start": start, "length": length})
        done = False
        while not done:
            _, _, done, _, _ = env.step(0)
            steps += 1
        jobs += length
    return steps, jobs


def bench_simulate(workload, backfill: str | None, windows: Sequence[tuple[int, int]]
                   ) -> tuple[int, int]:
    """``simulate`` FCFS or EASY on every window; returns (decisions, jobs)."""
    from heuristics.backfill import EASY, FCFS
    from sim.batch.env import _window_workload
    from sim.batch.machine import simulate

    base = EASY if backfill == "easy" else FCFS
    calls = [0]

    class Counted(base):  # type: ignore[misc, valid-type]
        def schedule(self, now: int):
            calls[0] += 1
            return super().schedule(now)

    jobs = 0
    parts = [_window_workload(workload, s, n) for s, n in windows]
    for w in parts:
        simulate(w, Counted())
        jobs += len(w)
    return calls[0], jobs


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default="lublin_256")
    ap.add_argument("--windows", type=int, default=40)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--obs-jobs", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    from sim.batch.env import SchedulingEnv

    rng = np.random.default_rng(args.seed)
    print(f"python {platform.python_version()}, {platform.machine()}; trace {args.trace}, "
          f"{args.windows} windows of {args.length} jobs (seed {args.seed}), "
          f"obs_jobs {args.obs_jobs}, best of {args.repeat}")
    header = (f"{'backfill':<9} {'what':<22} {'count':>8} {'per CPU s':>11} "
              f"{'per wall s':>11} {'jobs/CPU s':>11}")
    print(header)
    print("-" * len(header))
    windows: list[tuple[int, int]] = []
    for backfill in (None, "easy"):
        env = SchedulingEnv(args.trace, window=args.length, obs_jobs=args.obs_jobs,
                            backfill=backfill)
        if not windows:
            total = len(env.workload)
            windows = [(int(s), args.length) for s in
                       rng.integers(0, total - args.length + 1, size=args.windows)]
        for what, fn in (("env steps (action 0)", lambda e=env, ws=windows: bench_env(e, ws)),
                         ("simulate decisions", lambda e=env, b=backfill, ws=windows:
                          bench_simulate(e.workload, b, ws))):
            best = None
            for _ in range(args.repeat):
                (count, jobs), cpu, wall = _timed(fn)
                if best is None or cpu < best[1]:
                    best = (count, cpu, wall, jobs)
            count, cpu, wall, jobs = best
            print(f"{backfill or 'none':<9} {what:<22} {count:>8} {count / cpu:>11,.0f} "
                  f"{count / wall:>11,.0f} {jobs / cpu:>11,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
