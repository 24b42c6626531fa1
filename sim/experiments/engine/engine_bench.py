"""The compiled batch engine against the Python engine and a minimal compiled EASY.

One run prints, side by side, the simulation CPU time (``time.process_time``, the trace read
beforehand and the kernels compiled or loaded from numba's cache beforehand) of

- ``ref``: :func:`reference_easy` below, the smallest compiled EASY we could write (a heap
  of job ends, the running jobs sorted by estimated end, the queue as an integer array, the
  shadow time and the extra processors by arithmetic); its start array is checked equal to
  the Python engine's;
- ``compiled``: ``simulate(..., engine="compiled")`` (:mod:`sim.batch.fast`);
- ``python``: ``simulate(...)`` (the reference engine), whose start array every compiled
  run is checked against;

for EASY and conservative on the trace (K = 1), and FF-, BL- and BB-EASY and conservative on
the trace's jobs with K = 4 resources (:func:`with_resources`). Cases: lublin_256 and
SDSC-BLUE, jobs killed at their request. Each engine runs ``--repeat`` times, the engines
interleaved round by round, and the table gives the minimum CPU time per engine (the
machine is shared: the minimum is the least disturbed run). The ratios are to ``ref``'s
EASY on the same trace.

Run: ``python -m sim.experiments.engine.engine_bench [--repeat 3] [--traces lublin_256
SDSC-BLUE] [--python easy|all|none] [--cases conservative:1,conservative:4]``; ``--python
easy`` runs the Python engine only for EASY (its conservative and K = 4 runs on SDSC-BLUE
take minutes); without it every compiled start array is still checked against the Python
engine. ``--cases`` times only the listed policy:K cases. The full configuration (the
defaults) writes ``sim/experiments/engine/results/engine_bench.md``; any other run is
partial and writes ``results/engine_bench.md`` at the repository top, marked partial.
Times in seconds.
"""

from __future__ import annotations

import dataclasses
import platform
import sys
import time
from pathlib import Path

import numpy as np

from instances.atomic import write_atomic
from instances.job import Workload
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR

try:
    from numba import njit
except ImportError:  # main refuses in one line; the module still imports
    njit = None

RESULTS = Path(__file__).parent / "results"
#: the (policy, K) cases of the full configuration
CASES = (("easy", 1), ("conservative", 1), ("easy", 4), ("easy-bl", 4), ("easy-bb", 4),
         ("conservative", 4))
TRACES = ("lublin_256", "SDSC-BLUE")


def _reference_easy(submit, runtime, requested, procs, capacity):
    """EASY on one resource, jobs killed at their request; returns the start times (s)."""
    n = submit.shape[0]
    start = np.full(n, -1, np.int64)
    heap_t = np.empty(n, np.int64)  # actual ends (min-heap), with the job
    heap_j = np.empty(n, np.int64)
    hn = 0
    run_e = np.empty(n, np.int64)  # running jobs sorted by estimated end
    run_j = np.empty(n, np.int64)
    rn = 0
    queue = np.empty(n, np.int64)
    qh = qt = 0
    free = capacity
    na = 0
    while na < n or hn > 0:
        now = submit[na] if hn == 0 or (na < n and submit[na] < heap_t[0]) else heap_t[0]
        while hn > 0 and heap_t[0] == now:  # pop an end
            j = heap_j[0]
            free += procs[j]
            hn -= 1
            t, jj, i = heap_t[hn], heap_j[hn], 0
            while 2 * i + 1 < hn:
                c = 2 * i + 1
                if c + 1 < hn and heap_t[c + 1] < heap_t[c]:
                    c += 1
                if heap_t[c] >= t:
                    break
                heap_t[i], heap_j[i], i = heap_t[c], heap_j[c], c
            heap_t[i], heap_j[i] = t, jj
            x = 0
            while run_j[x] != j:
                x += 1
            run_e[x:rn - 1], run_j[x:rn - 1] = run_e[x + 1:rn], run_j[x + 1:rn]
            rn -= 1
        while na < n and submit[na] == now:
            queue[qt] = na
            qt += 1
            na += 1
        shadow = extra = -1
        x = qh
        while x < qt:
            j = queue[x]
            if qh == x and procs[j] <= free:  # the head starts
                qh += 1
            elif shadow < 0:  # the head waits: its shadow time and the extra processors
                avail, y = free, 0
                while avail < procs[j] or (y < rn and run_e[y] == run_e[y - 1]):
                    avail += procs[run_j[y]]
                    y += 1
                shadow, extra = run_e[y - 1], avail - procs[j]
                x += 1
                continue
            elif procs[j] > free or (now + requested[j] > shadow and procs[j] > extra):
                x += 1
                continue
            elif now + requested[j] > shadow:
                extra -= procs[j]
            start[j] = now  # start j: its end on the heap, its estimate in the sorted list
            free -= procs[j]
            e = now + min(runtime[j], requested[j])
            i = hn
            hn += 1
            while i > 0 and heap_t[(i - 1) >> 1] > e:
                heap_t[i], heap_j[i], i = heap_t[(i - 1) >> 1], heap_j[(i - 1) >> 1], (i - 1) >> 1
            heap_t[i], heap_j[i] = e, j
            est = now + requested[j]
            y = rn
            while y > 0 and run_e[y - 1] > est:
                run_e[y], run_j[y] = run_e[y - 1], run_j[y - 1]
                y -= 1
            run_e[y], run_j[y] = est, j
            rn += 1
            x += 1
        w = qh
        for x in range(qh, qt):
            if start[queue[x]] < 0:
                queue[w] = queue[x]
                w += 1
        qt = w
    return start


