"""The ``schedsearch`` command line.

``schedsearch simulate TRACE --policy NAME``: one policy on a trace;
``schedsearch compare TRACE``: several policies side by side (the main job);
``schedsearch solve PROBLEM.json --solver NAME``: an offline problem with a registered
solver; ``schedsearch traces``: the bundled traces.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from sim import registry

COLUMNS = (
    ("policy", "policy", "{}"),
    ("jobs", "jobs", "{}"),
    ("avg_wait", "avg wait [s]", "{:.1f}"),
    ("avg_bounded_slowdown", "avg bsld", "{:.2f}"),
    ("avg_slowdown", "avg sld", "{:.2f}"),
    ("utilization", "util", "{:.3f}"),
    ("makespan", "makespan [s]", "{}"),
    ("killed", "killed", "{}"),
    ("sim_seconds", "sim [s]", "{:.2f}"),
)


def _table(rows: Sequence[dict[str, Any]], first: tuple[str, str] | None = None) -> str:
    cols = ([(first[0], first[1], "{}")] if first else []) + list(COLUMNS)
    cells = [[title for _, title, _ in cols]]
    for r in rows:
        cells.append([fmt.format(r[key]) if r.get(key) is not None else "-"
                      for key, _, fmt in cols])
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                       enumerate(zip(row, widths, strict=True))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _json_default(x: Any) -> Any:
    if hasattr(x, "item"):
        return x.item()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def _clean(x: Any) -> Any:
    """Replace non-finite floats by strings so the output is strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _dump(obj: Any) -> str:
    return json.dumps(_clean(obj), default=_json_default, indent=2)


def _add_trace_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", help="SWF file (plain or gzip) or bundled trace name, e.g. KTH-SP2")
    p.add_argument("--procs", type=int, help="machine size in processors (overrides MaxProcs)")
    p.add_argument("--perfect-estimates", action="store_true",
                   help="requested time := actual runtime for every job")
    p.add_argument("--overrun", choices=("kill", "run"), default="kill",
                   help="a job past its requested time is killed (default) or runs on")
    p.add_argument("--by-month", action="store_true",
                   help="simulate each calendar month from an empty machine")
    p.add_argument("--priorities", choices=("equal", "fifth"),
                   help="priority scenario for the slack-based scheduler")
    p.add_argument("--order", help="compress order of the slack scheduler (AST, AAT, DU, DC, DP)")
    p.add_argument("--sf", type=float, help="slack factor SF")
    p.add_argument("--awt", type=float, help="average wait time AWT [s]")
    for a in ("u", "t", "p", "f"):
        p.add_argument(f"--alpha-{a}", type=float, help=f"price exponent alpha_{a} in [0, 1]")
    p.add_argument("--time-limit", type=float,
                   help="seconds per CP-SAT call of the slack-optimal policy")
    # K-resource job selection (heuristics.backfill): fcfs, easy, conservative, unconstrained
    p.add_argument("--select", choices=("ff", "bl", "bb"), help="job selection rule")
    p.add_argument("--window", type=int, help="BL's window w (resources matched)")
    p.add_argument("--fullness", choices=("mult", "none"), help="BB's fullness modifier")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no cleaning report")
    p.add_argument("--no-validate", action="store_true",
                   help="skip the independent re-check of the schedule")


def _policy_options(args: argparse.Namespace) -> dict[str, Any]:
    from sim.batch.runner import POLICY_OPTIONS

    return {k: getattr(args, k) for k in POLICY_OPTIONS}


def _workload(args: argparse.Namespace):
    from sim.batch.runner import load_workload

    if str(args.trace).endswith(".kswf"):  # K-resource workload (instances.kresource)
        from instances.kresource import read_kswf

        return read_kswf(args.trace)
    w = load_workload(args.trace, procs=args.procs, perfect_estimates=args.perfect_estimates,
                      priorities=args.priorities)
    if not args.quiet and not args.json and w.cleaning is not None:
        print(w.cleaning.summary(), file=sys.stderr)
    return w


