"""Reproduce Tables 1 to 5 of Talby & Feitelson (IPPS'99), slack-based priority
backfilling, on the sweep layer.

One command per table (each runs the sweep behind it into its own results store, then
writes the table with the paper's numbers beside ours and the deviation per cell)::

    schedsearch reproduce talby-table1            # monthly wait, conservative vs AST
    schedsearch reproduce talby-table2            # yearly wait for SF in 1..11
    schedsearch reproduce talby-table3            # differential priorities per month
    schedsearch reproduce talby-table4            # overall wait vs the priority gap
    schedsearch reproduce talby-table5            # every compress order, both scenarios
    schedsearch reproduce talby-table1 --quick --jobs 2

(``python -m sim.experiments.talby.tables table1|...|all`` does the same.)

Setting (the paper's): the KTH-SP2 log read with 128 processors (wider jobs would be an
error; there are none), jobs killed at their requested time, each calendar month
(Europe/Stockholm, the log's zone) simulated from an empty machine (one sweep cell per
month), the yearly figure pooled over every job of the twelve months (total wait / jobs,
as the paper computes it). The priority scheduler uses SF 3, AWT 2401 s and all alphas 1
unless the table varies them; priorities are ``instances.priorities``' ``equal``
(UP = PP = 0 for every job) or ``fifth`` (every fifth job of the log, counted over the
whole log, UP = PP = g / 2 where g is the paper's priority gap, 2 unless Table 4 varies
it). Every schedule is re-checked by ``sim.batch.validate.validate``. Nothing is tuned
towards the paper.

The full configuration writes ``sim/experiments/talby/results/slack_table<N>.md`` (and a
``.csv`` of the same cells) from the store ``results/reproduce/talby-table<N>.sqlite``;
``--quick`` runs two months cut to their first 150 jobs (and fewer grid values) into
``results/reproduce/talby-table<N>-quick.*`` and says it is partial. Stores resume: a
rerun skips the cells already done. Times are seconds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from heuristics.slack import ORDERS
from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments.common import (
    command,
    commit,
    csv_text,
    load_average,
    markdown_row,
    markdown_table,
)
from sim.sweep.execute import run_sweep
from sim.sweep.report import load_rows

RESULTS = Path(__file__).resolve().parent / "results"
QUICK_DIR = Path("results") / "reproduce"
SF_VALUES = (1.0, 3.0, 5.0, 7.0, 9.0, 11.0)
GAPS = (0.0, 0.5, 1.0, 1.5, 2.0)
AWT = 2401.0
QUICK_MONTHS = ["1996-10", "1997-07"]
QUICK_JOBS = 150
COMPRESSIONS = ("arrival", "start", "now", "none")

# ----------------------------------------------------------------- the paper's numbers
# Talby & Feitelson, IPPS'99 (../shared/papers/000_bad6eb949bb6eed9.txt), in seconds.
MONTHS = ("1996-09", "1996-10", "1996-11", "1996-12", "1997-01", "1997-02", "1997-03",
          "1997-04", "1997-05", "1997-06", "1997-07", "1997-08")
#: Table 1: month -> (conservative, priority AST)
PAPER_T1 = dict(zip(MONTHS, [
    (440.6, 440.6), (3062.7, 2504.3), (4887.0, 3774.6), (2157.2, 1904.2), (3302.3, 2531.9),
    (2624.3, 2373.9), (2644.8, 2196.9), (2220.3, 1905.2), (2093.6, 1779.2), (1443.2, 1282.0),
    (399.9, 354.1), (1941.5, 1670.8)], strict=True))
PAPER_T1_YEAR = (2401.44, 2004.46)
#: Table 2: SF -> yearly AWT of the priority scheduler
PAPER_T2 = {1.0: 2156.0, 3.0: 2004.0, 5.0: 2027.0, 7.0: 1986.0, 9.0: 1939.0, 11.0: 1956.0}
#: Table 3: month -> (equal pri, unequal: all jobs, hi-pri, lo-pri)
PAPER_T3 = dict(zip(MONTHS, [
    (440.6, 440.6, 0.0, 550.8), (2504.3, 2783.7, 2295.6, 2906.0),
    (3774.6, 4797.7, 4460.2, 1882.3), (1904.2, 2026.0, 1814.8, 2078.8),
    (2531.9, 2777.4, 2603.8, 2820.8), (2373.9, 2728.7, 2369.2, 2818.7),
    (2196.9, 2220.9, 1687.2, 2354.6), (1905.2, 2056.2, 1797.4, 2120.9),
    (1779.2, 1889.3, 1491.9, 1988.7), (1282.0, 1374.7, 1323.3, 1387.6),
    (354.1, 372.6, 320.2, 385.8), (1670.8, 1847.1, 1817.5, 1854.5)], strict=True))
PAPER_T3_YEAR = (2004.46, 2226.17, 1955.28, 2294.0)
#: Table 4: priority gap -> overall yearly AWT
PAPER_T4 = {0.0: 2004.46, 0.5: 2020.40, 1.0: 2044.39, 1.5: 2017.82, 2.0: 2226.17}
#: Table 5: order -> (equal, unequal, perf. loss %, hi-pri, lo-pri, gap)
PAPER_T5 = {"AST": (2004.5, 2226.2, 11.1, 1955.3, 2294.0, 338.7),
            "AAT": (2088.5, 2223.3, 10.9, 1952.6, 2291.1, 338.5),
            "DC": (2179.9, 2250.1, 12.3, 1988.1, 2315.7, 327.6),
            "DU": (2206.0, 2279.8, 13.7, 2048.9, 2337.6, 288.7),
            "DP": (2120.0, 2228.5, 11.2, 1962.3, 2295.1, 332.7)}
PAPER_SEPT_JOBS = 85


# ----------------------------------------------------------------- specs
def _workload(name: str, quick: bool, priorities: str, high: Any = None) -> dict[str, Any]:
    w: dict[str, Any] = {"name": name, "trace": "KTH-SP2", "priorities": priorities,
                         "months": QUICK_MONTHS if quick else "each"}
    if high is not None:
        w["priority_high"] = high
    if quick:
        w["max_jobs"] = QUICK_JOBS
    return w


def _slack(label: str, **options: Any) -> dict[str, Any]:
    return {"name": "slack", "label": label,
            "options": {"order": "AST", "sf": 3.0, "awt": AWT, **options}}


def spec_for(table: str, quick: bool = False) -> dict[str, Any]:
    """The sweep spec behind ``table`` ("table1" ... "table5")."""
    eq = _workload("equal", quick, "equal")
    fifth = _workload("fifth", quick, "fifth")
    if table == "table1":
        workloads = [eq]
        policies = [{"name": "conservative", "label": f"conservative-{c}",
                     "options": {"compression": c}}
                    for c in (COMPRESSIONS[:2] + ("none",) if quick else COMPRESSIONS)]
        policies.append(_slack("AST"))
        policies.append({"name": "easy", "label": "EASY", "options": {}})
    elif table == "table2":
        workloads = [eq]
        policies = [_slack("AST", sf=list((1.0, 3.0) if quick else SF_VALUES))]
    elif table == "table3":
        workloads = [eq, fifth]
        policies = [_slack("AST")]
    elif table == "table4":
        gaps = (0.0, 2.0) if quick else GAPS
        workloads = [_workload("fifth", quick, "fifth", [g / 2 for g in gaps])]
        policies = [_slack("AST")]
    elif table == "table5":
        workloads = [eq, fifth]
        policies = [_slack("order", order=["AST", "DP"] if quick else list(ORDERS))]
        if not quick:
            policies.append(_slack("overlap", order=["AST", "DP"], delay_from="overlap"))
    else:
        raise ValueError(f"unknown table {table!r}")
    return {"version": 1, "name": f"talby-{table}" + ("-quick" if quick else ""),
            "metrics": ["avg_wait"], "procs": [128], "overrun": ["kill"], "wide": "error",
            "workloads": workloads, "policies": policies}


# ----------------------------------------------------------------- pooling
class Pool:
    """Per-month rows of one configuration, pooled over months job-weighted."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.by_month = {r["month"]: r for r in rows}

    def months(self) -> list[str]:
        return sorted(self.by_month)

    def month(self, m: str, what: str = "") -> float | None:
        r = self.by_month.get(m)
        if r is None:
            return None
        key = f"avg_wait_{what}" if what else "avg_wait"
        return r.get(key)

    def jobs(self, m: str | None = None) -> int:
        if m is not None:
            return int(self.by_month[m]["jobs"])
        return sum(int(r["jobs"]) for r in self.by_month.values())

    def year(self, what: str = "") -> float | None:
        sfx = f"_{what}" if what else ""
        n = sum(int(r.get(f"jobs{sfx}") or 0) for r in self.by_month.values())
        tot = sum(int(r.get(f"total_wait{sfx}") or 0) for r in self.by_month.values())
        return tot / n if n else None