#: the compiled reference (None without numba)
reference_easy = None if njit is None else njit(cache=True)(_reference_easy)


def with_resources(w: Workload, K: int, *, seed: int = 1) -> Workload:
    """``w``'s jobs with K - 1 more resources of the processors' capacity, each job needing
    ``round(processors * u)`` of each, ``u`` uniform in [0.5, 1.5] (clipped to the
    capacity), as ``batch_bench.kworkload`` does for synthetic jobs."""
    cap = w.capacity[0]
    rng = np.random.default_rng(seed + 7919)
    u = rng.uniform(0.5, 1.5, (len(w.jobs), K - 1))
    p = np.array([j.demand[0] for j in w.jobs])
    other = np.clip(np.rint(p[:, None] * u), 0, cap).astype(int).tolist()
    jobs = tuple(dataclasses.replace(j, demand=(j.demand[0], *o))
                 for j, o in zip(w.jobs, other, strict=True))
    return Workload(jobs, (cap,) * K, f"{w.name} K={K}")


def _cpu(fn, *args, **kwargs):
    """CPU seconds of ``fn(*args, **kwargs)``, and its result."""
    t = time.process_time()
    out = fn(*args, **kwargs)
    return time.process_time() - t, out


def _simulate(w: Workload, policy: str, engine: str):
    from sim.batch.machine import simulate
    from sim.registry import make_policy

    name, _, sel = policy.partition("-")
    return simulate(w, make_policy(name, **({"select": sel} if sel else {})), engine=engine)


