"""Provenance of experiment outputs: the commit of the code that produced them, the command
line, the machine's load.

Every committed result file records where it came from with these helpers, so that the
figures in it can be traced to one state of the code and regenerated.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE_PATHS = ("sim", "models", "heuristics", "instances", "pyproject.toml")
"""What counts as code for the ``-dirty`` flag; result files being written do not."""
RESULT_PATHS = ("sim/experiments/*/results",)


@cache
def commit() -> str:
    """Short commit hash of the source tree, with ``-dirty`` when tracked code (``CODE_PATHS``
    less the result directories) has uncommitted changes; outside a git checkout the
    installed package version (``schedsearch X``), else ``unknown``."""
    if (ROOT / ".git").exists():
        try:
            head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True, check=True,
                                  timeout=10).stdout.strip()
            dirty = subprocess.run(
                ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no",
                 "--", *CODE_PATHS, *(f":(exclude,glob){p}" for p in RESULT_PATHS)],
                capture_output=True, text=True, check=True, timeout=10).stdout.strip()
            return head + ("-dirty" if dirty else "")
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


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, ``"a / b / c"``."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def stamp(argv: list[str] | None = None) -> str:
    """``commit X, command `...```: the line a result file records."""
    return f"commit {commit()}, command `{command(argv)}`"