def pools(rows: list[dict[str, Any]], *keys: str) -> dict[tuple, Pool]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    return {k: Pool(v) for k, v in groups.items()}


def _f(x: float | None, nd: int = 1) -> str:
    return "n/a" if x is None else f"{x:,.{nd}f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}%"


def _dev(ours: float | None, paper: float | None) -> str:
    if ours is None or paper is None or paper == 0:
        return "n/a"
    return f"{(ours - paper) / paper * 100:+.1f}%"


def _red(base: float | None, x: float | None) -> str:
    """Reduction of x relative to base, in percent (the paper's sign: positive = better)."""
    if base is None or x is None or base == 0:
        return "n/a"
    return f"{(base - x) / base * 100:.1f}%"


# ----------------------------------------------------------------- tables
def _intro(quick: bool, rows: list[dict[str, Any]]) -> list[str]:
    out = []
    if quick:
        out += [f"**PARTIAL (quick configuration): months {', '.join(QUICK_MONTHS)} only, "
                f"each cut to its first {QUICK_JOBS} jobs; not comparable with the paper. "
                "The full configuration writes `sim/experiments/talby/results/`.**", ""]
    sha = sorted({r["trace_sha256"] for r in rows if r.get("trace_sha256")})
    versions = sorted({r["code_version"] for r in rows if r.get("code_version")})
    cl = next((r["cleaning"] for r in rows if r.get("cleaning")), None)
    kept = f"{cl['jobs_kept']} jobs kept, {cl['dropped']} dropped" if cl else "?"
    out += [f"Workload: KTH-SP2 (sha256 {', '.join(s[:12] for s in sha)}), 128 processors, "
            f"{kept} by the reader; jobs killed at their requested time; each month "
            "from an empty machine; yearly = total wait / jobs over the year (as the "
            "paper). Deviation = (ours - paper) / paper. Code: "
            f"{', '.join(v[:12] + ('+dirty' if v.endswith('+dirty') else '') for v in versions)}"
            f"; table written at commit {commit()}, command `{command()}`, load average "
            f"{load_average()}.", ""]
    return out


