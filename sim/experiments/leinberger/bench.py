"""Speed benchmarks of the K-resource models and policies.

    python -m sim.experiments.leinberger.bench [epochs|selection|response|sim|growth|all]
        [--quick]

- epochs: 20 random instances of 60 consecutive jobs, K = 4, of the paper's workload on
  two machines (Feitelson P = 128, 8 units per processor: the paper's; P = 32, 4 units:
  more epochs per instance), CP-SAT (1 worker) with and without the greedy-bound
  shortcut: median time, number proved; then the largest n (doubling from 60) whose
  instance CP-SAT proves within 60 s.
- selection: 20 decisions with a queue of 256 candidates, K = 8 (requirements of the
  paper's workload; free vector uniform in [0.2, 0.6] of capacity, E uniform in [0, F],
  half of the candidates late): CP-SAT and CBC median time, proved count.
- response: 5 instances of 30 jobs, K = 4 (``kresource_figs.response_instance``), CP-SAT
  60 s: status, gap, time.
- sim: FF-EASY, BB-EASY (when the build has ``select``) and OPT-EASY simulation time on a
  10,000-job K = 8 workload calibrated to an FF-EASY queue of 128.
- growth: FF-EASY (and BB-EASY) seconds per 1000 jobs at 10k, 20k, 40k, 80k jobs
  (the same rate, calibrated at 10k to a queue of 64).

Timings are wall-clock seconds on a shared 2-core machine (noisy).
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace

import numpy as np

from sim.argparser import Parser


def _p(*a: object) -> None:
    print(*a, flush=True)


def bench_epochs(quick: bool) -> None:
    from instances.kresource import KResourceSpec, generate
    from models.kresource.cpsat import solve_epochs
    from sim.problems.kresource import EpochProblem

    count = 5 if quick else 20
    for P, res in ((128, 8), (32, 4)):
        w = generate(KResourceSpec(K=4, jobs=5000, seed=11, P=P, resolution=res))
        rng = np.random.default_rng(1)
        for gb in (True, False):
            times, proved, objs = [], 0, []
            for _ in range(count):
                a = int(rng.integers(0, len(w.jobs) - 60))
                p = EpochProblem(w.capacity, tuple(j.demand for j in w.jobs[a:a + 60]))
                r = solve_epochs(p, time_limit=60, greedy_bound=gb)
                times.append(r.runtime)
                proved += r.status.value == "OPTIMAL"
                objs.append(r.objective)
            _p(f"epochs P={P} K=4 n=60 greedy_bound={gb}: median {statistics.median(times):.3f} s,"
               f" max {max(times):.2f} s, proved {proved}/{count}, epochs "
               f"{min(objs):.0f}..{max(objs):.0f}")
        n = 60
        while n <= (240 if quick else 1920):
            a = 0
            p = EpochProblem(w.capacity, tuple(j.demand for j in w.jobs[a:a + n]))
            r = solve_epochs(p, time_limit=60, greedy_bound=False)
            _p(f"  P={P} n={n}: {r.status.value} epochs {r.objective:.0f} bound {r.bound} "
               f"in {r.runtime:.2f} s")
            if r.status.value != "OPTIMAL":
                break
            n *= 2


def selection_instances(count: int, n: int = 256, K: int = 8, seed: int = 3) -> list:
    from instances.kresource import KResourceSpec, generate
    from sim.problems.kresource import SelectionProblem

    w = generate(KResourceSpec(K=K, jobs=5000, seed=seed))
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        a = int(rng.integers(0, len(w.jobs) - n))
        cap = w.capacity
        free = tuple(int(c * rng.uniform(0.2, 0.6)) for c in cap)
        extra = tuple(int(f * rng.uniform(0, 1)) for f in free)
        out.append(SelectionProblem(cap, free, extra, tuple(j.demand for j in w.jobs[a:a + n]),
                                    tuple(bool(x) for x in rng.random(n) < 0.5)))
    return out


def recorded_decisions(jobs: int = 4000, K: int = 8, queue: float = 256,
                       min_candidates: int = 200) -> list:
    """Selection problems met by OPT-EASY on a K-resource workload calibrated to an
    FF-EASY queue of ``queue`` jobs, those with at least ``min_candidates`` candidates."""
    from models.kresource.policy import OptEASY
    from sim.batch.machine import simulate

    w, cal = _workload(K, jobs, queue)
    pol = OptEASY(record=True)
    t = time.perf_counter()
    simulate(w, pol)
    _p(f"  OPT-EASY on {jobs} jobs K={K} (FF-EASY queue {cal.queue:.0f}): "
       f"{time.perf_counter() - t:.1f} s, {pol.stats}")
    return [p for p in pol.decisions if p.n >= min_candidates]


def bench_selection(quick: bool) -> None:
    from models.kresource import cpsat, ilp

    _p("selection, decisions recorded in a simulation (queue 256, K = 8):")
    probs = recorded_decisions(2000 if quick else 4000)
    probs = probs[:: max(1, len(probs) // (20 if quick else 100))]
    for name, solve in (("cpsat", cpsat.solve_selection), ("ilp", ilp.solve_selection)):
        times, proved, vals = [], 0, []
        for p in probs:
            r = solve(p, time_limit=10)
            times.append(r.runtime)
            proved += r.status.value == "OPTIMAL"
            vals.append(r.objective)
        _p(f"  {name}: {len(probs)} decisions with >= 200 candidates (median "
           f"{statistics.median(p.n for p in probs):.0f}, eligible median "
           f"{statistics.median(sum(map(p.eligible, range(p.n))) for p in probs):.0f}): "
           f"median {statistics.median(times):.4f} s, p90 {np.percentile(times, 90):.4f} s, "
           f"max {max(times):.3f} s, proved {proved}/{len(probs)}")
        if name == "cpsat":
            ref = vals
        else:
            same = sum(a == b for a, b in zip(ref, vals, strict=True))
            _p(f"  CP-SAT and CBC optima equal on {same}/{len(probs)}")
    _p("selection, synthetic stress (256 candidates, K = 8, F in [0.2, 0.6] of capacity):")
    for p in selection_instances(3 if quick else 5):
        r = cpsat.solve_selection(p, time_limit=10)
        _p(f"  cpsat: {r.status.value} in {r.runtime:.2f} s, gap {r.gap or 0:.2e}, "
           f"eligible {sum(map(p.eligible, range(p.n)))}")


def bench_response(quick: bool) -> None:
    from models.kresource import cpsat, ilp, portfolio
    from sim.experiments.leinberger.figs import response_instance

    solve_response = portfolio.solve_response
    for seed in range(1, 3 if quick else 6):
        p = response_instance(30, 4, seed)
        for name, solve in (("cpsat", cpsat.solve_response), ("ilp", ilp.solve_response),
                            ("portfolio", portfolio.solve_response)):
            r = solve(p, time_limit=60)
            _p(f"response n=30 K=4 seed {seed} {name}: {r.status.value} obj {r.objective} "
               f"bound {r.bound} gap {r.gap or 0:.4f} in {r.runtime:.2f} s "
               f"(horizon {p.horizon()})")
    from sim.problems.kresource import ResponseProblem

    rng = np.random.default_rng(5)
    for n in (30, 60):
        p = ResponseProblem((10,) * 4, tuple(int(x) for x in rng.integers(0, 10, n)),
                            tuple(int(x) for x in rng.integers(1, 21, n)),
                            tuple(tuple(int(x) for x in rng.integers(1, 8, 4)) for _ in range(n)))
        r = solve_response(p, time_limit=60)
        _p(f"response stress n={n} K=4 (durations 1-20, demands 1-7 of 10, releases 0-9): "
           f"{r.status.value} gap {abs(r.gap or 0):.4f} in {r.runtime:.2f} s")


def _workload(K: int, jobs: int, queue: float, seed: int = 1):
    from instances.kresource import KResourceSpec, generate
    from sim.batch.calibrate import calibrate

    spec = KResourceSpec(K=K, jobs=jobs, seed=seed)
    cal = calibrate(spec, queue)
    return generate(replace(spec, rate=cal.rate)), cal


def bench_sim(quick: bool) -> None:
    from sim.batch.machine import simulate
    from sim.experiments.leinberger.figs import _policy

    w, cal = _workload(8, 2000 if quick else 10000, 128)
    _p(f"sim: {len(w.jobs)} jobs K=8, rate {cal.rate:.4g}/s, FF-EASY queue {cal.queue:.1f}")
    base = None
    for label, name, opts in (("FF-EASY", "easy", {"select": "ff"}),
                              ("BB-EASY", "easy", {"select": "bb"}),
                              ("OPT-EASY", "opt-easy", {})):
        pol = _policy(name, opts)
        if pol is None:
            _p(f"  {label}: not in this build")
            continue
        t = time.perf_counter()
        simulate(w, pol)
        dt = time.perf_counter() - t
        base = base or dt
        extra = f" ({pol.stats})" if hasattr(pol, "stats") else ""
        _p(f"  {label}: {dt:.2f} s ({dt / base:.2f}x FF-EASY){extra}")


def bench_growth(quick: bool) -> None:
    from instances.kresource import KResourceSpec, generate
    from sim.batch.machine import simulate
    from sim.experiments.leinberger.figs import _policy

    _, cal = _workload(4, 10000, 64)
    for n in (10000, 20000) if quick else (10000, 20000, 40000, 80000):
        w = generate(KResourceSpec(K=4, jobs=n, seed=1, rate=cal.rate))
        for label, name, opts in (("FF-EASY", "easy", {"select": "ff"}),
                                  ("BB-EASY", "easy", {"select": "bb"})):
            pol = _policy(name, opts)
            if pol is None:
                continue
            t = time.perf_counter()
            s = simulate(w, pol)
            dt = time.perf_counter() - t
            sub = np.array([j.submit for j in w.jobs])
            from sim.batch.calibrate import queue_average
            _p(f"growth K=4 n={n} {label}: {dt:.2f} s, {1000 * dt / n:.3f} s per 1000 jobs, "
               f"queue {queue_average(s.start, sub):.1f}")


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", default="all",
                    choices=("epochs", "selection", "response", "sim", "growth", "all"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    todo = ["epochs", "selection", "response", "sim", "growth"] if a.what == "all" else [a.what]
    for w in todo:
        globals()[f"bench_{w}"](a.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
