"""``schedsearch simulate``, ``compare`` and ``traces``: policies on a batch trace."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from sim import registry
from sim.cli.common import (
    LEGEND,
    Fmt,
    dump,
    number,
    plain_float,
    plain_int,
    procs_arg,
    seconds_arg,
    short,
    table,
)


def _trace_sha256(trace: str) -> str:
    from pathlib import Path

    from sim.sweep.cell import _file_sha256, _resolve

    p = Path(trace) if Path(trace).exists() else _resolve(trace)
    return _file_sha256(str(p))


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
    from sim.batch.runner import out_format

    out_format(out)  # the name's format (K is checked once the workload is read)


def _add_trace_options(p: argparse.ArgumentParser) -> None:
    from heuristics.slack import EXHAUSTIVE, ORDERS

    p.add_argument("trace", help="SWF file (plain or gzip) or bundled trace name, e.g. KTH-SP2")
    p.add_argument("--engine", choices=("auto", "python", "compiled"), default="auto",
                   help="batch engine: the Python reference, or the compiled one (numba; "
                        "FCFS, EASY, conservative, unconstrained with FF/BL/BB, and the slack "
                        "orders AST/AAT/DU/DC/DP with their search compiled; the same "
                        "schedules; other policies refused by name; its first run compiles "
                        "for 30-90 s, `schedsearch compile` does it once); auto (default): "
                        "compiled where it runs the policy, the jobs pay for loading it "
                        "(sim.batch.engine.CROSSOVER) and it is compiled on this machine, "
                        "else python; the output says which and why")
    p.add_argument("--procs", type=procs_arg, metavar="N|from-jobs",
                   help="machine size in processors (overrides MaxProcs); required when the "
                        "log has no MaxProcs/MaxNodes header; 'from-jobs' takes the widest job")
    p.add_argument("--wide", choices=("error", "drop", "clip"), default="error",
                   help="a job wider than the machine: stop with an error, drop it, or clip "
                        "it to the machine size (counted in the cleaning report)")
    p.add_argument("--perfect-estimates", action="store_true",
                   help="requested time := actual runtime for every job")
    p.add_argument("--overrun", choices=("kill", "run"), default="kill",
                   help="a job past its requested time is killed or runs on")
    split = p.add_mutually_exclusive_group()
    split.add_argument("--by-month", action="store_true",
                       help="simulate each calendar month of the log's time zone from an "
                            "empty machine (needs the header's UnixStartTime)")
    split.add_argument("--by-week", action="store_true",
                       help="simulate each ISO week (Monday 00:00 to Monday 00:00, the "
                            "log's time zone) from an empty machine (needs the header's "
                            "UnixStartTime); compare then pairs the policies week by week")
    p.add_argument("--feedback", action="store_true",
                   help="user feedback (Zakay & Feitelson): a job submitted at most 20 min "
                        "after the log's end of an earlier job of its user (from the log's "
                        "wait, SWF field 3) is submitted that think time after the earlier "
                        "job's end in the simulation; the Python engine; refused with "
                        "--by-month/--by-week and a user's policy; --out writes the realised "
                        "submit times")
    p.add_argument("--priorities", choices=("equal", "fifth"),
                   help="priority scenario for the slack-based scheduler")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set",
                   help="a policy option (repeatable), checked against the policy's "
                        "signature, e.g. --set sf=3 --set order=DP; numbers and "
                        "true/false are parsed, anything else is a string")
    g = p.add_argument_group("aliases of --set for the slack policies")
    g.add_argument("--order", choices=ORDERS + (EXHAUSTIVE,),
                   help="compress order of the slack scheduler (= --set order=...)")
    g.add_argument("--sf", type=plain_float, help="slack factor SF (= --set sf=...)")
    g.add_argument("--awt", type=plain_float, help="average wait time AWT [s] (= --set awt=...)")
    for a in ("u", "t", "p", "f"):
        g.add_argument(f"--alpha-{a}", type=plain_float, help=f"price exponent alpha_{a} in [0, 1]")
    g.add_argument("--time-limit", type=seconds_arg,
                   help="seconds per CP-SAT call of the slack-optimal policy")
    # K-resource job selection (heuristics.backfill): fcfs, easy, conservative, unconstrained
    g = p.add_argument_group("aliases of --set for the K-resource job selection")
    g.add_argument("--select", choices=("ff", "bl", "bb"),
                   help="job selection rule (= --set select=...)")
    g.add_argument("--window", type=plain_int, help="BL's window w (= --set window=...)")
    g.add_argument("--fullness", choices=("mult", "none"),
                   help="BB's fullness modifier (= --set fullness=...)")
    g = p.add_argument_group("alias of --set for the backfilling policies")
    g.add_argument("--predictor", choices=("user", "last2", "actual"),
                   help="plan with runtime predictions (= --set predictor=...; easy, sjbf, "
                        "easy++, conservative, selective): the user's request, the mean of "
                        "the user's last two run lengths (Tsafrir et al. 2007), or the "
                        "actual run length; jobs are still killed at their request")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no cleaning report")
    p.add_argument("--no-validate", action="store_true",
                   help="skip the independent re-check of the schedule")
    p.add_argument("--policy-time-limit", type=seconds_arg, metavar="SECONDS",
                   help="wall-clock seconds for the run of a user's or plug-in policy "
                        "(MODULE:FACTORY or an entry point; all parts together with "
                        "--by-month or --by-week), which runs in a worker process killed at "
                        "this limit, on a crash, or on Ctrl-C (default: no limit); its "
                        "module's import and its factory call also run there, first, within "
                        "this limit "
                        f"(default {registry.LOAD_SECONDS:g} s); refused when every "
                        "policy is built in (they run in this process)")


#: flags kept as aliases of ``--set key=value``
ALIAS_OPTIONS = ("order", "sf", "awt", "alpha_u", "alpha_t", "alpha_p", "alpha_f",
                 "time_limit", "select", "window", "fullness", "predictor")


def _parse_value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    value = number(text)
    if value is None and _python_number(text):
        raise ValueError(f"--set value {text!r}: not a plain decimal number (no underscores "
                         "or non-ASCII digits)")
    return text if value is None else value


def _python_number(text: str) -> bool:
    """Whether Python's ``float()`` would read ``text`` as a number."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def parse_set(items: Sequence[str]) -> dict[str, Any]:
    """``["sf=3", "order=DP"]`` -> ``{"sf": 3, "order": "DP"}``; ValueError on a bad item
    or a key given twice."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected KEY=VALUE")
        if key in out:  # which of the two values was meant is unknowable
            raise ValueError(f"--set {key}: given more than once")
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
    w = load_workload(args.trace, procs=args.procs, perfect_estimates=args.perfect_estimates,
                      wide=args.wide)
    if not args.quiet and not args.json and w.cleaning is not None:
        print(w.cleaning.summary(), file=sys.stderr)
    elif args.procs == "from-jobs" and w.cleaning is not None:  # always say what was chosen
        print(f"{w.cleaning.source}: machine size {w.procs} processors, the widest job "
              "(--procs from-jobs)", file=sys.stderr)
    return w


def simulate_arrays(workload: Any, name: str, options: dict[str, Any], overrun: str,
                    split: tuple[bool, bool], engine: str, priorities: Any
                    ) -> list[tuple[Any, dict]] | dict[str, str]:
    """The worker's side of a foreign policy's run (:func:`sandboxed`): resolve the policy
    ``name`` with ``options``, simulate it (``sim.batch.runner.simulate_all``; ``split``
    is ``(by_month, by_week)``) and return each schedule as plain data, ``(month or week
    label or None, fields of its Schedule)``; a decision the machine cannot carry out is
    ``{"policy_error": its message}``."""
    from sim.batch.plain import to_plain
    from sim.batch.runner import simulate_all
    from sim.batch.schedule import PolicyError

    spec = registry.policy_spec(name, **options)
    try:
        pairs = simulate_all(workload, spec, overrun=overrun, by_month=split[0],
                             by_week=split[1], engine=engine, priorities=priorities)
    except PolicyError as exc:
        return {"policy_error": str(exc)}
    return [(label, to_plain(s)) for label, s in pairs]


def sandboxed(seconds: float | None) -> Any:
    """A ``sim.batch.runner.Simulator`` running a foreign policy's simulation in the
    worker process of :mod:`sim.sandbox` (:func:`simulate_arrays`), killed after
    ``seconds`` of wall-clock time (None: no limit) or on Ctrl-C/SIGTERM. The schedules
    are rebuilt here from the workload of this process and the start, end and killed
    arrays of the answer (checked for type and length); ``run`` then validates and
    measures them as any other. A policy that raises, crashes, exits or runs past the
    limit is a ValueError of one line naming the policy and what happened; one whose
    decision the worker's machine refused is a ``PolicyError`` naming the policy."""
    def simulate(workload: Any, policy: Any, *, overrun: str, by_month: bool, by_week: bool,
                 engine: str, priorities: Any, progress: Any = None) -> list[tuple[Any, Any]]:
        from sim import sandbox

        what = f"policy {policy.name!r}"
        split = (bool(by_month), bool(by_week))
        answer = sandbox.call("sim.cli.simulate:simulate_arrays",
                              (workload, policy.name, dict(policy.options), overrun,
                               split, engine, priorities), seconds=seconds, what=what)
        return _rebuilt(workload, split, overrun, answer, what)

    return simulate