def september_check() -> list[str]:
    """Which month boundary gives the paper's 85-job September, and its wait."""
    import numpy as np

    from heuristics.backfill import Conservative
    from instances.bundled import trace_path
    from instances.job import Workload
    from instances.months import split_months
    from instances.swf import read_swf
    from sim.batch.machine import simulate

    w = read_swf(trace_path("KTH-SP2"), procs=128)
    months = dict(split_months(w))
    n_sep = len(months["1996-09"])
    sizes = [len(m) for label, m in months.items() if label != "1996-09"]
    jobs = w.jobs[:PAPER_SEPT_JOBS]
    sub = Workload(tuple(jobs), w.capacity, "KTH Sept (85)", dict(w.header), None)
    s = simulate(sub, Conservative())
    wait85 = float(np.mean(s.start - np.array([j.submit for j in jobs])))
    t0 = int(w.header["UnixStartTime"])
    from datetime import datetime, timezone

    lo = datetime.fromtimestamp(t0 + w.jobs[PAPER_SEPT_JOBS - 1].submit, timezone.utc)
    hi = datetime.fromtimestamp(t0 + w.jobs[PAPER_SEPT_JOBS].submit, timezone.utc)
    oct1 = datetime(1996, 10, 1, tzinfo=timezone.utc).timestamp()
    # whole-hour UTC offsets whose local midnight of 1 October falls in (lo, hi]
    zones = [h for h in range(-12, 15) if lo.timestamp() < oct1 - 3600 * h <= hi.timestamp()]
    zone_text = (", local midnight at UTC" + ", UTC".join(f"{h:+d}" for h in zones)
                 if zones else ", no whole-hour time zone's midnight")
    return [
        f"- September 1996 (paper: {PAPER_SEPT_JOBS} jobs, 440.6 s for both schedulers): "
        f"our log's first job is submitted on 1996-09-30 (the archive's cleaned version "
        f"removed jobs 1-14, header: 'job<=14 (14 jobs removed)'), so our calendar "
        f"September holds {n_sep} jobs of one day. A boundary giving exactly "
        f"{PAPER_SEPT_JOBS} jobs lies between {lo:%Y-%m-%d %H:%M} and {hi:%H:%M} UTC "
        f"({zone_text.lstrip(', ')}); its conservative wait is {wait85:.1f} s, not "
        "440.6 s. No month boundary explains 440.6 s: the paper's September held jobs "
        "our log does not have (its other months also differ slightly in size: 1924-4060 "
        f"jobs against our {min(sizes)}-{max(sizes)}, average 2357 against our "
        f"{len(w.jobs) / len(months):.0f}), so we keep the calendar boundary of the log's "
        "own time zone.",
    ]


