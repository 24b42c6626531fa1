"""``schedsearch generate``: synthetic workloads (the K-resource model of Leinberger et al.)."""

from __future__ import annotations

import argparse
from typing import Any

from sim.cli.common import dump, field_default, param_default


def cmd_generate_kresource(args: argparse.Namespace) -> int:
    """K-resource workload (Leinberger et al. 1999): generate, calibrate, write .kswf."""
    from dataclasses import replace

    from instances.kresource import KResourceSpec, generate, write_kswf
    from sim.batch.calibrate import calibrate

    spec = KResourceSpec(K=args.K, dist=args.dist, scaling=args.scaling, jobs=args.jobs,
                         seed=args.seed)
    cal = None
    if args.rate is not None:
        spec = replace(spec, rate=args.rate)
    else:
        cal = calibrate(spec, args.queue, tol=args.tol)
        spec = replace(spec, rate=cal.rate)
    w = generate(spec)
    if cal is not None:
        w.header["Calibration"] = cal.to_dict()
    write_kswf(args.out, w)
    info = {"out": args.out, "jobs": len(w), "K": spec.K, "capacity": list(w.capacity),
            "rate": spec.rate, "clipped_jobs": w.header["ClippedJobs"]}
    if cal is not None:
        info.update({"target_queue": cal.target, "achieved_queue": cal.queue,
                     "iterations": cal.iterations, "first_half_queue": cal.first_half,
                     "second_half_queue": cal.second_half})
    print(dump(info))
    return 0


def add_generate(sub: Any) -> None:
    """Register ``generate`` (and its models) on the ``schedsearch`` parser."""
    from instances.kresource import KResourceSpec
    from sim.batch.calibrate import calibrate

    def spec(name: str) -> Any:
        return field_default(KResourceSpec, name)

    p = sub.add_parser("generate", help="generate a synthetic workload")
    gen = p.add_subparsers(dest="model", required=True)
    g = gen.add_parser("kresource", help="K-resource workload (Leinberger et al. 1999)")
    g.add_argument("--K", type=int, required=True, help="number of resources, 1..8")
    g.add_argument("--dist", choices=("uniform", "exponential"), default=spec("dist"))
    g.add_argument("--scaling", choices=("G-b", "G-a"), default=spec("scaling"),
                   help="how requirements scale with job size (AMB-1.14)")
    g.add_argument("--queue", type=float, default=128.0,
                   help="target FF-EASY time-averaged queue length (calibrated)")
    g.add_argument("--tol", type=float, default=param_default(calibrate, "tol"),
                   help="relative calibration tolerance")
    g.add_argument("--rate", type=float, help="arrival rate [jobs/s] (skips calibration)")
    g.add_argument("--jobs", type=int, default=spec("jobs"))
    g.add_argument("--seed", type=int, default=spec("seed"))
    g.add_argument("--out", required=True, help="output .kswf file")
    g.set_defaults(func=cmd_generate_kresource)