def _rebuilt(workload: Any, split: tuple[bool, bool], overrun: str, answer: Any,
             what: str) -> list[tuple[Any, Any]]:
    """The schedules of a worker's ``answer`` on this process's ``workload`` (or its
    months or weeks, ``split = (by_month, by_week)``); ValueError naming ``what`` when
    the answer does not fit them."""
    from sim.batch.plain import from_plain
    from sim.batch.runner import split_parts

    if isinstance(answer, dict) and isinstance(answer.get("policy_error"), str):
        from sim.batch.schedule import PolicyError

        raise PolicyError(f"{what}: {' '.join(answer['policy_error'].split())[:300]}")
    parts = split_parts(workload, *split)
    bad = f"{what}: the worker's answer does not fit the workload"
    if not isinstance(answer, list) or len(answer) != len(parts):
        raise ValueError(f"{bad} (expected {len(parts)} schedule(s))")
    out = []
    for (label, part), item in zip(parts, answer, strict=True):
        got, d = item if isinstance(item, tuple) and len(item) == 2 else (None, None)
        if got != label or not isinstance(d, dict):
            raise ValueError(f"{bad} (schedule {label or 'of the whole workload'})")
        out.append((label, from_plain(part, d, overrun, bad)))
    return out


def _simulator(specs: Sequence[Any], args: argparse.Namespace) -> list[Any]:
    """Per policy: :func:`sandboxed` for a foreign one (a user's ``MODULE:FACTORY`` or a
    plug-in), None (``run``'s own, in this process) for a built-in one. ValueError for
    ``--policy-time-limit`` when no policy is foreign (it would not act), and for
    ``--engine compiled`` with a policy the compiled engine does not run, before the
    trace is read."""
    foreign = [registry.is_foreign("", s.name) for s in specs]
    if args.feedback:  # refused before the trace is read
        if args.engine == "compiled":
            from sim.batch.machine import FEEDBACK_COMPILED

            raise ValueError(FEEDBACK_COMPILED)
        from sim.batch.runner import feedback_foreign_error

        for s, f in zip(specs, foreign, strict=True):
            if f:
                raise ValueError(feedback_foreign_error(s.name))
    if args.engine == "compiled":  # a policy the engine does not run: before the trace
        from sim.batch.fast.support import unsupported

        for s, f in zip(specs, foreign, strict=True):
            why = None if f else unsupported(s.build())
            if why is not None:
                raise ValueError(f"--engine compiled: the compiled engine does not support "
                                 f"{why}; use --engine python")
    seconds = args.policy_time_limit
    if seconds is not None and not any(foreign):
        raise ValueError(f"--policy-time-limit: acts on a user's or plug-in policy (run in "
                         f"a worker process), and {', '.join(s.name for s in specs)} "
                         f"{'is' if len(specs) == 1 else 'are'} built in")
    return [sandboxed(seconds) if f else None for f in foreign]


