"""Verdicts by rule: each study's targets, read from the committed results, decided by code.

Each paper study keeps a ``targets.toml`` beside its ``REPORT.md``. A target names the
paper's figure or claim, where it is in the paper, a *rule* (one of :data:`RULES`, with its
parameters and a one-line justification) and where our value is in ``results/`` (a
*locator*: a Markdown table's cells, or a key of a JSON file). This module reads the values,
applies the rule and writes

- each report's verdict table, between the lines ``<!-- verdicts:begin -->`` and
  ``<!-- verdicts:end -->``;
- the verdict cell of each row of the README's reproductions table whose reproduction has
  targets.

``python -m sim.experiments.verdicts`` prints the verdicts; ``--write`` rewrites the
tables; ``--check`` exits 1 when a table differs from what the results give.

The verdict words: *reproduced*, *trend only* (the direction or ranking holds, the
magnitudes do not), *not reproduced*; *calibration* and *by construction* mark targets that
test nothing (our model was fitted to them, or meets them by design); *not computed* marks
a target whose input is not in the committed results.

Rule kinds (the parameters each takes are in its function's docstring):

- ``relative``: each value within a tolerance of the paper's (relative or in points);
- ``range``: every value inside ``[low, high]``;
- ``ci_sign``: each value's 95% interval excludes 0 on the paper's side;
- ``cell_tests``: each cell's 95% interval on the paper's side, against it, or neither (a
  cell without an interval is neither), the cells against it named;
- ``cell_band``: each cell's 95% interval inside the paper's range, outside it, or
  neither, the cells outside named;
- ``paired``: per-seed differences, their 95% interval on the paper's side;
- ``sign_test``: paired differences, one-sided sign test, then the mean against a range;
- ``ranking``: our order of labels against the paper's (Kendall's tau);
- ``monotone``: every series rises (or falls) along its ordering column;
- ``names``: the names in our cells (a schedule, a policy) against the paper's;
- ``check``: a yes/no column the study's code computed against a declared target;
- ``calibration``, ``construction``: shown, never a test.

Every target declares when its rule was written (``rule_written``, one of
:data:`RULE_WRITTEN`): ``"before results"`` (fixed before the run it judges, so the verdict
tests a prediction) or ``"after results"`` (written with the results, or an earlier run of
them, in view, so the rule may fit what it judges). The verdict tables show it in every
row and count it in their first sentence.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from sim.argparser import Parser
from sim.experiments.common import ROOT, markdown_table, mean_ci, write_atomic

__all__ = ["RULES", "STUDIES", "Outcome", "Value", "evaluate", "readme_table_text",
           "report_table", "study_outcomes"]

STUDIES = ("talby", "leinberger", "suh", "gine", "karl")
"""The studies with a paper and a ``targets.toml``."""
EXPERIMENTS = Path(__file__).resolve().parent
BEGIN, END = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"
README_HEADER = "| name | paper table / figure | runtime | verdict | report |"

REPRODUCED, TREND, NOT = "reproduced", "trend only", "not reproduced"
CALIBRATION, CONSTRUCTION, NOT_COMPUTED = "calibration", "by construction", "not computed"
VERDICTS = (REPRODUCED, TREND, NOT, CALIBRATION, CONSTRUCTION, NOT_COMPUTED)
BEFORE, AFTER = "before results", "after results"
RULE_WRITTEN = (BEFORE, AFTER)
"""The values of a target's ``rule_written``: whether its rule was fixed before the run it
judges or written after its results were seen."""

_NUMBER = re.compile(r"([+-]?\d[\d,]*(?:\.\d+)?|[+-]?\.\d+)")
_CI = re.compile(r"^\s*" + _NUMBER.pattern + r"\s*%?\s*(?:\+-|±|\+/-)\s*" + _NUMBER.pattern)


@dataclass(frozen=True)
class Value:
    """One cell read from the results.

    Attributes
    ----------
    label : str
        What the cell is (its row's key cells, e.g. ``"G-b 2 uniform 64"``).
    text : str
        The cell as written.
    mean : float or None
        Its first number (``None`` when it has none: a ``yes``/``NO`` cell).
    half : float or None
        The 95% half-width after ``+-``, when the cell has one.
    """

    label: str
    text: str
    mean: float | None
    half: float | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        """``(mean - half, mean + half)``, or None for a cell without an interval."""
        if self.mean is None or self.half is None or math.isnan(self.half):
            return None
        return self.mean - self.half, self.mean + self.half


@dataclass(frozen=True)
class Outcome:
    """A target's verdict and the computed figures behind it."""

    target: dict[str, Any]
    verdict: str
    detail: str
    values: tuple[Value, ...] = field(default=())


class TargetError(ValueError):
    """A ``targets.toml`` entry or its locator is wrong (names the study and the target)."""


# ------------------------------------------------------------------------------ reading
def parse_cell(label: str, text: str, nth: int = 0) -> Value:
    """A :class:`Value` from a table cell: ``"+11.1 +- 7.1"``, ``"2,015.63"``, ``"17.0%"``,
    ``"**1,672.86**"``, ``"yes"``; with ``nth``, the cell's ``nth`` number (from 0)."""
    clean = text.replace("**", "").replace("−", "-").strip()
    if nth:
        found = _NUMBER.findall(clean)
        if nth >= len(found):
            raise TargetError(f"cell {text!r} has no number {nth}")
        return Value(label, text, _num(found[nth]))
    m = _CI.match(clean)
    if m:
        return Value(label, text, _num(m.group(1)), _num(m.group(2)))
    m = _NUMBER.search(clean)
    return Value(label, text, _num(m.group(1)) if m else None)


def _num(s: str) -> float:
    return float(s.replace(",", ""))


@dataclass(frozen=True)
class MdTable:
    """A Markdown table of a results file: the heading above it, its header and rows."""

    heading: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def _cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in line.strip().strip("|").split("|"))


