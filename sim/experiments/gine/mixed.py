"""Targets 4-11 of spec 3.7 rerun under the "one mixed stream" workload, distributed jobs
counted only.

``python -m sim.experiments.gine.mixed [--seeds 10] [--scale 1] [--mfreq 20 100 1000]
[--parts calib load1 ...]``

The workload reading (``class_mix="c"`` of :class:`sim.timeshare.workload.CSMConfig`): one
Poisson stream whose arrival is a local task w.p. 1/2, else a distributed job, large
w.p. pdt; at mem_load 0.7 the spec's class mix "b" (one stream of local tasks and small
jobs) is already one stream and is kept. ``count_locals=False``: a run ends its arrivals
after ``n_jobs`` = 1000 distributed jobs (local tasks not counted). Paper sizes (tc and
memory scale 1.0), n = 32, 10 seeds, the compiled engine. ``--scale s`` multiplies every tc
and memory size by s (0 < s <= 1), as the study's scale-0.01 figures do; it is a
configuration of its own, written to ``results/mixed-scale<s>/`` with its own calibration.

mit per (load, class mix) is calibrated once by the spec 3.4 procedure
(:func:`sim.timeshare.csm.calibrate_measured`: RR, pdt 0.5, mfreq 100 ms, measured
mem_load within 10%, seed 101) and cached in ``calib_mit.json`` of the output directory,
in the format of :mod:`sim.experiments.gine.figs`, whose grid runner
(:func:`sim.experiments.gine.figs.run_grid`) runs and caches every point (a stopped run
continues where it stopped). Parts:

- ``load1``: RR, PRED, CSM (MNOD 2) at mem_load 1.0 over mfreq 20 / 100 / 1000 ms
  (targets 6-9, 3);
- ``load15``: the same at 1.5 with MNOD 3 (targets 6-9);
- ``low``: CSM, DYN, RR at mem_load 0.7 over pdt 0.1 .. 0.9 (targets 9, 10);
- ``mnod``: CSM at 1.0 with MNOD 1, 2, 3 over mfreq (target 11);
- ``tpn`` (not in the default): RR at the calibration point (pdt 0.5, mfreq 100 ms) at
  every load, with ``count_locals`` False and True (the same calibrated mit; True ends a
  run after 1000 arrivals of either kind): tasks per node against the paper's 2.8 / 3.2 /
  4.1 (target 1);
- ``idle`` (not in the default): CSM at 1.0, MNOD 2, mfreq 20 and 1000 ms, seed 0 on the
  Python engine with the counting policy of ``figs crossover-diag``: the share of CSM's
  distributed insertions that find an idle CPU and an empty RQ (Algorithm 1 line 3).

``--mfreq`` runs a subset of the mfreq grid (ms) in ``load1``, ``load15`` and ``mnod``;
it is a configuration of its own, named ``-mfreq<f>-<f>`` after the scale in the
directory name. Targets 4 and 5 are static workloads (no arrival stream, nothing counted):
the reading does not change them. Writes ``results/mixed[-scale<s>][-mfreq..]/<part>.json``
and ``README.md`` there (the tables so far, with the scale, seeds, mfreq grid, command and
commit), and ``cost.json``: the CPU and wall seconds of every point (all its seeds), the
load average when it ended, the command and commit that ran it. Fewer than 10 seeds is a
partial run and writes to ``results/csm-mixed[-scale<s>][-mfreq..]/`` at the repository
top; ``--out`` writes elsewhere.
Times in the simulator are microseconds; mit in seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from heuristics.coscheduling import by_name
from sim.argparser import Parser
from sim.experiments.common import (
    PARTIAL_DIR,
    command,
    commit,
    markdown_table,
    mean_ci,
    write_atomic,
)
from sim.experiments.gine import figs
from sim.timeshare.csm import calibrate_measured, run_point
from sim.timeshare.workload import CSMConfig, calibrate_mit, load_readings

RESULTS = Path(__file__).resolve().parent / "results"
SEEDS = 10
JOBS = 1000
SCALE = 1.0
MFREQ = (20, 100, 1000)
PDT = (0.1, 0.3, 0.5, 0.7, 0.9)
PARTS = ("calib", "load1", "load15", "low", "mnod")
#: the parts ``--parts`` accepts beyond the default grids
EXTRA = ("tpn", "idle")
#: Calibration seeds of this study: one, the seed of its committed calibrations (its
#: ``calib_mit.json`` files; :meth:`figs.Setup.mit` calibrates again on any other set).
CALIB_SEEDS = (101,)
#: mfreq (ms) of the ``tpn`` part: the calibration point
TPN_MFREQ = 100.0
#: mfreq (ms) of the ``idle`` part (the two ends of the grid, as in ``crossover-diag``)
IDLE_MFREQ = (20, 1000)
MIX = {0.7: "b", 1.0: "c", 1.5: "c"}


def out_dir(scale: float, seeds: int, mfreq: tuple[float, ...] = MFREQ) -> Path:
    """Where a run without ``--out`` writes: ``results/mixed`` for the full configuration
    at paper sizes, ``results/mixed-scale<s>`` at another scale (the study's
    ``<name>-scale<s>`` naming), ``-mfreq<f>-<f>`` appended for a subset of the mfreq
    grid, and under the git-ignored top-level ``results/`` as
    ``csm-mixed[-scale<s>][-mfreq..]`` when fewer seeds than the full configuration's are
    run."""
    suffix = "" if scale == SCALE else f"-scale{scale:g}"
    if tuple(mfreq) != MFREQ:
        suffix += "-mfreq" + "-".join(f"{f:g}" for f in mfreq)
    if seeds < SEEDS:
        return PARTIAL_DIR / f"csm-mixed{suffix}"
    return RESULTS / f"mixed{suffix}"


def base(load: float, scale: float = SCALE, **kw: Any) -> CSMConfig:
    """The point's configuration before mit (one mixed stream, locals not counted), tc and
    memory multiplied by ``scale``."""
    return CSMConfig(n_jobs=JOBS, tc_scale=scale, mem_scale=scale, mem_load=load,
                     class_mix=MIX[load], count_locals=False, **kw)


def calib_key(c: CSMConfig) -> str:
    """The ``calib_mit.json`` key of ``c``: the one :meth:`figs.Setup.mit` reads."""
    key = f"{c.mem_load}/{c.class_mix}"
    if c.tc_scale != figs.FULL["scale"]:
        key += f"@scale{c.tc_scale:g}"
    return key


def calibrate(out: Path, load: float, scale: float = SCALE) -> dict[str, Any]:
    """mit for ``load`` by the spec 3.4 procedure (cached in ``calib_mit.json`` under the
    key :meth:`figs.Setup.mit` reads)."""
    c = base(load, scale, pdt=0.5, mfreq_ms=100.0)
    key = calib_key(c)
    path = out / "calib_mit.json"
    cache = json.loads(path.read_text()) if path.exists() else {}
    if key not in cache:
        t0 = time.perf_counter()
        mit, meas, trace = calibrate_measured(c, lambda: by_name("rr"), seeds=CALIB_SEEDS,
                                              iters=4, tol=0.1, engine="compiled")
        cache[key] = {"mit_s": mit, "measured": meas, "eq5_mit_s": calibrate_mit(c),
                      "trace": trace, "seeds": list(CALIB_SEEDS),
                      "wall_s": time.perf_counter() - t0,
                      "commit": commit(), "command": command()}
        write_atomic(path, json.dumps(cache, indent=1))
        print(f"  calibrated {key}: mit {mit:.3f} s, measured mem_load {meas:.3f}, "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    return cache[key]


class _Setup(figs.Setup):
    """figs.Setup for this study's directory and sizes (no argparse)."""

    def __init__(self, out: Path, seeds: int, scale: float = SCALE,
                 mfreq: tuple[float, ...] = MFREQ):
        ns = argparse.Namespace(quick=False, seeds=seeds, jobs=JOBS, scale=scale,
                                mfreq=list(mfreq), pdt=list(PDT), figure="mixed",
                                engine="compiled", out=str(out))
        super().__init__(ns)
        self.mfreq = tuple(mfreq)

    def calib_seeds(self, c: CSMConfig) -> tuple[int, ...]:
        return CALIB_SEEDS

    def cfg(self, **kw: Any) -> CSMConfig:
        c = base(kw.pop("mem_load"), self.scale, **kw)
        return dataclasses.replace(c, mit_s=self.mit(c))


