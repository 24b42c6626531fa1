"""Why optimal insertion makes KTH December 1996 worse than AST (issue 13, item 8).

``slack_e2e`` found that solving every insertion of the slack-based scheduler to
optimality (CP-SAT, 1 s per call) raises December's average wait by 16.5 % over the AST
heuristic, while it lowers it in three other months. This module reruns December with
both inserters, records every decision (the insertion problem and the schedule chosen),
and breaks the difference down:

1. by job: which jobs wait longer, grouped by width ``n`` and requested time ``t``, and
   the jobs whose wait grew most;
2. by decision: on the very problems the optimal run met, the AST heuristic's schedule
   beside the optimal one: price, the new job's start, and the delays pushed onto the
   waiting jobs (how many, how long, how wide);
3. the objective mismatch: the price charges a delay by ``n * t_i`` (processor-seconds,
   weighted by priority and used slack) while the average wait counts each job once, so
   the per-insertion optimum trades many small jobs' seconds for a few wide jobs'.

Setting: as ``slack_gaps e2e`` (KTH-SP2, 128 processors, jobs killed at their request,
equal priorities, SF 3, AWT 2401 s, alphas 1, December from an empty machine). CP-SAT
calls stopped by the wall-clock limit make the optimal run depend on machine load, so
the per-job starts of the run analysed are written beside the report
(``results/slack_december/starts.json``) and the stopped calls are counted.

Run: ``python -m sim.experiments.slack_december [--time-limit 1]`` (about 10 min).
Times are seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from heuristics.slack import SlackPolicy
from models.slack_insertion import OptimalInsertionPolicy
from sim.batch.machine import simulate
from sim.batch.validate import validate
from sim.problems.insertion import InsertionProblem, InsertionSchedule, price

OUT = Path(__file__).resolve().parent / "results" / "slack_december"
MONTH = "1996-12"
AWT = 2401.0
WIDTH = ((1, 1), (2, 8), (9, 32), (33, 128))
LENGTH = ((0, 900), (901, 3600), (3601, 14400), (14401, 10**9))


class Recorder:
    """Wraps an inserter and keeps every ``(problem, schedule)`` it decided."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.decisions: list[tuple[InsertionProblem, InsertionSchedule]] = []

    def __call__(self, problem: InsertionProblem) -> InsertionSchedule:
        s = self.inner(problem)
        self.decisions.append((problem, s))
        return s


def _month():
    from sim.experiments.slack_gaps import _month as month

    return month(MONTH)


