"""Speed of the time-sharing simulator on one CSM experiment point.

``python -m sim.experiments.gine.bench [--scale S] [--policy csm]`` runs the issue's point
(32 nodes, 1000 jobs, one seed, memory load 1.0, mfreq 100 ms) at tc / memory scale S
(default 0.01, the reproduction's scale; 1.0 = the paper's sizes, see --full), then the
growth with the number of nodes (8, 16, 32 at 1000 jobs) and of jobs (250, 500, 1000 at
32 nodes). Prints simulated events, CPU seconds of the process (the machine is shared;
wall time is printed for the main point only) and events per CPU second.
``--full`` also runs 100 jobs at scale 1.0 and extrapolates the full-size point linearly
in jobs. ``--engine compiled`` runs the numba engine (:mod:`sim.timeshare.fast`, same
event log); ``--compare`` also runs the main point on the Python engine (same events).
``--mixed LOAD`` times instead one point of :mod:`sim.experiments.gine.mixed` (one mixed
stream, local tasks not counted, pdt 0.5, compiled engine) at ``--scale``, ``--mfreq``
and ``--policy``, seed ``--seed``, with mit = ``--factor`` x eq. 5's mit (default: the
factor calibrated at scale 0.01, ``results/mixed-scale0.01/calib_mit.json``): the cost of
one run of that study without calibrating at the scale.
The first compiled run in a fresh clone compiles the kernel (about 45 s CPU, cached on
disk): it is done and timed before the measured runs. Times inside the simulator are
microseconds; wall times are seconds.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

from heuristics.coscheduling import by_name
from sim.argparser import Parser
from sim.timeshare.csm import run_point
from sim.timeshare.workload import CSMConfig, calibrate_mit

MIXED_CALIB = Path(__file__).resolve().parent / "results" / "mixed-scale0.01" / "calib_mit.json"


def one(n_nodes: int, jobs: int, scale: float, policy: str, seed: int = 0,
        engine: str = "python") -> tuple[int, float]:
    """Events and CPU seconds of this process (``time.process_time``: the machine is
    shared, so wall time overstates the cost; both are printed by ``main``)."""
    cfg = CSMConfig(n_nodes=n_nodes, n_jobs=jobs, mem_load=1.0, tc_scale=scale,
                    mem_scale=scale, mfreq_ms=100.0,
                    large_sizes=tuple(s for s in (8, 16, 32) if s <= n_nodes))
    t, w = time.process_time(), time.perf_counter()
    r = run_point(cfg, by_name(policy), seed, engine=engine)
    cpu = time.process_time() - t
    one.last_wall = time.perf_counter() - w  # type: ignore[attr-defined]
    return r.events, cpu


def mixed_point(load: float, scale: float, mfreq_ms: float, policy: str, seed: int,
                factor: float | None = None) -> None:
    """Time one point of the mixed-stream study (see the module docstring); prints
    events, CPU and wall seconds, tasks per node and the measured mem_load."""
    from sim.experiments.gine import mixed

    c = mixed.base(load, scale, pdt=0.5, mfreq_ms=mfreq_ms)
    if factor is None:
        v = json.loads(MIXED_CALIB.read_text())[f"{load}/{c.class_mix}"]
        factor = v["mit_s"] / v["eq5_mit_s"]
    c = dataclasses.replace(c, mit_s=factor * calibrate_mit(c))
    mnod = {"mnod": 2 if load == 1.0 else 3} if policy != "rr" else {}
    pol = by_name(policy, quantum_us=int(c.quantum_ms * 1000), **mnod)
    t, w = time.process_time(), time.perf_counter()
    r = run_point(c, pol, seed, engine="compiled")
    cpu, wall = time.process_time() - t, time.perf_counter() - w
    with open("/proc/loadavg") as f:
        loadavg = " ".join(f.read().split()[:3])
    print(f"mixed point: mem_load {load}, scale {scale:g}, mfreq {mfreq_ms:g} ms, {policy}, "
          f"seed {seed}, mit {c.mit_s:.3f} s ({factor:.3f} x eq. 5): {r.events} events, "
          f"{cpu:.1f} s CPU, {wall:.1f} s wall, {r.events / cpu:,.0f} events per CPU "
          f"second; tasks/node {r.metrics['tasks_per_node']:.2f}, measured mem_load "
          f"{r.metrics['mem_load_measured']:.3f}; load average {loadavg}", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.01)
    ap.add_argument("--policy", default="csm")
    ap.add_argument("--full", action="store_true", help="also extrapolate scale 1.0")
    ap.add_argument("--engine", choices=("python", "compiled"),
                    help="default: python (compiled with --mixed)")
    ap.add_argument("--compare", action="store_true",
                    help="also run the main point on the other engine")
    ap.add_argument("--mixed", type=float, choices=(0.7, 1.0, 1.5),
                    help="time one point of gine.mixed at this mem_load instead")
    ap.add_argument("--mfreq", type=float, help="with --mixed (ms, default 20)")
    ap.add_argument("--seed", type=int, help="with --mixed (default 0)")
    ap.add_argument("--factor", type=float, help="with --mixed: mit / eq. 5's mit")
    args = ap.parse_args(argv)
    if args.mixed is None and (args.mfreq, args.seed, args.factor) != (None, None, None):
        ap.error("--mfreq, --seed and --factor act with --mixed only")
    if args.mixed is not None:
        if args.engine == "python" or args.full or args.compare:
            ap.error("--mixed runs the compiled engine alone (no --engine python, --full "
                     "or --compare)")
        one(8, 5, 0.01, args.policy, engine="compiled")   # compile or load the kernel
        mixed_point(args.mixed, args.scale, args.mfreq or 20.0, args.policy, args.seed or 0,
                    args.factor)
        return
    eng = args.engine or "python"
    print(f"policy {args.policy}, tc/memory scale {args.scale}, mem_load 1.0, mfreq 100 ms, "
          f"engine {eng}", flush=True)
    if eng == "compiled":
        ev, dt = one(8, 5, 0.01, args.policy, engine=eng)
        print(f"compile (or load from the numba cache) + tiny run: {dt:.1f} s CPU", flush=True)
    ev, dt = one(32, 1000, args.scale, args.policy, engine=eng)
    print(f"point 32 nodes x 1000 jobs: {ev} events, {dt:.2f} s CPU ({one.last_wall:.2f} s "
          f"wall), {ev / dt:,.0f} events per CPU second (target < 20 s)", flush=True)
    if args.compare:
        other = "python" if eng == "compiled" else "compiled"
        ev2, dt2 = one(32, 1000, args.scale, args.policy, engine=other)
        print(f"  same point, {other} engine: {ev2} events, {dt2:.2f} s CPU "
              f"({one.last_wall:.2f} s wall), {ev2 / dt2:,.0f} ev/s; "
              f"{'same' if ev2 == ev else 'DIFFERENT'} event count", flush=True)
    print("growth with nodes (1000 jobs):")
    for n in (8, 16, 32):
        ev, dt = one(n, 1000, args.scale, args.policy, engine=eng)
        print(f"  n = {n:2d}: {ev:9d} events {dt:7.2f} s CPU {ev / dt:10,.0f} ev/s",
              flush=True)
    print("growth with jobs (32 nodes):")
    for j in (250, 500, 1000):
        ev, dt = one(32, j, args.scale, args.policy, engine=eng)
        print(f"  jobs = {j:4d}: {ev:9d} events {dt:7.2f} s CPU {ev / dt:10,.0f} ev/s",
              flush=True)
    if args.full:
        ev, dt = one(32, 100, 1.0, args.policy, engine=eng)
        print(f"scale 1.0, 100 jobs: {ev} events, {dt:.1f} s CPU, {ev / dt:,.0f} ev/s; "
              f"linear extrapolation to 1000 jobs: {10 * dt:.0f} s CPU")


if __name__ == "__main__":
    main()
