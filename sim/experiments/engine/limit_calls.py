"""Wall time of one in-process ``solve(...)`` call of the CP-SAT models against their time
limit, on the large instances of ``sim.experiments.engine.limits_bench``.

Unlike ``limits_bench`` (a fresh process per run, so Python start-up and the one-time
CP-SAT import count), this imports CP-SAT once and then times each call alone: the
target is call wall <= limit + 0.5 s. Prints a Markdown table (writes no file).

Run: ``python -m sim.experiments.engine.limit_calls --families gang_schedule,slot_assignment
--limits 1,10,30`` (default: the four families below at 1 and 10 s).
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

from sim import registry
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import markdown_row, markdown_table
from sim.experiments.engine import limits_bench

FAMILIES = ("gang_schedule", "slot_assignment", "kresource_epochs", "slack_insertion")


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated")
    ap.add_argument("--solver", default="cpsat", help="registered solver name")
    ap.add_argument("--limits", default="1,10", help="comma-separated seconds")
    args = ap.parse_args(argv)
    try:
        limits = [float(x) for x in args.limits.split(",")]
        if not all(0 <= x < float("inf") for x in limits):
            raise ValueError
    except ValueError:
        ap.error(f"--limits: comma-separated seconds >= 0, got {args.limits!r}")
    from ortools.sat.python import cp_model  # noqa: F401  (the one-time import, untimed)

    print(f"`python -m sim.experiments.engine.limit_calls {' '.join(argv or sys.argv[1:])}` at "
          f"commit {provenance.commit()}\n")
    print("\n".join(markdown_table(["family", "instance", "limit [s]", "status", "runtime [s]",
                                    "call wall [s]", "call CPU [s]", "within limit + 0.5 s"],
                                   [])))
    with tempfile.TemporaryDirectory() as tmp:
        files = limits_bench.instances(Path(tmp))
        for fam in args.families.split(","):
            if fam not in files or args.solver not in registry.SOLVERS.get(fam, {}):
                ap.error(f"--families: no {args.solver!r} instance for {fam!r}")
            mod, fn = registry.PROBLEM_LOADERS[fam].split(":")
            load = getattr(importlib.import_module(mod), fn)
            mod, fn = registry.SOLVERS[fam][args.solver].split(":")
            solve = getattr(importlib.import_module(mod), fn)
            for label, path in files[fam]:
                problem = load(json.loads(path.read_text()))
                for limit in limits:
                    t0, c0 = time.perf_counter(), time.process_time()
                    r = solve(problem, time_limit=limit)
                    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    print(markdown_row([fam, label, f"{limit:g}", r.status.name,
                                        f"{r.runtime:.2f}", f"{wall:.2f}", f"{cpu:.2f}",
                                        "yes" if wall <= limit + 0.5 else "NO"]), flush=True)
    print(f"\nLoad average (1/5/15 min): {provenance.load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
