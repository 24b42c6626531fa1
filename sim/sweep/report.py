"""Tables from a results store: pivots of one metric with means and confidence
intervals over seeds, percentiles of wait and bounded slowdown, and the gap to a named
baseline; Markdown and CSV.

The mean of a metric over the n runs of a table cell (its seeds) is reported with the
half-width of its two-sided Student-t confidence interval,
``t_{(1+level)/2, n-1} * s / sqrt(n)`` (s the sample standard deviation). A cell of one
run (n = 1: a trace is deterministic, so its cells have one seed) has no interval, and
the text says so (``spread_phrase``) instead of announcing one. The gap of a column to
the baseline column is ``(mean - mean_baseline) / mean_baseline`` in percent, on the
means. With a baseline and replicated cells, the paired difference ``value - baseline`` on
the same run (the same seed, and the same value of each ``over`` parameter, such as the
month or week of a split) is reported with its mean, n and its own interval over the pairs
(only where n >= 2): the runs of two policies on one replica or part share its own
variation, which the difference cancels; the difference on each part goes to a CSV.
``over`` makes parameters (``month``, ``week``) replication axes like the seed: their
values become the runs of a table cell instead of rows.

``load`` is a compression of the submit times (each job's submit time after the first is
divided by the factor), not an offered load; the report shows the offered load each
factor gives (``offered_load``, work / (processors x span of submits)). A cell whose
queued work grows across its arrivals (``backlog_growth`` at least ``SATURATION_GROWTH``
s per s and ``backlog_end_s`` at least ``SATURATION_BACKLOG`` s; ``sim.batch.metrics``)
is saturated: its waits grow with the length of the run, and the report warns with
those measures.

A store is only read (see ``sim.sweep.store``). Every refusal names the store file and
the option or field in one line: a stored row whose JSON is invalid or whose metric is
not a number, a confidence level outside (0, 1), an unknown metric or parameter (with
the closest known names, never the whole list).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instances.atomic import write_atomic
from sim.stats import mean_ci
from sim.sweep.spec import METRICS, closest, flat_params, short
from sim.sweep.store import Store, StoreError

#: parameters never used to group cells (they are not settings of the experiment)
_NOT_PARAMS = {"time_limit"}
#: a cell saturates when its queued work grows by at least this much per second of
#: arrivals (s per s; least squares, ``sim.batch.metrics.backlog_trend``) ...
SATURATION_GROWTH = 0.02
#: ... and at least this much machine work is queued at its last submit (s: one day)
SATURATION_BACKLOG = 86_400.0


def level_text(level: float) -> str:
    """A confidence level as the percentage it is, to as many digits as it has (``0.999``
    is ``99.9%``, never rounded to ``100%``)."""
    return f"{100 * level:.12g}%"


def spread_phrase(ns: Iterable[int], level: float, over: Sequence[str] = ("seed",)) -> str:
    """What a table of means says about its spread, given the runs per cell ``ns`` (one
    run per value of the ``over`` parameters): an interval only where one was computed
    (n >= 2)."""
    ns = sorted(set(ns))
    if not ns or ns[-1] < 2:
        return "one run per cell (n = 1), so no interval"
    ci = f"mean ± {level_text(level)} confidence half-width (Student t)"
    per = f"one per {', '.join(over)}"
    if ns[0] >= 2:
        counts = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}..{ns[-1]}"
        return f"{ci} over the runs ({per}) of each cell, {counts}"
    return f"{ci} where a cell has n >= 2 runs ({per}); a cell of n = 1 shows its one value"


def load_rows(path: str | Path, status: str | None = "done") -> list[dict[str, Any]]:
    """Flat rows of a store: parameters (``flat_params``), metrics, and ``key``,
    ``status``, ``error``, ``code_version``, ``trace_sha256``, ``wall_seconds``."""
    with Store.open(path, create=False) as st:
        out = []
        for r in st.rows(status):
            _check_row(path, r)
            row = flat_params(r["params"])
            row.update(r["metrics"] or {})
            for k in ("key", "status", "error", "code_version", "trace_sha256",
                      "workload_sha256", "wall_seconds", "sim_seconds"):
                row[k] = r[k]
            row["cleaning"] = r["cleaning"]
            out.append(row)
    return out


def _check_row(path: str | Path, r: dict[str, Any]) -> None:
    """StoreError naming the file, cell and field when a stored row cannot be reported
    (parameters or metrics that are not tables, a metric that is not a number)."""
    where = f"{path}: cell {short(r.get('key'))}"
    for col in ("params", "metrics"):
        v = r.get(col)
        if not isinstance(v, dict) and not (col == "metrics" and v is None):
            raise StoreError(f"{where}: column {col}: expected a JSON object, got {short(v)}")
    for col in ("options", "synthetic"):
        v = r["params"].get(col)
        if v is not None and not isinstance(v, dict):
            raise StoreError(f"{where}: params.{col}: expected a JSON object, got {short(v)}")
    for m, v in (r.get("metrics") or {}).items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise StoreError(f"{where}: metrics.{str(m)[:40]}: expected a number, "
                             f"got {short(v)}")


def check_level(level: Any) -> float:
    """The confidence level as a float in (0, 1); ValueError naming ``--level``."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) \
            or not 0 < level < 1:
        raise ValueError(f"--level {short(level)}: the confidence level must be between 0 "
                         "and 1 (exclusive), e.g. 0.95")
    return float(level)


