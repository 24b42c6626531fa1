"""Reproduction of Giné, Solsona, Hernández & Luque (CSM): one sub-command per figure.

``python -m sim.experiments.gine.figs FIGURE [--quick] [--seeds N] [--jobs N] [--scale S]``
with FIGURE one of ``calib`` (eq. 5 calibration), ``calib-readings`` (tasks per node
under other readings of eq. 5), ``fig4`` (E-4.2, static two-job run),
``fig5-6`` (E-4.3..4.5, mem_load 0.7 over pdt), ``fig7`` (E-4.6, MNOD sweep), ``fig8-9``
(E-4.7..4.9, mem_load 1), ``fig10-11`` (E-4.10, 4.11, mem_load 1.5), ``fig12`` (E-4.12,
local slowdown at 1 and 1.5; reuses the runs of fig8-9 and fig10-11), ``fig4-diag`` (why
the static run misses), ``corr-low`` / ``corr-load1`` (eq. 9 readings at scale 0.01 and
0.1), ``msg-model`` (targets 6-7 under each message model and fault option),
``fig4-probe`` (the static run under the same), ``crossover-diag`` (where PRED and CSM
can order a task differently) or ``all``. ``--engine compiled`` runs the CSM points on
the numba engine (:mod:`sim.timeshare.fast`, identical event logs; the gang reference
stays Python; options the kernel lacks raise an error); ``--out DIR`` writes a PARTIAL
run into DIR.

The full configuration writes ``sim/experiments/gine/results/<figure>.md`` and ``.png``
(and the raw per-seed metrics as ``.json``); ``--quick`` (or any override of seeds, jobs,
scale or the grid) writes to ``results/csm-quick/`` at the repository top and says it is
partial. ``fig5-6 --scale 0.1`` and ``fig5-6 --scale 1 --engine compiled`` (at least 3
seeds) and ``msg-model --scale 1 --engine compiled`` are named full configurations
(:data:`NAMED_SCALES`) written beside the 0.01 files as ``fig5-6-scale0.1.*``,
``fig5-6-scale1.*`` and ``msg-model-scale1.*``. Times in
the simulator are microseconds; the figures use seconds and ms. An option the figure
does not read (``fig4 --mfreq``; :func:`options_read`, derived from its code) is refused
before anything is written.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from heuristics.coscheduling import Coscheduling, by_name
from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments.common import PARTIAL_DIR, command, commit, markdown_text, mean_ci, pyplot
from sim.experiments.reads import reads
from sim.timeshare.csm import calibrate_measured, run_point
from sim.timeshare.metrics import occupancy
from sim.timeshare.workload import (
    LOAD_READINGS,
    CSMConfig,
    calibrate_mit,
    expected_tasks_per_node,
    load_readings,
)

FULL_DIR = Path(__file__).resolve().parent / "results"
QUICK_DIR = PARTIAL_DIR / "csm-quick"

#: The full configuration (see the README for why tc and memory are scaled).
FULL = {"seeds": 3, "jobs": 1000, "scale": 0.01,
        "mfreq": (20, 100, 1000), "pdt": (0.1, 0.3, 0.5, 0.7, 0.9)}
#: The spec's whole grid (AMB-4.10 mfreq values, 10 seeds as in the paper): run with
#: ``--seeds 10 --mfreq 10 20 50 100 200 500 1000`` (writes to the quick directory).
PAPER_GRID = {"seeds": 10, "mfreq": (10, 20, 50, 100, 200, 500, 1000)}
#: Named configurations at another tc / memory scale: scale -> the figures whose full
#: configuration also runs there (same seeds, jobs and grid), written beside the 0.01
#: files as ``<figure>-scale<scale>.md/.json/.png``.
NAMED_SCALES = {0.1: ("fig5-6",), 1.0: ("fig5-6", "msg-model")}
#: Seeds per point of the committed files that do not use :data:`FULL`'s three: figure
#: (and scale, for a named configuration) -> seeds. A figure's default is its full count,
#: and a run with another count is partial (it never overwrites the committed file).
FULL_SEEDS = {("calib", 0.01): 10, ("calib-readings", 0.01): 10, ("fig8-9", 0.01): 10,
              ("fig10-11", 0.01): 10, ("fig12", 0.01): 10, ("gang", 0.01): 10,
              ("fig5-6", 0.1): 5, ("fig5-6", 1.0): 10, ("msg-model", 0.01): 2,
              ("msg-model", 1.0): 2}
QUICK = {"seeds": 2, "jobs": 300, "scale": 0.01, "mfreq": (10, 100, 1000),
         "pdt": (0.1, 0.5, 0.9)}
#: Relative tolerance of the calibration's bisection on the mean measured mem_load.
CALIB_TOL = 0.1
#: Calibration seeds of every (load, class mix, scale) but :data:`CALIB_SEEDS_FEW`:
#: thirty. A run holds about 30 distributed jobs with CV 3.5 runtimes, so the measured
#: mem_load varies from seed to seed with a CV up to 0.48 (``calib.md``); k seeds put the
#: mean within CV / sqrt(k) of the load, below :data:`CALIB_TOL` from k = 24 on.
CALIB_SEEDS = tuple(range(101, 131))
#: The keys calibrated on three seeds only: mem_load 1.0 at the named scales
#: (:data:`NAMED_SCALES`), whose files (``corr-load1``'s scale-0.1 rows,
#: ``msg-model-scale1``) bear no target; thirty seeds there were not run (REPORT, Open).
CALIB_SEEDS_FEW = {"1.0/a@scale0.1": (101, 102, 103), "1.0/a@scale1": (101, 102, 103)}
METRICS = ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
           "slowdown_local", "tasks_per_node", "mem_load_measured")


def calib_key(c: CSMConfig) -> str:
    """The ``calib_mit.json`` key of ``c``: load and class mix, and the scale when it is
    not the 0.01 of :data:`FULL` (each scale is calibrated on its own)."""
    key = f"{c.mem_load}/{c.class_mix}"
    return key if c.tc_scale == FULL["scale"] else f"{key}@scale{c.tc_scale:g}"


class Setup:
    """Where and how big: the configuration of one invocation."""

    def __init__(self, args: argparse.Namespace):
        base = QUICK if args.quick else FULL
        self.scale = args.scale or base["scale"]
        full_seeds = FULL_SEEDS.get((args.figure, self.scale), FULL["seeds"])
        self.seeds = args.seeds or (base["seeds"] if args.quick else full_seeds)
        self.jobs = args.jobs or base["jobs"]
        # a whole number of ms as an int, as in FULL: a point's key (csm/m20) and the
        # plots' lookup of it ({mfreq:g}) then agree for --mfreq 20 as for the default
        self.mfreq = tuple(int(f) if float(f).is_integer() else f for f in args.mfreq) \
            if args.mfreq else base["mfreq"]
        self.pdt = tuple(args.pdt) if args.pdt else base["pdt"]
        named = self.scale in NAMED_SCALES and args.figure in NAMED_SCALES[self.scale]
        self.full = not args.quick and self.seeds == full_seeds and (
            self.jobs, self.mfreq, self.pdt) == (FULL["jobs"], FULL["mfreq"], FULL["pdt"]) \
            and (self.scale == FULL["scale"] or named)
        #: file-name suffix of a named configuration ("" for the 0.01 one)
        self.suffix = f"-scale{self.scale:g}" if self.full and self.scale != FULL["scale"] \
            else ""
        self.engine = getattr(args, "engine", "python")
        out = getattr(args, "out", None)
        if out is not None:   # an explicit directory is never the committed results
            self.full = False
            self.suffix = ""
        self.out = Path(out) if out is not None else FULL_DIR if self.full else QUICK_DIR
        self.out.mkdir(parents=True, exist_ok=True)

    @property
    def label(self) -> str:
        """How a results file names this run: the full configuration or a partial one."""
        return "full configuration" if self.full else "PARTIAL quick run"

    def cfg(self, **kw: Any) -> CSMConfig:
        """The point's configuration with mit calibrated on the measured mem_load."""
        c = CSMConfig(n_jobs=self.jobs, tc_scale=self.scale, mem_scale=self.scale, **kw)
        return dataclasses.replace(c, mit_s=self.mit(c))

    def mit(self, c: CSMConfig) -> float:
        """Mean inter-arrival time (s) for ``c``: eq. 5's mit times the correction factor
        found once per (load, class mix) by :func:`calibrate_measured` under RR at pdt 0.5
        and mfreq 100 ms on :data:`CALIB_SEEDS` (cached in ``calib_mit.json``; an entry
        calibrated on other seeds is calibrated again)."""
        key = calib_key(c)
        path = self.out / "calib_mit.json"
        cache = json.loads(path.read_text()) if path.exists() else {}
        seeds = self.calib_seeds(c)
        if key not in cache or cache[key].get("seeds") != list(seeds):
            base = dataclasses.replace(c, mfreq_ms=100.0, pdt=0.5, mit_s=None)
            t0 = time.perf_counter()
            mit, meas, trace = calibrate_measured(base, lambda: by_name("rr"), seeds=seeds,
                                                  iters=4, tol=CALIB_TOL, engine=self.engine)
            print(f"  calibrated {key}: mit {mit:.3f} s (eq. 5: {calibrate_mit(base):.3f}) "
                  f"measured mem_load {meas:.3f} in {time.perf_counter() - t0:.0f} s",
                  flush=True)
            cache = json.loads(path.read_text()) if path.exists() else {}
            cache[key] = {"mit_s": mit, "measured": meas, "eq5_mit_s": calibrate_mit(base),
                          "trace": trace, "seeds": list(seeds), "commit": commit(),
                          "command": command()}
            write_atomic(path, json.dumps(cache, indent=1))
        return cache[key]["mit_s"] / cache[key]["eq5_mit_s"] * calibrate_mit(
            dataclasses.replace(c, mit_s=None))

    def calib_seeds(self, c: CSMConfig) -> tuple[int, ...]:
        """The seeds :meth:`mit` calibrates ``c``'s (load, class mix, scale) on."""
        return CALIB_SEEDS_FEW.get(calib_key(c), CALIB_SEEDS)

    def header(self, title: str) -> str:
        tag = "full configuration" if self.full else "PARTIAL quick run (not the full config)"
        return (f"# {title}\n\nProduced at commit {provenance()}.\n\n"
                f"{tag}: {self.seeds} seeds x {self.jobs} jobs per point, "
                f"tc and memory scaled by {self.scale} (tc_scale = mem_scale), n = 32, "
                f"quantum Exp(100 ms), fault 20 ms, latency 0.1 ms. Mean over seeds "
                f"+- 95% CI half-width.\n\n")


