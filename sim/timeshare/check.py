"""Independent checker of a time-sharing run, from its event log alone.

Shares no code with the simulator: it replays the records ``(time_us, kind, node, task,
a, b)`` (times in microseconds; the format is documented in ``sim/timeshare/log.py``)
with its own state machine and raises :class:`CheckError` at the first violation of:

- time never goes backwards; a task lives on one node;
- no CPU runs two tasks at once; a task is dispatched only when it is ready (arrived, not
  blocked, not stopped, not finished, not already on a CPU);
- a task leaves the CPU only if it was on it; spinning only while on the CPU;
- resident memory never exceeds M pages per node; every page reference is a hit
  exactly when the page is resident; a faulting task is woken only after the fault
  latency (``fault_service`` "fifo" in the config: one server per node, so a fault is
  served after the faults before it on its node, each taking the latency); loads evict
  only resident pages;
- every message is delivered once, after exactly the network latency, to the
  destination named at the send, and consumed at most once, by that task, while it is
  on the CPU, after delivery;
- in a complete run (last record ``end`` with a = True): every non-daemon task finished,
  every message was consumed exactly once, and every task with a declared ``work`` did
  exactly that much compute (CPU time on the CPU minus spin time).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


class CheckError(AssertionError):
    """A run violated an invariant; the message names the record and the rule."""


def check(records: Iterable[Sequence[Any]], *, daemons: Iterable[int] = ()) -> dict[str, int]:
    """Validate a run from its log; return counts of what was checked.

    Parameters
    ----------
    records : iterable of records ``(time_us, kind, node, task, a, b)``
    daemons : task ids that need not finish (servers)
    """
    recs = [tuple(r) for r in records]
    if not recs or recs[0][1] != "config":
        raise CheckError("first record must be 'config'")
    cfg = recs[0][4]
    n_nodes = cfg["n_nodes"]
    m_pages = cfg["mem_pages"]
    latency = cfg["latency_us"]
    fault_lat = cfg["fault_latency_us"]
    fifo = cfg.get("fault_service", "parallel") == "fifo"
    server_free: dict[int, int] = {k: 0 for k in range(n_nodes)}  # FIFO fault server
    daemon_set = set(daemons)

    on_cpu: dict[int, int | None] = {k: None for k in range(n_nodes)}
    node_of: dict[int, int] = {}
    status: dict[int, str] = {}   # ready | running | blocked | done
    stopped: dict[int, bool] = {}
    work: dict[int, int | None] = {}
    run_since: dict[int, int] = {}
    cpu: dict[int, int] = {}
    spin_since: dict[int, int | None] = {}
    spin_total: dict[int, int] = {}
    fault_at: dict[int, int] = {}
    resident: dict[int, set[tuple[int, int]]] = {k: set() for k in range(n_nodes)}
    sent: dict[int, tuple[int, int]] = {}      # msg -> (time, dst)
    delivered: dict[int, int] = {}
    consumed: set[int] = set()
    last_t = 0
    complete = False
    counts = {"records": len(recs), "dispatches": 0, "faults": 0, "messages": 0}

    def fail(i: int, msg: str) -> None:
        raise CheckError(f"record {i} {recs[i]!r}: {msg}")

    for i, (t, kind, node, task, a, b) in enumerate(recs[1:], start=1):
        if t < last_t:
            fail(i, "time goes backwards")
        last_t = t
        if kind == "end":
            complete = bool(a)
            continue
        if not 0 <= node < n_nodes:
            fail(i, f"node {node} outside the cluster")
        if kind == "arrive":
            if task in node_of:
                fail(i, "task arrives twice")
            node_of[task] = node
            status[task] = "ready"
            stopped[task] = False
            work[task] = b
            cpu[task] = 0
            spin_total[task] = 0
            spin_since[task] = None
            continue
        if task not in node_of:
            fail(i, "task never arrived")
        if node_of[task] != node:
            fail(i, f"task lives on node {node_of[task]}")
        st = status[task]
        if kind == "dispatch":
            if on_cpu[node] is not None:
                fail(i, f"CPU busy with task {on_cpu[node]}")
            if st != "ready" or stopped[task]:
                fail(i, f"dispatch of a task that is {st}{' and stopped' if stopped[task] else ''}")
            on_cpu[node] = task
            status[task] = "running"
            run_since[task] = t
            counts["dispatches"] += 1
        elif kind == "off":
            if on_cpu[node] != task or st != "running":
                fail(i, "task leaves a CPU it is not on")
            if spin_since[task] is not None:
                fail(i, "task leaves the CPU while spinning")
            on_cpu[node] = None
            cpu[task] += t - run_since[task]
            status[task] = "ready" if a in ("quantum", "preempt", "stop") else \
                ("off-" + str(a))
        elif kind == "spin":
            if on_cpu[node] != task:
                fail(i, "spin while not on the CPU")
            if a == 1:
                if spin_since[task] is not None:
                    fail(i, "spin starts twice")
                spin_since[task] = t
            else:
                if spin_since[task] is None:
                    fail(i, "spin ends without a start")
                spin_total[task] += t - spin_since[task]
                spin_since[task] = None
        elif kind == "block":
            if st not in ("off-block", "off-fault"):
                fail(i, f"block of a task that is {st}")
            if (a == "fault") != (st == "off-fault"):
                fail(i, "block reason does not match the way it left the CPU")
            status[task] = "blocked"
            if a == "fault":
                if fifo:  # the expected wake time: served after the queued faults
                    server_free[node] = max(t, server_free[node]) + fault_lat
                    fault_at[task] = server_free[node] - fault_lat
                else:
                    fault_at[task] = t
        elif kind == "wake":
            if st != "blocked":
                fail(i, f"wake of a task that is {st}")
            if task in fault_at:
                if t - fault_at.pop(task) != fault_lat:
                    fail(i, f"fault served in other than {fault_lat} us")
            status[task] = "ready"
        elif kind == "stop":
            if stopped[task] or st == "done":
                fail(i, "stop of a stopped or finished task")
            if on_cpu[node] == task:
                fail(i, "stopped task still on the CPU")
            stopped[task] = True
        elif kind == "cont":
            if not stopped[task]:
                fail(i, "cont of a task that is not stopped")
            stopped[task] = False
        elif kind == "ref":
            if m_pages is None:
                fail(i, "page reference without paged memory")
            if on_cpu[node] != task:
                fail(i, "page reference by a task not dispatched")
            hit = (task, a) in resident[node]
            if hit != bool(b):
                fail(i, f"reference recorded as {'hit' if b else 'fault'} but page is "
                        f"{'resident' if hit else 'not resident'}")
            if not b:
                counts["faults"] += 1
        elif kind == "load":
            if m_pages is None:
                fail(i, "page load without paged memory")
            if (task, a) in resident[node]:
                fail(i, "load of a resident page")
            if b is not None:
                ev = tuple(b)
                if ev not in resident[node]:
                    fail(i, f"evicts non-resident page {ev}")
                resident[node].discard(ev)
            resident[node].add((task, a))
            if len(resident[node]) > m_pages:
                fail(i, f"resident memory {len(resident[node])} > M = {m_pages} pages")
        elif kind == "free":
            resident[node] = {p for p in resident[node] if p[0] != task}
        elif kind == "send":
            if on_cpu[node] != task:
                fail(i, "send by a task not on the CPU")
            if a in sent:
                fail(i, "message id reused")
            sent[a] = (t, b)
            counts["messages"] += 1
        elif kind == "deliver":
            if a not in sent:
                fail(i, "delivery of a message never sent")
            if a in delivered:
                fail(i, "message delivered twice")
            if sent[a][1] != task:
                fail(i, f"delivered to task {task}, sent to {sent[a][1]}")
            if t - sent[a][0] != latency:
                fail(i, f"delivered after {t - sent[a][0]} us, latency is {latency}")
            delivered[a] = t
        elif kind == "recv":
            if a not in delivered:
                fail(i, "message consumed before delivery")
            if a in consumed:
                fail(i, "message consumed twice")
            if sent[a][1] != task:
                fail(i, "message consumed by a task it was not sent to")
            if on_cpu[node] != task:
                fail(i, "receive by a task not on the CPU")
            consumed.add(a)
        elif kind == "finish":
            if st in ("running", "done"):
                fail(i, f"finish of a task that is {st}")
            if st not in ("off-finish", "ready", "blocked"):
                fail(i, f"finish of a task that is {st}")
            status[task] = "done"
            if any(p[0] == task for p in resident[node]):
                fail(i, "finished task still holds pages")
        else:
            fail(i, f"unknown record kind {kind!r}")

    if complete:
        for task, st in status.items():
            if st != "done" and task not in daemon_set:
                raise CheckError(f"complete run but task {task} is {st}")
            w = work[task]
            if w is not None and cpu[task] - spin_total[task] != w:
                raise CheckError(f"task {task} did {cpu[task] - spin_total[task]} us of "
                                 f"work, declared {w}")
        for mid, (_, dst) in sent.items():
            if mid not in consumed and dst not in daemon_set:
                raise CheckError(f"message {mid} to task {dst} never consumed")
    counts["complete"] = int(complete)
    return counts