def md_tables(text: str) -> list[MdTable]:
    """Every Markdown table of ``text``, with the last ``#`` heading above it."""
    tables: list[MdTable] = []
    heading, lines = "", text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if (line.startswith("|") and i + 1 < len(lines)
                and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip())):
            header, rows = _cells(line), []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            tables.append(MdTable(heading, header, tuple(rows)))
            continue
        i += 1
    return tables


def _column(table: MdTable, spec: str | int) -> int:
    """A column's index: its position, or its header name (``"paper#2"``: the second
    column of that name)."""
    if isinstance(spec, int):
        return spec
    name, _, nth = spec.partition("#")
    hits = [j for j, h in enumerate(table.header) if h.replace("**", "") == name]
    k = int(nth or 1)
    if len(hits) < k:
        raise TargetError(f"no column {spec!r} in table {table.header}")
    return hits[k - 1]


def _match(cell: str, want: object) -> bool:
    cell = cell.replace("**", "").strip()
    if isinstance(want, list):
        return any(_match(cell, w) for w in want)
    want = str(want)
    return cell.startswith(want[:-1]) if want.endswith("*") else cell == want


def read_md(path: Path, loc: dict[str, Any]) -> list[Value]:
    """The cells a Markdown locator selects.

    Locator keys: ``table`` (index of the table in the file, default 0) or ``heading`` (the
    first table under a heading containing this text); ``column`` (name or index);
    ``where`` (``{column: value or [values]}``, rows kept; ``"text*"`` matches a prefix);
    ``exclude`` (the same, rows dropped); ``label`` (columns whose cells name each value,
    default the first column);
    ``change_from`` (a ``where`` selecting one base row: each value becomes its change
    against that row's cell, in %); ``order_by`` (columns the rows are sorted by, numbers
    by value); ``part`` (the n-th piece, from 0, of cells written ``a / b / c``);
    ``number`` (the n-th number of the cell, from 0, instead of the first; a list: one per
    column); ``halves`` (the largest ratio of the cell's ``a/b`` pairs).
    ``column`` may be a list: the cells of each in turn (of each row in turn with
    ``row_major``).
    """
    tables = md_tables(path.read_text())
    if "heading" in loc:
        found = [t for t in tables if loc["heading"] in t.heading]
        if not found:
            raise TargetError(f"{path.name}: no table under a heading with {loc['heading']!r}")
        table = found[loc.get("table", 0)]
    else:
        table = tables[loc.get("table", 0)]
    columns = loc["column"] if isinstance(loc["column"], list) else [loc["column"]]
    rows = _rows(table, loc.get("where", {}), loc.get("exclude", {}))
    if "order_by" in loc:
        keys = [_column(table, c) for c in loc["order_by"]]
        rows.sort(key=lambda r: tuple(_sort_key(r[j]) for j in keys))
    label_cols = [_column(table, c) for c in loc.get("label", [0])]
    cells = [(r, i) for i in range(len(columns)) for r in rows]
    if loc.get("row_major"):
        cells = [(r, i) for r in rows for i in range(len(columns))]
    nums = loc.get("number", 0)
    nth = [nums[i] if isinstance(nums, list) else nums for i in range(len(columns))]
    out = []
    for r, i in cells:
        name = columns[i]
        suffix = f" {str(name).split(':')[0]}" if len(columns) > 1 else ""
        label = (" ".join(r[j].replace("**", "") for j in label_cols) + suffix).strip()
        cell = _part(r[_column(table, name)], loc.get("part"))
        out.append(_halves(label, cell) if loc.get("halves") else
                   parse_cell(label, cell, int(nth[i])))
    if not out:
        raise TargetError(f"{path.name}: the locator {loc} selects no cell")
    if "change_from" in loc:
        base_rows = _rows(table, loc["change_from"], {})
        if len(base_rows) != 1 or len(columns) != 1:
            raise TargetError(f"{path.name}: change_from needs one row and one column")
        base = parse_cell("base", base_rows[0][_column(table, columns[0])]).mean
        out = [Value(v.label, f"{100 * (v.mean - base) / base:+.1f}% ({v.text})",
                     100 * (v.mean - base) / base) for v in out]
    return out


