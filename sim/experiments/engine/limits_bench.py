"""Every registered solver on a large instance with a 1 s limit, and at longer limits.

Each (solver, instance) runs ``schedsearch solve FILE --solver NAME --time-limit L --json``
in a fresh subprocess, the way a user runs it; the table gives its wall time (process
start to exit, so Python start-up, imports and reading the problem are included), the
solver's own ``runtime`` from its result, its peak resident memory (``ru_maxrss`` of that
child alone, from ``os.wait4``), its exit code and status. Targets:
wall time within the limit + 2 s, peak memory under 1 GB and the solver's own runtime within
the limit + 0.5 s. A watchdog kills a child
``--kill-after`` seconds past its limit or above ``--kill-mb`` MB (it would otherwise take
the machine down); such a row says ``killed``.

``--limits 1,10,30`` (the default): every solver at the first limit, and each solver
that uses its limit (its run at the first limit took at least half of it: the exact
models and the time-bounded searches, not the heuristics that finish at once or the
refusals) again at each longer limit on the same, largest instances. CBC's and
Python's model building overrun only shows at limits long enough for CBC to reach its
root processing (without the CBC guard of :mod:`models.cbc`, the k = 65 snapshot took
52-125 s under ``ilp`` with a 20 s limit).

Instances (seconds, processors):

- grouping: ``random_problem(500, 64, max_procs=8, seed=1)``, 500 jobs; the exact models
  refuse it up front (too many groups).
- slack_insertion: the bundled 65-job KTH snapshot ``kth-1997-02-remove-13322470-k65``
  and ``random_problem(1, 500, capacity=128, max_t=3600, max_slack=7200)``, 500 waiting
  jobs.
- the later families (K-resource epochs/selection/response, task mapping, slot
  assignment and placement, gang schedule): seeded random instances of 500 jobs (or
  applications) where the family has jobs (see ``_other_families``).

Run: ``python -m sim.experiments.engine.limits_bench`` (every family, 1, 10 and 30 s limits,
about 10-15 minutes; writes ``sim/experiments/engine/results/limits_bench.md``). ``--family
NAME``, ``--solvers a,b`` or other ``--limits`` run a part and write
``results/limits_bench.md`` at the repository top instead, marked partial.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim import registry
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, ROOT, markdown_row, markdown_table

RESULTS = Path(__file__).parent / "results"
SNAPSHOT = ROOT / "instances" / "data" / "slack_snapshots" / \
    "kth-1997-02-remove-13322470-k65.json"
LIMITS = (1.0, 10.0, 30.0)  # seconds, the full configuration
RUNTIME_SLACK = 0.5  # seconds beyond the limit, the solver's own runtime
TARGET_SLACK = 2.0  # seconds beyond the limit
TARGET_MB = 1024.0


def instances(tmp: Path) -> dict[str, list[tuple[str, Path]]]:
    """Problem files per family: ``{family: [(label, path), ...]}``."""
    from sim.problems import grouping, insertion

    g = tmp / "grouping-J500.json"
    g.write_text(json.dumps(grouping.random_problem(500, 64, max_procs=8, seed=1).to_dict()))
    ins = tmp / "insertion-k500.json"
    ins.write_text(json.dumps(insertion.random_problem(1, 500, capacity=128, max_t=3600,
                                                       max_slack=7200).to_dict()))
    out = {"grouping": [("random J=500 P=64", g)],
           "slack_insertion": [("KTH snapshot k=65", SNAPSHOT), ("random k=500", ins)]}
    out.update(_other_families(tmp))
    return out


def _other_families(tmp: Path) -> dict[str, list[tuple[str, Path]]]:
    """Large instances of the families other than grouping and slack insertion (500 jobs
    where it applies);
    a family whose module is missing is left out."""
    import random

    rng = random.Random(1)
    out: dict[str, list[tuple[str, Path]]] = {}

    def save(family: str, label: str, data: dict) -> None:
        path = tmp / f"{family}.json"
        path.write_text(json.dumps(data))
        out[family] = [(label, path)]

    from sim.problems import gang_schedule, kresource, placement, slots, task_mapping

    cap = (64, 64, 64)
    dem = tuple(tuple(rng.randint(1, 32) for _ in cap) for _ in range(500))
    save("kresource_epochs", "random 500 jobs K=3",
         kresource.EpochProblem(capacity=cap, demands=dem).to_dict())
    save("kresource_selection", "random 500 candidates K=3",
         kresource.SelectionProblem(capacity=cap, free=(40, 40, 40), extra=(20, 20, 20),
                                    demands=dem, late=tuple(rng.random() < 0.5
                                                            for _ in dem)).to_dict())
    save("kresource_response", "random 500 jobs K=3",
         kresource.ResponseProblem(capacity=cap,
                                   release=tuple(sorted(rng.randint(0, 5000) for _ in dem)),
                                   duration=tuple(rng.randint(1, 100) for _ in dem),
                                   demands=dem).to_dict())
    save("task_mapping", "random 500 jobs, 1024 nodes",
         task_mapping.random_problem(1024, 500, 1).to_dict())
    save("slot_assignment", "random 500 apps, 256 nodes",
         slots.random_problem(1, n_nodes=256, n_apps=500, n_slots=200).to_dict())
    save("gang_schedule", "random 500 jobs, 256 nodes",
         gang_schedule.random_problem(1, n_nodes=256, n_jobs=500).to_dict())
    save("slot_placement", "n_slots=40, k=12",
         placement.PlacementProblem(g_us=100, n_slots=40, k=12).to_dict())
    return out


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_one(path: Path, solver: str, limit: float, kill_after: float,
            kill_mb: float) -> dict:
    """One solver run with ``limit`` seconds in a child process, killed ``kill_after``
    seconds past the limit; wall time, peak memory, exit code, result."""
    kill_after = limit + kill_after
    cmd = [sys.executable, "-m", "sim.cli", "solve", str(path), "--solver", solver,
           "--time-limit", f"{limit:g}", "--json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        killed = ""
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            wall = time.perf_counter() - t0
            if wall > kill_after:
                killed = f"killed after {kill_after:.0f} s"
            elif _rss_mb(child.pid) > kill_mb:
                killed = f"killed above {kill_mb:.0f} MB"
            if killed:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    row = {"solver": solver, "limit": limit, "wall": wall, "peak_mb": usage.ru_maxrss / 1024,
           "exit": child.returncode, "killed": killed, "status": "", "runtime": None,
           "objective": None, "bound": None, "message": ""}
    if child.returncode == 0 and not killed:
        try:
            res = json.loads(stdout)
            row.update(status=res["status"], runtime=res["runtime"],
                       objective=res["objective"], bound=res["bound"])
        except (ValueError, KeyError):
            row["message"] = "unreadable output"
    else:
        row["message"] = " ".join(stderr.strip().splitlines()[-1:])[:120]
    return row


def verdict(row: dict) -> str:
    if row["killed"]:
        return "FAIL (" + row["killed"] + ")"
    ok_time = row["wall"] <= row["limit"] + TARGET_SLACK
    ok_mem = row["peak_mb"] <= TARGET_MB
    ok_run = row["runtime"] is None or row["runtime"] <= row["limit"] + RUNTIME_SLACK
    clean = row["exit"] in (0, 2) and "Traceback" not in row["message"]
    bits = [] if ok_time else ["time"]
    bits += [] if ok_mem else ["memory"]
    bits += [] if ok_run else ["runtime"]
    bits += [] if clean else [f"exit {row['exit']}"]
    return "ok" if not bits else "FAIL (" + ", ".join(bits) + ")"


def uses_limit(row: dict) -> bool:
    """Whether a run used its limit (its solver's own runtime at least half of it, or
    killed, or failed on time): such a solver is run again at the longer limits."""
    if row["killed"] or row["wall"] > row["limit"] + TARGET_SLACK:
        return True
    return row["runtime"] is not None and row["runtime"] >= 0.5 * row["limit"]


def _outside(row: dict) -> float | None:
    """Seconds of the run outside the solver's own ``runtime`` (None without one)."""
    return None if row["runtime"] is None else row["wall"] - row["runtime"]


