"""Leinberger et al.'s Figures 2/3 under the readings the paper leaves open about the
workload's size-runtime coupling and the weight of the weighted response time (spec
AMB-1.10, 1.3 and 1.4.1), all under protocol S (``figs.STATIONARY``).

    python -m sim.experiments.leinberger.readings weights    # every weight, on the S units
    python -m sim.experiments.leinberger.readings coupling   # every coupling, on SUBSET
    python -m sim.experiments.leinberger.readings opt        # OPT-EASY on OPT_CELLS

``weights``: the units protocol S accepted in the committed
``results/stationary/fig2.json`` are run again at their recorded rates (the workload and
the schedules are the same, so the sum weight reproduces the committed gains), and the
weighted average response time is taken under each weight of :data:`WEIGHTS`.

``coupling``: for each coupling of :data:`COUPLINGS` other than ``linear`` (the
workload of every committed result), the cells of :data:`SUBSET` (the K values and loads
that decide spec 1.7 items 4 and 7) are calibrated under protocol S and run with every
policy of Figures 2/3 but OPT-EASY; the linear coupling's numbers on the same cells come
from the ``weights`` run.

``opt``: OPT-EASY (EASY with the optimal backfill set, not in the paper; it has no
compiled version, so it runs on the Python engine) beside the other policies, on the
units protocol S accepted in the cells of :data:`OPT_CELLS`, at their recorded rates.

Each unit is written to ``--store`` (git-ignored) when done, so a stopped run continues.
The tables go to ``results/readings/`` only when every unit of the full configuration
exists; any reducing option writes to ``results/kresource-partial/readings`` instead.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from instances.atomic import write_atomic
from instances.kresource import KResourceSpec, job_sizes, size_distribution
from sim.argparser import Parser
from sim.experiments import common
from sim.experiments.common import markdown_row, markdown_table
from sim.experiments.leinberger import figs

OUT_DIR = figs.FULL_DIR / "readings"
PARTIAL_DIR = figs.PARTIAL_DIR / "readings"
STORE = Path("results") / "kresource-store-readings"
S_FIG2 = figs.STATIONARY_DIR / "fig2.json"

COUPLINGS = ("linear", "weak", "none")
"""Size-runtime coupling of the reconstructed Feitelson'96 runtimes (spec 1.4.1 item 3;
the model is only known to have "a weak positive correlation between size and
runtime"): the long branch's probability ``p(n) = p0 + (p1 - p0) (n - 1) / (P - 1)``.

