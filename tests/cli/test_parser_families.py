"""The parser built for one command parses it as the whole parser does.

``sim.cli.main`` builds only the family of the command it is given
(``build_parser(command)``); the other commands are registered by name. Checked here: the
table ``FAMILIES`` names every command of the whole parser in its order, and for every
command the partial parser has the same command list and the same subparser (its help,
and the namespace or error of a few argument lists).
"""

from __future__ import annotations

import argparse

import pytest

from sim.cli import FAMILIES, build_parser


def _subparsers(ap: argparse.ArgumentParser) -> argparse._SubParsersAction:
    return next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))


FULL = _subparsers(build_parser())
COMMANDS = [name for _, names in FAMILIES for name in names]


def test_families_name_every_command_in_order():
    assert COMMANDS == list(FULL.choices)


def _outcome(ap: argparse.ArgumentParser, argv: list[str], capsys) -> str:
    try:
        ns = vars(ap.parse_args(argv))
    except SystemExit as exc:
        return f"exit {exc.code}: {capsys.readouterr().err}"
    return repr(sorted((k, repr(v)) for k, v in ns.items()))


@pytest.mark.parametrize("command", COMMANDS)
def test_partial_parser_parses_its_command_as_the_whole(command, capsys):
    ap = build_parser(command)
    sub = _subparsers(ap)
    assert list(sub.choices) == list(FULL.choices)
    assert sub.choices[command].format_help() == FULL.choices[command].format_help()
    whole = build_parser()
    for argv in ([command], [command, "--no-such-option"], [command, "x", "--quiet"],
                 [command, "SDSC-BLUE", "--policy", "easy", "--engine", "compiled"]):
        assert _outcome(ap, argv, capsys) == _outcome(whole, argv, capsys), argv
    family = next(names for _, names in FAMILIES if command in names)
    others = [c for c in COMMANDS if c not in family]
    assert all(not sub.choices[c]._actions[1:] for c in others)  # by name alone


def test_unknown_or_no_command_builds_every_command():
    for command in (None, "simulat", "-h"):
        sub = _subparsers(build_parser(command))
        assert all(sub.choices[c].format_help() == FULL.choices[c].format_help()
                   for c in COMMANDS)
