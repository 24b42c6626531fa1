"""The exact solvers of every family with an ILP: CP-SAT and the ILP on each MIP backend
(CBC, HiGHS, SCIP; ``models.mip``), per family x solver x size bin.

Each (instance, solver) runs in a fresh Python process (``--child``) at normal priority,
so its peak resident memory (``ru_maxrss`` from ``os.wait4``: the child and the processes
it waited for; the larger of that and the HiGHS/SCIP workers' own peak,
``models.mip.worker_peak_mb``, since those are the fork server's children) is its own,
and so is its CPU time (``wait4``'s user + system time plus the workers',
``models.mip.worker_cpu_s``; a killed child's workers are not counted).
The child says when its imports and the problem are loaded; the parent kills it
``KILL_AFTER`` (5 s) past its limit from then, and records the run as ``killed``. The
child times the ``solve`` call itself ("call wall"); a call longer than the limit + 2 s
is an overrun.

Per family x solver x size bin the table gives: runs, proved (OPTIMAL), the median call
wall (a stopped run counts with its wall), the median of the solver's own relative gap
(a proved run has 0; runs without a bound are counted under "no bound"), the median gap
to the best (objective against the best bound of every solver on that instance and the
library's proved value, so a certified figure), overruns and kills, and the peak memory.
Under each table, per family and bin, the best pair of solvers as a combination (best
solution and best bound of the two: proved count, median certified gap).

Instances (``--quick`` takes fewer of each and a 2 s limit, 20 s for the targets):

- ``library``: the benchmark library (``instances/data/library/FAMILY``), its two
  largest files per family (by size), 10 s;
- ``snapshots``: the bundled KTH slack-insertion snapshots in the waiting-job bins 1-10,
  11-20 (3 each), 21-30, 31-50 (6 each), evenly spread over the sorted names, 10 s;
- ``generated``: ``sim.problems.generate`` sizes a step above the library (``GENERATED``),
  seeds 1 and 2, 10 s;
- ``targets``: the three target sizes (``TARGETS``: K-resource response 40 jobs K = 4;
  slot assignment 64 nodes, 20 applications, 50 slots; gang schedule 30 jobs on 32
  nodes), seed 1, 60 s;
- ``limits``: the three MIP backends on ``limits_bench``'s large instances (CP-SAT is in
  ``limits_bench`` itself), 10 s.

Run: ``python -m sim.experiments.engine.mip_bench`` (the full configuration, 27 minutes
at load average 9-13 on 2 cores; writes ``sim/experiments/engine/results/mip_bench.md``)
or ``--quick`` (7 minutes at load average 11; writes ``/tmp/mip_bench_quick.md``).
``--sections a,b``, ``--families a,b``, ``--solvers a,b``, ``--limit S`` (every
section's limit, seconds) or ``--snapshot-bins 21-30:10,31-50:10`` (the snapshot
section's bins ``lo-hi:count``) run a part and write ``results/mip_bench.md`` at the
repository top, marked partial. ``--solvers`` also takes the solvers of
:data:`OPTIONAL`, which only run when named.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, ROOT, markdown_table, relative_gap

RESULTS = Path(__file__).parent / "results"
LIBRARY = ROOT / "instances" / "data" / "library"
SNAPSHOTS = ROOT / "instances" / "data" / "slack_snapshots"
QUICK_OUT = Path("/tmp/mip_bench_quick.md")
SOLVERS = ("cpsat", "cbc", "highs", "scip")
"""``cpsat`` is the family's CP-SAT model; the others its ILP with ``backend=``."""
EXTRA = {"kresource_response": ("portfolio",), "slack_insertion": ("portfolio",),
         "kresource_epochs": ("cpsat+scip",)}
"""Further solvers run on a family (the K-resource response's default; the slack-insertion
portfolio and the K-resource epochs' CP-SAT then SCIP, measured against the family's
default)."""
FAMILIES = ("slack_insertion", "grouping", "kresource_epochs", "kresource_selection",
            "kresource_response", "task_mapping", "gang_schedule", "slot_assignment")