def _load_seconds(args: argparse.Namespace) -> float | None:
    """Seconds a foreign policy's import and factory call may take in the worker:
    ``--policy-time-limit``, else :data:`sim.registry.LOAD_SECONDS`."""
    limit = args.policy_time_limit
    return registry.LOAD_SECONDS if limit is None else float(limit)


def _spec(name: str, options: dict[str, Any], args: argparse.Namespace) -> Any:
    """The policy ``name`` with ``options``, resolved and built once to check it (a bad
    policy, option or value fails before the trace is read): a foreign one in the sandbox
    worker within :func:`_load_seconds` (its module is never imported here), the
    project's own here."""
    if registry.is_foreign("", name):
        return registry.foreign_policy_spec(name, options, seconds=_load_seconds(args))
    spec = registry.policy_spec(name, **options)
    spec.build()
    return spec


def cmd_simulate(args: argparse.Namespace) -> int:
    from sim.batch.runner import run

    spec = _spec(args.policy, _policy_options(args), args)
    if args.priorities is not None and not spec.takes_priorities:
        raise ValueError(f"--priorities: policy {args.policy!r} takes no priorities (the "
                         "slack-based policies do)")
    simulator = _simulator([spec], args)[0]
    w = _workload(args)
    row = run(w, spec, overrun=args.overrun, by_month=args.by_month, by_week=args.by_week,
              check=not args.no_validate, progress=not args.quiet, engine=args.engine, out=args.out,
              priorities=args.priorities, simulator=simulator, feedback=args.feedback)
    row["trace"] = w.name
    row["trace_sha256"] = _trace_sha256(args.trace)
    row["priorities"] = args.priorities
    if w.cleaning is not None:
        row["cleaning"] = w.cleaning.to_dict()
    if args.json:
        print(dump(row))
        return 0
    split = _split(args)
    print(f"{w.name}: {len(w)} jobs, {w.procs} processors, overrun={args.overrun}"
          f"{_split_phrase(split)}, {row['engine']} engine"
          + (f" ({_reason(row['engine_reason'])})" if row.get("engine_reason") else ""))
    if row.get("feedback"):
        print(feedback_line(row["feedback"]))
    if split is not None:
        parts, label, _ = split
        print(table(row[parts], (label, label)))
        print()
    print(table([row]))
    print(LEGEND)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from sim.batch.runner import run

    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    bare = [_spec(p, {}, args) for p in policies]  # fail early on an unknown name
    simulators = _simulator(bare, args)
    given = {k: v for k, v in _policy_options(args).items() if v is not None}
    unused = [k for k in given
              if all(s.accepted is not None and k not in s.accepted for s in bare)]
    if unused:
        raise ValueError(f"no policy among {policies} takes option(s) {unused}")
    if args.priorities is not None and not any(s.takes_priorities for s in bare):
        raise ValueError(f"--priorities: no policy among {policies} takes priorities (the "
                         "slack-based policies do)")
    # each policy gets the options it takes (for example --sf only the slack ones)
    specs = [s.with_options(**{k: v for k, v in given.items()
                               if s.accepted is None or k in s.accepted}) for s in bare]
    for s in specs:
        if s.options:  # a bad value fails before the first simulation
            registry.check_policy(s, seconds=_load_seconds(args))
    w = _workload(args)  # read once every option is checked: a refusal prints nothing else
    rows = []
    sha = _trace_sha256(args.trace)
    for spec, simulator in zip(specs, simulators, strict=True):
        rows.append(run(w, spec, overrun=args.overrun, by_month=args.by_month,
                        by_week=args.by_week, check=not args.no_validate,
                        progress=not args.quiet, engine=args.engine,
                        priorities=args.priorities, simulator=simulator,
                        feedback=args.feedback))
        rows[-1]["trace_sha256"] = sha
        rows[-1]["priorities"] = args.priorities
    split = _split(args)
    paired = paired_parts(rows, split) if split is not None else None
    if args.json:
        out = {"trace": w.name, "procs": w.procs, "rows": rows}
        if paired is not None:
            out["paired"] = paired
        print(dump(out))
        return 0
    print(f"{w.name}: {len(w)} jobs, {w.procs} processors, overrun={args.overrun}"
          f"{_split_phrase(split)}; "
          f"every schedule re-checked by the validator: {not args.no_validate}; "
          f"{_engines(rows)}")
    if rows and rows[0].get("feedback"):
        print(feedback_line(rows[0]["feedback"]))
    print(table(rows))
    if paired:
        print()
        print(paired_text(paired, split))
    print(LEGEND)
    return 0


