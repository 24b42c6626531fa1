"""The optimal gang schedule simulated on the node model beside CSM (spec 3.8 M7).

``python -m sim.experiments.gine.gang_exact [--quick]``

One CSM experiment point as a **snapshot**: the workload of the mem_load 1.0 point of
E-4.7..4.9 (pdt 0.5, mfreq 100 ms, tc and memory scaled by 0.01, n = 32, MNOD 2) drawn
until ``JOBS`` = 30 distributed jobs (with the local tasks drawn among them), every
arrival moved to time 0 so that the batch is the snapshot M7 optimises. The jobs are
mapped by the uniform-memory-load mapping at time 0 (their node sets come from the
first simulation and are checked to be the same in every later one). Per seed it runs:

- ``rr``, ``pred`` and ``csm`` on the paged node model (M pages per node);
- ``gang-ff``: ``heuristics.gang.Gang`` with its online first-fit rows;
- ``gang-opt``: the same policy with the rows of the proved-optimal ``gang_schedule``
  (objective ``"rows"``, CP-SAT, 60 s), and ``gang-opt-w`` with the optimal
  ``"weighted"`` rows (weight = the job's tc in s, at least 1; the simulated matrix
  cycles its rows, so only their composition matters there);
- both gang runs with 16 M pages per node (nothing pages: the "no paging" reference),
  slot = quantum = 100 ms, one local slot per round.

Every run is validated by the independent log checker (``sim.timeshare.check``). The full
configuration (3 seeds) writes ``sim/experiments/gine/results/gang_exact.md``;
``--quick`` (1 seed) writes ``results/csm-quick/gang_exact.md`` and says it is partial.
Times in the simulator are microseconds.

``--memory resident`` takes the CSM paper's eq. (4) reading (every task mapped to a node
is resident, ``memory = "resident"`` of ``sim.problems.gang_schedule``): the rows are
solved under it (INFEASIBLE when a node's tasks exceed M, then no optimal rows exist and
the gang-opt runs are left out), and the gang runs use the M pages per node of the paged
node model, which keeps every task's pages resident (so they page), instead of 16 M. It
writes ``gang_exact_resident.{md,json}``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from heuristics.coscheduling import by_name
from heuristics.gang import Gang
from instances.atomic import write_atomic
from models import gang_schedule as gm
from sim.argparser import Parser
from sim.experiments.common import PARTIAL_DIR, command, commit, markdown_table, mean_ci
from sim.problems import gang_schedule as gs
from sim.timeshare.check import check
from sim.timeshare.cluster import Cluster
from sim.timeshare.csm import schedule_arrivals, task_records
from sim.timeshare.metrics import summarize
from sim.timeshare.workload import CSMConfig, generate

FULL_DIR = Path(__file__).resolve().parent / "results"
QUICK_DIR = PARTIAL_DIR / "csm-quick"
JOBS = 30
SEEDS = 3
METRICS = ("mean_pg_fault", "correlation", "slowdown_small", "slowdown_large",
           "slowdown_local")
POLICIES = ("rr", "pred", "csm", "gang-ff", "gang-opt", "gang-opt-w")


def config() -> CSMConfig:
    """The E-4.7..4.9 point (mem_load 1.0, pdt 0.5, mfreq 100 ms), scaled as the full
    configuration of ``sim.experiments.gine.figs``; distributed jobs counted only."""
    return CSMConfig(n_jobs=JOBS, tc_scale=0.01, mem_scale=0.01, mem_load=1.0, pdt=0.5,
                     mfreq_ms=100.0, count_locals=False)


def simulate(cfg: CSMConfig, seed: int, policy: Any, *, mem_pages: int,
             setup: Any = None) -> tuple[Cluster, dict[str, float]]:
    """One run of the snapshot (all arrivals at time 0); returns the cluster and metrics."""
    arrivals = [dataclasses.replace(a, time_us=0) for a in generate(cfg, seed)]
    cl = Cluster(cfg.n_nodes, policy, latency_us=cfg.latency_us, mem_pages=mem_pages,
                 fault_latency_us=int(round(cfg.fault_ms * 1000)), seed=seed, log=True)
    if setup is not None:
        setup(cl)
    kinds: dict[int, str] = {}
    schedule_arrivals(cl, cfg, arrivals, kinds)
    cl.run()
    check(cl.log.records)
    return cl, summarize(task_records(cl, kinds), cfg.n_nodes, mem_pages)


def node_sets(cl: Cluster) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """job id -> (nodes, pages per task) as mapped in a run."""
    out = {}
    for j, tids in sorted(cl.jobs.items()):
        ts = [cl.tasks[t] for t in tids]
        out[j] = (tuple(t.node for t in ts), tuple(t.vir_mem for t in ts))
    return out


def problem_of(sets: dict[int, tuple[tuple[int, ...], tuple[int, ...]]], cfg: CSMConfig,
               weights: dict[int, float], objective: str,
               memory: str = "row") -> gs.GangProblem:
    jobs = tuple(gs.GangJob(f"J{j}", nodes, mems, weights[j])
                 for j, (nodes, mems) in sets.items())
    return gs.GangProblem(cfg.n_nodes, cfg.pages_scaled, jobs, (0,) * cfg.n_nodes,
                          len(jobs), objective, memory)


def first_fit_rows(sets: dict[int, tuple[tuple[int, ...], tuple[int, ...]]]) -> int:
    """Rows of the online first fit in job order (``Gang``'s rule, all jobs present)."""
    used: list[set[int]] = []
    for nodes, _ in sets.values():
        for u in used:
            if not u & set(nodes):
                u |= set(nodes)
                break
        else:
            used.append(set(nodes))
    return len(used)


def run(seeds: int, out: Path, full: bool, time_limit: float, memory: str = "row") -> str:
    cfg = config()
    rev = commit()  # the code that runs, before anything else is edited
    stem = "gang_exact" if memory == "row" else f"gang_exact_{memory}"
    gang_pages = 16 * cfg.pages_scaled if memory == "row" else cfg.pages_scaled
    slot = int(cfg.quantum_ms * 1000)
    vals: dict[str, dict[str, list[float]]] = {p: {m: [] for m in METRICS} for p in POLICIES}
    rows_info = []
    for seed in range(seeds):
        t0 = time.perf_counter()
        cl, met = simulate(cfg, seed, by_name("csm", quantum_us=slot, mnod=2),
                           mem_pages=cfg.pages_scaled)
        sets = node_sets(cl)
        weights = {j: max(1.0, round(cl.tasks[tids[0]].work / 1e6)) for j, tids in
                   cl.jobs.items()}
        for m in METRICS:
            vals["csm"][m].append(met[m])
        for pol in ("rr", "pred"):
            c2, met = simulate(cfg, seed, by_name(pol, quantum_us=slot, mnod=2)
                               if pol == "pred" else by_name(pol, quantum_us=slot),
                               mem_pages=cfg.pages_scaled)
            assert node_sets(c2) == sets, "mapping differs between runs"
            for m in METRICS:
                vals[pol][m].append(met[m])
        res = {}
        for obj in ("rows", "weighted"):
            p = problem_of(sets, cfg, weights, obj, memory)
            res[obj] = gm.solve_cpsat(p, time_limit=time_limit)
        assign = {o: {int(name[1:]): r for r, row in enumerate(res[o].solution)
                      for name in row} for o in res if res[o].solution is not None}
        for pol, o in (("gang-ff", None), ("gang-opt", "rows"), ("gang-opt-w", "weighted")):
            if o is not None and o not in assign:
                continue  # no feasible rows under this reading
            g = Gang(slot_us=slot, assignment=None if o is None else assign[o])
            c2, met = simulate(cfg, seed, g, mem_pages=gang_pages, setup=g.start)
            assert node_sets(c2) == sets, "mapping differs between runs"
            for m in METRICS:
                vals[pol][m].append(met[m])
        rows_info.append((seed, len(sets), first_fit_rows(sets), res["rows"],
                          res["weighted"], time.perf_counter() - t0))
        r = res["rows"]
        print(f"  seed {seed}: {len(sets)} jobs, first fit {first_fit_rows(sets)} rows, "
              f"optimal {r.objective} ({r.status.value}, {r.runtime:.2f} s); "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    write_atomic(out / f"{stem}.json", json.dumps(
        {"memory": memory, "command": command(), "commit": rev, "values": vals,
         "rows": [{"seed": sd, "jobs": n, "first_fit": ff, "rows_status": r.status.value,
                   "rows_optimum": r.objective, "weighted_status": w.status.value,
                   "weighted_optimum": w.objective, "note": r.note}
                  for sd, n, ff, r, w, _ in rows_info]}, indent=1))
    tag = "full configuration" if full else "PARTIAL quick run (not the full config)"
    reading = ("" if memory == "row" else
               " Memory reading 'resident' (eq. 4: every task mapped to a node is resident): "
               "rows solved under it; gang runs on M pages (the paged node model), not 16 M.")
    md = ["# Optimal gang schedule (spec 3.8 M7) simulated beside CSM\n",
          f"{tag}: {seeds} seeds; one snapshot of the E-4.7..4.9 point (mem_load 1.0, pdt "
          f"0.5, mfreq 100 ms, MNOD 2, tc and memory scaled by 0.01, n = 32): the first "
          f"{JOBS} distributed jobs of each seed's arrival stream and the local tasks drawn "
          f"among them, all released at time 0 and mapped by the uniform-memory-load rule. "
          f"rr/pred/csm on M = {cfg.pages_scaled} pages per node; gang runs on 16 M (no "
          f"paging), slot 100 ms plus one local slot per round. Every run passed the "
          f"independent log checker. Mean over seeds +- 95% CI half-width. Command: "
          f"`{command()}`, commit {rev}.{reading}\n",
          *markdown_table(
              ["seed", "jobs", "rows first fit", "rows optimal (CP-SAT)", "status", "solve s",
               "weighted optimum (w = tc in s)", "status"],
              [[seed, n, ff, "-" if r.objective is None else f"{r.objective:.0f}",
                r.status.value, f"{r.runtime:.2f}",
                "-" if w.objective is None else f"{w.objective:.0f}", w.status.value]
               for seed, n, ff, r, w, _ in rows_info])]
    rows = []
    for p in POLICIES:
        if not vals[p][METRICS[0]]:
            rows.append([p] + ["no feasible rows"] * len(METRICS))
            continue
        cells = []
        for m in METRICS:
            mu, h = mean_ci(vals[p][m])
            cells.append(f"{mu:.2f}" + (f" +- {h:.2f}" if h == h else ""))
        rows.append([p, *cells])
    md += ["", *markdown_table(["policy", *METRICS], rows)]
    md.append("\nThe paper has no gang run. gang-opt uses the proved-minimal number of rows, "
              "gang-opt-w the rows minimising the weighted completion rounds; the simulated "
              "matrix cycles its rows, so only the number and the composition of the rows "
              "matter there (an emptied row leaves the cycle).\n")
    text = "\n".join(md)
    write_atomic(out / f"{stem}.md", text)
    return text


#: seconds per solve of the full configuration (the committed ``gang_exact*`` files)
TIME_LIMIT = 60.0


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 seed, writes results/csm-quick")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT,
                    help="per solve, seconds (another than the default is a partial run)")
    ap.add_argument("--memory", choices=gs.MEMORY, default="row",
                    help="which tasks are resident on a node (row: the running row's; "
                         "resident: every task, the paper's eq. 4)")
    a = ap.parse_args(argv)
    full = not a.quick and a.time_limit == TIME_LIMIT  # the committed files' limit
    out = FULL_DIR if full else QUICK_DIR
    out.mkdir(parents=True, exist_ok=True)
    print(run(1 if a.quick else SEEDS, out, full, a.time_limit, a.memory))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
