"""``schedsearch solve``: an offline problem from a JSON file with a registered solver."""

from __future__ import annotations

import argparse
import json
from typing import Any

from sim import registry
from sim.cli.common import Fmt, clean, dump, json_default, read_json, seconds_arg, seed_arg


def cmd_solve(args: argparse.Namespace) -> int:
    data = read_json(args.problem)
    family, problem = registry.load_problem(data, source=args.problem)
    solve = registry.solver(family, args.solver)
    try:
        result = solve(problem, time_limit=args.time_limit, seed=args.seed)
    except ValueError as exc:  # a refusal (e.g. too large for the model): name the file
        raise ValueError(f"{args.problem}: {exc}") from None
    d = result.to_dict()
    d["problem"] = family
    if args.json:
        print(dump(d))
    else:
        for k in ("problem", "solver", "status", "objective", "bound", "gap", "runtime"):
            print(f"{k:>10}: {d[k]}")
        if d.get("note"):
            print(f"{'note':>10}: {d['note']}")
        print(f"{'solution':>10}: {json.dumps(clean(d['solution']), default=json_default)}")
    return 0


def add_solve(sub: Any) -> None:
    """Register ``solve`` on the ``schedsearch`` parser."""
    p = sub.add_parser("solve", help="solve an offline problem from a JSON file",
                       formatter_class=Fmt)
    p.add_argument("problem", help="problem JSON (its 'problem' field names the family)")
    p.add_argument("--solver", required=True,
                   help="registered solver of the problem's family: " + "; ".join(
                       f"{fam}: {', '.join(sorted(names))}"
                       for fam, names in sorted(registry.SOLVERS.items())))
    p.add_argument("--time-limit", type=seconds_arg, help="seconds (finite, >= 0)")
    p.add_argument("--seed", type=seed_arg, default=0, help="integer in [0, 2**63 - 1]")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_solve)
