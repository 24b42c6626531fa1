"""E-4.1 (the paper's Fig. 2): three nodes, two message-passing jobs and a local task each.

    python -m sim.experiments.gine.illustration [--out DIR]

The paper (section 4.1): a cluster of three nodes with M units of memory; J1 and J2 have
one task per node (intensive message passing), every node also runs one local task L,
and the memory requirements ``m_1 < m_2`` (and ``m_L``) do not fit in M together.
Without memory control (Fig. 2 (a)) L finishes at 300 units, J1 at 450 and J2 at 500;
with priority to the distributed task of lowest fault rate (Fig. 2 (b)) J1 finishes at
350 and J2 earlier than 500 (spec target 3.7.5 adds: L unchanged). No other parameter is
given, so the instance is chosen (:class:`Instance`). "No memory control" is PRED (CSM
without its memory mode, the comparison the verdict uses) and RR (no coscheduling
either); "memory control" is CSM.

Writes ``fig2.md`` and ``fig2.json`` to ``--out`` (default the study's ``results/``): the
finishing times per policy (s) and each task's change under CSM against PRED and RR (%).
One deterministic run per policy (seed 0), about a second of CPU in all.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from heuristics.coscheduling import by_name
from sim.argparser import Parser
from sim.experiments.common import command, commit, markdown_table, write_atomic
from sim.timeshare.check import check
from sim.timeshare.cluster import Cluster
from sim.timeshare.csm import initial_resident, local_program
from sim.timeshare.memory import WorkingSet
from sim.timeshare.ops import Compute, Recv, Send

__all__ = ["INSTANCE", "POLICIES", "TASKS", "Instance", "changes", "finishing_times",
           "main", "report"]

MS = 1000
"""Microseconds per millisecond (the simulator's clock is in µs)."""
S = 1_000_000
"""Microseconds per second."""
FULL_DIR = Path(__file__).resolve().parent / "results"
POLICIES = ("rr", "pred", "csm")
"""The policies run: RR and PRED (no memory control), CSM (memory control)."""
TASKS = ("J1", "J2", "L")
"""The tasks of the figure, in the order of the tables."""
PAPER = {"J1": (450, 350), "J2": (500, None), "L": (300, 300)}
"""The paper's finishing times (units) without and with memory control (None: "earlier
than 500", no number)."""


@dataclass(frozen=True)
class Instance:
    """The chosen Fig. 2 instance (the paper gives none of these numbers).

    Attributes
    ----------
    nodes : int
        Nodes (the paper's three).
    mem_pages : int
        Main memory M per node, pages.
    m1_pages, m2_pages, mL_pages : int
        Address space of a J1, a J2 and a local task, pages (``m_1 < m_2``; each job's
        task plus L exceeds M). The whole address space is the working set.
    tc_local_s, tc_job_s : float
        CPU time of L and of each job task, s.
    msg_every_ms : int
        CPU time between two ring messages of a job task, ms.
    quantum_ms, fault_ms : int
        Scheduling quantum and page-fault latency, ms.
    mnod, mnol : int
        Algorithm 1's MNOD and MNOL.
    latency_us : int
        Network latency of a message, µs.
    """

    nodes: int = 3
    mem_pages: int = 100
    m1_pages: int = 30
    m2_pages: int = 50
    mL_pages: int = 40
    tc_local_s: float = 10.0
    tc_job_s: float = 15.0
    msg_every_ms: int = 100
    quantum_ms: int = 100
    fault_ms: int = 20
    mnod: int = 2
    mnol: int = 2
    latency_us: int = 100


INSTANCE = Instance()
"""The instance of the committed ``results/fig2.*``."""


def _ring(tc_us: int, rounds: int) -> Callable[[Any], Iterator[Any]]:
    """A job task's program: ``rounds`` equal CPU bursts (µs in all: ``tc_us``); after
    each, send to the next rank and receive from the previous one."""
    def prog(ctx: Any) -> Iterator[Any]:
        t = ctx.task
        peers = ctx.cluster.jobs[t.job]
        n = len(peers)
        b = tc_us // rounds
        for k in range(rounds):
            yield Compute(b if k < rounds - 1 else tc_us - b * (rounds - 1))
            yield Send(peers[(t.rank + 1) % n], tag=k)
            yield Recv(src=peers[(t.rank - 1) % n], tag=k)
    return prog


def finishing_times(policy: str, inst: Instance = INSTANCE) -> dict[str, float]:
    """Finishing time (s) of L, J1 and J2 (the last of their tasks) under ``policy``
    (``"rr"``, ``"pred"`` or ``"csm"``); the run's log passes the timeshare checker."""
    tc_l, tc_j = int(inst.tc_local_s * S), int(inst.tc_job_s * S)
    cl = Cluster(inst.nodes, by_name(policy, quantum_us=inst.quantum_ms * MS,
                                     mnod=inst.mnod, mnol=inst.mnol),
                 latency_us=inst.latency_us, mem_pages=inst.mem_pages,
                 fault_latency_us=inst.fault_ms * MS, seed=0, log=True)
    names: dict[int, str] = {}

    def go(c: Cluster, now: int) -> None:
        for k in range(inst.nodes):
            t = c.spawn(k, local_program(tc_l), vir_mem=inst.mL_pages,
                        ws=WorkingSet(inst.mL_pages, 1.0, 0.0, 0.1 * tc_l),
                        resident=initial_resident(c, k, inst.mL_pages), work=tc_l)
            names[t.tid] = "L"
        for j, m in enumerate((inst.m1_pages, inst.m2_pages)):
            per = [{"vir_mem": m, "ws": WorkingSet(m, 1.0, 0.0, 0.1 * tc_j),
                    "resident": initial_resident(c, k, m)} for k in range(inst.nodes)]
            rounds = tc_j // (inst.msg_every_ms * MS)
            for t in c.spawn_job(j, range(inst.nodes), _ring(tc_j, rounds), per_task=per,
                                 work=tc_j):
                names[t.tid] = f"J{j + 1}"

    cl.at(0, go)
    cl.run()
    if check(cl.log.records)["complete"] != 1:
        raise RuntimeError(f"E-4.1 under {policy}: the run's log fails the checker")
    fin: dict[str, float] = {}
    for t in cl.tasks:
        fin[names[t.tid]] = max(fin.get(names[t.tid], 0.0), t.finish / S)
    return fin


def changes(fin: dict[str, dict[str, float]], base: str) -> dict[str, float]:
    """Each task's finishing-time change under CSM against ``base``, %."""
    return {k: 100 * (fin["csm"][k] - fin[base][k]) / fin[base][k] for k in TASKS}


def _order(times: dict[str, float]) -> str:
    return " < ".join(sorted(TASKS, key=lambda k: (times[k], k)))


def report(inst: Instance, cmd: str, code: str) -> tuple[str, dict[str, Any]]:
    """The Markdown text and the JSON data of the illustration under every policy."""
    fin = {p: finishing_times(p, inst) for p in POLICIES}
    vs = {b: changes(fin, b) for b in ("pred", "rr")}
    paper = {"J1": "450 -> 350 (-22.2%)", "J2": "500 -> < 500 (< 0%)",
             "L": "300 -> 300 (0%)"}
    rows = [[p.upper(), *(f"{fin[p][k]:.1f}" for k in TASKS), _order(fin[p])]
            for p in POLICIES]
    chg = [[k, f"{vs['pred'][k]:+.1f}", f"{vs['rr'][k]:+.1f}", paper[k]] for k in TASKS]
    lines = ["# E-4.1 (Fig. 2): finishing times with and without memory control", "",
             f"Produced at commit {code} with `{cmd}`. One deterministic run per policy "
             "(seed 0); the paper gives no parameter of its example, so the instance is "
             "chosen: "
             + ", ".join(f"{k} = {v}" for k, v in asdict(inst).items())
             + " (pages, seconds of CPU, ms, µs as named). `sim/experiments/gine/"
             "illustration.py` describes it.", "",
             "## Finishing time of the last task of each (s)", "",
             *markdown_table(["policy", *TASKS, "finishing order"], rows), "",
             "## Change under CSM (memory control), %", "",
             "Against PRED (CSM without its memory mode: the same coscheduling, no memory "
             "control) and against RR; the paper's Fig. 2 (a) -> (b) in units.", "",
             *markdown_table(["task", "CSM against PRED (%)", "CSM against RR (%)",
                              "paper (a) -> (b)"], chg)]
    data = {"command": cmd, "commit": code, "instance": asdict(inst),
            "finish_s": fin, "change_pct": vs,
            "paper_units": {k: {"without": a, "with": b} for k, (a, b) in PAPER.items()}}
    return "\n".join(lines) + "\n", data


def main(argv: list[str] | None = None) -> int:
    """The command line: write ``fig2.md`` and ``fig2.json`` to ``--out``."""
    ap = Parser(prog="python -m sim.experiments.gine.illustration",
                description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=FULL_DIR,
                    help=f"directory of fig2.md and fig2.json (default {FULL_DIR})")
    args = ap.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        print(f"error: --out {args.out}: not a directory", file=sys.stderr)
        return 2
    cmd = command(None if argv is None else
                  ["python", "-m", "sim.experiments.gine.illustration", *argv])
    text, data = report(INSTANCE, cmd, commit())
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out / "fig2.md", text)
    write_atomic(args.out / "fig2.json", json.dumps(data, indent=1))
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