def feedback_line(info: dict[str, Any]) -> str:
    """The line saying what user feedback did (``run``'s ``feedback`` entry)."""
    think = info["median_think"]
    return (f"user feedback: {info['dependent']} of {info['jobs']} jobs submitted their think "
            f"time (median {think:g} s) after the simulated end of an earlier job of their "
            f"user; the others at their log times")


#: metrics of the paired differences of ``compare --by-month/--by-week``: key, title
PAIRED_METRICS = (("avg_wait", "avg wait [s]"), ("avg_bounded_slowdown", "avg bsld"))


def _reason(text: str, most: int = 2) -> str:
    """The engine's reasons (``; ``-joined, one per distinct part) cut to ``most``, the
    rest counted (a split run has one per part size; ``--json`` keeps them all)."""
    reasons = text.split("; ")
    if len(reasons) <= most:
        return text
    return "; ".join(reasons[:most]) + f"; and {len(reasons) - most} more (--json lists them)"


def _split(args: argparse.Namespace) -> tuple[str, str, str] | None:
    """``sim.batch.runner.SPLITS`` entry (parts key, label key, what a part is) of the
    run's ``--by-month`` or ``--by-week``, None for the whole log."""
    from sim.batch.runner import SPLITS, split_flag

    flag = split_flag(args.by_month, args.by_week)
    return None if flag is None else SPLITS[flag]