def _label(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def _parse_where(where: Iterable[str]) -> dict[str, str]:
    out = {}
    for w in where:
        k, sep, v = w.partition("=")
        if not sep or not k:
            raise ValueError(f"--where {short(w)}: expected KEY=VALUE")
        if k.strip() in out:  # every condition must hold, and a cell has one value of k
            raise ValueError(f"--where {short(k.strip())}: given more than once (a cell has "
                             f"one value of it; --rows {short(k.strip())} shows each value)")
        out[k.strip()] = v.strip()
    return out


def select(rows: list[dict[str, Any]], where: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Rows whose parameters match every ``KEY=VALUE`` (values compared as text)."""
    cond = _parse_where(where)
    if cond and rows:
        known = set().union(*(r.keys() for r in rows))
        for k in cond:
            if k not in known:
                raise ValueError(f"--where {short(k)}: unknown parameter; "
                                 f"{closest(k, known - _META - set(METRICS), 'parameters')}")
    return [r for r in rows if all(_label(r.get(k)) == v for k, v in cond.items())]


@dataclass
class Pivot:
    """A pivot of one metric: ``cells[(row_key, col_key)] = (mean, half_width, n)``."""

    metric: str
    rows_by: list[str]
    cols_by: str
    row_keys: list[tuple[str, ...]]
    col_keys: list[str]
    cells: dict[tuple[tuple[str, ...], str], tuple[float, float, int]]
    level: float
    baseline: str | None = None
    runs: dict[tuple[tuple[str, ...], str], dict[tuple[str, ...], float]] | None = None
    over: tuple[str, ...] = ("seed",)

    def paired(self, rk: tuple[str, ...], ck: str) -> tuple[float, float, int] | None:
        """Mean, half-width and n of ``value - baseline`` over the runs (seed and ``over``
        values) both columns have in row ``rk``; None without a baseline or pairs."""
        if self.baseline is None or self.runs is None:
            return None
        a, b = self.runs.get((rk, ck), {}), self.runs.get((rk, self.baseline), {})
        diffs = [a[k] - b[k] for k in sorted(set(a) & set(b))]
        return mean_ci(diffs, self.level) if diffs else None

    def gap(self, rk: tuple[str, ...], ck: str) -> float | None:
        """Percent gap of the mean to the baseline column in the same row."""
        if self.baseline is None or (rk, self.baseline) not in self.cells \
                or (rk, ck) not in self.cells:
            return None
        b = self.cells[(rk, self.baseline)][0]
        v = self.cells[(rk, ck)][0]
        return (v - b) / b * 100 if b else None


def varying(rows: list[dict[str, Any]]) -> list[str]:
    """Parameters (not metrics) that take more than one value over ``rows``."""
    params = set()
    for r in rows:
        params |= {k for k in r if k not in METRICS and k not in _META}
    out = []
    for k in sorted(params - _NOT_PARAMS):
        vals = {_label(r.get(k)) for r in rows}
        if len(vals) > 1:
            out.append(k)
    return out


_META = {"key", "status", "error", "code_version", "trace_sha256", "workload_sha256",
         "wall_seconds", "sim_seconds", "cleaning"}


def check_parameters(rows: list[dict[str, Any]], *checks: tuple[str, Sequence[str]]) -> None:
    """Raise ValueError naming the option for the first key no row has, ``checks`` being
    (option, keys) pairs."""
    known = set().union(*(r.keys() for r in rows))
    for opt, keys in checks:
        for k in keys:
            if k not in known:
                raise ValueError(f"{opt} {short(k)}: unknown parameter; "
                                 f"{closest(k, known - _META - set(METRICS), 'parameters')}")


def pivot(rows: list[dict[str, Any]], metric: str, *, rows_by: Sequence[str] | None = None,
          cols_by: str = "label", baseline: str | None = None, level: float = 0.95,
          col_order: Sequence[str] = (), over: Sequence[str] = ()) -> Pivot:
    """Group ``rows`` by ``rows_by`` x ``cols_by`` and average ``metric`` over the rest
    (the seeds, and the values of the ``over`` parameters).

    Raises ValueError when a parameter other than ``seed`` varies inside a group (add
    it to ``rows_by`` or filter it out), or for an unknown metric / parameter.
    """
    if metric not in METRICS:
        raise ValueError(f"--metric {short(metric)}: unknown metric; "
                         f"{closest(metric, METRICS, 'metrics')}")
    level = check_level(level)
    if not rows:
        raise ValueError("no finished cells to report")
    vary = varying(rows)
    reps = ("seed", *[k for k in over if k != "seed"])
    if rows_by is None:
        rows_by = [k for k in vary if k not in (cols_by, *reps, "policy")]
        if cols_by == "label":
            rows_by = [k for k in rows_by if k not in _option_keys(rows)]
    check_parameters(rows, ("--rows", rows_by), ("--cols", [cols_by]), ("--over", list(over)))
    group = set(rows_by) | {cols_by, *reps}
    if cols_by == "label":
        group |= {"policy"} | _option_keys(rows)
    free = [k for k in vary if k not in group]
    values: dict[tuple[tuple[str, ...], str], list[float]] = {}
    runs: dict[tuple[tuple[str, ...], str], dict[tuple[str, ...], float]] = {}
    firsts: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
    for r in rows:
        rk = tuple(_label(r.get(k)) for k in rows_by)
        ck = _label(r.get(cols_by))
        first = firsts.setdefault((rk, ck), r)
        for k in free:
            if _label(r.get(k)) != _label(first.get(k)):
                raise ValueError(f"parameter {k!r} varies inside a table cell "
                                 f"({short(_label(first.get(k)), 40)} vs "
                                 f"{short(_label(r.get(k)), 40)}); add it to --rows or select "
                                 "one value with --where")
        v = r.get(metric)
        if v is not None:
            values.setdefault((rk, ck), []).append(float(v))
            runs.setdefault((rk, ck), {})[tuple(_label(r.get(k)) for k in reps)] = float(v)
    row_keys = sorted({k[0] for k in firsts}, key=_sort_key)
    present = {_label(r.get(cols_by)) for r in rows}
    col_keys = [c for c in col_order if c in present]
    col_keys += sorted(present - set(col_keys), key=lambda c: _sort_key((c,)))
    if baseline is not None and baseline not in col_keys:
        raise ValueError(f"--baseline {short(baseline)}: not a value of {short(cols_by)}; "
                         f"{closest(baseline, col_keys, 'values')}")
    cells = {k: mean_ci(v, level) for k, v in values.items()}
    return Pivot(metric, list(rows_by), cols_by, row_keys, col_keys, cells, level, baseline,
                 runs, reps)


def _option_keys(rows: list[dict[str, Any]]) -> set[str]:
    from sim import registry

    out: set[str] = set()
    for name in {r.get("policy") for r in rows}:
        if name in registry.POLICIES:
            out |= registry.policy_options(name) or set()
    return out


def _sort_key(key: tuple[str, ...]) -> tuple:
    out = []
    for x in key:
        try:
            out.append((0, float(x), ""))
        except ValueError:
            out.append((1, 0.0, x))
    return tuple(out)


def _fmt_cell(c: tuple[float, float, int] | None, digits: int) -> str:
    if c is None:
        return "-"
    mean, hw, n = c
    if math.isnan(mean):
        return "-"
    if n < 2 or math.isnan(hw):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {hw:.{digits}f}"


def legend(metrics: Iterable[str]) -> str:
    return "; ".join(f"`{m}`: {METRICS[m]}" for m in metrics)


def to_markdown(p: Pivot, digits: int = 2) -> str:
    """The pivot as a Markdown table (plus a gap table when there is a baseline)."""
    head = [_heading(k) for k in p.rows_by] if p.rows_by else [""]
    ns = {c[2] for c in p.cells.values()}
    lines = [f"**{p.metric}** ({METRICS[p.metric]}): {spread_phrase(ns, p.level, p.over)}; "
             f"columns: {p.cols_by}", ""]
    lines.append("| " + " | ".join(head + p.col_keys) + " |")
    lines.append("|" + "---|" * (len(head) + len(p.col_keys)))
    for rk in p.row_keys:
        cells = [_fmt_cell(p.cells.get((rk, ck)), digits) for ck in p.col_keys]
        lines.append("| " + " | ".join(list(rk or ("all",)) + cells) + " |")
    lines.append("")
    lines.append(f"Runs per cell (n): {', '.join(str(n) for n in sorted(ns))}.")
    if p.baseline is not None:
        lines += ["", f"Gap to `{p.baseline}` ((value - {p.baseline}) / {p.baseline}, "
                  "on the means), %:", ""]
        lines.append("| " + " | ".join(head + p.col_keys) + " |")
        lines.append("|" + "---|" * (len(head) + len(p.col_keys)))
        for rk in p.row_keys:
            gaps = [p.gap(rk, ck) for ck in p.col_keys]
            lines.append("| " + " | ".join(list(rk or ("all",)) + [
                "-" if g is None else f"{g:+.1f}" for g in gaps]) + " |")
        lines += _paired_table(p, head, digits)
    return "\n".join(lines) + "\n"


def _paired_table(p: Pivot, head: list[str], digits: int) -> list[str]:
    """The paired differences to the baseline, when some pair has n >= 2."""
    pairs = {(rk, ck): p.paired(rk, ck) for rk in p.row_keys for ck in p.col_keys
             if ck != p.baseline}
    ns = {c[2] for c in pairs.values() if c is not None}
    if not ns or max(ns) < 2:
        return []
    cols = [ck for ck in p.col_keys if ck != p.baseline]
    lines = ["", f"Paired difference to `{p.baseline}` (value - {p.baseline} on the same run: "
             f"same {', '.join(p.over)}), {spread_phrase(ns, p.level, p.over)}:", "",
             "| " + " | ".join(head + cols) + " |", "|" + "---|" * (len(head) + len(cols))]
    for rk in p.row_keys:
        cells = [_fmt_cell(pairs.get((rk, ck)), digits) for ck in cols]
        lines.append("| " + " | ".join(list(rk or ("all",)) + cells) + " |")
    lines += ["", f"Pairs per cell (n): {', '.join(str(n) for n in sorted(ns))}."]
    return lines


def paired_csv(p: Pivot) -> str:
    """Long CSV of the paired differences to the baseline, one line per part (a run both
    columns have: the same seed and ``over`` values) with the value, the baseline's value
    and their difference; only the header without a baseline."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*p.rows_by, p.cols_by, *p.over, "metric", "value", "baseline",
                "difference"])
    if p.baseline is None or p.runs is None:
        return buf.getvalue()
    for rk in p.row_keys:
        b = p.runs.get((rk, p.baseline), {})
        for ck in p.col_keys:
            if ck == p.baseline:
                continue
            a = p.runs.get((rk, ck), {})
            for part in sorted(set(a) & set(b), key=_sort_key):
                w.writerow([*rk, ck, *part, p.metric, repr(a[part]), repr(b[part]),
                            repr(a[part] - b[part])])
    return buf.getvalue()


