"""What the study modules share: provenance, Markdown tables, result writing, intervals and
the plot style.

- Provenance: the commit of the code that produced a result (:func:`commit`), the command
  line (:func:`command`), the machine's load (:func:`load_average`), and the line a result
  file records (:func:`stamp`). Every committed result file records where it came from with
  these, so that the figures in it can be traced to one state of the code and regenerated.
- Tables: :func:`markdown_row`, :func:`markdown_table` and :func:`markdown_text` (GitHub
  Markdown, one line per row); :func:`csv_text`.
- Writing: :func:`write_atomic` (a temporary file renamed over the target, so a reader or a
  killed run never sees half a file).
- Gaps: :func:`relative_gap` (an objective against a bound, bounded for prices of either
  sign).
- Intervals: :func:`mean_ci` (mean and 95% Student-t half-width, the one used by the
  time-sharing metrics).
- Plots: :func:`pyplot` (matplotlib on the file-only Agg backend) and
  :func:`label_colours` (one colour per label, the same in every panel).
"""

from __future__ import annotations

import csv
import io
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from instances import atomic
from sim.sweep.plots import label_colours  # one definition, for studies and reports
from sim.timeshare.metrics import mean_ci

__all__ = ["PARTIAL_DIR", "ROOT", "command", "commit", "csv_text", "label_colours",
           "load_average", "markdown_row", "markdown_rule", "markdown_table", "markdown_text",
           "mean_ci", "pyplot", "relative_gap", "stamp", "write_atomic"]

ROOT = Path(__file__).resolve().parents[2]
"""The repository (or installation) top: ``sim/`` and ``instances/`` are under it."""
PARTIAL_DIR = ROOT / "results"
"""Where the studies that write partial runs at the repository top put them (git-ignored);
a study's committed results are in its package's ``results/``."""

CODE_PATHS = ("sim", "models", "heuristics", "instances", "pyproject.toml")
"""What counts as code for the ``-dirty`` flag; result files being written and the
studies' reports being edited do not."""
RESULT_PATHS = ("sim/experiments/*/results/**", "sim/experiments/*/REPORT.md")
"""Git glob pathspecs of the studies' results and reports (``**``: every file below)."""


def code_changed(root: Path) -> bool:
    """Whether the git checkout ``root`` has uncommitted changes to tracked code
    (``CODE_PATHS`` less ``RESULT_PATHS``)."""
    out = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no",
         "--", *CODE_PATHS, *(f":(exclude,glob){p}" for p in RESULT_PATHS)],
        capture_output=True, text=True, check=True, timeout=10).stdout
    return bool(out.strip())


@cache
def commit() -> str:
    """Short commit hash of the source tree, with ``-dirty`` when tracked code has
    uncommitted changes (:func:`code_changed`); outside a git checkout the installed
    package version (``schedsearch X``), else ``unknown``."""
    if (ROOT / ".git").exists():
        try:
            head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True, check=True,
                                  timeout=10).stdout.strip()
            return head + ("-dirty" if code_changed(ROOT) else "")
        except (OSError, subprocess.SubprocessError):
            pass
    from importlib.metadata import PackageNotFoundError, version

    try:
        return "schedsearch " + version("schedsearch")
    except PackageNotFoundError:
        return "unknown"


def command(argv: list[str] | None = None) -> str:
    """The command line of this process (``argv``, default ``sys.argv``), shell-quoted; a
    module run with ``python -m`` is shown as such."""
    args = list(sys.argv if argv is None else argv)
    if args and Path(args[0]).name == "schedsearch":  # the console script
        args[0] = "schedsearch"
    elif args and args[0].endswith(".py"):
        path = Path(args[0]).resolve()
        try:
            mod = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            args = ["python", "-m", mod, *args[1:]]
        except ValueError:
            pass
    return shlex.join(args)


def environment() -> str:
    """What a deterministic run's results may depend on besides the command and the
    commit: the Python and OR-Tools versions and the machine's architecture (never the
    load or a time, so that two runs of one command write the same bytes)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        ortools = version("ortools")
    except PackageNotFoundError:
        ortools = "not installed"
    return f"Python {platform.python_version()}, OR-Tools {ortools}, {platform.machine()}"


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, ``"a / b / c"``."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def stamp(argv: list[str] | None = None) -> str:
    """``commit X, command `...```: the line a result file records."""
    return f"commit {commit()}, command `{command(argv)}`"


# ------------------------------------------------------------------------------ tables
def markdown_row(cells: Iterable[object]) -> str:
    """One Markdown table row: ``| a | b | c |`` (each cell through ``str``; a ``None`` cell
    is a blank one, written ``| |``)."""
    return "|" + "".join(" |" if c is None else f" {c} |" for c in cells)


def markdown_rule(columns: int | str) -> str:
    """The line under a Markdown table's header.

    Parameters
    ----------
    columns : int or str
        The number of columns (all left aligned, ``|---|---|``), or one character per
        column: ``l`` left (``---``), ``r`` right (``---:``).
    """
    align = "l" * columns if isinstance(columns, int) else columns
    bad = set(align) - {"l", "r"}
    if bad:
        raise ValueError(f"alignment characters must be 'l' or 'r', not {sorted(bad)}")
    return "|" + "".join("---:|" if a == "r" else "---|" for a in align)


def markdown_table(header: Sequence[object], rows: Iterable[Iterable[object]],
                   align: str | None = None) -> list[str]:
    """A Markdown table as a list of lines (no trailing newline): the header, the rule,
    one line per row.

    Parameters
    ----------
    header : sequence
        The column titles.
    rows : iterable of iterables
        The cells of each row (each through ``str``).
    align : str, optional
        One character per column, ``l`` or ``r`` (default: every column left aligned).
    """
    if align is not None and len(align) != len(header):
        raise ValueError(f"align has {len(align)} columns, the header {len(header)}")
    return [markdown_row(header), markdown_rule(align or len(header)),
            *(markdown_row(r) for r in rows)]


def markdown_text(header: Sequence[object], rows: Iterable[Iterable[object]],
                  align: str | None = None) -> str:
    """:func:`markdown_table` as one string, each line (the last too) ending in a newline."""
    return "\n".join(markdown_table(header, rows, align)) + "\n"


def csv_text(header: Sequence[object], rows: Iterable[Iterable[object]]) -> str:
    """A CSV table (``csv`` module's default dialect, ``\\n`` line ends): the header, then
    one line per row."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


# ------------------------------------------------------------------------------ gaps
def relative_gap(obj: float | None, bound: float | None) -> float | None:
    """Relative gap ``|obj - bound| / max(|obj|, |bound|)`` (0 when equal), or None.

    The larger magnitude keeps the figure at most 200% when an objective is 0 or of the
    other sign than its bound (slack-insertion prices can be negative); for a
    minimisation with ``0 <= bound <= obj`` it is ``Result.gap``. Against the best bound
    of every solver on an instance it is the certified gap of the benchmarks."""
    if obj is None or bound is None:
        return None
    scale = max(abs(obj), abs(bound))
    return 0.0 if abs(obj - bound) <= 1e-9 * max(1.0, scale) else abs(obj - bound) / scale


# ------------------------------------------------------------------------------ writing
def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory renamed
    over it, so that ``path`` holds either the old or the new content, never a part.
    The directory is created when missing (a partial run's git-ignored ``results/``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_atomic(path, text)


# ------------------------------------------------------------------------------ plots
def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no display), imported on first
    use so that a study that does not plot does not need matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
