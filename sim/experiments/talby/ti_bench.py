"""Default CP-SAT against the ``cpsat+ti`` portfolio on the bundled KTH snapshots.

``python -m sim.experiments.talby.ti_bench [--time-limit 30] [--sample 5]
[--bins 21-30,31-50] [--solvers cpsat,cpsat+ti] [--files NAME,...]``

For each queue-length bin, ``--sample`` snapshots evenly spaced over the bin's sorted
list (``instances/data/slack_snapshots``, as ``insertion_bench`` loads them; 0: all) are
solved by each solver (registry names of the family ``slack_insertion``, seed 0) with
the limit in seconds. Prints one line per run (price, bound, status, wall seconds, note)
and per bin and solver: runs, proved OPTIMAL (price and fewest moved jobs), price proved
(bound within :func:`sim.problems.insertion.price_tolerance` of the price), and the
median wall time (a run that did not prove counts as the limit). The load average is
printed before and after (the machine is shared: only a comparison within one run means
anything). ``--files`` adds named snapshots (one line per run, not in the table).
Writes no file.
"""

from __future__ import annotations

import statistics
import time

from sim import registry
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import ROOT
from sim.problems import insertion as ins
from sim.result import Status

SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"


def sample(lo: int, hi: int, n: int) -> list[tuple[str, ins.InsertionProblem]]:
    """``n`` snapshots with ``lo <= k <= hi``, evenly spaced over the sorted list (all for
    ``n <= 0``)."""
    found = []
    for f in sorted(SNAPSHOTS.glob("*.json")):
        pb = ins.load(f)
        if lo <= pb.k <= hi:
            found.append((pb.k, f.name, pb))
    found.sort(key=lambda x: (x[0], x[1]))
    if 0 < n < len(found):
        found = [found[round(i * (len(found) - 1) / (n - 1))] for i in range(n)] if n > 1 \
            else found[:1]
    return [(name, pb) for _, name, pb in found]


def run(name: str, pb: ins.InsertionProblem, limit: float) -> tuple[bool, bool, float, str]:
    """(proved, price proved, wall seconds, line) of solver ``name`` on ``pb``."""
    t0 = time.perf_counter()
    r = registry.solver("slack_insertion", name)(pb, time_limit=limit)
    wall = time.perf_counter() - t0
    price_ok = r.bound is not None and r.objective - r.bound <= ins.price_tolerance(r.objective)
    line = (f"{name:10s} price {r.objective:.10g} bound {r.bound!r} {r.status.value} "
            f"{wall:.1f} s  {r.note[:120]}")
    return r.status is Status.OPTIMAL, price_ok, wall, line


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--sample", type=int, default=5)
    ap.add_argument("--bins", default="21-30,31-50")
    ap.add_argument("--solvers", default="cpsat,cpsat+ti")
    ap.add_argument("--files", default="",
                    help="comma-separated snapshot names solved after the bins")
    a = ap.parse_args(argv)
    solvers = a.solvers.split(",")
    print(f"# {provenance.command(argv)}; commit {provenance.commit()}")
    print(f"# load average before: {provenance.load_average()}")
    table = []
    for part in filter(None, a.bins.split(",")):
        lo, hi = (int(x) for x in part.split("-"))
        stats: dict[str, list[tuple[bool, bool, float]]] = {s: [] for s in solvers}
        for fname, pb in sample(lo, hi, a.sample):
            print(f"{fname} (k={pb.k})", flush=True)
            for s in solvers:
                proved, price_ok, wall, line = run(s, pb, a.time_limit)
                stats[s].append((proved, price_ok, wall))
                print("  " + line, flush=True)
        for s in solvers:
            rows = stats[s]
            med = statistics.median(w if p else a.time_limit for p, _, w in rows) if rows \
                else float("nan")
            table.append(f"| {lo}-{hi} | {s} | {len(rows)} | {sum(p for p, _, _ in rows)} | "
                         f"{sum(q for _, q, _ in rows)} | {med:.1f} |")
    extra = [(f, ins.load(SNAPSHOTS / f)) for f in a.files.split(",") if f]
    for fname, pb in extra:
        print(f"{fname} (k={pb.k}, named)", flush=True)
        for s in solvers:
            print("  " + run(s, pb, a.time_limit)[3], flush=True)
    print(f"# load average after: {provenance.load_average()}")
    print(f"| k | solver | runs | proved | price proved | median s (limit {a.time_limit:g}) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
