"""Why optimal insertion makes KTH December 1996 worse than AST.

In ``results/slack_e2e.md`` solving every insertion of the slack-based scheduler to
optimality raises December's average wait over the AST heuristic's, while it lowers it in
other months. This module reruns December with both inserters, records every decision
(the insertion problem and the schedule chosen), and breaks the difference down:

1. by job: which jobs wait longer, grouped by width ``n`` and requested time ``t``, and
   the jobs whose wait grew most;
2. by decision: on the very problems the optimal run met, the AST heuristic's schedule
   beside the optimal one: price, the new job's start, and the delays pushed onto the
   waiting jobs (how many, how long, how wide);
3. the objective mismatch: the price charges a delay by ``n * t_i`` (processor-seconds,
   weighted by priority and used slack) while the average wait counts each job once, so
   the per-insertion optimum trades many small jobs' seconds for a few wide jobs'.

Setting: as ``slack_gaps e2e`` (KTH-SP2, 128 processors, jobs killed at their request,
equal priorities, SF 3, AWT 2401 s, alphas 1, December from an empty machine). Every
CP-SAT call runs under a deterministic time limit (``--dtime``, CP-SAT's work units per
stage, about seconds on a quiet machine) with one worker and seed 0, so the same inputs
give the same schedules and files on any machine with the same OR-Tools (its version is in
the header); the wall-clock limit (``--time-limit``) is only an outer guard, and the calls
that reach 90% of it are counted in the report's header (a run whose guard never fired is
reproducible). ``--dtime 0`` drops the deterministic limit and makes the wall clock the
only limit (the schedules then depend on the machine's load). The per-job starts are
written beside the report (``starts.json``, with the command and commit). Timings and the
load go to stderr, never into the files.

Run: ``python -m sim.experiments.talby.december [--dtime 1] [--time-limit 30]`` (the
month; writes ``results/slack_december/``) or ``--quick`` (the first 300 jobs of the month,
written to the git-ignored ``results/slack_december-quick/`` at the repository top and
marked PARTIAL). Times are seconds.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from heuristics.slack import SlackPolicy
from models.slack_insertion import OptimalInsertionPolicy
from models.slack_insertion.inserter import deterministic_params, guard_reached
from sim.argparser import Parser
from sim.batch.machine import simulate
from sim.batch.validate import validate
from sim.experiments.common import (
    PARTIAL_DIR,
    command,
    commit,
    environment,
    load_average,
    markdown_row,
    markdown_table,
    stamp,
    write_atomic,
)
from sim.problems.insertion import InsertionProblem, InsertionSchedule, objective

OUT = Path(__file__).resolve().parent / "results" / "slack_december"
QUICK_OUT = PARTIAL_DIR / "slack_december-quick"
QUICK_JOBS = 300
MONTH = "1996-12"
AWT = 2401.0
WIDTH = ((1, 1), (2, 8), (9, 32), (33, 128))
LENGTH = ((0, 900), (901, 3600), (3601, 14400), (14401, 10**9))
SEED = 0
"""CP-SAT's ``random_seed`` in every call (one worker, so the search is deterministic)."""


class Recorder:
    """Wraps an inserter and keeps every ``(problem, schedule)`` it decided."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.decisions: list[tuple[InsertionProblem, InsertionSchedule]] = []

    def __call__(self, problem: InsertionProblem) -> InsertionSchedule:
        s = self.inner(problem)
        self.decisions.append((problem, s))
        return s


@dataclass(frozen=True)
class Limits:
    """The limits of every CP-SAT call.

    Attributes
    ----------
    dtime : float or None
        CP-SAT's deterministic time limit per stage (its work units, about seconds on a
        quiet machine); None: none, the wall clock alone stops a search.
    guard : float or None
        Wall-clock seconds per call: the outer guard (with ``dtime``) or the only limit.
    """

    dtime: float | None = 1.0
    guard: float | None = 30.0

    def __post_init__(self) -> None:
        for name in ("dtime", "guard"):
            v = getattr(self, name)
            if v is not None and not v > 0:
                raise ValueError(f"{name} must be > 0 (or None), got {v!r}")

    def describe(self) -> str:
        """The limits in words, for the report's header."""
        if self.dtime is None:
            return f"CP-SAT {self.guard:g} s of wall clock per call (no deterministic limit)"
        return (f"CP-SAT deterministic time {self.dtime:g} per stage, wall-clock guard "
                f"{self.guard:g} s per call")