def _split_phrase(split: tuple[str, str, str] | None) -> str:
    return "" if split is None else f", each {split[2]} from an empty machine"


def paired_parts(rows: Sequence[dict[str, Any]], split: tuple[str, str, str]
                 ) -> list[dict[str, Any]]:
    """Paired differences of each policy to the first one (``rows[0]``, the baseline) on
    the same parts (months or weeks) of a split run: per metric of
    :data:`PAIRED_METRICS`, ``policy - baseline`` on each part, their mean, the half-width
    of its two-sided 95% Student-t interval over the parts (None for n < 2: never an
    interval that was not computed), n, and how many parts the policy did better (less),
    equally or worse (more). The runs of two policies on one part share its jobs, which
    the difference cancels."""
    from sim.stats import mean_ci

    parts, label, _ = split
    base = {p[label]: p for p in rows[0][parts]}
    out = []
    for r in rows[1:]:
        mine = {p[label]: p for p in r[parts]}
        common = [k for k in base if k in mine]  # the same jobs: every part, both runs
        for key, _ in PAIRED_METRICS:
            diffs = [float(mine[k][key]) - float(base[k][key]) for k in common]
            mean, half, n = mean_ci(diffs)
            out.append({"policy": r["policy"], "baseline": rows[0]["policy"], "metric": key,
                        "mean": mean, "half_width": half if n >= 2 else None, "n": n,
                        "less": sum(d < 0 for d in diffs), "same": sum(d == 0 for d in diffs),
                        "more": sum(d > 0 for d in diffs)})
    return out


def paired_text(paired: list[dict[str, Any]], split: tuple[str, str, str]) -> str:
    """:func:`paired_parts` as an aligned text table, one row per policy."""
    base = paired[0]["baseline"]
    head = ["policy", *(f"{title} - {base}" for _, title in PAIRED_METRICS),
            f"{split[1]}s less/same/more"]
    cells = [head]
    by_policy: dict[str, dict[str, dict[str, Any]]] = {}
    for p in paired:
        by_policy.setdefault(p["policy"], {})[p["metric"]] = p
    for policy, ms in by_policy.items():
        first = ms[PAIRED_METRICS[0][0]]
        cells.append([policy, *(_paired_cell(ms[k]) for k, _ in PAIRED_METRICS),
                      f"{first['less']}/{first['same']}/{first['more']}"])
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w)
                       for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    n = paired[0]["n"]
    ci = (f"mean +- 95% Student-t half-width over the {n} {split[1]}s" if n >= 2
          else f"mean, no interval from {n} {split[1]}")
    return (f"paired difference to {base}, {split[1]} by {split[1]} (each {split[1]}'s mean "
            f"minus {base}'s on the same jobs; {ci}; less/same/more by avg wait):\n"
            + "\n".join(lines))


def _paired_cell(p: dict[str, Any]) -> str:
    if p["half_width"] is None:
        return f"{p['mean']:+.1f}"
    return f"{p['mean']:+.1f} +- {p['half_width']:.1f}"