def run(time_limit: float) -> dict:
    """Simulate December with AST and with optimal insertion, recording every decision."""
    month = _month()
    out = {"jobs": month.jobs}
    for name in ("AST", "optimal"):
        pol = (SlackPolicy(order="AST", sf=3.0, awt=AWT) if name == "AST"
               else OptimalInsertionPolicy(sf=3.0, awt=AWT, time_limit=time_limit))
        rec = Recorder(pol.inserter)
        pol.inserter = rec
        t0 = time.perf_counter()
        s = simulate(month, pol)
        validate(s)
        out[name] = {"start": s.start, "decisions": rec.decisions,
                     "seconds": time.perf_counter() - t0,
                     "stats": dict(getattr(rec.inner, "stats", {}))}
        print(f"  {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def _delays(pb: InsertionProblem, s: InsertionSchedule) -> tuple[int, int, int, int]:
    """(jobs delayed, job-seconds of delay, processor-seconds of delay, jobs advanced)."""
    nd = js = ps = na = 0
    for w in pb.waiting:
        d = s.starts[w.id] - w.te
        if d > 0:
            nd += 1
            js += d
            ps += d * w.n
        elif d < 0:
            na += 1
    return nd, js, ps, na


def per_job_delay(decisions, ids: list[int]) -> dict[int, int]:
    """Total delay (s) each job received while waiting, summed over all decisions."""
    tot = dict.fromkeys(ids, 0)
    for pb, s in decisions:
        for w in pb.waiting:
            d = s.starts[w.id] - w.te
            if d > 0:
                tot[w.id] += d
    return tot


def report(data: dict, time_limit: float) -> str:
    from heuristics.slack import insert

    jobs = data["jobs"]
    ids = [j.id for j in jobs]
    n = np.array([j.procs for j in jobs])
    t = np.array([j.requested for j in jobs])
    sub = np.array([j.submit for j in jobs])
    wa = data["AST"]["start"] - sub
    wo = data["optimal"]["start"] - sub
    L = ["# KTH December 1996: why optimal insertion waits longer than AST", "",
         f"Command: `python -m sim.experiments.slack_december --time-limit {time_limit:g}`. "
         "KTH-SP2, 128 processors, equal priorities, SF 3, AWT 2401 s, alphas 1; CP-SAT "
         f"{time_limit:g} s per call. Optimal run: {data['optimal']['seconds']:.0f} s; calls "
         + ", ".join(f"{k} {v:.0f}" for k, v in data["optimal"]["stats"].items()
                     if k != "seconds") + " (FEASIBLE = stopped by the limit).", ""]
    aw, ow = wa.mean(), wo.mean()
    pw_a = (n * wa).sum() / n.sum()
    pw_o = (n * wo).sum() / n.sum()
    L += ["## 1. The month", "",
          "| measure | AST | optimal | change |", "|---|---|---|---|",
          f"| average wait (s) | {aw:,.1f} | {ow:,.1f} | {(ow / aw - 1) * 100:+.1f}% |",
          f"| processor-weighted wait, sum n*wait / sum n (s) | {pw_a:,.1f} | {pw_o:,.1f} | "
          f"{(pw_o / pw_a - 1) * 100:+.1f}% |",
          f"| jobs waiting longer / shorter than under AST | | "
          f"{int((wo > wa).sum())} / {int((wo < wa).sum())} | |",
          f"| median wait (s) | {np.median(wa):,.0f} | {np.median(wo):,.0f} | |", ""]

    L += ["## 2. Who waits longer", "",
          "Share = this class's part of the total change in summed wait.", "",
          "| jobs | count | AST mean wait | optimal mean wait | change | share of the "
          "total change |", "|---|---|---|---|---|---|"]
    total = (wo - wa).sum()
    for label, mask in ([(f"n {a}-{b}", (n >= a) & (n <= b)) for a, b in WIDTH]
                        + [(f"t {a}-{b if b < 10**9 else 'max'} s", (t >= a) & (t <= b))
                           for a, b in LENGTH]):
        if not mask.any():
            continue
        L.append(f"| {label} | {int(mask.sum())} | {wa[mask].mean():,.0f} | "
                 f"{wo[mask].mean():,.0f} | {(wo[mask] - wa[mask]).mean():+,.0f} s | "
                 f"{(wo[mask] - wa[mask]).sum() / total * 100:+.0f}% |")
    top = np.argsort(-(wo - wa))[:12]
    L += ["", "The twelve jobs whose wait grew most, with the delays the decisions pushed onto "
          "them while they waited (sum over all decisions):", "",
          "| job | n | requested t (s) | submit (s) | AST wait | optimal wait | delays "
          "received, AST | delays received, optimal |", "|---|---|---|---|---|---|---|---|"]
    da = per_job_delay(data["AST"]["decisions"], ids)
    do = per_job_delay(data["optimal"]["decisions"], ids)
    for i in top:
        L.append(f"| {ids[i]} | {n[i]} | {t[i]:,} | {sub[i]:,} | {wa[i]:,} | {wo[i]:,} | "
                 f"{da[ids[i]]:,} | {do[ids[i]]:,} |")
    dav = np.array([da[i] for i in ids])
    dov = np.array([do[i] for i in ids])
    L += ["", f"Delay pushed onto waiting jobs over the month (job-seconds): AST "
          f"{dav.sum():,}, optimal {dov.sum():,}; onto 1-processor jobs: AST "
          f"{dav[n == 1].sum():,}, optimal {dov[n == 1].sum():,}.", ""]

    # decisions of the optimal run, replayed with AST
    rows = {"insert": [], "remove": []}
    for pb, so in data["optimal"]["decisions"]:
        if not pb.waiting:
            continue
        sa = insert(pb, "AST").schedule
        po, pa = price(pb, so), price(pb, sa)
        kind = "insert" if pb.new is not None else "remove"
        rows[kind].append((pa, po, sa, so, pb))
    L += ["## 3. Decision by decision", "",
          "Every decision of the optimal run with a non-empty queue, solved again by the AST "
          "heuristic on the same problem (same state, so this isolates the decision rule):",
          "", "| decisions | count | optimal strictly cheaper | mean price AST | mean price "
          "optimal | new job earlier / later than AST | jobs delayed per decision, AST / "
          "optimal | delay pushed (job-s) AST / optimal | (proc-s) AST / optimal |",
          "|---|---|---|---|---|---|---|---|---|"]
    for kind, rs in rows.items():
        if not rs:
            continue
        cheaper = sum(1 for pa, po, *_ in rs if po < pa * (1 - 1e-9) - 1e-9)
        earlier = later = 0
        dA = np.zeros(4)
        dO = np.zeros(4)
        for _pa, _po, sa, so, pb in rs:
            if pb.new is not None:
                earlier += so.new_start < sa.new_start
                later += so.new_start > sa.new_start
            dA += _delays(pb, sa)
            dO += _delays(pb, so)
        c = len(rs)
        L.append(f"| {kind} | {c} | {cheaper} | {np.mean([r[0] for r in rs]):,.0f} | "
                 f"{np.mean([r[1] for r in rs]):,.0f} | "
                 + (f"{earlier} / {later}" if kind == "insert" else "-")
                 + f" | {dA[0] / c:.2f} / {dO[0] / c:.2f} | {dA[1]:,.0f} / {dO[1]:,.0f} | "
                 f"{dA[2]:,.0f} / {dO[2]:,.0f} |")
    # the widths of the new jobs the optimum starts earlier, and of the jobs it delays
    ins = rows["insert"]
    earlier_n = [pb.new.n for _, _, sa, so, pb in ins if so.new_start < sa.new_start]
    delayed_n = [w.n for _, _, sa, so, pb in ins if so.new_start < sa.new_start
                 for w in pb.waiting if so.starts[w.id] > max(w.te, sa.starts[w.id])]
    if earlier_n:
        L += ["", f"Where the optimum starts the new job earlier than AST ({len(earlier_n)} "
              f"insertions), the new job is {np.mean(earlier_n):.1f} processors wide on "
              f"average (median {np.median(earlier_n):.0f}); the waiting jobs it delays "
              f"further than AST does ({len(delayed_n)}) are "
              f"{np.mean(delayed_n) if delayed_n else 0:.1f} wide on average (median "
              f"{np.median(delayed_n) if delayed_n else 0:.0f}).", ""]
    L += ["## Reading", "",
          "Each decision of the optimal run is at least as cheap as AST's on the same state "
          "(the table's 'strictly cheaper' column; never dearer), yet the month waits "
          "longer. The price is not the month's objective: it charges a delay by the "
          "delayed job's width (n^alpha_u) times its length, scaled by the priority ratio "
          "and the slack already used, while the average wait counts every job once. The "
          "optimum therefore accepts many small delays to waiting jobs to start a wide new "
          "job earlier (processor-seconds saved), and spends the waiting jobs' slack doing "
          "so; AST, which only compresses in scheduled order, moves fewer jobs. Whether the "
          "trade pays off depends on the month's mix (it does in November, March and August, "
          "not in December): a better solution of each insertion is not a better schedule "
          "for the average wait, because the insertion problem optimises another quantity "
          "and is solved myopically, one arrival at a time."]
    text = "\n".join(L) + "\n"
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "analysis.md").write_text(text)
    (OUT / "starts.json").write_text(json.dumps(
        {"month": MONTH, "time_limit": time_limit, "ids": ids,
         "AST": data["AST"]["start"].tolist(), "optimal": data["optimal"]["start"].tolist()})
        + "\n")
    print(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.experiments.slack_december",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=1.0,
                    help="CP-SAT seconds per insertion (default 1, as slack_e2e)")
    args = ap.parse_args(argv)
    report(run(args.time_limit), args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