def _halves(label: str, cell: str) -> Value:
    """The largest ratio of the pairs ``a/b`` of a cell (a queue's first and second
    halves, one pair per seed): 1 for a stationary queue."""
    pairs = [(float(a), float(b)) for a, b in re.findall(r"([\d.]+)/([\d.]+)", cell)]
    if not pairs:
        raise TargetError(f"cell {cell!r} has no a/b pair")
    worst = max(max(a, b) / min(a, b) if min(a, b) > 0 else math.inf for a, b in pairs)
    return Value(label, f"{worst:.1f}x", worst)


def _part(cell: str, part: int | None) -> str:
    """The ``part``-th piece of a cell written ``a / b / c`` (the whole cell for None)."""
    if part is None:
        return cell
    pieces = cell.split(" / ")
    if part >= len(pieces):
        raise TargetError(f"cell {cell!r} has no part {part}")
    return pieces[part].strip()


def _sort_key(cell: str) -> tuple[int, float, str]:
    """Numbers before text, numbers by value."""
    v = parse_cell("", cell).mean
    return (0, v, "") if v is not None else (1, 0.0, cell)


def _rows(table: MdTable, keep: dict[str, object],
          drop: dict[str, object]) -> list[tuple[str, ...]]:
    """The rows whose cells match every ``keep`` entry and no ``drop`` entry."""
    k = [(_column(table, c), v) for c, v in keep.items()]
    d = [(_column(table, c), v) for c, v in drop.items()]
    return [r for r in table.rows if all(_match(r[j], v) for j, v in k)
            and not any(_match(r[j], v) for j, v in d)]


def read_json(path: Path, loc: dict[str, Any]) -> list[Value]:
    """The value at ``key`` (dotted path; integers index lists) of a JSON file; a list
    gives one value per item."""
    node: Any = json.loads(path.read_text())
    for part in str(loc["key"]).split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    items = node if isinstance(node, list) else [node]
    return [Value(f"{loc['key']}[{i}]", str(x), float(x)) for i, x in enumerate(items)]


def read_values(study: str, loc: dict[str, Any]) -> list[Value]:
    """The values a locator selects in ``sim/experiments/<study>/`` (``file`` relative to
    the study's package)."""
    path = EXPERIMENTS / study / loc["file"]
    if not path.is_file():
        raise FileNotFoundError(path)
    return read_json(path, loc) if path.suffix == ".json" else read_md(path, loc)


# ------------------------------------------------------------------------------ rules
def _fmt(x: float) -> str:
    return f"{x:+.1f}" if abs(x) < 1000 else f"{x:+,.0f}"


def _paper_list(t: dict[str, Any], n: int) -> list[float]:
    paper = t["paper_value"]
    vals = list(paper) if isinstance(paper, list) else [paper] * n
    if len(vals) != n:
        raise TargetError(f"{n} values read, {len(vals)} paper values")
    return [float(p) for p in vals]


def rule_relative(t: dict[str, Any], vals: Sequence[Value],
                  paper: Sequence[Value] | None) -> tuple[str, str]:
    """Each value within ``tolerance`` (relative) or ``points`` (absolute) of the paper's
    (``paper_value``: one number or a list; or the ``paper`` locator's cells): reproduced;
    else, every value on the paper's side of ``direction_zero`` (default 0): trend only
    (never, with ``signed = false``: a magnitude with no direction); else not reproduced."""
    ref = [p.mean for p in paper] if paper else _paper_list(t, len(vals))
    zero = float(t.get("direction_zero", 0.0))
    off, wrong = [], []
    for v, p in zip(vals, ref, strict=True):
        dev = (v.mean - p) / abs(p) if "tolerance" in t else v.mean - p
        if abs(dev) > float(t.get("tolerance", t.get("points", 0))):
            off.append(f"{v.label} {v.mean:g} vs {p:g}")
        if (v.mean - zero) * (p - zero) <= 0 and p != zero:
            wrong.append(v.label)
    tol = (f"{100 * t['tolerance']:g}%" if "tolerance" in t else f"{t['points']:g} points")
    within = len(vals) - len(off)
    detail = f"{within}/{len(vals)} within {tol}"
    if len(vals) <= 3 and not off:
        detail += " (" + "; ".join(f"{v.label} {v.mean:g} vs {p:g}".strip()
                                   for v, p in zip(vals, ref, strict=True)) + ")"
    if off:
        detail += " (outside: " + "; ".join(off) + ")"
    if wrong:
        detail += f"; opposite side in {len(wrong)}/{len(vals)}"
    if not off:
        return REPRODUCED, detail
    return (TREND if not wrong and t.get("signed", True) else NOT), detail