def main(argv: list[str] | None = None) -> int:
    from instances.bundled import load_trace

    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--traces", nargs="+", default=list(TRACES))
    ap.add_argument("--python", choices=("all", "easy", "none"), default="all")
    ap.add_argument("--cases", default=",".join(f"{p}:{k}" for p, k in CASES),
                    help="comma-separated policy:K cases to time (a partial run)")
    args = ap.parse_args(argv)
    if reference_easy is None:
        ap.error("numba is not installed (pip install 'schedsearch[fast]'): this bench times "
                 "the compiled engine")
    known = {f"{p}:{k}": (p, k) for p, k in CASES}
    wanted = args.cases.split(",")
    bad = [c for c in wanted if c not in known]
    if bad:
        ap.error(f"--cases: unknown case {bad[0]!r} (one of {', '.join(known)})")
    cases = [known[c] for c in wanted]
    partial = (args.repeat != 3 or tuple(args.traces) != TRACES or args.python != "all"
               or tuple(cases) != CASES)
    t = time.process_time()
    tiny = load_trace("lublin_256")
    tiny = Workload(tiny.jobs[:50], tiny.capacity)
    _simulate(tiny, "easy", "compiled")
    a = [np.array([1], np.int64)] * 4
    reference_easy(*a, 1)
    load_s = time.process_time() - t
    print(f"kernels loaded (or compiled) in {load_s:.2f} s CPU", flush=True)
    rows = []
    for trace in args.traces:
        w1 = load_trace(trace)
        w4 = with_resources(w1, 4)
        sub, run, req, procs = (np.array([getattr(j, f) for j in w1.jobs], np.int64)
                                for f in ("submit", "runtime", "requested", "procs"))
        best = {}
        starts = {}
        for r in range(args.repeat):
            c, st = _cpu(reference_easy, sub, run, req, procs, w1.capacity[0])
            best["ref"] = min(best.get("ref", c), c)
            starts["ref"] = st
            for pol, K in cases:
                w = w1 if K == 1 else w4
                timed = args.python == "all" or (args.python == "easy" and pol == "easy"
                                                 and K == 1)
                # the Python engine every round when timed, else once for the check only
                engines = ["compiled"] + (["python"] if timed or r == 0 else [])
                for eng in engines:
                    c, s = _cpu(_simulate, w, pol, eng)
                    key = (pol, K, eng if eng == "compiled" or timed else "python-check")
                    best[key] = min(best.get(key, c), c)
                    starts[key] = s.start
                print(f"{trace} round {r + 1}: {pol} K={K} done", flush=True)
        for pol, K in cases:
            py = starts.get((pol, K, "python"), starts.get((pol, K, "python-check")))
            same = py is not None and starts[(pol, K, "compiled")].tobytes() == py.tobytes()
            if pol == "easy" and K == 1 and py is not None:
                assert starts["ref"].tobytes() == py.tobytes(), "reference EASY differs"
            rows.append({"trace": trace, "jobs": len(w1), "policy": pol, "K": K,
                         "ref_easy": best["ref"], "compiled": best[(pol, K, "compiled")],
                         "python": best.get((pol, K, "python")), "same": same})
            r_ = rows[-1]
            py_s = f"{r_['python']:8.2f}" if r_["python"] is not None else "       -"
            print(f"{trace:11s} {pol:13s} K={K}  ref EASY {r_['ref_easy']:7.3f} s  compiled "
                  f"{r_['compiled']:7.3f} s ({r_['compiled'] / r_['ref_easy']:5.1f}x ref)  "
                  f"python {py_s} s  same starts {same}", flush=True)
    cmd = "python -m sim.experiments.engine.engine_bench " + " ".join(
        argv if argv is not None else sys.argv[1:])
    lines = [
        "# Compiled batch engine against the Python engine and a minimal compiled EASY",
        "",
        f"`{cmd}` at commit {provenance.commit()}"
        + (" (PARTIAL run, not the committed configuration)" if partial else "")
        + f", Python {platform.python_version()}, "
        f"{platform.machine()}; simulation CPU time (process time), minimum of "
        f"{args.repeat} interleaved rounds; jobs killed at their request; K = 4: the "
        "trace's jobs with 3 more resources (`with_resources`); kernels compiled or loaded "
        f"from numba's cache in {load_s:.2f} s CPU before timing; load average at the end "
        f"(1/5/15 min) {provenance.load_average()}. 'x ref' is the CPU time over the "
        "reference EASY's on "
        "the same trace; 'same starts': the compiled start array equals the Python "
        "engine's byte for byte (the reference EASY's is checked too).",
        "",
        "| trace | jobs | policy | K | ref EASY [s] | compiled [s] | x ref | python [s] "
        "| python / compiled | same starts |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r_ in rows:
        py = r_["python"]
        lines.append(
            f"| {r_['trace']} | {r_['jobs']} | {r_['policy']} | {r_['K']} | "
            f"{r_['ref_easy']:.3f} | {r_['compiled']:.3f} | "
            f"{r_['compiled'] / r_['ref_easy']:.1f} | "
            + (f"{py:.2f} | {py / r_['compiled']:.0f} |" if py is not None else "- | - |")
            + f" {r_['same']} |")
    out = PARTIAL_DIR if partial else RESULTS
    out.mkdir(exist_ok=True)
    write_atomic(out / "engine_bench.md", "\n".join(lines) + "\n")
    print(f"written to {out / 'engine_bench.md'}" + (" (partial run)" if partial else ""))
    return 0 if all(r_["same"] for r_ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