MAXIMISE = {"kresource_selection"}
TWO_STAGE = {"slack_insertion"}
"""Families whose objective value is only the first stage of a lexicographic optimum (the
slack insertion's price, then the fewest moved jobs): a bound meeting it proves the price,
not the result, so a combination counts such an instance as proved only by an OPTIMAL run."""
OPTIONAL = {"slack_insertion": ("cpsat+ti", "ti", "ti-scip")}
"""Solvers run on a family only when ``--solvers`` names them: the slack insertion's
CP-SAT then time-indexed MIP, and that MIP alone on HiGHS and on SCIP."""
VARIANTS = {"ti-scip": ("ti", {"backend": "scip"})}
"""Bench names of a registered solver with options: ``name -> (registered, options)``."""
SECTIONS = ("library", "snapshots", "generated", "targets", "limits")
KILL_AFTER = 5.0  # seconds past the limit, counted from the child's imports
OVERRUN = 2.0  # seconds past the limit that count as an overrun
SNAPSHOT_BINS = ((1, 10), (11, 20), (21, 30), (31, 50))
GENERATED = {
    "grouping": {"jobs": 14, "processors": 6},
    "kresource_epochs": {"n": 30, "K": 4},
    "kresource_selection": {"n": 60, "K": 4},
    "kresource_response": {"n": 16, "K": 4, "horizon": 40},
    "task_mapping": {"n_nodes": 16, "n_jobs": 12},
    "gang_schedule": {"n_nodes": 16, "n_jobs": 16},
    "slot_assignment": {"n_nodes": 32, "n_apps": 10, "n_slots": 30},
}
"""Generator sizes (``schedsearch generate FAMILY --size K=V``) a step above the library."""
TARGETS = {
    "kresource_response": {"n": 40, "K": 4, "horizon": 100},
    "slot_assignment": {"n_nodes": 64, "n_apps": 20, "n_slots": 50},
    "gang_schedule": {"n_nodes": 32, "n_jobs": 30},
}
"""The target sizes; response releases spread over 100 s keep the generator's default
arrival rate (8 jobs in 20 s)."""


def _solver_name(family: str, solver: str) -> tuple[str, dict]:
    """Registered name and keyword options of ``solver`` for ``family``."""
    from sim import registry

    names = registry.SOLVERS[family]
    if solver in VARIANTS:
        return VARIANTS[solver]
    if solver == "cpsat":
        return ("cpsat" if "cpsat" in names else "exact-cpsat"), {}
    if solver in SOLVERS:
        return ("ilp" if "ilp" in names else "exact-ilp"), {"backend": solver}
    return solver, {}


def _size(path: Path) -> int:
    """Number of jobs (or waiting jobs, applications) of a problem file."""
    data = json.loads(path.read_text())
    for key in ("waiting", "jobs", "demands", "apps", "applications", "release"):
        if isinstance(data.get(key), list):
            return len(data[key])
    return path.stat().st_size


def library_instances(per_family: int) -> list[tuple[str, str, Path]]:
    """``(family, bin, path)``: the ``per_family`` largest library files of each family."""
    out = []
    for fam in FAMILIES:
        paths = sorted(sorted((LIBRARY / fam).glob("*.json")), key=_size)[-per_family:]
        sizes = [_size(p) for p in paths]
        out += [(fam, f"library n {min(sizes)}-{max(sizes)}", p) for p in paths]
    return out


def snapshot_instances(per_bin: dict[tuple[int, int], int]) -> list[tuple[str, str, Path]]:
    """``per_bin[(lo, hi)]`` KTH snapshots of each waiting-job bin, evenly spread over the
    sorted file names."""
    out = []
    paths = sorted(SNAPSHOTS.glob("*.json"))
    for (lo, hi), m in per_bin.items():
        inbin = [p for p in paths if lo <= int(p.stem.rsplit("-k", 1)[1]) <= hi]
        m = min(m, len(inbin))
        pick = [inbin[round(i * (len(inbin) - 1) / max(m - 1, 1))] for i in range(m)]
        out += [("slack_insertion", f"KTH k {lo}-{hi}", p) for p in dict.fromkeys(pick)]
    return out


