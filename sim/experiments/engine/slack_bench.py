"""The slack scheduler's compiled search against the Python one, beside conservative.

One run prints, side by side, the simulation CPU time (``time.process_time``; the trace
read and the kernels compiled or loaded from numba's cache beforehand) and the CPU
microseconds per job on the KTH-SP2 year (``load_workload("KTH-SP2")``, as ``schedsearch
simulate KTH-SP2``) of

- conservative backfilling on the Python engine and on the compiled engine;
- the slack scheduler (``SlackPolicy``, default settings) for every compress order, on the
  Python engine (``heuristics.slack_fast.search``) and with ``engine="compiled"``
  (``heuristics.slack_kernel``), whose start array is checked equal to the Python run's,
  byte for byte.

Each configuration runs ``--repeat`` times, all of them interleaved round by round, and
the table gives the minimum CPU time (the machine is shared: the minimum is the least
disturbed run). 'x cons' is the CPU time over the Python engine's conservative.

Run: ``python -m sim.experiments.engine.slack_bench [--repeat 2] [--orders AST ...]
[--out PATH]``. Writes ``sim/experiments/engine/results/slack_bench.md`` (or ``--out``).
Times in seconds.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

from sim.experiments import common as provenance

RESULTS = Path(__file__).parent / "results"


def _cpu(fn, *args, **kwargs):
    """CPU seconds of ``fn(*args, **kwargs)``, and its result."""
    t = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - t, out


def _run(w, policy: str, engine: str):
    from heuristics.slack import SlackPolicy
    from sim.batch.machine import simulate
    from sim.registry import make_policy

    if policy == "conservative":
        return simulate(w, make_policy("conservative"), engine=engine)
    return simulate(w, SlackPolicy(order=policy), engine=engine)


def main(argv: list[str] | None = None) -> int:
    from heuristics.slack import ORDERS
    from sim.batch.runner import load_workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--orders", nargs="+", default=list(ORDERS), choices=ORDERS)
    ap.add_argument("--out", type=Path, default=RESULTS / "slack_bench.md")
    args = ap.parse_args(argv)
    w = load_workload("KTH-SP2")
    t = time.process_time()
    head = type(w)(w.jobs[:60], w.capacity, "warm-up")
    for pol in ("conservative", *args.orders):
        _run(head, pol, "compiled")
    load_s = time.process_time() - t
    print(f"kernels loaded (or compiled) in {load_s:.2f} s CPU", flush=True)
    configs = [("conservative", "python"), ("conservative", "compiled")]
    configs += [(o, e) for o in args.orders for e in ("python", "compiled")]
    best: dict[tuple[str, str], float] = {}
    starts = {}
    for r in range(args.repeat):
        for pol, eng in configs:
            c, s = _cpu(_run, w, pol, eng)
            best[(pol, eng)] = min(best.get((pol, eng), c), c)
            starts[(pol, eng)] = s.start
            print(f"round {r + 1}: {pol:12s} {eng:8s} {c:7.2f} s CPU", flush=True)
    n = len(w)
    cons = best[("conservative", "python")]
    rows = []
    for pol in ("conservative", *args.orders):
        py, co = best[(pol, "python")], best[(pol, "compiled")]
        same = starts[(pol, "python")].tobytes() == starts[(pol, "compiled")].tobytes()
        rows.append((pol, py, co, same))
        print(f"{pol:12s} python {py:7.2f} s ({py / n * 1e6:6.0f} us/job, {py / cons:4.1f}x "
              f"cons)  compiled {co:7.2f} s ({co / n * 1e6:6.0f} us/job, {co / cons:4.1f}x "
              f"cons)  same starts {same}", flush=True)
    load = provenance.load_average()
    cmd = provenance.command(None if argv is None else
                             ["python", "-m", "sim.experiments.engine.slack_bench", *argv])
    lines = [
        "# The slack scheduler's compiled search against the Python one, beside conservative",
        "",
        f"`{cmd}` at commit {provenance.commit()}, Python "
        f"{platform.python_version()}, {platform.machine()}; KTH-SP2 year ({n} jobs, "
        f"{w.procs} processors), jobs killed at their request; simulation CPU time (process "
        f"time), minimum of {args.repeat} interleaved rounds; kernels loaded from numba's "
        f"cache in {load_s:.2f} s CPU before timing; load average at the end (1/5/15 min) "
        f"{load}. 'x cons' is the CPU time over conservative's on the Python engine; "
        "'same starts': the compiled run's start array equals the Python run's byte for byte.",
        "",
        "| policy | python [s] | python [us/job] | python x cons | compiled [s] "
        "| compiled [us/job] | compiled x cons | python / compiled | same starts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for pol, py, co, same in rows:
        lines.append(f"| {pol if pol == 'conservative' else 'slack-' + pol} | {py:.2f} | "
                     f"{py / n * 1e6:.0f} | {py / cons:.1f} | {co:.2f} | {co / n * 1e6:.0f} | "
                     f"{co / cons:.1f} | {py / co:.1f} | {same} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    provenance.write_atomic(args.out, "\n".join(lines) + "\n")
    print(f"written to {args.out}")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
