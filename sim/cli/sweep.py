"""The ``sweep``, ``report`` and ``reproduce`` commands of ``schedsearch``.

``add_sweep_commands`` registers them on the parser :mod:`sim.cli` assembles.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from sim.cli.common import names_arg


def cmd_sweep(args: argparse.Namespace) -> int:
    from sim.sweep.execute import run_sweep

    if args.dask is not None and args.jobs is not None:
        raise ValueError("--dask and --jobs: give one (--dask runs on the cluster's workers)")
    summary = run_sweep(args.spec, args.out, jobs=args.jobs, dask=args.dask,
                        retry_failed=args.retry_failed,
                        progress=not args.quiet and sys.stderr.isatty())
    print(summary.text())
    return 1 if summary.failed else 0

def replication_help() -> str:
    """The sweep's epilog: the replication methods and the readings of resampling."""
    from instances.replicate import LONG_TERM, MAX_USERS, SESSION_GAP

    return (
        "Replicas of a trace (workload key replicate, one cell per seed): 'resample' is "
        "Zakay & Feitelson's user-based workload resampling (2013), on "
        "the log's weeks (ISO weeks of its time zone, or 7-day weeks from the first submit "
        "without UnixStartTime): a user whose sessions (a gap of more than "
        f"{SESSION_GAP // 60} min between submits starts a new one) span at least "
        f"long_term weeks (default {LONG_TERM}) is long-term and kept at its own times; "
        "for each week as many temporary "
        "users as the log's week starts are drawn with replacement from all temporary "
        "users and moved by whole weeks to start then; sessions move whole, keeping "
        "weekday and time of day; jobs moved outside the log's first..last submit are left "
        "out, so the replica has the log's weeks and about its active users per week; "
        "option users (a number or a list, one cell per value, in (0, "
        f"{MAX_USERS:g}]) multiplies the temporary users drawn per week (the paper's load "
        "by the number of users; users x count rounded down, plus one with probability "
        "the fraction, drawn with the seed; long-term users kept, so the offered load, "
        "which the report shows, grows by less); load then compresses the replica's "
        "submit times (both act). 'jitter' scales run times by a factor in [1 - amount, "
        "1 + amount]; 'estimates' draws Tsafrir-model requested times. months/weeks = "
        "\"each\" simulate each month or week alone; report --over month (or week) pairs "
        "policies on them. feedback = true (a trace, plain or replicated): a job submitted "
        "at most 20 min after the log's end of an earlier job of its user (the log's wait, "
        "SWF field 3) is submitted that think time after that job's simulated end; not with "
        "months/weeks or a load other than 1.")


GANTT_JOBS = 400
"""Most jobs a Gantt chart draws unless ``--gantt-jobs`` says otherwise."""


def cmd_report(args: argparse.Namespace) -> int:
    from sim.sweep.report import load_rows, report, select

    if not Path(args.results).exists():
        raise ValueError(f"{args.results}: no such results store")
    if args.out is not None and Path(args.out).exists() and not Path(args.out).is_dir():
        raise ValueError(f"--out {args.out}: exists and is not a directory")
    if args.window is not None and not args.gantt:
        raise ValueError("--window: only with --gantt KEY (the Gantt chart's time window)")
    _yscale(args)
    if (args.logy or args.yscale != "auto") and not args.plot:
        raise ValueError("--logy/--yscale: only with --plot PARAM")
    if args.gantt_jobs is not None and not args.gantt:
        raise ValueError("--gantt-jobs: only with --gantt KEY (the most jobs its chart draws)")
    if args.gantt_jobs is None:
        args.gantt_jobs = GANTT_JOBS
    if args.gantt_jobs < 1:
        raise ValueError(f"--gantt-jobs {args.gantt_jobs}: expected at least 1")
    facet = args.facet
    if facet is not None and not args.plot:
        raise ValueError("--facet: only with --plot PARAM")
    if args.plot:  # refused before a file is written
        from sim.sweep import plots

        plots.check_axes(select(load_rows(args.results), args.where), args.plot, facet)
    gantt = _gantt_figure(args) if args.gantt else None  # refused before a file is written
    metrics = args.metric
    rows_by = [r.strip() for r in args.rows.split(",") if r.strip()] if args.rows is not None \
        else None
    over = args.over or []
    text = report(args.results, metrics=metrics, rows_by=rows_by, cols_by=args.cols,
                  baseline=args.baseline, where=args.where, level=args.level,
                  out_dir=args.out, over=over)
    print(text)
    cells = select(load_rows(args.results), args.where)
    if args.keys or len(cells) <= 200:
        print(_keys(cells))
    else:
        print(f"{len(cells)} cells: --keys lists each one's key for --gantt.")
    if args.plot or args.gantt:
        out = Path(args.out or ".")
        out.mkdir(parents=True, exist_ok=True)
        from sim.sweep import plots

        rows = select(load_rows(args.results), args.where)
        if args.plot:
            labels = _labels(args.results) if args.cols == "label" else None
            for m in metrics or _metrics(args.results):
                f = plots.plot_metric(rows, m, args.plot, out / f"{m}_vs_{args.plot}.png",
                                      cols_by=args.cols, level=args.level, facet=facet,
                                      yscale=_yscale(args), where=args.where, labels=labels)
                print(f"wrote {f}", file=sys.stderr)
                if args.baseline:
                    f = plots.plot_gap(rows, m, args.baseline, args.plot,
                                       out / f"{m}_gap_to_{args.baseline}.png",
                                       cols_by=args.cols, facet=facet, where=args.where,
                                       labels=labels)
                    print(f"wrote {f}", file=sys.stderr)
        if gantt is not None:
            f = out / f"schedule_{args.gantt}.png"
            plots.save(gantt, f)
            print(f"wrote {f}", file=sys.stderr)
    return 0


