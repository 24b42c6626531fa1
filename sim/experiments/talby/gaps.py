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
``python -m sim.experiments.talby.gaps e2e --priorities differential [--months ...] [...]``
    The same months under Table 3's differential priorities (``instances.priorities``'
    ``fifth``: every fifth job of the whole log UP = PP = 1, the others 0; the report's
    default reading of priorities and slack): AST, AAT and DP (the orders section 3.3
    calls "probably the best that can be expected") against ``slack-optimal`` with the
    same priority table, average wait of all, high-priority and ordinary jobs. Each
    month is written to ``results/slack_e2e_prio_<month>.json`` and the table to
    ``results/slack_e2e_prio.md``; the equal-priority files are never touched. These
    files hold no wall-clock time or load (the run prints them), so two runs of one
    command at one commit write the same bytes while the guard never fires.

Times are seconds; prices are processor-seconds weighted as in ``sim.problems.insertion``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from functools import cache
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
#: The e2e part's priority settings: ``equal`` (UP = PP = 0 for every job) and
#: ``differential`` (Table 3: ``instances.priorities``' ``fifth`` scenario, gap 2).
PRIORITIES = ("equal", "differential")
#: The compress orders run beside the optimum under differential priorities: the three
#: whose closeness section 3.3 reads as "probably the best that can be expected".
PRIO_ORDERS = ("AST", "AAT", "DP")
_MONTH_FILE = re.compile(r"\d{4}-\d{2}")


def _log():
    """KTH-SP2 on 128 processors, read once per process."""
    from instances.bundled import trace_path
    from instances.swf import read_swf

    return read_swf(trace_path("KTH-SP2"), procs=128)


@cache
def _months() -> dict:
    """``{label: month}`` of the KTH log, in calendar order."""
    from instances.months import split_months

    return dict(split_months(_log()))


@cache
def _priority_table() -> tuple[dict[int, tuple[float, float]], frozenset[int]]:
    """Table 3's ``fifth`` scenario over the whole log (positions count over the log,
    not the month): the table ``{job id: (UP, PP)}`` and the high-priority job ids."""
    from instances.priorities import high_priority_ids, priorities_of

    w = _log()
    return priorities_of(w, "fifth"), frozenset(high_priority_ids(w))


def _month(label: str):
    months = _months()
    if label not in months:
        raise ValueError(f"no month {label!r} in KTH-SP2")
    return months[label]


def _first_jobs(month, max_jobs: int | None):
    """``month``, or its first ``max_jobs`` jobs (a check, never a committed result)."""
    from dataclasses import replace

    return month if max_jobs is None else replace(month, jobs=tuple(month.jobs[:max_jobs]))


def e2e_files(priorities: str) -> tuple[str, str]:
    """The file names of a priority setting: ``(month file prefix, table)``; the
    differential setting's never coincide with the equal one's."""
    if priorities not in PRIORITIES:
        raise ValueError(f"priorities must be one of {PRIORITIES}, got {priorities!r}")
    return (("slack_e2e_", "slack_e2e.md") if priorities == "equal"
            else ("slack_e2e_prio_", "slack_e2e_prio.md"))


def _month_files(priorities: str) -> list[Path]:
    """The month files of a setting present in ``RESULTS`` (``<prefix><YYYY-MM>.json``
    only, so the equal setting's glob never takes the differential one's files)."""
    prefix, _ = e2e_files(priorities)
    return sorted(f for f in RESULTS.glob(f"{prefix}*.json")
                  if _MONTH_FILE.fullmatch(f.stem[len(prefix):]))


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

    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    month = _first_jobs(_month(label), max_jobs)
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
    recs = [json.loads(f.read_text()) for f in _month_files("equal")]
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


def _group_stats(schedule, high: np.ndarray) -> dict[str, float | None]:
    """Average wait (s) and bounded slowdown of all jobs, of the high-priority ones
    (``high``) and of the ordinary ones; None for an empty group."""
    from sim.batch.metrics import job_metrics

    m = job_metrics(schedule)
    out: dict[str, float | None] = {}
    for name, col in (("avg_wait", "wait"), ("avg_bounded_slowdown", "bounded_slowdown")):
        for group, mask in (("", np.ones_like(high)), ("_high", high), ("_ordinary", ~high)):
            out[name + group] = float(m[col][mask].mean()) if mask.any() else None
    return out


