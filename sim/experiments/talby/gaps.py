"""Heuristic gap per insertion and end-to-end optimal insertion vs AST (Talby & Feitelson).

Two parts, each one command:

``python -m sim.experiments.talby.gaps gaps [--kmax 30] [--time-limit 120] [--dtime 10] [...]``
    On the bundled KTH snapshot set (``instances/data/slack_snapshots``), every compress
    order (AST, AAT, DU, DC, DP) and the paper's exhaustive order search against the
    true optimum (CP-SAT, counted only where it proves optimality within its limit),
    and the orders against the exhaustive search on queues it can handle (k <= 6).
    The limits read as in ``e2e``: with ``--dtime D`` the proved set is the same on any
    machine (as long as the wall-clock guard ``--time-limit`` is never reached; its
    hits are counted in the file), without it it depends on the machine's load. Gaps are
    absolute price differences (the price can be negative or zero, so a ratio is
    meaningless); they are also shown divided by the new job's
    ``n^alpha_u``, i.e. in seconds of the new job's wait. The defaults are the full
    configuration (:data:`GAPS_FULL`), which writes ``results/slack_gaps.md``; any other
    value writes the git-ignored top-level ``results/slack_gaps.md`` and says so.
``python -m sim.experiments.talby.gaps e2e [--months 1996-11 1997-08] [--time-limit 1] [--dtime D]``
    KTH-SP2 with 128 processors, jobs killed at their request, equal priorities, SF 3,
    AWT 2401 s, all alphas 1: the slack scheduler with AST against the same scheduler
    with CP-SAT at every insert and remove (``slack-optimal``), month by month from an
    empty machine. Without ``--dtime`` every CP-SAT call is limited by ``--time-limit``
    seconds of wall clock, so the schedules depend on the machine's load; with
    ``--dtime D`` by D of CP-SAT's deterministic time per stage (the same schedules on any
    machine with the same OR-Tools), the wall clock only a guard whose hits are counted.
    Each month is written to ``results/slack_e2e_<month>.json`` (with its command and
    commit); ``results/slack_e2e.md`` is rebuilt from all month files present, so months
    can run as separate processes.

Times are seconds; prices are processor-seconds weighted as in ``sim.problems.insertion``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from heuristics.slack import EXHAUSTIVE, ORDERS, SlackPolicy
from heuristics.slack import solve as solve_order
from instances.atomic import write_atomic
from models.slack_insertion import OptimalInsertionPolicy, solve_cpsat
from models.slack_insertion.inserter import deterministic_params, guard_reached
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, markdown_row, markdown_table
from sim.experiments.talby.snapshots import snapshots_by_k
from sim.problems import insertion as ins
from sim.result import Status

RESULTS = Path(__file__).resolve().parent / "results"
BINS = [(0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, 30), (31, 45), (46, 70)]
AWT = 2401.0


def _bin(k: int) -> str:
    for lo, hi in BINS:
        if lo <= k <= hi:
            return f"{lo}-{hi}"
    return f">{BINS[-1][1]}"


def _tol(r) -> float:
    return 2 * r.params.get("rounding_error", 0.0) + 1e-6 * (1 + abs(r.objective))


#: The gaps part's full configuration (the committed ``results/slack_gaps.md``); a run
#: with any other value writes to the git-ignored top-level ``results/`` instead.
GAPS_FULL = {"kmax": 30, "time_limit": 120.0, "dtime": 10.0, "compress": "hold"}


def gaps(kmax: int, time_limit: float, exhaustive_k: int = 6, compress: str = "hold",
         dtime: float | None = None, out: Path | None = None) -> str:
    """Gap table on the snapshot set; writes it to ``out`` (default
    ``results/slack_gaps.md``) and returns it.

    Parameters
    ----------
    kmax : int
        Largest queue length of the snapshots used.
    time_limit : float
        Wall-clock seconds of CP-SAT per problem (with ``dtime``: the guard).
    exhaustive_k : int
        Largest queue length given to the paper's exhaustive order search.
    compress : str
        The reading of the compress step of the orders (``heuristics.slack``: "hold"
        or "list").
    dtime : float, optional
        CP-SAT's deterministic time per stage; None: the wall clock alone limits it.
    out : Path, optional
        The file written.
    """
    rows = []
    t0 = time.perf_counter()
    for name, pb in snapshots_by_k(0, kmax):
        opt = solve_cpsat(pb, time_limit=time_limit, **deterministic_params(dtime))
        rec = {"name": name, "k": pb.k, "kind": "insert" if pb.new else "remove",
               "opt_status": opt.status.value, "opt": opt.objective, "tol": _tol(opt),
               "norm": ins.new_weight(pb) or 1.0, "cpsat_s": opt.runtime,
               "guard": guard_reached(opt.runtime, time_limit)}
        for order in ORDERS:
            rec[order] = solve_order(pb, order=order, compress=compress).objective
        if pb.k <= exhaustive_k:
            rec[EXHAUSTIVE] = solve_order(pb, order=EXHAUSTIVE, max_exhaustive=exhaustive_k,
                                          compress=compress).objective
        rows.append(rec)
        print(f"  {name}: k={pb.k} cpsat {opt.status.value} {opt.runtime:.2f}s", file=sys.stderr,
              flush=True)
    elapsed = time.perf_counter() - t0
    guard = sum(r["guard"] for r in rows)
    det = "" if dtime is None else f" --dtime {dtime:g}"
    limit = _limit_words(time_limit, dtime, guard)

    lines = [
        "# Heuristic gap per insertion (slack-based backfilling)",
        "",
        f"Command: `python -m sim.experiments.talby.gaps gaps --kmax {kmax} --time-limit "
        f"{time_limit:g}{det} --compress {compress}` at commit {provenance.commit()}.",
        "",
        f"Run time: {elapsed:.0f} s on this machine, load average "
        f"{provenance.load_average()} at the end.",
        "",
        f"Problems: the bundled KTH snapshot set with queue length k <= {kmax} "
        f"({len(rows)} problems). Optimum: "
        "CP-SAT over all start times (`models.slack_insertion.solve_cpsat`), used only "
        f"where it proved optimality within its limit per problem: {limit}. "
        "Gap = heuristic price - reference "
        "price (price units: processor-seconds weighted as in `sim.problems.insertion`); "
        "'opt %' = share of problems where the heuristic hits the reference price "
        "(within CP-SAT's rounding bound); 'median/max gap (s)' = gap divided by the new "
        "job's n (= seconds of the new job's wait; for remove problems the raw gap).",
        "",
        "## Against the true optimum (CP-SAT)",
        "",
    ]
    proved = [r for r in rows if r["opt_status"] == Status.OPTIMAL.value]
    lines.append(f"CP-SAT proved {len(proved)} of {len(rows)} problems optimal.")
    if proved:
        lines.append(f"Largest queue proved: k = {max(r['k'] for r in proved)}; not proved: "
                     + (", ".join(r["name"] for r in rows if r not in proved) or "none")
                     + ".")
    lines.append("")
    cols = list(ORDERS) + [EXHAUSTIVE]
    lines += markdown_table(
        ["k", "problems", *(h for c in cols for h in (f"{c} opt %",
                                                     f"{c} median / max gap (s)"))], [])
    for lo, hi in BINS:
        sub = [r for r in proved if lo <= r["k"] <= hi]
        if not sub:
            continue
        cells = []
        for c in cols:
            g = [(r[c] - r["opt"], r["tol"], r["norm"]) for r in sub if c in r]
            if not g:
                cells += ["-", "-"]
                continue
            hit = sum(1 for d, t, _ in g if d <= t)
            norm = [max(d, 0.0) / n for d, _, n in g]
            cells += [f"{100 * hit / len(g):.0f}",
                      f"{statistics.median(norm):.0f} / {max(norm):.0f}"]
        lines.append(markdown_row([f"{lo}-{hi}", len(sub), *cells]))
    worse = [(r["name"], c, r[c] - r["opt"]) for r in proved for c in cols
             if c in r and r[c] < r["opt"] - r["tol"]]
    lines += ["", f"Heuristic strictly cheaper than the proved optimum: {len(worse)} cases "
              "(must be 0).", ""]

    lines += ["## Orders against the paper's exhaustive search (k <= "
              f"{exhaustive_k})", ""]
    lines += markdown_table(["k", "problems", *(f"{c} = exhaustive %" for c in ORDERS),
                             "exhaustive = optimum %"], [])
    for lo, hi in BINS:
        sub = [r for r in rows if lo <= r["k"] <= hi and EXHAUSTIVE in r]
        if not sub:
            continue
        cells = []
        for c in ORDERS:
            hit = sum(1 for r in sub if r[c] <= r[EXHAUSTIVE] + r["tol"])
            cells.append(f"{100 * hit / len(sub):.0f}")
        sp = [r for r in sub if r["opt_status"] == Status.OPTIMAL.value]
        hit = sum(1 for r in sp if r[EXHAUSTIVE] <= r["opt"] + r["tol"])
        cells.append(f"{100 * hit / len(sp):.0f}" if sp else "-")
        lines.append(markdown_row([f"{lo}-{hi}", len(sub), *cells]))
    lines.append("")
    text = "\n".join(lines)
    out = RESULTS / "slack_gaps.md" if out is None else out
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, text)
    return text


# ---------------------------------------------------------------------------- end to end
def _month(label: str):
    from instances.bundled import trace_path
    from instances.months import split_months
    from instances.swf import read_swf

    w = read_swf(trace_path("KTH-SP2"), procs=128)
    for lab, m in split_months(w):
        if lab == label:
            return m
    raise ValueError(f"no month {label!r} in KTH-SP2")


def _stats(schedule) -> dict[str, float]:
    from sim.batch.metrics import summary

    s = summary(schedule)
    return {k: float(s[k]) for k in ("avg_wait", "avg_bounded_slowdown", "utilization")
            if k in s}


def e2e_month(label: str, time_limit: float, dtime: float | None = None,
              max_jobs: int | None = None) -> dict:
    """Simulate one KTH month with AST and with optimal insertion; returns the record.

    Parameters
    ----------
    label : str
        The month, ``YYYY-MM``.
    time_limit : float
        Wall-clock seconds per CP-SAT call (the guard, with ``dtime``).
    dtime : float, optional
        CP-SAT's deterministic time per stage; None: the wall clock alone limits a call.
    max_jobs : int, optional
        Only the month's first ``max_jobs`` jobs (a check, never a committed result).
    """
    from dataclasses import replace

    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    month = _month(label)
    if max_jobs is not None:
        month = replace(month, jobs=tuple(month.jobs[:max_jobs]))
    rec: dict = {"command": provenance.command(), "commit": provenance.commit(),
                 "month": label, "jobs": len(month.jobs), "time_limit": time_limit,
                 "dtime": dtime}
    ast = SlackPolicy(order="AST", sf=3.0, awt=AWT)
    s = simulate(month, ast)
    validate(s)
    rec["AST"] = _stats(s) | {"sim_seconds": s.sim_seconds}
    opt = OptimalInsertionPolicy(sf=3.0, awt=AWT, time_limit=time_limit, dtime=dtime)
    s2 = simulate(month, opt)
    validate(s2)
    rec["optimal"] = _stats(s2) | {"sim_seconds": s2.sim_seconds}
    rec["optimal_calls"] = dict(opt.inserter.stats)
    rec["same_starts"] = float(np.mean(s.start == s2.start))
    return rec


def _limit(rec: dict) -> str:
    """A month's limit per call, in words (see :func:`e2e_report`)."""
    if rec.get("dtime") is None:
        return f"wall {rec['time_limit']:g} s"
    guard = rec["optimal_calls"].get("guard", 0)
    return f"det. {rec['dtime']:g} (guard {rec['time_limit']:g} s reached {guard:.0f}x)"


