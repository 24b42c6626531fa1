"""Reproduction of Leinberger, Karypis & Kumar (1999): one command per figure.

    python -m sim.experiments.leinberger.figs fig1            # Figure 1 epochs
    python -m sim.experiments.leinberger.figs fig2            # Figures 2 and 3 (same runs)
    python -m sim.experiments.leinberger.figs gaps            # per-decision and epoch gaps
    python -m sim.experiments.leinberger.figs response        # online policies / offline optimum

Each writes ``<name>.md`` (the paper's numbers or trends beside ours), ``<name>.json``
and a PNG. The full configuration writes to ``sim/experiments/leinberger/results/``; any
option that reduces it (``--jobs``, ``--seeds``, ``--K``, ...) makes the run *partial*
and it must write elsewhere (``--out``, default ``results/kresource-partial``), saying so
in its table. An option the figure does not read (:func:`options_read`, derived from its
code) is refused before anything is written.

Figures 2/3 metrics (spec 1.3): ART = mean response time; WART = mean of
``w_j * response_j`` with ``w_j = sum_k r_jk / C_k * runtime_j`` (AMB-1.10 (b)); both
over the jobs between the first and last 10% by arrival (AMB-1.12); gain =
``(M_FF-EASY - M_X) / M_FF-EASY`` in % (AMB-1.11), per seed on the same job list and
arrival times (common random numbers), mean and 95% t-interval over seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.batch.machine import ENGINES
from sim.experiments import common
from sim.experiments.common import ROOT, label_colours, markdown_row, markdown_table, pyplot
from sim.experiments.reads import EVERYTHING, reads
from sim.stats import mean_ci

FULL_DIR = Path(__file__).resolve().parent / "results"
PARTIAL_DIR = Path("results") / "kresource-partial"
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"

FULL = {"jobs": 10000, "seeds": 5, "K": [2, 4, 8], "dists": ["uniform", "exponential"],
        "queues": [64, 128, 256], "scalings": ["G-b", "G-a"], "opt_easy": True}

STATIONARY = dict(FULL, jobs=40000, opt_easy=False, stationarity=0.15, warmup=0.25,
                  engine="compiled")
"""The stationary protocol of Figures 2/3 (``--protocol stationary``; REPORT "Stationary
calibration"): 40,000 jobs, the first 25% a warm-up left out of the queue window and of
the metrics, a rate accepted only when the two halves of the measured window are within
15% of the target and of each other; OPT-EASY (no compiled version) left out. The engine
does not change a result."""
STATIONARY_DIR = FULL_DIR / "stationary"
STATIONARY_STORE = Path("results") / "kresource-store-stationary"
IDENTITY = (*FULL, "stationarity", "warmup")
"""The configuration keys that decide the results (``engine`` does not)."""
IDENTITY_DEFAULTS = {"stationarity": None, "warmup": 0.0}

# Figure 2/3 policies: (label, registered policy, options)
POLICIES = [("FF-EASY", "easy", {"select": "ff"}), ("BL-EASY", "easy", {"select": "bl"}),
            ("BB-EASY", "easy", {"select": "bb"}),
            ("BB-EASY-nofull", "easy", {"select": "bb", "fullness": "none"}),
            ("FF-CONS", "conservative", {"select": "ff"}), ("OPT-EASY", "opt-easy", {})]
# BB-EASY is the paper's score read as balance x fullness (AMB-1.2 (a), the default);
# BB-EASY-nofull is the balance alone (AMB-1.2 without the modifier)


def _t95(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% t-interval (NaN with fewer than two values)."""
    m, hw, _ = mean_ci(xs)
    return m, hw


def _policy(name: str, opts: dict[str, Any]) -> Any:
    """The registered policy, or None when this build lacks the option (the ``select``
    policies come from the batch branch)."""
    from sim.registry import make_policy, policy_options

    accepted = policy_options(name)
    if opts and accepted is not None and not set(opts) <= accepted:
        if set(opts) == {"select"} and opts["select"] == "ff":
            return make_policy(name)  # today's EASY/conservative are FF
        return None
    return make_policy(name, **opts)


# ---------------------------------------------------------------------------- fig1
def fig1(out: Path, partial: bool) -> dict[str, Any]:
    from heuristics.kresource import pack_epochs
    from models.kresource.brute import optimal_partitions
    from models.kresource.cpsat import solve_epochs
    from sim.problems.kresource import load

    p = load(FIG1)
    opt = solve_epochs(p, greedy_bound=False)
    schemes = {"FCFS": pack_epochs(p, "fcfs"), "FCFS/FF": pack_epochs(p, "fcfs-ff"),
               "UNC (optimal, CP-SAT)": opt.solution}
    extra = {"FCFS/BL-EASY": pack_epochs(p, "fcfs-bl"), "FCFS/BB-EASY": pack_epochs(p, "fcfs-bb"),
             "BL-only (unconstrained)": pack_epochs(p, "unc-bl"),
             "BB-only, no fullness": pack_epochs(p, "unc-bb", "none"),
             "BB-only, fullness x balance": pack_epochs(p, "unc-bb", "mult")}
    paper = {"FCFS": [("0, 1", "12/06"), ("2", "07/16"), ("3, 4", "12/32"), ("5", "01/10")],
             "FCFS/FF": [("0,1,4,5", "14/28"), ("2", "07/16"), ("3", "11/20")],
             "UNC (optimal, CP-SAT)": [("0, 2, 4", "16/32"), ("1, 3, 5", "16/32")]}
    parts = optimal_partitions(p, int(opt.objective))

    def pm(e: list[int]) -> str:
        u = p.usage(e)
        return f"{u[0]:02d}/{u[1]:02d}"

    lines = ["# Figure 1: jobs per scheduling epoch (16 CPUs, 32 GB; six jobs of spec 1.6)", "",
             f"Produced at {common.stamp()}.", "",
             *markdown_table(["scheme", "epochs (paper)", "epochs (ours)",
                              "paper: jobs P/M per epoch", "ours: jobs P/M per epoch"], [])]
    for name, sol in schemes.items():
        lines.append(markdown_row([
            name, len(paper[name]), len(sol), "; ".join(f"{{{j}}} {m}" for j, m in paper[name]),
            "; ".join(f"{{{', '.join(map(str, e))}}} {pm(e)}" for e in sol)]))
    lines += ["", f"CP-SAT status {opt.status.value}, lower bound max_k ceil(sum r_k/C_k) = "
              f"{p.lower_bound()}; optimal {int(opt.objective)}-epoch partitions found by "
              f"enumeration: {len(parts)} ({parts}) -> unique: {len(parts) == 1}.", "",
              "Variants computed here (not in the paper; spec 1.6 [D]):", "",
              *markdown_table(["scheme", "epochs", "epochs (jobs P/M)"], [])]
    for name, sol in extra.items():
        lines.append(markdown_row([
            name, len(sol), "; ".join(f"{{{', '.join(map(str, e))}}} {pm(e)}" for e in sol)]))
    scores = _fig1_bb_scores(p)
    lines += ["", "BB scores at the first backfill decision (spec 1.6 [D]: FCFS has started "
              "jobs 0 and 1; the candidates are the waiting jobs that fit; lower is better):",
              "", *markdown_table(["candidate", "demand P/M", "score", "spec"], [])]
    for j, score in scores.items():
        d = p.demands[j]
        lines.append(markdown_row([f"job {j}", f"{d[0]}/{d[1]}", f"{score:.6f}",
                                   f"{FIG1_BB_SPEC[j]:.6f}"]))
    data = {"schemes": schemes, "variants": extra, "optimal_status": opt.status.value,
            "optimal_partitions": parts, "bb_scores": scores, "partial": partial}
    _write(out, "fig1", lines, data)
    _plot_bars(out / "fig1.png", {k: len(v) for k, v in {**schemes, **extra}.items()},
               "Figure 1: epochs to schedule the six jobs", "epochs")
    return data


#: the spec's BB scores of jobs 4 and 5 at Figure 1's first backfill decision (spec 1.6
#: [D], computed there from the paper's formulas; acceptance target 1)
FIG1_BB_SPEC = {4: 0.369318, 5: 0.425595}


def _fig1_bb_scores(p: Any) -> dict[int, float]:
    """BB's score (``heuristics.selection.BackfillBalanced``, fullness x balance) of each
    waiting job that fits beside jobs 0 and 1, the two FCFS starts first."""
    from heuristics.kresource import _Item
    from heuristics.selection import BackfillBalanced

    used = p.usage([0, 1])
    free = tuple(c - u for c, u in zip(p.capacity, used, strict=True))
    fits = [j for j in range(2, len(p.demands))
            if all(d <= f for d, f in zip(p.demands[j], free, strict=True))]
    scores = BackfillBalanced().scores([_Item(p.demands[j]) for j in fits], free, p.capacity)
    return dict(zip(fits, scores, strict=True))


# ---------------------------------------------------------------------------- fig2/3
def _metrics(w: Any, s: Any, skip: int = 0) -> tuple[float, float]:
    """ART and WART (seconds) over the jobs between the first 10% (or the first ``skip``
    jobs, the calibration's warm-up, when more) and the last 10% by arrival."""
    n = len(w.jobs)
    lo, hi = max(n // 10, skip), n - n // 10
    cap = np.array(w.capacity, float)
    submit = np.array([j.submit for j in w.jobs])
    resp = (s.end - submit)[lo:hi]
    wt = np.array([sum(np.array(j.demand) / cap) * j.runtime for j in w.jobs])[lo:hi]
    return float(resp.mean()), float((wt * resp).mean())


STORE_DIR = Path("results") / "kresource-store"
"""Per-(cell, seed) results of Figures 2/3 (git-ignored, relative to the working
directory): one JSON file per unit, written when the unit is done, so a stopped run is
continued by running the same command again."""


def unit_key(scaling: str, K: int, dist: str, L: int, jobs: int, seed: int) -> str:
    """File stem of one (cell, seed) unit in the store."""
    return f"{scaling}_K{K}_{dist}_L{L}_n{jobs}_s{seed}"


def _atomic_write(path: Path, data: Any) -> None:
    common.write_atomic(path, json.dumps(data, indent=1, default=str))


def run_units(task: dict[str, Any]) -> list[str]:
    """Compute the missing units of one (scaling, K, dist, seed) for every queue length
    of ``task["queues"]`` (calibrations first, sharing their baseline simulations through
    the calibration memo), writing each unit to ``task["store"]`` as soon as it is done.
    Returns the keys written. Runs in a worker process."""
    from instances.kresource import KResourceSpec, generate
    from sim.batch.calibrate import calibrate, warmup_jobs
    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    store = Path(task["store"])
    engine, warmup = task.get("engine", "python"), task.get("warmup", 0.0)
    scaling, K, dist, seed, jobs = (task[k] for k in ("scaling", "K", "dist", "seed", "jobs"))
    spec = KResourceSpec(K=K, dist=dist, scaling=scaling, jobs=jobs, seed=seed)
    memo: dict = {}
    done = []
    for L in task["queues"]:
        key = unit_key(scaling, K, dist, L, jobs, seed)
        path = store / f"{key}.json"
        unit = json.loads(path.read_text()) if path.exists() else None
        labels = [lab for lab, _, _ in POLICIES if lab != "OPT-EASY" or task["opt_easy"]]
        if unit is not None and ("failed" in unit["calibration"]
                                 or all(_current(unit, lab) for lab in labels)):
            continue
        if unit is None:
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                cal = calibrate(spec, L, memo=memo, stationarity=task.get("stationarity"),
                                warmup=warmup, engine=engine)
                c = {"seed": seed, "rate": cal.rate, "queue": cal.queue,
                     "iterations": cal.iterations, "halves": [cal.first_half, cal.second_half],
                     "stationarity": cal.stationarity, "stationary": cal.stationary,
                     "warmup": cal.warmup, "engine": engine}
            except ValueError as exc:  # reported, the seed is left out of the gains
                c = {"seed": seed, "failed": str(exc)}
            c["wall_s"] = time.perf_counter() - t0
            c["cpu_s"] = time.process_time() - c0
            unit = {"key": key, "scaling": scaling, "K": K, "dist": dist, "queue": L,
                    "jobs": jobs, "seed": seed, "calibration": c, "policies": {},
                    "commits": [task["commit"]], "command": task["command"]}
            _atomic_write(path, unit)
            if "failed" in c:
                continue
        elif task["commit"] not in unit["commits"]:
            unit["commits"].append(task["commit"])
        w = generate(replace(spec, rate=unit["calibration"]["rate"]))
        for label, name, opts in POLICIES:
            if label not in labels or _current(unit, label):
                continue
            pol = _policy(name, opts)
            if pol is None:
                continue
            eng = _engine_for(pol, w, engine)
            t0, c0 = time.perf_counter(), time.process_time()
            s = simulate(w, pol, engine=eng)
            validate(s)
            art, wart = _metrics(w, s, warmup_jobs(len(w.jobs), warmup))
            d = {"art": art, "wart": wart, "sim_s": s.sim_seconds,
                 "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0,
                 "params": _jsonable(getattr(pol, "params", {})), "commit": task["commit"],
                 "engine": eng}
            if hasattr(pol, "stats"):
                d["stats"] = dict(pol.stats)
            unit["policies"][label] = d
            _atomic_write(path, unit)
        done.append(key)
        print(f"unit {key} done: " + ", ".join(
            f"{lab} {v['art']:.0f}" for lab, v in unit["policies"].items()),
            file=sys.stderr, flush=True)
    return done


def _engine_for(policy: Any, workload: Any, engine: str) -> str:
    """``engine`` when it runs ``policy`` ("compiled" only for the policies the compiled
    engine implements, :func:`sim.batch.fast.support.unsupported`; it gives the Python
    engine's schedule), else "python"."""
    if engine == "python":
        return engine
    from sim.batch.fast.support import unsupported

    return engine if unsupported(policy, workload) is None else "python"


def _warm() -> None:
    """Pool initializer: import every module a unit needs, so a worker runs the code as
    it was when the run started (the units record that commit) even if the files
    change while it runs (the workers live for the whole run)."""
    import heuristics.kresource  # noqa: F401
    import instances.kresource  # noqa: F401
    import models.kresource.cpsat  # noqa: F401
    import sim.batch.calibrate  # noqa: F401
    import sim.batch.machine  # noqa: F401
    import sim.batch.validate  # noqa: F401

    try:
        import sim.batch.fast.run  # noqa: F401
    except ImportError:  # numba missing: engine="compiled" fails with its own message
        pass
    for _, name, opts in POLICIES:
        _policy(name, opts)
    from ortools.sat.python import cp_model  # noqa: F401


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _current(unit: dict[str, Any], label: str) -> bool:
    """Whether ``unit`` holds ``label``'s result computed with the policy's current
    parameters (a result of other parameters, or of a build that did not record them,
    is recomputed)."""
    v = unit["policies"].get(label)
    if v is None or "params" not in v:
        return False
    name, opts = next((n, o) for lab, n, o in POLICIES if lab == label)
    pol = _policy(name, opts)
    return pol is not None and _jsonable(getattr(pol, "params", {})) == v["params"]


def _tasks(cfg: dict[str, Any], store: Path, commit: str, command: str) -> list[dict]:
    """One task per (scaling, K, dist, seed), seed-major: a stopped run has the same
    seeds in every cell."""
    return [{"scaling": sc, "K": K, "dist": d, "seed": seed, "jobs": cfg["jobs"],
             "queues": cfg["queues"], "opt_easy": cfg["opt_easy"], "store": str(store),
             "commit": commit, "command": command, "stationarity": cfg.get("stationarity"),
             "warmup": cfg.get("warmup", 0.0), "engine": cfg.get("engine", "python")}
            for seed in range(1, cfg["seeds"] + 1) for sc in cfg["scalings"]
            for K in cfg["K"] for d in cfg["dists"]]


def fig2(out: Path, partial: bool, cfg: dict[str, Any], *, store: Path = STORE_DIR,
         workers: int = 2, max_minutes: float | None = None, run: bool = True,
         full_dir: Path = FULL_DIR) -> dict:
    """Figures 2 and 3: compute the missing units of ``cfg`` into ``store`` in a pool of
    ``workers`` processes (stopping after ``max_minutes`` of wall time, the units done
    kept), then write the tables from the store: to ``out`` when every unit of ``cfg``
    is there, else to the partial directory, marked PARTIAL."""
    import multiprocessing as mp

    store.mkdir(parents=True, exist_ok=True)
    commit = common.commit()
    command = "python -m sim.experiments.leinberger.figs " + " ".join(sys.argv[1:])
    t_start = time.perf_counter()
    if run:
        tasks = _tasks(cfg, store, commit, command)
        if workers <= 1:
            for t in tasks:
                run_units(t)
                if max_minutes is not None and time.perf_counter() - t_start > 60 * max_minutes:
                    break
        else:
            with mp.get_context("spawn").Pool(workers, initializer=_warm) as pool:
                res = [pool.apply_async(run_units, (t,)) for t in tasks]
                deadline = None if max_minutes is None else t_start + 60 * max_minutes
                for r in res:
                    left = None if deadline is None else max(0.0, deadline - time.perf_counter())
                    try:
                        r.get(timeout=left)
                    except mp.TimeoutError:
                        print(f"stopped after {max_minutes} min: the units done are kept in "
                              f"{store}; run the same command to continue", file=sys.stderr)
                        pool.terminate()
                        break
    rows, complete = _collect(cfg, store)
    if not complete:
        partial = True
        if out == full_dir:
            out = PARTIAL_DIR
    missing: set[str] = set()
    cost = run_cost(cfg, store)
    data = _fig23_write(out, cfg, partial, rows, missing, complete, cost)
    print(f"[{time.perf_counter() - t_start:.0f} s] tables in {out}"
          + ("" if complete else " (PARTIAL: units missing)"), file=sys.stderr)
    return data


def run_cost(cfg: dict[str, Any], store: Path) -> dict[str, Any]:
    """CPU seconds spent on the units of ``cfg`` in ``store`` and an estimate of what
    the missing ones need: each missing calibration or policy run costs the mean of the
    done ones of the same K and queue length (else of the same K, else of all)."""
    labels = ["calibration"] + [lab for lab, _, _ in POLICIES
                                if lab != "OPT-EASY" or cfg["opt_easy"]]
    done: dict[tuple, list[float]] = {}
    missing: list[tuple] = []
    units = full = 0
    for scaling in cfg["scalings"]:
        for K in cfg["K"]:
            for dist in cfg["dists"]:
                for L in cfg["queues"]:
                    for seed in range(1, cfg["seeds"] + 1):
                        units += 1
                        path = store / f"{unit_key(scaling, K, dist, L, cfg['jobs'], seed)}.json"
                        u = json.loads(path.read_text()) if path.exists() else None
                        if u is not None and "failed" in u["calibration"]:
                            full += 1
                            continue
                        ok = 0
                        for lab in labels:
                            if u is not None and lab == "calibration":
                                done.setdefault((K, L, lab), []).append(
                                    u["calibration"].get("cpu_s", float("nan")))
                                ok += 1
                            elif u is not None and _current(u, lab):
                                done.setdefault((K, L, lab), []).append(
                                    u["policies"][lab]["cpu_s"])
                                ok += 1
                            else:
                                missing.append((K, L, lab))
                        full += ok == len(labels)

    def est(K: int, L: int, lab: str) -> float:
        for keys in ([(K, L, lab)], [k for k in done if k[0] == K and k[2] == lab],
                     [k for k in done if k[2] == lab]):
            xs = [x for k in keys for x in done.get(k, []) if x == x]
            if xs:
                return statistics.fmean(xs)
        return float("nan")

    spent = sum(x for xs in done.values() for x in xs if x == x)
    left = sum(est(*m) for m in missing)
    per_label = {lab: sum(x for k, xs in done.items() if k[2] == lab for x in xs if x == x)
                 for lab in labels}
    return {"units": units, "units_complete": full, "cpu_spent_s": spent,
            "cpu_left_estimate_s": left, "cpu_spent_by_part_s": per_label}


def _collect(cfg: dict[str, Any], store: Path) -> tuple[list[dict], bool]:
    """Rows (one per cell, gains per seed aggregated) from the units in ``store``, and
    whether every unit of ``cfg`` is complete."""
    rows = []
    complete = True
    labels = [lab for lab, _, _ in POLICIES if lab != "OPT-EASY" or cfg["opt_easy"]]
    for scaling in cfg["scalings"]:
        for K in cfg["K"]:
            for dist in cfg["dists"]:
                for L in cfg["queues"]:
                    per: dict[str, dict[str, list[float]]] = {}
                    cals, commits, seeds = [], set(), []
                    for seed in range(1, cfg["seeds"] + 1):
                        path = store / f"{unit_key(scaling, K, dist, L, cfg['jobs'], seed)}.json"
                        if not path.exists():
                            complete = False
                            continue
                        u = json.loads(path.read_text())
                        cals.append(u["calibration"])
                        commits.update(u["commits"])
                        if "failed" in u["calibration"]:
                            continue
                        pols = {lab: v for lab, v in u["policies"].items()
                                if _current(u, lab)}
                        if not set(labels) <= set(pols):
                            complete = False
                        if "FF-EASY" not in pols:
                            continue
                        seeds.append(seed)
                        base = pols["FF-EASY"]
                        for lab in labels:
                            if lab not in pols:
                                continue
                            v = pols[lab]
                            d = per.setdefault(lab, {"art": [], "wart": [], "gain_art": [],
                                                     "gain_wart": [], "sim_s": [], "seeds": []})
                            d["art"].append(v["art"])
                            d["wart"].append(v["wart"])
                            d["gain_art"].append(100 * (base["art"] - v["art"]) / base["art"])
                            d["gain_wart"].append(100 * (base["wart"] - v["wart"])
                                                  / base["wart"])
                            d["sim_s"].append(v["sim_s"])
                            d["seeds"].append(seed)
                            if "stats" in v:
                                d.setdefault("not_proved", []).append(
                                    v["stats"].get("not_proved", 0))
                                d.setdefault("wall_stopped", []).append(
                                    v["stats"].get("wall_stopped", 0))
                    if not cals:
                        continue
                    row = {"scaling": scaling, "K": K, "dist": dist, "queue": L,
                           "calibration": cals, "commits": sorted(commits), "policies": {}}
                    for label, d in per.items():
                        row["policies"][label] = {
                            "gain_art": _t95(d["gain_art"]), "gain_wart": _t95(d["gain_wart"]),
                            "gain_art_seeds": d["gain_art"], "gain_wart_seeds": d["gain_wart"],
                            "seeds": d["seeds"],
                            "art": statistics.fmean(d["art"]),
                            "wart": statistics.fmean(d["wart"]),
                            "sim_seconds": statistics.fmean(d["sim_s"])}
                        if "not_proved" in d:
                            row["policies"][label]["not_proved"] = sum(d["not_proved"])
                            row["policies"][label]["wall_stopped"] = sum(d["wall_stopped"])
                    rows.append(row)
    return rows, complete


def _fig23_write(out: Path, cfg: dict, partial: bool, rows: list, missing: set,
                 complete: bool = True, cost: dict | None = None) -> dict:
    data = {"config": cfg, "partial": partial, "complete": complete, "rows": rows,
            "cost": cost,
            "missing_policies": sorted(missing),
            "commits": sorted({c for r in rows for c in r.get("commits", [])}),
            "written_by": common.commit(),
            "command": "python -m sim.experiments.leinberger.figs " + " ".join(sys.argv[1:])}
    for metric, fig in (("gain_art", "fig2"), ("gain_wart", "fig3")):
        _fig23_table(out, fig, metric, data)
    write_atomic(out / "fig2.json", json.dumps(data, indent=1))
    return data


PAPER_TRENDS = {
    "fig2": ["BB-EASY gain > 0 in all 18 cells, up to about 50%, mostly 10-50% (body text)",
             "BB gain uniform - exponential about +10 points",
             "BB gain grows with the queue length (load)",
             "BL gain falls with K and is negative at K = 8",
             "FF-CONS gain < 0 everywhere"],
    "fig3": ["BB-EASY gain > 0 in all cells, 10-30% (body) / up to 40% (summary)",
             "ART gain >= WART gain in most cells"],
}


def _fig23_table(out: Path, fig: str, metric: str, data: dict[str, Any]) -> None:
    rows = data["rows"]
    labels = [lab for lab, _, _ in POLICIES[1:] if any(lab in r["policies"] for r in rows)]
    what = "average" if metric == "gain_art" else "weighted average"
    cfg = data["config"]
    fig_cfg = {k: cfg[k] for k in (*IDENTITY, "engine") if k in cfg}
    state = ""
    if not data.get("complete", True):
        state = ("  \n**PARTIAL: the run has not computed every unit of this configuration "
                 "(seeds per cell in the `seeds` column); run the same command to continue**")
    elif data["partial"]:
        state = "  \n**PARTIAL run (reduced configuration)**"
    lines = [f"# Figure {fig[-1]}: % gain in {what} response time over FCFS/FF-EASY", "",
             f"Command: `{data.get('command', 'python -m sim.experiments.leinberger.figs fig2')}`"
             f" (config {json.dumps(fig_cfg)}); units computed at commit(s) "
             f"{', '.join(data.get('commits', [])) or '-'}; tables written at "
             f"{data.get('written_by', '-')}" + state, "",
             "Paper (text only, the plots were lost): " + "; ".join(PAPER_TRENDS[fig]) + ".",
             "", "Ours: mean gain over seeds +- 95% t half-width (gain = (M_FF-EASY - M_X) / "
             "M_FF-EASY, per seed on the same jobs and arrivals). OPT-EASY is EASY with the "
             "optimal backfill set at every decision (spec 1.8 M2; not in the paper).", "",
             *markdown_table(["scaling", "K", "dist", "queue", "seeds", *labels], [])]
    for r in rows:
        cells = []
        for lab in labels:
            v = r["policies"].get(lab)
            if v is None:
                cells.append("-")
            elif len(v.get("seeds", [0, 0])) > 1:
                cells.append(f"{v[metric][0]:+.1f} +- {v[metric][1]:.1f}")
            else:
                cells.append(f"{v[metric][0]:+.1f}")
        ns = len(r["policies"].get("FF-EASY", {}).get("seeds", []))
        lines.append(markdown_row([r["scaling"], r["K"], r["dist"], r["queue"], ns, *cells]))
    npr = [(r, r["policies"]["OPT-EASY"]["not_proved"]) for r in rows
           if "OPT-EASY" in r["policies"] and r["policies"]["OPT-EASY"].get("not_proved")]
    if npr:
        lines += ["", "OPT-EASY decisions not proved optimal (stopped by CP-SAT's "
                  "deterministic-time cap of 1.0, the best set found used; reproducible), "
                  "summed over seeds: "
                  + ", ".join(f"{r['scaling']} K={r['K']} {r['dist']} L={r['queue']}: {n}"
                              for r, n in npr) + "."]
    wall = sum(r["policies"]["OPT-EASY"].get("wall_stopped", 0) for r in rows
               if "OPT-EASY" in r["policies"])
    if wall:
        lines += ["", f"**{wall} OPT-EASY decisions were stopped by the 30 s wall-clock cap**: "
                  "those runs depend on the machine's load."]
    if data["missing_policies"]:
        lines += ["", f"Not run (policy options not in this build): "
                  f"{', '.join(data['missing_policies'])}."]
    wu, st = cfg.get("warmup", 0.0), cfg.get("stationarity")
    window = "the arrival window" if not wu else (
        f"the arrival window after a warm-up of the first {wu:.0%} of the jobs (left out of "
        "the metrics too)")
    lines += ["", f"Calibration (FF-EASY time-averaged queue over {window}, "
              "rate in jobs/s, iterations; first/second half of the window"
              + ("" if st is None else f"; a rate is accepted only when both halves are "
                 f"within {st:.0%} of the target and of each other, else the seed is left "
                 "out") + "):", "",
              *markdown_table(["scaling", "K", "dist", "target", "achieved (per seed)", "rate",
                               "iterations", "halves"], [])]
    failed = []
    for r in rows:
        c = [x for x in r["calibration"] if "failed" not in x]
        failed += [f"{r['scaling']} K={r['K']} {r['dist']} L={r['queue']} seed {x['seed']}: "
                   f"{x['failed']}" for x in r["calibration"] if "failed" in x]
        lines.append(markdown_row([
            r["scaling"], r["K"], r["dist"], r["queue"],
            ", ".join(f"{x['queue']:.1f}" for x in c), ", ".join(f"{x['rate']:.4g}" for x in c),
            ", ".join(str(x["iterations"]) for x in c),
            ", ".join(f"{x['halves'][0]:.0f}/{x['halves'][1]:.0f}" for x in c)]))
    if failed:
        lines += ["", "Calibrations that failed (those seeds are left out of the gains):", ""]
        lines += [f"- {f}" for f in failed]
    lines += ["", _trend_checks(rows, metric)]
    c = data.get("cost")
    if c:
        lines += ["", f"Run state: {c['units_complete']}/{c['units']} units (cell x seed) "
                  f"complete; CPU spent {c['cpu_spent_s'] / 3600:.2f} h ("
                  + ", ".join(f"{k} {v / 3600:.2f} h" for k, v in c["cpu_spent_by_part_s"].items())
                  + f"); estimated CPU still needed {c['cpu_left_estimate_s'] / 3600:.2f} h "
                  "(each missing part at the mean CPU of the done ones of the same K and "
                  "queue; divide by the free cores for wall time)."]
    _write(out, fig, lines, None)
    _plot_gains(out / f"{fig}.png", rows, labels, metric,
                f"Figure {fig[-1]}: % gain in {what} response time")


def _trend_checks(rows: list[dict], metric: str) -> str:
    """Spec 1.7 items 2-9, checked on the mean gain over seeds of each cell, per scaling
    (AMB-1.14: both are reported), for BB-EASY under the product reading (AMB-1.2 (a))
    and, where it differs, the balance alone. ``metric`` is the table's own metric; the
    checklist uses ART and WART as each item says."""

    def g(r: dict, lab: str, m: str) -> float | None:
        v = r["policies"].get(lab)
        return None if v is None else v[m][0]

    def frac(xs: list[bool]) -> str:
        return f"{sum(xs)}/{len(xs)}"

    out = ["Acceptance checks of spec 1.7, computed from the cell means (n/m = cells or "
           "series that meet the item, of those with data):", ""]
    for scaling in sorted({r["scaling"] for r in rows}, reverse=True):
        rs = [r for r in rows if r["scaling"] == scaling]
        out.append(f"**{scaling}** ({len(rs)} cells)")
        out.append("")
        cal = [abs(c["queue"] - r["queue"]) <= 0.05 * r["queue"]
               for r in rs for c in r["calibration"] if "queue" in c]
        out.append(f"- 2. calibration within 5% of the target queue: {frac(cal)} "
                   "calibrations")
        stat = [c["stationary"] for r in rs for c in r["calibration"] if "stationary" in c]
        tried = [c for r in rs for c in r["calibration"]
                 if c.get("stationarity") is not None or "no stationary" in c.get("failed", "")]
        if tried:
            out.append(f"- 2s. stationary calibration (halves within the tolerance): "
                       f"{sum(stat)}/{len(tried)} calibrations")
        for lab, name in (("BB-EASY", "BB (balance x fullness)"),
                          ("BB-EASY-nofull", "BB (balance alone)")):
            art = [(r, g(r, lab, "gain_art")) for r in rs if g(r, lab, "gain_art") is not None]
            wart = [(r, g(r, lab, "gain_wart")) for r in rs
                    if g(r, lab, "gain_wart") is not None]
            if not art:
                continue
            a = [v for _, v in art]
            w = [v for _, v in wart]
            out.append(f"- 3. {name} ART gain > 0: {frac([v > 0 for v in a])}; max "
                       f"{max(a):+.1f}% (target about 35-65%); in 10-50%: "
                       f"{frac([10 <= v <= 50 for v in a])}")
            out.append(f"- 4. {name} WART gain > 0: {frac([v > 0 for v in w])}; in 10-30%: "
                       f"{frac([10 <= v <= 30 for v in w])}; ART >= WART: "
                       f"{frac([x >= y for x, y in zip(a, w, strict=True)])}")
            by = {(r["K"], r["dist"], r["queue"]): v for r, v in art}
            diffs = [by[(K, "uniform", L)] - by[(K, "exponential", L)]
                     for (K, d, L) in by if d == "uniform" and (K, "exponential", L) in by]
            if diffs:
                out.append(f"- 5. {name} gain uniform - exponential in [+3, +20] points: "
                           f"{frac([3 <= x <= 20 for x in diffs])} (K, queue) pairs; mean "
                           f"{statistics.fmean(diffs):+.1f}")
            series = []
            for K in sorted({k for k, _, _ in by}):
                for d in sorted({d for _, d, _ in by}):
                    vs = [by[(K, d, L)] for L in sorted({q for _, _, q in by})
                          if (K, d, L) in by]
                    if len(vs) > 1:
                        series.append(all(x < y for x, y in pairwise(vs)))
            if series:
                out.append(f"- 6. {name} gain rises with the queue length (strictly): "
                           f"{frac(series)} (K, dist) series")
        bl = {(r["K"], r["dist"], r["queue"]): g(r, "BL-EASY", "gain_art") for r in rs
              if g(r, "BL-EASY", "gain_art") is not None}
        if bl:
            Ks = sorted({k for k, _, _ in bl})
            falls = []
            for d in sorted({d for _, d, _ in bl}):
                for L in sorted({q for _, _, q in bl}):
                    vs = [bl[(K, d, L)] for K in Ks if (K, d, L) in bl]
                    if len(vs) > 1:
                        falls.append(all(x > y for x, y in pairwise(vs)))
            kmax = Ks[-1]
            neg = [v < 0 for (K, _, _), v in bl.items() if K == kmax]
            neg256 = [v < 0 for (K, _, L), v in bl.items() if K == kmax and L == max(
                q for _, _, q in bl)]
            out.append(f"- 7. BL gain falls with K (strictly): {frac(falls)} (dist, queue) "
                       f"series; BL gain < 0 at K = {kmax}: {frac(neg)} cells, at the "
                       f"longest queue: {frac(neg256)}")
        cons = [g(r, "FF-CONS", "gain_art") for r in rs if g(r, "FF-CONS", "gain_art")
                is not None]
        if cons:
            out.append(f"- 8. FF-CONS gain < 0: {frac([v < 0 for v in cons])}")
        order = [g(r, "BB-EASY", "gain_art") > 0 > max(g(r, "BL-EASY", "gain_art"),
                                                       g(r, "FF-CONS", "gain_art"))
                 for r in rs if all(g(r, x, "gain_art") is not None
                                    for x in ("BB-EASY", "BL-EASY", "FF-CONS"))]
        if order:
            out.append(f"- 9. BB > FF-EASY (0) > both BL and FF-CONS: {frac(order)} cells")
        out.append("")
    return "\n".join(out).rstrip()


# ---------------------------------------------------------------------------- gaps
def gaps(out: Path, partial: bool, cfg: dict[str, Any]) -> dict[str, Any]:
    from heuristics.kresource import EPOCH_RULES, pack_epochs, select_greedy
    from instances.kresource import KResourceSpec, generate
    from models.kresource.cpsat import solve_epochs, solve_selection, wall_decided
    from models.kresource.policy import OptEASY
    from sim.batch.calibrate import calibrate
    from sim.batch.machine import simulate
    from sim.problems.kresource import EpochProblem

    # (a) per-decision gap: every decision of an OPT-EASY run that reached the solver
    dec = {}
    for K in cfg["K"]:
        spec = KResourceSpec(K=K, dist="uniform", jobs=cfg["gap_jobs"], seed=1)
        cal = calibrate(spec, cfg["gap_queue"])
        w = generate(replace(spec, rate=cal.rate))
        pol = OptEASY(record=True, time_limit=cfg["decision_guard"],
                      deterministic_limit=cfg["decision_dtime"])
        simulate(w, pol)
        stats = {s: {"gap": [], "count_gap": []} for s in ("ff", "bl", "bb")}
        for p in pol.decisions:
            r = solve_selection(p)  # no limit: proved (deterministic, one worker)
            if r.status.value != "OPTIMAL":
                raise RuntimeError(f"selection re-solve ended {r.status.value}: {r.note}")
            wopt = p.work(r.solution)
            for s in stats:
                h = select_greedy(p, s)
                stats[s]["gap"].append((wopt - p.work(h)) / wopt if wopt > 0 else 0.0)
                stats[s]["count_gap"].append(len(r.solution) - len(h))
        dec[K] = {"decisions": pol.stats["decisions"], "solved": len(pol.decisions),
                  "not_proved": pol.stats["not_proved"],
                  "wall_stopped": pol.stats["wall_stopped"],
                  **{s: {"mean_gap": float(np.mean(v["gap"])) if v["gap"] else 0.0,
                         "p50": float(np.percentile(v["gap"], 50)) if v["gap"] else 0.0,
                         "p90": float(np.percentile(v["gap"], 90)) if v["gap"] else 0.0,
                         "p99": float(np.percentile(v["gap"], 99)) if v["gap"] else 0.0,
                         "frac_optimal": float(np.mean(np.array(v["gap"]) <= 1e-12))
                         if v["gap"] else 1.0,
                         "mean_count_gap": float(np.mean(v["count_gap"])) if v["gap"] else 0.0}
                     for s, v in stats.items()}}
    # (b) epoch gap over random instances of the paper's workload
    ep = {}
    for K in cfg["K"]:
        # a 32-processor Feitelson machine (4 units per processor): on the 128-processor
        # one, 20-60 jobs fill only 1-3 epochs and every rule is optimal
        w = generate(KResourceSpec(K=K, dist="uniform", jobs=4000, seed=7, P=32, resolution=4))
        rng = np.random.default_rng(K)
        res = {r: [] for r in EPOCH_RULES}
        proved = wall = 0
        for _ in range(cfg["epoch_instances"]):
            n = int(rng.integers(20, 61))
            a = int(rng.integers(0, len(w.jobs) - n))
            p = EpochProblem(w.capacity, tuple(j.demand for j in w.jobs[a:a + n]))
            r = solve_epochs(p, time_limit=cfg["epoch_guard"],
                             deterministic_limit=cfg["epoch_dtime"])
            proved += r.status.value == "OPTIMAL"
            wall += wall_decided(r)
            for rule in EPOCH_RULES:
                res[rule].append((len(pack_epochs(p, rule)) - r.objective) / r.objective)
        ep[K] = {"instances": cfg["epoch_instances"], "proved": proved, "wall_stopped": wall,
                 **{rule: {"mean_gap": float(np.mean(v)), "max_gap": float(np.max(v)),
                           "frac_optimal": float(np.mean(np.array(v) <= 0))}
                    for rule, v in res.items()}}
    lines = ["# Gaps to the exact models", "",
             f"Produced at {common.stamp()}."
             + ("  \n**PARTIAL run (reduced configuration)**" if partial else ""), "",
             "Not in the paper (its exact UNC is only the Figure 1 example).", "",
             *_gap_limits(cfg, dec, ep), "",
             f"## Per-decision gap to the optimal selection ({cfg['gap_jobs']} jobs, uniform, "
             f"FF-EASY queue {cfg['gap_queue']}, decisions of an OPT-EASY run that needed "
             "the solver)", "",
             "Gap = (optimal work - heuristic work) / optimal work, work = sum_k r_k/C_k of the "
             "started jobs.", "",
             *markdown_table(["K", "decisions", "solver decisions", "rule", "mean gap", "p50",
                              "p90", "p99", "fraction optimal", "mean jobs fewer"], [])]
    for K, d in dec.items():
        for s in ("ff", "bl", "bb"):
            v = d[s]
            lines.append(markdown_row([
                K, d["decisions"], d["solved"], s.upper(), f"{v['mean_gap']:.3f}",
                f"{v['p50']:.3f}", f"{v['p90']:.3f}", f"{v['p99']:.3f}",
                f"{v['frac_optimal']:.3f}", f"{v['mean_count_gap']:+.2f}"]))
    lines += ["", f"## Epoch gap to the minimum ({cfg['epoch_instances']} random instances of "
              "20-60 consecutive jobs per K, uniform G-b, 32-processor machine)", "",
              *markdown_table(["K", "proved", "rule", "mean gap", "max gap",
                               "fraction optimal"], [])]
    for K, d in ep.items():
        for rule in EPOCH_RULES:
            v = d[rule]
            lines.append(markdown_row([
                K, f"{d['proved']}/{d['instances']}", rule, f"{v['mean_gap']:.3f}",
                f"{v['max_gap']:.3f}", f"{v['frac_optimal']:.2f}"]))
    config = {"K": cfg["K"], "gap_jobs": cfg["gap_jobs"], "gap_queue": cfg["gap_queue"],
              "decision_dtime": cfg["decision_dtime"], "decision_guard": cfg["decision_guard"],
              "epoch_instances": cfg["epoch_instances"], "epoch_dtime": cfg["epoch_dtime"],
              "epoch_guard": cfg["epoch_guard"]}   # the keys it reads, no other
    data = {"config": config, "partial": partial, "decisions": dec, "epochs": ep}
    _write(out, "gaps", lines, data)
    _plot_bars(out / "gaps.png", {f"K={K} {r}": ep[K][r]["mean_gap"] for K in ep
                                  for r in ("fcfs", "fcfs-ff", "fcfs-bb", "unc-bb")},
               "Mean epoch gap to the minimum", "gap")
    return data


def _gap_limits(cfg: dict[str, Any], dec: dict[int, dict], ep: dict[int, dict]) -> list[str]:
    """The paragraph of ``gaps.md`` on the solvers' limits: the deterministic limits and
    wall-clock guards of ``cfg``, the OPT-EASY decisions the deterministic limit stopped
    and the calls the wall clock decided (per K, from ``dec`` and ``ep``)."""
    stopped = ", ".join(f"K = {K}: {d['not_proved'] - d['wall_stopped']}"
                        for K, d in dec.items())
    wall = [f"OPT-EASY K = {K}: {d['wall_stopped']}" for K, d in dec.items()
            if d["wall_stopped"]]
    wall += [f"epochs K = {K}: {d['wall_stopped']}" for K, d in ep.items() if d["wall_stopped"]]
    guard = ("**the wall-clock guard stopped no call** (these files are the same on any "
             "machine and load)" if not wall else
             "**the wall-clock guard stopped calls, so these files depend on the machine "
             f"and its load**: {'; '.join(wall)}")
    return [f"Limits: CP-SAT (one worker, seed 0) stops at a deterministic time (its own "
            f"work units, about seconds on an idle machine): {cfg['decision_dtime']:g} per "
            f"OPT-EASY decision (wall-clock guard {cfg['decision_guard']:g} s), "
            f"{cfg['epoch_dtime']:g} per epoch instance (guard {cfg['epoch_guard']:g} s). "
            "Each solver decision of the OPT-EASY run is solved again without a limit "
            "(all proved) for the first table. OPT-EASY decisions stopped by the "
            f"deterministic limit (the best set found used): {stopped}; {guard}."]


# ---------------------------------------------------------------------------- response
def response_instance(n: int, K: int, seed: int, time_unit: int = 300,
                      load: float = 3.0, P: int = 16) -> Any:
    """``n`` consecutive jobs of a generated K-resource workload (uniform, G-b, a
    ``P``-processor Feitelson machine, one unit per processor), run
    times in ``time_unit`` seconds (ceil), Poisson arrivals rescaled so that the offered
    load in the busiest resource over the arrival span is ``load`` (a congested
    stretch: at load < 1 every policy starts every job at once), as a
    :class:`ResponseProblem` with weights 1. Times in ``time_unit``."""
    from instances.kresource import KResourceSpec, generate
    from sim.problems.kresource import ResponseProblem

    w = generate(KResourceSpec(K=K, jobs=max(2000, 4 * n), seed=seed, rate=0.01, P=P,
                               resolution=1))
    a = len(w.jobs) // 2
    js = w.jobs[a:a + n]
    dur = tuple(max(1, -(-j.runtime // time_unit)) for j in js)
    cap = w.capacity
    work = max(sum(d * j.demand[k] for d, j in zip(dur, js, strict=True)) / cap[k]
               for k in range(K))
    span = max(1, js[-1].submit - js[0].submit)
    scale = (work / load) / span
    rel = tuple(int((j.submit - js[0].submit) * scale) for j in js)
    return ResponseProblem(cap, rel, dur, tuple(j.demand for j in js),
                           name=f"response-n{n}-K{K}-s{seed}-load{load}")


def replay(problem: Any, label: str, name: str, opts: dict[str, Any]) -> float | None:
    """Objective of an online policy replayed on ``problem`` (exact estimates), or None
    when the policy is not in this build."""
    from instances.job import Job, Workload
    from sim.batch.machine import simulate
    from sim.problems.kresource import objective

    pol = _policy(name, opts)
    if pol is None:
        return None
    order = sorted(range(problem.n), key=lambda j: (problem.release[j], j))
    jobs = tuple(Job(id=j, submit=problem.release[j], runtime=problem.duration[j],
                     requested=problem.duration[j], demand=problem.demands[j]) for j in order)
    s = simulate(Workload(jobs=jobs, capacity=problem.capacity), pol)
    starts = [0] * problem.n
    for i, j in enumerate(order):
        starts[j] = int(s.start[i])
    return objective(problem, starts)


def response(out: Path, partial: bool, cfg: dict[str, Any]) -> dict[str, Any]:
    from models.kresource.portfolio import solve_response

    rows = []
    for seed in range(1, cfg["response_seeds"] + 1):
        p = response_instance(cfg["response_jobs"], cfg["response_K"], seed)
        r = solve_response(p, time_limit=cfg["response_limit"])
        ref = r.objective if r.status.value == "OPTIMAL" else r.bound
        row = {"seed": seed, "status": r.status.value, "optimum": r.objective,
               "bound": r.bound, "gap": r.gap, "runtime": r.runtime, "ratios": {}}
        for label, name, opts in [("FCFS", "fcfs", {})] + POLICIES:
            v = replay(p, label, name, opts)
            if v is not None and ref:
                row["ratios"][label] = v / ref
        rows.append(row)
    labels = [lab for lab in ["FCFS"] + [p[0] for p in POLICIES]
              if any(lab in r["ratios"] for r in rows)]
    lines = ["# Online policies against the offline minimum total response time", "",
             f"Produced at {common.stamp()}."
             + ("  \n**PARTIAL run (reduced configuration)**" if partial else ""), "",
             f"{cfg['response_jobs']} consecutive jobs, K = {cfg['response_K']}, of the "
             "workload on a 16-processor Feitelson machine, times in 5-minute units (ceil), "
             "arrivals compressed to offered load 3 (`response_instance`); ratio = policy's "
             "total response time / optimum of the portfolio (time-indexed CBC, then CP-SAT; or "
             "bound when not proved, marked *). Not in the paper.", "",
             *markdown_table(["seed", "exact status (portfolio)", "gap", "solve [s]", *labels],
                             [])]
    for r in rows:
        star = "" if r["status"] == "OPTIMAL" else "*"
        lines.append(markdown_row([
            r["seed"], r["status"], f"{r['gap'] or 0:.3f}", f"{r['runtime']:.1f}",
            *(f"{r['ratios'][lab]:.3f}{star}" if lab in r["ratios"] else "-"
              for lab in labels)]))
    config = {"response_jobs": cfg["response_jobs"], "response_K": cfg["response_K"],
              "response_seeds": cfg["response_seeds"],
              "response_limit": cfg["response_limit"]}   # the keys it reads, no other
    data = {"config": config, "partial": partial, "rows": rows}
    _write(out, "response", lines, data)
    return data


# ---------------------------------------------------------------------------- output
def _write(out: Path, name: str, lines: list[str], data: dict | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / f"{name}.md", "\n".join(lines) + "\n")
    if data is not None:
        write_atomic(out / f"{name}.json", json.dumps(data, indent=1, default=str))
    print("\n".join(lines))


def _plot_bars(path: Path, values: dict[str, float], title: str, ylabel: str) -> None:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(values)), 4))
    ax.bar(range(len(values)), list(values.values()))
    ax.set_xticks(range(len(values)), list(values), rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


EASY_LABELS = ("BL-EASY", "BB-EASY", "BB-EASY-nofull", "OPT-EASY")
"""Drawn on the shared scale of Figures 2/3; FF-CONS (tens to hundreds of percent below
zero) gets its own row so that it does not squash them."""
SCALING_STYLE = {"G-b": "-", "G-a": "--"}


#: a cell whose gain rests on fewer seeds than this is drawn hollow with its seed count
#: and does not set the y-range (a 1-2-seed mean or interval can dwarf every other cell)
FEW_SEEDS = 3


def seed_count(cell: dict) -> int:
    """Seeds behind one policy's cell of ``fig2.json`` (its ``seeds`` list; a cell written
    without one counts as :data:`FEW_SEEDS`, i.e. it sets the y-range)."""
    seeds = cell.get("seeds")
    return FEW_SEEDS if seeds is None else len(seeds)


def gain_limits(extent: list[tuple[float, float, int]]) -> tuple[float, float]:
    """The y-range (%) of one row of panels: 0 and every interval ``(low, high, seeds)``
    of the cells with at least :data:`FEW_SEEDS` seeds (all cells when none has)."""
    kept = [(a, b) for a, b, c in extent if c >= FEW_SEEDS] or \
        [(a, b) for a, b, _ in extent]
    return min([0.0, *(a for a, _ in kept)]), max([0.0, *(b for _, b in kept)])


def _plot_gains(path: Path, rows: list[dict], labels: list[str], metric: str,
                title: str) -> None:
    """Figures 2/3 as the paper draws them: one panel per (K, K_i distribution), the three
    loads (FF-EASY queue length, jobs) on the x-axis, % gain over FCFS/FF-EASY on the y-axis.

    Rows: the EASY variants under each scaling (G-b, G-a) on one y-scale shared by both
    rows, then FCFS/FF-CONS for both scalings (G-b solid, G-a dashed) on its own scale.
    Mean over seeds with its 95% t-interval as error bars (the points of one panel slightly
    apart on the x-axis so that the bars do not cover each other); one legend. Where cells
    rest on different numbers of seeds (protocol S keeps only the stationary ones), the
    cells with fewer than :data:`FEW_SEEDS` are hollow with their seed count and left out
    of the y-range (:func:`gain_limits`).
    """
    plt = pyplot()

    Ks = sorted({r["K"] for r in rows})
    dists = [d for d in ("uniform", "exponential") if any(r["dist"] == d for r in rows)]
    dists += sorted({r["dist"] for r in rows} - set(dists))
    scalings = [s for s in ("G-b", "G-a") if any(r["scaling"] == s for r in rows)]
    queues = sorted({r["queue"] for r in rows})
    cols = [(K, d) for K in Ks for d in dists]
    easy = [lab for lab in labels if lab in EASY_LABELS]
    cons = [lab for lab in labels if lab not in EASY_LABELS]
    grid = [("easy", sc) for sc in scalings] + ([("cons", None)] if cons else [])
    colour = label_colours(labels)
    fig, axes = plt.subplots(len(grid), len(cols), figsize=(3.1 * len(cols), 3.0 * len(grid)),
                             squeeze=False, sharex=True)

    def series(sc: str, K: int, d: str, lab: str) -> tuple:
        pts = sorted((r["queue"], *r["policies"][lab][metric], seed_count(r["policies"][lab]))
                     for r in rows
                     if (r["scaling"], r["K"], r["dist"]) == (sc, K, d) and lab in r["policies"])
        if not pts:
            return (), (), (), ()
        x, m, h, n = zip(*pts, strict=True)
        return x, m, [0 if math.isnan(v) else v for v in h], n

    counts = {seed_count(p) for r in rows for p in r["policies"].values()}
    uneven = len(counts) > 1   # some cells rest on fewer seeds than others: say so
    extent: dict[str, list[tuple[float, float, int]]] = {"easy": [], "cons": []}
    for c, (K, d) in enumerate(cols):
        for r_, (kind, sc) in enumerate(grid):
            ax = axes[r_][c]
            drawn = easy if kind == "easy" else cons
            for i, lab in enumerate(drawn):
                for j, s in enumerate([sc] if kind == "easy" else scalings):
                    x, m, h, seeds = series(s, K, d, lab)
                    if not x:
                        continue
                    # dodge the error bars apart (a few % of an octave)
                    k = i if kind == "easy" else j
                    n = len(drawn) if kind == "easy" else len(scalings)
                    x = [q * 2 ** (0.05 * (k - (n - 1) / 2)) for q in x]
                    ax.errorbar(x, m, yerr=h, color=colour[lab], marker="o", ms=4, capsize=2,
                                ls=SCALING_STYLE.get(s, "-") if kind == "cons" else "-")
                    extent[kind] += [(a - b, a + b, ns) for a, b, ns in zip(m, h, seeds,
                                                                            strict=True)]
                    if uneven:   # hollow markers and the seed count on the few-seed cells
                        for px, py, ns in zip(x, m, seeds, strict=True):
                            if ns < FEW_SEEDS:
                                ax.plot(px, py, "o", ms=6, mfc="white", color=colour[lab])
                                ax.annotate(f"{ns}", (px, py), xytext=(3, 3),
                                            textcoords="offset points", fontsize=7,
                                            color=colour[lab])
            ax.axhline(0, color="k", lw=0.6)
            ax.grid(True, alpha=0.3)
            ax.set_xscale("log", base=2)
            ax.set_xticks(queues, [str(q) for q in queues])
            ax.minorticks_off()
            if r_ == 0:
                ax.set_title(f"({chr(97 + c)}) K = {K}, {d} $K_i$", fontsize=10)
            if r_ == len(grid) - 1:
                ax.set_xlabel("FF-EASY queue length (jobs)")
            if c == 0:
                what = (f"EASY variants, {sc} scaling" if kind == "easy"
                        else "FCFS/FF-CONS (own scale)")
                ax.set_ylabel(f"{what}\ngain over FF-EASY (%)")
    for r_, (kind, _) in enumerate(grid):
        lo, hi = gain_limits(extent[kind])
        pad = 0.05 * (hi - lo or 1.0)
        for ax in axes[r_]:
            ax.set_ylim(lo - pad, hi + pad)
    handles = [plt.Line2D([], [], color=colour[lab], marker="o", label=lab) for lab in labels]
    if cons:
        handles += [plt.Line2D([], [], color="0.3", ls=SCALING_STYLE[s],
                               label=f"FF-CONS, {s} scaling") for s in scalings]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=9,
               frameon=False)
    note = (f"\nhollow: fewer than {FEW_SEEDS} seeds (the count beside it; one seed has no "
            f"interval), left out of the y-range: their bars may run off the axes"
            if uneven else "")
    fig.suptitle(f"{title} over FCFS/FF-EASY; mean over seeds, 95% t-interval{note}")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_only(out: Path) -> list[Path]:
    """Redraw Figures 2 and 3 from ``out/fig2.json`` (the committed cells), computing
    nothing; returns the PNGs written. ValueError when the file is missing."""
    src = out / "fig2.json"
    if not src.exists():
        raise ValueError(f"{src}: no Figures 2/3 data to redraw (run fig2 first)")
    data = json.loads(src.read_text())
    rows = data["rows"]
    labels = [lab for lab, _, _ in POLICIES[1:] if any(lab in r["policies"] for r in rows)]
    written = []
    for metric, fig in (("gain_art", "fig2"), ("gain_wart", "fig3")):
        what = "average" if metric == "gain_art" else "weighted average"
        _plot_gains(out / f"{fig}.png", rows, labels, metric,
                    f"Figure {fig[-1]}: % gain in {what} response time")
        written.append(out / f"{fig}.png")
    return written


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("figure", choices=("fig1", "fig2", "fig3", "gaps", "response"))
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--seeds", type=int)
    ap.add_argument("--K", type=str, help="comma-separated, e.g. 2,8")
    ap.add_argument("--dists", type=str)
    ap.add_argument("--queues", type=str)
    ap.add_argument("--scalings", type=str)
    ap.add_argument("--no-opt-easy", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small sizes for gaps/response")
    ap.add_argument("--out", type=Path, help="output directory of a partial run")
    ap.add_argument("--workers", type=int, default=2, help="fig2: processes (default 2)")
    ap.add_argument("--max-minutes", type=float,
                    help="fig2: stop after this many minutes (the units done are kept)")
    ap.add_argument("--store", type=Path,
                    help=f"fig2: per-unit results (default {STORE_DIR}, "
                         f"{STATIONARY_STORE} under --protocol stationary)")
    ap.add_argument("--protocol", choices=("mean", "stationary"), default="mean",
                    help="fig2: 'mean' (the committed Figures 2/3: 10,000 jobs, mean queue "
                         "calibrated) or 'stationary' (STATIONARY: a warm-up, a stationary "
                         f"queue, no OPT-EASY; full run written to {STATIONARY_DIR.name}/)")
    ap.add_argument("--engine", choices=ENGINES,
                    help="fig2: engine of the calibration and of every policy it implements "
                         "(the same results; default python, compiled under --protocol "
                         "stationary)")
    ap.add_argument("--warmup", type=float, metavar="F",
                    help="fig2: fraction of the jobs whose arrivals are left out of the "
                         "calibrated queue window and of the metrics")
    ap.add_argument("--report-only", action="store_true",
                    help="fig2: write the tables from the store, compute nothing")
    ap.add_argument("--plot-only", action="store_true",
                    help="fig2/fig3: redraw both PNGs from fig2.json in the output "
                         "directory (the committed results by default), compute nothing")
    ap.add_argument("--stationarity", type=float, metavar="S",
                    help="fig2: calibrate to a stationary queue (sim.batch.calibrate, each "
                         "half of the arrival window within S of the target and of the "
                         "other); needs its own --store and --out")
    a = ap.parse_args(argv)
    if a.plot_only:
        ap.refuse_unread(PLOT_ONLY, "--plot-only")
        if a.figure not in ("fig2", "fig3"):
            print("--plot-only redraws Figures 2/3 only", file=sys.stderr)
            return 2
        try:
            for p in plot_only(a.out or (PARTIAL_DIR if a.quick else _protocol(a)[1])):
                print(f"wrote {p}")
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    ap.refuse_unread(options_read(a.figure), a.figure)
    if a.report_only:
        ap.refuse_unread(options_read(a.figure) - COMPUTING, f"{a.figure} --report-only")
    base, full_dir, default_store = _protocol(a)
    cfg = _config(a, base)

    def ident(c: dict[str, Any], k: str) -> Any:
        return c.get(k, IDENTITY_DEFAULTS.get(k))

    if any(ident(cfg, k) != ident(base, k) for k in IDENTITY_DEFAULTS) and (
            a.store is None or a.out is None):
        print("error: --stationarity or --warmup other than the protocol's needs its own "
              "--store and --out (the default ones hold the protocol's calibrations)",
              file=sys.stderr)
        return 2
    partial = a.quick or any(ident(cfg, k) != ident(base, k) for k in IDENTITY)
    if partial and a.out is None:
        a.out = PARTIAL_DIR
    if not partial and a.out is not None and a.out.resolve() != full_dir.resolve():
        print("note: full configuration written outside the committed results dir",
              file=sys.stderr)
    out = a.out or full_dir
    RUNNERS[a.figure](a, out, partial, cfg)
    return 0


#: the options ``--plot-only`` reads: it redraws from ``fig2.json`` in the directory of
#: ``--out``, else of a quick run (``--quick``), else of ``--protocol``'s committed results
PLOT_ONLY = frozenset({"plot_only", "out", "quick", "protocol"})
#: the options Figures 2/3 read only when they compute (not under ``--report-only``)
COMPUTING = frozenset({"workers", "max_minutes", "engine"})
#: every option that sets a key of the figures' configuration: option -> the keys it sets
#: (:func:`_config`); a figure reads the option when its code reads one of those keys
CONFIG_OPTIONS = {"jobs": ("jobs",), "seeds": ("seeds",), "K": ("K",), "dists": ("dists",),
                  "queues": ("queues",), "scalings": ("scalings",),
                  "no_opt_easy": ("opt_easy",), "engine": ("engine",),
                  "warmup": ("warmup",), "stationarity": ("stationarity",),
                  "quick": ("gap_jobs", "gap_queue", "epoch_instances", "epoch_dtime",
                            "epoch_guard", "response_jobs", "response_seeds",
                            "response_limit")}


def _protocol(a: argparse.Namespace) -> tuple[dict[str, Any], Path, Path]:
    """The base configuration, committed directory and default store of ``--protocol``
    (the stationary protocol is Figures 2/3's only)."""
    if a.protocol == "stationary":
        return STATIONARY, STATIONARY_DIR, STATIONARY_STORE
    return FULL, FULL_DIR, STORE_DIR


def _config(a: argparse.Namespace, base: dict[str, Any]) -> dict[str, Any]:
    """The figures' configuration: ``base`` with the options of ``a`` applied."""
    cfg = dict(base, gap_jobs=3000, gap_queue=128, decision_dtime=1.0, decision_guard=30.0,
               epoch_instances=20, epoch_dtime=10.0, epoch_guard=60.0,
               response_jobs=30, response_K=4, response_seeds=5, response_limit=60.0)
    for key, conv in (("jobs", int), ("seeds", int)):
        if getattr(a, key) is not None:
            cfg[key] = conv(getattr(a, key))
    for key, conv in (("K", int), ("dists", str), ("queues", int), ("scalings", str)):
        if getattr(a, key) is not None:
            cfg[key] = [conv(x) for x in getattr(a, key).split(",")]
    if a.no_opt_easy:
        cfg["opt_easy"] = False
    if a.quick:
        cfg.update(gap_jobs=800, gap_queue=32, epoch_instances=5, epoch_dtime=5.0,
                   epoch_guard=30.0,
                   response_jobs=15, response_seeds=2, response_limit=10.0)
    if a.engine is not None:
        cfg["engine"] = a.engine
    if a.warmup is not None:
        cfg["warmup"] = a.warmup
    if a.stationarity is not None:
        cfg["stationarity"] = a.stationarity
    return cfg


def _run_fig1(a: argparse.Namespace, out: Path, partial: bool, cfg: dict[str, Any]) -> None:
    fig1(out, partial=False)


def _run_fig2(a: argparse.Namespace, out: Path, partial: bool, cfg: dict[str, Any]) -> None:
    _, full_dir, default_store = _protocol(a)
    fig2(out, partial, cfg, store=a.store or default_store, workers=a.workers,
         max_minutes=a.max_minutes, run=not a.report_only, full_dir=full_dir)


def _run_gaps(a: argparse.Namespace, out: Path, partial: bool, cfg: dict[str, Any]) -> None:
    gaps(out, partial, cfg)


def _run_response(a: argparse.Namespace, out: Path, partial: bool,
                  cfg: dict[str, Any]) -> None:
    response(out, partial, cfg)


#: what :func:`main` runs for each figure: ``runner(args, out, partial, cfg)``
RUNNERS = {"fig1": _run_fig1, "fig2": _run_fig2, "fig3": _run_fig2, "gaps": _run_gaps,
           "response": _run_response}


def options_read(name: str) -> frozenset[str]:
    """The options of :func:`main` that figure ``name`` reads, derived from the code
    (:func:`sim.experiments.reads.reads`): ``--out``, the options its runner reads, and
    those setting a configuration key (:data:`CONFIG_OPTIONS`) its code reads."""
    runner = RUNNERS[name]
    keys = reads(runner, "cfg")
    return frozenset({"out"}) | reads(runner, "a") | {
        opt for opt, sets in CONFIG_OPTIONS.items() if keys & {*sets, EVERYTHING}}


if __name__ == "__main__":
    sys.exit(main())