def table1(rows: list[dict[str, Any]], quick: bool) -> list[str]:
    p = pools(rows, "label")
    cons, ast = p[("conservative-arrival",)], p[("AST",)]
    variants = [c for c in COMPRESSIONS if (f"conservative-{c}",) in p]
    lines = ["# Table 1: average wait (s), conservative vs priority (AST, SF 3, AWT 2401, "
             "alphas 1, equal priorities)", ""] + _intro(quick, rows)
    lines += markdown_table(["month", "jobs", "cons.", "paper", "dev.", "AST", "paper", "dev.",
                             "reduction", "paper red."], [])
    for m in cons.months():
        pc, pa = PAPER_T1.get(m, (None, None))
        c, a = cons.month(m), ast.month(m)
        lines.append(markdown_row([m, cons.jobs(m), _f(c), _f(pc), _dev(c, pc), _f(a), _f(pa),
                                   _dev(a, pa), _red(c, a), _red(pc, pa)]))
    c, a = cons.year(), ast.year()
    pc, pa = PAPER_T1_YEAR
    lines.append(markdown_row(["**year**", cons.jobs(), f"**{_f(c, 2)}**", _f(pc, 2),
                               _dev(c, pc), f"**{_f(a, 2)}**", _f(pa, 2), _dev(a, pa),
                               _red(c, a), _red(pc, pa)]))
    lines += ["", "Readings of conservative backfilling (option `compression` of "
              "`heuristics.backfill.Conservative`): what happens when a job ends before its "
              "requested time.", "",
              *markdown_table(["compression", "year (s)", "paper", "dev.",
                               "AST reduction against it"], [])]
    meaning = {"arrival": "re-place every waiting job, arrival order (ours, default)",
               "start": "re-place every waiting job, order of reserved start",
               "now": "move only the jobs that can start at once",
               "none": "no compression: every job keeps its arrival reservation"}
    for v in variants:
        y = p[(f"conservative-{v}",)].year()
        lines.append(markdown_row([f"{v}: {meaning[v]}", _f(y, 2), _f(pc, 2), _dev(y, pc),
                                   _red(y, a)]))
    lines += _against_easy(p[("EASY",)].year(), c, a)
    lines += ["", "Notes:", ""]
    if not quick:
        lines += september_check()
    ys = {v: p[(f"conservative-{v}",)].year() for v in variants}
    closest = min(ys, key=lambda v: abs(ys[v] - pc))
    lines += [
        f"- Conservative: our year deviates {_dev(c, pc)} from the paper's. The paper's C++ "
        "simulator does not say how "
        "it compresses, so the readings above are measured: against our default they "
        "move the year by " + ", ".join(f"{v} {_dev(ys[v], c)}" for v in variants
                                        if v != "arrival")
        + f". The closest to the paper is `{closest}` at {_dev(ys[closest], pc)}"
        + (", so the compression reading alone does not explain the gap; the remaining "
           "candidates are the job set (the paper's log predates the archive's cleaned "
           "version 2.1) and details the paper does not give."
           if abs(ys[closest] - pc) / pc > 0.05 else "."),
        "- The relative reduction of the priority scheduler, the paper's headline, is "
        "compared in the last two columns.",
        "- AWT stays at the paper's 2401 s (not re-estimated from our conservative run).",
    ]
    return lines


