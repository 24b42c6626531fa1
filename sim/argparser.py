"""The argument parser of every command line in the project (``schedsearch`` and the
``python -m`` entry points of the studies): an argument error is one line,
``PROG: error: MESSAGE (see PROG --help)``, exit code 2, never the usage block."""

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


class Parser(argparse.ArgumentParser):
    """Argument errors as one line (``schedsearch: error: ...``), exit code 2."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        super().__init__(*args, **kwargs)
        if _PROGRAM:
            self.prog = _PROGRAM[-1][0]

    def parse_known_args(self, args=None, namespace=None):  # noqa: ANN001, ANN201
        if _PROGRAM and args is not None:
            preset = _PROGRAM[-1][1]
            if preset and tuple(args[:len(preset)]) == preset:
                for action in self._get_positional_actions()[:len(preset)]:
                    action.help = argparse.SUPPRESS
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        message = _closest_choices(message)
        message = re.sub(r"'([^'\s]{80})[^'\s]{4,}'", r"'\1...'", message)  # a value echoed whole
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
