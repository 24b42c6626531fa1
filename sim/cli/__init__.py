"""The ``schedsearch`` command line.

``schedsearch simulate TRACE --policy NAME``: one policy on a trace;
``schedsearch compare TRACE``: several policies side by side (the main job);
``schedsearch solve PROBLEM.json --solver NAME``: an offline problem with a registered
solver; ``schedsearch traces``: the bundled traces; ``schedsearch sweep SPEC --out
RESULTS``: a grid of cells into a resumable results store; ``schedsearch report
RESULTS``: tables and plots of a store; ``schedsearch reproduce NAME``: a paper's table;
``schedsearch csm``: one CSM experiment point; ``schedsearch bsp``: one BSP cell under
Karl's scheduling servers (times in microseconds); ``schedsearch compile``: the compiled
batch engine's kernels, once, at install; ``schedsearch convert IN OUT``: a workload between
SWF, ``.kswf`` and Batsim JSON; ``schedsearch solvers [FAMILY]``: every solver and policy
with what it is.

One module per command family: :mod:`sim.cli.simulate` (simulate, compare, traces, compile),
:mod:`sim.cli.solve`, :mod:`sim.cli.timeshare` (csm, bsp), :mod:`sim.cli.generate`,
:mod:`sim.cli.sweep` (sweep, report, reproduce), :mod:`sim.cli.convert`,
:mod:`sim.cli.catalog` (solvers);
:mod:`sim.cli.common` holds what they
share. This module assembles the parser and runs it (:func:`main`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from sim.argparser import Parser
from sim.batch.machine import PolicyError
from sim.batch.validate import ValidationError
from sim.cli.catalog import add_solvers
from sim.cli.common import Fmt
from sim.cli.convert import add_convert
from sim.cli.generate import add_generate
from sim.cli.signals import Terminated, sigterm_raises
from sim.cli.simulate import add_compile, add_simulate, add_traces, parse_set
from sim.cli.solve import add_solve
from sim.cli.sweep import add_sweep_commands
from sim.cli.timeshare import add_bsp, add_csm
from sim.extras import missing_extra

__all__ = ["build_parser", "main", "parse_set"]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``schedsearch`` parser, with every command registered.

    Given ``command`` (the command about to be parsed, one of :data:`FAMILIES`), only its
    family's commands get their options; every other command is registered by name alone,
    in the same order, which is all that parsing ``command`` reads (the other families'
    options import those commands' modules for their defaults and choices).
    """
    ap = Parser(prog="schedsearch", description=__doc__.splitlines()[0], formatter_class=Fmt)
    ap.add_argument("--version", action=_Version, nargs=0,
                    help="show the version (and the source tree's commit) and exit")
    sub = ap.add_subparsers(dest="command", required=True)
    known = any(command in names for _, names in FAMILIES)
    for add, names in FAMILIES:
        if not known or command in names:
            add(sub)
        else:
            for name in names:
                sub.add_parser(name)
    return ap


class _Version(argparse.Action):
    """``--version``: the version is looked up (git included) only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"schedsearch {_version()}")
        parser.exit()


def _version() -> str:
    """The installed package's version, with the source tree's commit when it is one."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("schedsearch")
    except PackageNotFoundError:
        v = "unknown"
    from sim.sweep.execute import code_version

    commit = code_version()
    return v if commit.startswith(("schedsearch", "unknown")) or commit == v \
        else f"{v} (commit {commit[:12]})"


def add_gym_eval(sub: argparse._SubParsersAction) -> None:
    """Register ``gym-eval``: built-in policies and users' agents in the Gymnasium
    environment against the proved offline optimum on the same windows
    (``sim.batch.env_eval``)."""
    sub.add_parser("gym-eval", help="environment policies and your agents (MODULE:NAME) "
                                     "against the proved optimum on windows of a trace "
                                     "(gymnasium extra; gym-eval --help)",
                   add_help=False)