def rule_range(t: dict[str, Any], vals: Sequence[Value], paper: object) -> tuple[str, str]:
    """At least ``need`` values (default all; or the fraction ``need_fraction``) inside
    ``[low, high]`` (either may be absent; a list gives one bound per value): reproduced;
    else, at least ``trend_need`` values (default all) inside ``[trend_low, trend_high]``
    when those are given: trend only; else not reproduced."""
    def inside(i: int, lo: object, hi: object) -> bool:
        lo, hi = (b[i] if isinstance(b, list) else b for b in (lo, hi))
        return ((lo is None or vals[i].mean >= float(lo))
                and (hi is None or vals[i].mean <= float(hi)))

    def where(lo: object, hi: object) -> str:
        if not isinstance(lo, list) and not isinstance(hi, list):
            return _interval(lo, hi)
        return "their ranges (" + "; ".join(
            f"{v.label} {v.mean:g} {'in' if inside(i, lo, hi) else 'not in'} "
            f"{_cell_interval(lo, hi, i)}" for i, v in enumerate(vals)) + ")"

    n = len(vals)
    if any(isinstance(b, list) and len(b) != n for b in
           (t.get(key) for key in ("low", "high", "trend_low", "trend_high"))):
        raise TargetError(f"{n} values read, a bound list of another length")
    k = sum(inside(i, t.get("low"), t.get("high")) for i in range(n))
    lo_v, hi_v = min(v.mean for v in vals), max(v.mean for v in vals)
    span = f"{lo_v:.4g}" if lo_v == hi_v else f"{lo_v:.4g} to {hi_v:.4g}"
    detail = f"{k}/{n} in {where(t.get('low'), t.get('high'))}"
    if not isinstance(t.get("low"), list) and not isinstance(t.get("high"), list):
        detail += f" (ours {span})"
    need = math.ceil(float(t["need_fraction"]) * n) if "need_fraction" in t else n
    if k >= int(t.get("need", need)):
        return REPRODUCED, detail
    if "trend_low" in t or "trend_high" in t:
        kt = sum(inside(i, t.get("trend_low"), t.get("trend_high")) for i in range(n))
        detail += f"; {kt}/{n} in {where(t.get('trend_low'), t.get('trend_high'))}"
        if kt >= int(t.get("trend_need", n)):
            return TREND, detail
    return NOT, detail


def _cell_interval(lo: object, hi: object, i: int) -> str:
    """The ``i``-th value's interval of a ``range`` rule whose bounds may be lists (one
    bound per value), its numbers written short (``-100``, not ``-100.0``)."""
    lo, hi = (b[i] if isinstance(b, list) else b for b in (lo, hi))
    return _interval(None if lo is None else f"{float(lo):g}",
                     None if hi is None else f"{float(hi):g}")


def _interval(lo: object, hi: object) -> str:
    if lo is None:
        return f"<= {hi}"
    if hi is None:
        return f">= {lo}"
    return f"[{lo}, {hi}]"


def rule_ci_sign(t: dict[str, Any], vals: Sequence[Value], paper: object) -> tuple[str, str]:
    """``sign`` (+1 or -1) is the paper's side. At least ``need`` values (default all)
    whose 95% interval lies wholly on that side: reproduced; else every mean on that side:
    trend only; else not reproduced."""
    s = int(t["sign"])
    if any(v.half is None for v in vals):
        raise TargetError("ci_sign needs cells with a +- half-width")
    sure = sum((v.mean - v.half > 0) if s > 0 else (v.mean + v.half < 0) for v in vals)
    side = sum(v.mean * s > 0 for v in vals)
    n = len(vals)
    detail = (f"interval excludes 0 on the paper's side in {sure}/{n}; mean on that side in "
              f"{side}/{n} (means {_fmt(min(v.mean for v in vals))} to "
              f"{_fmt(max(v.mean for v in vals))})")
    if sure >= int(t.get("need", n)):
        return REPRODUCED, detail
    return (TREND if side == n else NOT), detail


