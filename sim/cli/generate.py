"""``schedsearch generate``: synthetic workloads (the K-resource model of Leinberger et al.,
the Lublin-Feitelson model, Tsafrir's user estimates) and sets of random problem files of
every family."""

from __future__ import annotations

import argparse
from typing import Any

from sim.cli.common import (
    dump,
    field_default,
    int_arg,
    number,
    param_default,
    plain_float,
)

QUEUE = 128.0
"""Default target queue length of ``generate kresource`` (jobs)."""

STATIONARITY = 0.15
"""Default stationarity tolerance of ``generate kresource`` (``calibrate(stationarity=)``)."""


def cmd_generate_kresource(args: argparse.Namespace) -> int:
    """K-resource workload (Leinberger et al. 1999): generate, calibrate, write .kswf."""
    from dataclasses import replace

    from instances.kresource import KResourceSpec, generate, write_kswf
    from sim.batch.calibrate import calibrate

    spec = KResourceSpec(K=args.K, dist=args.dist, scaling=args.scaling, jobs=args.jobs,
                         seed=args.seed)
    cal = None
    if args.rate is not None:
        given = [o for o, v in (("--queue", args.queue), ("--tol", args.tol),
                                ("--stationarity", args.stationarity),
                                ("--warmup", args.warmup), ("--engine", args.engine))
                 if v is not None]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise ValueError(f"{', '.join(given)} {verb} only to the calibration, which "
                             f"--rate skips: give one or the other")
        spec = replace(spec, rate=args.rate)
    else:
        tol = param_default(calibrate, "tol") if args.tol is None else args.tol
        st = STATIONARITY if args.stationarity is None else args.stationarity
        cal = calibrate(spec, QUEUE if args.queue is None else args.queue, tol=tol,
                        stationarity=st or None,
                        warmup=0.0 if args.warmup is None else args.warmup,
                        engine=args.engine or "python")
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
                     "second_half_queue": cal.second_half,
                     "stationarity": cal.stationarity, "stationary": cal.stationary,
                     "warmup": cal.warmup})
    print(dump(info))
    return 0


def cmd_generate_lublin(args: argparse.Namespace) -> int:
    """Lublin-Feitelson workload, optionally with Tsafrir estimates, written as SWF."""
    from instances.lublin import generate
    from instances.swf import write_swf

    w = generate(args.jobs, args.procs, args.seed)
    if args.tsafrir is not None:
        from instances.tsafrir import add_estimates

        w = add_estimates(w, args.tsafrir)
    _refuse_existing(args.out)
    write_swf(args.out, w)
    print(dump({"out": args.out, "jobs": len(w), "procs": args.procs, "seed": args.seed,
                "estimates": "tsafrir" if args.tsafrir is not None else "exact"}))
    return 0


def cmd_generate_tsafrir(args: argparse.Namespace) -> int:
    """Replace a workload's requested times by Tsafrir-model user estimates."""
    from instances.swf import write_swf
    from instances.tsafrir import add_estimates
    from sim.batch.runner import load_workload

    w = add_estimates(load_workload(args.workload), args.seed)
    _refuse_existing(args.out)
    write_swf(args.out, w)
    print(dump({"out": args.out, "jobs": len(w), "seed": args.seed}))
    return 0


def cmd_generate_problems(args: argparse.Namespace) -> int:
    """``n`` random problem files of one family."""
    from sim.problems.generate import write_set

    size = {}
    for item in args.size:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--size {item!r}: expected KEY=VALUE")
        if key.strip() in size:  # which of the two values was meant is unknowable
            raise ValueError(f"--size {key.strip()}: given more than once")
        size[key.strip()] = number(value)
        if size[key.strip()] is None:
            raise ValueError(f"--size {key.strip()}: expected a number, got {value!r}")
    paths = write_set(args.family, args.n, args.seed, args.out, **size)
    print(dump({"out": args.out, "family": args.family, "files": len(paths),
                "seeds": [args.seed, args.seed + args.n - 1]}))
    return 0


def _refuse_existing(path: str) -> None:
    from pathlib import Path

    if Path(path).exists():
        raise ValueError(f"--out {path}: exists; nothing was written (give a new file)")


def _seed(text: str) -> int:
    if not text.isdigit() or int(text) >= 2**63:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63 - 1], got {text!r}")
    return int(text)


