"""The ``schedsearch`` command line.

``schedsearch simulate TRACE --policy NAME``: one policy on a trace;
``schedsearch compare TRACE``: several policies side by side (the main job);
``schedsearch solve PROBLEM.json --solver NAME``: an offline problem with a registered
solver; ``schedsearch traces``: the bundled traces; ``schedsearch sweep SPEC --out
RESULTS``: a grid of cells into a resumable results store; ``schedsearch report
RESULTS``: tables and plots of a store; ``schedsearch reproduce NAME``: a paper's table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from sim import registry


class _Fmt(argparse.ArgumentDefaultsHelpFormatter):
    """Show an option's default in its help unless it is None/False or already said."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, [], argparse.SUPPRESS) \
                or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


_FMT = _Fmt

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


_LEGEND = ("avg wait: mean start - submit; avg bsld: mean bounded slowdown, response / "
           "max(run, 10 s); avg sld: mean slowdown, response / run; util: processor-seconds "
           "used / (processors x makespan); makespan: last end - first submit; killed: jobs "
           "killed at their requested time; sim: wall-clock seconds of the simulation.")


def _trace_sha256(trace: str) -> str:
    from pathlib import Path

    from sim.sweep.cell import _file_sha256, _resolve

    p = Path(trace) if Path(trace).exists() else _resolve(trace)
    return _file_sha256(str(p))


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
    from heuristics.slack import EXHAUSTIVE, ORDERS

    p.add_argument("trace", help="SWF file (plain or gzip) or bundled trace name, e.g. KTH-SP2")
    p.add_argument("--procs", type=int, help="machine size in processors (overrides MaxProcs)")
    p.add_argument("--wide", choices=("error", "drop", "clip"), default="error",
                   help="a job wider than the machine: stop with an error, drop it, or clip "
                        "it to the machine size (counted in the cleaning report)")
    p.add_argument("--perfect-estimates", action="store_true",
                   help="requested time := actual runtime for every job")
    p.add_argument("--overrun", choices=("kill", "run"), default="kill",
                   help="a job past its requested time is killed or runs on")
    p.add_argument("--by-month", action="store_true",
                   help="simulate each calendar month from an empty machine")
    p.add_argument("--priorities", choices=("equal", "fifth"),
                   help="priority scenario for the slack-based scheduler")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set",
                   help="a policy option (repeatable), checked against the policy's "
                        "signature, e.g. --set sf=3 --set order=DP; numbers and "
                        "true/false are parsed, anything else is a string")
    g = p.add_argument_group("aliases of --set for the slack policies")
    g.add_argument("--order", choices=ORDERS + (EXHAUSTIVE,),
                   help="compress order of the slack scheduler (= --set order=...)")
    g.add_argument("--sf", type=float, help="slack factor SF (= --set sf=...)")
    g.add_argument("--awt", type=float, help="average wait time AWT [s] (= --set awt=...)")
    for a in ("u", "t", "p", "f"):
        g.add_argument(f"--alpha-{a}", type=float, help=f"price exponent alpha_{a} in [0, 1]")
    g.add_argument("--time-limit", type=float,
                   help="seconds per CP-SAT call of the slack-optimal policy")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no cleaning report")
    p.add_argument("--no-validate", action="store_true",
                   help="skip the independent re-check of the schedule")


#: flags kept as aliases of ``--set key=value``
ALIAS_OPTIONS = ("order", "sf", "awt", "alpha_u", "alpha_t", "alpha_p", "alpha_f",
                 "time_limit")