def rule_cell_tests(t: dict[str, Any], vals: Sequence[Value],
                    paper: object) -> tuple[str, str]:
    """Per-cell tests; ``sign`` (+1 or -1) is the paper's side. Each cell's 95% interval
    (its ``+-`` half-width) puts it on the paper's side (the interval excludes 0 there),
    against it (the interval excludes 0 on the other side) or neither (the interval spans
    0, or the cell has no interval: one seed). At least ``need`` cells (default all) on
    the paper's side: reproduced; else no cell against it and at least ``need`` means on
    its side: trend only; else not reproduced. The detail names the cells against it."""
    s = int(t["sign"])
    n = len(vals)
    need = int(t.get("need", n))

    def side(v: Value) -> int:
        iv = v.interval
        if iv is None or iv[0] <= 0 <= iv[1]:
            return 0
        return 1 if v.mean * s > 0 else -1

    sides = [side(v) for v in vals]
    sure, against = sides.count(1), [v.label for v, k in zip(vals, sides, strict=True) if k < 0]
    bare = sum(v.half is None for v in vals)
    means = sum(v.mean * s > 0 for v in vals)
    detail = (f"interval on the paper's side in {sure}/{n}, against it in {len(against)}/{n}"
              + (f" ({'; '.join(against)})" if against else "")
              + f", not distinguishable in {sides.count(0)}/{n}"
              + (f" ({bare} with one seed)" if bare else "")
              + f"; mean on the paper's side in {means}/{n} (means "
              f"{_fmt(min(v.mean for v in vals))} to {_fmt(max(v.mean for v in vals))})")
    if sure >= need:
        return REPRODUCED, detail
    return (TREND if not against and means >= need else NOT), detail


def rule_cell_band(t: dict[str, Any], vals: Sequence[Value],
                   paper: object) -> tuple[str, str]:
    """Per-cell tests against the paper's range ``[low, high]``. Each cell's 95% interval
    (its ``+-`` half-width) lies inside the range, wholly outside it, or neither (it
    overlaps an end, or the cell has no interval: one seed). At least ``need`` cells
    (default all) inside: reproduced; else no cell's interval wholly below
    ``trend_low`` (the direction's bound, e.g. 0 for a gain) and at least ``need`` means
    above it: trend only; else not reproduced. The detail names the cells outside."""
    lo, hi, floor = float(t["low"]), float(t["high"]), float(t["trend_low"])
    n = len(vals)
    need = int(t.get("need", n))

    ci = [v.interval for v in vals]
    inside = sum(b is not None and lo <= b[0] and b[1] <= hi for b in ci)
    out = [v.label for v, b in zip(vals, ci, strict=True)
           if b is not None and (b[1] < lo or b[0] > hi)]
    below = sum(b is not None and b[1] < floor for b in ci)
    above = sum(v.mean > floor for v in vals)
    bare = sum(b is None for b in ci)
    detail = (f"interval inside [{lo:g}, {hi:g}] in {inside}/{n}, outside it in "
              f"{len(out)}/{n}" + (f" ({'; '.join(out)})" if out else "")
              + f", overlapping an end in {n - inside - len(out) - bare}/{n}"
              + (f", one seed in {bare}/{n}" if bare else "")
              + f"; interval below {floor:g} in {below}/{n}, mean above {floor:g} in "
              f"{above}/{n} (means {_fmt(min(v.mean for v in vals))} to "
              f"{_fmt(max(v.mean for v in vals))})")
    if inside >= need:
        return REPRODUCED, detail
    return (TREND if not below and above >= need else NOT), detail


def _sign_p(k: int, n: int) -> float:
    """One-sided binomial P(X >= k), X ~ B(n, 1/2)."""
    return sum(math.comb(n, j) for j in range(k, n + 1)) / 2 ** n


def rule_sign_test(t: dict[str, Any], vals: Sequence[Value],
                   paper: Sequence[Value] | None) -> tuple[str, str]:
    """Paired differences ``ours - other`` (the ``other`` locator, cell by cell). One-sided
    sign test at ``alpha`` (default 0.05) for the paper's side ``sign``; significant and
    the mean difference inside ``[low, high]``: reproduced; significant only: trend only;
    not significant: not reproduced."""
    if paper is None or len(paper) != len(vals):
        raise TargetError("sign_test needs an `other` locator with as many cells")
    s = int(t["sign"])
    diffs = [(a.mean - b.mean) * s for a, b in zip(vals, paper, strict=True)]
    k, n = sum(d > 0 for d in diffs), sum(d != 0 for d in diffs)
    p = _sign_p(k, n)
    mean = s * sum(diffs) / len(diffs)
    detail = (f"difference on the paper's side in {k}/{n} pairs (sign test p = {p:.3f}); "
              f"mean difference {_fmt(mean)}")
    if "low" in t or "high" in t:
        detail += f" (accepted {_interval(t.get('low'), t.get('high'))})"
    if p >= float(t.get("alpha", 0.05)):
        return NOT, detail
    lo, hi = t.get("low"), t.get("high")
    ok = (lo is None or mean >= float(lo)) and (hi is None or mean <= float(hi))
    return (REPRODUCED if ok else TREND), detail