class CpsatOrAst:
    """CP-SAT at every call (under ``limits``); with ``best_of`` the cheaper of its schedule
    and AST's (ties to CP-SAT). Records each call's CP-SAT status in ``statuses``."""

    def __init__(self, limits: Limits, best_of: bool) -> None:
        self.limits = limits
        self.best_of = best_of
        self.statuses: list[str] = []
        self.stats: dict[str, float] = {"OPTIMAL": 0, "FEASIBLE": 0, "trivial": 0,
                                        "AST cheaper": 0, "guard": 0, "seconds": 0.0}

    def __call__(self, problem: InsertionProblem) -> InsertionSchedule:
        from heuristics.slack import insert
        from models.slack_insertion import solve_cpsat
        from sim.problems.insertion import current_schedule

        if not problem.waiting:
            self.stats["trivial"] += 1
            self.statuses.append("trivial")
            return current_schedule(problem)
        res = solve_cpsat(problem, time_limit=self.limits.guard, seed=SEED, workers=1,
                          **deterministic_params(self.limits.dtime))
        self.stats[res.status.value] += 1
        self.stats["seconds"] += res.runtime
        self.stats["guard"] += guard_reached(res.runtime, self.limits.guard)
        self.statuses.append(res.status.value)
        sched = res.solution
        if self.best_of:
            a = insert(problem, "AST")
            if a.price < objective(problem, sched) - 1e-9 * (1 + abs(a.price)):
                self.stats["AST cheaper"] += 1
                return a.schedule
        return sched


def _month(max_jobs: int | None = None):
    """KTH December 1996 (its first ``max_jobs`` jobs when given)."""
    from sim.experiments.talby.gaps import _month as month

    m = month(MONTH)
    return m if max_jobs is None else replace(m, jobs=tuple(m.jobs[:max_jobs]))


def run(limits: Limits, max_jobs: int | None = None) -> dict:
    """Simulate December with AST and with optimal insertion, recording every decision."""
    month = _month(max_jobs)
    out = {"jobs": month.jobs}
    for name in ("AST", "optimal", "best of both"):
        pol = (SlackPolicy(order="AST", sf=3.0, awt=AWT) if name == "AST"
               else OptimalInsertionPolicy(sf=3.0, awt=AWT, time_limit=limits.guard))
        if name != "AST":
            pol.inserter = CpsatOrAst(limits, best_of=name == "best of both")
        rec = Recorder(pol.inserter)
        pol.inserter = rec
        t0 = time.perf_counter()
        s = simulate(month, pol)
        validate(s)
        out[name] = {"start": s.start, "decisions": rec.decisions,
                     "seconds": time.perf_counter() - t0,
                     "stats": dict(getattr(rec.inner, "stats", {})),
                     "statuses": list(getattr(rec.inner, "statuses", []))}
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


def reading(ast: float, optimal: float, best_of: float) -> str:
    """The end of the report's second reading: how much of the optimal run's change in
    average wait against AST (seconds, ``optimal - ast``) the ``best of both`` run removes
    (what the stopped calls account for) and what remains. Changes within 1% count as
    none; "most" means more than half."""
    def pc(x: float) -> str:
        return f"{(x / ast - 1) * 100:+.1f}%"

    worse, left = optimal > ast * 1.01, best_of > ast * 1.01
    rest = ("decisions that are never dearer than AST's: the price of one decision is not "
            "the month's average wait.")
    if worse and not left:
        return (f"the stopped calls account for the degradation ({pc(optimal)} down to "
                f"{pc(best_of)}, within 1%).")
    if worse and optimal - best_of > (optimal - ast) / 2:
        return (f"the stopped calls account for most of the degradation ({pc(optimal)} down "
                f"to {pc(best_of)}); the rest remains with {rest}")
    if worse:
        return (f"the stopped calls account for little of the degradation ({pc(optimal)}, "
                f"{pc(best_of)} without them); most of it remains with {rest}")
    if left:
        return ("even decisions that are never dearer than AST's leave the month worse than "
                "AST: the price of one decision is not the month's average wait.")
    return "neither run is more than 1% worse than AST here."