def _parse_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_set(items: Sequence[str]) -> dict[str, Any]:
    """``["sf=3", "order=DP"]`` -> ``{"sf": 3, "order": "DP"}``; ValueError on a bad item."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE")
        out[key] = _parse_value(value.strip())
    return out


def _policy_options(args: argparse.Namespace) -> dict[str, Any]:
    opts = {k: getattr(args, k) for k in ALIAS_OPTIONS if getattr(args, k) is not None}
    for k, v in parse_set(args.set).items():
        if k in opts and opts[k] != v:
            raise ValueError(f"option {k!r} given twice (--{k.replace('_', '-')} and --set)")
        opts[k] = v
    return opts


def _workload(args: argparse.Namespace):
    from sim.batch.runner import load_workload

    w = load_workload(args.trace, procs=args.procs, perfect_estimates=args.perfect_estimates,
                      priorities=args.priorities, wide=args.wide)
    if not args.quiet and not args.json and w.cleaning is not None:
        print(w.cleaning.summary(), file=sys.stderr)
    return w


def cmd_simulate(args: argparse.Namespace) -> int:
    from sim.batch.runner import run

    w = _workload(args)
    opts = _policy_options(args)
    registry.make_policy(args.policy, **opts)  # an unknown option fails before the run
    row = run(w, args.policy, overrun=args.overrun, by_month=args.by_month,
              check=not args.no_validate, progress=not args.quiet, out=args.out, **opts)
    row["trace"] = w.name
    row["trace_sha256"] = _trace_sha256(args.trace)
    row["priorities"] = args.priorities
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
    print(_LEGEND)
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
    sha = _trace_sha256(args.trace)
    for p in policies:
        # each policy gets the options it takes (for example --sf only the slack ones)
        opts = {k: v for k, v in given.items() if takers[p] is None or k in takers[p]}
        registry.make_policy(p, **opts)
        rows.append(run(w, p, overrun=args.overrun, by_month=args.by_month,
                        check=not args.no_validate, progress=not args.quiet, **opts))
        rows[-1]["trace_sha256"] = sha
        rows[-1]["priorities"] = args.priorities
    if args.json:
        print(_dump({"trace": w.name, "procs": w.procs, "rows": rows}))
        return 0
    print(f"{w.name}: {len(w)} jobs, {w.procs} processors, overrun={args.overrun}"
          f"{', each month from an empty machine' if args.by_month else ''}; "
          f"every schedule re-checked by the validator: {not args.no_validate}")
    print(_table(rows))
    print(_LEGEND)
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


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="schedsearch", description=__doc__.splitlines()[0],
                                 formatter_class=_FMT)
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("simulate", help="simulate one policy on a trace", formatter_class=_FMT)
    _add_trace_options(p)
    p.add_argument("--policy", required=True, choices=sorted(registry.POLICIES),
                   help="registered policy: " + ", ".join(sorted(registry.POLICIES)))
    p.add_argument("--out", help="write the simulated schedule as SWF (wait field filled)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("compare", help="several policies side by side on one trace",
                       formatter_class=_FMT)
    _add_trace_options(p)
    p.add_argument("--policies", default="fcfs,easy,conservative,slack",
                   help="comma-separated registered policies, of: "
                        + ", ".join(sorted(registry.POLICIES)))
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("solve", help="solve an offline problem from a JSON file",
                       formatter_class=_FMT)
    p.add_argument("problem", help="problem JSON (its 'problem' field names the family)")
    p.add_argument("--solver", required=True,
                   help="registered solver of the problem's family: " + "; ".join(
                       f"{fam}: {', '.join(sorted(names))}"
                       for fam, names in sorted(registry.SOLVERS.items())))
    p.add_argument("--time-limit", type=float, help="seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("traces", help="list the bundled traces")
    p.set_defaults(func=cmd_traces)

    from sim.sweep.cli import add_sweep_commands

    add_sweep_commands(sub, _FMT)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        rc = args.func(args)
        sys.stdout.flush()
        return rc
    except BrokenPipeError:
        # the reader went away (``schedsearch ... | head``): end quietly
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("schedsearch: interrupted", file=sys.stderr)
        return 130
    except (ValueError, OSError) as exc:
        print(f"schedsearch: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
