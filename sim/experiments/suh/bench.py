"""Benchmarks of the memory model and the grouping solvers (figures, not timed tests).

1. Model vs LRU: the combined miss rate of eqs. 2-3 (the paper), of our fluctuation
   extension with the spread implied by the curves, and with spreads measured from the
   streams, against the trace-driven LRU simulation of streams interleaved in proportion
   to their rates, over memory sizes (target: within 5% relative where misses matter,
   i.e. a simulated rate >= 1%).
2. Exact grouping, 16 jobs on 4 processors: all feasible groups enumerated and costed,
   then the ILP and CP-SAT.
3. Exhaustive enumeration: number of partitions and time, to show where it stops being
   possible.
4. Stack-distance miss-rate curves of 1,000,000 references.

Run ``python -m sim.experiments.suh.bench``; prints the tables and writes
``results/memory_bench.md``. Machine, commit and date are printed with the figures.
"""

from __future__ import annotations

import datetime
import platform
import time
from pathlib import Path

import numpy as np

from instances.atomic import write_atomic
from instances.refstreams import hot_cold, hot_scan, loop, phases, uniform
from models.grouping import (
    count_partitions,
    group_table,
    solve_cpsat,
    solve_exhaustive,
    solve_ilp,
)
from sim.experiments import common as provenance
from sim.experiments.common import markdown_row, markdown_table
from sim.memory.lru import (
    footprint_spread,
    interleave,
    miss_rate_curve,
    simulate_lru,
    stack_distances,
)
from sim.memory.model import MissRateCurve, steady_state
from sim.problems.grouping import random_problem

RESULTS = Path(__file__).resolve().parent / "results"
N = 1_200_000


MEMORIES = (500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000, 8000, 10000)
MODELS = ("eqs. 2-3", "+ fluctuations", "+ measured spread")


def _mixes() -> dict[str, tuple[list[np.ndarray], list[float]]]:
    base = [hot_cold(3000, N, hot=300, p_hot=0.9, seed=1), uniform(2000, N, seed=2),
            phases(4000, N, working_set=800, phase_length=20000, seed=3),
            hot_scan(2500, N, hot=200, p_hot=0.95, seed=4)]
    return {
        "4 streams, equal rates": (base, [1.0, 1.0, 1.0, 1.0]),
        "4 streams, rates 1:2:1:3": (base, [1.0, 2.0, 1.0, 3.0]),
        "hot/cold 6000 + loop 1000 + uniform 3000, rates 2:1:1": (
            [hot_cold(6000, N, hot=1000, p_hot=0.8, seed=5), loop(1000, N),
             uniform(3000, N, seed=6)], [2.0, 1.0, 1.0]),
        "loop 800 + loop 1500 + hot/cold 4000, rates 1:1:2": (
            [loop(800, N), loop(1500, N), hot_cold(4000, N, hot=500, p_hot=0.85, seed=7)],
            [1.0, 1.0, 2.0]),
        "loop 2000 + geometric phases 3000 + hot/scan 2000, rates 1:2:1": (
            [loop(2000, N), phases(3000, N, working_set=600, phase_length=15000, seed=8,
                                   lengths="geometric"),
             hot_scan(2000, N, hot=150, p_hot=0.9, seed=9)], [1.0, 2.0, 1.0]),
    }