def provenance() -> str:
    """``<short hash>[-dirty]`` of the code and the command line, for result files."""
    return f"{commit()} with `{command()}`"


def point_ident(cfg: CSMConfig, pol: str, opts: dict, seeds: int) -> str:
    """The identity under which :func:`run_grid` caches one point's results."""
    return json.dumps([cfg.to_dict(), pol, opts, seeds], sort_keys=True)


def grid_path(setup: Setup, name: str) -> Path:
    """The JSON file where :func:`run_grid` caches the grid ``name``."""
    return setup.out / f"{name}{setup.suffix}.json"


def is_cached(setup: Setup, name: str, key: str, cfg: CSMConfig, pol: str, opts: dict,
              *, seeds: int) -> bool:
    """Whether :func:`run_grid` would read the point ``key`` (``seeds`` seeds) from its
    cache."""
    path = grid_path(setup, name)
    if not path.exists():
        return False
    entry = json.loads(path.read_text()).get(key)
    return entry is not None and entry["ident"] == point_ident(cfg, pol, opts, seeds)


def run_grid(setup: Setup, name: str, points: list[tuple[str, CSMConfig, str, dict]],
             metrics: tuple[str, ...] = METRICS, *, seeds: int
             ) -> dict[str, dict[str, list[float]]]:
    """Run every (key, config, policy, options) point on seeds ``0 .. seeds - 1``; cache
    as JSON. The seed count is the caller's (``setup.seeds``, or a study's own), so that
    a figure reads ``--seeds`` only where it acts (:mod:`sim.experiments.reads`)."""
    path = grid_path(setup, name)
    cache: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    out = {}
    n_seeds = seeds
    for key, cfg, pol, opts in points:
        ident = point_ident(cfg, pol, opts, n_seeds)
        if key in cache and cache[key]["ident"] == ident:
            out[key] = cache[key]["metrics"]
            continue
        vals: dict[str, list[float]] = {m: [] for m in metrics}
        t0 = time.perf_counter()
        ev = 0
        for seed in range(n_seeds):
            r = run_point(cfg, by_name(pol, quantum_us=int(cfg.quantum_ms * 1000), **opts),
                          seed, engine=setup.engine)
            ev += r.events
            for m in metrics:
                vals[m].append(r.metrics[m])
        dt = time.perf_counter() - t0
        print(f"  {key}: {ev} events in {dt:.1f} s; " + ", ".join(
            f"{m} {mean_ci(vals[m])[0]:.3g}" for m in metrics[:5]), flush=True)
        out[key] = vals
        cache[key] = {"ident": ident, "metrics": vals}
        write_atomic(path, json.dumps(cache, indent=1, default=str))
    return out


def fmt(vals: list[float], digits: int = 2) -> str:
    m, h = mean_ci(vals)
    if math.isnan(m):
        return "-"
    return f"{m:.{digits}f} +- {h:.{digits}f}" if not math.isnan(h) else f"{m:.{digits}f}"