#: each family's registration and the commands it registers, in the parser's order
FAMILIES: tuple[tuple[Callable[[Any], None], tuple[str, ...]], ...] = (
    (add_simulate, ("simulate", "compare")),
    (add_solve, ("solve", "bench", "schema")),
    (add_csm, ("csm",)),
    (add_bsp, ("bsp",)),
    (add_generate, ("generate",)),
    (add_traces, ("traces",)),
    (add_compile, ("compile",)),
    (add_convert, ("convert",)),
    (add_solvers, ("solvers",)),
    (lambda sub: add_sweep_commands(sub, Fmt), ("sweep", "report", "reproduce")),
    (add_gym_eval, ("gym-eval",)),
)


def _gym_eval(argv: list[str]) -> int:
    from sim.batch.env_eval import main as gym_main

    return gym_main(argv, prog="schedsearch gym-eval")


def _one_line(exc: BaseException, limit: int = 500) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; exit code 0, or 2 with one line on stderr for bad input
    (``bench``: 3 when its report holds an ERROR, ``sim.sweep.bench.EXIT_ERRORS``).

    No input gives a traceback: bad input (``ValueError``, ``OSError``, a JSON nested too
    deep) is exit 2 naming the file and the line or field; a closed output pipe
    (``schedsearch ... | head``) ends quietly; Ctrl-C ends with exit 130 (a MIP solve
    prints its answer so far instead, ``models.interrupt``) and SIGTERM with 143
    (:mod:`sim.cli.signals`), their child processes stopped and temporary files
    removed; anything else is a bug, reported in one line with exit 1
    (``SCHEDSEARCH_DEBUG=1`` shows the traceback).
    """
    with sigterm_raises():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    args = None
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        if argv[:1] == ["gym-eval"]:  # its own parser (sim.batch.env_eval) takes the rest
            return _gym_eval(argv[1:])
        command = argv[0] if argv and not argv[0].startswith("-") else None
        args = build_parser(command).parse_args(argv)
        code = args.func(args)
        sys.stdout.flush()
        return code
    except SystemExit as exc:  # --help, or an argument error already printed
        return exc.code if isinstance(exc.code, int) else 2
    except BrokenPipeError:
        # the reader went away (| head): silence the flush at exit, end quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except (ValueError, OSError, RecursionError) as exc:
        out = getattr(args, "out", None)
        if isinstance(exc, OSError) and exc.filename is None and exc.strerror and out:
            exc = OSError(exc.errno, f"{out}: {exc.strerror}")  # a write to --out failed
        print(f"schedsearch: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except (PolicyError, ValidationError) as exc:  # a policy's bug (often a user's policy)
        what = "decided what the machine cannot do" if isinstance(exc, PolicyError) \
            else "produced a schedule the validator rejects"
        print(f"schedsearch: error: the policy {what} (a bug in that policy): "
              f"{_one_line(exc)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("schedsearch: error: out of memory (the input is too large for this command)",
              file=sys.stderr)
        return 2
    except Terminated:
        print("schedsearch: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("schedsearch: interrupted", file=sys.stderr)
        return 130
    except ImportError as exc:  # an optional package (an extra) not installed
        msg = missing_extra(exc)
        if msg is None or os.environ.get("SCHEDSEARCH_DEBUG"):
            return _internal(exc)
        print(f"schedsearch: error: {msg}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug: one line, the traceback on request
        return _internal(exc)


def _internal(exc: Exception) -> int:
    """Report a bug in one line (exit 1); ``SCHEDSEARCH_DEBUG=1`` raises it instead."""
    if os.environ.get("SCHEDSEARCH_DEBUG"):
        raise exc
    print(f"schedsearch: internal error ({type(exc).__name__}): {_one_line(exc)}; "
          "please report it (SCHEDSEARCH_DEBUG=1 shows the traceback)", file=sys.stderr)
    return 1
