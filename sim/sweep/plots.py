"""PNG plots of a results store (matplotlib, the ``plots`` extra).

- :func:`plot_metric`: a metric versus one parameter, one line per policy label, with
  the confidence interval over seeds as error bars where a point has n >= 2 runs (a
  point of one run has none, and the title gives n); the metric axis is logarithmic
  where its positive values span more than two decades (:func:`y_scale`);
- :func:`plot_gap`: the gap of every label to a baseline label (for example a heuristic
  to the optimum), per value of a parameter;
- :func:`plot_schedule`: one cell re-simulated (cells are deterministic) and drawn as a
  Gantt chart (processors are assigned to jobs for drawing only, lowest free first,
  which the simulator itself never does), with the queue length and the utilization
  over time below it, zoomed to a time window: given, or on a large trace the window
  holding the first ``max_jobs`` jobs to start (:func:`gantt_window`).

Times on the axes are hours since the first submit of the workload.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from instances.atomic import write_atomic
from sim.sweep.report import pivot


def save(fig: Any, out: str | Path) -> None:
    """Render ``fig`` (format from the suffix of ``out``, PNG by default) and write it
    whole or not at all (``instances.atomic.write_atomic``)."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=Path(out).suffix[1:].lower() or "png", dpi=110)
    write_atomic(out, buf.getvalue())


def _plt():
    from sim.extras import require

    require("matplotlib", "plots").use("Agg")
    return require("matplotlib.pyplot", "plots")


#: units of the parameters that can be an x axis
PARAM_UNITS = {"procs": "processors", "load": "load factor (submit times / factor)",
               "sf": "slack factor", "awt": "s", "time_limit": "s", "window": "jobs",
               "n_jobs": "jobs"}


def _axis_label(param: str) -> str:
    unit = PARAM_UNITS.get(param.rsplit(".", 1)[-1])
    return f"{param} [{unit}]" if unit else param


def _metric_label(metric: str) -> str:
    """The metric in words with its unit (``sim.sweep.spec.METRICS``)."""
    from sim.sweep.spec import METRICS

    return METRICS.get(metric) or metric


#: nonzero magnitudes spanning more than this ratio (two decades) get a log axis
LOG_SPAN = 100.0


@dataclass(frozen=True)
class YScale:
    """How a value axis is drawn.

    Attributes
    ----------
    kind : str
        ``"linear"``, ``"log"`` or ``"symlog"`` (matplotlib's scale names).
    linthresh : float
        For ``"symlog"``: the axis is linear on ``[-linthresh, linthresh]`` (units of the
        values), logarithmic beyond.
    """

    kind: str = "linear"
    linthresh: float = 1.0

    def label(self, text: str) -> str:
        """``text`` with the scale said in words (nothing for a linear axis)."""
        if self.kind == "log":
            return f"{text}, log scale"
        if self.kind == "symlog":
            return f"{text}, log scale (linear within ±{self.linthresh:g})"
        return text

    def apply(self, ax: Any) -> None:
        """Set the scale on the matplotlib axes ``ax`` (its y axis)."""
        if self.kind == "symlog":
            ax.set_yscale("symlog", linthresh=self.linthresh)
        elif self.kind == "log":
            ax.set_yscale("log")


def y_scale(values: Iterable[float], mode: str = "auto", lows: Iterable[float] = ()
            ) -> YScale:
    """The axis for ``values`` (NaN ignored): ``mode`` ``"linear"``, ``"log"`` or
    ``"auto"`` (log where the magnitudes of the nonzero values span more than
    :data:`LOG_SPAN`).

    A log axis never hides a point: where a value is zero or negative the axis is
    symlog, linear within the smallest nonzero magnitude, logarithmic beyond; values
    that are all zero stay on a linear axis (the label then names no scale). ``lows``
    are the lower ends of error bars: one at or below zero makes a log axis symlog, so
    that no bar is cut."""
    if mode not in ("auto", "log", "linear"):
        raise ValueError(f"y scale {mode!r}: expected auto, log or linear")
    v = np.asarray([x for x in values if not math.isnan(x)], dtype=float)
    if mode == "linear" or not len(v):
        return YScale()
    mag = np.abs(v[v != 0])
    if mode == "auto" and (not len(mag) or mag.max() / mag.min() <= LOG_SPAN):
        return YScale()
    if not len(mag):  # only zeros: nothing to put on a log axis
        return YScale()
    if (v > 0).all() and all(lo > 0 for lo in lows if not math.isnan(lo)):
        return YScale("log")
    return YScale("symlog", float(mag.min()))