def _gantt_figure(args: argparse.Namespace) -> Any:
    """The ``--gantt`` figure of ``args`` (the cell re-simulated, the window checked)."""
    from sim.sweep import plots

    cell = _cell(args.results, args.gantt)
    return plots.schedule_figure(cell, window=args.window, max_jobs=args.gantt_jobs)


def _yscale(args: argparse.Namespace) -> str:
    """``--yscale``, or ``log`` for ``--logy``; the two disagreeing is refused."""
    if args.logy and args.yscale not in ("auto", "log"):
        raise ValueError(f"--logy contradicts --yscale {args.yscale}; give one")
    return "log" if args.logy else args.yscale


def window_arg(text: str) -> tuple[float, float]:
    """``START:END`` (seconds since the first submit) as two floats."""
    parts = text.split(":")
    try:
        lo, hi = (float(v) for v in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected START:END in seconds since the first submit") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise argparse.ArgumentTypeError(f"{text!r}: expected finite START < END")
    return lo, hi


def _meta_list(path: str, key: str, default: str) -> list[str]:
    import json

    from sim.sweep.store import Store

    with Store.open(path, create=False) as st:
        value = json.loads(st.meta().get(key, default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{path}: meta {key!r} is not a list of names")
    return value


def _metrics(path: str) -> list[str]:
    """Every metric the store's spec asked for (each gets its plot)."""
    return _meta_list(path, "metrics", '["avg_wait"]')


def _labels(path: str) -> list[str]:
    """The spec's labels in spec order (a label keeps its colour in every plot)."""
    return _meta_list(path, "labels", "[]") or None


def _keys(rows: list[dict[str, Any]]) -> str:
    """One line per cell: its key (for ``--gantt KEY``) and its parameters."""
    from sim.sweep.report import varying

    vary = [k for k in varying(rows) if k not in ("key",)]
    lines = ["Cells (`--gantt KEY` takes a unique prefix of the key):", ""]
    for r in sorted(rows, key=lambda r: r["key"]):
        lines.append(f"- `{r['key']}` " + ", ".join(f"{k}={r.get(k)}" for k in vary))
    return "\n".join(lines) + "\n"


def _cell(path: str, key: str) -> dict[str, Any]:
    from sim.sweep.store import Store

    with Store.open(path, create=False) as st:
        matches = [r for r in st.rows(None) if r["key"].startswith(key)]
    if len(matches) != 1:
        raise ValueError(f"{path}: --gantt {key!r} matches {len(matches)} cells; give a "
                         "unique key prefix (column 'key' of the store)")
    return matches[0]["params"]


def cmd_reproduce(args: argparse.Namespace) -> int:
    from sim.sweep import reproduce

    if args.name is None or args.name == "list":
        for name in sorted(reproduce.REPRODUCTIONS):
            print(f"{name:18s} {reproduce.describe(name)}")
        return 0
    return reproduce.run(args.name, args.args)


def add_sweep_commands(sub: Any, fmt: type[argparse.HelpFormatter]) -> None:
    """Register ``sweep``, ``report`` and ``reproduce`` on the ``schedsearch`` parser."""
    p = sub.add_parser("sweep", help="run a grid of cells from a spec into a results store",
                       formatter_class=fmt, description="Expand SPEC (TOML or JSON; see "
                       "sim.sweep.spec) and run every cell RESULTS does not hold yet; each "
                       "finished cell is committed at once, so a killed run resumes.",
                       epilog=replication_help())
    p.add_argument("spec", help="sweep spec, .toml or .json")
    p.add_argument("--out", required=True, help="SQLite results store (created if missing)")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes of the local pool (default: every core; "
                        "1 runs in this process)")
    p.add_argument("--dask", metavar="ADDRESS",
                   help="run on this Dask scheduler (tcp://host:8786) instead")
    p.add_argument("--retry-failed", action="store_true",
                   help="rerun the cells stored as failed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("report", help="tables (Markdown, CSV) and plots of a results store",
                       formatter_class=fmt)
    p.add_argument("results", help="SQLite results store")
    p.add_argument("--metric", type=names_arg,
                   help="comma-separated metrics (default: the spec's); see "
                        "sim.sweep.spec.METRICS")
    p.add_argument("--rows", help="comma-separated parameters as rows (default: every "
                                  "parameter that varies, except the columns and seed)")
    p.add_argument("--cols", default="label", help="parameter as columns")
    p.add_argument("--baseline", help="a value of --cols to compute the gap to")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE",
                   help="keep only cells with this parameter value (repeatable)")
    p.add_argument("--level", type=float, default=0.95, help="confidence level")
    p.add_argument("--over", type=names_arg, metavar="P,Q",
                   help="parameters averaged over like the seed (e.g. month or week: the "
                        "parts of a split become the runs of a cell, paired across "
                        "policies)")
    p.add_argument("--out", help="directory for report.md, <metric>.csv (with --baseline "
                                 "<metric>_paired.csv: the difference on each part) and the "
                                 "PNGs")
    p.add_argument("--plot", metavar="PARAM",
                   help="PNG of each metric (--metric, default every metric of the spec) vs "
                        "this numeric parameter, one panel per value of the other varying "
                        "parameters (and the gap plot with --baseline)")
    p.add_argument("--facet", type=names_arg, metavar="P,Q",
                   help="with --plot: one panel per value of these parameters (default: "
                        "every other parameter that varies)")
    p.add_argument("--logy", action="store_true",
                   help="with --plot: log-scale metric axis (same as --yscale log)")
    p.add_argument("--yscale", choices=("auto", "log", "linear"), default="auto",
                   help="with --plot: metric axis; auto is log where the positive values "
                        "span more than two decades (symlog where some are <= 0), said in "
                        "the axis label")
    p.add_argument("--keys", action="store_true",
                   help="list each cell's key (for --gantt) with its parameters (listed "
                        "anyway up to 200 cells)")
    p.add_argument("--gantt", metavar="KEY",
                   help="re-simulate this cell (key prefix) and draw its Gantt chart, "
                        "queue length and utilization")
    p.add_argument("--gantt-jobs", type=int, default=None,
                   help=f"most jobs drawn in the Gantt chart (default {GANTT_JOBS}): a larger "
                        "schedule is zoomed to its first jobs to start, a --window holding "
                        "more is refused")
    p.add_argument("--window", type=window_arg, metavar="START:END",
                   help="with --gantt: draw only this time window, in seconds since the "
                        "first submit")
    p.set_defaults(func=cmd_report)

    from sim.sweep.reproduce import REPRODUCTIONS

    p = sub.add_parser("reproduce", help="a paper's table or figure (list: no NAME)",
                       formatter_class=fmt, description="Run the sweep behind one paper "
                       "table into its own store and write the table beside the paper's "
                       "numbers. Options after NAME go to the reproduction (NAME --help).")
    p.add_argument("name", nargs="?", choices=sorted(REPRODUCTIONS) + ["list"],
                   metavar="NAME", help="one of: " + ", ".join(sorted(REPRODUCTIONS)))
    p.add_argument("args", nargs=argparse.REMAINDER,
                   help="options of the reproduction, e.g. --quick, --jobs 2")
    p.set_defaults(func=cmd_reproduce)