def rule_paired(t: dict[str, Any], vals: Sequence[Value],
                paper: Sequence[Value] | None) -> tuple[str, str]:
    """Per-seed differences ``ours - other`` (the ``other`` locator: the same seeds, which
    share their arrivals): their mean's 95% Student-t interval wholly on the paper's side
    ``sign``: reproduced; else not reproduced (the direction is inside the noise)."""
    if paper is None or len(paper) != len(vals):
        raise TargetError("paired needs an `other` locator with as many values")
    diffs = [a.mean - b.mean for a, b in zip(vals, paper, strict=True)]
    mean, half = mean_ci(diffs)
    s = int(t["sign"])
    side = sum(d * s > 0 for d in diffs)
    detail = (f"difference {mean:+.2f} +- {half:.2f} over {len(diffs)} seeds, on the paper's "
              f"side in {side}/{len(diffs)}")
    sure = (mean - half > 0) if s > 0 else (mean + half < 0)
    return (REPRODUCED if sure else NOT), detail


def rule_ranking(t: dict[str, Any], vals: Sequence[Value], paper: object) -> tuple[str, str]:
    """Our order of the labels (ascending values, or descending with ``descending``)
    against the paper's ``order``: identical: reproduced; Kendall's tau >= ``trend_tau``
    (default 0.5): trend only; else not reproduced."""
    order = list(t["order"])
    by = {v.label: v.mean for v in vals}
    missing = [o for o in order if o not in by]
    if missing:
        raise TargetError(f"ranking: no value for {missing}")
    ours = sorted(order, key=lambda o: by[o], reverse=bool(t.get("descending")))
    pos = {o: i for i, o in enumerate(ours)}
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1:]]
    tau = sum(1 if pos[a] < pos[b] else -1 for a, b in pairs) / len(pairs)
    rel = " > " if t.get("descending") else " < "
    detail = f"ours {rel.join(ours)}; paper {rel.join(order)}; Kendall tau {tau:.2f}"
    if ours == order:
        return REPRODUCED, detail
    return (TREND if tau >= float(t.get("trend_tau", 0.5)) else NOT), detail


def rule_monotone(t: dict[str, Any], vals: Sequence[Value], paper: object) -> tuple[str, str]:
    """The values in locator order, cut into series of ``length`` consecutive cells; each
    series strictly ``rising`` (or ``falling``). At least ``need`` series (default all):
    reproduced; at least ``trend_need``: trend only; else not reproduced."""
    m = int(t["length"])
    if len(vals) % m:
        raise TargetError(f"{len(vals)} values do not cut into series of {m}")
    series = [vals[i:i + m] for i in range(0, len(vals), m)]
    up = t["direction"] == "rising"
    ok = sum(all((b.mean > a.mean) if up else (b.mean < a.mean)
                 for a, b in zip(s, s[1:], strict=False)) for s in series)
    n = len(series)
    detail = f"strictly {t['direction']} in {ok}/{n} series"
    if ok >= int(t.get("need", n)):
        return REPRODUCED, detail
    return (TREND if ok >= int(t.get("trend_need", n + 1)) else NOT), detail


def _short_labels(labels: Sequence[str]) -> list[str]:
    """Each label cut to its first words: two, or as many as it takes for the cut labels to
    stay as distinct as the labels are."""
    words = [lab.split() for lab in labels]
    k = 2
    while (len({tuple(w[:k]) for w in words}) < len(set(labels))
           and k < max(map(len, words), default=0)):
        k += 1
    return [" ".join(w[:k]) for w in words]


def rule_check(t: dict[str, Any], vals: Sequence[Value], paper: object) -> tuple[str, str]:
    """Cells ``yes``/``no`` computed by the study's code against a target it declares:
    every cell yes: reproduced; else not reproduced."""
    yes = [v for v in vals if v.text.strip().lower() == "yes"]
    short = _short_labels([v.label for v in vals])
    no = [s for v, s in zip(vals, short, strict=True) if v.text.strip().lower() != "yes"]
    detail = f"met in {len(yes)}/{len(vals)}" + (f" (not: {'; '.join(no)})" if no else "")
    return (REPRODUCED if not no else NOT), detail


