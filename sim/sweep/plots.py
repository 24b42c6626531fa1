"""PNG plots of a results store (matplotlib, the ``plots`` extra).

- :func:`plot_metric`: a metric versus one parameter, one line per policy label, with
  the confidence interval over seeds as error bars where a point has n >= 2 runs (a
  point of one run has none, and the title gives n);
- :func:`plot_gap`: the gap of every label to a baseline label (for example a heuristic
  to the optimum), per value of a parameter;
- :func:`plot_schedule`: one cell re-simulated (cells are deterministic) and drawn as a
  Gantt chart (processors are assigned to jobs for drawing only, lowest free first,
  which the simulator itself never does), with the queue length and the utilization
  over time below it.

Times on the axes are hours since the first submit of the workload.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
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
                logy: bool = False, where: tuple[str, ...] | list[str] = (),
                labels: list[str] | None = None) -> Path:
    """``metric`` versus parameter ``x`` (numeric), one line per ``cols_by`` value, one
    panel per value of the other parameters that vary (or of ``facet``).

    Colours follow ``labels`` (default: every ``cols_by`` value in sorted order), so a label
    keeps its colour across plots; ``logy`` draws the metric on a log scale."""
    from sim.sweep.report import _label

    panels = facets(rows, x, cols_by, facet)
    if labels is None:
        labels = sorted({_label(r.get(cols_by)) for r in rows})
    colours = label_colours(labels)
    plt, fig, axes = _panels(len(panels))
    ns: set[int] = set()
    for ax, (name, part) in zip(axes.flat, panels, strict=False):
        p = pivot(part, metric, rows_by=[x], cols_by=cols_by, level=level)
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
        ax.set_ylabel(_metric_label(metric))
        if logy:
            ax.set_yscale("log")
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
    panel per value of the other varying parameters (or of ``facet``)."""
    from sim.sweep.report import _label

    colours = label_colours(labels or sorted({_label(r.get(cols_by)) for r in rows}))
    panels = facets(rows, x, cols_by, facet)
    plt, fig, axes = _panels(len(panels))
    for ax, (name, part) in zip(axes.flat, panels, strict=False):
        p = pivot(part, metric, rows_by=[x], cols_by=cols_by, baseline=baseline)
        others = [ck for ck in p.col_keys if ck != baseline]
        n = len(p.row_keys)
        width = 0.8 / max(1, len(others))
        for i, ck in enumerate(others):
            gaps = [p.gap(rk, ck) for rk in p.row_keys]
            ax.bar(np.arange(n) + i * width, [0.0 if g is None else g for g in gaps],
                   width=width, label=ck, color=colours.get(ck))
        ax.set_xticks(np.arange(n) + width * (len(others) - 1) / 2)
        ax.set_xticklabels([rk[0] for rk in p.row_keys])
        ax.axhline(0, color="black", lw=0.8)
        ax.set_xlabel(_axis_label(x))
        ax.set_ylabel(f"{metric}: gap to {baseline} [%]")
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


def plot_schedule(cell: dict[str, Any], out: str | Path, *, max_jobs: int | None = 400
                  ) -> Path:
    """Re-simulate ``cell`` and draw its first ``max_jobs`` jobs as a Gantt chart, with
    the queue length and the processor utilization over time."""
    from sim.batch.metrics import _queue_length, job_metrics
    from sim.sweep.cell import simulate_cell

    s, _ = simulate_cell(cell)
    m = job_metrics(s)
    n = len(m["start"]) if max_jobs is None else min(max_jobs, len(m["start"]))
    sel = slice(0, n)
    start, end, procs = m["start"][sel], m["end"][sel], m["procs"][sel]
    cap = s.workload.procs
    t0 = float(m["submit"][sel].min())
    hours = 3600.0
    plt = _plt()
    fig, (a1, a2, a3) = plt.subplots(3, 1, figsize=(9, 7), sharex=True,
                                     gridspec_kw={"height_ratios": [3, 1, 1]})
    lanes = _lanes(start, end, procs, cap)
    cmap = plt.get_cmap("tab20")
    for j in range(n):
        ps = lanes[j]
        if not ps or end[j] <= start[j]:
            continue
        runs, a = [], ps[0]
        for prev, cur in zip(ps, ps[1:] + [None], strict=True):
            if cur is None or cur != prev + 1:
                runs.append((a, prev - a + 1))
                a = cur
        for lo, width in runs:
            a1.broken_barh([((start[j] - t0) / hours, (end[j] - start[j]) / hours)],
                           (lo, width), facecolors=cmap(j % 20), edgecolor="none")
    a1.set_ylim(0, cap)
    a1.set_ylabel("processor")
    a1.set_title(f"{cell.get('label')} on {cell.get('workload')}"
                 f"{' ' + cell['month'] if cell.get('month') else ''}: first {n} jobs")
    sub = {k: v[sel] for k, v in m.items()}
    times, lengths = _queue_length(sub)
    a2.step((times - t0) / hours, lengths, where="post")
    a2.set_ylabel("queue length")
    ev = np.concatenate([start, end])
    dv = np.concatenate([procs, -procs])
    order = np.argsort(ev, kind="stable")
    busy = np.cumsum(dv[order])
    a3.step((ev[order] - t0) / hours, busy / cap, where="post")
    a3.set_ylim(0, 1.05)
    a3.set_ylabel("utilization")
    a3.set_xlabel("hours since first submit")
    fig.tight_layout()
    out = Path(out)
    save(fig, out)
    plt.close(fig)
    return out


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
