"""The ILPs of every family on each MIP backend (CBC, HiGHS, SCIP; ``models.mip``).

Each (instance, backend) runs the family's ILP with ``backend=`` in a fresh Python
process (``--child``), so its peak resident memory (``ru_maxrss`` of that child alone,
from ``os.wait4``) is its own; a watchdog kills a child 30 s past its limit. The table
gives, per family x backend x size bin: runs, proved (OPTIMAL), the median of the
solver's own ``runtime`` (a stopped run counts with its runtime), the median relative
gap of the runs with a gap (a proved run has gap 0; a run without a bound has none and is
counted in "no bound"), the largest wall time past the limit and the peak memory.

Modes (seconds):

- ``--quick``: seeded random instances of every family with an ILP, two size bins each,
  one instance per bin, 2 s limit (about 2 minutes).
- ``--snapshots``: the bundled KTH slack-insertion snapshots at 21-30 and 31-50 waiting
  jobs (``instances/data/slack_snapshots``), ``--per-bin`` of each bin evenly spread
  over the sorted names, ``--limit`` (default 10 s).

Results go to ``results/mip_bench.md`` at the repository top (partial runs; the committed
engine results are not touched).

Run: ``python -m sim.experiments.engine.mip_bench --quick`` or ``python -m
sim.experiments.engine.mip_bench --snapshots --per-bin 8``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim.experiments import common as provenance

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"
OUT = ROOT / "results" / "mip_bench.md"
BACKENDS = ("cbc", "highs", "scip")
ILP = {
    "slack_insertion": "models.slack_insertion.ilp:solve_ilp",
    "grouping": "models.grouping:solve_ilp",
    "kresource_epochs": "models.kresource.ilp:solve_epochs",
    "kresource_selection": "models.kresource.ilp:solve_selection",
    "kresource_response": "models.kresource.ilp:solve_response",
    "task_mapping": "models.task_mapping:solve_ilp",
    "gang_schedule": "models.gang_schedule:solve_ilp",
    "slot_assignment": "models.slots:solve_ilp",
}
"""The ILP of each family (the function that takes ``backend=``)."""
KILL_AFTER = 30.0  # seconds past the limit


def quick_instances(tmp: Path) -> list[tuple[str, str, Path]]:
    """``(family, bin, path)`` of seeded random instances, two size bins per family."""
    import random

    from sim.problems import gang_schedule, grouping, insertion, slots, task_mapping
    from sim.problems.kresource import EpochProblem, ResponseProblem, SelectionProblem

    out = []

    def save(family: str, label: str, data: dict) -> None:
        path = tmp / f"{family}-{label}.json"
        path.write_text(json.dumps(data))
        out.append((family, label, path))

    for k in (8, 16):
        save("slack_insertion", f"k={k}",
             insertion.random_problem(1, k, capacity=16, max_t=20, max_slack=40).to_dict())
    for J in (10, 14):
        save("grouping", f"J={J}", grouping.random_problem(J, 8, seed=1, max_procs=4).to_dict())
    rng = random.Random(1)
    for n in (20, 40):
        cap = (16, 32, 24, 20)
        dem = tuple(tuple(rng.randint(1, c // 3) for c in cap) for _ in range(n))
        save("kresource_epochs", f"n={n}", EpochProblem(cap, dem).to_dict())
    for n in (20, 60):
        cap = (32, 64, 48, 40)
        free = tuple(c // 2 for c in cap)
        dem = tuple(tuple(rng.randint(1, c // 6) for c in cap) for _ in range(n))
        save("kresource_selection", f"n={n}",
             SelectionProblem(cap, free, tuple(f // 2 for f in free), dem,
                              tuple(rng.random() < 0.5 for _ in range(n))).to_dict())
    for n in (8, 16):
        cap = (8, 8, 8, 8)
        save("kresource_response", f"n={n}",
             ResponseProblem(cap, tuple(rng.randint(0, 10) for _ in range(n)),
                             tuple(rng.randint(1, 5) for _ in range(n)),
                             tuple(tuple(rng.randint(1, 6) for _ in cap) for _ in range(n)),
                             tuple(rng.randint(1, 3) for _ in range(n))).to_dict())
    for nodes, jobs in ((8, 6), (16, 14)):
        save("task_mapping", f"{nodes}x{jobs}",
             task_mapping.random_problem(nodes, jobs, 1).to_dict())
    for nodes, jobs in ((16, 12), (32, 30)):
        save("gang_schedule", f"{nodes}x{jobs}",
             gang_schedule.random_problem(1, n_nodes=nodes, n_jobs=jobs).to_dict())
    for nodes, apps, s in ((16, 8, 16), (64, 20, 50)):
        save("slot_assignment", f"{nodes}x{apps}x{s}",
             slots.random_problem(1, n_nodes=nodes, n_apps=apps, n_slots=s).to_dict())
    return out


def snapshot_instances(per_bin: int) -> list[tuple[str, str, Path]]:
    """``per_bin`` KTH snapshots of each of the bins 21-30 and 31-50, evenly spread over
    the sorted file names."""
    out = []
    paths = sorted(SNAPSHOTS.glob("*.json"))
    for lo, hi in ((21, 30), (31, 50)):
        inbin = [p for p in paths if lo <= int(p.stem.rsplit("-k", 1)[1]) <= hi]
        m = min(per_bin, len(inbin))
        pick = [inbin[round(i * (len(inbin) - 1) / max(m - 1, 1))] for i in range(m)]
        out.extend(("slack_insertion", f"k {lo}-{hi}", p) for p in dict.fromkeys(pick))
    return out


def child(family: str, backend: str, path: str, limit: float) -> None:
    """Solve one instance (``--child``); print the result as one JSON line."""
    import importlib

    from sim.problems import module

    mod_name, fn_name = ILP[family].split(":")
    fn = getattr(importlib.import_module(mod_name), fn_name)
    problem = module(family).from_dict(json.loads(Path(path).read_text()), source=path)
    try:
        r = fn(problem, time_limit=limit, backend=backend)
    except ValueError as e:
        print(json.dumps({"status": "REFUSED", "message": str(e)[:200]}))
        return
    print(json.dumps({"status": r.status.value, "objective": r.objective, "bound": r.bound,
                      "gap": r.gap, "runtime": r.runtime, "note": r.note[:200]}))


def run_one(family: str, backend: str, path: Path, limit: float) -> dict:
    """One run in a fresh process: its result, wall time and peak memory (MB)."""
    cmd = [sys.executable, "-m", "sim.experiments.engine.mip_bench", "--child", family,
           backend, str(path), f"{limit:g}"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        killed = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > limit + KILL_AFTER:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                killed = True
                break
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace").strip().splitlines()
        tail = err.read().decode(errors="replace").strip().splitlines()[-1:]
    row = {"family": family, "backend": backend, "instance": path.stem, "limit": limit,
           "wall": wall, "peak_mb": usage.ru_maxrss / 1024, "killed": killed}
    try:
        row.update(json.loads(text[-1]))
    except (ValueError, IndexError):
        row.update(status="ERROR", message=" ".join(tail)[:200])
    return row


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def table(rows: list[dict], bins: dict[str, str]) -> list[str]:
    """The Markdown table: family x bin x backend."""
    lines = ["| family | size bin | backend | runs | proved | median s | median gap | "
             "no bound | max s past limit | peak MB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    keys = list(dict.fromkeys((r["family"], bins[r["instance"]], r["backend"]) for r in rows))
    for fam, b, be in keys:
        rs = [r for r in rows if (r["family"], bins[r["instance"]], r["backend"]) == (fam, b, be)]
        proved = sum(r.get("status") == "OPTIMAL" for r in rs)
        times = [r["runtime"] for r in rs if r.get("runtime") is not None]
        gaps = [r["gap"] for r in rs if r.get("gap") is not None]
        nobound = sum(r.get("status") in ("FEASIBLE", "UNKNOWN") and r.get("bound") is None
                      for r in rs)
        other = [r["status"] for r in rs if r.get("status") in ("REFUSED", "ERROR")]
        past = max(r["wall"] - r["limit"] for r in rs)
        lines.append(f"| {fam} | {b} | {be} | {len(rs)} | {proved}"
                     + (f" ({len(other)} {other[0].lower()})" if other else "")
                     + f" | {_fmt(_median(times), '.2f')} | {_fmt(_median(gaps), '.2%')} | "
                     f"{nobound} | {past:.1f} | {max(r['peak_mb'] for r in rs):.0f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sim.experiments.engine.mip_bench",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="random instances of every family")
    ap.add_argument("--snapshots", action="store_true", help="KTH snapshots at k 21-50")
    ap.add_argument("--per-bin", type=int, default=8, help="snapshots per bin")
    ap.add_argument("--limit", type=float, default=None,
                    help="seconds per run (quick: 2, snapshots: 10)")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--child", nargs=4, metavar=("FAMILY", "BACKEND", "FILE", "LIMIT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        fam, be, path, limit = args.child
        child(fam, be, path, float(limit))
        return 0
    if not (args.quick or args.snapshots):
        ap.error("give --quick or --snapshots")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    for b in backends:
        if b not in BACKENDS:
            ap.error(f"unknown backend {b!r}; valid: {', '.join(BACKENDS)}")
    start_load = provenance.load_average()
    t_all = time.perf_counter()
    lines = ["# MIP backends on the ILPs (partial run)", "",
             f"Recorded by {provenance.stamp(argv if argv is None else ['mip_bench', *argv])}"
             f"; load average {start_load} at start.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        sections = []
        if args.quick:
            sections.append(("Random instances of every family", quick_instances(Path(tmp)),
                             args.limit or 2.0))
        if args.snapshots:
            sections.append(("KTH slack-insertion snapshots", snapshot_instances(args.per_bin),
                             args.limit or 10.0))
        for title, insts, limit in sections:
            rows, bins = [], {}
            for fam, b, path in insts:
                bins[path.stem] = b
                for be in backends:
                    row = run_one(fam, be, path, limit)
                    rows.append(row)
                    print(f"{fam:20s} {b:12s} {path.stem[:40]:40s} {be:5s} "
                          f"{row.get('status', ''):9s} obj {_fmt(row.get('objective'), '.6g')} "
                          f"bound {_fmt(row.get('bound'), '.6g')} "
                          f"t {_fmt(row.get('runtime'), '.2f')} wall {row['wall']:.1f} "
                          f"{row['peak_mb']:.0f} MB", flush=True)
            lines += [f"## {title}: {limit:g} s limit", "", *table(rows, bins), "",
                      "Per run (instance, backend, status, objective, bound, runtime s):", ""]
            lines += [f"- {r['instance']} {r['backend']}: {r.get('status')} "
                      f"{_fmt(r.get('objective'), '.6g')} / {_fmt(r.get('bound'), '.6g')}, "
                      f"{_fmt(r.get('runtime'), '.2f')}"
                      + (f" ({r['message']})" if r.get("message") else "") for r in rows]
            lines.append("")
    lines.append(f"{time.perf_counter() - t_all:.0f} s in all; load average "
                 f"{provenance.load_average()} at the end; {os.cpu_count()} cores.")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