def generated_instances(tmp: Path, sizes: dict[str, dict], seeds: list[int], tag: str
                        ) -> list[tuple[str, str, Path]]:
    """Generator instances (``sim.problems.generate.instance``) of ``sizes`` and seeds."""
    from sim.problems import generate

    out = []
    for fam, size in sizes.items():
        label = " ".join(f"{k}={v}" for k, v in size.items())
        for seed in seeds:
            path = tmp / f"{tag}-{fam}-s{seed}.json"
            path.write_text(json.dumps(generate.instance(fam, seed, **size)))
            out.append((fam, f"{tag} {label}", path))
    return out


def limits_instances(tmp: Path) -> list[tuple[str, str, Path]]:
    """``limits_bench``'s large instances of the families with an ILP."""
    from sim.experiments.engine import limits_bench

    return [(fam, f"limits {label}", path)
            for fam, items in limits_bench.instances(tmp).items() if fam in FAMILIES
            for label, path in items]


def child(family: str, solver: str, path: str, limit: float) -> None:
    """Solve one instance (``--child``); print ``ready`` once loaded, then the result as
    one JSON line."""
    from sim import registry
    from sim.sweep.bench import LIBRARY_FIELDS

    name, options = _solver_name(family, solver)
    fn = registry.solver(family, name)
    data = json.loads(Path(path).read_text())
    for key in LIBRARY_FIELDS:  # the library's annotations are not problem fields
        data.pop(key, None)
    _, problem = registry.load_problem(data, source=path)
    print("ready", flush=True)
    t0 = time.perf_counter()
    try:
        r = fn(problem, time_limit=limit, **options)
    except ValueError as e:
        print(json.dumps({"status": "REFUSED", "call": time.perf_counter() - t0,
                          "message": str(e).splitlines()[0][:160]}))
        return
    # HiGHS, SCIP and process-isolated CP-SAT run in workers wait4 does not see
    from models.mip import worker_cpu_s, worker_peak_mb

    print(json.dumps({"status": r.status.value, "objective": r.objective, "bound": r.bound,
                      "runtime": r.runtime, "call": time.perf_counter() - t0,
                      "note": r.note[:160], "worker_peak_mb": worker_peak_mb(),
                      "worker_cpu_s": worker_cpu_s()}))