def to_csv(p: Pivot) -> str:
    """Long CSV: one line per table cell with mean, half-width, n and gap."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*p.rows_by, p.cols_by, "metric", "mean", "ci_half_width", "ci_level", "n",
                "gap_to_baseline_pct"])
    for rk in p.row_keys:
        for ck in p.col_keys:
            c = p.cells.get((rk, ck))
            if c is None:
                continue
            g = p.gap(rk, ck)
            w.writerow([*rk, ck, p.metric, repr(c[0]), "" if math.isnan(c[1]) else repr(c[1]),
                        p.level, c[2], "" if g is None else repr(g)])
    return buf.getvalue()


PERCENTILES = ("wait_p50", "wait_p90", "wait_p99", "bsld_p50", "bsld_p90", "bsld_p99")


def percentile_table(rows: list[dict[str, Any]], group_by: Sequence[str], digits: int = 1
                     ) -> str:
    """Markdown: per group, the mean over seeds of each cell's wait and bounded-slowdown
    percentiles."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(_label(r.get(k)) for k in group_by), []).append(r)
    ns = {len(g) for g in groups.values()}
    over = ("one run per cell" if max(ns, default=1) < 2
            else f"mean over the runs (seeds) of each cell, n = {min(ns)}..{max(ns)}")
    lines = [f"Percentiles per cell ({over}): wait in s, bsld = bounded slowdown "
             "(response / max(run, 10 s)); p50 = median.", "",
             "| " + " | ".join([*map(_heading, group_by), "wait p50", "wait p90", "wait p99",
                                "bsld p50", "bsld p90", "bsld p99"]) + " |",
             "|" + "---|" * (len(group_by) + 6)]
    for gk in sorted(groups, key=_sort_key):
        vals = [mean_ci([float(r[m]) for r in groups[gk] if r.get(m) is not None])[0]
                for m in PERCENTILES]
        lines.append("| " + " | ".join([*gk] + [f"{v:.{digits}f}" for v in vals]) + " |")
    return "\n".join(lines) + "\n"