def points(setup: _Setup, part: str) -> list[tuple[str, CSMConfig, str, dict]]:
    """(key, config, policy, options) of every point of ``part``."""
    if part in ("load1", "load15"):
        load, mnod = (1.0, 2) if part == "load1" else (1.5, 3)
        return [(f"{p}/m{f:g}", setup.cfg(mem_load=load, pdt=0.5, mfreq_ms=float(f)), p,
                 {"mnod": mnod} if p != "rr" else {}) for f in setup.mfreq
                for p in ("rr", "pred", "csm")]
    if part == "tpn":
        return [(f"rr/load{load:g}/locals-{'counted' if cl else 'not-counted'}",
                 dataclasses.replace(setup.cfg(mem_load=load, pdt=0.5, mfreq_ms=TPN_MFREQ),
                                     count_locals=cl), "rr", {})
                for load in (0.7, 1.0, 1.5) for cl in (False, True)]
    if part == "low":
        return [(f"{p}/pdt{d}", setup.cfg(mem_load=0.7, pdt=d), p, {}) for d in PDT
                for p in ("csm", "dyn", "rr")]
    if part == "mnod":
        return [(f"mnod{k}/m{f:g}", setup.cfg(mem_load=1.0, pdt=0.5, mfreq_ms=float(f)),
                 "csm", {"mnod": k}) for f in setup.mfreq for k in (1, 2, 3)]
    raise ValueError(f"unknown part {part!r}")