def model_vs_lru() -> tuple[str, dict[str, float]]:
    """Error table of the three model variants against LRU, and the worst error of each
    where the simulated miss rate is at least 1%."""
    lines = markdown_table(["streams", "memory (blocks)", "LRU", "eqs. 2-3 (paper)", "error",
                            "+ fluctuations", "error", "+ measured spread", "error"], [])
    worst = dict.fromkeys(MODELS, 0.0)
    per_mix = []
    for name, (streams, rates) in _mixes().items():
        mix_worst = dict.fromkeys(MODELS, 0.0)
        curves = [MissRateCurve(tuple(miss_rate_curve(s, skip=N // 4))) for s in streams]
        spreads = [footprint_spread(s, skip=N // 4) for s in streams]
        tr, ow = interleave(streams, rates, N)
        d = stack_distances(tr)
        for cap in MEMORIES:
            sim = simulate_lru(tr, ow, cap, warmup=N // 4, distances=d)
            values = (
                float(steady_state(curves, rates, cap).combined[0]),
                float(steady_state(curves, rates, cap, fluctuations=True).combined[0]),
                float(steady_state(curves, rates, cap, fluctuations=True,
                                   spreads=spreads).combined[0]),
            )
            matters = sim.combined >= 0.01
            cells = []
            for model, v in zip(MODELS, values, strict=True):
                err = (v - sim.combined) / sim.combined if sim.combined > 0 else float("nan")
                if matters:
                    worst[model] = max(worst[model], abs(err))
                    mix_worst[model] = max(mix_worst[model], abs(err))
                cells += [f"{100 * v:.3f}%", f"{100 * err:+.2f}%"]
            lines.append(markdown_row([
                name, cap, f"{100 * sim.combined:.3f}%{'' if matters else ' (< 1%)'}", *cells]))
        per_mix.append([name, *(f"{100 * mix_worst[m]:.2f}%" for m in MODELS)])
    lines += ["", "Largest relative error per mix where the LRU miss rate is at least 1%:", "",
              *markdown_table(["streams", *MODELS], per_mix)]
    return "\n".join(lines), worst


def exact16() -> str:
    lines = markdown_table(["instance", "groups", "enumerate + cost (s)", "ILP (s)",
                            "CP-SAT (s)", "status", "optimum"], [])
    for max_procs in (1, 2, 3):
        for seed in range(3):
            p = random_problem(16, 4, seed=seed, max_procs=max_procs, memory=2000)
            t = time.perf_counter()
            members, _ = group_table(p)
            t_tab = time.perf_counter() - t
            ilp, cp = solve_ilp(p), solve_cpsat(p)
            agree = abs(ilp.objective - cp.objective) <= 1e-7 * abs(ilp.objective)
            lines.append(markdown_row([
                f"J=16 P=4 Q in 1..{max_procs} seed {seed}", members.shape[0], f"{t_tab:.2f}",
                f"{ilp.runtime:.2f}", f"{cp.runtime:.2f}",
                f"{ilp.status.value}/{cp.status.value}{'' if agree else ' DISAGREE'}",
                f"{ilp.objective:.4f}"]))
    return "\n".join(lines)


def exhaustive_limit() -> str:
    lines = markdown_table(["jobs", "partitions", "exhaustive (s)", "partitions/s",
                            "estimate if not run"], [])
    for max_procs in (2, 1):
        rate = None
        for J in range(6, 17):
            p = random_problem(J, 4, seed=J, max_procs=max_procs)
            n = count_partitions(p)
            name = f"J={J}, P=4, Q in 1..{max_procs}"
            if n <= 1_000_000:
                r = solve_exhaustive(p)
                rate = n / max(r.runtime, 1e-9)
                lines.append(markdown_row([name, f"{n:,}", f"{r.runtime:.2f}", f"{rate:,.0f}",
                                           None]))
            else:
                est = n / rate if rate else float("nan")
                lines.append(markdown_row([name, f"{n:,}", "not run", None,
                                           f"{est:,.0f} s ({est / 3600:.1f} h)"]))
    return "\n".join(lines)


def stack_timing() -> str:
    lines = markdown_table(["stream (1,000,000 references)", "distinct blocks", "time (s)"], [])
    for name, s in (("uniform 50,000", uniform(50_000, 1_000_000, seed=1)),
                    ("hot/cold 20,000", hot_cold(20_000, 1_000_000, hot=2000, p_hot=0.8,
                                                 seed=2)),
                    ("loop 100,000", loop(100_000, 1_000_000))):
        t = time.perf_counter()
        m = miss_rate_curve(s)
        lines.append(markdown_row([name, m.size - 1, f"{time.perf_counter() - t:.2f}"]))
    return "\n".join(lines)


def main() -> None:
    commit = provenance.commit()
    head = (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit "
            f"{commit}, {platform.processor() or platform.machine()}, Python "
            f"{platform.python_version()}, single thread")
    print(head)
    sections = []
    print("\n1. model vs LRU simulation, interleaved streams")
    t, worst = model_vs_lru()
    print(t)
    msg = "largest relative error where the miss rate >= 1%, all mixes: " + ", ".join(
        f"{m} {100 * w:.2f}%" for m, w in worst.items())
    print(msg)
    sections.append("## 1. Model vs LRU simulation (interleaved streams)\n\n" + t + "\n\n" + msg)
    print("\n2. exact grouping, 16 jobs on 4 processors")
    t = exact16()
    print(t)
    sections.append("## 2. Exact grouping, 16 jobs, 4 processors\n\n" + t)
    print("\n3. exhaustive enumeration")
    t = exhaustive_limit()
    print(t)
    sections.append("## 3. Where exhaustive enumeration stops\n\n" + t)
    print("\n4. stack distances")
    t = stack_timing()
    print(t)
    sections.append("## 4. Stack-distance curves, 10^6 references\n\n" + t)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "memory_bench.md"
    write_atomic(out, "# Memory model and grouping benchmarks\n\nGenerated by `python -m "
                   "sim.experiments.suh.bench`; " + head + ". The other core of the "
                   "machine may have been busy.\n\n" + "\n\n".join(sections) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
