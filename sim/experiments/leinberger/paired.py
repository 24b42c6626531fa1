"""Paired per-cell tests of protocol S's gains over FF-EASY, from the committed results.

    python -m sim.experiments.leinberger.paired [--out DIR]

Reads ``results/stationary/fig2.json`` (the committed protocol S run; only its stationary
units, the ones whose calibration protocol S accepted) and writes ``paired.md`` and
``paired.json`` to ``--out`` (default ``results/stationary/``). Nothing is simulated.

**The paired test.** In a unit (cell x seed) every policy runs on the same job list and
arrivals as FF-EASY, so the unit's gain ``g = 100 (M_FF-EASY - M_X) / M_FF-EASY`` (%) is a
paired difference. Per cell (scaling, K, distribution, queue) and policy, the seeds'
gains give a mean and its 95% Student-t interval (:func:`sim.experiments.common.mean_ci`,
``n - 1`` degrees of freedom): a *gain* when the interval lies above 0, a *loss* when it
lies below 0, else *not distinguishable* (n.d.), which a cell with one seed always is.
A sign or Wilcoxon signed-rank test is not used: with at most 5 seeds per cell their
smallest two-sided p-value is ``2 / 2^5 = 0.0625``, so neither could ever call a cell
distinguishable at 5%.

**Differences between cells.** Two cells are different workloads with separately
accepted seeds (another distribution, another K, or another rate for the queue), so
their difference is unpaired: the difference of the cell means with Welch's 95% interval
(n.d. when either cell has fewer than two seeds, or the interval spans 0). Three such
tables: BB-EASY's ART gain uniform minus exponential per (scaling, K, queue); BB-EASY's
ART gain at queue 256 minus queue 64 per (scaling, K, distribution), the load trend;
BL-EASY's ART gain at K = 8 minus K = 2 per (scaling, distribution, queue), the trend
in K. A trend is tested on its two ends: with 1-5 seeds per cell the middle cell adds
a comparison with less power than the ends have together.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from sim.argparser import Parser
from sim.experiments import common
from sim.stats import t_quantile

HERE = Path(__file__).resolve().parent
S_DIR = HERE / "results" / "stationary"
SOURCE = S_DIR / "fig2.json"
POLICIES = ("BL-EASY", "BB-EASY", "BB-EASY-nofull", "FF-CONS")
METRICS = (("gain_art_seeds", "Average response time (Figure 2)"),
           ("gain_wart_seeds", "Weighted average response time (Figure 3)"))
GAIN, LOSS, ND = "gain", "loss", "n.d."
KEYS = ("scaling", "K", "dist", "queue")


def classify(gains: list[float]) -> tuple[float, float, str]:
    """Mean paired gain (%), its 95% t half-width (NaN for one seed) and the outcome:
    ``gain``, ``loss`` or ``n.d.`` (the interval spans 0, or one seed)."""
    mean, half = common.mean_ci(gains)
    if math.isnan(half):
        return mean, half, ND
    if mean - half > 0:
        return mean, half, GAIN
    return mean, half, (LOSS if mean + half < 0 else ND)


def cell_text(gains: list[float]) -> str:
    """A table cell: ``"+14.7 +- 8.4 gain (4/4)"``, the last pair being the seeds with a
    positive gain; ``"+1.8 n.d. (1/1)"`` for one seed; ``"-"`` for none."""
    if not gains:
        return "-"
    mean, half, word = classify(gains)
    ci = "" if math.isnan(half) else f" +- {half:.1f}"
    return f"{mean:+.1f}{ci} {word} ({sum(g > 0 for g in gains)}/{len(gains)})"


def welch(a: list[float], b: list[float]) -> tuple[float, float]:
    """Difference of the means ``mean(a) - mean(b)`` and Welch's 95% half-width (NaN
    when either sample has fewer than two values or both have no spread)."""
    d = math.fsum(a) / len(a) - math.fsum(b) / len(b)
    if len(a) < 2 or len(b) < 2:
        return d, math.nan
    va, vb = (math.fsum((x - math.fsum(s) / len(s)) ** 2 for x in s) / (len(s) - 1) / len(s)
              for s in (a, b))
    if va + vb == 0:
        return d, math.nan
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return d, t_quantile(0.975, df) * math.sqrt(va + vb)


def _seeds(row: dict[str, Any], label: str, metric: str) -> list[float]:
    return list(row["policies"].get(label, {}).get(metric, []))


def cell_rows(rows: list[dict[str, Any]], metric: str) -> list[list[object]]:
    """One table row per cell: its keys, its seeds and each policy's :func:`cell_text`."""
    return [[*(r[k] for k in KEYS), len(r["policies"].get("FF-EASY", {}).get("seeds", [])),
             *(cell_text(_seeds(r, p, metric)) for p in POLICIES)] for r in rows]


