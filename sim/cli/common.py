"""What every ``schedsearch`` command shares: the help formatter, the checked argument
types, JSON output and the results table (the one-line argument errors:
:class:`sim.argparser.Parser`)."""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any


class Fmt(argparse.ArgumentDefaultsHelpFormatter):
    """Show an option's default in its help unless it is None/False or already said."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, [], argparse.SUPPRESS) \
                or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)

    def _split_lines(self, text: str, width: int) -> list[str]:
        """argparse's wrapping of a help text, never inside a hyphenated word (a
        reproduction or policy name such as ``talby-table1`` stays whole)."""
        import textwrap

        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width,
                             break_on_hyphens=False)


def names_arg(text: str) -> list[str]:
    """A comma-separated list of names, as an option's type; an ArgumentTypeError when it
    holds none (``--metric ''`` would otherwise read as the option not given)."""
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"no name given, got {text!r}")
    return names


def field_default(cls: type, name: str) -> Any:
    """The default of field ``name`` of the dataclass ``cls`` (so that an option's default
    is the configuration's own, defined once)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            if f.default is dataclasses.MISSING:
                raise ValueError(f"{cls.__name__}.{name} has no plain default")
            return f.default
    raise ValueError(f"{cls.__name__} has no field {name!r}")


def param_default(func: Callable[..., Any], name: str) -> Any:
    """The default of parameter ``name`` of ``func`` (a function or a class)."""
    default = inspect.signature(func).parameters[name].default
    if default is inspect.Parameter.empty:
        raise ValueError(f"{func.__qualname__}: parameter {name!r} has no default")
    return default


# ------------------------------------------------------------------ argument types

def short(text: str, limit: int = 60) -> str:
    """``repr(text)``, cut to ``limit`` characters."""
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def procs_arg(text: str) -> int | str:
    """``--procs``: a positive integer or ``from-jobs``."""
    if text == "from-jobs":
        return text
    if text.isascii() and text.strip().isdigit() and 0 < int(text) <= 2**53:
        return int(text)
    raise argparse.ArgumentTypeError(
        f"must be a positive integer or 'from-jobs', got {short(text)}")


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def int_arg(lo: int, hi: int, hi_text: str | None = None) -> Callable[[str], int]:
    """An argparse type: a plain decimal integer in ``[lo, hi]`` (``hi_text`` names
    ``hi`` in the message). No underscores, spaces or exponents: ``1_000`` and ``1e12``
    are refused, not read as 1000 or left to fail later."""
    top = hi_text or str(hi)

    def parse(text: str) -> int:
        if _INTEGER.match(text) and len(text) <= 40 and lo <= int(text) <= hi:
            return int(text)
        raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {top}], "
                                         f"got {short(text)}")
    return parse


_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


def number(text: str) -> int | float | None:
    """A plain decimal number from text: an int for ``[+-]digits``, a float for a decimal
    or exponent form or ``inf``/``nan``, else None. Unlike ``int()``/``float()``, refuses
    ``1_000``, non-ASCII digits and inner spaces; an integer has at most 4000 digits."""
    t = text.strip()
    if _INTEGER.match(t) and len(t) <= 4000:
        return int(t)
    if _REAL.match(t) or t.lower().lstrip("+-") in ("inf", "infinity", "nan"):
        return float(t)
    return None


def plain_int(text: str) -> int:
    """An argparse type: a plain decimal integer of at most 19 digits (its range is the
    option's own check); ``1_000``, ``1e3`` and non-ASCII digits are refused."""
    t = text.strip()
    if _INTEGER.match(t) and len(t.lstrip("+-")) <= 19:
        return int(t)
    raise argparse.ArgumentTypeError(f"must be a plain decimal integer, got {short(text)}")


def plain_float(text: str) -> float:
    """An argparse type: a finite plain decimal number (``1.5``, ``2e-3``); ``1_0``,
    non-ASCII digits, ``nan`` and ``inf`` are refused."""
    t = text.strip()
    value = float(t) if _REAL.match(t) else math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite decimal number, got {short(text)}")
    return value