def _limit_words(time_limit: float, dtime: float | None, guard: int) -> str:
    """The gaps part's CP-SAT limit in words, with the count of problems that reached
    the wall-clock guard (:func:`guard_reached`)."""
    if dtime is None:
        return (f"{time_limit:g} s of wall clock (so the proved set depends on the "
                "machine's load)")
    return (f"CP-SAT's deterministic time {dtime:g} per stage, with a wall-clock guard of "
            f"{time_limit:g} s reached by {guard} problems (the proved set is the same on "
            "any machine with the same OR-Tools while the guard is never reached)")


def e2e_report() -> str:
    recs = []
    for f in sorted(RESULTS.glob("slack_e2e_*.json")):
        recs.append(json.loads(f.read_text()))
    lines = [
        "# End to end: optimal insertion vs AST (KTH-SP2, 128 processors)",
        "",
        "Command per month: `python -m sim.experiments.talby.gaps e2e --months LABEL "
        "--time-limit S [--dtime D]` (each month's file records its own command and "
        "commit when its writer did). Setting: jobs killed at their request, equal priorities "
        "(UP = PP = 0), SF 3, AWT 2401 s, all alphas 1, each month from an empty machine. "
        "`slack-optimal` calls CP-SAT at every insert and remove with the given time "
        "limit per call; 'proved' counts the calls it solved to proved optimality "
        "(the rest use its best schedule found, never dearer than the current one). "
        "Limit 'wall S': S seconds of wall clock per call, so the schedule depends on the "
        "machine's load; 'det. D': D of CP-SAT's deterministic time per stage, with the "
        "count of calls that reached the wall-clock guard.",
        "",
        *markdown_table(["month", "jobs", "AST avg wait (s)", "optimal avg wait (s)", "change",
                         "AST bsld", "optimal bsld", "calls proved / stopped / trivial",
                         "CP-SAT s", "AST sim s", "same start %", "limit per call"], []),
    ]
    for r in recs:
        a, o, c = r["AST"], r["optimal"], r["optimal_calls"]
        ch = (o["avg_wait"] - a["avg_wait"]) / a["avg_wait"] * 100 if a["avg_wait"] else math.nan
        lines.append(markdown_row([
            r["month"], r["jobs"], f"{a['avg_wait']:.0f}", f"{o['avg_wait']:.0f}", f"{ch:+.1f}%",
            f"{a.get('avg_bounded_slowdown', math.nan):.2f}",
            f"{o.get('avg_bounded_slowdown', math.nan):.2f}",
            f"{c['OPTIMAL']:.0f} / {c['FEASIBLE']:.0f} / {c['trivial']:.0f}",
            f"{c['seconds']:.0f}", f"{a['sim_seconds']:.1f}", f"{100 * r['same_starts']:.0f}",
            _limit(r)]))
    made = [f"{r['month']} at commit {r['commit']} with `{r['command']}`" for r in recs
            if "commit" in r]
    if made:
        lines += ["", "Month files that record their writer: " + "; ".join(made) + "."]
    lines.append("")
    text = "\n".join(lines)
    write_atomic(RESULTS / "slack_e2e.md", text)
    return text


