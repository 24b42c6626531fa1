"""The ``schedsearch`` command line.

``schedsearch simulate TRACE --policy NAME``: one policy on a trace;
``schedsearch compare TRACE``: several policies side by side (the main job);
``schedsearch solve PROBLEM.json --solver NAME``: an offline problem with a registered
solver; ``schedsearch traces``: the bundled traces; ``schedsearch sweep SPEC --out
RESULTS``: a grid of cells into a resumable results store; ``schedsearch report
RESULTS``: tables and plots of a store; ``schedsearch reproduce NAME``: a paper's table;
``schedsearch csm``: one CSM experiment point; ``schedsearch bsp``: one BSP cell under
Karl's scheduling servers (times in microseconds).
"""

from __future__ import annotations

import argparse
import json
import math
import os
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


# ------------------------------------------------------------ argument checks (issue 14)

class _Parser(argparse.ArgumentParser):
    """Argument errors as one line (``schedsearch: error: ...``), exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _procs(text: str) -> int | str:
    """``--procs``: a positive integer or ``from-jobs``."""
    if text == "from-jobs":
        return text
    if text.isascii() and text.strip().isdigit() and 0 < int(text) <= 2**53:
        return int(text)
    raise argparse.ArgumentTypeError(
        f"must be a positive integer or 'from-jobs', got {_short(text)}")


def _seconds(text: str) -> float:
    """``--time-limit``: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not text.isascii() or not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds >= 0, got {_short(text)}")
    return value


def _seed(text: str) -> int:
    """``--seed``: an integer in ``[0, 2**63 - 1]`` (64-bit)."""
    t = text.strip()
    if t.isascii() and t.isdigit() and len(t) <= 19 and int(t) < 2**63:
        return int(t)
    raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63 - 1], got {_short(text)}")