def seconds_arg(text: str) -> float:
    """``--time-limit``: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not text.isascii() or not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds >= 0, got {short(text)}")
    return value


def seed_arg(text: str) -> int:
    """``--seed``: an integer in ``[0, 2**63 - 1]`` (64-bit)."""
    t = text.strip()
    if t.isascii() and t.isdigit() and len(t) <= 19 and int(t) < 2**63:
        return int(t)
    raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**63 - 1], got {short(text)}")


def read_json(path: str) -> Any:
    """A JSON file as Python data; every failure a ValueError naming the file (a device,
    a pipe or an oversized file refused before reading: ``sim.problems.read_json``)."""
    from sim.problems import read_json as read

    return read(path)


# ------------------------------------------------------------------ output

def json_default(x: Any) -> Any:
    """JSON for NumPy scalars, sets and tuples; anything else as its string."""
    if hasattr(x, "item"):
        return x.item()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def clean(x: Any) -> Any:
    """Replace non-finite floats by strings so the output is strict JSON."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


DUMP_INDENTED_CHARS = 1 << 20
"""Longest compact JSON that :func:`dump` indents at every level; a longer document (a
slot table of 10^6 rows, say) is indented at the top level only, each value on one line:
Python's indenting encoder takes seconds where the compact one takes a tenth."""


def dump(obj: Any) -> str:
    """``obj`` as strict, indented JSON (at the top level only past
    :data:`DUMP_INDENTED_CHARS`).

    Each top-level value is encoded once by the C encoder; only a value that holds a
    non-finite float is walked in Python (:func:`clean`), so a slot table of 10^6 rows
    beside an infinite bound costs one compact encoding, not a walk of the table.
    """
    if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
        compact = _strict(obj)
        if len(compact) <= DUMP_INDENTED_CHARS:
            return json.dumps(json.loads(compact), indent=2)
        return compact
    pieces = [(json.dumps(k), _strict(v)) for k, v in obj.items()]
    if sum(len(k) + len(v) + 2 for k, v in pieces) <= DUMP_INDENTED_CHARS:
        compact = "{" + ", ".join(f"{k}: {v}" for k, v in pieces) + "}"
        return json.dumps(json.loads(compact), indent=2)
    return "{\n" + ",\n".join(f"  {k}: {v}" for k, v in pieces) + "\n}"


def _strict(x: Any) -> str:
    """``x`` as compact strict JSON, non-finite floats written as strings."""
    try:  # the C encoder, which refuses a non-finite float
        return json.dumps(x, default=json_default, allow_nan=False)
    except ValueError:
        return json.dumps(clean(x), default=json_default, allow_nan=False)


COLUMNS = (
    ("policy", "policy", "{}"),
    ("jobs", "jobs", "{}"),
    ("avg_wait", "avg wait [s]", "{:.1f}"),
    ("avg_bounded_slowdown", "avg bsld", "{:.2f}"),
    ("avg_slowdown", "avg sld", "{:.2f}"),
    ("utilization", "util", "{:.3f}"),
    ("makespan", "makespan [s]", "{}"),
    ("killed", "killed", "{}"),
    ("sim_seconds", "sim [s]", "{:.2f}"),
)


def table(rows: Sequence[dict[str, Any]], first: tuple[str, str] | None = None) -> str:
    """The rows of simulation metrics as an aligned text table (``first``: an extra
    leading column, key and title)."""
    cols = ([(first[0], first[1], "{}")] if first else []) + list(COLUMNS)
    cells = [[title for _, title, _ in cols]]
    for r in rows:
        cells.append([_cell(r, key, fmt) for key, _, fmt in cols])
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                       enumerate(zip(row, widths, strict=True))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(r: dict[str, Any], key: str, fmt: str) -> str:
    """One table cell; a K-resource row's utilization is every resource's, r0/r1/..."""
    if key == "utilization" and r.get("utilization_per_resource"):
        return "/".join(fmt.format(u) for u in r["utilization_per_resource"])
    return fmt.format(r[key]) if r.get(key) is not None else "-"


LEGEND = ("avg wait: mean start - submit; avg bsld: mean bounded slowdown, response / "
          "max(run, 10 s); avg sld: mean slowdown, response / run; util: processor-seconds "
          "used / (processors x makespan), for K-resource runs every resource's, r0/r1/...; "
          "makespan: last end - first submit; killed: jobs "
          "killed at their requested time; sim: wall-clock seconds of the simulation.")
