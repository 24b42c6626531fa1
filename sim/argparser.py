"""The argument parser of every command line in the project (``schedsearch`` and the
``python -m`` entry points of the studies): an argument error is one line,
``PROG: error: MESSAGE (see PROG --help)``, exit code 2, never the usage block; an
option given twice is an error unless it collects its values (``action="append"``);
:attr:`Parser.given` holds the options the command line gave, for a command to refuse
the ones its run does not read (:meth:`Parser.refuse_unread`)."""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Iterator, Sequence

#: the program name every :class:`Parser` made inside :func:`program` takes, with the
#: arguments the command line gives before the user's (innermost last)
_PROGRAM: list[tuple[str, tuple[str, ...]]] = []


def _closest_choices(message: str, limit: int = 200) -> str:
    """argparse's "invalid choice: 'X' (choose from ...)" with a long list cut to the
    closest choices (the whole list is in ``--help``)."""
    import difflib

    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if m is None or len(message) <= limit:
        return message
    choices = re.findall(r"'([^']*)'", m.group(2))
    near = difflib.get_close_matches(m.group(1), choices, n=4, cutoff=0.3)
    hint = f"closest: {', '.join(near)}" if near else "none close"
    return f"{message[:m.end(1) + 1]} ({len(choices)} choices; {hint})"


@contextlib.contextmanager
def program(name: str, preset: Sequence[str] = ()) -> Iterator[None]:
    """Inside it, every :class:`Parser` (and its sub-parsers) names itself ``name`` in
    its errors and usage: ``schedsearch reproduce NAME`` runs a study's own ``main``,
    whose parser would otherwise name the study's module, a command the user did not
    type.

    ``preset`` are the leading arguments ``name`` itself stands for (``reproduce
    gine-fig4`` runs ``main(["fig4", ...])``): a parser given arguments that begin with
    them leaves the positionals they fill out of its usage and help, which the user
    neither types nor may change."""
    _PROGRAM.append((name, tuple(preset)))
    try:
        yield
    finally:
        _PROGRAM.pop()


#: the actions an option may be given more than once with: each occurrence adds a value
REPEATABLE = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction,
              argparse._ExtendAction)


def option_name(action: argparse.Action) -> str:
    """How an error names ``action``: its long option string (``--jobs``), else its first."""
    longs = [s for s in action.option_strings if s.startswith("--")]
    return (longs or action.option_strings or [action.dest])[0]


class Parser(argparse.ArgumentParser):
    """Argument errors as one line (``schedsearch: error: ...``), exit code 2; an option
    given twice (argparse would keep the last silently) is one of them, unless its action
    collects values (:data:`REPEATABLE`)."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        if _PROGRAM:
            self.prog = _PROGRAM[-1][0]
        #: the destinations of the options the last parse was given on the command line
        self.given: set[str] = set()

    def parse_known_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201
        if _PROGRAM and args is not None:
            preset = _PROGRAM[-1][1]
            if preset and tuple(args[:len(preset)]) == preset:
                for action in self._get_positional_actions()[:len(preset)]:
                    action.help = argparse.SUPPRESS
        self.given = set()
        return super().parse_known_args(args, namespace)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> object:
        """argparse's conversion of one occurrence of ``action``'s arguments; records the
        option as given, and refuses a second occurrence of an option that keeps one
        value."""
        if action.option_strings:
            if action.dest in self.given and not isinstance(action, REPEATABLE):
                self.error(f"option {option_name(action)} given twice")
            self.given.add(action.dest)
        return super()._get_values(action, arg_strings)

    def options(self) -> set[str]:
        """The destinations of every option this parser takes."""
        return {a.dest for a in self._actions if a.option_strings
                and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))}

    def refuse_unread(self, reads: set[str] | frozenset[str], what: str) -> None:
        """Exit 2 with one line when the command line gave an option that ``what`` (a
        figure, a table, a mode) does not read: ``reads`` are the destinations it reads.
        Called before anything is written."""
        by_dest = {a.dest: a for a in self._actions if a.option_strings}
        extra = sorted(option_name(by_dest[d]) for d in self.given - set(reads)
                       if d in by_dest)
        if extra:
            takes = sorted(option_name(by_dest[d]) for d in reads if d in by_dest)
            self.error(f"{what} does not read {', '.join(extra)} "
                       f"(it takes {', '.join(takes) or 'no option'})")

    def error(self, message: str) -> None:  # type: ignore[override]
        message = _closest_choices(message)
        message = re.sub(r"'([^'\s]{80})[^'\s]{4,}'", r"'\1...'", message)  # a value echoed whole
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
