"""Cost per job of conservative backfilling on SDSC-BLUE's overloaded queue (figures,
not a test).

Simulates the first n jobs of SDSC-BLUE (1,152 processors, jobs killed at their request)
with ``Conservative()`` for growing n, the compiled compression pass and the pure-Python
one back to back in one process (so both see the same machine load), and prints the
simulation's wall time, its process (CPU) time and the CPU time per job. Both passes must
give the same start array; the script checks it and says so.

Run: ``python -m sim.experiments.engine.conservative_scaling [--sizes 10000,30000,...]
[--no-python]``. Writes ``results/conservative_scaling.md`` at the repository top (a
measurement of this machine at this moment, not a committed result).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import markdown_row, markdown_table

SIZES = (10_000, 30_000, 60_000, 120_000, 232_562)


def run(n: int, compiled: bool) -> dict:
    """Simulate the first ``n`` jobs; times in seconds."""
    from heuristics.backfill import Conservative
    from instances.bundled import load_trace
    from instances.job import Workload
    from sim.batch.machine import simulate

    w = load_trace("SDSC-BLUE")
    w = Workload(w.jobs[:n], w.capacity, f"SDSC-BLUE[:{n}]")
    cpu = time.process_time()
    s = simulate(w, Conservative(compiled=compiled))
    cpu = time.process_time() - cpu
    return {"jobs": len(w), "sim": s.sim_seconds, "cpu": cpu, "start": s.start.tobytes()}


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="comma-separated job counts (prefixes of SDSC-BLUE)")
    ap.add_argument("--no-python", action="store_true",
                    help="skip the pure-Python pass (it takes about 2.5x longer)")
    args = ap.parse_args(argv)
    from heuristics.backfill import _compress_kernel

    if _compress_kernel() is None:
        print("numba is not installed: only the pure-Python pass can run", file=sys.stderr)
        return 2
    # warm: the numba import and the kernel's cache load are paid once per process
    run(2000, True)
    sizes = [int(x) for x in args.sizes.split(",")]
    rows = []
    for n in sizes:
        c = run(n, True)
        p = None if args.no_python else run(n, False)
        same = "n/a" if p is None else ("yes" if p["start"] == c["start"] else "NO")
        rows.append((c, p, same))
        line = (f"n={c['jobs']:7d}  compiled: sim {c['sim']:6.2f} s cpu {c['cpu']:6.2f} s "
                f"{1e6 * c['cpu'] / c['jobs']:6.1f} us/job")
        if p is not None:
            line += (f"  python: sim {p['sim']:6.2f} s cpu {p['cpu']:6.2f} s "
                     f"{1e6 * p['cpu'] / p['jobs']:6.1f} us/job  same starts: {same}")
        print(line, f"load {os.getloadavg()[0]:.1f}", flush=True)
    commit = provenance.commit()
    load = provenance.load_average()
    lines = [
        "# Conservative backfilling on SDSC-BLUE prefixes",
        "",
        f"`python -m sim.experiments.engine.conservative_scaling {' '.join(argv or sys.argv[1:])}`"
        f" at commit {commit}, Python {platform.python_version()}; load average at the "
        f"end (1/5/15 min) {load}. Times in seconds; us/job is CPU time per job.",
        "",
        *markdown_table(["jobs", "compiled sim", "compiled cpu", "us/job", "python sim",
                         "python cpu", "us/job", "same starts"], [], align="rrrrrrrl"),
    ]
    for c, p, same in rows:
        py = (["n/a"] * 3 if p is None else
              [f"{p['sim']:.2f}", f"{p['cpu']:.2f}", f"{1e6 * p['cpu'] / p['jobs']:.1f}"])
        lines.append(markdown_row([c["jobs"], f"{c['sim']:.2f}", f"{c['cpu']:.2f}",
                                   f"{1e6 * c['cpu'] / c['jobs']:.1f}", *py, same]))
    out = Path("results")
    out.mkdir(exist_ok=True)
    write_atomic(out / "conservative_scaling.md", "\n".join(lines) + "\n")
    return 0 if all(same != "NO" for *_, same in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