def _heading(key: str) -> str:
    """A table heading for a parameter: ``load`` says what it is."""
    return "load (submit times / factor)" if key == "load" else key


def load_note(rows: list[dict[str, Any]]) -> str:
    """Markdown: what ``load`` is (and ``users``, the resampled log's temporary users per
    week times the factor, where cells have it), and the offered load each factor gives
    per workload (the mean over its cells of ``offered_load``); empty without a ``load``
    parameter."""
    if not any("load" in r for r in rows):
        return ""
    by_users = any(r.get("users") is not None for r in rows)
    groups: dict[tuple[str, ...], list[float]] = {}
    for r in rows:
        if r.get("offered_load") is not None:
            key = (_label(r.get("workload")), _label(r.get("load", 1.0)))
            if by_users:
                key += (_label(r.get("users")),)
            groups.setdefault(key, []).append(float(r["offered_load"]))
    lines = ["`load` compresses the submit times: each job's submit time after the first is "
             "divided by the factor (the same jobs arrive over 1/load of the span); it is not "
             "the offered load."]
    if by_users:
        lines[0] += (" `users` multiplies the temporary users a resampled log draws per week "
                     "(Zakay & Feitelson's load by the number of users; long-term users are "
                     "kept, so the offered load grows by less); `load` then compresses the "
                     "replica's submit times.")
    if not groups:
        return lines[0] + " (This store's cells hold no `offered_load`.)\n"
    head = "| workload | load (submit times / factor) |" + (" users |" if by_users else "")
    lines += [" The offered load it gives (work / (processors x span of submits), the mean "
              "over the cells):", "", head + " offered load |",
              "|---|---|---|" + ("---|" if by_users else "")]
    lines[0] += lines.pop(1)
    for key in sorted(groups, key=_sort_key):
        v = groups[key]
        lines.append(f"| {' | '.join(key)} | {math.fsum(v) / len(v):.3f} |")
    return "\n".join(lines) + "\n"