def rule_names(t: dict[str, Any], vals: Sequence[Value],
               paper: Sequence[Value] | None) -> tuple[str, str]:
    """The name (``pattern``, a regular expression) in each of our cells equals the one in
    the paper's cell (the ``paper_at`` locator): in at least ``need`` (default all):
    reproduced; else not reproduced."""
    if paper is None or len(paper) != len(vals):
        raise TargetError("names needs a `paper_at` locator with as many cells")
    pat = re.compile(t["pattern"])

    def name(v: Value) -> str:
        m = pat.search(v.text)
        return m.group(0) if m else "?"

    same = [v.label for v, p in zip(vals, paper, strict=True) if name(v) == name(p)]
    detail = f"the paper's name in {len(same)}/{len(vals)}"
    if same and len(same) < len(vals):
        detail += f" ({'; '.join(same)})"
    return (REPRODUCED if len(same) >= int(t.get("need", len(vals))) else NOT), detail


def _shown(kind: str) -> Callable[..., tuple[str, str]]:
    def rule(t: dict[str, Any], vals: Sequence[Value], paper: object) -> tuple[str, str]:
        shown = "; ".join(f"{v.label}: {v.text}" for v in vals[:3])
        if len(vals) > 3:
            shown += f"; ... ({len(vals)} cells"
            if all(v.mean is not None for v in vals):
                shown += (f", {min(v.mean for v in vals):.3g} to "
                          f"{max(v.mean for v in vals):.3g}")
            shown += ")"
        return kind, shown
    rule.__doc__ = f"Shown as *{kind}*: the values are listed, nothing is tested."
    return rule


RULES: dict[str, Callable[..., tuple[str, str]]] = {
    "relative": rule_relative, "range": rule_range, "ci_sign": rule_ci_sign,
    "cell_tests": rule_cell_tests, "cell_band": rule_cell_band, "sign_test": rule_sign_test,
    "paired": rule_paired,
    "ranking": rule_ranking,
    "monotone": rule_monotone,
    "check": rule_check, "names": rule_names, "calibration": _shown(CALIBRATION),
    "construction": _shown(CONSTRUCTION),
}
"""The rule kinds, by the name a target's ``rule`` gives."""


# ------------------------------------------------------------------------------ targets
def load_targets(study: str) -> list[dict[str, Any]]:
    """The targets of ``sim/experiments/<study>/targets.toml``, checked for the fields
    every target needs."""
    path = EXPERIMENTS / study / "targets.toml"
    with path.open("rb") as f:
        targets = tomllib.load(f).get("target", [])
    need = ("id", "reproduction", "claim", "where", "paper", "rule", "rule_written", "why")
    for t in targets:
        missing = [k for k in need if k not in t]
        if missing:
            raise TargetError(f"{path}: target {t.get('id', '?')} lacks {missing}")
        if t["rule"] not in RULES:
            raise TargetError(f"{path}: target {t['id']}: unknown rule {t['rule']!r}")
        if t["rule_written"] not in RULE_WRITTEN:
            raise TargetError(f"{path}: target {t['id']}: rule_written must be one of "
                              f"{list(RULE_WRITTEN)}, got {t['rule_written']!r}")
    return targets


def evaluate(study: str, t: dict[str, Any]) -> Outcome:
    """One target's verdict from the committed results (*not computed* when the target
    has no locator, or its file is missing)."""
    if "ours" not in t:
        return Outcome(t, NOT_COMPUTED, t.get("missing", "input not in results/"))
    try:
        vals = read_values(study, t["ours"])
        other = t.get("other") or t.get("paper_at")
        ref = read_values(study, other) if other else None
    except FileNotFoundError as e:
        return Outcome(t, NOT_COMPUTED, f"missing {Path(e.args[0]).name}")
    except (KeyError, IndexError, TargetError) as e:
        raise TargetError(f"{study}: target {t['id']}: {e}") from e
    textual = ("check", "names", "calibration", "construction")
    if any(v.mean is None for v in vals) and t["rule"] not in textual:
        raise TargetError(f"{study}: target {t['id']}: a selected cell has no number")
    try:
        verdict, detail = RULES[t["rule"]](t, vals, ref)
    except (KeyError, TargetError) as e:
        raise TargetError(f"{study}: target {t['id']}: {e}") from e
    return Outcome(t, verdict, detail, tuple(vals))


def study_outcomes(study: str) -> list[Outcome]:
    """Every target of a study with its verdict."""
    return [evaluate(study, t) for t in load_targets(study)]


# ------------------------------------------------------------------------------ writing
def _evidence(t: dict[str, Any]) -> str:
    loc = t.get("ours")
    if not loc:
        return "-"
    where = f"[`{loc['file']}`]({loc['file']})"
    if "key" in loc:
        return f"{where}, key `{loc['key']}`"
    cols = loc["column"] if isinstance(loc["column"], list) else [loc["column"]]
    return f"{where}, column{'s' if len(cols) > 1 else ''} " + ", ".join(f"`{c}`" for c in cols)