def e2e_prio_month(label: str, time_limit: float, dtime: float | None = None,
                   max_jobs: int | None = None) -> dict:
    """One KTH month under Table 3's differential priorities: AST, AAT, DP and optimal
    insertion with the same priority table; returns the record (no wall-clock time in
    it, so that two runs give the same record). Parameters as :func:`e2e_month`."""

    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    month = _first_jobs(_month(label), max_jobs)
    table, high_ids = _priority_table()
    high = np.fromiter((j.id in high_ids for j in month.jobs), dtype=bool,
                       count=len(month.jobs))
    rec: dict = {"command": provenance.command(), "commit": provenance.commit(),
                 "environment": provenance.environment(), "month": label,
                 "priorities": "differential", "jobs": len(month.jobs),
                 "high_jobs": int(high.sum()),
                 "time_limit": time_limit, "dtime": dtime}
    starts = {}
    for order in PRIO_ORDERS:
        s = simulate(month, SlackPolicy(order=order, sf=3.0, awt=AWT, priorities=table))
        validate(s)
        rec[order], starts[order] = _group_stats(s, high), s.start
    opt = OptimalInsertionPolicy(sf=3.0, awt=AWT, time_limit=time_limit, dtime=dtime,
                                 priorities=table)
    s = simulate(month, opt)
    validate(s)
    rec["optimal"] = _group_stats(s, high)
    rec["optimal_calls"] = {k: v for k, v in opt.inserter.stats.items() if k != "seconds"}
    rec["same_starts"] = float(np.mean(starts["AST"] == s.start))
    return rec


def _cells(r: dict, key: str) -> str:
    """``AST / AAT / DP / optimal`` of one measure of a month record."""
    fmt = "{:.2f}" if "slowdown" in key else "{:.0f}"
    return " / ".join("-" if r[p][key] is None else fmt.format(r[p][key])
                      for p in (*PRIO_ORDERS, "optimal"))


def _change(r: dict, key: str) -> str:
    """Optimal against AST, in percent of AST's value."""
    a, o = r["AST"][key], r["optimal"][key]
    return "-" if a is None or o is None or a == 0 else f"{(o - a) / a * 100:+.1f}%"


def _pooled(recs: list[dict]) -> dict:
    """The months pooled as one record: every average weighted by its group's jobs."""
    sizes = {"": [r["jobs"] for r in recs], "_high": [r["high_jobs"] for r in recs]}
    sizes["_ordinary"] = [a - b for a, b in zip(sizes[""], sizes["_high"], strict=True)]
    out: dict = {"jobs": sum(sizes[""]), "high_jobs": sum(sizes["_high"]),
                 "optimal_calls": {k: sum(r["optimal_calls"][k] for r in recs)
                                   for k in ("OPTIMAL", "FEASIBLE", "trivial", "guard")}}
    for p in (*PRIO_ORDERS, "optimal"):
        out[p] = {}
        for key in recs[0][p]:
            group = next(g for g in ("_high", "_ordinary", "") if key.endswith(g))
            pairs = [(r[p][key], n) for r, n in zip(recs, sizes[group], strict=True) if n]
            out[p][key] = sum(v * n for v, n in pairs) / sum(n for _, n in pairs)
    return out