def counts(rows: list[dict[str, Any]]) -> list[list[object]]:
    """Per scaling, metric and policy: the cells with a significant gain, a significant
    loss, not distinguishable (of them with one seed), and no stationary seed."""
    out = []
    for scaling in sorted({r["scaling"] for r in rows}, key=lambda s: s != "G-b"):
        mine = [r for r in rows if r["scaling"] == scaling]
        for metric, title in METRICS:
            for p in POLICIES:
                words = [classify(g)[2] for r in mine if (g := _seeds(r, p, metric))]
                one = sum(len(_seeds(r, p, metric)) == 1 for r in mine)
                out.append([scaling, title.split(" (")[0], p, words.count(GAIN),
                            words.count(LOSS), f"{words.count(ND)} ({one})",
                            len(mine) - len(words)])
    return out


def _between(r: dict[str, Any], other: dict[str, Any] | None, label: str, metric: str
             ) -> tuple[list[str], float | None, float]:
    """Two cells' ``label`` gains compared: each cell's mean and seeds as text
    (``"+12.3 (4)"``, ``"- (0)"``), and :func:`welch` of ``r`` minus ``other`` (the
    difference None when either has no seed)."""
    a = _seeds(r, label, metric)
    b = _seeds(other, label, metric) if other is not None else []
    means = [f"{math.fsum(x) / len(x):+.1f} ({len(x)})" if x else "- (0)" for x in (a, b)]
    if not a or not b:
        return means, None, math.nan
    return (means, *welch(a, b))


def dist_rows(rows: list[dict[str, Any]], label: str = "BB-EASY",
              metric: str = "gain_art_seeds") -> list[list[object]]:
    """Per (scaling, K, queue): the uniform and exponential cells' mean gains and seeds,
    their difference with Welch's interval, and the outcome."""
    by = {tuple(r[k] for k in KEYS): r for r in rows}
    out = []
    for (scaling, K, dist, L), r in by.items():
        other = by.get((scaling, K, "exponential", L))
        if dist != "uniform" or other is None:
            continue
        means, d, half = _between(r, other, label, metric)
        if d is None:
            out.append([scaling, K, L, *means, "-", "-", "-"])
            continue
        word = ND if math.isnan(half) or abs(d) <= half else ("uniform above" if d > 0
                                                              else "exponential above")
        out.append([scaling, K, L, *means, f"{d:+.1f}",
                    "-" if math.isnan(half) else f"+- {half:.1f}", word])
    return out


def trend_rows(rows: list[dict[str, Any]], label: str, along: str, low: object,
               high: object, metric: str = "gain_art_seeds") -> list[list[object]]:
    """Per cell of the other keys: ``label``'s mean gain at ``along = high`` and at
    ``along = low`` (seeds), their difference high minus low with Welch's 95% half-width
    (``"+12.3 +- 8.1"``; the difference alone when an end has one seed; ``"-"`` when an
    end has none) and the outcome: ``higher``, ``lower`` or ``n.d.``."""
    rest = [k for k in KEYS if k != along]
    by = {tuple(r[k] for k in KEYS): r for r in rows}
    out = []
    for key, r in by.items():
        cell = dict(zip(KEYS, key, strict=True))
        if cell[along] != high:
            continue
        other = by.get(tuple(low if k == along else cell[k] for k in KEYS))
        means, d, half = _between(r, other, label, metric)
        if d is None:
            out.append([*(cell[k] for k in rest), *means, "-", "-"])
            continue
        word = ND if math.isnan(half) or abs(d) <= half else ("higher" if d > 0 else "lower")
        text = f"{d:+.1f}" + ("" if math.isnan(half) else f" +- {half:.1f}")
        out.append([*(cell[k] for k in rest), *means, text, word])
    return out


TRENDS = (("BB-EASY", "queue", 64, 256, "BB-EASY ART gain against the load: queue 256 minus "
           "queue 64"),
          ("BL-EASY", "K", 2, 8, "BL-EASY ART gain against K: K = 8 minus K = 2"))
"""The trend tables: policy, the key the trend runs along, its low and high end, title."""