def idle(setup: _Setup, out: Path) -> dict[str, Any]:
    """Count where CSM inserts distributed tasks at mem_load 1.0 (MNOD 2, pdt 0.5, seed 0)
    with :class:`figs._Disagree` on the Python engine (the compiled engine runs no
    counting policy); cached per mfreq in ``idle.json`` of ``out``.

    Returns ``{"csm/m<mfreq>": {"ident", "counts", "events", "cpu_s", "tasks_per_node"}}``;
    ``counts`` as :class:`figs._Disagree` keeps them (idle / same / differ, and the CSM
    path line5 / csm / pred of every busy-node insertion).
    """
    path = out / "idle.json"
    cache: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    for f in IDLE_MFREQ:
        cfg = setup.cfg(mem_load=1.0, pdt=0.5, mfreq_ms=float(f))
        key, ident = f"csm/m{f}", json.dumps([cfg.to_dict(), "csm", {"mnod": 2}, 0],
                                             sort_keys=True)
        if key in cache and cache[key]["ident"] == ident:
            continue
        pol = figs._Disagree("csm", quantum_us=int(cfg.quantum_ms * 1000), mnod=2)
        t0 = time.process_time()
        r = run_point(cfg, pol, seed=0)
        cache[key] = {"ident": ident, "counts": dict(pol.counts), "events": r.events,
                      "cpu_s": time.process_time() - t0,
                      "tasks_per_node": r.metrics["tasks_per_node"]}
        print(f"  idle {key}: {r.events} events in {cache[key]['cpu_s']:.0f} s CPU",
              flush=True)
        write_atomic(path, json.dumps(cache, indent=1))
    return cache


def _idle_rows(cache: dict[str, Any]) -> list[list[str]]:
    rows = []
    for key, v in cache.items():
        sh = figs.insertion_shares(v["counts"])
        rows.append([key.split("/m")[1], sh["total"], sh["idle"], sh["differ"], sh["paths"],
                     f"{v['tasks_per_node']:.2f}", f"{v['events']}", f"{v['cpu_s']:.0f}"])
    return rows