def e2e_prio_report() -> str:
    """The differential-priority table from the month files present; written to
    ``results/slack_e2e_prio.md`` and returned."""
    recs = [json.loads(f.read_text()) for f in _month_files("differential")]
    lines = [
        "# End to end under differential priorities: AST, AAT, DP and optimal insertion "
        "(KTH-SP2, 128 processors)",
        "",
        "Command per month: `python -m sim.experiments.talby.gaps e2e --priorities "
        "differential --months LABEL --time-limit S [--dtime D]` (each month's file "
        "records its own command, commit and environment). Setting: Table 3's, every fifth "
        "job of the whole log UP = PP = 1, the others 0 (`instances.priorities`, `fifth`), "
        "with the report's default reading of priorities and slack; jobs killed at their "
        "request, SF 3, AWT 2401 s, all alphas 1, each month from an empty machine. AST, "
        "AAT and DP are the paper's compress orders (hold reading); `optimal` is "
        "`slack-optimal` with the same priority table, CP-SAT at every insert and remove "
        "minimising the same price; 'proved / stopped / trivial' counts its calls "
        "(stopped calls keep CP-SAT's best schedule, never dearer than the current one). "
        "Waits in seconds; bsld = bounded slowdown (tau 10 s); 'optimal vs AST' in "
        "percent of AST's wait. 'det. D': D of CP-SAT's deterministic time per stage, "
        "with the count of calls that reached the wall-clock guard; 'wall S': S seconds "
        "of wall clock per call (the schedule then depends on the machine's load).",
        "",
        *markdown_table(["month", "jobs (high-priority)",
                         "all: AST / AAT / DP / optimal", "high-priority: AST / AAT / DP / "
                         "optimal", "ordinary: AST / AAT / DP / optimal",
                         "bsld: AST / AAT / DP / optimal", "optimal vs AST: all / high / "
                         "ordinary", "calls proved / stopped / trivial", "same start %",
                         "limit per call"], []),
    ]
    rows = [(r["month"], r) for r in recs]
    if len(recs) > 1:
        rows.append((f"{len(recs)} months pooled", _pooled(recs)))
    for name, r in rows:
        c = r["optimal_calls"]
        lines.append(markdown_row([
            name, f"{r['jobs']} ({r['high_jobs']})", _cells(r, "avg_wait"),
            _cells(r, "avg_wait_high"), _cells(r, "avg_wait_ordinary"),
            _cells(r, "avg_bounded_slowdown"),
            " / ".join(_change(r, k) for k in ("avg_wait", "avg_wait_high",
                                                "avg_wait_ordinary")),
            f"{c['OPTIMAL']:.0f} / {c['FEASIBLE']:.0f} / {c['trivial']:.0f}",
            f"{100 * r['same_starts']:.0f}" if "same_starts" in r else "",
            _limit(r) if "month" in r else f"guard reached {c['guard']:.0f}x"]))
    made = [f"{r['month']} at commit {r['commit']} with `{r['command']}` "
            f"({r['environment']})" for r in recs]
    if made:
        lines += ["", "Month files and their writers: " + "; ".join(made) + "."]
    lines.append("")
    text = "\n".join(lines)
    write_atomic(RESULTS / e2e_files("differential")[1], text)
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
    e.add_argument("--priorities", choices=PRIORITIES, default="equal",
                   help="equal: UP = PP = 0 for every job (results/slack_e2e*); "
                        "differential: Table 3's every fifth job UP = PP = 1, with AAT and "
                        "DP beside AST (results/slack_e2e_prio*)")
    _add_limits(e, 1.0, None)
    args = ap.parse_args(argv)
    if not (args.time_limit > 0 and (args.dtime is None or args.dtime > 0)):
        ap.error(f"--time-limit and --dtime must be > 0, got {args.time_limit:g} and "
                 f"{args.dtime}")
    if args.part == "e2e":
        unknown = [m for m in args.months if m not in _months()]
        if unknown:
            ap.error(f"--months: no month {', '.join(unknown)} in KTH-SP2 (it has "
                     f"{', '.join(_months())})")
    RESULTS.mkdir(exist_ok=True)
    if args.part == "gaps":
        given = {k: getattr(args, k) for k in GAPS_FULL}
        out = None if given == GAPS_FULL else PARTIAL_DIR / "slack_gaps.md"
        print(gaps(args.kmax, args.time_limit, compress=args.compress, dtime=args.dtime,
                   out=out))
        if out is not None:
            print(f"written to {out} (not the full configuration {GAPS_FULL}: the "
                  "committed results are left as they are)", file=sys.stderr)
    elif args.priorities == "equal":
        for label in args.months:
            rec = e2e_month(label, args.time_limit, args.dtime)
            write_atomic(RESULTS / f"slack_e2e_{label}.json", json.dumps(rec, indent=1) + "\n")
            print(json.dumps(rec), file=sys.stderr, flush=True)
        print(e2e_report())
    else:
        prefix, _ = e2e_files("differential")
        for label in args.months:
            t0 = time.perf_counter()
            rec = e2e_prio_month(label, args.time_limit, args.dtime)
            write_atomic(RESULTS / f"{prefix}{label}.json", json.dumps(rec, indent=1) + "\n")
            print(f"{label}: {time.perf_counter() - t0:.0f} s wall, load average "
                  f"{provenance.load_average()}", file=sys.stderr, flush=True)
        print(e2e_prio_report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