def report(src: dict[str, Any], command: str, commit: str) -> tuple[str, dict[str, Any]]:
    """The Markdown text and the JSON data of the paired tests of ``src`` (the parsed
    ``fig2.json`` of protocol S)."""
    rows = src["rows"]
    lines = ["# Protocol S: paired per-cell tests of the gains over FF-EASY", "",
             f"Command: `{command}`; code at commit {commit}. Input: `fig2.json` of this "
             f"directory (`{src.get('command', '-')}`; units at commit(s) "
             f"{', '.join(src.get('commits', [])) or '-'}, tables at "
             f"{src.get('written_by', '-')}); only the stationary units (the seeds protocol "
             "S accepted). Nothing was simulated.", "",
             "Cell: mean paired gain over the seeds in % +- the 95% Student-t half-width, "
             "the outcome, and (k/n) the seeds with a positive gain. Outcome: **gain** (the "
             "interval lies above 0), **loss** (below 0), **n.d.** (not distinguishable: "
             "the interval spans 0, or the cell has one seed). A seed's gain is "
             "`100 (M_FF-EASY - M_X) / M_FF-EASY` on the unit's one workload, so it is a "
             "paired difference. `sim/experiments/leinberger/paired.py` says why the "
             "t-interval and not a sign or Wilcoxon test."]
    data: dict[str, Any] = {"command": command, "commit": commit,
                            "input": {k: src.get(k) for k in ("command", "commits",
                                                              "written_by")},
                            "policies": list(POLICIES), "cells": {}}
    head = ["scaling", "K", "dist", "queue", "seeds", *POLICIES]
    for metric, title in METRICS:
        body = cell_rows(rows, metric)
        lines += ["", f"## {title}", "", *common.markdown_table(head, body)]
        data["cells"][metric] = [dict(zip(head, b, strict=True)) for b in body]
    cnt = counts(rows)
    lines += ["", "## Cells per outcome", "",
              *common.markdown_table(["scaling", "metric", "policy", "gain", "loss",
                                      "n.d. (one seed)", "no stationary seed"], cnt)]
    data["counts"] = cnt
    dist = dist_rows(rows)
    lines += ["", "## BB-EASY ART gain, uniform minus exponential requirements", "",
              "Unpaired (different workloads, separately accepted seeds): the cells' mean "
              "gains (seeds), their difference in points with Welch's 95% half-width; "
              "n.d. when the interval spans 0 or a cell has one seed.", "",
              *common.markdown_table(["scaling", "K", "queue", "uniform (seeds)",
                                      "exponential (seeds)", "difference", "Welch 95%",
                                      "outcome"], dist)]
    data["bb_uniform_minus_exponential"] = dist
    data["trends"] = {}
    for label, along, low, high, title in TRENDS:
        body = trend_rows(rows, label, along, low, high)
        head = [*(k for k in KEYS if k != along), f"{along} {high} (seeds)",
                f"{along} {low} (seeds)", "difference", "outcome"]
        lines += ["", f"## {title}", "",
                  f"Unpaired, as above: the cells' mean gains (seeds) at {along} = {high} "
                  f"and {along} = {low}, the difference in points +- Welch's 95% "
                  "half-width (the difference alone when an end has one seed), the "
                  "outcome (n.d.: the interval spans 0, or an end has one seed).", "",
                  *common.markdown_table(head, body)]
        data["trends"][f"{label} {along}"] = [dict(zip(head, b, strict=True)) for b in body]
    return "\n".join(lines) + "\n", data


def main(argv: list[str] | None = None) -> int:
    """The command line: write ``paired.md`` and ``paired.json`` to ``--out``."""
    ap = Parser(prog="python -m sim.experiments.leinberger.paired",
                description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=S_DIR,
                    help=f"directory of paired.md and paired.json (default {S_DIR})")
    args = ap.parse_args(argv)
    try:
        src = json.loads(SOURCE.read_text())
        if not src.get("complete") or src.get("partial"):
            raise ValueError(f"{SOURCE}: not a complete protocol S run")
        cmd = common.command(None if argv is None else
                             ["python", "-m", "sim.experiments.leinberger.paired", *argv])
        text, data = report(src, cmd, common.commit())
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.out.exists() and not args.out.is_dir():
        print(f"error: --out {args.out}: not a directory", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    common.write_atomic(args.out / "paired.md", text)
    common.write_atomic(args.out / "paired.json", json.dumps(data, indent=1))
    print(f"written: {args.out / 'paired.md'}, {args.out / 'paired.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