def _short(text: str, limit: int = 60) -> str:
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _read_json(path: str) -> Any:
    """A JSON file as Python data; every failure a ValueError naming the file."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise ValueError(f"{path}: invalid JSON: {_short(str(exc), 120)}") from None


def _check_out(args: argparse.Namespace) -> None:
    """``--out`` must not be the input trace, nor in a missing directory."""
    out = getattr(args, "out", None)
    if out is None:
        return
    from pathlib import Path

    src = Path(args.trace)
    if not src.exists():
        from instances.bundled import trace_path

        try:
            src = trace_path(str(args.trace))
        except (ValueError, OSError):
            return  # loading the trace reports it
    dst = Path(out)
    if dst.exists() and (dst.is_dir() or os.path.samefile(dst, src)):
        what = "a directory" if dst.is_dir() else f"the input trace {args.trace}"
        raise ValueError(f"--out {out}: refusing to overwrite {what}")
    if not dst.parent.is_dir():
        raise ValueError(f"--out {out}: directory {dst.parent} does not exist")


def _add_trace_options(p: argparse.ArgumentParser) -> None:
    from heuristics.slack import EXHAUSTIVE, ORDERS

    p.add_argument("trace", help="SWF file (plain or gzip) or bundled trace name, e.g. KTH-SP2")
    p.add_argument("--procs", type=_procs, metavar="N|from-jobs",
                   help="machine size in processors (overrides MaxProcs); required when the "
                        "log has no MaxProcs/MaxNodes header; 'from-jobs' takes the widest job")
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
    g.add_argument("--time-limit", type=_seconds,
                   help="seconds per CP-SAT call of the slack-optimal policy")
    # K-resource job selection (heuristics.backfill): fcfs, easy, conservative, unconstrained
    g = p.add_argument_group("aliases of --set for the K-resource job selection")
    g.add_argument("--select", choices=("ff", "bl", "bb"),
                   help="job selection rule (= --set select=...)")
    g.add_argument("--window", type=int, help="BL's window w (= --set window=...)")
    g.add_argument("--fullness", choices=("mult", "none"),
                   help="BB's fullness modifier (= --set fullness=...)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no cleaning report")
    p.add_argument("--no-validate", action="store_true",
                   help="skip the independent re-check of the schedule")


#: flags kept as aliases of ``--set key=value``
ALIAS_OPTIONS = ("order", "sf", "awt", "alpha_u", "alpha_t", "alpha_p", "alpha_f",
                 "time_limit", "select", "window", "fullness")


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

    _check_out(args)
    if str(args.trace).endswith(".kswf"):  # K-resource workload (instances.kresource)
        from instances.kresource import read_kswf

        return read_kswf(args.trace)
    w = load_workload(args.trace, procs=args.procs, perfect_estimates=args.perfect_estimates,
                      wide=args.wide)
    if not args.quiet and not args.json and w.cleaning is not None:
        print(w.cleaning.summary(), file=sys.stderr)
    elif args.procs == "from-jobs" and w.cleaning is not None:  # always say what was chosen
        print(f"{w.cleaning.source}: machine size {w.procs} processors, the widest job "
              "(--procs from-jobs)", file=sys.stderr)
    return w


def cmd_simulate(args: argparse.Namespace) -> int:
    from sim.batch.runner import run

    w = _workload(args)
    opts = _policy_options(args)
    registry.make_policy(args.policy, **opts)  # an unknown option fails before the run
    row = run(w, args.policy, overrun=args.overrun, by_month=args.by_month,
              check=not args.no_validate, progress=not args.quiet, out=args.out,
              priorities=args.priorities, **opts)
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
                        check=not args.no_validate, progress=not args.quiet,
                        priorities=args.priorities, **opts))
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
    data = _read_json(args.problem)
    family, problem = registry.load_problem(data, source=args.problem)
    solve = registry.solver(family, args.solver)
    try:
        result = solve(problem, time_limit=args.time_limit, seed=args.seed)
    except ValueError as exc:  # a refusal (e.g. too large for the model): name the file
        raise ValueError(f"{args.problem}: {exc}") from None
    d = result.to_dict()
    d["problem"] = family
    if args.json:
        print(_dump(d))
    else:
        for k in ("problem", "solver", "status", "objective", "bound", "gap", "runtime"):
            print(f"{k:>10}: {d[k]}")
        if d.get("note"):
            print(f"{'note':>10}: {d['note']}")
        print(f"{'solution':>10}: {json.dumps(_clean(d['solution']), default=_json_default)}")
    return 0


def cmd_csm(args: argparse.Namespace) -> int:
    """One CSM experiment point (time-sharing cluster) for one or more policies."""
    from heuristics.coscheduling import by_name
    from sim.timeshare.csm import run_point
    from sim.timeshare.workload import CSMConfig

    cfg = CSMConfig(n_nodes=args.nodes, mem_pages=args.mem_pages, mem_load=args.mem_load,
                    pdt=args.pdt, n_jobs=args.jobs, mfreq_ms=args.mfreq,
                    class_mix=args.class_mix, tc_scale=args.scale, mem_scale=args.scale,
                    pgfault_formula=args.pgfault, msg_model=args.msg_model,
                    fault_service=args.fault_service,
                    refs_per_dispatch=args.refs_per_dispatch,
                    large_sizes=tuple(s for s in (8, 16, 32) if s <= args.nodes) or (1,))
    rows = []
    for name in [p.strip() for p in args.policies.split(",") if p.strip()]:
        pol = by_name(name, quantum_us=int(cfg.quantum_ms * 1000), mnol=args.mnol,
                      mnod=args.mnod, p=args.p)
        r = run_point(cfg, pol, args.seed, log=args.check)
        row = {"policy": name, **r.metrics, "events": r.events, "wall_s": r.wall_s}
        if args.check:
            from sim.timeshare.check import check

            row["checked"] = check(r.cluster.log.records)
        rows.append(row)
    if args.json:
        print(_dump({"config": cfg.to_dict(), "seed": args.seed, "rows": rows}))
        return 0
    keys = ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
            "slowdown_local", "tasks_per_node", "events", "wall_s")
    print("policy  " + "  ".join(f"{k:>14}" for k in keys))
    for r in rows:
        print(f"{r['policy']:7s} " + "  ".join(
            f"{r[k]:14.3f}" if isinstance(r[k], float) else f"{r[k]:>14}" for k in keys))
    return 0


def cmd_traces(args: argparse.Namespace) -> int:
    from instances.bundled import list_traces, trace_path

    for name in list_traces():
        print(f"{name:12s} {trace_path(name)}")
    return 0


def cmd_bsp(args: argparse.Namespace) -> int:
    """One (g, v) cell of the BSP model under scheduling servers (times in µs)."""
    from sim.timeshare.bsp import BSPParams, NetParams, measure_cell
    from sim.timeshare.servers import ServerParams, SlotSchedule

    sch = SlotSchedule.for_share(args.share, round_us=args.round_us, slot_us=args.slot_us,
                                 place=args.placement)
    bsp = BSPParams(g_us=args.g_us, v=args.v, n=args.n, pattern=args.pattern,
                    spin_us=args.spin_us)
    sp = ServerParams(regime=args.regime, ctl_block_wakeup=args.wakeup)
    net = NetParams(latency_us=args.latency_us)
    cell = measure_cell(bsp, sch, sp, net, i=args.i, seed=args.seed)
    out = {"bsp": bsp.to_dict(), "server": sp.to_dict(), "share": args.share,
           "owner": list(sch.owner), "slot_us": sch.slot_us, "latency_us": args.latency_us,
           "seed": args.seed, **{k: cell[k] for k in ("mean_us", "std_us", "cv", "i",
                                                      "events", "times_us")}}
    if args.json:
        print(_dump(out))
    else:
        print(f"{args.regime}, wake-up {args.wakeup}: mean {cell['mean_us'] / 1000:.3f} ms, "
              f"std {cell['std_us'] / 1000:.3f} ms, CV {cell['cv']:.3f} over i = {args.i} "
              f"measurements of n = {args.n} supersteps ({cell['events']} events)")
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
    ap = _Parser(prog="schedsearch", description=__doc__.splitlines()[0],
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
    p.add_argument("--time-limit", type=_seconds, help="seconds (finite, >= 0)")
    p.add_argument("--seed", type=_seed, default=0, help="integer in [0, 2**63 - 1]")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("csm", help="time-sharing cluster: one CSM experiment point")
    p.add_argument("--policies", default="rr,pred,dyn,csm",
                   help="comma-separated: rr, pred, dyn, dyn-top, csm, csm-top")
    p.add_argument("--nodes", type=int, default=32)
    p.add_argument("--mem-pages", type=int, default=32768, help="M, pages per node")
    p.add_argument("--mem-load", type=float, default=1.0)
    p.add_argument("--pdt", type=float, default=0.5)
    p.add_argument("--jobs", type=int, default=1000)
    p.add_argument("--mfreq", type=float, default=100.0, help="ms of CPU between messages")
    p.add_argument("--class-mix", default="a", help="AMB-4.7: a (two streams) or b")
    p.add_argument("--scale", type=float, default=0.01, help="tc and memory scale")
    p.add_argument("--pgfault", default="corrected", help="eq. 3: corrected or literal")
    p.add_argument("--msg-model", default="pairwise",
                   help="AMB-4.10: pairwise, exchange, ring, async or probe")
    p.add_argument("--fault-service", default="parallel",
                   help="AMB-4.11: parallel or fifo (one fault server per node)")
    p.add_argument("--refs-per-dispatch", type=int, default=1,
                   help="page references per dispatch (AMB-4.11)")
    p.add_argument("--mnol", type=int, default=2)
    p.add_argument("--mnod", type=int, default=2)
    p.add_argument("--p", type=float, default=0.3, help="P of eq. 2, in [0, 1]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", action="store_true", help="re-validate the run from its log")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_csm)

    p = sub.add_parser("bsp", help="one BSP cell under scheduling servers (Karl; µs)")
    p.add_argument("--g-us", type=int, required=True, help="granularity g in µs")
    p.add_argument("--v", type=float, default=0.0, help="load imbalance, fraction of g")
    p.add_argument("--n", type=int, default=50, help="supersteps per measurement")
    p.add_argument("--i", type=int, default=50, help="measurements")
    p.add_argument("--pattern", default="barrier", help="barrier | complete")
    p.add_argument("--spin-us", type=int, default=0, help="spin time in µs (0 = blocking)")
    p.add_argument("--share", type=float, default=0.2, help="CPU share of the program")
    p.add_argument("--round-us", type=int, default=200_000, help="round length in µs")
    p.add_argument("--slot-us", type=int, default=20_000, help="slot length in µs")
    p.add_argument("--placement", default="contiguous", help="contiguous | spread")
    p.add_argument("--regime", default="sync", help="none | unsync | sync")
    p.add_argument("--wakeup", default="immediate", help="immediate | tick")
    p.add_argument("--latency-us", type=int, default=500, help="message latency in µs")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bsp)

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

    from sim.sweep.cli import add_sweep_commands

    add_sweep_commands(sub, _FMT)
    return ap


def _one_line(exc: BaseException, limit: int = 500) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; exit code 0, or 2 with one line on stderr for bad input.

    No input gives a traceback: bad input (``ValueError``, ``OSError``, a JSON nested too
    deep) is exit 2 naming the file and the line or field; a closed output pipe
    (``schedsearch ... | head``) ends quietly; anything else is a bug, reported in one
    line with exit 1 (``SCHEDSEARCH_DEBUG=1`` shows the traceback).
    """
    try:
        args = build_parser().parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()
        return code
    except SystemExit as exc:  # --help, or an argument error already printed
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:
        # the reader went away (| head): silence the flush at exit, end quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except (ValueError, OSError, RecursionError) as exc:
        print(f"schedsearch: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("schedsearch: error: out of memory (the input is too large for this command)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("schedsearch: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: one line, the traceback on request
        if os.environ.get("SCHEDSEARCH_DEBUG"):
            raise
        print(f"schedsearch: internal error ({type(exc).__name__}): {_one_line(exc)}; "
              "please report it (SCHEDSEARCH_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