def _fmt(v: list[float], d: int = 2) -> str:
    mu, h = mean_ci(v)
    return f"{mu:.{d}f}" + (f" +- {h:.{d}f}" if h == h else "")


METRICS = ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
           "slowdown_local", "tasks_per_node", "mem_load_measured")


def run_part(setup: _Setup, out: Path, part: str) -> None:
    """Run every point of ``part`` through :func:`figs.run_grid` (which caches each point
    in ``<part>.json``), one point at a time, and record what each newly run point cost
    in ``cost.json`` of ``out``: CPU and wall seconds over all its seeds, the load average
    when it ended, command and commit."""
    path = out / "cost.json"
    for key, cfg, pol, opts in points(setup, part):
        done = figs.is_cached(setup, part, key, cfg, pol, opts, seeds=setup.seeds)
        c0, w0 = time.process_time(), time.perf_counter()
        figs.run_grid(setup, part, [(key, cfg, pol, opts)], METRICS, seeds=setup.seeds)
        if done:
            continue
        cost = json.loads(path.read_text()) if path.exists() else {}
        cost[f"{part}/{key}"] = {
            "cpu_s": round(time.process_time() - c0, 2),
            "wall_s": round(time.perf_counter() - w0, 2), "seeds": setup.seeds,
            "loadavg": Path("/proc/loadavg").read_text().split()[:3]
            if Path("/proc/loadavg").exists() else None,
            "commit": commit(), "command": command()}
        write_atomic(path, json.dumps(cost, indent=1))


def _cost_rows(out: Path) -> list[list[str]]:
    path = out / "cost.json"
    if not path.exists():
        return []
    return [[k, f"{v['cpu_s']:.1f}", f"{v['cpu_s'] / v['seeds']:.1f}", f"{v['wall_s']:.0f}",
             " ".join(v["loadavg"] or ["-"])]
            for k, v in json.loads(path.read_text()).items()]