def cmd_simulate(args: argparse.Namespace) -> int:
    from sim.batch.runner import run

    w = _workload(args)
    row = run(w, args.policy, overrun=args.overrun, by_month=args.by_month,
              check=not args.no_validate, progress=not args.quiet, out=args.out,
              **_policy_options(args))
    row["trace"] = w.name
    if w.cleaning is not None:
        row["cleaning"] = w.cleaning.to_dict()
    if args.json:
        print(_dump(row))
        return 0
    print(f"{w.name}: {len(w)} jobs, {w.procs} processors, overrun={args.overrun}"
          f"{', each month from an empty machine' if args.by_month else ''}")
    if args.by_month:
        print(_table(row["months"], ("month", "month")))
        print()
    print(_table([row]))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from sim.batch.runner import run

    w = _workload(args)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    for p in policies:
        registry.policy_factory(p)  # fail early on an unknown name
    given = {k: v for k, v in _policy_options(args).items() if v is not None}
    takers = {p: registry.policy_options(p) for p in policies}
    unused = [k for k in given if all(t is not None and k not in t for t in takers.values())]
    if unused:
        raise ValueError(f"no policy among {policies} takes option(s) {unused}")
    rows = []
    for p in policies:
        # each policy gets the options it takes (for example --sf only the slack ones)
        opts = {k: v for k, v in given.items() if takers[p] is None or k in takers[p]}
        rows.append(run(w, p, overrun=args.overrun, by_month=args.by_month,
                        check=not args.no_validate, progress=not args.quiet, **opts))
    if args.json:
        print(_dump({"trace": w.name, "procs": w.procs, "rows": rows}))
        return 0
    print(f"{w.name}: {len(w)} jobs, {w.procs} processors, overrun={args.overrun}"
          f"{', each month from an empty machine' if args.by_month else ''}; "
          f"every schedule re-checked by the validator: {not args.no_validate}")
    print(_table(rows))
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    try:
        with open(args.problem, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{args.problem}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    family, problem = registry.load_problem(data, source=args.problem)
    solve = registry.solver(family, args.solver)
    result = solve(problem, time_limit=args.time_limit, seed=args.seed)
    d = result.to_dict()
    d["problem"] = family
    if args.json:
        print(_dump(d))
    else:
        for k in ("problem", "solver", "status", "objective", "bound", "gap", "runtime"):
            print(f"{k:>10}: {d[k]}")
        print(f"{'solution':>10}: {json.dumps(_clean(d['solution']), default=_json_default)}")
    return 0


def cmd_traces(args: argparse.Namespace) -> int:
    from instances.bundled import list_traces, trace_path

    for name in list_traces():
        print(f"{name:12s} {trace_path(name)}")
    return 0


def cmd_generate_kresource(args: argparse.Namespace) -> int:
    """K-resource workload (Leinberger et al. 1999): generate, calibrate, write .kswf."""
    from dataclasses import replace

    from instances.kresource import KResourceSpec, calibrate, generate, write_kswf

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
    print(_dump(info))
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="schedsearch", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("simulate", help="simulate one policy on a trace")
    _add_trace_options(p)
    p.add_argument("--policy", required=True, choices=sorted(registry.POLICIES))
    p.add_argument("--out", help="write the simulated schedule as SWF (wait field filled)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("compare", help="several policies side by side on one trace")
    _add_trace_options(p)
    p.add_argument("--policies", default="fcfs,easy,conservative,slack",
                   help="comma-separated registered policies (default: %(default)s)")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("solve", help="solve an offline problem from a JSON file")
    p.add_argument("problem", help="problem JSON (its 'problem' field names the family)")
    p.add_argument("--solver", required=True, help="registered solver name for the family")
    p.add_argument("--time-limit", type=float, help="seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("generate", help="generate a synthetic workload")
    gen = p.add_subparsers(dest="model", required=True)
    g = gen.add_parser("kresource", help="K-resource workload (Leinberger et al. 1999)")
    g.add_argument("--K", type=int, required=True, help="number of resources, 1..8")
    g.add_argument("--dist", choices=("uniform", "exponential"), default="uniform")
    g.add_argument("--scaling", choices=("G-b", "G-a"), default="G-b",
                   help="how requirements scale with job size (AMB-1.14)")
    g.add_argument("--queue", type=float, default=128.0,
                   help="target FF-EASY time-averaged queue length (calibrated)")
    g.add_argument("--tol", type=float, default=0.05, help="relative calibration tolerance")
    g.add_argument("--rate", type=float, help="arrival rate [jobs/s] (skips calibration)")
    g.add_argument("--jobs", type=int, default=10000)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True, help="output .kswf file")
    g.set_defaults(func=cmd_generate_kresource)

    p = sub.add_parser("traces", help="list the bundled traces")
    p.set_defaults(func=cmd_traces)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:
        print(f"schedsearch: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