def report(data: dict, limits: Limits, out: Path = OUT, partial: str = "") -> str:
    """Write ``analysis.md`` and ``starts.json`` to ``out`` and return the analysis."""
    from heuristics.slack import insert

    jobs = data["jobs"]
    ids = [j.id for j in jobs]
    n = np.array([j.procs for j in jobs])
    t = np.array([j.requested for j in jobs])
    sub = np.array([j.submit for j in jobs])
    wa = data["AST"]["start"] - sub
    wo = data["optimal"]["start"] - sub
    guard = int(data["optimal"]["stats"].get("guard", 0)
                + data["best of both"]["stats"].get("guard", 0))
    L = ["# KTH December 1996: why optimal insertion waits longer than AST", "",
         *([partial, ""] if partial else []),
         f"Produced at {stamp()}; {environment()}. KTH-SP2, 128 processors, {len(jobs)} "
         f"jobs, equal priorities, SF 3, AWT 2401 s, alphas 1; {limits.describe()}, one "
         f"worker, seed {SEED}. Optimal run's calls: "
         + ", ".join(f"{k} {v:.0f}" for k, v in data["optimal"]["stats"].items()
                     if k not in ("seconds", "guard")) + " (FEASIBLE = stopped by a limit). "
         + ("Wall-clock limit only: the schedules depend on the machine's load."
            if limits.dtime is None else
            f"Calls that reached the wall-clock guard (both CP-SAT runs): {guard}"
            + (" (the schedules are the same on any machine with this OR-Tools)."
               if guard == 0 else
               " (those calls, and so the schedules, may depend on the machine).")), ""]
    wb = data["best of both"]["start"] - sub
    aw, ow, bw = wa.mean(), wo.mean(), wb.mean()

    def pw(w: np.ndarray) -> float:
        return float((n * w).sum() / n.sum())

    sb = data["best of both"]["stats"]
    L += ["## 1. The month", "",
          "`best of both` = at every decision the cheaper of CP-SAT's schedule (same "
          "limits) and AST's, so never dearer than either on the state it meets "
          f"(AST was cheaper in {sb.get('AST cheaper', 0):.0f} of its calls).", "",
          *markdown_table(
              ["measure", "AST", "optimal (CP-SAT)", "change", "best of both", "change"],
              [["average wait (s)", f"{aw:,.1f}", f"{ow:,.1f}", f"{(ow / aw - 1) * 100:+.1f}%",
                f"{bw:,.1f}", f"{(bw / aw - 1) * 100:+.1f}%"],
               ["processor-weighted wait, sum n*wait / sum n (s)", f"{pw(wa):,.1f}",
                f"{pw(wo):,.1f}", f"{(pw(wo) / pw(wa) - 1) * 100:+.1f}%", f"{pw(wb):,.1f}",
                f"{(pw(wb) / pw(wa) - 1) * 100:+.1f}%"],
               ["jobs waiting longer / shorter than under AST", None,
                f"{int((wo > wa).sum())} / {int((wo < wa).sum())}", None,
                f"{int((wb > wa).sum())} / {int((wb < wa).sum())}", None],
               ["CP-SAT calls proved / stopped by the limit", None,
                f"{data['optimal']['stats']['OPTIMAL']:.0f} / "
                f"{data['optimal']['stats']['FEASIBLE']:.0f}", None,
                f"{sb['OPTIMAL']:.0f} / {sb['FEASIBLE']:.0f}", None]]), ""]

    L += ["## 2. Who waits longer", "",
          "Share = this class's part of the total change in summed wait.", "",
          *markdown_table(["jobs", "count", "AST mean wait", "optimal mean wait", "change",
                           "share of the total change"], [])]
    total = (wo - wa).sum()
    for label, mask in ([(f"n {a}-{b}", (n >= a) & (n <= b)) for a, b in WIDTH]
                        + [(f"t {a}-{b if b < 10**9 else 'max'} s", (t >= a) & (t <= b))
                           for a, b in LENGTH]):
        if not mask.any():
            continue
        L.append(markdown_row([label, int(mask.sum()), f"{wa[mask].mean():,.0f}",
                               f"{wo[mask].mean():,.0f}",
                               f"{(wo[mask] - wa[mask]).mean():+,.0f} s",
                               f"{(wo[mask] - wa[mask]).sum() / total * 100:+.0f}%"]))
    top = np.argsort(-(wo - wa))[:12]
    L += ["", "The twelve jobs whose wait grew most, with the delays the decisions pushed onto "
          "them while they waited (sum over all decisions):", "",
          *markdown_table(["job", "n", "requested t (s)", "submit (s)", "AST wait",
                           "optimal wait", "delays received, AST", "delays received, optimal"],
                          [])]
    da = per_job_delay(data["AST"]["decisions"], ids)
    do = per_job_delay(data["optimal"]["decisions"], ids)
    for i in top:
        L.append(markdown_row([ids[i], n[i], f"{t[i]:,}", f"{sub[i]:,}", f"{wa[i]:,}",
                               f"{wo[i]:,}", f"{da[ids[i]]:,}", f"{do[ids[i]]:,}"]))
    dav = np.array([da[i] for i in ids])
    dov = np.array([do[i] for i in ids])
    L += ["", f"Delay pushed onto waiting jobs over the month (job-seconds): AST "
          f"{dav.sum():,}, optimal {dov.sum():,}; onto 1-processor jobs: AST "
          f"{dav[n == 1].sum():,}, optimal {dov[n == 1].sum():,}.", ""]

    # decisions of the optimal run, replayed with AST
    rows = {"insert": [], "remove": []}
    by_status: dict[tuple[str, str], list[int]] = {}
    for (pb, so), st in zip(data["optimal"]["decisions"], data["optimal"]["statuses"],
                            strict=True):
        if not pb.waiting:
            continue
        sa = insert(pb, "AST").schedule
        po, pa = objective(pb, so), objective(pb, sa)
        kind = "insert" if pb.new is not None else "remove"
        rows[kind].append((pa, po, sa, so, pb))
        tol = 1e-6 * (1 + abs(pa))
        c = by_status.setdefault((kind, st), [0, 0, 0, 0])
        c[0] += 1
        c[1] += po < pa - tol
        c[2] += abs(po - pa) <= tol
        c[3] += po > pa + tol
    L += ["## 3. Decision by decision", "",
          "Every decision of the optimal run with a non-empty queue, solved again by the AST "
          "heuristic on the same problem (same state, so this isolates the decision rule):",
          "", *markdown_table(["decisions", "count", "optimal strictly cheaper",
                               "mean price AST", "mean price optimal",
                               "new job earlier / later than AST",
                               "jobs delayed per decision, AST / optimal",
                               "delay pushed (job-s) AST / optimal", "(proc-s) AST / optimal"],
                              [])]
    for kind, rs in rows.items():
        if not rs:
            continue
        cheaper = sum(1 for pa, po, *_ in rs if po < pa - 1e-6 * (1 + abs(pa)))
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
        L.append(markdown_row([kind, c, cheaper, f"{np.mean([r[0] for r in rs]):,.0f}",
                               f"{np.mean([r[1] for r in rs]):,.0f}",
                               f"{earlier} / {later}" if kind == "insert" else "-",
                               f"{dA[0] / c:.2f} / {dO[0] / c:.2f}",
                               f"{dA[1]:,.0f} / {dO[1]:,.0f}", f"{dA[2]:,.0f} / {dO[2]:,.0f}"]))
    L += ["", "The same decisions by CP-SAT status (a proved optimum is never dearer than "
          "AST; a call stopped by the limit keeps CP-SAT's best schedule so far):", "",
          *markdown_table(["decisions", "CP-SAT status", "count", "CP-SAT cheaper than AST",
                           "equal", "dearer"],
                          [[kind, st, *c] for (kind, st), c in sorted(by_status.items())])]
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
    dearer = sum(c[3] for c in by_status.values())
    dearer_stopped = sum(c[3] for (k, st), c in by_status.items() if st == "FEASIBLE")
    dearer_remove = sum(c[3] for (k, st), c in by_status.items() if k == "remove")
    verdict = reading(aw, ow, bw)
    L += ([] if L[-1] == "" else [""]) + ["## Reading", "",
          f"- {dearer} decisions of the optimal run are dearer than AST's on the same state "
          f"({dearer_remove} of them removes, i.e. re-optimisations after an early end); "
          f"{dearer_stopped} of them are calls stopped by a limit (a proved "
          "optimum never is dearer).",
          f"- With the cheaper of the two at every decision (`best of both`) the month's "
          f"average wait is {bw:,.0f} s against AST's {aw:,.0f} s "
          f"({(bw / aw - 1) * 100:+.1f}%; the optimal run {(ow / aw - 1) * 100:+.1f}%), so "
          + verdict,
          "- The price is not the month's objective in any case: it charges a delay by the "
          "delayed job's width (n^alpha_u) times its length, scaled by the priority ratio "
          "and the slack already used, while the average wait counts every job once, and "
          "each decision is taken alone, one arrival or early end at a time."]
    if limits.dtime is None:
        L.append("- The outcome depends on the load of the machine the run is made on: the "
                 "number of stopped calls (and so the schedule) changes with the CPU the "
                 "solver gets.")
    text = "\n".join(L) + "\n"
    write_atomic(out / "analysis.md", text)
    write_atomic(out / "starts.json", json.dumps(
        {"command": command(), "commit": commit(), "environment": environment(),
         "month": MONTH, "jobs": len(jobs), "dtime": limits.dtime, "guard": limits.guard,
         "seed": SEED, "guard_reached": guard,
         "ids": ids, "AST": data["AST"]["start"].tolist(),
         "optimal": data["optimal"]["start"].tolist(),
         "best of both": data["best of both"]["start"].tolist()}) + "\n")
    print(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.talby.december",
                description=__doc__.splitlines()[0])
    ap.add_argument("--dtime", type=float, default=1.0,
                    help="CP-SAT deterministic time per stage (default 1; 0: none, the wall "
                         "clock alone limits each call)")
    ap.add_argument("--time-limit", type=float, default=30.0,
                    help="wall-clock seconds per call: the outer guard (default 30), or the "
                         "only limit with --dtime 0")
    ap.add_argument("--quick", action="store_true",
                    help=f"the first {QUICK_JOBS} jobs of the month, written to {QUICK_OUT} "
                         "and marked PARTIAL")
    ap.add_argument("--out", type=Path, help="directory of the files (default: "
                    "results/slack_december, or the quick directory with --quick)")
    args = ap.parse_args(argv)
    if args.dtime < 0 or not args.time_limit > 0:
        ap.error(f"--dtime must be >= 0 and --time-limit > 0, got {args.dtime:g} and "
                 f"{args.time_limit:g}")
    limits = Limits(dtime=args.dtime or None, guard=args.time_limit)
    out = args.out or (QUICK_OUT if args.quick else OUT)
    partial = (f"**PARTIAL (quick configuration): the first {QUICK_JOBS} jobs of the month "
               "only.**" if args.quick else "")
    t0, c0, load0 = time.perf_counter(), time.process_time(), load_average()
    report(run(limits, QUICK_JOBS if args.quick else None), limits, out, partial)
    print(f"[december: {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s "
          f"CPU, load average {load0} -> {load_average()}, written to {out}]", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