def run_one(family: str, solver: str, path: Path, limit: float) -> dict:
    """One run in a fresh process: its result, call wall, process wall and peak memory."""
    cmd = [sys.executable, "-m", "sim.experiments.engine.mip_bench", "--child", family,
           solver, str(path), f"{limit:g}"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        killed, ready = False, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            now = time.perf_counter()
            if ready is None and os.fstat(out.fileno()).st_size > 0:
                ready = now
            if now - (ready if ready is not None else t0 + 60.0) > limit + KILL_AFTER:
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
    row = {"family": family, "solver": solver, "instance": path.stem, "limit": limit,
           "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
           "peak_mb": usage.ru_maxrss / 1024, "killed": killed}
    if killed:
        row.update(status="KILLED", call=(time.perf_counter() - ready) if ready else None)
        return row
    try:
        row.update(json.loads(text[-1]))
    except (ValueError, IndexError):
        row.update(status="ERROR", message=" ".join(tail)[:160])
    row["peak_mb"] = max(row["peak_mb"], row.pop("worker_peak_mb", 0.0))
    row["cpu"] += row.pop("worker_cpu_s", 0.0)
    return row


def _median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _best(family: str, rows: list[dict], known: float | None = None
          ) -> tuple[float | None, float | None]:
    """Best objective and best bound of ``rows`` (one instance), with a proved value."""
    mx = family in MAXIMISE
    objs = [r["objective"] for r in rows if r.get("objective") is not None]
    bounds = [r["bound"] for r in rows if r.get("bound") is not None]
    if known is not None:
        objs.append(known)
        bounds.append(known)
    pick_obj, pick_bound = (max, min) if mx else (min, max)
    return (pick_obj(objs) if objs else None), (pick_bound(bounds) if bounds else None)


def _known(path: Path) -> float | None:
    """The library's proved optimum of ``path``, if any."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data.get("best_known") if data.get("proved") else None


def summarise(rows: list[dict], bins: dict[str, str], known: dict[str, float | None]
              ) -> list[list[str]]:
    """Table rows: family, bin, solver, runs, proved, medians, overruns, peak."""
    by_inst: dict[str, list[dict]] = {}
    for r in rows:
        by_inst.setdefault(r["instance"], []).append(r)
    best = {i: _best(rs[0]["family"], rs, known.get(i)) for i, rs in by_inst.items()}
    out = []
    keys = list(dict.fromkeys((r["family"], bins[r["instance"]], r["solver"]) for r in rows))
    for fam, b, s in keys:
        rs = [r for r in rows if (r["family"], bins[r["instance"]], r["solver"]) == (fam, b, s)]
        proved = sum(r.get("status") == "OPTIMAL" for r in rs)
        other = [r["status"].lower() for r in rs
                 if r.get("status") in ("REFUSED", "ERROR", "KILLED")]
        calls = [r["call"] for r in rs if r.get("call") is not None]
        cpus = [r["cpu"] for r in rs if r.get("cpu") is not None]
        own = [g for r in rs if (g := relative_gap(r.get("objective"), r.get("bound"))) is not None]
        cert = [g for r in rs if (g := relative_gap(r.get("objective"), best[r["instance"]][1]))
                is not None]
        nosol = sum(r.get("objective") is None for r in rs)
        nobound = sum(r.get("bound") is None and r.get("objective") is not None for r in rs)
        over = sum(r.get("killed") or (r.get("call") or 0) > r["limit"] + OVERRUN for r in rs)
        past = max(((r.get("call") or 0) - r["limit"] for r in rs), default=0.0)
        out.append([fam, b, s, len(rs),
                    f"{proved}" + (f" ({', '.join(sorted(set(other)))} {len(other)})"
                                   if other else ""),
                    _fmt(_median(calls), ".2f"), _fmt(_median(cpus), ".2f"),
                    _fmt(_median(own), ".2%"),
                    _fmt(_median(cert), ".2%"), f"{nosol} / {nobound}",
                    f"{over} ({past:+.1f})", f"{max(r['peak_mb'] for r in rs):.0f}"])
    return out


def pairs(rows: list[dict], bins: dict[str, str], known: dict[str, float | None]
          ) -> list[list[str]]:
    """Per family and bin: the best pair of solvers run as a combination (best solution and
    best bound of the two): proved (an OPTIMAL run, or objective = bound outside
    :data:`TWO_STAGE`) and median certified gap."""
    out = []
    groups = list(dict.fromkeys((r["family"], bins[r["instance"]]) for r in rows))
    for fam, b in groups:
        rs = [r for r in rows if (r["family"], bins[r["instance"]]) == (fam, b)]
        insts = list(dict.fromkeys(r["instance"] for r in rs))
        solvers = list(dict.fromkeys(r["solver"] for r in rs))
        scored = []
        for combo in itertools.chain(((s,) for s in solvers),
                                     itertools.combinations(solvers, 2)):
            gaps, proved, time_sum = [], 0, []
            for i in insts:
                sub = [r for r in rs if r["instance"] == i and r["solver"] in combo]
                obj, bnd = _best(fam, sub)
                g = relative_gap(obj, bnd)
                if g is not None:
                    gaps.append(g)
                proved += any(r.get("status") == "OPTIMAL" for r in sub) or \
                    (g == 0.0 and fam not in TWO_STAGE)
                time_sum.append(sum(r.get("call") or r["limit"] for r in sub))
            scored.append((-proved, _median(gaps) if gaps else 9.9, _median(time_sum), combo,
                           len(gaps)))
        scored.sort(key=lambda x: (x[0], x[1], len(x[3]), x[2]))
        top = scored[0]
        single = min((x for x in scored if len(x[3]) == 1),
                     key=lambda x: (x[0], x[1], x[2]))
        out.append([fam, b, len(insts), " / ".join(single[3]), -single[0],
                    _fmt(single[1] if single[4] else None, ".2%"),
                    " + ".join(top[3]), -top[0], _fmt(top[1] if top[4] else None, ".2%")])
    return out


def parse_bins(text: str) -> dict[tuple[int, int], int]:
    """``"21-30:10,31-50:10"`` -> ``{(21, 30): 10, (31, 50): 10}``; ValueError naming the
    part that is not ``lo-hi:count`` with ``0 <= lo <= hi`` and ``count >= 1``."""
    out = {}
    for part in (x.strip() for x in text.split(",")):
        try:
            span, count = part.split(":")
            lo, hi = (int(x) for x in span.split("-"))
            n = int(count)
        except ValueError:
            raise ValueError(f"snapshot bin {part!r} is not lo-hi:count") from None
        if not 0 <= lo <= hi or n < 1:
            raise ValueError(f"snapshot bin {part!r}: needs 0 <= lo <= hi and count >= 1")
        out[(lo, hi)] = n
    return out


def solvers_for(family: str, backends_only: bool, only: list[str] | None) -> list[str]:
    """The bench's solvers of ``family``: the MIP backends alone (``backends_only``) or
    :data:`SOLVERS` and the family's :data:`EXTRA`, restricted to ``only`` when given;
    the family's :data:`OPTIONAL` ones only when ``only`` names them."""
    if backends_only:
        return [x for x in SOLVERS[1:] if only is None or x in only]
    run = [*SOLVERS, *EXTRA.get(family, ())]
    if only is None:
        return run
    return [x for x in (*run, *OPTIONAL.get(family, ())) if x in only]


def plan(quick: bool, tmp: Path, sections: list[str],
         snapshot_bins: dict[tuple[int, int], int] | None = None
         ) -> list[tuple[str, list, float]]:
    """``(title, instances, limit)`` of each section; ``snapshot_bins`` replaces the
    snapshot section's bins and counts."""
    out = []
    if "library" in sections:
        out.append(("Benchmark library", library_instances(1 if quick else 2), 2.0 if quick
                    else 10.0))
    if "snapshots" in sections:
        per_bin = snapshot_bins or dict(zip(SNAPSHOT_BINS, (1, 1, 3, 3) if quick
                                            else (3, 3, 6, 6), strict=True))
        out.append(("KTH slack-insertion snapshots", snapshot_instances(per_bin),
                    2.0 if quick else 10.0))
    if "generated" in sections:
        out.append(("Generated, a step above the library",
                    generated_instances(tmp, GENERATED, [1] if quick else [1, 2], "gen"),
                    2.0 if quick else 10.0))
    if "targets" in sections:
        out.append(("Target sizes", generated_instances(tmp, TARGETS, [1], "target"),
                    20.0 if quick else 60.0))
    if "limits" in sections and not quick:
        out.append(("MIP backends on limits_bench's instances", limits_instances(tmp), 10.0))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.engine.mip_bench",
                description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"fewer instances, 2 s limits (20 s targets); writes {QUICK_OUT}")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated subset of {','.join(SECTIONS)} (partial run)")
    ap.add_argument("--families", default=",".join(FAMILIES),
                    help="comma-separated subset of the families (partial run)")
    ap.add_argument("--solvers", default=None,
                    help="comma-separated subset of the solvers of each family "
                    f"({','.join(SOLVERS)} and the extra ones; partial run)")
    ap.add_argument("--limit", type=float, default=None,
                    help="seconds per run in every section (partial run)")
    ap.add_argument("--snapshot-bins", default=None,
                    help="the snapshot section's bins, e.g. 21-30:10,31-50:10 (lo-hi:count; "
                    "snapshots evenly spread over the sorted names; partial run)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", nargs=4, metavar=("FAMILY", "SOLVER", "FILE", "LIMIT"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        fam, solver, path, limit = args.child
        child(fam, solver, path, float(limit))
        return 0
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    for s in sections:
        if s not in SECTIONS:
            ap.error(f"unknown section {s!r}; valid: {', '.join(SECTIONS)}")
    for f in families:
        if f not in FAMILIES:
            ap.error(f"unknown family {f!r}; valid: {', '.join(FAMILIES)}")
    known_solvers = {*SOLVERS, *(x for v in (*EXTRA.values(), *OPTIONAL.values())
                                 for x in v)}
    only = None if args.solvers is None else \
        [x.strip() for x in args.solvers.split(",") if x.strip()]
    for x in only or ():
        if x not in known_solvers:
            ap.error(f"unknown solver {x!r}; valid: {', '.join(sorted(known_solvers))}")
    if args.limit is not None and not 0 < args.limit < float("inf"):
        ap.error(f"--limit must be a positive number of seconds, got {args.limit:g}")
    try:
        snapshot_bins = None if args.snapshot_bins is None else parse_bins(args.snapshot_bins)
    except ValueError as e:
        ap.error(f"--snapshot-bins: {e}")
    full = (not args.quick and sections == list(SECTIONS) and families == list(FAMILIES)
            and only is None and args.limit is None and snapshot_bins is None)
    out = args.out or (QUICK_OUT if args.quick else RESULTS / "mip_bench.md" if full
                       else PARTIAL_DIR / "mip_bench.md")
    start_load = provenance.load_average()
    t_all = time.perf_counter()
    kind = "quick run" if args.quick else "full configuration" if full else "partial run"
    lines = [f"# Exact solvers per family: CP-SAT and the ILP on CBC, HiGHS, SCIP ({kind})", "",
             f"Recorded by {provenance.stamp(None if argv is None else ['mip_bench', *argv])}"
             f"; {os.cpu_count()} cores; load average {start_load} (1 / 5 / 15 min) at the "
             f"start. Each run in its own process at normal priority, killed {KILL_AFTER:g} s "
             f"past its limit; overrun: call wall > limit + {OVERRUN:g} s.", "",
             "Columns: proved = OPTIMAL runs; median s = median wall of the solve call; "
             "median CPU s = the run's process CPU time (user + system, imports included; "
             "more comparable across loads than wall); own gap = the solver's "
             "|objective - bound| / max(|objective|, |bound|); cert. gap = its objective "
             "against the best bound of every solver on the instance (and the library's "
             "proved value); no sol. / no bound = runs without a solution / with a solution "
             "but no bound; overruns (largest call wall past the limit, s); peak MB = largest "
             "resident memory of one run.", ""]
    header = ["family", "size bin", "solver", "runs", "proved", "median s", "median CPU s",
              "own gap", "cert. gap", "no sol. / no bound", "overruns", "peak MB"]
    pair_header = ["family", "size bin", "instances", "best single", "proved", "cert. gap",
                   "best pair", "proved", "cert. gap"]
    with tempfile.TemporaryDirectory() as tmp:
        for title, insts, limit in plan(args.quick, Path(tmp), sections, snapshot_bins):
            limit = args.limit or limit
            insts = [x for x in insts if x[0] in families]
            if not insts:
                continue
            rows, bins, known = [], {}, {}
            for fam, b, path in insts:
                bins[path.stem] = b
                known[path.stem] = _known(path)
                for s in solvers_for(fam, title.startswith("MIP backends"), only):
                    row = run_one(fam, s, path, limit)
                    rows.append(row)
                    print(f"{fam:19s} {b[:28]:28s} {path.stem[:34]:34s} {s:9s} "
                          f"{row.get('status', ''):9s} obj {_fmt(row.get('objective'), '.6g')} "
                          f"bound {_fmt(row.get('bound'), '.6g')} "
                          f"call {_fmt(row.get('call'), '.2f')} wall {row['wall']:.1f} "
                          f"cpu {row['cpu']:.1f} "
                          f"{row['peak_mb']:.0f} MB", flush=True)
            lines += [f"## {title}: {limit:g} s limit", "",
                      *markdown_table(header, summarise(rows, bins, known)), "",
                      "Best single solver and best pair (a combination keeps the best solution "
                      "and the best bound of the two; ties broken by fewer solvers, then "
                      "time):", "", *markdown_table(pair_header, pairs(rows, bins, known)), "",
                      "Per run (instance, solver: status objective / bound, call wall s):", ""]
            lines += [f"- {r['instance']} {r['solver']}: {r.get('status')} "
                      f"{_fmt(r.get('objective'), '.6g')} / {_fmt(r.get('bound'), '.6g')}, "
                      f"{_fmt(r.get('call'), '.2f')} (CPU {r['cpu']:.2f})"
                      + (f" ({r['message']})" if r.get("message") else "") for r in rows]
            lines.append("")
    lines.append(f"{time.perf_counter() - t_all:.0f} s in all; load average "
                 f"{provenance.load_average()} at the end.")
    provenance.write_atomic(out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