- ``linear``: ``p0 = 0.1``, ``p1 = 0.9`` (the spec's default and every committed result);
- ``weak``: a quarter of that slope (``p1 - p0 = 0.2``) about the same mean over the
  size distribution, so the fraction of long jobs is unchanged;
- ``none``: ``p0 = p1 =`` that mean: runtimes independent of the size."""

WEIGHTS = ("sum", "mean", "max", "size")
"""The job weight ``w_j = req_j x runtime_j`` of WART (AMB-1.10), ``req_j`` read as
``sum_k r_jk / C_k`` (``sum``, (b), the default), ``mean_k r_jk / C_k`` (``mean``, (d):
``sum / K``, so the same gains), ``max_k r_jk / C_k`` (``max``, (c)) or the Feitelson
size ``n_j / P`` (``size``, (a); equal to ``max`` under G-b)."""

POLICY_LABELS = [lab for lab, _, _ in figs.POLICIES if lab != "OPT-EASY"]
ALL_LABELS = [lab for lab, _, _ in figs.POLICIES]

OPT_CELLS = {"scalings": ["G-b", "G-a"], "K": [2], "queues": [64]}
"""The cells of the ``opt`` run: the smallest (K = 2, queue 64: OPT-EASY's CP-SAT calls
are fewest and shortest there), both distributions and scalings."""

SUBSET = {"scalings": ["G-b"], "K": [2, 8], "dists": ["uniform", "exponential"],
          "queues": [128, 256], "seeds": 5, "couplings": ["weak", "none"]}
"""The cells of the ``coupling`` run: K = 2 and 8 (BL's fall with K, its sign at K = 8),
the two longer queues (item 7 asks for BL < 0 at least at the longest), both
distributions, the default scaling; seeds 1-5."""


@dataclass(frozen=True)
class Reading:
    """One reading of AMB-1.10: the workload's size-runtime coupling and the WART weight.

    Parameters
    ----------
    coupling : {"linear", "weak", "none"}
        See :data:`COUPLINGS`.
    weight : {"sum", "mean", "max", "size"}
        See :data:`WEIGHTS`.
    """

    coupling: str = "linear"
    weight: str = "sum"

    def __post_init__(self) -> None:
        if self.coupling not in COUPLINGS:
            raise ValueError(f"Reading: field 'coupling' must be one of {COUPLINGS}, "
                             f"got {self.coupling!r}")
        if self.weight not in WEIGHTS:
            raise ValueError(f"Reading: field 'weight' must be one of {WEIGHTS}, "
                             f"got {self.weight!r}")

    def spec(self, spec: KResourceSpec) -> KResourceSpec:
        """``spec`` with this reading's long-branch probabilities ``p0``, ``p1``."""
        if self.coupling == "linear":
            return replace(spec, p0=0.1, p1=0.9)
        base = replace(spec, p0=0.1, p1=0.9)
        n = np.arange(1, base.P + 1, dtype=float)
        m = float((size_distribution(base) * (n - 1) / (base.P - 1)).sum())
        mean = base.p0 + (base.p1 - base.p0) * m  # the linear reading's fraction of long jobs
        if self.coupling == "none":
            return replace(spec, p0=mean, p1=mean)
        p0 = mean - 0.2 * m
        return replace(spec, p0=p0, p1=p0 + 0.2)


def job_weights(demand: np.ndarray, capacity: tuple[int, ...], runtime: np.ndarray,
                sizes: np.ndarray, P: int, weight: str) -> np.ndarray:
    """The WART weight of every job (:data:`WEIGHTS`), in resource-fractions x seconds.

    Parameters
    ----------
    demand : int array (n, K)
        Requirements in units.
    capacity : tuple of int
        Units of each resource.
    runtime : int array (n,)
        Seconds.
    sizes : int array (n,)
        Feitelson sizes (processors), :func:`instances.kresource.job_sizes`.
    P : int
        Feitelson machine size (processors).
    weight : str
    """
    Reading(weight=weight)  # refuses an unknown weight
    frac = demand / np.asarray(capacity, float)
    req = {"sum": lambda: frac.sum(axis=1), "mean": lambda: frac.mean(axis=1),
           "max": lambda: frac.max(axis=1), "size": lambda: sizes / P}[weight]()
    return req * runtime


def metrics(spec: KResourceSpec, w: Any, end: np.ndarray, skip: int,
            weights: tuple[str, ...] = WEIGHTS) -> dict[str, float]:
    """ART and the WART of every weight (seconds; keys ``art``, ``wart_<weight>``) over
    the jobs between the warm-up (or the first 10%, when more) and the last 10% by
    arrival, as ``figs._metrics``; with the parts no policy can change, the mean runtime
    (``floor_art``) and the mean of weight x runtime (``floor_wart_<weight>``): a
    policy's gain over FF-EASY is at most ``1 - floor / M_FF-EASY``."""
    c = w.columns()
    n = len(c.submit)
    lo, hi = max(n // 10, skip), n - n // 10
    resp = (end - c.submit)[lo:hi].astype(float)
    run = c.runtime[lo:hi].astype(float)
    out = {"art": float(resp.mean()), "floor_art": float(run.mean())}
    sizes = job_sizes(spec)
    for k in weights:
        wt = job_weights(c.demand, w.capacity, c.runtime, sizes, spec.P, k)[lo:hi]
        out[f"wart_{k}"] = float((wt * resp).mean())
        out[f"floor_wart_{k}"] = float((wt * run).mean())
    return out


def run_unit(task: dict[str, Any]) -> dict[str, Any]:
    """Calibrate (unless ``task["rate"]`` is given) and run every policy of one unit;
    returns the unit record (also written to the store)."""
    from sim.batch.calibrate import calibrate, warmup_jobs
    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    S = figs.STATIONARY
    reading = Reading(coupling=task["coupling"])
    spec = reading.spec(KResourceSpec(K=task["K"], dist=task["dist"], scaling=task["scaling"],
                                      jobs=S["jobs"], seed=task["seed"]))
    t0, c0 = time.perf_counter(), time.process_time()
    unit = {k: task[k] for k in ("scaling", "K", "dist", "queue", "seed", "coupling")}
    unit.update(p0=spec.p0, p1=spec.p1, commit=task["commit"], command=task["command"])
    if task.get("rate") is None:
        try:
            cal = calibrate(spec, task["queue"], memo=task.get("memo"),
                            stationarity=S["stationarity"], warmup=S["warmup"],
                            engine=S["engine"])
            unit["calibration"] = {"rate": cal.rate, "queue": cal.queue,
                                   "iterations": cal.iterations,
                                   "halves": [cal.first_half, cal.second_half],
                                   "stationarity": cal.stationarity,
                                   "stationary": cal.stationary}
        except ValueError as exc:
            unit["calibration"] = {"failed": str(exc), "stationarity": S["stationarity"]}
    else:
        unit["calibration"] = {"rate": task["rate"], "queue": task["cal_queue"],
                               "stationarity": S["stationarity"], "stationary": True,
                               "from": str(S_FIG2.relative_to(common.ROOT))}
    unit["calibration"]["cpu_s"] = time.process_time() - c0
    unit["policies"] = {}
    if "rate" in unit["calibration"]:
        from instances.kresource import generate

        w = generate(replace(spec, rate=unit["calibration"]["rate"]))
        skip = warmup_jobs(len(w), S["warmup"])
        for label, name, opts in figs.POLICIES:
            if label not in task.get("labels", POLICY_LABELS):
                continue
            pol = figs._policy(name, opts)
            c1 = time.process_time()
            s = simulate(w, pol, engine=figs._engine_for(pol, w, S["engine"]))
            validate(s)
            unit["policies"][label] = metrics(spec, w, s.end, skip)
            unit["policies"][label]["cpu_s"] = time.process_time() - c1
            if hasattr(pol, "stats"):
                unit["policies"][label]["stats"] = dict(pol.stats)
    unit["cpu_s"] = time.process_time() - c0
    unit["wall_s"] = time.perf_counter() - t0
    return unit


def _key(t: dict[str, Any]) -> str:
    return (f"{t.get('prefix', '')}{t['coupling']}_{t['scaling']}_K{t['K']}_{t['dist']}"
            f"_L{t['queue']}_n{figs.STATIONARY['jobs']}_s{t['seed']}")


def tasks(part: str, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The units of ``part`` ("weights": the accepted units of protocol S's committed
    run; "coupling": :data:`SUBSET` under each coupling but ``linear``)."""
    if part in ("weights", "opt"):
        data = json.loads(S_FIG2.read_text())
        extra = {"prefix": "opt-", "labels": ALL_LABELS} if part == "opt" else {}
        return [{"coupling": "linear", "scaling": r["scaling"], "K": r["K"], "dist": r["dist"],
                 "queue": r["queue"], "seed": c["seed"], "rate": c["rate"],
                 "cal_queue": c["queue"], **extra}
                for r in data["rows"] for c in r["calibration"] if "rate" in c
                if r["scaling"] in cfg["scalings"] and r["K"] in cfg["K"]
                and r["queue"] in cfg.get("queues", [r["queue"]])]
    return [{"coupling": cp, "scaling": sc, "K": K, "dist": d, "queue": L, "seed": seed}
            for cp in cfg["couplings"] for seed in range(1, cfg["seeds"] + 1)
            for sc in cfg["scalings"] for K in cfg["K"] for d in cfg["dists"]
            for L in cfg["queues"]]


def run(part: str, cfg: dict[str, Any], store: Path, max_minutes: float | None) -> bool:
    """Compute the missing units of ``part`` into ``store`` (one process); True when
    every unit is there."""
    store.mkdir(parents=True, exist_ok=True)
    commit = common.commit()
    command = "python -m sim.experiments.leinberger.readings " + " ".join(sys.argv[1:])
    t_start = time.perf_counter()
    memos: dict[tuple, dict] = {}
    complete = True
    for t in tasks(part, cfg):
        path = store / f"{_key(t)}.json"
        if path.exists():
            continue
        if max_minutes is not None and time.perf_counter() - t_start > 60 * max_minutes:
            complete = False
            break
        ident = (t["coupling"], t["scaling"], t["K"], t["dist"], t["seed"])
        unit = run_unit({**t, "commit": commit, "command": command,
                         "memo": memos.setdefault(ident, {})})
        common.write_atomic(path, json.dumps(unit, indent=1))
        print(f"{_key(t)}: {unit['cpu_s']:.1f} CPU s, "
              + ("refused" if "failed" in unit["calibration"] else "ok"),
              file=sys.stderr, flush=True)
    return complete


def _rows(units: list[dict], weight: str) -> list[dict]:
    """Rows in ``figs._collect``'s shape (one per cell, gains aggregated over seeds)
    with WART under ``weight``, for ``figs._trend_checks``."""
    cells: dict[tuple, list[dict]] = {}
    for u in units:
        cells.setdefault((u["scaling"], u["K"], u["dist"], u["queue"]), []).append(u)
    rows = []
    for (sc, K, d, L), us in sorted(cells.items(), key=lambda x: (
            ["G-b", "G-a"].index(x[0][0]), x[0][1], ["uniform", "exponential"].index(x[0][2]),
            x[0][3])):
        row = {"scaling": sc, "K": K, "dist": d, "queue": L,
               "calibration": [u["calibration"] for u in us], "policies": {}}
        ok = [u for u in us if u["policies"]]
        for lab in [x for x in ALL_LABELS if ok and all(x in u["policies"] for u in ok)]:
            ga = [100 * (u["policies"]["FF-EASY"]["art"] - u["policies"][lab]["art"])
                  / u["policies"]["FF-EASY"]["art"] for u in ok]
            key = f"wart_{weight}"
            gw = [100 * (u["policies"]["FF-EASY"][key] - u["policies"][lab][key])
                  / u["policies"]["FF-EASY"][key] for u in ok]
            if ga:
                stats = [u["policies"][lab].get("stats", {}) for u in ok]
                row["policies"][lab] = {
                    "not_proved": sum(x.get("not_proved", 0) for x in stats),
                    "wall_stopped": sum(x.get("wall_stopped", 0) for x in stats),
                    "cpu_s": [u["policies"][lab].get("cpu_s") for u in ok],
                    "gain_art": figs._t95(ga), "gain_wart": figs._t95(gw),
                    "gain_art_seeds": ga, "gain_wart_seeds": gw,
                    "seeds": [u["seed"] for u in ok]}
        rows.append(row)
    return rows


def _bounds(units: list[dict], row: dict) -> list[str]:
    """Mean over the cell's seeds of the largest gain over FF-EASY any policy can reach
    (every job started on arrival: response = runtime), for ART and WART (sum), in %."""
    us = [u for u in units if u["policies"] and (u["scaling"], u["K"], u["dist"], u["queue"])
          == (row["scaling"], row["K"], row["dist"], row["queue"])]
    out = []
    for m, f in (("art", "floor_art"), ("wart_sum", "floor_wart_sum")):
        xs = [100 * (1 - u["policies"]["FF-EASY"][f] / u["policies"]["FF-EASY"][m])
              for u in us if f in u["policies"]["FF-EASY"]]
        out.append(f"{statistics.fmean(xs):.1f}" if xs else "-")
    return out


def _cell(v: dict | None, m: str) -> str:
    if v is None:
        return "-"
    mean, hw = v[m]
    return f"{mean:+.1f}" if len(v["seeds"]) < 2 else f"{mean:+.1f} +- {hw:.1f}"


def report(part: str, cfg: dict[str, Any], store: Path, out: Path, partial: bool) -> None:
    """Write ``<part>.md`` and ``<part>.json`` from the store."""
    units = [json.loads((store / f"{_key(t)}.json").read_text())
             for t in tasks(part, cfg) if (store / f"{_key(t)}.json").exists()]
    if part == "coupling":  # the linear coupling's units on the same cells
        lin = [json.loads(p.read_text()) for p in sorted(store.glob("linear_*.json"))]
        units += [u for u in lin if u["scaling"] in cfg["scalings"] and u["K"] in cfg["K"]
                  and u["dist"] in cfg["dists"] and u["queue"] in cfg["queues"]
                  and u["seed"] <= cfg["seeds"]]
    commits = sorted({u["commit"] for u in units})
    proto = {k: figs.STATIONARY[k] for k in ("jobs", "stationarity", "warmup")}
    head = [f"Command: `python -m sim.experiments.leinberger.readings {' '.join(sys.argv[1:])}`"
            f" (config {json.dumps(cfg)}); protocol S ({json.dumps(proto)}); "
            f"units computed at commit(s) {', '.join(commits) or '-'}; tables written at "
            f"{common.commit()}" + ("  \n**PARTIAL run**" if partial else ""), ""]
    data: dict[str, Any] = {"config": cfg, "partial": partial, "commits": commits,
                            "written_by": common.commit(), "command": head[0], "tables": {}}
    if part == "weights":
        lines = ["# Figure 3 under each WART weight (AMB-1.10), protocol S", "", *head,
                 "Weighted-gain of each policy over FF-EASY (%, mean +- 95% t half-width "
                 "over the seeds protocol S accepted) under each weight: `sum` = "
                 "sum_k r_k/C_k x runtime (the committed Figure 3), `max` = max_k r_k/C_k x "
                 "runtime, `size` = n/P x runtime (the Feitelson size; = `max` under G-b). "
                 "`mean` = `sum`/K gives the same gains as `sum`. The last two columns: the "
                 "gain a policy would reach if every job started on arrival (response = "
                 "runtime), the most any policy can gain over FF-EASY on these jobs.", ""]
        ws = ("sum", "max", "size")
        lines += markdown_table(["scaling", "K", "dist", "queue", "seeds",
                                 *(f"BB-EASY {k}" for k in ws),
                                 *(f"BB-nofull {k}" for k in ws), "BL-EASY size",
                                 "largest possible ART gain", "largest possible WART gain "
                                 "(sum)"], [])
        by = {k: _rows(units, k) for k in WEIGHTS}
        for i, r in enumerate(by["sum"]):
            ns = len(r["policies"].get("FF-EASY", {}).get("seeds", []))
            lines.append(markdown_row([
                r["scaling"], r["K"], r["dist"], r["queue"], ns,
                *(_cell(by[k][i]["policies"].get("BB-EASY"), "gain_wart") for k in ws),
                *(_cell(by[k][i]["policies"].get("BB-EASY-nofull"), "gain_wart") for k in ws),
                _cell(by["size"][i]["policies"].get("BL-EASY"), "gain_wart"),
                *_bounds(units, r)]))
        for k in ws:
            lines += ["", f"## Spec 1.7 checks with the `{k}` weight", "",
                      figs._trend_checks(by[k], "gain_wart")]
        d = max(abs(a - b) for rs, rm in zip(by["sum"], by["mean"], strict=True)
                for lab in rs["policies"]
                for a, b in zip(rs["policies"][lab]["gain_wart_seeds"],
                                rm["policies"][lab]["gain_wart_seeds"], strict=True))
        lines += ["", f"Largest difference between the `sum` and `mean` gains over every "
                  f"unit and policy: {d:.2e} points."]
        data["tables"] = by
    elif part == "opt":
        rows = _rows(units, "sum")
        lines = ["# OPT-EASY under protocol S (not in the paper)", "", *head,
                 "Gain over FF-EASY (%, mean +- 95% t half-width over the seeds protocol S "
                 "accepted; WART with the `sum` weight). OPT-EASY = EASY with the optimal "
                 "backfill set (most resources put to work) at every decision; CP-SAT "
                 "decisions stopped by its deterministic cap before a proof are counted "
                 "(`not proved`), as are any stopped by the 30 s wall-clock cap.", ""]
        lines += markdown_table(["scaling", "K", "dist", "queue", "seeds", "OPT-EASY ART",
                                 "OPT-EASY WART", "BB-nofull ART", "BB-EASY ART",
                                 "BL-EASY ART", "not proved", "wall-stopped",
                                 "OPT-EASY CPU s per unit"], [])
        for r in rows:
            p = r["policies"]
            o = p.get("OPT-EASY", {})
            lines.append(markdown_row([
                r["scaling"], r["K"], r["dist"], r["queue"], len(o.get("seeds", [])),
                _cell(p.get("OPT-EASY"), "gain_art"), _cell(p.get("OPT-EASY"), "gain_wart"),
                _cell(p.get("BB-EASY-nofull"), "gain_art"), _cell(p.get("BB-EASY"), "gain_art"),
                _cell(p.get("BL-EASY"), "gain_art"), o.get("not_proved", "-"),
                o.get("wall_stopped", "-"),
                ", ".join(f"{x:.0f}" for x in o.get("cpu_s", []))]))
        data["tables"] = rows
    else:
        lines = ["# Figures 2/3 under each size-runtime coupling (AMB-1.10), protocol S", "",
                 *head, "Gain of each policy over FF-EASY (%, mean +- 95% t half-width over "
                 "the seeds protocol S accepted). Coupling `linear`: the long-runtime "
                 "branch's probability rises from 0.1 at size 1 to 0.9 at size 128 (every "
                 "committed result); `weak`: a quarter of that slope about the same mean; "
                 "`none`: runtimes independent of the size. ART (Figure 2) and WART with "
                 "the `sum` and `size` weights (Figure 3). Long-branch probability at size "
                 "1 / 128 (p0 / p1): " + "; ".join(
                     f"{c} {r.p0:.4f} / {r.p1:.4f}" for c in COUPLINGS
                     for r in [Reading(coupling=c).spec(KResourceSpec())]) + ".", ""]
        lines += markdown_table(["coupling", "K", "dist", "queue", "seeds accepted",
                                 "BL-EASY ART", "BB-EASY ART", "BB-nofull ART", "FF-CONS ART",
                                 "BB-EASY WART sum", "BB-EASY WART size",
                                 "BB-nofull WART size"], [])
        for cp in ("linear", *cfg["couplings"]):
            us = [u for u in units if u["coupling"] == cp]
            rs, rz = _rows(us, "sum"), _rows(us, "size")
            data["tables"][cp] = {"sum": rs, "size": rz}
            for r, z in zip(rs, rz, strict=True):
                p, pz = r["policies"], z["policies"]
                ns = len(p.get("FF-EASY", {}).get("seeds", []))
                lines.append(markdown_row([
                    cp, r["K"], r["dist"], r["queue"], f"{ns}/{cfg['seeds']}",
                    _cell(p.get("BL-EASY"), "gain_art"), _cell(p.get("BB-EASY"), "gain_art"),
                    _cell(p.get("BB-EASY-nofull"), "gain_art"),
                    _cell(p.get("FF-CONS"), "gain_art"), _cell(p.get("BB-EASY"), "gain_wart"),
                    _cell(pz.get("BB-EASY"), "gain_wart"),
                    _cell(pz.get("BB-EASY-nofull"), "gain_wart")]))
        for cp in ("linear", *cfg["couplings"]):
            for k in ("sum", "size"):
                lines += ["", f"## Spec 1.7 checks, coupling `{cp}`, weight `{k}`", "",
                          figs._trend_checks(data["tables"][cp][k], "gain_wart")]
        cpu = [u["calibration"]["cpu_s"] for u in units if u["coupling"] != "linear"]
        lines += ["", f"Calibration CPU of the coupling units: {sum(cpu) / 60:.1f} min "
                  f"({len(cpu)} units)."]
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / f"{part}.md", "\n".join(lines) + "\n")
    write_atomic(out / f"{part}.json", json.dumps(data, indent=1, default=str))
    print("\n".join(lines))


FULL = {"weights": {"scalings": ["G-b", "G-a"], "K": [2, 4, 8]}, "coupling": SUBSET,
        "opt": OPT_CELLS}


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("weights", "coupling", "opt"))
    ap.add_argument("--K", type=str, help="comma-separated subset (partial run)")
    ap.add_argument("--seeds", type=int, help="coupling: seeds 1..N (partial unless 5)")
    ap.add_argument("--store", type=Path, default=STORE)
    ap.add_argument("--out", type=Path, help="output directory of a partial run")
    ap.add_argument("--max-minutes", type=float, help="stop after this many minutes")
    ap.add_argument("--report-only", action="store_true", help="tables from the store")
    a = ap.parse_args(argv)
    if a.report_only:  # nothing is computed, so nothing is stopped
        ap.refuse_unread(ap.options() - {"max_minutes"}, "--report-only")
    cfg = dict(FULL[a.part])
    if a.K is not None:
        try:
            cfg["K"] = [int(x) for x in a.K.split(",")]
        except ValueError:
            print(f"error: --K must be comma-separated integers, got {a.K!r}", file=sys.stderr)
            return 2
    if a.seeds is not None:
        if a.part != "coupling" or a.seeds < 1:
            print("error: --seeds is a positive count for the coupling part", file=sys.stderr)
            return 2
        cfg["seeds"] = a.seeds
    partial = cfg != FULL[a.part]
    complete = True
    if not a.report_only:
        if a.part == "coupling":  # the linear coupling's units of the same cells
            complete = run("weights", dict(FULL["weights"], scalings=cfg["scalings"],
                                           K=cfg["K"]), a.store, a.max_minutes)
        complete = run(a.part, cfg, a.store, a.max_minutes) and complete
    partial = partial or not complete
    out = a.out or (PARTIAL_DIR if partial else OUT_DIR)
    if partial and out.resolve() == OUT_DIR.resolve():
        print(f"error: a partial run does not write to {OUT_DIR}", file=sys.stderr)
        return 2
    report(a.part, cfg, a.store, out, partial)
    return 0


if __name__ == "__main__":
    sys.exit(main())
