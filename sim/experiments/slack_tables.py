"""Reproduce the tables of Talby & Feitelson (IPPS'99), slack-based priority backfilling.

One command per table::

    python -m sim.experiments.slack_tables table1    # monthly wait, conservative vs AST
    python -m sim.experiments.slack_tables table2    # yearly wait for SF in 1..11
    python -m sim.experiments.slack_tables table34   # differential priorities, priority gap
    python -m sim.experiments.slack_tables table5    # every compress order, both scenarios
    python -m sim.experiments.slack_tables all       # all of them in one process

Setting (the paper's): the KTH-SP2 log read with 128 processors (``read_swf(...,
procs=128)``, its cleaning report printed), jobs killed at their requested time, each
calendar month simulated from an empty machine (``split_months``), the yearly figure
pooled over every job of the twelve months (job-weighted mean; the mean of the monthly
means is printed too). The priority scheduler uses SF 3, AWT 2401 s and all alphas 1
unless the table varies them; priorities are ``instances.priorities``' ``equal``
(UP = PP = 0 for every job) or ``fifth`` (every fifth job of the log, counted over the
whole log, UP = PP = 1). Conservative backfilling ignores priorities.

The paper's figures we have (from the issue text): conservative September 440.6 s,
August 1941.5 s, yearly 2401.44 s (the AWT the paper then uses), and the priority
scheduler's 16.5 % less yearly wait than conservative. Every other cell of the paper's
tables is shown as "n/a" rather than guessed. Nothing here is tuned towards the paper.

Every schedule is re-checked by ``sim.validate.validate`` (capacity, run lengths and
the slack promises). Results are written as markdown to
``sim/experiments/results/slack_table*.md``. Times are seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from heuristics.backfill import Conservative
from heuristics.slack import ORDERS, SlackPolicy
from instances.bundled import trace_path
from instances.priorities import assign_priorities, high_priority_ids
from instances.swf import read_swf, split_months
from sim.batch.machine import Schedule, simulate

RESULTS = Path(__file__).resolve().parent / "results"
SF_VALUES = (1.0, 3.0, 5.0, 7.0, 9.0, 11.0)
AWT = 2401.0

# the paper's figures available to us (issue 3 / brief); None = not available
PAPER_CONS_MONTH = {"1996-09": 440.6, "1997-08": 1941.5}
PAPER_CONS_YEAR = 2401.44
PAPER_REDUCTION = 0.165


@dataclass(frozen=True)
class Run:
    """Outcome of one configuration over the twelve months."""

    label: str
    months: tuple[str, ...]
    month_wait: tuple[float, ...]  # mean wait per month (s)
    month_jobs: tuple[int, ...]
    month_seconds: tuple[float, ...]  # wall-clock simulation time per month (s)
    wait: np.ndarray  # per-job wait over the year (s), months concatenated
    high: np.ndarray  # per-job mask: high priority under "fifth"

    @property
    def year_wait(self) -> float:
        return float(self.wait.mean())

    @property
    def mean_of_months(self) -> float:
        return float(np.mean(self.month_wait))

    def group_wait(self, high: bool) -> float:
        m = self.high if high else ~self.high
        return float(self.wait[m].mean())


@lru_cache(maxsize=1)
def kth() -> tuple:
    """KTH-SP2 with 128 processors and its months: ``(workload, [(label, month)])``."""
    w = read_swf(trace_path("KTH-SP2"), procs=128)
    return w, split_months(w)


@cache
def months_with(scheme: str) -> tuple:
    """The months with priorities assigned over the whole log (positions are global)."""
    w, _ = kth()
    wp = assign_priorities(w, scheme)
    high = high_priority_ids(w)
    return tuple(split_months(wp)), frozenset(high)


def _validate(s: Schedule) -> None:
    from sim.batch.validate import validate

    validate(s)


@cache
def run(policy: str, scheme: str = "equal", order: str = "AST", sf: float = 3.0,
        delay_from: str = "start") -> Run:
    """Simulate every month with ``policy`` ("conservative" or "slack")."""
    months, high_ids = months_with(scheme)
    labels, mw, mj, ms, waits, highs = [], [], [], [], [], []
    for label, month in months:
        if policy == "conservative":
            pol = Conservative()
        else:
            pol = SlackPolicy(order=order, sf=sf, awt=AWT, delay_from=delay_from)
        s = simulate(month, pol)
        _validate(s)
        submit = np.fromiter((j.submit for j in month.jobs), dtype=np.int64,
                             count=len(month.jobs))
        wait = (s.start - submit).astype(float)
        labels.append(label)
        mw.append(float(wait.mean()))
        mj.append(len(month.jobs))
        ms.append(s.sim_seconds)
        waits.append(wait)
        highs.append(np.fromiter((j.id in high_ids for j in month.jobs), dtype=bool,
                                 count=len(month.jobs)))
    name = policy if policy == "conservative" else f"slack-{order} SF {sf:g} ({scheme})"
    if policy != "conservative" and delay_from != "start":
        name += f" delay_from={delay_from}"
    r = Run(name, tuple(labels), tuple(mw), tuple(mj), tuple(ms), np.concatenate(waits),
            np.concatenate(highs))
    print(f"  ran {name}: yearly wait {r.year_wait:.1f} s, {sum(ms):.1f} s simulated",
          file=sys.stderr, flush=True)
    return r


def _f(x: float | None, nd: int = 1) -> str:
    return "n/a" if x is None else f"{x:,.{nd}f}"


def _emit(name: str, lines: list[str]) -> str:
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text)
    print(text)
    return text


def _header() -> list[str]:
    w, months = kth()
    return [
        f"Workload: {w.name}, {len(w.jobs)} jobs, {w.procs} processors, "
        f"{len(months)} months; jobs killed at their requested time; each month from an "
        "empty machine. Yearly = mean over all jobs of the year.",
        "",
    ]


# ---------------------------------------------------------------------- tables
def table1() -> str:
    """Monthly and yearly average wait: conservative vs the priority scheduler (AST)."""
    cons = run("conservative")
    ast = run("slack", "equal", "AST", 3.0)
    lines = ["# Table 1: average wait (s), conservative vs priority (AST, SF 3, AWT 2401, "
             "alphas 1, equal priorities)", ""] + _header()
    lines += ["| month | jobs | conservative | paper cons. | priority (AST) | paper prio. | "
              "change | AST sim. time (s) |", "|---|---|---|---|---|---|---|---|"]
    for i, m in enumerate(cons.months):
        c, a = cons.month_wait[i], ast.month_wait[i]
        ch = (a - c) / c * 100 if c > 0 else float("nan")
        lines.append(f"| {m} | {cons.month_jobs[i]} | {_f(c)} | {_f(PAPER_CONS_MONTH.get(m))} "
                     f"| {_f(a)} | n/a | {ch:+.1f}% | {ast.month_seconds[i]:.2f} |")
    c, a = cons.year_wait, ast.year_wait
    paper_prio = PAPER_CONS_YEAR * (1 - PAPER_REDUCTION)
    lines.append(f"| **year** | {len(cons.wait)} | **{_f(c, 2)}** | {_f(PAPER_CONS_YEAR, 2)} | "
                 f"**{_f(a, 2)}** | {_f(paper_prio)} (derived: -16.5%) | "
                 f"{(a - c) / c * 100:+.1f}% (paper -16.5%) | {sum(ast.month_seconds):.1f} |")
    lines.append(f"| mean of monthly means | | {_f(cons.mean_of_months)} | | "
                 f"{_f(ast.mean_of_months)} | | | |")
    secs = np.array(ast.month_seconds)
    lines += ["", f"AST simulation time per month: median {np.median(secs):.2f} s, max "
              f"{secs.max():.2f} s, whole year {secs.sum():.1f} s (wall clock on this 2-core "
              "machine, shared with other jobs).", "",
              "Differences from the paper, as far as we can tell:", "",
              "- Absolute waits: our conservative year is "
              f"{(c - PAPER_CONS_YEAR) / PAPER_CONS_YEAR * 100:+.1f}% off the paper's 2401.44 s. "
              "We use the archive's cleaned KTH-SP2 log, version 2.1 (the paper predates it), "
              "and our conservative backfilling re-compresses the whole queue at every early "
              "end; the paper does not spell out its variant. The relative reduction, the "
              "paper's headline, is close: "
              f"{(a - c) / c * 100:+.1f}% here against -16.5%.",
              "- September 1996: the log starts on 1996-09-23, so our calendar September "
              "(Europe/Stockholm) holds only the first week's jobs, with almost no wait; the "
              "paper's 440.6 s must come from a different month boundary or log version.",
              "- AWT stays at the paper's 2401 s (not re-estimated from our conservative "
              "run), as the issue asks for no tuning.",
              "- The paper's priority figures per month are not available to us; only the "
              "yearly 16.5% reduction is, and the derived -16.5% yearly value is shown."]
    return _emit("slack_table1", lines)


def table2() -> str:
    """Yearly average wait of the priority scheduler (AST) for SF in 1..11."""
    cons = run("conservative")
    lines = ["# Table 2: yearly average wait (s) vs slack factor SF (AST, AWT 2401, alphas 1, "
             "equal priorities)", ""] + _header()
    lines += ["| SF | priority (AST) | vs conservative | paper |", "|---|---|---|---|"]
    for sf in SF_VALUES:
        r = run("slack", "equal", "AST", sf)
        lines.append(f"| {sf:g} | {_f(r.year_wait, 2)} | "
                     f"{(r.year_wait - cons.year_wait) / cons.year_wait * 100:+.1f}% | n/a |")
    lines.append(f"| conservative | {_f(cons.year_wait, 2)} | | {_f(PAPER_CONS_YEAR, 2)} |")
    return _emit("slack_table2", lines)


def table34() -> str:
    """Differential priorities (every fifth job high): group waits and the priority gap."""
    cons = run("conservative", "fifth")
    lines = ["# Tables 3/4: differential priorities (every fifth job UP = PP = 1, others 0)",
             ""] + _header()
    lines += ["Table 3: yearly average wait (s) per priority group (SF 3).", "",
              "| scheduler | all | high priority | low priority | gap (low - high) | "
              "ratio low / high | paper |", "|---|---|---|---|---|---|---|"]

    def row(name: str, r: Run) -> str:
        hi, lo = r.group_wait(True), r.group_wait(False)
        ratio = lo / hi if hi > 0 else float("inf")
        return (f"| {name} | {_f(r.year_wait)} | {_f(hi)} | {_f(lo)} | {_f(lo - hi)} | "
                f"{ratio:.2f} | n/a |")

    lines.append(row("conservative", cons))
    lines.append(row("priority (AST)", run("slack", "fifth", "AST", 3.0)))
    lines += ["", "Table 4: the priority gap vs SF (AST, AWT 2401).", "",
              "| SF | all | high | low | gap (low - high) | ratio low / high | paper |",
              "|---|---|---|---|---|---|---|"]
    for sf in SF_VALUES:
        r = run("slack", "fifth", "AST", sf)
        lines.append(row(f"{sf:g}", r))
    lines += ["", f"High-priority jobs: {int(cons.high.sum())} of {len(cons.high)}."]
    return _emit("slack_table34", lines)


def table5() -> str:
    """Every compress order with equal and unequal (fifth) priorities."""
    cons = run("conservative", "fifth")
    lines = ["# Table 5: yearly average wait (s) per compress order (SF 3, AWT 2401, "
             "alphas 1)", ""] + _header()
    lines += ["| order | equal: all | fifth: all | fifth: high | fifth: low | "
              "sim. time equal / fifth (s) | paper |", "|---|---|---|---|---|---|---|"]
    for order in ORDERS:
        e = run("slack", "equal", order, 3.0)
        f = run("slack", "fifth", order, 3.0)
        lines.append(f"| {order} | {_f(e.year_wait)} | {_f(f.year_wait)} | "
                     f"{_f(f.group_wait(True))} | {_f(f.group_wait(False))} | "
                     f"{sum(e.month_seconds):.1f} / {sum(f.month_seconds):.1f} | n/a |")
    for order in ("AST", "DP"):
        e = run("slack", "equal", order, 3.0, "overlap")
        f = run("slack", "fifth", order, 3.0, "overlap")
        lines.append(f"| {order}, delay_from=overlap | {_f(e.year_wait)} | {_f(f.year_wait)} | "
                     f"{_f(f.group_wait(True))} | {_f(f.group_wait(False))} | "
                     f"{sum(e.month_seconds):.1f} / {sum(f.month_seconds):.1f} | n/a |")
    lines.append(f"| conservative | {_f(cons.year_wait)} | {_f(cons.year_wait)} | "
                 f"{_f(cons.group_wait(True))} | {_f(cons.group_wait(False))} | | |")
    lines += ["", "`delay_from=overlap` (an open slot-enumeration choice, see "
              "`heuristics.slack`): a slot also delays the waiting jobs that start before it "
              "but still run at it; the default delays only those starting at or after it.",
              "", "The paper's exhaustive order search is not run on whole months: KTH queues "
              "reach 65 waiting jobs (65! orders); see the snapshot experiments instead.", "",
              "Why AST leads here: every candidate of the slot search re-compresses all the "
              "waiting jobs scheduled from the slot on. In AST order this keeps the queue in "
              "its scheduled order and mostly moves jobs earlier; in the other orders the "
              "jobs compressed first take the earliest holes and push the rest back by up "
              "to their slack, so a cheap insertion for the new job can still leave the "
              "queue worse ordered for the next one. The paper's per-order figures are not "
              "available to us, so we cannot say whether it saw the same ranking."]
    return _emit("slack_table5", lines)


TABLES = {"table1": table1, "table2": table2, "table34": table34, "table5": table5}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.experiments.slack_tables",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("table", choices=sorted(TABLES) + ["all"])
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    w, _ = kth()
    if w.cleaning is not None:
        print(w.cleaning.summary(), file=sys.stderr)
    names = sorted(TABLES) if args.table == "all" else [args.table]
    for name in names:
        TABLES[name]()
    print(f"({time.perf_counter() - t0:.0f} s in all)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
