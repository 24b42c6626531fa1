"""The slack scheduler compiled against the Python one, beside conservative.

One run prints, side by side, the simulation CPU time (``time.process_time``; the trace
read and the kernels compiled or loaded from numba's cache beforehand) and the CPU
microseconds per job on the KTH-SP2 year (``load_workload("KTH-SP2")``, as ``schedsearch
simulate KTH-SP2``) of

- conservative backfilling on the Python engine and on the compiled engine;
- the slack scheduler (``SlackPolicy``, default settings) for every compress order, on the
  Python engine (``heuristics.slack_fast.search``), on the Python engine with the compiled
  slot search (``heuristics.slack_kernel``; the scheduler's ``Inserter`` made with
  ``compiled=True``) and with ``engine="compiled"`` (the whole simulation compiled,
  ``sim.batch.fast.slack_loop``), whose start arrays are checked equal to the Python run's,
  byte for byte.

Each configuration runs ``--repeat`` times, all of them interleaved round by round, and
the table gives the minimum CPU time (the machine is shared: the minimum is the least
disturbed run). 'x cons' is the CPU time over conservative's, on the Python engine and on
the compiled engine.

Run: ``python -m sim.experiments.engine.slack_bench [--repeat 2] [--orders AST ...]
[--out PATH]``. Writes ``sim/experiments/engine/results/slack_bench.md`` (or ``--out``).
Times in seconds.
"""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path

from sim.argparser import Parser
from sim.experiments import common as provenance

RESULTS = Path(__file__).parent / "results"


def _cpu(fn, *args, **kwargs):
    """CPU seconds of ``fn(*args, **kwargs)``, and its result."""
    t = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - t, out


def _run(w, policy: str, engine: str):
    """One simulation; engine ``"search"`` is the Python engine with the compiled search."""
    from heuristics.slack import Inserter, SlackPolicy
    from sim.batch.machine import simulate
    from sim.batch.slack_scheduler import SlackScheduler
    from sim.registry import make_policy

    if policy == "conservative":
        return simulate(w, make_policy("conservative"), engine=engine)
    if engine == "search":
        return simulate(w, SlackScheduler(Inserter(policy, compiled=True),
                                          name=f"slack-{policy}"))
    return simulate(w, SlackPolicy(order=policy), engine=engine)


def main(argv: list[str] | None = None) -> int:
    from heuristics.slack import ORDERS
    from sim.batch.runner import load_workload

    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--orders", nargs="+", default=list(ORDERS), choices=ORDERS)
    ap.add_argument("--out", type=Path, default=RESULTS / "slack_bench.md")
    args = ap.parse_args(argv)
    w = load_workload("KTH-SP2")
    t = time.process_time()
    head = type(w)(w.jobs[:60], w.capacity, "warm-up")
    for pol in ("conservative", *args.orders):
        _run(head, pol, "compiled")
        _run(head, pol, "python" if pol == "conservative" else "search")
    load_s = time.process_time() - t
    print(f"kernels loaded (or compiled) in {load_s:.2f} s CPU", flush=True)
    configs = [("conservative", "python"), ("conservative", "compiled")]
    configs += [(o, e) for o in args.orders for e in ("python", "search", "compiled")]
    best: dict[tuple[str, str], float] = {}
    starts = {}
    for r in range(args.repeat):
        for pol, eng in configs:
            c, s = _cpu(_run, w, pol, eng)
            best[(pol, eng)] = min(best.get((pol, eng), c), c)
            starts[(pol, eng)] = s.start
            print(f"round {r + 1}: {pol:12s} {eng:8s} {c:7.2f} s CPU", flush=True)
    n = len(w)
    cons, cons_c = best[("conservative", "python")], best[("conservative", "compiled")]
    rows = []
    for pol in ("conservative", *args.orders):
        py, co = best[(pol, "python")], best[(pol, "compiled")]
        se = best.get((pol, "search"))
        same = all(starts[(pol, e)].tobytes() == starts[(pol, "python")].tobytes()
                   for e in ("search", "compiled") if (pol, e) in starts)
        rows.append((pol, py, se, co, same))
        print(f"{pol:12s} python {py:7.2f} s  search {'-' if se is None else f'{se:.2f}'} s  "
              f"compiled {co:7.2f} s ({co / n * 1e6:6.1f} us/job, {co / cons:4.2f}x cons, "
              f"{co / cons_c:4.1f}x compiled cons)  same starts {same}", flush=True)
    load = provenance.load_average()
    cmd = provenance.command(None if argv is None else
                             ["python", "-m", "sim.experiments.engine.slack_bench", *argv])
    lines = [
        "# The slack scheduler compiled against the Python one, beside conservative",
        "",
        f"`{cmd}` at commit {provenance.commit()}, Python "
        f"{platform.python_version()}, {platform.machine()}; KTH-SP2 year ({n} jobs, "
        f"{w.procs} processors), jobs killed at their request; simulation CPU time (process "
        f"time), minimum of {args.repeat} interleaved rounds; kernels loaded from numba's "
        f"cache in {load_s:.2f} s CPU before timing; load average at the end (1/5/15 min) "
        f"{load}. 'python': the Python engine; 'search': the Python engine with the "
        "compiled slot search; 'compiled': `engine=\"compiled\"` (for the slack scheduler "
        "the whole simulation compiled); 'x cons' is the compiled run's CPU time over "
        "conservative's on the Python engine and on the compiled engine; 'same starts': "
        "every run's start array equals the Python run's byte for byte.",
        "",
        "| policy | python [s] | python [us/job] | search [s] | compiled [s] "
        "| compiled [us/job] | compiled x cons (python) | compiled x cons (compiled) "
        "| python / compiled | same starts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for pol, py, se, co, same in rows:
        lines.append(f"| {pol if pol == 'conservative' else 'slack-' + pol} | {py:.2f} | "
                     f"{py / n * 1e6:.0f} | {'-' if se is None else f'{se:.2f}'} | "
                     f"{co:.3f} | {co / n * 1e6:.1f} | {co / cons:.2f} | {co / cons_c:.1f} | "
                     f"{py / co:.0f} | {same} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    provenance.write_atomic(args.out, "\n".join(lines) + "\n")
    print(f"written to {args.out}")
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