def plot(path: Path, title: str, xs: list[float], series: dict[str, list[list[float]]],
         xlabel: str, ylabel: str, logx: bool = False, panels: int = 1,
         panel_series: list[dict[str, list[list[float]]]] | None = None,
         panel_titles: list[str] | None = None) -> None:
    plt = pyplot()

    sets = panel_series or [series]
    fig, axes = plt.subplots(1, len(sets), figsize=(5.2 * len(sets), 4), squeeze=False)
    for ax, s, ttl in zip(axes[0], sets, panel_titles or [title], strict=False):
        for label, ys in s.items():
            ms = [mean_ci(v)[0] for v in ys]
            hs = [mean_ci(v)[1] for v in ys]
            hs = [0 if math.isnan(h) else h for h in hs]
            ax.errorbar(xs, ms, yerr=hs, marker="o", capsize=3, label=label)
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel if not panel_titles else ttl)
        ax.set_title(ttl, fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


#: Figures 8 and 9 of the paper: (figure, panel, metric, y-axis label)
FIG8_9_PANELS = (("8", "a", "mean_pg_fault", "page faults per task (eq. 8)"),
                 ("8", "b", "correlation", "correlation (%, eq. 9)"),
                 ("9", "a", "slowdown_small", "slowdown of small jobs (eq. 10)"),
                 ("9", "b", "slowdown_large", "slowdown of large jobs (eq. 10)"))


def plot_frequency(path: Path, title: str, res: dict[str, dict[str, list[float]]],
                   pols: tuple[str, ...], mfreq_ms: list[float],
                   panels: tuple[tuple[str, str, str, str], ...] = FIG8_9_PANELS,
                   labels: dict[str, str] | None = None) -> None:
    """Metrics against the message frequency, as the paper's Figures 8-11 draw them.

    The x-axis is the frequency ``1000 / mfreq`` in messages per second of CPU time
    (mfreq is the mean CPU time between two messages of a task, ms), rising to the right;
    one panel per ``(figure, panel, metric, y label)`` in a 2 x 2 grid, mean over seeds
    with its 95% t-interval (the policies' points slightly apart on the x-axis so that the
    bars do not cover each other), one legend for the figure. ``res`` is ``run_grid``'s
    ``{"<policy>/m<mfreq>": {metric: [value per seed]}}``; ``labels`` names the series in
    the legend (default the upper-cased key).
    """
    plt = pyplot()

    freq = [1000.0 / f for f in mfreq_ms]
    order = sorted(range(len(freq)), key=freq.__getitem__)
    ncol = 2
    nrow = -(-len(panels) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(10, 3.8 * nrow), squeeze=False)
    for ax, (fg, pn, metric, ylabel) in zip(axes.flat, panels, strict=False):
        for k, p in enumerate(pols):
            stats = [mean_ci(res[f"{p}/m{mfreq_ms[i]:g}"][metric]) for i in order]
            dodge = 10 ** (0.02 * (k - (len(pols) - 1) / 2))  # bars apart, not on top
            ax.errorbar([freq[i] * dodge for i in order], [m for m, _ in stats],
                        yerr=[0 if math.isnan(h) else h for _, h in stats], marker="o",
                        capsize=3, label=(labels or {}).get(p, p.upper()))
        ax.set_xscale("log")
        ax.set_xticks([freq[i] for i in order], [f"{freq[i]:g}" for i in order])
        ax.minorticks_off()
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("message frequency (messages per s of CPU time)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"Figure {fg}({pn}): {metric}", fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


FIG8_9_TITLE = ("Figures 8 and 9: mem_load 1, pdt 0.5, MNOD 2, MNOL 2; mean over seeds, "
                "95% t-interval")
FIG10_11_TITLE = ("Figures 10 and 11: mem_load 1.5, pdt 0.5, MNOD 3; mean over seeds, "
                  "95% t-interval")
FIG7_TITLE = "Figure 7: CSM, MNOD 1-3, mem_load 1, pdt 0.5; mean over seeds, 95% t-interval"
#: Figures 10 and 11 of the paper: the panels of Figures 8 and 9 at mem_load 1.5
FIG10_11_PANELS = tuple((str(int(fg) + 2), pn, m, y) for fg, pn, m, y in FIG8_9_PANELS)
#: Figure 7 of the paper: the slowdowns of small and large jobs under each MNOD
FIG7_PANELS = (("7", "a", "slowdown_small", "slowdown of small jobs (eq. 10)"),
               ("7", "b", "slowdown_large", "slowdown of large jobs (eq. 10)"))
FIG7_LABELS = {f"mnod{k}": f"MNOD = {k}" for k in (1, 2, 3)}

#: the figures drawn against the message frequency: name -> (title, panels, legend labels)
BY_FREQUENCY = {"fig7": (FIG7_TITLE, FIG7_PANELS, FIG7_LABELS),
                "fig8-9": (FIG8_9_TITLE, FIG8_9_PANELS, None),
                "fig10-11": (FIG10_11_TITLE, FIG10_11_PANELS, None),
                "fig12": None}  # drawn from the data of Figures 8-9 and 10-11


def scaled(title: str, scale: float | None) -> str:
    """``title`` with the scale of tc and memory when it is not the paper's (1)."""
    return title if scale in (None, 1.0) else f"{title}; tc and memory x {scale:g}"


def scale_of(data: dict[str, Any]) -> float | None:
    """The tc scale of a figure's committed JSON (from its first point's ``ident``)."""
    for v in data.values():
        ident = json.loads(v["ident"]) if isinstance(v.get("ident"), str) else None
        if ident and isinstance(ident[0], dict):
            return ident[0].get("tc_scale")
    return None


def redraw(name: str, out: Path) -> Path:
    """Redraw ``out/<name>.png`` from ``out/<name>.json`` (the committed per-seed metrics)
    against the message frequency, computing nothing; ``name`` is a key of
    :data:`BY_FREQUENCY` (``fig12`` reads ``fig8-9.json`` and ``fig10-11.json``).
    ValueError when a file is missing or holds no points."""
    if name == "fig12":
        srcs = [out / "fig8-9.json", out / "fig10-11.json"]
        for src in srcs:
            if not src.exists():
                raise ValueError(f"{src}: no data to redraw (run {src.stem} first)")
        path = out / "fig12.png"
        draw_fig12(path, *(json.loads(src.read_text()) for src in srcs))
        return path
    src = out / f"{name}.json"
    if not src.exists():
        raise ValueError(f"{src}: no data to redraw (run {name} first)")
    data = json.loads(src.read_text())
    res = {k: v["metrics"] for k, v in data.items()}
    pols = tuple(dict.fromkeys(k.split("/m")[0] for k in res))
    mfreq = sorted({float(k.split("/m")[1]) for k in res})
    if not pols or not mfreq:
        raise ValueError(f"{src}: no points")
    title, panels, labels = BY_FREQUENCY[name]
    path = out / f"{name}.png"
    plot_frequency(path, scaled(title, scale_of(data)), res, pols, mfreq, panels, labels)
    return path


# ----------------------------------------------------------------------------- figures
def fig_calib(setup: Setup) -> str:
    """Eq. 5 calibration: expected and measured tasks per node at 0.7 / 1.0 / 1.5."""
    paper = {0.7: 2.8, 1.0: 3.2, 1.5: 4.1}
    rows = []
    pts = []
    for load in paper:
        mix = "b" if load == 0.7 else "a"
        cfg = setup.cfg(mem_load=load, pdt=0.5, class_mix=mix)
        pts.append((f"load{load}", cfg, "rr", {}))
    res = run_grid(setup, "calib", pts, seeds=setup.seeds)
    for load, p in paper.items():
        cfg = setup.cfg(mem_load=load, pdt=0.5, class_mix="b" if load == 0.7 else "a")
        r = res[f"load{load}"]
        eq5 = dataclasses.replace(cfg, mit_s=None)
        rows.append([f"{load}", cfg.class_mix, f"{calibrate_mit(eq5):.3f}",
                     f"{expected_tasks_per_node(eq5):.2f}", f"{cfg.mit_s:.3f}",
                     fmt(r["tasks_per_node"]), fmt(r["mem_load_measured"]), f"{p}"])
    md = setup.header("CSM eq. 5 load calibration (spec 3.4, target 3.7.1)") + markdown_text(
        ["mem_load", "class mix", "eq. 5 mit [s, scaled]", "tasks/node (eq. 5, demand)",
         "calibrated mit [s]", "tasks/node measured (RR)", "mem_load measured (RR)",
         "paper tasks/node"], rows)
    md += ("\nEq. 5 read as mem_load = E[tasks per node] x E[vir_mem] / M with each task "
           "counted for its service demand tc (Little's law) gives the first mit; the "
           "spec's procedure then adjusts mit by bisection (RR, seeds "
           f"{CALIB_SEEDS[0]}-{CALIB_SEEDS[-1]} at every load, pdt 0.5, mfreq 100 ms) "
           "until the mean measured mem_load "
           "(time-averaged memory demand / M over "
           "[0, last arrival], response times included) matches; every experiment uses "
           "eq. 5's mit times that correction factor. The measured columns here are the "
           "experiment seeds under RR.\n")
    md += _calib_spread(res)
    md += _calib_readings(setup, res, paper)
    return md


def _calib_spread(res: dict[str, dict[str, list[float]]]) -> str:
    """How many calibration seeds the seed-to-seed spread of the measured mem_load needs:
    the k at which its standard error CV / sqrt(k) falls below :data:`CALIB_TOL`."""
    cvs = {k: statistics.stdev(v["mem_load_measured"]) / statistics.mean(
        v["mem_load_measured"]) for k, v in res.items()}
    need = math.ceil((max(cvs.values()) / CALIB_TOL) ** 2)
    return ("\nSeed-to-seed spread of the measured mem_load (CV over the experiment seeds): "
            + ", ".join(f"{k.removeprefix('load')} {cv:.2f}" for k, cv in cvs.items())
            + f". A calibration on k seeds leaves its mean within CV / sqrt(k): below the "
            f"bisection's tolerance {CALIB_TOL:g} from k = {need} on; it uses "
            f"{len(CALIB_SEEDS)} (one seed leaves up to {max(cvs.values()):.0%}).\n")


#: Readings of eq. 5 and of the paper's "average load per node" that ``calib-readings``
#: simulates: name -> (class mix at 1.0 and 1.5 (0.7 keeps "b"), the measure the
#: bisection on mit matches, what the reading says).
CALIB_READINGS: dict[str, tuple[str, str | None, str]] = {
    "spec": ("a", "memory", "the calibration of calib.md: measured memory demand of every "
             "task = mem_load (calib_mit.json, its seeds)"),
    "eq5": ("a", None, "eq. 5's mit as printed, no bisection (tc, not the response time, "
            "sets the occupancy)"),
    "dist": ("a", "memory-dist", "measured memory demand of the distributed tasks only "
             "= mem_load, local tasks on top"),
    "thirds": ("t", "memory", "one stream of the three kinds in equal parts (class mix "
               "t), measured memory demand = mem_load"),
    "little-task": ("a", "tasks-task", "Little's law with the measured response time: "
                    "measured tasks per node = mem_load M / mean vir_mem per task"),
    "little-one-stream": ("c", "tasks-job-one-stream", "as little-task with the mean "
                          "vir_mem per job of one mixed stream (class mix c): T1 met by "
                          "construction"),
}
#: Calibration seeds of the readings (ten at every load: with about 30 distributed jobs
#: per run, three seeds leave the measured load within a factor 2).
READING_SEEDS = tuple(range(101, 111))


def _reading_mit(setup: Setup, name: str, cfg: CSMConfig) -> tuple[float, float | None]:
    """mit (s) of reading ``name`` for ``cfg`` and the measured value its bisection
    reached (None without one); cached in the grid's JSON under ``mit/<name>/<load>``."""
    mode = CALIB_READINGS[name][1]
    if mode is None:
        return calibrate_mit(cfg), None
    if name == "spec":
        key = f"{cfg.mem_load}/{cfg.class_mix}"
        return setup.mit(cfg), json.loads((setup.out / "calib_mit.json").read_text()).get(
            key if cfg.tc_scale == FULL["scale"] else f"{key}@scale{cfg.tc_scale:g}",
            {}).get("measured")
    path = grid_path(setup, "calib-readings")
    cache = json.loads(path.read_text()) if path.exists() else {}
    key = f"mit/{name}/{cfg.mem_load}"
    base = dataclasses.replace(cfg, mfreq_ms=100.0, pdt=0.5, mit_s=None)
    ident = json.dumps([base.to_dict(), list(READING_SEEDS)], sort_keys=True)
    if key not in cache or cache[key]["ident"] != ident:
        metric, target = None, None
        if mode == "memory-dist":
            def metric(r: Any) -> float:
                return occupancy(r.tasks, cfg.n_nodes, cfg.pages_scaled,
                                 kinds=("small", "large"))["mem_load_measured"]
        elif mode.startswith("tasks-"):
            def metric(r: Any) -> float:
                return r.metrics["tasks_per_node"]
            target = load_readings(base)[mode.removeprefix("tasks-")]
        t0 = time.process_time()
        mit, meas, trace = calibrate_measured(base, lambda: by_name("rr"),
                                              seeds=READING_SEEDS, iters=4, tol=0.1,
                                              engine=setup.engine, metric=metric,
                                              target=target)
        print(f"  calibrated {key}: mit {mit:.4g} s, measured {meas:.3f} in "
              f"{time.process_time() - t0:.0f} CPU s", flush=True)
        cache = json.loads(path.read_text()) if path.exists() else {}
        cache[key] = {"ident": ident, "mit_s": mit, "measured": meas, "trace": trace,
                      "cpu_s": time.process_time() - t0}
        write_atomic(path, json.dumps(cache, indent=1))
    return cache[key]["mit_s"], cache[key]["measured"]


def fig_calib_readings(setup: Setup) -> str:
    """Tasks per node measured under each reading of eq. 5 (:data:`CALIB_READINGS`)."""
    paper = {0.7: 2.8, 1.0: 3.2, 1.5: 4.1}
    t0 = time.process_time()
    cfgs: dict[str, CSMConfig] = {}
    calib: dict[str, float | None] = {}
    for name, (mix, _, _) in CALIB_READINGS.items():
        for load in paper:
            cfg = CSMConfig(n_jobs=setup.jobs, tc_scale=setup.scale, mem_scale=setup.scale,
                            mem_load=load, pdt=0.5, class_mix="b" if load == 0.7 else mix)
            mit, calib[f"{name}/load{load}"] = _reading_mit(setup, name, cfg)
            cfgs[f"{name}/load{load}"] = dataclasses.replace(cfg, mit_s=mit)
    res = run_grid(setup, "calib-readings", [(k, c, "rr", {}) for k, c in cfgs.items()],
                   seeds=setup.seeds)
    rows = []
    for name in CALIB_READINGS:
        within = 0
        for load, p in paper.items():
            key = f"{name}/load{load}"
            c, r = cfgs[key], res[key]
            tpn = mean_ci(r["tasks_per_node"])[0]
            within += abs(tpn - p) <= 0.15 * p
            m = calib[key]
            rows.append([name, f"{load}", c.class_mix, f"{c.mit_s:.4g}",
                         f"{c.mit_s / calibrate_mit(dataclasses.replace(c, mit_s=None)):.2f}",
                         "-" if m is None else f"{m:.2f}", fmt(r["tasks_per_node"]),
                         f"{100 * (tpn - p) / p:+.0f}%", fmt(r["mem_load_measured"]),
                         f"{p}"])
        rows[-1][0] += f" ({within}/3 within 15%)"
    md = setup.header("Readings of eq. 5 and of \"load per node\": tasks per node measured "
                      "(target T1)") + markdown_text(
        ["reading", "mem_load", "class mix", "mit [s, scaled]", "x eq. 5 mit",
         "calibration measured", "tasks/node measured (RR)", "vs paper",
         "mem_load measured (RR)", "paper tasks/node"], rows)
    md += ("\nExperiment seeds 0..k-1 under RR, pdt 0.5, mfreq 100 ms, as `calib`. A "
           "reading with a bisection calibrates mit on seeds "
           f"{READING_SEEDS[0]}-{READING_SEEDS[-1]} (RR, pdt 0.5, mfreq 100 ms, within 10% "
           "or the closest of 4 steps; `spec` keeps the seeds of calib_mit.json); "
           "\"calibration measured\" is the value it reached (memory demand / M, or "
           "tasks per node for the little readings). Readings:\n\n"
           + "".join(f"- `{k}`: {v[2]}\n" for k, v in CALIB_READINGS.items())
           + f"\nCPU time of this invocation: {time.process_time() - t0:.0f} s "
           f"(engine {setup.engine}; cached points and calibrations cost nothing).\n")
    return md


def _calib_readings(setup: Setup, res: dict[str, dict[str, list[float]]],
                    paper: dict[float, float]) -> str:
    """Why 1.0 holds fewer tasks than 0.7, and which reading of "load per node" fits."""
    rows = []
    for load, p in paper.items():
        cfg = setup.cfg(mem_load=load, pdt=0.5, class_mix="b" if load == 0.7 else "a")
        r = res[f"load{load}"]
        per_task = [ml * cfg.pages_scaled / tp / cfg.mem_scale for ml, tp in
                    zip(r["mem_load_measured"], r["tasks_per_node"], strict=True)
                    if tp > 0]
        rd = load_readings(cfg)
        rows.append([f"{load}", cfg.class_mix, f"{p}", f"{32768 * load / p:.0f}",
                     fmt(per_task, 0)] + [f"{rd[k]:.2f} ({100 * (rd[k] - p) / p:+.0f}%)"
                                          for k in LOAD_READINGS])
    md = ("\n## Why load 1.0 holds fewer tasks than 0.7, and readings of \"load per node\"\n\n"
          + markdown_text(["mem_load", "class mix", "paper tasks/node",
                           "paper's implied pages/task (mem_load M / load)",
                           "measured pages per present task (RR, unscaled)"]
                          + [f"reading {k}" for k in LOAD_READINGS], rows))
    md += ("\nThe measured memory per task present on a node (mem_load_measured x M / "
           "tasks_per_node, per seed, in unscaled pages) is about 10K pages with class mix "
           "b (0.7: local and small tasks only) and about 21K with mix a (1.0 and 1.5), "
           "where large jobs (U[2 mest, 4 mest] pages, tc 3600 s, sizes 8-32) hold most of "
           "the task-time. At equal memory load mix a therefore holds about half as many "
           "tasks: the non-monotone tasks/node between 0.7 and 1.0 comes from the class "
           "mix the spec prescribes per load, not from a unit or scale error (the "
           "per-seed values also spread by a factor 3: CV 3.5 runtimes and ~30 "
           "distributed jobs per run). The paper's figures imply 8K / 10K / 11.7K pages "
           "per task. Readings (closed forms of the class means, "
           "`sim.timeshare.workload.load_readings`): demand = the spec's (per task, "
           "weighted by tc); task = per task, unweighted; job = per job arrival of the "
           "configured streams (one vir_mem per job); job-one-stream = per job arrival "
           "of one stream that is local w.p. 1/2, else small / large by pdt. Only "
           "job-one-stream is within 15% of the paper at all three loads, i.e. the "
           "paper's load per node looks like mem_load x M / (mean vir_mem per generated "
           "job); it is a fit, not something the paper states, so the workload keeps the "
           "spec's streams.\n")
    return md


def fig_static(setup: Setup) -> str:
    """E-4.2 (Fig. 4): 2 large jobs + 2 local tasks on every node, PRED vs CSM."""
    from sim.experiments.gine.static import run_static

    return run_static(setup)


def fig_static_diag(setup: Setup) -> str:
    """E-4.2 diagnosis: variants of the static run (sizes, AMB-4.11 touch, line 5)."""
    from sim.experiments.gine.static import run_diag

    return f"Produced at commit {provenance()}.\n\n" + run_diag(setup)


#: The eq. 9 study: the reproduction's scale beside a 10x larger one (closer to the
#: paper's sizes), same seeds, the three readings of the normalisation.
CORR = {"scales": (0.01, 0.1), "seeds": 2, "pdt": (0.1, 0.5, 0.9), "mfreq": (20, 1000)}
CORR_METRICS = ("correlation", "correlation_sum", "correlation_tr", "slowdown_small",
                "slowdown_large")


def _corr_table(setup: Setup, name: str, title: str, keyed: list[tuple[str, str, CSMConfig,
                str, dict]], paper: str) -> str:
    """Run the points (label, policy column, config, policy, options) and tabulate eq. 9
    under each reading, one row per (label, scale)."""
    res = run_grid(setup, name, [(f"{lab}/{pol}/s{cfg.tc_scale}", cfg, pol, opts)
                                 for lab, pol, cfg, _, opts in keyed],
                   metrics=CORR_METRICS, seeds=CORR["seeds"])
    pols = list(dict.fromkeys(pol for _, pol, _, _, _ in keyed))
    rows = []
    for lab in dict.fromkeys(lab for lab, _, _, _, _ in keyed):
        for sc in CORR["scales"]:
            if f"{lab}/{pols[0]}/s{sc}" not in res:
                continue
            row = [lab, f"{sc}"]
            for rd in ("correlation", "correlation_sum", "correlation_tr"):
                row += [fmt(res[f"{lab}/{p}/s{sc}"][rd], 1) for p in pols]
            rows.append(row)
    head = ["point", "scale"] + [f"{rd} {p}" for rd in ("tc", "sum", "tr") for p in pols]
    md = (f"# {title}\n\nProduced at commit {provenance()}.\n\n"
          f"{CORR['seeds']} seeds x {setup.jobs} jobs per point at tc / memory scale "
          f"{' and '.join(str(x) for x in CORR['scales'])} (the quantum, fault latency, "
          f"mfreq and network latency are not scaled), mit calibrated as in the "
          f"other figures. Eq. 9 under three readings "
          f"(`sim.timeshare.metrics.correlation`): tc = the printed formula, mean over "
          f"jobs of |tr_slow - tr_fast| / tc; sum = 100 - 100 sum |dtr| / sum tc; tr = "
          f"mean of |dtr| / tr_slow. Mean +- 95% CI half-width.\n\n")
    md += markdown_text(head, rows) + "\n" + paper
    return md


def fig_corr_low(setup: Setup) -> str:
    """Eq. 9 at mem_load 0.7 (E-4.3): scale and normalisation readings."""
    keyed = []
    for pdt in CORR["pdt"]:
        for sc in CORR["scales"]:
            c = CSMConfig(n_jobs=setup.jobs, tc_scale=sc, mem_scale=sc, mem_load=0.7,
                          pdt=pdt, class_mix="b")
            c = dataclasses.replace(c, mit_s=setup.mit(c))
            for pol in ("csm", "dyn", "rr"):
                keyed.append((f"pdt {pdt}", pol, c, pol, {}))
    return _corr_table(setup, "corr-low", "Eq. 9 at mem_load 0.7: the 75% target vs scale "
                       "and reading", keyed,
                       "\nPaper (Fig. 5): correlation over 75% for CSM, DYN and RR at every "
                       "pdt; CSM best.\n")


def fig_corr_load1(setup: Setup) -> str:
    """Eq. 9 at mem_load 1.0 (E-4.8): the PRED/CSM crossover vs scale and reading."""
    keyed = []
    for mf in CORR["mfreq"]:
        for sc in CORR["scales"]:
            if sc > min(CORR["scales"]) and mf < max(CORR["mfreq"]):
                continue  # ~18M events per run at 20 ms and scale 0.1: not run here
            c = CSMConfig(n_jobs=setup.jobs, tc_scale=sc, mem_scale=sc, mem_load=1.0,
                          pdt=0.5, mfreq_ms=float(mf))
            c = dataclasses.replace(c, mit_s=setup.mit(c))
            for pol in ("pred", "csm", "rr"):
                keyed.append((f"mfreq {mf} ms", pol, c, pol, {"mnod": 2}))
    return _corr_table(setup, "corr-load1", "Eq. 9 at mem_load 1.0: the PRED/CSM crossover "
                       "vs scale and reading", keyed,
                       "\nPaper (Fig. 8b): CSM best for intensive communication (small "
                       "mfreq), PRED above CSM for non-intensive (large mfreq), RR worst.\n")


def fig_low(setup: Setup) -> str:
    """E-4.3..4.5 (Figs. 5, 6): mem_load 0.7, small + local (class mix b) over pdt."""
    pols = ("csm", "dyn", "dyn-top", "rr")
    pts = [(f"{p}/pdt{d}", setup.cfg(mem_load=0.7, pdt=d, class_mix="b"), p, {})
           for p in pols for d in setup.pdt]
    res = run_grid(setup, "fig5-6", pts, seeds=setup.seeds)
    rows = []
    for d in setup.pdt:
        rows.append([f"{d}"] + [fmt(res[f"{p}/pdt{d}"]["correlation"], 1) for p in pols] +
                    [fmt(res[f"{p}/pdt{d}"]["slowdown_small"]) for p in pols] +
                    [fmt(res[f"{p}/pdt{d}"]["slowdown_local"]) for p in pols])
    head = ["pdt"] + [f"corr {p}" for p in pols] + [f"sld par {p}" for p in pols] + \
        [f"sld local {p}" for p in pols]
    md = setup.header("E-4.3..4.5 (Figs. 5, 6): mem_load 0.7, small jobs (pdt) + local")
    md += markdown_text(head, rows)
    md += ("\nPaper (text): correlation > 75% for all policies; DYN independent of pdt; RR "
           "and CSM decrease with pdt; CSM best for all pdt (Fig. 5). Parallel slowdown: CSM "
           "best, RR high (Fig. 6a). Local slowdown: RR lowest, DYN = CSM a little above "
           "(Fig. 6b). CSM runs in predictive mode at this load. dyn-top = DYN with "
           "preemption on a boost (AMB-4.1 b).\n")
    xs = list(setup.pdt)
    plot(setup.out / f"fig5-6{setup.suffix}.png", "E-4.3..4.5, mem_load 0.7", xs, {}, "pdt", "",
         panel_series=[{p: [res[f"{p}/pdt{d}"][m] for d in xs] for p in pols}
                       for m in ("correlation", "slowdown_small", "slowdown_local")],
         panel_titles=["Correlation (%)", "Slowdown parallel", "Slowdown local"])
    return md


def _mfreq_points(setup: Setup, load: float, pols: tuple[str, ...], mnod: int
                  ) -> list[tuple[str, CSMConfig, str, dict]]:
    """The points of a figure against mfreq at ``load``: every policy at every mfreq."""
    return [(f"{p}/m{f}", setup.cfg(mem_load=load, pdt=0.5, mfreq_ms=f), p,
             {"mnod": mnod} if p in ("csm", "pred", "csm-top") else {})
            for p in pols for f in setup.mfreq]


#: the grids Figure 12 reads: figure -> (mem_load, policies, MNOD), as Figures 8-11 run them
FIG12_GRIDS = {"fig8-9": (1.0, ("rr", "pred", "csm"), 2),
               "fig10-11": (1.5, ("rr", "pred", "csm"), 3)}


def _by_mfreq(setup: Setup, name: str, load: float, pols: tuple[str, ...], mnod: int,
              title: str, paper: str, metrics: tuple[str, ...]) -> str:
    pts = _mfreq_points(setup, load, pols, mnod)
    res = run_grid(setup, name, pts, seeds=setup.seeds)
    rows = []
    for f in setup.mfreq:
        rows.append([f"{f}"] + [fmt(res[f"{p}/m{f}"][m], 1 if m == "correlation" else 2)
                                for m in metrics for p in pols])
    head = ["mfreq [ms]"] + [f"{m} {p}" for m in metrics for p in pols]
    md = setup.header(title) + markdown_text(head, rows) + "\n" + paper + "\n"
    title_, panels, labels = BY_FREQUENCY[name]  # the paper's axis: message frequency
    plot_frequency(setup.out / f"{name}.png", scaled(title_, setup.scale), res, pols,
                   list(setup.mfreq), panels, labels)
    return md


def fig_mnod(setup: Setup) -> str:
    """E-4.6 (Fig. 7): CSM at mem_load 1 with MNOD in {1, 2, 3}."""
    pts = [(f"mnod{k}/m{f}", setup.cfg(mem_load=1.0, pdt=0.5, mfreq_ms=f), "csm",
            {"mnod": k}) for k in (1, 2, 3) for f in setup.mfreq]
    res = run_grid(setup, "fig7", pts, seeds=setup.seeds)
    rows = [[f"{f}"] + [fmt(res[f"mnod{k}/m{f}"][m]) for m in ("slowdown_small",
                                                               "slowdown_large")
                        for k in (1, 2, 3)] for f in setup.mfreq]
    head = ["mfreq [ms]"] + [f"{m} MNOD={k}" for m in ("sld small", "sld large")
                             for k in (1, 2, 3)]
    md = setup.header("E-4.6 (Fig. 7): CSM MNOD sweep, mem_load 1, pdt 0.5") + \
        markdown_text(head, rows)
    md += ("\nPaper (text): large-job slowdown falls as MNOD rises; small-job performance "
           "increases with MNOD; slowdown falls as communication frequency rises; MNOD = 2 "
           "chosen. Target 3.7.11: large-job slowdown non-increasing in MNOD.\n")
    title_, panels, labels = BY_FREQUENCY["fig7"]  # the paper's axis: message frequency
    plot_frequency(setup.out / "fig7.png", scaled(title_, setup.scale), res,
                   ("mnod1", "mnod2", "mnod3"), list(setup.mfreq), panels, labels)
    return md


def fig_load1(setup: Setup) -> str:
    return _by_mfreq(
        setup, "fig8-9", *FIG12_GRIDS["fig8-9"],
        "E-4.7..4.9 (Figs. 8, 9): mem_load 1, pdt 0.5, MNOD 2, MNOL 2",
        "Paper (text): mean_pg_fault CSM lowest, RR = PRED (Fig. 8a); correlation CSM best "
        "for intensive communication, PRED > CSM for non-intensive, RR worst (Fig. 8b); "
        "small-job slowdown CSM best at high frequency, = PRED at low; large jobs much "
        "worse than small for all three, CSM = PRED (Fig. 9).",
        ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large"))


def fig_load15(setup: Setup) -> str:
    return _by_mfreq(
        setup, "fig10-11", *FIG12_GRIDS["fig10-11"],
        "E-4.10, 4.11 (Figs. 10, 11): mem_load 1.5, pdt 0.5, MNOD 3",
        "Paper (text): CSM best on page faults and correlation, PRED and RR poor (Fig. 10); "
        "CSM best for small and also for large jobs (Fig. 11).",
        ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large"))


def _fig12_grid(setup: Setup, name: str) -> dict[str, Any]:
    """The cached grid ``name`` of :data:`FIG12_GRIDS` as this run's options compute it:
    read from its JSON when every point there has this run's configuration and seed count
    (:func:`is_cached`), else computed by its figure first (a JSON of other seeds, jobs,
    scale or mfreq is never read as this run's)."""
    points = _mfreq_points(setup, *FIG12_GRIDS[name])
    if not all(is_cached(setup, name, k, c, p, o, seeds=setup.seeds)
               for k, c, p, o in points):
        if name == "fig8-9":
            fig_load1(setup)
        else:
            fig_load15(setup)
    return json.loads(grid_path(setup, name).read_text())


def fig_local(setup: Setup) -> str:
    """E-4.12 (Fig. 12): local slowdown at mem_load 1 and 1.5 (reuses fig8-9, fig10-11)."""
    pols = ("rr", "pred", "csm")
    r1, r15 = _fig12_grid(setup, "fig8-9"), _fig12_grid(setup, "fig10-11")
    rows = []
    for f in setup.mfreq:
        rows.append([f"{f}"] + [fmt(r[f"{p}/m{f}"]["metrics"]["slowdown_local"])
                                for r in (r1, r15) for p in pols])
    head = ["mfreq [ms]"] + [f"load {ld} {p}" for ld in (1.0, 1.5) for p in pols]
    md = setup.header("E-4.12 (Fig. 12): local-task slowdown") + markdown_text(head, rows)
    worst = max(mean_ci(r1[f"{p}/m{f}"]["metrics"]["slowdown_local"])[0]
                for p in pols for f in setup.mfreq)
    md += (f"\nPaper (text): RR best, CSM and PRED very close; at mem_load 1 all < 4.25; "
           f"worse at 1.5. Ours: largest mean local slowdown at mem_load 1 = {worst:.2f}.\n")
    draw_fig12(setup.out / "fig12.png", r1, r15)
    return md


FIG12_TITLE = "Figure 12: local tasks, pdt 0.5; mean over seeds, 95% t-interval"
FIG12_PANELS = (("12", "a", "mem_load 1", "slowdown of local tasks (eq. 10)"),
                ("12", "b", "mem_load 1.5", "slowdown of local tasks (eq. 10)"))


def draw_fig12(path: Path, r1: dict, r15: dict) -> None:
    """Figure 12 against the message frequency from the per-seed metrics of Figures 8-9
    (``r1``, mem_load 1) and 10-11 (``r15``, mem_load 1.5): one panel per load."""
    res = {k: {"mem_load 1": r1[k]["metrics"]["slowdown_local"],
               "mem_load 1.5": r15[k]["metrics"]["slowdown_local"]} for k in r1}
    pols = tuple(dict.fromkeys(k.split("/m")[0] for k in res))
    mfreq = sorted({float(k.split("/m")[1]) for k in res})
    plot_frequency(path, scaled(FIG12_TITLE, scale_of(r1)), res, pols, mfreq, FIG12_PANELS)


def fig_gang(setup: Setup) -> str:
    """The gang-scheduled reference at mem_load 1 (perfect coordination, no paging), on
    fig8-9's arrivals and seeds (both 10 by default: :data:`FULL_SEEDS`); its CSM columns
    are read from ``fig8-9.json``, which must hold as many seeds."""
    from heuristics.gang import Gang

    rows = []
    res: dict[str, dict[str, list[float]]] = {}
    path = setup.out / "gang.json"
    for f in setup.mfreq:
        base = setup.cfg(mem_load=1.0, pdt=0.5, mfreq_ms=f)
        # no paging: 16x the memory (every task fully resident), same arrivals (same mit)
        cfg = dataclasses.replace(base, mem_pages=16 * base.mem_pages)
        vals: dict[str, list[float]] = {m: [] for m in METRICS}
        t0 = time.perf_counter()
        for seed in range(setup.seeds):
            g = Gang(slot_us=int(cfg.quantum_ms * 1000))
            r = run_point(cfg, g, seed, setup=g.start)
            for m in METRICS:
                vals[m].append(r.metrics[m])
        print(f"  gang/m{f}: {time.perf_counter() - t0:.1f} s", flush=True)
        res[f"gang/m{f}"] = vals
        write_atomic(path, json.dumps(res, indent=1, default=str))
    ref = json.loads((setup.out / "fig8-9.json").read_text()) \
        if (setup.out / "fig8-9.json").exists() else {}
    ref = {k: v for k, v in ref.items()   # the CSM column on the gang's seeds only
           if len(v["metrics"]["correlation"]) == setup.seeds}
    for f in setup.mfreq:
        row = [f"{f}"]
        for m in ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
                  "slowdown_local"):
            row.append(fmt(res[f"gang/m{f}"][m]))
            c = ref.get(f"csm/m{f}")
            row.append(fmt(c["metrics"][m]) if c else "-")
        rows.append(row)
    head = ["mfreq [ms]"] + [f"{m} {p}" for m in ("faults", "corr", "sld small", "sld large",
                                                  "sld local") for p in ("gang", "CSM")]
    md = setup.header("Gang-scheduled reference (spec 3.8 M7 in simulation), mem_load 1")
    md += markdown_text(head, rows)
    md += ("\nGang: rows of an Ousterhout matrix (first fit on node conflicts), slot = 100 ms, "
           "one slot per round for local tasks, memory 16x M so that nothing pages; CSM "
           "column from fig8-9 (same arrivals and seeds). The paper has no gang run; this "
           "is the reference with perfect coordination and no paging (correlation bound), "
           "not an optimal schedule.\n")
    return md


#: The message-model study: mem_load 1.0, pdt 0.5, MNOD 2, the spec's extreme
#: frequencies, 2 seeds by default (:data:`FULL_SEEDS`; the shared machine allowed no
#: more; see the README); each model of ``sim.timeshare.csm.MSG_MODELS`` plus the
#: pairwise model with a FIFO fault server and with 2 references per dispatch (8
#: references thrash at 20 ms: one RR point ran > 3 CPU min without ending).
MSG = {"mfreq": (20, 1000), "pols": ("rr", "pred", "csm"),
       "variants": (("pairwise", {}), ("exchange", {"msg_model": "exchange"}),
                    ("ring", {"msg_model": "ring"}), ("async", {"msg_model": "async"}),
                    ("probe", {"msg_model": "probe"}),
                    ("pairwise+fifo", {"fault_service": "fifo"}),
                    ("pairwise+2refs", {"refs_per_dispatch": 2}))}


def fig_msg_model(setup: Setup) -> str:
    """Targets 3.7.6-7 (faults, PRED/CSM crossover) under each message model."""
    pts = []
    for var, opts in MSG["variants"]:
        for f in MSG["mfreq"]:
            cfg = dataclasses.replace(setup.cfg(mem_load=1.0, pdt=0.5, mfreq_ms=float(f)),
                                      **opts)
            for p in MSG["pols"]:
                pts.append((f"{var}/m{f}/{p}", cfg, p, {"mnod": 2} if p != "rr" else {}))
    res = run_grid(setup, "msg-model", pts, seeds=setup.seeds)
    ms = ("correlation", "mean_pg_fault", "slowdown_small", "slowdown_large")
    rows = []
    for var, _ in MSG["variants"]:
        for f in MSG["mfreq"]:
            c = {p: mean_ci(res[f"{var}/m{f}/{p}"]["correlation"])[0] for p in MSG["pols"]}
            order = " > ".join(sorted(MSG["pols"], key=lambda p: -c[p])).upper()
            # paired by seed (same arrivals): the sign of CSM - PRED in each seed
            diff = [a - b for a, b in zip(res[f"{var}/m{f}/csm"]["correlation"],
                                          res[f"{var}/m{f}/pred"]["correlation"], strict=True)]
            signs = "".join("+" if d > 0 else "-" if d < 0 else "0" for d in diff)
            rows.append([var, f"{f}"] + [fmt(res[f"{var}/m{f}/{p}"][m], 1)
                                         for m in ms for p in MSG["pols"]] +
                        [order, f"{sum(diff) / len(diff):+.1f} ({signs})"])
    head = ["variant", "mfreq [ms]"] + [f"{m} {p}" for m in ms for p in MSG["pols"]] + \
        ["correlation order", "corr CSM - PRED, mean (sign per seed)"]
    md = (f"# Message models and fault service at mem_load 1.0 (targets 3.7.6, 3.7.7)\n\n"
          f"Produced at commit {provenance()}.\n\n"
          f"{setup.label}: "
          f"{setup.seeds} seeds x {setup.jobs} jobs per point, tc and memory scaled by "
          f"{setup.scale}, pdt 0.5, MNOD 2, mit calibrated as in fig8-9 (RR, pairwise). "
          f"Models: `sim.timeshare.csm.MSG_MODELS`. Mean +- 95% CI half-width.\n\n")
    md += markdown_text(head, rows)
    md += ("\nPaper (Fig. 8): faults CSM lowest, PRED = RR; correlation CSM best at high "
           "frequency (20 ms), PRED above CSM at low frequency (1000 ms), RR worst.\n")
    return md


class _Disagree(Coscheduling):
    """Algorithm 1 that also computes, at each insertion of a distributed task into a
    busy node, where the *other* of PRED / CSM would have put it (read-only replay of
    lines 4-12), and counts the cases: ``idle`` (line 3: RQ empty, CPU idle), ``same``
    (both policies choose the same RQ position) and ``differ``; plus, for CSM, which
    path was taken (``line5``, ``csm`` mode, ``pred`` mode when memory fits)."""

    def __init__(self, *a: Any, **k: Any):
        super().__init__(*a, **k)
        self.counts: dict[str, int] = {}

    def _count(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def _position(self, node: Any, h: Any, mode: str) -> int:
        """RQ index at which ``mode`` ("pred" or "csm") would insert ``h`` now."""
        rq = node.rq
        exhausted = self.memory_exhausted(node)
        if mode == "csm" and exhausted and h.rmq:
            return 0
        i = len(rq) - 1
        if mode == "csm" and exhausted:
            pg = self.cluster.pg_fault
            while i >= 0 and self.starv_cond(rq[i]) and pg(rq[i]) > pg(h):
                i -= 1
        else:
            while i >= 0 and self.starv_cond(rq[i]) and rq[i].mes < h.mes:
                i -= 1
        return i + 1

    def place(self, node: Any, h: Any) -> bool:
        if h.job is not None and not self._is_local(h):
            if not node.rq and node.running is None:
                self._count("idle")
            else:
                a, b = self._position(node, h, "pred"), self._position(node, h, "csm")
                self._count("same" if a == b else "differ")
                if self.mode == "csm":
                    ex = self.memory_exhausted(node)
                    self._count("line5" if ex and h.rmq else "csm" if ex else "pred")
        return super().place(node, h)


def insertion_shares(c: dict[str, int]) -> dict[str, str]:
    """Table cells of :class:`_Disagree`'s counts ``c``: distributed insertions
    (``total``), the shares in % of those on an idle node (``idle``), where PRED and CSM
    choose the same position (``same``) or not (``differ``), and the busy-node paths
    line 5 / CSM mode / predictive in % of the busy insertions (``paths``; "-" without
    any)."""
    tot = c.get("idle", 0) + c.get("same", 0) + c.get("differ", 0)
    busy = c.get("same", 0) + c.get("differ", 0)
    paths = " / ".join(f"{100 * c.get(k, 0) / busy:.0f}" for k in ("line5", "csm", "pred")
                       ) if busy else "-"
    return {"total": f"{tot}", **{k: f"{100 * c.get(k, 0) / tot:.1f}"
                                  for k in ("idle", "same", "differ")}, "paths": paths}


def fig_crossover_diag(setup: Setup) -> str:
    """Target 3.7.7: how often PRED and CSM can order a distributed task differently."""
    from sim.timeshare.csm import run_point as run

    rows = []
    for var, opts in (("pairwise", {}), ("probe", {"msg_model": "probe"})):
        for f in MSG["mfreq"]:
            cfg = dataclasses.replace(setup.cfg(mem_load=1.0, pdt=0.5, mfreq_ms=float(f)),
                                      **opts)
            for p in ("pred", "csm"):
                pol = _Disagree(p, quantum_us=int(cfg.quantum_ms * 1000), mnod=2)
                run(cfg, pol, seed=0)
                sh = insertion_shares(pol.counts)
                rows.append([var, f"{f}", p.upper(), sh["total"], sh["idle"], sh["same"],
                             sh["differ"], sh["paths"] if p == "csm" else "-"])
    head = ["msg model", "mfreq [ms]", "policy run", "distributed insertions",
            "idle CPU, empty RQ (line 3) [%]", "PRED and CSM same position [%]",
            "positions differ [%]", "CSM busy-node paths: line 5 / CSM mode / predictive [%]"]
    md = (f"# Target 3.7.7: where PRED and CSM can differ (mem_load 1.0)\n\n"
          f"Produced at commit {provenance()}.\n\n"
          f"{setup.label}: seed 0, "
          f"{setup.jobs} jobs, tc and memory scaled by {setup.scale}, pdt 0.5, MNOD 2. At "
          f"every insertion of a distributed task the position the other policy would "
          f"have chosen is computed from the same state (a read-only replay of Algorithm "
          f"1 lines 4-12).\n\n")
    md += markdown_text(head, rows)
    return md


def fig_static_probe(setup: Setup) -> str:
    """E-4.2 under each message model and fault option (target 3.7.4)."""
    from sim.experiments.gine.static import run_probe

    return f"Produced at commit {provenance()}.\n\n" + run_probe(setup)


def fig_sens(setup: Setup) -> str:
    """AMB-4.2 sensitivity: CSM with the corrected and the literal eq. 3 (mfreq 100 ms)."""
    pts = []
    for load, mnod in ((1.0, 2), (1.5, 3)):
        for form in ("corrected", "literal"):
            cfg = dataclasses.replace(setup.cfg(mem_load=load, pdt=0.5, mfreq_ms=100.0),
                                      pgfault_formula=form)
            pts.append((f"{load}/{form}", cfg, "csm", {"mnod": mnod}))
    res = run_grid(setup, "sens", pts, seeds=setup.seeds)
    ms = ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
          "slowdown_local")
    rows = [[k.split("/")[0], k.split("/")[1]] + [fmt(res[k][m]) for m in ms]
            for k, *_ in pts]
    md = setup.header("AMB-4.2 sensitivity: eq. 3 corrected vs literal, CSM, mfreq 100 ms")
    md += markdown_text(["mem_load", "eq. 3", *ms], rows)
    md += ("\nCorrected: pg_fault = 1 - res_ws / wrk (the non-resident share of the WS); "
           "literal: res_mem / wrk when wrk >= res_mem, else 0 (favours tasks with less "
           "memory resident in CSM mode).\n")
    return md


FIGURES = {"calib": fig_calib, "calib-readings": fig_calib_readings,
           "fig4": fig_static, "fig4-diag": fig_static_diag,
           "corr-low": fig_corr_low, "corr-load1": fig_corr_load1,
           "fig5-6": fig_low, "fig7": fig_mnod,
           "fig8-9": fig_load1, "fig10-11": fig_load15, "fig12": fig_local,
           "gang": fig_gang, "sens": fig_sens, "msg-model": fig_msg_model,
           "fig4-probe": fig_static_probe, "crossover-diag": fig_crossover_diag}


#: the options of :func:`main` that :class:`Setup` carries as the attribute of the same
#: name: a figure reads one when its code reads that attribute
SETUP_OPTIONS = frozenset({"seeds", "jobs", "scale", "mfreq", "pdt", "engine"})
#: the options every figure reads: which figure, and where the run goes (``--quick``
#: chooses the defaults of the others and the partial directory)
EVERY_FIGURE = frozenset({"figure", "quick", "out"})
#: the options ``--plot-only`` reads: it redraws from the JSON in ``--out``
PLOT_ONLY = frozenset({"figure", "out", "plot_only"})


def options_read(name: str) -> frozenset[str]:
    """The options of :func:`main` that figure ``name`` reads: :data:`EVERY_FIGURE` and
    the :data:`SETUP_OPTIONS` whose attribute its function reads of its ``setup``
    (derived from the code, :func:`sim.experiments.reads.reads`)."""
    return EVERY_FIGURE | (reads(FIGURES[name], "setup", Setup) & SETUP_OPTIONS)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("figure", choices=[*FIGURES, "all"])
    ap.add_argument("--quick", action="store_true", help="small partial run")
    ap.add_argument("--seeds", type=int)
    ap.add_argument("--jobs", type=int)
    ap.add_argument("--scale", type=float)
    ap.add_argument("--mfreq", type=float, nargs="+", help="mfreq grid in ms")
    ap.add_argument("--pdt", type=float, nargs="+")
    ap.add_argument("--engine", choices=("python", "compiled"), default="python",
                    help="simulation engine (compiled: numba, identical event logs)")
    ap.add_argument("--out", help="write into this directory (always a PARTIAL run)")
    ap.add_argument("--plot-only", action="store_true",
                    help=f"{', '.join(BY_FREQUENCY)}: redraw the PNG from its JSON in --out "
                         "(default the committed results), compute nothing")
    args = ap.parse_args(argv)
    if args.plot_only:
        ap.refuse_unread(PLOT_ONLY, "--plot-only")
        if args.figure not in BY_FREQUENCY:
            print(f"error: --plot-only redraws {', '.join(BY_FREQUENCY)} only",
                  file=sys.stderr)
            return 2
        try:
            print(f"wrote {redraw(args.figure, Path(args.out) if args.out else FULL_DIR)}")
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    names = list(FIGURES) if args.figure == "all" else [args.figure]
    ap.refuse_unread(frozenset().union(*map(options_read, names)), f"figure {args.figure}")
    for name in names:
        try:   # each figure its own full seed count (FULL_SEEDS)
            setup = Setup(argparse.Namespace(**{**vars(args), "figure": name}))
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"== {name} -> {setup.out}", flush=True)
        md = FIGURES[name](setup)
        write_atomic(setup.out / f"{name}{setup.suffix}.md", md)
        print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