def _engines(rows: list[dict]) -> str:
    """``compiled engine`` when every row ran on one engine, else ``engines: easy
    compiled, ...``."""
    names = {r["engine"] for r in rows}
    if len(names) == 1:
        return f"{names.pop()} engine"
    return "engines: " + ", ".join(f"{r['policy']} {r['engine']}" for r in rows)


def _month(stamp: str | None) -> str:
    """``Mon Sep 23 14:00:31 CEST 1996`` -> ``Sep 1996``."""
    words = (stamp or "").split()
    return f"{words[1]} {words[-1]}" if len(words) >= 3 else "-"


def cmd_traces(args: argparse.Namespace) -> int:
    from instances.bundled import list_traces, trace_header, trace_path

    rows = []
    for name in list_traces():
        h = trace_header(name)
        rows.append((name, h.get("MaxRecords", h.get("MaxJobs", "-")), h.get("MaxProcs", "-"),
                     f"{_month(h.get('StartTime'))} .. {_month(h.get('EndTime'))}"
                     if "StartTime" in h else "-", h.get("Computer", "-"),
                     str(trace_path(name))))
    head = ("name", "jobs", "processors", "period", "computer", "file")
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)).rstrip())
    print("jobs, processors, period, computer: as the log's own header declares them "
          "(MaxRecords, MaxProcs, StartTime .. EndTime); the cleaning report of `simulate` "
          "counts what a run keeps.")
    return 0


def _policy_name(text: str) -> str:
    """``--policy``: a registered name or ``MODULE:FACTORY``."""
    from sim.plugins import is_reference

    if is_reference(text) or text in registry.POLICIES:
        return text
    from sim.names import did_you_mean

    raise argparse.ArgumentTypeError(
        f"unknown policy {short(text)}; {did_you_mean(text, registry.POLICIES)}"
        "`schedsearch solvers policies` lists them; or a user's MODULE:FACTORY")


def add_simulate(sub: Any) -> None:
    """Register ``simulate`` and ``compare`` on the ``schedsearch`` parser."""
    p = sub.add_parser("simulate", help="simulate one policy on a trace", formatter_class=Fmt)
    _add_trace_options(p)
    p.add_argument("--policy", required=True, type=_policy_name,
                   help="registered policy: " + ", ".join(sorted(registry.POLICIES))
                   + "; or a user's MODULE:FACTORY (importable from the current directory "
                     "or PYTHONPATH)")
    p.add_argument("--out", help="write the simulated schedule, by the name's end: .swf or "
                        ".swf.gz SWF (wait field filled), .kswf (K-resource), .csv Batsim's "
                        "jobs.csv; any other name is refused")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("compare", help="several policies side by side on one trace",
                       formatter_class=Fmt)
    _add_trace_options(p)
    p.add_argument("--policies", default="fcfs,easy,conservative,slack",
                   help="comma-separated registered policies, of: "
                        + ", ".join(sorted(registry.POLICIES)))
    p.set_defaults(func=cmd_compare)


def add_traces(sub: Any) -> None:
    """Register ``traces`` on the ``schedsearch`` parser."""
    p = sub.add_parser("traces", help="list the bundled traces")
    p.set_defaults(func=cmd_traces)


def cmd_compile(args: argparse.Namespace) -> int:
    """Compile and cache the compiled batch engine's kernels and the vector-packing
    pricer's (``colgen`` uses it only once cached), saying each on stderr."""
    from models.kresource.knapsack import compile_kernel
    from sim.batch.fast.cache import compile_kernels, numba_installed

    if not numba_installed():
        raise ValueError("numba is not installed: pip install 'schedsearch[fast]'")

    def say(what: str) -> None:
        print(f"compiling {what} (30-90 s the first time, instant once cached)...",
              file=sys.stderr, flush=True)

    ok = compile_kernels(progress=say)
    print(f"compiled engine's kernels cached: {ok}")
    say("the vector-packing pricer (colgen)")
    priced = compile_kernel()
    print(f"colgen's pricing kernel cached: {priced}")
    return 0 if ok and priced else 1


def add_compile(sub: Any) -> None:
    """Register ``compile`` on the ``schedsearch`` parser."""
    p = sub.add_parser("compile", help="compile the compiled batch engine's kernels once "
                                       "(numba; at install), so no run waits for it",
                       formatter_class=Fmt)
    p.set_defaults(func=cmd_compile)