def _add_limits(parser: argparse.ArgumentParser, time_limit: float,
                dtime: float | None) -> None:
    """The CP-SAT limits of both parts: ``--time-limit`` (wall clock per call, the guard
    with ``--dtime``) and ``--dtime`` (deterministic time per stage)."""
    parser.add_argument("--time-limit", type=float, default=time_limit,
                        help="wall-clock seconds per CP-SAT call (with --dtime: the guard)")
    none = "none, the wall clock alone limits a call"
    parser.add_argument("--dtime", type=float, default=dtime,
                        help="CP-SAT's deterministic time per stage (default "
                             f"{none if dtime is None else f'{dtime:g}'})")


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.talby.gaps",
                description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="part", required=True)
    g = sub.add_parser("gaps", help="heuristic gap per insertion on the snapshot set")
    g.add_argument("--kmax", type=int, default=GAPS_FULL["kmax"])
    _add_limits(g, GAPS_FULL["time_limit"], GAPS_FULL["dtime"])
    g.add_argument("--compress", choices=("hold", "list"), default=GAPS_FULL["compress"],
                   help="compress reading of the orders (heuristics.slack)")
    e = sub.add_parser("e2e", help="optimal insertion vs AST on KTH months")
    e.add_argument("--months", nargs="+", default=["1996-11", "1997-08"])
    _add_limits(e, 1.0, None)
    args = ap.parse_args(argv)
    if not (args.time_limit > 0 and (args.dtime is None or args.dtime > 0)):
        ap.error(f"--time-limit and --dtime must be > 0, got {args.time_limit:g} and "
                 f"{args.dtime}")
    RESULTS.mkdir(exist_ok=True)
    if args.part == "gaps":
        given = {k: getattr(args, k) for k in GAPS_FULL}
        out = None if given == GAPS_FULL else PARTIAL_DIR / "slack_gaps.md"
        print(gaps(args.kmax, args.time_limit, compress=args.compress, dtime=args.dtime,
                   out=out))
        if out is not None:
            print(f"written to {out} (not the full configuration {GAPS_FULL}: the "
                  "committed results are left as they are)", file=sys.stderr)
    else:
        for label in args.months:
            rec = e2e_month(label, args.time_limit, args.dtime)
            write_atomic(RESULTS / f"slack_e2e_{label}.json", json.dumps(rec, indent=1) + "\n")
            print(json.dumps(rec), file=sys.stderr, flush=True)
        print(e2e_report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