def report_table(outcomes: Sequence[Outcome]) -> list[str]:
    """The verdict table of a report (Markdown lines)."""
    intro = (f"{_written_sentence(outcomes)} Computed by `python -m sim.experiments.verdicts "
             "--write` from the rules of [`targets.toml`](targets.toml) applied to `results/` "
             "(rule kinds: `sim/experiments/verdicts.py`); "
             "`tests/experiments/test_verdicts.py` fails when this table differs from what the "
             "results give.")
    rows = [(o.target["claim"], o.target["where"], o.target["paper"],
             o.detail.replace("|", "\\|"),
             f"{o.target['rule']} (written {o.target['rule_written']}): {o.target['why']}",
             f"**{o.verdict}**", _evidence(o.target)) for o in outcomes]
    return [intro, "", *markdown_table(("target", "where in the paper", "the paper",
                                        "ours (computed)", "rule", "verdict", "evidence"), rows)]


def _written_sentence(outcomes: Sequence[Outcome]) -> str:
    """The verdict table's first sentence: how many of its rules were written after the
    results they judge, and what that means for a verdict."""
    after = sum(o.target["rule_written"] == AFTER for o in outcomes)
    n = len(outcomes)
    if not after:
        return f"All {n} rules were written before the results they judge."
    who = f"All {n} rules" if after == n else f"{after} of the {n} rules"
    return (f"**{who} below were written after the results they judge had been seen** "
            "(`rule_written` in `targets.toml`, shown in the rule column), so a verdict says "
            "how the results read under a stated rule, not that a prediction fixed in advance "
            "was met.")


def replace_between(text: str, lines: Sequence[str], name: str) -> str:
    """``text`` with the lines between the markers replaced by ``lines``."""
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise TargetError(f"{name}: needs one {BEGIN} and one {END} line")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail


def readme_cell(outcomes: Sequence[Outcome]) -> str:
    """A README verdict cell: the targets' short names grouped by verdict."""
    groups: dict[str, list[str]] = {}
    for o in outcomes:
        groups.setdefault(o.verdict, []).append(o.target.get("short", o.target["id"]))
    return "; ".join(f"{v}: {', '.join(groups[v])}" for v in VERDICTS if v in groups)


def readme_table_text(readme: str, outcomes: Sequence[Outcome]) -> str:
    """``readme`` with the verdict cell of each reproductions-table row whose names have
    targets replaced by :func:`readme_cell`."""
    by_name: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by_name.setdefault(o.target["reproduction"], []).append(o)
    lines = readme.split("\n")
    if README_HEADER not in lines:
        raise TargetError("README.md: the reproductions table's header is missing")
    i = lines.index(README_HEADER) + 2
    seen: set[str] = set()
    while i < len(lines) and lines[i].startswith("|"):
        cells = lines[i].split(" | ")
        names = re.findall(r"`([^`]+)`", cells[0])
        mine = [o for n in names for o in by_name.get(n, [])]
        if mine:
            cells[3] = readme_cell(mine)
            lines[i] = " | ".join(cells)
            seen.update(names)
        i += 1
    lost = sorted(set(by_name) - seen)
    if lost:
        raise TargetError(f"README.md: no reproductions row names {lost}")
    return "\n".join(lines)


def expected_files() -> dict[Path, str]:
    """Every file the verdicts write, with the content the committed results give."""
    out: dict[Path, str] = {}
    every: list[Outcome] = []
    for study in STUDIES:
        outcomes = study_outcomes(study)
        every += outcomes
        report = EXPERIMENTS / study / "REPORT.md"
        out[report] = replace_between(report.read_text(), report_table(outcomes),
                                      f"{study}/REPORT.md")
    readme = ROOT / "README.md"
    out[readme] = readme_table_text(readme.read_text(), every)
    return out


def main(argv: list[str] | None = None) -> int:
    """The command line: print the verdicts, ``--write`` the tables or ``--check`` them."""
    ap = Parser(prog="python -m sim.experiments.verdicts",
                description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", action="store_true",
                   help="rewrite every report's verdict table and the README's verdicts")
    g.add_argument("--check", action="store_true",
                   help="exit 1 when a table differs from the computed verdicts")
    args = ap.parse_args(argv)
    try:
        files = expected_files()
    except (TargetError, tomllib.TOMLDecodeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.write or args.check:
        stale = [p for p, text in files.items() if p.read_text() != text]
        for p in stale:
            if args.write:
                write_atomic(p, files[p])
            print(f"{'written' if args.write else 'stale'}: {p.relative_to(ROOT)}")
        return 1 if (stale and args.check) else 0
    for study in STUDIES:
        for o in study_outcomes(study):
            print(f"{study}\t{o.target['id']}\t{o.verdict}\t{o.detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