def _add_problem_generators(gen: Any) -> None:
    from sim.problems.generate import GENERATORS

    for family, (_, sizes) in sorted(GENERATORS.items()):
        g = gen.add_parser(family, help=f"random {family} problem files",
                           description=f"Write N random {family} problems as JSON files "
                           "(distributions: sim.problems.generate). Size parameters (--size "
                           "KEY=VALUE): " + "; ".join(
                               f"{k}: {s.meaning}, default {s.default}, in [{s.minimum}, "
                               f"{s.maximum}]" for k, s in sizes.items()))
        g.add_argument("--n", type=int_arg(1, 100_000), required=True,
                   help="number of files, 1..100000")
        g.add_argument("--seed", type=_seed, default=0, help="seed of the first file")
        g.add_argument("--size", action="append", default=[], metavar="KEY=VALUE",
                       help="a size parameter: " + ", ".join(sizes))
        g.add_argument("--out", required=True, help="output directory")
        g.set_defaults(func=cmd_generate_problems, family=family)


def add_generate(sub: Any) -> None:
    """Register ``generate`` (and its models) on the ``schedsearch`` parser."""
    from instances import lublin
    from instances.kresource import MAX_JOBS, KResourceSpec
    from sim.batch.calibrate import calibrate

    def spec(name: str) -> Any:
        return field_default(KResourceSpec, name)

    p = sub.add_parser("generate", help="generate a synthetic workload")
    gen = p.add_subparsers(dest="model", required=True)
    g = gen.add_parser("kresource", help="K-resource workload (Leinberger et al. 1999)")
    g.add_argument("--K", type=int_arg(1, 8), required=True, help="number of resources, 1..8")
    g.add_argument("--dist", choices=("uniform", "exponential"), default=spec("dist"))
    g.add_argument("--scaling", choices=("G-b", "G-a"), default=spec("scaling"),
                   help="how requirements scale with job size (AMB-1.14)")
    g.add_argument("--queue", type=plain_float,
                   help=f"target FF-EASY time-averaged queue length (calibrated; default "
                        f"{QUEUE:g})")
    g.add_argument("--tol", type=plain_float,
                   help=f"relative calibration tolerance (default "
                        f"{param_default(calibrate, 'tol'):g})")
    g.add_argument("--stationarity", type=plain_float, metavar="S",
                   help=f"the FF-EASY queue must also be stationary: its mean over each half "
                        f"of the arrival window within S of --queue and of the other half's "
                        f"(refused when no rate gives it); 0 calibrates the mean only "
                        f"(default {STATIONARITY:g})")
    g.add_argument("--warmup", type=plain_float, metavar="F",
                   help="fraction of the jobs whose arrivals come before the calibrated "
                        "window (the queue's fill from an empty machine left out; default 0)")
    g.add_argument("--engine", choices=("python", "compiled"),
                   help="engine of the calibration's FF-EASY runs (the same rate; compiled "
                        "needs numba; default python)")
    g.add_argument("--rate", type=plain_float, help="arrival rate [jobs/s] (skips calibration)")
    g.add_argument("--jobs", type=int_arg(1, MAX_JOBS), default=spec("jobs"),
                   help=f"number of jobs, 1..{MAX_JOBS}")
    g.add_argument("--seed", type=_seed, default=spec("seed"))
    g.add_argument("--out", required=True, help="output .kswf file")
    g.set_defaults(func=cmd_generate_kresource)

    g = gen.add_parser("lublin", help="Lublin-Feitelson workload model (SWF)",
                       description="Jobs of the Lublin-Feitelson model (sizes, run times, "
                       "arrivals with the daily cycle), seeded and byte-reproducible; "
                       "requested times equal run times unless --tsafrir adds estimates.")
    g.add_argument("--jobs", type=int_arg(1, lublin.MAX_JOBS), required=True,
                   help=f"number of jobs, 1..{lublin.MAX_JOBS}")
    g.add_argument("--procs", type=int_arg(8, lublin.MAX_PROCS, "2**53"), required=True,
                   help="machine size, 8..2**53")
    g.add_argument("--seed", type=_seed, default=0)
    g.add_argument("--tsafrir", type=_seed, metavar="SEED",
                   help="add Tsafrir-model user estimates drawn with this seed")
    g.add_argument("--out", required=True, help="output .swf file")
    g.set_defaults(func=cmd_generate_lublin)

    g = gen.add_parser("tsafrir", help="add Tsafrir-model user estimates to a workload",
                       description="Replace the requested times of WORKLOAD (a trace name "
                       "or file) by user estimates of the Tsafrir-Etsion-Feitelson model.")
    g.add_argument("workload", help="bundled trace name or SWF file")
    g.add_argument("--seed", type=_seed, default=0)
    g.add_argument("--out", required=True, help="output .swf file")
    g.set_defaults(func=cmd_generate_tsafrir)
    _add_problem_generators(gen)
