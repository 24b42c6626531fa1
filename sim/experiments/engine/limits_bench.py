"""Every registered solver on a large instance with a 1 s limit, and at longer limits.

Each (solver, instance) runs ``schedsearch solve FILE --solver NAME --time-limit L --json``
in a fresh subprocess, the way a user runs it; the table gives its wall time (process
start to exit, so Python start-up, imports and reading the problem are included), the
solver's own ``runtime`` from its result, its peak resident memory (``ru_maxrss`` of that
child, from ``os.wait4``, which also covers the children it waited for, and counts what
the benchmark's own process held when it started the child; with the larger ``VmHWM`` read
from ``/proc`` every 50 ms, and the larger resident memory of its whole process tree
summed at each look: the HiGHS, SCIP and CP-SAT workers are the children of a fork server
the child never waits for), its CPU time (the child's and its waited children's, plus
the last seen of every process below its children: those workers), its exit code and
status. Targets:
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

Size sweep (``--sweep``): every solver of every family on instances of growing size up
to the family's documented maxima (``MAX_*`` in ``sim/problems/*.py``, 10^5 jobs where a
family documents none; :func:`sweep_sizes`), at 2 s; the same targets, a refusal (exit 2,
one line naming the field) meeting them. Each solver that used its limit on a family's
largest size runs there again at ``--long`` seconds (10 by default; 0: no second run): a
solver that reads the clock only between long stretches of preparatory work (a model's
build, a fixed point, a candidate over 10^4 jobs) overruns in proportion to how far it
gets, which a 2 s limit cannot show. ``python -m sim.experiments.engine.limits_bench
--sweep`` writes ``results/limits_sweep.md`` (a partial sweep: ``--family``,
``--solvers``, another ``--limits`` or ``--long``, the repository top's ``results/``).

Run: ``python -m sim.experiments.engine.limits_bench`` (every family, 1, 10 and 30 s limits,
about 10-15 minutes; writes ``sim/experiments/engine/results/limits_bench.md``). ``--family
NAME``, ``--solvers a,b``, other ``--limits`` or another watchdog (``--kill-after``,
``--kill-mb``) run a part and write ``results/limits_bench.md`` at the repository top
instead, marked partial.
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
from collections.abc import Callable
from pathlib import Path

from instances.atomic import write_atomic
from models.cbc import cpu_seconds
from sim import registry
from sim.argparser import Parser
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


SWEEP_LIMIT = 2.0  # seconds, the size sweep's full configuration
SWEEP_LONG = 10.0  # seconds, its second limit on each family's largest size


def sweep_sizes() -> dict[str, list[tuple[str, Callable[[], dict]]]]:
    """The size sweep: per family, instances of growing size up to the family's
    documented maxima (``MAX_*`` of ``sim/problems/*.py``; 10^5 jobs, as the K-resource
    families' ``MAX_JOBS``, where a family documents none), as ``(label, make)`` with
    ``make()`` the problem's JSON dictionary (built only when its row runs)."""
    import random

    from sim.problems import gang_schedule, grouping, insertion, kresource, placement, slots
    from sim.problems import task_mapping as tm

    def kres(n: int, kind: str) -> dict:
        rng = random.Random(n)
        cap = (64, 64, 64)
        dem = tuple(tuple(rng.randint(1, 32) for _ in cap) for _ in range(n))
        if kind == "epochs":
            return kresource.EpochProblem(capacity=cap, demands=dem).to_dict()
        if kind == "selection":
            return kresource.SelectionProblem(
                capacity=cap, free=(40, 40, 40), extra=(20, 20, 20), demands=dem,
                late=tuple(rng.random() < 0.5 for _ in dem)).to_dict()
        return kresource.ResponseProblem(
            capacity=cap, release=tuple(sorted(rng.randint(0, 50 * n) for _ in dem)),
            duration=tuple(rng.randint(1, 100) for _ in dem), demands=dem).to_dict()

    def slot(apps: int, n_slots: int, objective: str, demand: int = 5) -> dict:
        return slots.random_problem(1, n_nodes=256, n_apps=apps, n_slots=n_slots, free=0,
                                    demand_range=(1, demand),
                                    objective=objective).to_dict()

    def lone(n_slots: int, demand: int) -> dict:  # one application, a round of n_slots
        return {"problem": "slot_assignment", "n_nodes": 1, "n_slots": n_slots, "free": 0,
                "objective": "gap", "apps": [{"nodes": [0], "demand": demand}]}

    def gang(jobs: int, nodes: int = 256) -> dict:
        return gang_schedule.random_problem(1, n_nodes=nodes, n_jobs=jobs).to_dict()

    out: dict[str, list[tuple[str, Callable[[], dict]]]] = {
        "grouping": [(f"J={n} P=64", lambda n=n: grouping.random_problem(
            n, 64, max_procs=8, memory=100, seed=1).to_dict()) for n in (100, 1000, 10_000)],
        "slack_insertion": [(f"k={n}", lambda n=n: insertion.random_problem(
            1, n, capacity=128, max_t=3600, max_slack=7200).to_dict())
            for n in (100, 1000, 10_000)],
        "task_mapping": [(f"{n} jobs, 1024 nodes", lambda n=n: tm.random_problem(
            1024, n, 1).to_dict()) for n in (100, 1000, 10_000)]
        + [("1000 jobs, 10^6 nodes (max)", lambda: tm.random_problem(
            tm.MAX_NODES, 1000, 1).to_dict())],
        "slot_assignment": [
            ("20 apps, 1000 slots, round", lambda: slot(20, 1000, "round")),
            ("200 apps, 10^5 slots, round", lambda: slot(200, 100_000, "round")),
            (f"{slots.MAX_APPS} apps (max), 10^6 slots (max), round",
             lambda: slot(slots.MAX_APPS, slots.MAX_SLOTS, "round")),
            (f"{slots.MAX_APPS} apps (max), 10^6 slots (max), gap",
             lambda: slot(slots.MAX_APPS, slots.MAX_SLOTS, "gap")),
            ("1 app of demand 1, 10^6 slots (max), gap", lambda: lone(slots.MAX_SLOTS, 1)),
            ("1 app of demand 2, 10^6 slots (max), gap", lambda: lone(slots.MAX_SLOTS, 2)),
            ("10 apps of demand 10^6 - 1 (10^7 copies, max)", lambda: {
                "problem": "slot_assignment", "n_nodes": 10, "n_slots": slots.MAX_SLOTS,
                "free": 0, "apps": [{"nodes": [i], "demand": slots.MAX_SLOTS - 1}
                                    for i in range(10)]})],
        "slot_placement": [
            (f"n_slots={s_}, k={k}", lambda s_=s_, k=k, n=n: placement.PlacementProblem(
                g_us=10, n=n, i=1, n_slots=s_, k=k).to_dict())
            for s_, k, n in ((40, 12, 20), (1000, 500, 1), (placement.MAX_SLOTS, 2, 1),
                             (placement.MAX_SLOTS, placement.MAX_SLOTS - 1, 1))],
        "gang_schedule": [(f"{n} jobs, 256 nodes", lambda n=n: gang(n))
                          for n in (100, 1000, 10_000)]
        + [(f"{gang_schedule.MAX_JOBS} jobs (max), 256 nodes",
            lambda: gang(gang_schedule.MAX_JOBS))]
        + [("10^4 jobs, 10^6 nodes (max)", lambda: gang(10_000, gang_schedule.MAX_NODES))],
    }
    for kind in ("epochs", "selection", "response"):
        out[f"kresource_{kind}"] = [(f"{n} jobs K=3", lambda n=n, kind=kind: kres(n, kind))
                                    for n in (100, 10_000, kresource.MAX_JOBS)]
    return out


def run_sweep(limit: float, families: set[str] | None, only: set[str] | None,
              kill_after: float, kill_mb: float, tmp: Path,
              long: float | None = None) -> tuple[list[str], int]:
    """The size sweep (:func:`sweep_sizes`): every solver of every family on every size
    at ``limit`` seconds, and again at ``long`` seconds (None: not) on the family's
    largest size when its run there used its limit (:func:`uses_limit`); its table rows
    (family x solver x size: wall, peak, status) and the number of runs that missed a
    target."""
    lines = markdown_table(["family", "size", "solver", "limit [s]", "exit", "status",
                            "runtime [s]", "wall [s]", "cpu [s]", "peak [MB]", "verdict",
                            "message"], [])
    print("\n".join(lines), flush=True)
    fails = 0
    for family, sizes in sweep_sizes().items():
        if families is not None and family not in families:
            continue
        for at, (label, _) in enumerate(sizes):
            path = tmp / f"{family}.json"
            # written by a child of its own: this process stays small, and so does the
            # peak that its next children inherit until their exec (``ru_maxrss``)
            made = subprocess.run([sys.executable, "-m", "sim.experiments.engine.limits_bench",
                                   "--write-instance", family, label, str(path)], cwd=ROOT,
                                  capture_output=True, text=True)
            if made.returncode != 0:  # a generator that cannot build this size
                fails += 1
                why = " ".join(made.stderr.strip().splitlines()[-1:])[:120]
                lines.append(markdown_row([family, label, "-", f"{limit:g}", "-", "-", "-",
                                           "-", "-", "-", "FAIL (instance)", why]))
                print(lines[-1], flush=True)
                continue
            for solver in registry.SOLVERS.get(family, {}):
                if only is not None and solver not in only:
                    continue
                again = [limit] + ([long] if long and at == len(sizes) - 1 else [])
                for k, seconds in enumerate(again):
                    r = run_one(path, solver, seconds, kill_after, kill_mb)
                    line, failed = _sweep_row(family, label, solver, r)
                    fails += failed
                    lines.append(line)
                    print(line, flush=True)
                    if k == 0 and not uses_limit(r):
                        break
            path.unlink()
    return lines, fails


def _sweep_row(family: str, label: str, solver: str, r: dict) -> tuple[str, bool]:
    """A sweep table row of the run ``r`` (:func:`run_one`) and whether it missed a
    target ("CPU within" when its CPU time met the time target: it waited for a core)."""
    v = verdict(r)
    if v != "ok" and r["cpu"] <= r["limit"] + TARGET_SLACK and not r["killed"]:
        v += "; CPU within"
    return markdown_row([family, label, solver, f"{r['limit']:g}", r["exit"],
                         r["status"] or "-", _fmt(r["runtime"], ".2f"), f"{r['wall']:.2f}",
                         f"{r['cpu']:.2f}", f"{r['peak_mb']:.0f}", v,
                         r["message"].replace("|", "/")]), v.split(";")[0] != "ok"


def _rss_mb(pid: int, key: str = "VmRSS") -> float:
    """``key`` of ``/proc/PID/status`` in MB (VmRSS: resident now; VmHWM: its peak since
    the process's exec); 0 when unreadable."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _tree(pid: int) -> tuple[list[int], list[int]]:
    """The processes below ``pid`` (Linux ``/proc``): its children, and the processes
    below them."""
    below: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            below.setdefault(parent, []).append(int(entry))
    children = below.get(pid, [])
    deeper, todo = [], list(children)
    while todo:
        kids = below.get(todo.pop(), [])
        deeper += kids
        todo += kids
    return children, deeper


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
        hwm = 0.0
        cpu: dict[int, float] = {}  # last seen CPU seconds of each grandchild and below
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            children, deeper = _tree(child.pid)
            for p in deeper:  # not waited for by anyone the child waits for
                cpu[p] = max(cpu.get(p, 0.0), cpu_seconds(p))
            rss = _rss_mb(child.pid) + sum(_rss_mb(p) for p in children + deeper)
            hwm = max(hwm, _rss_mb(child.pid, "VmHWM"), rss)
            wall = time.perf_counter() - t0
            if wall > kill_after:
                killed = f"killed after {kill_after:.0f} s"
            elif rss > kill_mb:
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
    row = {"solver": solver, "limit": limit, "wall": wall,
           "peak_mb": max(hwm, usage.ru_maxrss / 1024),
           "cpu": usage.ru_utime + usage.ru_stime + sum(cpu.values()),
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
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", help="only these problem families (comma-separated)")
    ap.add_argument("--sweep", action="store_true",
                    help="the size sweep instead: every solver of every family on instances "
                         f"up to the family's maxima, at the first limit (default "
                         f"{SWEEP_LIMIT:g} s)")
    ap.add_argument("--long", type=float, default=None,
                    help=f"with --sweep: seconds of the second limit on each family's largest "
                         f"size, for the solvers that used the first (default {SWEEP_LONG:g}; "
                         "0: none)")
    ap.add_argument("--solvers", help="comma-separated solver names (a partial run)")
    ap.add_argument("--limits", default=None,
                    help="comma-separated time limits, seconds (the first for every solver, "
                         "the others for the solvers that use their limit)")
    ap.add_argument("--kill-after", type=float, default=30.0,
                    help="seconds past the limit (watchdog)")
    ap.add_argument("--kill-mb", type=float, default=2048.0, help="MB (watchdog)")
    ap.add_argument("--write-instance", nargs=3, metavar=("FAMILY", "LABEL", "PATH"),
                    help=argparse.SUPPRESS)  # the sweep's instance writer (run_sweep)
    args = ap.parse_args(argv)
    if args.write_instance:
        family, label, path = args.write_instance
        make = dict(sweep_sizes()[family])[label]
        Path(path).write_text(json.dumps(make()))
        return 0
    full = (SWEEP_LIMIT,) if args.sweep else LIMITS
    if args.limits is None:
        args.limits = ",".join(f"{x:g}" for x in full)
    try:
        limits = [float(x) for x in args.limits.split(",")]
        if not limits or not all(0 < x < float("inf") for x in limits):
            raise ValueError
    except ValueError:
        ap.error(f"--limits: comma-separated positive seconds, got {args.limits!r}")
    if args.sweep and len(limits) != 1:
        ap.error(f"--limits: the sweep runs at one limit, got {args.limits!r}")
    if args.long is not None and not args.sweep:
        ap.error("--long: a second limit of the size sweep (--sweep)")
    if args.long is None:
        args.long = SWEEP_LONG if args.sweep else 0.0
    if not 0 <= args.long < float("inf") or (args.long and args.long <= limits[0]):
        ap.error(f"--long: 0 or seconds above the first limit {limits[0]:g}, got {args.long:g}")
    only = None if args.solvers is None else set(args.solvers.split(","))
    families = None if args.family is None else set(args.family.split(","))
    partial = families is not None or only is not None or tuple(limits) != full \
        or args.kill_after != ap.get_default("kill_after") \
        or args.kill_mb != ap.get_default("kill_mb") \
        or (args.sweep and args.long != SWEEP_LONG)
    if args.sweep:
        return _main_sweep(args, argv, limits[0], families, only, partial)
    lines = [
        "# Solvers under their time limit", "",
        _ran(argv, partial), "",
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
            if families is not None and family not in families:
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
    write_atomic(out_dir / "limits_bench.md", "\n".join(lines) + "\n")
    print(f"\nwritten to {out_dir / 'limits_bench.md'}"
          + (" (partial run, not the committed results)" if partial else ""))
    return 0


def _ran(argv: list[str] | None, partial: bool) -> str:
    """The command line and commit a results file names (marked when partial)."""
    return (f"`python -m sim.experiments.engine.limits_bench{' ' + ' '.join(argv or sys.argv[1:])}`"
            f" at commit {provenance.commit()}" + (" (PARTIAL run)" if partial else ""))


def _main_sweep(args: argparse.Namespace, argv: list[str] | None, limit: float,
                families: set[str] | None, only: set[str] | None, partial: bool) -> int:
    """The size sweep's run and its file ``limits_sweep.md``."""
    head = [
        "# Solvers under their time limit: size sweep", "",
        _ran(argv, partial), "",
        f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores "
        f"shared with other work (timings are noisy; load average at the start "
        f"{provenance.load_average()}). Every solver of every family on instances of growing "
        "size up to the family's documented maxima (`sim/problems/*.py`), and each solver "
        f"that used its limit on a family's largest size again there at {args.long:g} s "
        "(0: none). Targets: wall <= "
        "limit + 2 s, peak < 1 GB, the solver's own runtime <= limit + 0.5 s; a refusal "
        "(exit 2, one line naming the field) meets them. Wall time is the whole `schedsearch "
        "solve` process; `cpu` is its user + system time (below the wall time on a machine "
        "shared with other work: a run whose CPU time is within the target missed it by "
        "waiting for a core).", ""]
    print("\n".join(head), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        rows, fails = run_sweep(limit, families, only, args.kill_after, args.kill_mb, Path(tmp),
                                args.long or None)
    lines = head + rows + ["", (f"{fails} run(s) missed a target." if fails else
                                "Every run met every target.")
                           + f" Load average at the end (1/5/15 min): "
                           f"{provenance.load_average()}."]
    out_dir = PARTIAL_DIR if partial else RESULTS
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(out_dir / "limits_sweep.md", "\n".join(lines) + "\n")
    print(f"\nwritten to {out_dir / 'limits_sweep.md'}"
          + (" (partial run, not the committed results)" if partial else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
