"""Reading a log against simulating it as a whole process (figures, not a test).

The yardstick is what plain Python takes just to read and split a log's lines:
``[line.split() for line in gzip.open(path, "rt")]`` (``open`` for a plain file). Beside it,
in one run and interleaved round by round (the minimum of ``--rounds`` rounds is kept):

- ``read_swf`` on its vectorised fast path (:mod:`instances.swf_fast`), and on the
  line-by-line reference alone (the fast path switched off for the measurement), both
  with ``too_wide="error"`` as ``simulate`` reads (the whole reader: gunzip, decoding,
  parsing, cleaning, the ``Job`` objects and the ``Workload``);
- the wall time of ``schedsearch simulate TRACE --policy easy --quiet`` as a fresh process
  (start-up, reading, cleaning, simulation, validation, metrics), once per engine.

With ``--baseline TREE`` (another source tree, for example a git worktree of the commit
before a change), each round also times the same processes run from that tree, so that a
change is measured before and after in one run. Each figure is wall time, with the CPU
time (user and system; of the child process for a whole process) beside it, each also as a
multiple of the plain split's. The load average is printed before and after: on a loaded
machine every wall figure grows, the CPU figures and the ratios less so.

Run: ``python -m sim.experiments.engine.reading_bench [--trace SDSC-BLUE] [--rounds 3]
[--engines python,compiled] [--baseline TREE]``. It prints and writes nothing.
"""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import markdown_table

#: wall and CPU seconds of one measurement
Timing = tuple[float, float]


def plain_split(path: Path) -> Timing:
    """Seconds to read and split every line of ``path`` (gzip-aware) in plain Python."""
    t, c = time.perf_counter(), time.process_time()
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as fh:
        lines = [line.split() for line in fh]
    dt = time.perf_counter() - t, time.process_time() - c
    assert lines
    return dt


@contextmanager
def reference_only():
    """Switch the SWF reader's fast path off (the line reader reads everything)."""
    from instances import swf

    fast = swf.read_fast
    swf.read_fast = lambda *args, **kwargs: None
    try:
        yield
    finally:
        swf.read_fast = fast


def reader(path: Path, fast: bool) -> tuple[Timing, int]:
    """Seconds of ``read_swf(path, too_wide="error")`` and the jobs it kept."""
    from instances.swf import read_swf

    t, c = time.perf_counter(), time.process_time()
    if fast:
        w = read_swf(path, too_wide="error")
    else:
        with reference_only():
            w = read_swf(path, too_wide="error")
    return (time.perf_counter() - t, time.process_time() - c), len(w)


def _children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def whole_process(trace: str, engine: str, tree: Path | None = None) -> Timing:
    """Wall seconds of ``simulate TRACE --policy easy --engine ENGINE`` as a new process,
    run from the source tree ``tree`` (its directory and first on ``PYTHONPATH``) when
    given."""
    cmd = [sys.executable, "-m", "sim.cli", "simulate", trace, "--policy", "easy",
           "--engine", engine, "--quiet"]
    env = os.environ.copy()
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    t, c = time.perf_counter(), _children_cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, cwd=tree)
    return time.perf_counter() - t, _children_cpu() - c


def tree_commit(tree: Path) -> str:
    """Short commit hash of the git checkout ``tree`` ("unknown" outside one)."""
    try:
        return subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default="SDSC-BLUE", help="bundled trace name or SWF path")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--engines", default="python,compiled")
    ap.add_argument("--baseline", type=Path, metavar="TREE",
                    help="also time the processes run from this source tree, in each round")
    args = ap.parse_args(argv)
    from instances.bundled import trace_path

    path = Path(args.trace) if Path(args.trace).exists() else Path(trace_path(args.trace))
    trace = str(path.resolve()) if Path(args.trace).exists() else args.trace
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    tree = args.baseline.resolve() if args.baseline is not None else None
    if tree is not None and not (tree / "sim" / "cli").is_dir():
        raise SystemExit(f"--baseline {args.baseline}: not a schedsearch source tree")
    print(f"{provenance.stamp()}; {path}; load average before {provenance.load_average()}"
          + (f"; baseline {tree} at commit {tree_commit(tree)}" if tree is not None else ""))
    best: dict[str, list[float]] = {}
    jobs = {}
    for r in range(args.rounds):
        times = {"plain split": plain_split(path)}
        times["read_swf, fast path"], jobs["fast"] = reader(path, fast=True)
        times["read_swf, reference only"], jobs["reference"] = reader(path, fast=False)
        for e in engines:
            if tree is not None:
                times[f"simulate --policy easy --engine {e} (process, baseline)"] = \
                    whole_process(trace, e, tree)
            times[f"simulate --policy easy --engine {e} (process)"] = whole_process(trace, e)
        for k, v in times.items():  # the minimum of each, wall and CPU apart
            best[k] = [min(b, x) for b, x in zip(best.get(k, v), v, strict=True)]
        print(f"round {r + 1}: " + ", ".join(f"{k} {w:.2f} s ({c:.2f} s CPU)"
                                             for k, (w, c) in times.items()), flush=True)
    if jobs["fast"] != jobs["reference"]:
        raise SystemExit(f"the two readers kept {jobs['fast']} and {jobs['reference']} jobs")
    wall0, cpu0 = best["plain split"]
    rows = [(k, f"{w:.2f}", f"{w / wall0:.2f}", f"{c:.2f}", f"{c / cpu0:.2f}")
            for k, (w, c) in best.items()]
    print("\n".join(markdown_table(("measurement (min of rounds)", "wall [s]", "x plain split",
                                    "CPU [s]", "x plain split (CPU)"), rows)))
    print(f"{jobs['fast']} jobs kept; load average after {provenance.load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