def _against_easy(easy: float, cons: float, ast: float) -> list[str]:
    """The abstract's comparison with EASY over the year (waits in seconds): priority
    backfilling about 15% below EASY, conservative almost identical to it."""
    return ["", "Against EASY (the abstract: priority backfilling \"about 15%\" below EASY, "
            "conservative \"almost identical\" to it); EASY as `heuristics.backfill.EASY`, "
            "on the same months:", "",
            *markdown_table(["scheduler", "year (s)", "reduction against EASY", "paper"], []),
            markdown_row(["EASY", _f(easy, 2), "-", "-"]),
            markdown_row(["conservative (arrival)", _f(cons, 2), _red(easy, cons),
                          "almost identical"]),
            markdown_row(["AST", _f(ast, 2), _red(easy, ast), "about 15%"])]


def table2(rows: list[dict[str, Any]], quick: bool) -> list[str]:
    p = pools(rows, "sf")
    lines = ["# Table 2: yearly average wait (s) of the priority scheduler vs the slack "
             "factor SF (AST, AWT 2401, alphas 1, equal priorities)", ""] + _intro(quick, rows)
    lines += markdown_table(["SF", "ours", "paper", "dev.", "ours vs SF 3", "paper vs SF 3"],
                            [])
    base = p.get((3.0,))
    for (sf,), pool in sorted(p.items()):
        y = pool.year()
        lines.append(markdown_row([f"{sf:g}", _f(y, 1), _f(PAPER_T2.get(sf), 0),
                                   _dev(y, PAPER_T2.get(sf)),
                                   _dev(y, base.year() if base else None),
                                   _dev(PAPER_T2.get(sf), PAPER_T2[3.0])]))
    return lines


def table3(rows: list[dict[str, Any]], quick: bool) -> list[str]:
    p = pools(rows, "workload")
    eq, fi = p[("equal",)], p[("fifth",)]
    lines = ["# Table 3: average wait (s) with differential priorities (AST, SF 3, AWT 2401, "
             "alphas 1; every fifth job UP = PP = 1, others 0)", ""] + _intro(quick, rows)
    lines += markdown_table(["month", "equal", "paper", "dev.", "unequal: all", "paper", "dev.",
                             "hi-pri", "paper", "dev.", "lo-pri", "paper", "dev."], [])
    for m in eq.months():
        pe, pall, phi, plo = PAPER_T3.get(m, (None,) * 4)
        vals = [(eq.month(m), pe), (fi.month(m), pall), (fi.month(m, "high"), phi),
                (fi.month(m, "low"), plo)]
        lines.append(markdown_row([m, *(c for o, q in vals
                                        for c in (_f(o), _f(q), _dev(o, q)))]))
    vals = [(eq.year(), PAPER_T3_YEAR[0]), (fi.year(), PAPER_T3_YEAR[1]),
            (fi.year("high"), PAPER_T3_YEAR[2]), (fi.year("low"), PAPER_T3_YEAR[3])]
    lines.append(markdown_row(["**year**", *(c for o, q in vals
                                             for c in (f"**{_f(o, 2)}**", _f(q, 2),
                                                       _dev(o, q)))]))
    hi, lo, e, a = fi.year("high"), fi.year("low"), eq.year(), fi.year()
    lines += ["", f"Against equal priorities: high-priority jobs {_dev(hi, e)} (paper "
              f"{_dev(PAPER_T3_YEAR[2], PAPER_T3_YEAR[0])}), ordinary jobs {_dev(lo, e)} "
              f"(paper {_dev(PAPER_T3_YEAR[3], PAPER_T3_YEAR[0])}), all jobs {_dev(a, e)} "
              f"(paper {_dev(PAPER_T3_YEAR[1], PAPER_T3_YEAR[0])}).", "",
              "The paper's own rows are not all consistent with its definition (November: "
              "all jobs 4797.7 s while both groups are lower, 4460.2 and 1882.3 s), so "
              "single cells of its table deserve less weight than its yearly row."]
    return lines