def check_axes(rows: list[dict[str, Any]], x: str, facet: list[str] | None) -> None:
    """Refuse, naming the option, a ``--plot`` parameter that some cell lacks or holds as
    anything but a number, and a ``--facet`` parameter no cell has: checked before the
    report writes a file."""
    from sim.sweep.report import check_parameters
    from sim.sweep.spec import short

    check_parameters(rows, ("--plot", [x]), ("--facet", facet or []))
    for r in rows:
        v = r.get(x)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"--plot {short(x)}: not a numeric parameter in every cell (one "
                             f"holds {short(v)}); a categorical parameter goes in --rows or "
                             f"--cols")


def facets(rows: list[dict[str, Any]], x: str, cols_by: str = "label",
           facet: list[str] | None = None) -> list[tuple[str, list[dict[str, Any]]]]:
    """Split ``rows`` into panels: one per value of ``facet`` (default: every parameter
    that varies besides ``x``, the columns, the seed and the policy options)."""
    from sim.sweep.report import _label, _option_keys, varying

    if facet is None:
        skip = {x, cols_by, "seed", "policy", "label"} | _option_keys(rows)
        facet = [k for k in varying(rows) if k not in skip]
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(_label(r.get(k)) for k in facet), []).append(r)
    from sim.sweep.report import _sort_key

    return [(", ".join(f"{k}={v}" for k, v in zip(facet, key, strict=True)), groups[key])
            for key in sorted(groups, key=_sort_key)]


def _title(text: str, rows: list[dict[str, Any]], where: tuple[str, ...] | list[str]) -> str:
    procs = sorted({r.get("procs") for r in rows if r.get("procs") is not None})
    bits = [text]
    if where:
        bits.append("where " + ", ".join(where))
    if len(procs) == 1:
        bits.append(f"{procs[0]} processors")
    return "; ".join(bits)


def plot_metric(rows: list[dict[str, Any]], metric: str, x: str, out: str | Path, *,
                cols_by: str = "label", level: float = 0.95, facet: list[str] | None = None,
                yscale: str = "auto", where: tuple[str, ...] | list[str] = (),
                labels: list[str] | None = None) -> Path:
    """``metric`` versus parameter ``x`` (numeric), one line per ``cols_by`` value, one
    panel per value of the other parameters that vary (or of ``facet``).

    Colours follow ``labels`` (default: every ``cols_by`` value in sorted order), so a label
    keeps its colour across plots; ``yscale`` (``"auto"``, ``"log"``, ``"linear"``) is
    decided once for every panel by :func:`y_scale` on the plotted means and said in the
    metric's axis label."""
    from sim.sweep.report import _label

    panels = facets(rows, x, cols_by, facet)
    if labels is None:
        labels = sorted({_label(r.get(cols_by)) for r in rows})
    colours = label_colours(labels)
    pivots = [pivot(part, metric, rows_by=[x], cols_by=cols_by, level=level)
              for _, part in panels]
    cells = [c for p in pivots for c in p.cells.values()]
    scale = y_scale([c[0] for c in cells], yscale,
                    lows=[c[0] - c[1] for c in cells if c[2] >= 2])
    plt, fig, axes = _panels(len(panels))
    ns: set[int] = set()
    for ax, (name, _), p in zip(axes.flat, panels, pivots, strict=False):
        xs = [float(rk[0]) for rk in p.row_keys]
        for ck in p.col_keys:
            pts = [(xv, p.cells[(rk, ck)]) for xv, rk in zip(xs, p.row_keys, strict=True)
                   if (rk, ck) in p.cells]
            if not pts:
                continue
            ns.update(c[2] for _, c in pts)
            bars = [(a, c) for a, c in pts if c[2] >= 2 and not math.isnan(c[1])]
            ax.plot([a for a, _ in pts], [c[0] for _, c in pts], marker="o", label=ck,
                    color=colours.get(ck))
            if bars:  # an interval only where one was computed
                ax.errorbar([a for a, _ in bars], [c[0] for _, c in bars],
                            yerr=[c[1] for _, c in bars], fmt="none", capsize=3,
                            color=colours.get(ck))
        ax.set_xlabel(_axis_label(x))
        ax.set_ylabel(scale.label(_metric_label(metric)))
        scale.apply(ax)
        if name:
            ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    from sim.sweep.report import spread_phrase

    fig.suptitle(_title(f"{metric} vs {x} ({spread_phrase(ns, level)})", rows, where),
                 fontsize=10)
    fig.tight_layout()
    out = Path(out)
    save(fig, out)
    plt.close(fig)
    return out


