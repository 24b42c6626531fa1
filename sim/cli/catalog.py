"""``schedsearch solvers [FAMILY]``: every registered solver and policy, one line each."""

from __future__ import annotations

import argparse
from typing import Any

from sim import registry
from sim.cli.common import Fmt, dump

POLICIES = "policies"


def cmd_solvers(args: argparse.Namespace) -> int:
    from sim.catalog import policy_line, solver_line

    registry.has_solver("grouping", "")  # reads the installed packages' entry points once
    families = sorted(registry.SOLVERS)
    wanted = families + [POLICIES] if args.family is None else [args.family]
    if args.family is not None and args.family not in [*families, POLICIES]:
        raise ValueError(_unknown(args.family, families))
    doc: dict[str, Any] = {}
    for fam in wanted:
        if fam == POLICIES:
            doc[fam] = {n: policy_line(n) for n in sorted(registry.POLICIES)}
        else:
            doc[fam] = {n: solver_line(fam, n) for n in sorted(registry.SOLVERS[fam])}
    if args.json:
        print(dump({"default_solvers": {f: registry.DEFAULT_SOLVERS.get(f) for f in wanted
                                        if f != POLICIES}, **doc}))
        return 0
    for fam, names in doc.items():
        if fam == POLICIES:
            print("policies (simulate --policy, compare --policies, sweep)")
        else:
            print(f"{fam} (solve --solver; default {registry.DEFAULT_SOLVERS.get(fam, '-')}; "
                  "A+B runs members in turn)")
        width = max(len(n) for n in names)
        for n, line in names.items():
            print(f"  {n:<{width}}  {line}")
    return 0


def _unknown(name: str, families: list[str]) -> str:
    """The error for ``solvers NAME`` with ``name`` neither a problem family of
    ``families`` nor ``policies``: what it takes, each counted for what it is."""
    from sim.names import did_you_mean

    return (f"solvers: unknown family {name!r}; {did_you_mean(name, [*families, POLICIES])}"
            f"it takes one of the {len(families)} problem families ({', '.join(families)}) "
            f"or '{POLICIES}'")


def add_solvers(sub: Any) -> None:
    """Register ``solvers`` on the ``schedsearch`` parser."""
    p = sub.add_parser("solvers", help="every registered solver and policy with what it is",
                       formatter_class=Fmt)
    p.add_argument("family", nargs="?",
                   help=f"one problem family, or '{POLICIES}' (default: all)")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=cmd_solvers)