def table4(rows: list[dict[str, Any]], quick: bool) -> list[str]:
    p = pools(rows, "priority_high")
    lines = ["# Table 4: overall yearly average wait (s) vs the priority gap (AST, SF 3, "
             "AWT 2401; every fifth job UP = PP = gap / 2, others 0)", ""]
    lines += _intro(quick, rows)
    lines += markdown_table(["gap", "all", "paper", "dev.", "hi-pri", "lo-pri"], [])
    for (high,), pool in sorted(p.items()):
        g = 2 * high
        y = pool.year()
        lines.append(markdown_row([f"{g:g}", _f(y, 2), _f(PAPER_T4.get(g), 2),
                                   _dev(y, PAPER_T4.get(g)), _f(pool.year("high")),
                                   _f(pool.year("low"))]))
    lines += ["", "Gap 0 gives every job UP = PP = 0, the same workload as equal "
              "priorities (hence no high/low split)."]
    return lines


def table5(rows: list[dict[str, Any]], quick: bool) -> list[str]:
    p = pools(rows, "label", "workload")
    lines = ["# Table 5: yearly average wait (s) per compress order (SF 3, AWT 2401, "
             "alphas 1)", ""] + _intro(quick, rows)
    lines += markdown_table(["order", "equal", "paper", "dev.", "unequal", "paper", "dev.",
                             "perf. loss", "paper", "hi-pri", "paper", "lo-pri", "paper", "gap",
                             "paper"], [])
    def rank(lab: str) -> tuple[int, int]:
        order = lab.split("order=")[-1].split(")")[0].split(",")[0]
        return (not lab.startswith("order("), ORDERS.index(order) if order in ORDERS else 9)

    labels = sorted({lab for lab, _ in p}, key=rank)
    best_equal = p.get(("order(order=AST)", "equal"))
    for lab in labels:
        e, f = p.get((lab, "equal")), p.get((lab, "fifth"))
        order = lab.split("order=")[-1].split(")")[0].split(",")[0]
        paper = PAPER_T5.get(order) if lab.startswith("order(") else None
        pe = paper or (None,) * 6
        ye, yf = (e.year() if e else None), (f.year() if f else None)
        hi, lo = (f.year("high"), f.year("low")) if f else (None, None)
        loss = ((yf - best_equal.year()) / best_equal.year() * 100
                if yf is not None and best_equal else None)
        gap = lo - hi if hi is not None and lo is not None else None
        lines.append(markdown_row([lab, _f(ye), _f(pe[0]), _dev(ye, pe[0]), _f(yf), _f(pe[1]),
                                   _dev(yf, pe[1]), _pct(loss), _pct(pe[2]), _f(hi), _f(pe[3]),
                                   _f(lo), _f(pe[4]), _f(gap), _f(pe[5])]))
    lines += ["", "Perf. loss: yearly wait with unequal priorities relative to the best "
              "equal-priority result (AST), as the paper's footnote 1; gap: lo-pri minus "
              "hi-pri wait. `overlap` rows: `delay_from=overlap`, a slot also delays the "
              "waiting jobs that start before it but still run at it (an open "
              "slot-enumeration choice, see `heuristics.slack`). Every order compresses the "
              "delayed jobs with the paper's reading (`compress=\"hold\"`: each job moves up "
              "while the others keep their delayed places, see `heuristics.slack`); "
              "`results/talby_orders/table5.md` has the earlier list reading beside it."]
    return lines