def report(out: Path, seeds: int, scale: float = SCALE,
           mfreq: tuple[float, ...] = MFREQ) -> str:
    """The tables of every part run so far (from the grid caches)."""
    size = "Paper sizes (scale 1.0)" if scale == 1.0 else (
        f"Every tc and memory size x {scale:g} (scale {scale:g}; quantum, fault latency, "
        "mfreq and network latency not scaled)")
    kind = "full configuration" if seeds >= SEEDS else "PARTIAL run (fewer seeds)"
    md = ["# Spec 3.7 targets under one mixed stream, distributed jobs counted only\n",
          f"{kind}: {size}, n = 32, {JOBS} distributed jobs per run "
          f"(mfreq grid {', '.join(f'{f:g}' for f in mfreq)} ms) "
          f"(count_locals=False), {seeds} seeds, compiled engine; class mix 'c' (local "
          "w.p. 1/2, else distributed, large w.p. pdt) at mem_load 1.0 and 1.5, 'b' at 0.7. "
          "Mean over seeds +- 95% CI half-width; a part with fewer points than its grid "
          f"is PARTIAL. Written by `{command()}` at commit {commit()} "
          "(each part's points keep the configuration they ran with in its JSON).\n"]
    cal = out / "calib_mit.json"
    if cal.exists():
        rows = []
        for key, v in json.loads(cal.read_text()).items():
            load, mix = key.split("@")[0].split("/")
            rd = load_readings(base(float(load), scale, pdt=0.5))
            rows.append([load, mix, f"{v['eq5_mit_s']:.2f}", f"{v['mit_s']:.2f}",
                         f"{v['measured']:.3f}", f"{rd['job-one-stream']:.2f}"])
        md += ["## Calibration (RR, pdt 0.5, mfreq 100 ms, seed 101)\n",
               *markdown_table(["mem_load", "class mix", "eq. 5 mit [s]", "calibrated mit [s]",
                                "measured mem_load", "tasks/node, job-one-stream reading"],
                               rows), ""]
    for part in (*PARTS[1:], "tpn"):
        path = out / f"{part}.json"
        if not path.exists():
            continue
        res = {k: v["metrics"] for k, v in json.loads(path.read_text()).items()}
        rows = [[k, len(v["correlation"]), *(_fmt(v[m], 1 if m == "correlation" else 2)
                                              for m in METRICS)] for k, v in res.items()]
        md += [f"## {part}\n", *markdown_table(["point", "seeds", *METRICS], rows), ""]
    if (out / "idle.json").exists():
        md += ["## idle: CSM's distributed insertions at mem_load 1.0 (seed 0, MNOD 2)\n",
               *markdown_table(["mfreq [ms]", "distributed insertions",
                                "idle CPU, empty RQ (line 3) [%]",
                                "PRED would choose another position [%]",
                                "busy-node paths line 5 / CSM mode / predictive [%]",
                                "tasks/node", "events", "CPU [s], Python engine"],
                               _idle_rows(json.loads((out / "idle.json").read_text()))), ""]
    if rows := _cost_rows(out):
        md += ["## Cost per point (compiled engine, nice 10, all seeds of the point)\n",
               *markdown_table(["part/point", "CPU [s]", "CPU per seed [s]", "wall [s]",
                                "load average at its end"], rows), ""]
    return "\n".join(md)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--parts", nargs="+", choices=(*PARTS, *EXTRA), default=list(PARTS[1:]),
                    help="what to run, in this order (default: every grid, not tpn or idle)")
    ap.add_argument("--mfreq", nargs="+", type=float, default=list(MFREQ),
                    help="mfreq grid of load1, load15 and mnod in ms, a subset of "
                         f"{' '.join(map(str, MFREQ))} (a subset writes its own directory)")
    ap.add_argument("--scale", type=float, default=SCALE,
                    help="multiply every tc and memory size by this, 0 < s <= 1 (default 1: "
                         "the paper's sizes; another scale writes results/mixed-scale<s>)")
    ap.add_argument("--out", help="write into this directory instead of results/mixed")
    a = ap.parse_args(argv)
    if not (math.isfinite(a.scale) and 0 < a.scale <= 1):
        print(f"error: --scale must be in (0, 1], got {a.scale:g}", file=sys.stderr)
        return 2
    if a.seeds < 1:
        print(f"error: --seeds must be at least 1, got {a.seeds}", file=sys.stderr)
        return 2
    try:  # the scaled sizes are rounded to whole pages: a large task must still fit in M
        base(1.0, a.scale)
    except ValueError as e:
        print(f"error: --scale {a.scale:g}: {e}", file=sys.stderr)
        return 2
    bad = [f for f in a.mfreq if f not in MFREQ]
    if bad or len(set(a.mfreq)) != len(a.mfreq):
        print(f"error: --mfreq must list distinct values of {' '.join(map(str, MFREQ))}, "
              f"got {' '.join(f'{f:g}' for f in a.mfreq)}", file=sys.stderr)
        return 2
    mfreq = tuple(f for f in MFREQ if f in a.mfreq)
    out = Path(a.out) if a.out else out_dir(a.scale, a.seeds, mfreq)
    out.mkdir(parents=True, exist_ok=True)
    needs = {"calib": (1.0, 1.5, 0.7), "load1": (1.0,), "load15": (1.5,), "low": (0.7,),
             "mnod": (1.0,), "idle": (1.0,), "tpn": (0.7, 1.0, 1.5)}
    setup = _Setup(out, a.seeds, a.scale, mfreq)
    print(f"== scale {a.scale:g}, {a.seeds} seeds -> {out}", flush=True)
    for part in a.parts:  # each part calibrates only the loads it needs, when it starts
        for load in needs[part]:
            calibrate(out, load, a.scale)
        write_atomic(out / "README.md", report(out, a.seeds, a.scale, mfreq))
        if part == "calib":
            continue
        print(f"== {part}", flush=True)
        if part == "idle":
            idle(setup, out)
            continue
        run_part(setup, out, part)
        write_atomic(out / "README.md", report(out, a.seeds, a.scale, mfreq))
    write_atomic(out / "README.md", report(out, a.seeds, a.scale, mfreq))
    return 0


if __name__ == "__main__":
    sys.exit(main())