def _panels(n: int) -> tuple[Any, Any, Any]:
    plt = _plt()
    cols = min(3, n)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.8 * nrows), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return plt, fig, axes


def plot_gap(rows: list[dict[str, Any]], metric: str, baseline: str, x: str,
             out: str | Path, *, cols_by: str = "label", facet: list[str] | None = None,
             where: tuple[str, ...] | list[str] = (), labels: list[str] | None = None
             ) -> Path:
    """Percent gap of each ``cols_by`` value to ``baseline`` versus parameter ``x``, one
    panel per value of the other varying parameters (or of ``facet``); the gap axis is
    chosen by :func:`y_scale` (``"auto"``) on the drawn gaps. Where there is no gap (a
    cell missing, a baseline mean of 0) no bar is drawn and "n/a" is written."""
    from sim.sweep.report import _label

    colours = label_colours(labels or sorted({_label(r.get(cols_by)) for r in rows}))
    panels = facets(rows, x, cols_by, facet)
    pivots = [pivot(part, metric, rows_by=[x], cols_by=cols_by, baseline=baseline)
              for _, part in panels]
    scale = y_scale(g for p in pivots for rk in p.row_keys for ck in p.col_keys
                    if ck != baseline and (g := p.gap(rk, ck)) is not None)
    plt, fig, axes = _panels(len(panels))
    for ax, (name, _), p in zip(axes.flat, panels, pivots, strict=False):
        others = [ck for ck in p.col_keys if ck != baseline]
        n = len(p.row_keys)
        width = 0.8 / max(1, len(others))
        for i, ck in enumerate(others):
            gaps = [p.gap(rk, ck) for rk in p.row_keys]
            ax.bar(np.arange(n) + i * width, [math.nan if g is None else g for g in gaps],
                   width=width, label=ck, color=colours.get(ck))
            for k, g in enumerate(gaps):  # no gap (a cell missing, a baseline of 0): said
                if g is None:
                    ax.text(k + i * width, 0, "n/a", ha="center", va="bottom", fontsize=7,
                            rotation=90)
        ax.set_xticks(np.arange(n) + width * (len(others) - 1) / 2)
        ax.set_xticklabels([rk[0] for rk in p.row_keys])
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xlabel(_axis_label(x))
        ax.set_ylabel(scale.label(f"{metric}: gap to {baseline} [%]"))
        scale.apply(ax)
        if name:
            ax.set_title(name, fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(_title(f"gap of {metric} to {baseline}", rows, where), fontsize=10)
    fig.tight_layout()
    out = Path(out)
    save(fig, out)
    plt.close(fig)
    return out


def _lanes(start: np.ndarray, end: np.ndarray, procs: np.ndarray, capacity: int
           ) -> list[list[int]]:
    """Processor indices per job for drawing: at each start, the lowest free ones."""
    order = np.lexsort((np.arange(len(start)), start))
    free = list(range(capacity))
    running: list[tuple[int, int]] = []  # (end, job)
    out: list[list[int]] = [[] for _ in start]
    import heapq

    for j in order:
        t = start[j]
        while running and running[0][0] <= t:
            _, k = heapq.heappop(running)
            free.extend(out[k])
        free.sort()
        take = int(min(procs[j], len(free)))
        out[j], free = free[:take], free[take:]
        heapq.heappush(running, (int(end[j]), int(j)))
    return out


def in_window(start: np.ndarray, end: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Mask of the jobs that run in ``[lo, hi)`` (times in s): started before ``hi`` and
    ended after ``lo`` (a job of no length: started within the window)."""
    return (start < hi) & ((end > lo) | ((start >= lo) & (end <= start)))


def gantt_window(start: np.ndarray, end: np.ndarray, t0: float,
                 window: tuple[float, float] | None, max_jobs: int | None
                 ) -> tuple[float, float, bool]:
    """The time window drawn (absolute s) and whether it was chosen automatically.

    ``window`` is ``(START, END)`` in seconds since ``t0`` (the first submit). Without
    one, the whole schedule is drawn when it holds at most ``max_jobs`` jobs; else the
    window from ``t0`` to the start of job ``max_jobs + 1`` in start order, which holds
    the first ``max_jobs`` jobs to start (and those already running). A given window
    holding more than ``max_jobs`` jobs is refused (``ValueError``)."""
    if window is not None:
        lo, hi = t0 + float(window[0]), t0 + float(window[1])
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"--window {window[0]:g}:{window[1]:g}: expected START < END "
                             "(seconds since the first submit)")
        k = int(in_window(start, end, lo, hi).sum())
        if max_jobs is not None and k > max_jobs:
            raise ValueError(f"--window {window[0]:g}:{window[1]:g}: {k} jobs run in it, "
                             f"more than --gantt-jobs {max_jobs}; narrow the window or "
                             "raise --gantt-jobs")
        return lo, hi, False
    whole = (t0, float(max(end.max(), start.max() + 1)))
    if max_jobs is None or len(start) <= max_jobs:
        return whole[0], whole[1], False
    cut = float(np.sort(start)[max_jobs])
    if cut <= t0:  # more than max_jobs start at the first instant: one second shown
        cut = t0 + 1.0
    return t0, cut, True


def _gantt_title(cell: dict[str, Any], lo: float, hi: float, t0: float, k: int, n: int,
                 cap: int, auto: bool) -> str:
    hours = 3600.0
    part = cell.get("month") or cell.get("week")
    where = f"{cell.get('label')} on {cell.get('workload')}" \
            f"{' ' + part if part else ''}, {cap} processors"
    span = f"{lo - t0:g}-{hi - t0:g} s ({(lo - t0) / hours:.3g}-{(hi - t0) / hours:.3g} h)"
    why = "; zoomed automatically (--window to choose)" if auto else ""
    return f"{where}\n{k} of {n} jobs, window {span}{why}"


def plot_schedule(cell: dict[str, Any], out: str | Path, *,
                  window: tuple[float, float] | None = None, max_jobs: int | None = 400
                  ) -> Path:
    """:func:`schedule_figure` written to ``out`` (format from the suffix)."""
    fig = schedule_figure(cell, window=window, max_jobs=max_jobs)
    out = Path(out)
    try:
        save(fig, out)
    finally:
        _plt().close(fig)
    return out


def schedule_figure(cell: dict[str, Any], *, window: tuple[float, float] | None = None,
                    max_jobs: int | None = 400) -> Any:
    """Re-simulate ``cell`` and draw the jobs that run in a time window as a Gantt chart,
    with the queue length and the processor utilization over the same window; returns
    the matplotlib figure (nothing written).

    Parameters
    ----------
    cell : dict
        The cell's parameters (a store row's ``params``).
    window : (float, float), optional
        ``(START, END)`` in seconds since the first submit; jobs outside it are not drawn.
        Default: the window of :func:`gantt_window` (the whole schedule up to
        ``max_jobs`` jobs, else the first ``max_jobs`` to start).
    max_jobs : int, optional
        The most jobs drawn (``None``: no limit); a given window holding more is refused.

    The title gives the window, the jobs drawn of the schedule's total, the processors,
    and whether the window was chosen automatically."""
    from sim.batch.metrics import _queue_length, job_metrics
    from sim.sweep.cell import simulate_cell

    s, _ = simulate_cell(cell)
    m = job_metrics(s)
    start, end, procs = m["start"], m["end"], m["procs"]
    cap = s.workload.procs
    t0 = float(m["submit"].min())
    lo, hi, auto = gantt_window(start, end, t0, window, max_jobs)
    shown = np.flatnonzero(in_window(start, end, lo, hi))
    hours = 3600.0
    plt = _plt()
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(9, 7), sharex=True,
                                     gridspec_kw={"height_ratios": [3, 1, 1]})
    early = np.flatnonzero(start < hi)  # every job that holds processors before hi
    lanes = dict(zip(early.tolist(), _lanes(start[early], end[early], procs[early], cap),
                     strict=True))
    cmap = plt.get_cmap("tab20")
    for j in shown:
        _draw_job(a1, lanes[int(j)], (start[j] - t0) / hours, (end[j] - start[j]) / hours,
                  cmap(int(j) % 20))
    a1.set_ylim(0, cap)
    a1.set_ylabel("processor")
    a1.set_title(_gantt_title(cell, lo, hi, t0, len(shown), len(start), cap, auto),
                 fontsize=9)
    times, lengths = _queue_length(m)
    a2.step((times - t0) / hours, lengths, where="post")
    a2.set_ylim(0, 1.05 * max(1, _max_on(times, lengths, lo, hi)))
    a2.set_ylabel("queue length")
    ev, busy = busy_processors(start, end, procs)
    a3.step((ev - t0) / hours, busy / cap, where="post")
    a3.set_ylim(0, 1.05)
    a3.set_ylabel("utilization")
    a3.set_xlabel("hours since first submit")
    a3.set_xlim((lo - t0) / hours, (hi - t0) / hours)
    fig.tight_layout()
    return fig


def busy_processors(start: np.ndarray, end: np.ndarray, procs: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Busy processors over time: ``(times, busy)`` (s, processors), ``busy[i]`` from
    ``times[i]`` on; at one instant the jobs ending free their processors before the
    jobs starting take them."""
    ev = np.concatenate([end, start])
    dv = np.concatenate([-procs, procs])
    order = np.argsort(ev, kind="stable")
    return ev[order], np.cumsum(dv[order])


def _max_on(times: np.ndarray, values: np.ndarray, lo: float, hi: float) -> float:
    """The largest of a step function's ``values`` (``values[i]`` on
    ``[times[i], times[i+1])``) over ``[lo, hi)``."""
    keep = (times < hi) & (np.append(times[1:], np.inf) > lo)
    return float(values[keep].max()) if keep.any() else 0.0


def _draw_job(ax: Any, ps: list[int], x: float, width: float, colour: Any) -> None:
    """One job's bars: a rectangle per run of consecutive processors ``ps`` (hours)."""
    if not ps or width <= 0:
        return
    a = ps[0]
    for prev, cur in zip(ps, ps[1:] + [None], strict=True):
        if cur is None or cur != prev + 1:
            ax.broken_barh([(x, width)], (a, prev - a + 1), facecolors=colour,
                           edgecolor="none")
            a = cur


def label_colours(labels: Iterable[str]) -> dict[str, str]:
    """One colour per label, in order of first appearance: matplotlib's default cycle
    (``C0``, ``C1``, ...), so that a label keeps its colour in every panel and plot."""
    out: dict[str, str] = {}
    for lab in labels:
        if lab not in out:
            out[lab] = f"C{len(out) % 10}"
    return out


def plot_bench_gaps(runs: list[dict[str, Any]], out: str | Path) -> Path:
    """Distribution of the gap to the best known value per solver (box plot with every
    run as a point), in percent."""
    solvers = list(dict.fromkeys(r["solver"] for r in runs))
    colours = label_colours(solvers)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * len(solvers) + 2), 4.2))
    data = [[100 * r["gap_to_best"] for r in runs
             if r["solver"] == s and r["gap_to_best"] is not None] for s in solvers]
    ax.boxplot([d if d else [math.nan] for d in data], showfliers=False)
    rng = np.random.default_rng(0)  # jitter only, the same in every drawing
    for i, (s, d) in enumerate(zip(solvers, data, strict=True), start=1):
        ax.scatter(i + rng.uniform(-0.15, 0.15, len(d)), d, s=10, color=colours[s],
                   alpha=0.7)
    ax.set_xticks(range(1, len(solvers) + 1))
    ax.set_xticklabels(solvers, rotation=30, ha="right")
    ax.set_ylabel("gap to best known [%]")
    files = len({r["file"] for r in runs})
    ax.set_title(f"gap to the best known value, {files} files")
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    out = Path(out)
    save(fig, out)
    plt.close(fig)
    return out