TABLES: dict[str, Callable[[list[dict[str, Any]], bool], list[str]]] = {
    "table1": table1, "table2": table2, "table3": table3, "table4": table4,
    "table5": table5}


def _csv(rows: list[dict[str, Any]]) -> str:
    keys = ["workload", "month", "label", "sf", "order", "priority_high", "jobs", "avg_wait",
            "total_wait", "jobs_high", "avg_wait_high", "jobs_low", "avg_wait_low", "key"]
    return csv_text(keys, (["" if r.get(k) is None else r.get(k) for k in keys]
                           for r in sorted(rows, key=lambda r: (
                               str(r.get("label")), str(r.get("workload")),
                               str(r.get("priority_high")), str(r.get("month"))))))


def reproduce(table: str, argv: list[str] | None = None) -> int:
    """Run the sweep behind ``table`` and write the table; returns an exit code."""
    ap = Parser(prog=f"schedsearch reproduce talby-{table}",
                description=f"Talby & Feitelson {table.replace('table', 'Table ')}"
                " on KTH-SP2: sweep into a store, then the table beside the "
                "paper's numbers.")
    ap.add_argument("--quick", action="store_true",
                    help=f"months {', '.join(QUICK_MONTHS)}, first {QUICK_JOBS} jobs each, "
                         "fewer grid values (Table 5: AST and DP only); written under "
                         "--dir, marked partial")
    ap.add_argument("--jobs", type=int, default=None, help="worker processes (default: all "
                    "cores)")
    ap.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler address")
    ap.add_argument("--dir", default=str(QUICK_DIR),
                    help="directory of the store (and of a quick run's table)")
    ap.add_argument("--results", default=str(RESULTS),
                    help="directory of the full configuration's table")
    ap.add_argument("--retry-failed", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if args.quick:  # a quick table goes beside its store in --dir
        ap.refuse_unread(ap.options() - {"results"}, "--quick")
    if args.dask is not None:  # the cluster's workers run the cells
        ap.refuse_unread(ap.options() - {"jobs"}, "--dask")
    spec = spec_for(table, args.quick)
    d = Path(args.dir)
    store = d / f"{spec['name']}.sqlite"
    summary = run_sweep(spec, store, jobs=args.jobs, dask=args.dask,
                        retry_failed=args.retry_failed,
                        progress=not args.quiet and sys.stderr.isatty(), source=spec["name"])
    print(summary.text(), file=sys.stderr)
    if summary.failed:
        print("some cells failed; the table is not written (see the store)", file=sys.stderr)
        return 1
    rows = load_rows(store)
    text = "\n".join(TABLES[table](rows, args.quick)) + "\n"
    out_dir = d if args.quick else Path(args.results)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = spec["name"] if args.quick else f"slack_{table}"
    write_atomic(out_dir / f"{stem}.md", text)
    write_atomic(out_dir / f"{stem}.csv", _csv(rows))
    print(text)
    print(f"wrote {out_dir / (stem + '.md')} and .csv (store {store})", file=sys.stderr)
    return 0


def table1_main(argv: list[str] | None = None) -> int:
    """Talby & Feitelson Table 1: monthly wait, conservative (four readings) vs AST."""
    return reproduce("table1", argv)


def table2_main(argv: list[str] | None = None) -> int:
    """Talby & Feitelson Table 2: yearly wait of the priority scheduler for SF 1..11."""
    return reproduce("table2", argv)


def table3_main(argv: list[str] | None = None) -> int:
    """Talby & Feitelson Table 3: differential priorities per month, hi/lo groups."""
    return reproduce("table3", argv)


def table4_main(argv: list[str] | None = None) -> int:
    """Talby & Feitelson Table 4: overall yearly wait vs the priority gap."""
    return reproduce("table4", argv)


def table5_main(argv: list[str] | None = None) -> int:
    """Talby & Feitelson Table 5: every compress order with equal and unequal priorities."""
    return reproduce("table5", argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in [*TABLES, "all"]:
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    names = sorted(TABLES) if argv[0] == "all" else [argv[0]]
    for name in names:
        rc = reproduce(name, argv[1:])
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
