"""CP-SAT speed on slack insertion problems: time to prove optimality by queue length.

``python -m sim.experiments.slack_bench [--time-limit 10] [--kmax 70] [--ablation]``

Solves every problem of the bundled KTH snapshot set (``instances/data/slack_snapshots``,
insert and remove problems met while simulating KTH-SP2 months with AST; see its
``index.md``) with ``models.slack_insertion.solve_cpsat`` (one worker, seed 0) and prints,
per queue-length bin: problems, share proved optimal within the limit, median and 90th
percentile wall time (a stopped run counts as the limit), and the largest queue proved
within the limit. ``--ablation`` also runs the plain interval model (no dominant start
times, no domain tightening) on k <= 20 to show what the dominance buys. Writes
``results/slack_bench.md`` (or ``--out NAME``).

Protocol: wall-clock seconds on this 2-core machine, shared with other jobs (the load
average is printed with the table); CP-SAT with ``num_workers=1``; commit and command in
the table header. Times are seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from models.slack_insertion import solve_cpsat
from sim.problems import insertion as ins
from sim.result import Status

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"
RESULTS = Path(__file__).resolve().parent / "results"
BINS = [(0, 0), (1, 2), (3, 5), (6, 10), (11, 20), (21, 30), (31, 45), (46, 70)]


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run(time_limit: float, kmax: int, ablation: bool, out: str = "slack_bench.md") -> str:
    problems = []
    for f in sorted(SNAPSHOTS.glob("*.json")):
        pb = ins.load(f)
        if pb.k <= kmax:
            problems.append((pb.k, f.name, pb))
    problems.sort(key=lambda x: (x[0], x[1]))
    commit = _commit()
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    rows = []
    for k, name, pb in problems:
        r = solve_cpsat(pb, time_limit=time_limit)
        rows.append((k, name, r.status, min(r.runtime, time_limit), r.params))
        print(f"  {name}: {r.status.value} {r.runtime:.3f}s", file=sys.stderr, flush=True)
    abl = []
    if ablation:
        for k, _name, pb in problems:
            if 1 <= k <= 20:
                r = solve_cpsat(pb, time_limit=time_limit, dominant=False, tighten=False)
                abl.append((k, r.status, min(r.runtime, time_limit)))
    elapsed = time.perf_counter() - t0
    load1 = os.getloadavg()

    lines = [
        "# CP-SAT on slack insertion problems: time to prove optimality",
        "",
        f"Command: `python -m sim.experiments.slack_bench --time-limit {time_limit:g} --kmax "
        f"{kmax}{' --ablation' if ablation else ''} --out {out}` at commit {commit}; {len(rows)} "
        f"bundled KTH snapshots; CP-SAT 9.15, one worker, seed 0, dominant start times, "
        f"domain tightening and swap orders on; wall seconds on a shared 2-core machine "
        f"(load average {load0[0]:.1f} at start, {load1[0]:.1f} at end; {elapsed:.0f} s in "
        f"all). A run stopped by the limit counts as {time_limit:g} s.",
        "",
        "| queue k | problems | proved | median s | p90 s | max s |",
        "|---|---|---|---|---|---|",
    ]
    for lo, hi in BINS:
        sub = [r for r in rows if lo <= r[0] <= hi]
        if not sub:
            continue
        ts = [r[3] for r in sub]
        proved = sum(1 for r in sub if r[2] is Status.OPTIMAL)
        lines.append(f"| {lo}-{hi} | {len(sub)} | {proved} | {statistics.median(ts):.3f} | "
                     f"{_pct(ts, 0.9):.3f} | {max(ts):.3f} |")
    upto30 = [r[3] for r in rows if 1 <= r[0] <= 30]
    proved_k = [r[0] for r in rows if r[2] is Status.OPTIMAL]
    big = [r for r in rows if r[2] is Status.OPTIMAL]
    largest = max(big, key=lambda r: (r[0], -r[3])) if big else None
    lines += [
        "",
        f"Median over all problems with 1 <= k <= 30: {statistics.median(upto30):.3f} s "
        f"({len(upto30)} problems; target <= 1 s).",
        f"Largest queue proved optimal within {time_limit:g} s: k = "
        f"{max(proved_k) if proved_k else '-'}"
        + (f" ({largest[1]}, {largest[3]:.2f} s)." if largest else "."),
        f"Unproved within the limit: {sum(1 for r in rows if r[2] is not Status.OPTIMAL)} "
        f"of {len(rows)}.",
    ]
    if abl:
        ts = [a[2] for a in abl]
        lines += ["", f"Ablation (plain intervals, no dominance, no tightening), 1 <= k <= 20: "
                  f"{sum(1 for a in abl if a[1] is Status.OPTIMAL)} of {len(abl)} proved, "
                  f"median {statistics.median(ts):.3f} s."]
    lines.append("")
    text = "\n".join(lines)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / out).write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.experiments.slack_bench",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--kmax", type=int, default=70)
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--out", default="slack_bench.md", help="file name in results/")
    args = ap.parse_args(argv)
    print(run(args.time_limit, args.kmax, args.ablation, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