def feedback_note(rows: list[dict[str, Any]]) -> str:
    """Markdown: which workloads were simulated with user feedback (the workload key
    ``feedback``); empty when none was."""
    names = sorted({_label(r.get("workload")) for r in rows if r.get("feedback")})
    if not names:
        return ""
    return (f"User feedback (Zakay & Feitelson) in {', '.join(names)}: a job submitted at "
            "most 20 min after the log's end of an earlier job of its user was submitted "
            "that think time after the earlier job's simulated end; waits and the offered "
            "load are measured from the realised submit times.\n")


def saturated(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cells whose queue grows without bound (module docstring)."""
    return [r for r in rows if r.get("backlog_growth") is not None
            and r.get("backlog_end_s") is not None
            and r["backlog_growth"] >= SATURATION_GROWTH
            and r["backlog_end_s"] >= SATURATION_BACKLOG]


def saturation_warning(rows: list[dict[str, Any]], limit: int = 20) -> str:
    """Markdown warning listing the saturated cells with the measures; empty if none."""
    sat = saturated(rows)
    if not sat:
        return ""
    lines = [f"**Warning: {len(sat)} of {len(rows)} cells saturate**: their queued work "
             f"grows across the arrivals (slope >= {SATURATION_GROWTH} s per s, and more "
             f"than {SATURATION_BACKLOG / 3600:.0f} h of the whole machine queued at the "
             "last submit), so their waits grow with the length of the run and their means "
             "describe the run's length more than the policy.", "",
             "| cell | label | load | offered load | backlog growth [s/s] | "
             "backlog at last submit [h] | wait p99 [d] |", "|---|---|---|---|---|---|---|"]
    for r in sat[:limit]:
        off = r.get("offered_load")
        p99 = r.get("wait_p99")
        lines.append(f"| `{str(r.get('key'))[:12]}` | {_label(r.get('label'))} | "
                     f"{_label(r.get('load', 1.0))} | "
                     f"{'-' if off is None else f'{off:.3f}'} | "
                     f"{r['backlog_growth']:.3f} | {r['backlog_end_s'] / 3600:.1f} | "
                     f"{'-' if p99 is None else f'{p99 / 86400:.1f}'} |")
    if len(sat) > limit:
        lines.append(f"| ... {len(sat) - limit} more | | | | | | |")
    return "\n".join(lines) + "\n"


def cleaning_note(rows: list[dict[str, Any]]) -> str:
    """One line per distinct cleaning report in the rows (what the readers dropped or
    clipped)."""
    seen = {}
    for r in rows:
        c = r.get("cleaning")
        if c:
            seen[json.dumps(c, sort_keys=True)] = c
    out = []
    for c in seen.values():
        counts = {k: v for k, v in c.get("counts", {}).items() if v}
        out.append(f"- {Path(str(c.get('source', '?'))).name}: {c.get('jobs_kept')} jobs kept, "
                   f"{c.get('dropped')} dropped; {counts}")
    return ("Cleaning reports of the traces:\n" + "\n".join(out) + "\n") if out else ""


def report(path: str | Path, *, metrics: Sequence[str] | None = None,
           rows_by: Sequence[str] | None = None, cols_by: str = "label",
           baseline: str | None = None, where: Sequence[str] = (), level: float = 0.95,
           out_dir: str | Path | None = None, over: Sequence[str] = ()) -> str:
    """Markdown report of a store (one pivot per metric, percentiles, failures); with
    ``out_dir`` also writes ``report.md`` and one ``<metric>.csv`` per metric there (and
    with a baseline ``<metric>_paired.csv``, the difference on each part: ``paired_csv``);
    ``over``: parameters averaged over like the seed (``pivot``).

    Every ValueError names the store file (and the option or field)."""
    try:
        return _report(path, metrics=metrics, rows_by=rows_by, cols_by=cols_by,
                       baseline=baseline, where=where, level=level, out_dir=out_dir,
                       over=over)
    except StoreError:
        raise
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _meta_list(path: str | Path, meta: dict[str, str], key: str, default: str) -> list[str]:
    try:
        value = json.loads(meta.get(key, default))
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise StoreError(f"{path}: meta {key}: expected a JSON list of names, got "
                         f"{short(meta.get(key))}")
    return value


def _report(path: str | Path, *, metrics: Sequence[str] | None, rows_by: Sequence[str] | None,
            cols_by: str, baseline: str | None, where: Sequence[str], level: float,
            out_dir: str | Path | None, over: Sequence[str] = ()) -> str:
    level = check_level(level)
    with Store.open(path, create=False) as st:
        meta = st.meta()
        counts = st.count()
    rows = select(load_rows(path), where)
    if metrics is None:
        metrics = _meta_list(path, meta, "metrics", '["avg_wait"]')
    labels = _meta_list(path, meta, "labels", "[]")
    parts = [f"# Report of {Path(path).name} (spec {meta.get('spec_name', '?')!r})", "",
             f"Cells: {counts.get('done', 0)} done, {counts.get('failed', 0)} failed"
             + (f"; selected {len(rows)} with {' and '.join(where)}" if where else "") + ".",
             ""]
    warn = saturation_warning(rows)
    if warn:
        parts += [warn]
    pivots = []
    for m in metrics:
        p = pivot(rows, m, rows_by=rows_by, cols_by=cols_by, baseline=baseline, level=level,
                  col_order=labels if cols_by == "label" else (), over=over)
        pivots.append(p)
        parts += [to_markdown(p), ""]
    group = [*pivots[0].rows_by, cols_by] if pivots else [cols_by]
    if rows and all(r.get("wait_p50") is not None for r in rows):
        parts += [percentile_table(rows, group), ""]
    parts += [f"Abbreviations: {legend(metrics)}.", ""]
    loads = load_note(rows)
    if loads:
        parts += [loads]
    fed = feedback_note(rows)
    if fed:
        parts += [fed]
    note = cleaning_note(rows)
    if note:
        parts += [note]
    versions = sorted({r["code_version"] for r in rows if r.get("code_version")})
    if versions:
        parts += [f"Code version(s): {', '.join(versions)}.", ""]
    if counts.get("failed"):
        failed = load_rows(path, status="failed")
        parts += ["Failed cells (rerun with `--retry-failed`):", ""]
        parts += [f"- `{r['key']}` {r.get('label')}: {r.get('error')}" for r in failed[:20]]
        parts.append("")
    text = "\n".join(parts)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / "report.md", text)
        for p in pivots:
            write_atomic(out / f"{p.metric}.csv", to_csv(p))
            if p.baseline is not None:
                write_atomic(out / f"{p.metric}_paired.csv", paired_csv(p))
    return text