def _fmt(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", help="only this problem family")
    ap.add_argument("--solvers", help="comma-separated solver names (a partial run)")
    ap.add_argument("--limits", default=",".join(f"{x:g}" for x in LIMITS),
                    help="comma-separated time limits, seconds (the first for every solver, "
                         "the others for the solvers that use their limit)")
    ap.add_argument("--kill-after", type=float, default=30.0,
                    help="seconds past the limit (watchdog)")
    ap.add_argument("--kill-mb", type=float, default=2048.0, help="MB (watchdog)")
    args = ap.parse_args(argv)
    try:
        limits = [float(x) for x in args.limits.split(",")]
        if not limits or not all(0 < x < float("inf") for x in limits):
            raise ValueError
    except ValueError:
        ap.error(f"--limits: comma-separated positive seconds, got {args.limits!r}")
    only = None if args.solvers is None else set(args.solvers.split(","))
    partial = args.family is not None or only is not None or tuple(limits) != LIMITS
    lines = [
        "# Solvers under their time limit", "",
        f"`python -m sim.experiments.engine.limits_bench{' ' + ' '.join(argv or sys.argv[1:])}`"
        f" at commit {provenance.commit()}" + (" (PARTIAL run)" if partial else ""), "",
        f"Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cores shared with other work (timings are noisy). "
        "Targets: wall <= limit + 2 s, peak < 1 GB, the solver's own runtime <= limit "
        "+ 0.5 s. Wall time is the whole "
        "`schedsearch solve` process (start-up, imports and reading the problem included); "
        "`runtime` is the solver's own. Every solver runs at the first limit; a solver "
        "whose run there took at least half of it runs again at each longer limit.", "",
        *markdown_table(["family", "instance", "solver", "limit [s]", "exit", "status",
                         "runtime [s]", "wall [s]", "wall - runtime [s]", "peak [MB]", "verdict",
                         "message"], []),
    ]
    print("\n".join(lines), flush=True)
    fails = 0
    with tempfile.TemporaryDirectory() as tmp:
        files = instances(Path(tmp))
        for family, cases in files.items():
            if args.family is not None and family != args.family:
                continue
            for label, path in cases:
                for solver in registry.SOLVERS.get(family, {}):
                    if only is not None and solver not in only:
                        continue
                    for k, limit in enumerate(limits):
                        r = run_one(path, solver, limit, args.kill_after, args.kill_mb)
                        v = verdict(r)
                        fails += v != "ok"
                        line = markdown_row([
                            family, label, solver, f"{limit:g}", r["exit"], r["status"] or "-",
                            _fmt(r["runtime"], ".2f"), f"{r['wall']:.2f}",
                            _fmt(_outside(r), ".2f"), f"{r['peak_mb']:.0f}", v,
                            r["message"].replace("|", "/")])
                        lines.append(line)
                        print(line, flush=True)
                        if k == 0 and not uses_limit(r):
                            break
    lines += ["", (f"{fails} run(s) missed a target." if fails else
                   "Every run met every target.")
              + f" Load average at the end (1/5/15 min): {provenance.load_average()}; "
              "`wall - runtime` is the process's time outside the solver (Python start-up, "
              "imports, reading the problem, writing the result), which grows with the "
              "machine's load."]
    out_dir = PARTIAL_DIR if partial else RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "limits_bench.md").write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {out_dir / 'limits_bench.md'}"
          + (" (partial run, not the committed results)" if partial else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
