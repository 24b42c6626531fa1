"""Exact slack insertion solvers: time to prove optimality, peak memory, and time limits.

``python -m sim.experiments.talby.insertion_bench [--time-limit 10] [--kmin 0] [--kmax 70]
[--before JSON] [--variants] [--ilp] [--limits] [--out NAME] [--compare DTIME]``

Default: solves every problem of the bundled KTH snapshot set
(``instances/data/slack_snapshots``, insert and remove problems met while simulating
KTH-SP2 months with AST; see its ``index.md``) with
``models.slack_insertion.cpsat.solve_cpsat`` (one worker, seed 0) and prints, per
queue-length bin: problems, proved optimal within the limit, median and 90th percentile
wall time (a stopped run counts as the limit), and the peak resident memory of the
process after the bin.

``--before JSON`` (e.g. ``'{"fine": false}'``) also solves every problem, right after the
default model, with ``solve_cpsat`` options JSON (the configuration before a change), so
that before and after are measured in one run under the same load; the table then gives
both per bin, and the CPU seconds of each (``time.process_time``) beside the wall time.

``--variants`` also runs, on six evenly spaced problems of each bin from k = 11 to 50 and
in the same run (the machine is shared, so only a comparison within one run means
anything), the CP-SAT model with each
speed measure switched off in turn (the equal-weight orders, the swap orders, the domain
tightening, the dominant start times) and with the plain-model pass first (the old
default) whose best schedule warm-starts the strengthened model.

``--ilp`` runs ``solve_ilp`` on the snapshots with k <= ``--ilp-kmax`` (default 5), in a
fresh process, and reports its time and the peak memory of CBC (the largest child
process; an upper bound, since a child starts from its parent's peak figure).

``--compare DTIME`` runs only the comparison of the CP-SAT speed measures of issue
13.3 (``COMPARE``) on 13 fixed snapshots with k = 6-30, back to back per snapshot, under
a deterministic limit of DTIME per stage, and reports CPU seconds (the wall clock of a
loaded shared machine says little); it writes ``results/slack_compare.md`` at the top.

``--limits`` runs every registered solver of the family on two large problems (the
65-job snapshot ``kth-1997-02-remove-13322470-k65`` and a generated 500-job problem) with
a 1 s limit, each in a fresh process, and prints the wall time and the peak memory of
that process and its children (CBC). Target: within the limit plus 2 s and
under 1 GB.

Writes ``sim/experiments/talby/results/<out>`` only for the full configuration (``--kmin 0``, no
``--kmax`` below 70, limit 10 s); otherwise ``results/<out>`` at the repository top, marked partial.
Protocol: wall-clock seconds on a shared 2-core machine (load average printed), CP-SAT
with ``num_workers=1``, commit and command in the header. Times are seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, ROOT, markdown_row, markdown_table
from sim.experiments.talby.snapshots import OUT as SNAPSHOTS
from sim.experiments.talby.snapshots import snapshots_by_k
from sim.problems import insertion as ins
from sim.result import Status

MODULE = "sim.experiments.talby.insertion_bench"
RESULTS = Path(__file__).resolve().parent / "results"
PARTIAL = PARTIAL_DIR
BINS = [(0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, 30), (31, 50), (51, 70)]
VARIANTS = {
    "full": {},
    "plain pass first (warmup 0.1, warm start)": {"warmup": 0.1},
    "no equal orders": {"equal_orders": False},
    "no swap orders": {"symmetry": False},
    "no tightening": {"tighten": False},
    "no dominant times": {"dominant": False},
    "no chain sets": {"chains": False},
    "CP-SAT presolve on": {"presolve": True},
    "warm start from AST": {"heuristic_start": ("AST",)},
    "warm start from the five orders": {"heuristic_start": ("AST", "AAT", "DU", "DC", "DP")},
    "time-indexed rows (200k terms)": {"time_indexed": 200_000},
}
VARIANT_SAMPLE = 6
BIG_SNAPSHOT = "kth-1997-02-remove-13322470-k65.json"



def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _peak_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident memory, MB: of this process (``VmHWM``, which a new program does not
    inherit from its parent, unlike ``ru_maxrss``) or of the largest waited-for child
    (``ru_maxrss``; an upper bound, as a child starts from its parent's value)."""
    if who == resource.RUSAGE_SELF:
        try:
            with open("/proc/self/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
    return resource.getrusage(who).ru_maxrss / 1024.0  # Linux: kilobytes


def big_problem(seed: int = 1, k: int = 500, capacity: int = 128) -> ins.InsertionProblem:
    """A generated 500-job insertion problem: slack ratios up to ~20,000, so
    moving jobs earlier earns large negative prices (seconds, processors)."""
    rng = random.Random(seed)
    now = 1000
    running = tuple(ins.RunningJob(10_000 + i, rng.randint(1, 8), now + rng.randint(60, 20_000))
                    for i in range(10))
    pb = ins.InsertionProblem(now=now, capacity=capacity, running=running)
    prof = ins.profile_of(pb)
    waiting, cursor = [], now
    for i in range(k):
        n, t = rng.randint(1, 32), rng.randint(60, 7200)
        cursor += rng.randint(0, 600)
        te = prof.earliest_start(t, (n,), cursor)
        prof.reserve(te, t, (n,))
        s = float(rng.randint(0, 3000))
        waiting.append(ins.WaitingJob(i + 1, n, t, te, s, s + rng.randint(0, 20_000),
                                      rng.randint(1, 6) / 6, now - rng.randint(0, 5000)))
    return ins.InsertionProblem(now=now, capacity=capacity, running=running,
                                waiting=tuple(waiting),
                                new=ins.NewJob(0, rng.randint(1, 32), rng.randint(60, 3600),
                                               0.5, now))


def _snapshots(kmin: int, kmax: int) -> list[tuple[int, str, ins.InsertionProblem]]:
    return [(pb.k, name, pb) for name, pb in snapshots_by_k(kmin, kmax)]


def _bin_table(rows: list[tuple], limit: float, mem: dict[tuple[int, int], float],
               mem_label: str) -> list[str]:
    lines = markdown_table(["queue k", "problems", "proved", "median s", "p90 s", "max s",
                            mem_label], [])
    for lo, hi in BINS:
        sub = [r for r in rows if lo <= r[0] <= hi]
        if not sub:
            continue
        ts = [min(r[3], limit) for r in sub]
        proved = sum(1 for r in sub if r[2] is Status.OPTIMAL)
        lines.append(markdown_row([f"{lo}-{hi}", len(sub), proved, f"{statistics.median(ts):.3f}",
                                   f"{_pct(ts, 0.9):.3f}", f"{max(ts):.3f}",
                                   f"{mem.get((lo, hi), 0):.0f}"]))
    return lines


def _before_table(rows: list[tuple], before: list[tuple], limit: float) -> list[str]:
    """Per bin: proved, median and p90 wall seconds, CPU seconds in all, before -> now."""
    lines = markdown_table(["queue k", "problems", "proved: before -> now",
                            "median s: before -> now", "p90 s: before -> now",
                            "CPU s in all: before -> now"], [])
    for lo, hi in BINS:
        cols = []
        for rs in (before, rows):
            sub = [r for r in rs if lo <= r[0] <= hi]
            ts = [min(r[3], limit) for r in sub]
            cols.append((len(sub), sum(1 for r in sub if r[2] is Status.OPTIMAL),
                         statistics.median(ts) if ts else 0.0, _pct(ts, 0.9) if ts else 0.0,
                         sum(r[4] for r in sub)))
        (n, p0, m0, q0, c0), (_, p1, m1, q1, c1) = cols
        if n:
            lines.append(markdown_row([f"{lo}-{hi}", n, f"{p0} -> {p1}",
                                       f"{m0:.3f} -> {m1:.3f}", f"{q0:.3f} -> {q1:.3f}",
                                       f"{c0:.1f} -> {c1:.1f}"]))
    return lines


def run_cpsat(time_limit: float, kmax: int, variants: bool, kmin: int = 0,
              before: dict | None = None) -> list[str]:
    from models.slack_insertion.cpsat import solve_cpsat

    problems = _snapshots(kmin, kmax)
    if not problems:
        return ["No snapshot in the k range."]
    solve_cpsat(problems[0][2])  # import OR-Tools outside the timings
    rows, mem = [], {}
    # the variants run on at most VARIANT_SAMPLE problems per bin, evenly spaced
    sample = set()
    for lo, hi in ((11, 20), (21, 30), (31, 50)):
        names = [n for k, n, _ in problems if lo <= k <= hi]
        step = max(1, len(names) // VARIANT_SAMPLE)
        sample.update(names[::step][:VARIANT_SAMPLE])
    var_rows: dict[str, list[tuple]] = {v: [] for v in VARIANTS if v != "full"}
    before_rows: list[tuple] = []
    for k, name, pb in problems:
        c0 = time.process_time()
        r = solve_cpsat(pb, time_limit=time_limit)
        rows.append((k, name, r.status, r.runtime, time.process_time() - c0))
        print(f"  {name}: {r.status.value} {r.runtime:.3f}s", file=sys.stderr, flush=True)
        if before is not None:
            c0 = time.process_time()
            rb = solve_cpsat(pb, time_limit=time_limit, **before)
            before_rows.append((k, name, rb.status, rb.runtime, time.process_time() - c0))
            print(f"  {name} before: {rb.status.value} {rb.runtime:.3f}s", file=sys.stderr,
                  flush=True)
        if variants and name in sample:
            for v, kw in VARIANTS.items():
                if v != "full":
                    rv = solve_cpsat(pb, time_limit=time_limit, **kw)
                    var_rows[v].append((k, name, rv.status, rv.runtime))
        for lo, hi in BINS:
            if lo <= k <= hi:
                mem[(lo, hi)] = _peak_mb()
    lines = _bin_table(rows, time_limit, mem, "peak MB (process, cumulative)")
    upto30 = [min(r[3], time_limit) for r in rows if 1 <= r[0] <= 30]
    proved = [r for r in rows if r[2] is Status.OPTIMAL]
    largest = max(proved, key=lambda r: (r[0], -r[3])) if proved else None
    lines += [
        "",
        f"Median over all problems with 1 <= k <= 30: "
        f"{statistics.median(upto30) if upto30 else float('nan'):.3f} s "
        f"({len(upto30)} problems). Targets: median under 1 s in every bin "
        "up to k = 30, every problem up to k = 50 proved within 10 s.",
        f"Largest queue proved optimal within {time_limit:g} s: k = "
        + (f"{largest[0]} ({largest[1]}, {largest[3]:.2f} s)." if largest else "-."),
        f"Unproved within the limit: {sum(1 for r in rows if r[2] is not Status.OPTIMAL)} "
        f"of {len(rows)}.",
    ]
    if before is not None:
        gained = sorted(r[1] for r, b in zip(rows, before_rows, strict=True)
                        if r[2] is Status.OPTIMAL and b[2] is not Status.OPTIMAL)
        lost = sorted(r[1] for r, b in zip(rows, before_rows, strict=True)
                      if b[2] is Status.OPTIMAL and r[2] is not Status.OPTIMAL)
        lines += ["", f"Before (options {json.dumps(before)}) and now, each problem solved "
                  "by both back to back (wall seconds, a stopped run counted as the limit; "
                  "CPU seconds of this process):", ""]
        lines += _before_table(rows, before_rows, time_limit)
        lines += ["", f"Unproved: {sum(1 for b in before_rows if b[2] is not Status.OPTIMAL)}"
                  f" -> {sum(1 for r in rows if r[2] is not Status.OPTIMAL)} of {len(rows)}. "
                  f"Proved now only: {', '.join(gained) or '-'}. "
                  f"Proved before only: {', '.join(lost) or '-'}."]
    if variants:
        lines += ["", f"Speed measures, each switched off in turn (same run, on "
                  f"{VARIANT_SAMPLE} evenly spaced problems per bin; proved within the limit "
                  "/ median s):", "",
                  *markdown_table(["variant", "11-20", "21-30", "31-50"], [])]
        full = [r for r in rows if r[1] in sample]
        for v, vr in [("full", full)] + list(var_rows.items()):
            cells = []
            for lo, hi in ((11, 20), (21, 30), (31, 50)):
                sub = [r for r in vr if lo <= r[0] <= hi]
                if sub:
                    ts = [min(r[3], time_limit) for r in sub]
                    cells.append(f"{sum(1 for r in sub if r[2] is Status.OPTIMAL)}/{len(sub)}"
                                 f" / {statistics.median(ts):.2f}")
                else:
                    cells.append("-")
            lines.append(markdown_row([v, *cells]))
    return lines


COMPARE_SNAPSHOTS = (
    "kth-1996-10-insert-2426141-k6", "kth-1997-03-remove-15735601-k9",
    "kth-1997-02-remove-11757364-k12", "kth-1997-05-insert-19972081-k14",
    "kth-1997-06-insert-23751631-k14", "kth-1997-01-remove-11151257-k16",
    "kth-1997-02-remove-13406321-k16", "kth-1996-11-insert-4942577-k17",
    "kth-1996-10-insert-1149747-k21", "kth-1997-05-remove-21187691-k24",
    "kth-1997-05-insert-21190365-k26", "kth-1997-04-insert-17719420-k27",
    "kth-1997-02-insert-13315532-k30")
COMPARE = {
    "before (presolve on, global dominant times)": {"presolve": True, "chains": False},
    "global dominant times, presolve off": {"chains": False},
    "default (chain sets, presolve off, no warm start)": {},
    "+ warm start from AST": {"heuristic_start": ("AST",)},
    "+ warm start from the five orders": {"heuristic_start": ("AST", "AAT", "DU", "DC", "DP")},
    "+ time-indexed rows (200k terms)": {"time_indexed": 200_000},
    "coarse (24-bit) stage 1, always the exact-price stage": {"fine": False},
}


def run_compare(dtime: float, only: list[str] | None = None) -> list[str]:
    """Each measure on COMPARE_SNAPSHOTS back to back, under a *deterministic* limit of
    ``dtime`` per stage (CP-SAT's work units, independent of the machine's load) and a
    120 s wall guard; CPU seconds of this process (``time.process_time``). ``only``: the
    variants whose name starts with one of these prefixes (all when None)."""
    from models.slack_insertion.cpsat import solve_cpsat

    variants = {v: kw for v, kw in COMPARE.items()
                if only is None or any(v.startswith(o) for o in only)}
    if not variants:
        raise ValueError(f"--compare-only: no variant starts with any of {only}")

    probs = {n: pb for _, n, pb in _snapshots(0, 70)}
    solve_cpsat(probs[COMPARE_SNAPSHOTS[0] + ".json"])  # import OR-Tools outside the timings
    cells: dict[str, list[str]] = {v: [] for v in variants}
    tot = {v: [0, 0.0] for v in variants}
    for name in COMPARE_SNAPSHOTS:
        pb = probs[name + ".json"]
        for v, kw in variants.items():
            c0 = time.process_time()
            r = solve_cpsat(pb, time_limit=120, sat_params={"max_deterministic_time": dtime},
                            **kw)
            c = time.process_time() - c0
            ok = r.status is Status.OPTIMAL
            tot[v][0] += ok
            tot[v][1] += c
            b = "-" if r.bound is None else f"{r.bound:.6g}"
            cells[v].append(f"{'proved' if ok else 'open'} {c:.2f} s ({r.objective:.6g} / {b})")
            print(f"  {name} {v}: {cells[v][-1]}", file=sys.stderr, flush=True)
    lines = markdown_table(["snapshot", *variants],
                           [[name, *(cells[v][i] for v in variants)]
                            for i, name in enumerate(COMPARE_SNAPSHOTS)])
    lines.append(markdown_row(["**proved / CPU s in all**",
                               *(f"**{p}/{len(COMPARE_SNAPSHOTS)} / {c:.1f}**"
                                 for p, c in tot.values())]))
    lines += ["", f"Deterministic limit {dtime:g} per stage; cells: status, CPU seconds, "
              "(price found / bound of the problem as defined)."]
    return lines


def run_ilp(time_limit: float, kmax: int) -> list[str]:
    from models.slack_insertion.ilp import solve_ilp

    rows, mem, refused = [], {}, 0
    for k, name, pb in _snapshots(0, kmax):
        try:
            r = solve_ilp(pb, time_limit=time_limit)
        except ValueError:
            refused += 1
            continue
        rows.append((k, name, r.status, r.runtime))
        print(f"  ilp {name}: {r.status.value} {r.runtime:.3f}s", file=sys.stderr, flush=True)
        for lo, hi in BINS:
            if lo <= k <= hi:
                mem[(lo, hi)] = _peak_mb(resource.RUSAGE_CHILDREN)
    lines = _bin_table(rows, time_limit, mem, "peak MB of CBC, upper bound (cumulative)")
    lines += ["", f"Refused up front (model too large): {refused}."]
    return lines


def _one(solver: str, source: str, limit: float) -> None:
    """Child process of ``--limits``: one solver on one problem, a JSON line out."""
    from sim import registry

    pb = big_problem() if source == "generated-500" else ins.load(SNAPSHOTS / source)
    t0 = time.perf_counter()
    try:
        r = registry.solver(ins.FAMILY, solver)(pb, time_limit=limit)
        out = {"status": r.status.value, "objective": r.objective, "bound": r.bound,
               "note": r.note[:120]}
    except ValueError as e:
        out = {"status": "refused", "note": str(e)[:120]}
    out["wall"] = time.perf_counter() - t0
    out["peak_mb"] = max(_peak_mb(), _peak_mb(resource.RUSAGE_CHILDREN))
    print(json.dumps(out))


def run_limits(limit: float) -> list[str]:
    from sim import registry

    lines = markdown_table(["problem", "solver", "status", "wall s (in solve)",
                            "wall s (process)", "peak MB", "objective", "bound",
                            "within limit + 2 s and 1 GB"], [])
    for source in (BIG_SNAPSHOT, "generated-500"):
        for solver in sorted(registry.SOLVERS[ins.FAMILY]):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", MODULE, "--one",
                                solver, source, str(limit)], cwd=ROOT, capture_output=True,
                               text=True, timeout=600)
            wall = time.perf_counter() - t0
            try:
                d = json.loads(p.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                d = {"status": f"crashed ({p.returncode})", "wall": float("nan"),
                     "peak_mb": float("nan")}
            ok = d["wall"] <= limit + 2 and d["peak_mb"] < 1024 or d["status"] == "refused"
            obj = d.get("objective")
            bnd = d.get("bound")
            lines.append(markdown_row([
                source.replace(".json", ""), solver, d["status"], f"{d['wall']:.2f}",
                f"{wall:.2f}", f"{d['peak_mb']:.0f}", "-" if obj is None else f"{obj:.6g}",
                "-" if bnd is None else f"{bnd:.6g}", "yes" if ok else "NO"]))
            print("  " + lines[-1], file=sys.stderr, flush=True)
    lines += ["", "Wall s (process) includes starting Python and importing the solver; "
              "'refused' is the one-line ValueError of a problem too large for the "
              "enumeration (brute, exhaustive) or the model (ilp)."]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.talby.insertion_bench",
                description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--kmin", type=int, default=0)
    ap.add_argument("--kmax", type=int, default=70)
    ap.add_argument("--before", default=None, metavar="JSON",
                    help="solve_cpsat options of the 'before' configuration, run on every "
                    "problem right after the default one")
    ap.add_argument("--variants", action="store_true")
    ap.add_argument("--ilp", action="store_true")
    ap.add_argument("--ilp-kmax", type=int, default=5)
    ap.add_argument("--limits", action="store_true")
    ap.add_argument("--out", default="slack_bench.md", help="file name of the results")
    ap.add_argument("--one", nargs=3, metavar=("SOLVER", "PROBLEM", "LIMIT"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--ilp-only", nargs=2, metavar=("LIMIT", "KMAX"), help=argparse.SUPPRESS)
    ap.add_argument("--compare", type=float, metavar="DTIME", default=None,
                    help="compare the CP-SAT measures on a fixed snapshot list under this "
                    "deterministic limit per stage (writes results/ at the top, partial)")
    ap.add_argument("--compare-only", default=None, metavar="PREFIXES",
                    help="with --compare: only the variants whose name starts with one of "
                    "these comma-separated prefixes")
    args = ap.parse_args(argv)
    if args.compare is not None:  # its own table: no other option acts
        ap.refuse_unread({"compare", "compare_only"}, "--compare")
    elif args.compare_only is not None:
        ap.error("--compare-only: only with --compare DTIME")
    if "ilp_kmax" in ap.given and not args.ilp:
        ap.error("--ilp-kmax: only with --ilp (the ILP table's largest k)")
    if args.compare is not None:
        load0, commit = os.getloadavg(), provenance.commit()
        only = None if args.compare_only is None else args.compare_only.split(",")
        try:
            body = run_compare(args.compare, only)
        except ValueError as e:
            print(f"slack_bench: {e}", file=sys.stderr)
            return 2
        cmd = " ".join(["python -m sim.experiments.talby.insertion_bench"] + (argv or sys.argv[1:]))
        text = "\n".join([
            "# CP-SAT insertion: speed measures compared under a deterministic limit", "",
            f"Command: `{cmd}` at commit {commit}; one worker, seed 0; CPU seconds on a "
            f"shared 2-core machine (load average {load0[0]:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end).", ""] + body + [""])
        PARTIAL.mkdir(exist_ok=True)
        write_atomic(PARTIAL / "slack_compare.md", text)
        print(text)
        return 0
    if args.ilp_only:
        print("\n".join(run_ilp(float(args.ilp_only[0]), int(args.ilp_only[1]))))
        return 0
    if args.one:
        _one(args.one[0], args.one[1], float(args.one[2]))
        return 0
    if Path(args.out).name != args.out or args.out in ("", ".", ".."):
        # checked before the run: the table is written only at its end
        print(f"slack_bench: --out: {args.out!r} must be a file name (it is written into "
              f"{RESULTS} or {PARTIAL}), not a path", file=sys.stderr)
        return 2
    before = None
    if args.before is not None:
        try:
            before = json.loads(args.before)
            if not isinstance(before, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            print(f"slack_bench: --before: {e}", file=sys.stderr)
            return 2
    full = args.kmin <= 0 and args.kmax >= 70 and args.time_limit == 10.0
    commit, load0, t0 = provenance.commit(), os.getloadavg(), time.perf_counter()
    body = run_cpsat(args.time_limit, args.kmax, args.variants, args.kmin, before)
    if args.ilp:
        # in a fresh process: a child inherits its parent's peak memory figure, so CBC's
        # peak is only readable from a process that never held CP-SAT's models
        p = subprocess.run([sys.executable, "-m", MODULE, "--ilp-only",
                            str(args.time_limit), str(args.ilp_kmax)], cwd=ROOT,
                           capture_output=True, text=True, check=True)
        body += ["", f"### ILP (PuLP/CBC), k <= {args.ilp_kmax}", ""]
        body += p.stdout.rstrip("\n").splitlines()
    if args.limits:
        body += ["", "### Every solver with a 1 s limit on large problems", ""]
        body += run_limits(1.0)
    load1 = os.getloadavg()
    cmd = " ".join(["python -m sim.experiments.talby.insertion_bench"] + (argv or sys.argv[1:]))
    head = [
        "# Exact slack insertion solvers: time to prove optimality, memory, limits",
        "",
        ("" if full else "**Partial run** (not the full configuration: --kmax 70, "
         "--kmin 0, --time-limit 10); not a committed result.\n"),
        f"Command: `{cmd}` at commit {commit}; bundled KTH snapshots; CP-SAT 9.15, one "
        f"worker, seed 0; wall seconds on a shared 2-core machine (load average "
        f"{load0[0]:.1f} at start, {load1[0]:.1f} at end; {time.perf_counter() - t0:.0f} s "
        f"in all). A run stopped by the limit counts as {args.time_limit:g} s.",
        "",
    ]
    text = "\n".join(head + body + [""])
    dest = RESULTS if full else PARTIAL
    dest.mkdir(exist_ok=True)
    write_atomic(dest / args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