def plot_performance_profile(runs: list[dict[str, Any]], out: str | Path) -> Path:
    """Dolan & Moré performance profile on solution quality: for each solver, the share of
    files on which its performance ratio r = 1 + gap to best is at most tau (a run
    without a solution never counts)."""
    solvers = list(dict.fromkeys(r["solver"] for r in runs))
    colours = label_colours(solvers)
    files = sorted({r["file"] for r in runs})
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ratios = {s: sorted(1.0 + r["gap_to_best"] for r in runs
                        if r["solver"] == s and r["gap_to_best"] is not None)
              for s in solvers}
    finite = [x for v in ratios.values() for x in v]
    hi = max(1.01, max(finite) * 1.05 if finite else 1.01)
    for s in solvers:
        xs = [1.0, *ratios[s], hi]
        ys = [0.0, *[(i + 1) / len(files) for i in range(len(ratios[s]))],
              len(ratios[s]) / len(files)]
        ax.step(xs, ys, where="post", label=s, color=colours[s])
    ax.set_xlim(1.0, hi)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("tau: performance ratio 1 + gap to best known (1 = best)")
    ax.set_ylabel("share of files with ratio <= tau")
    ax.set_title(f"performance profile (Dolan & Moré), {len(files)} files")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = Path(out)
    save(fig, out)
    plt.close(fig)
    return out
