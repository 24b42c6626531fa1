"""The time-sharing cluster: nodes with one CPU each, a network, optional paged memory.

All times are integer **microseconds**. See :mod:`sim.timeshare` for the API overview.

Node model (the paper's Fig. 3, after Kleinrock): a task that becomes ready goes through
the policy's ``insert`` into the ready queue ``rq``; when the CPU is free the policy's
``select`` picks the next task, which runs until its quantum expires (re-inserted), it
blocks (receive without a message, page fault, timer: sleep queue), it is stopped or
preempted, or its program ends. Context switches cost nothing (the paper does not model
them). With paged memory, every dispatch makes one page reference first (k with
``refs_per_dispatch``); a miss is a fault and the task sleeps for the fault latency
without running (behind the node's earlier faults with ``fault_service="fifo"``).

Event order at one instant: message deliveries, then CPU-segment ends, then wake-ups,
then arrivals and user callbacks, then dispatch decisions (so a policy choosing at time t
sees everything that happened at t). Within a class, insertion order.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable, Generator, Iterable
from typing import Any

from sim.timeshare.log import EventLog
from sim.timeshare.memory import PAGE_BITS, PagedMemory, WorkingSet
from sim.timeshare.ops import Compute, Message, Recv, Send, Sleep
from sim.timeshare.policy import Policy

MAX_NODES = 100_000
"""Largest cluster ``n_nodes``: every node's state is built before the first event (10^5
nodes take about 50 MB and 0.4 s; the paper's cluster has 32)."""

MAX_REFS_PER_DISPATCH = 1_000
"""Most page references per dispatch: once a working set is resident every reference hits,
so the work per dispatch grows with the count (at 1,000 a small run takes about 50 times
the default's CPU; the sensitivity runs use 2 and 8)."""

# event classes, in processing order at equal time (dispatch requests, class 4, are
# kept in a FIFO of the current instant instead of the heap)
_DELIVER, _CPU_END, _WAKE, _CALL, _DISPATCH = 0, 1, 2, 3, 4

# task states
NEW, READY, RUNNING, BLOCKED, DONE = "new", "ready", "running", "blocked", "done"

Program = Callable[["TaskContext"], Generator[Any, Any, None]]


class Task:
    """One process on one node.

    Attributes (read by policies and metrics; times in microseconds)
    ----------------------------------------------------------------
    tid, node, job, rank : identity (job None for a local task)
    local : bool, True for a task of no distributed job
    state : "new" | "ready" | "running" | "blocked" | "done"
    stopped : bool, stopped by ``Cluster.stop`` (never runs while stopped)
    blocked_on : "recv" | "fault" | "sleep" | None
    rmq : list of delivered, unconsumed messages (the paper's RMQ for this task)
    smq : int, messages sent by this task still in flight (the paper's SMQ count)
    cpu : CPU time consumed (compute plus spin), µs
    work_done : compute time done, µs
    arrival, finish : µs (finish None while alive)
    vir_mem : virtual pages (0 without paged memory); ws : WorkingSet or None
    faults : page faults suffered
    klass : int scheduling class, free for policies (default 0)
    daemon : bool, does not have to finish for the run to end
    data : dict, free per-task state for policies and programs
    mes, de : float/int slots used by the coscheduling policies (eq. 2, overtakes)
    """

    __slots__ = ("tid", "node", "job", "rank", "local", "state", "stopped", "blocked_on",
                 "gen", "op", "remaining", "spin_left", "q_left", "seg_start", "spinning",
                 "rmq", "smq", "cpu", "work_done", "arrival", "finish", "vir_mem", "ws",
                 "faults", "klass", "daemon", "data", "mes", "de", "work", "_send_value")

    def __init__(self, tid: int, node: int, job: int | None, rank: int, arrival: int):
        self.tid = tid
        self.node = node
        self.job = job
        self.rank = rank
        self.local = job is None
        self.state = NEW
        self.stopped = False
        self.blocked_on: str | None = None
        self.gen: Generator[Any, Any, None] | None = None
        self.op: Any = None
        self.remaining = 0
        self.spin_left = 0
        self.q_left = 0
        self.seg_start = 0
        self.spinning = False
        self.rmq: list[Message] = []
        self.smq = 0
        self.cpu = 0
        self.work_done = 0
        self.arrival = arrival
        self.finish: int | None = None
        self.vir_mem = 0
        self.ws: WorkingSet | None = None
        self.faults = 0
        self.klass = 0
        self.daemon = False
        self.data: dict[str, Any] = {}
        self.mes = 0.0
        self.de = 0
        self.work: int | None = None
        self._send_value: Any = None

    def __repr__(self) -> str:
        return f"Task({self.tid}, node={self.node}, job={self.job}, {self.state})"


class Node:
    """One node: a CPU, its ready queue ``rq`` (list, index 0 next), optional memory.

    ``mem_demand`` is N_k.mem (eq. 4): the sum of ``vir_mem`` over the unfinished tasks
    on the node (AMB-4.6). ``tasks`` holds every unfinished task of the node.
    """

    __slots__ = ("id", "rq", "running", "memory", "mem_demand", "tasks", "version",
                 "dispatch_pending", "preempt_req", "busy_us")

    def __init__(self, nid: int, memory: PagedMemory | None):
        self.id = nid
        self.rq: list[Task] = []
        self.running: Task | None = None
        self.memory = memory
        self.mem_demand = 0
        self.tasks: dict[int, Task] = {}
        self.version = 0
        self.dispatch_pending = False
        self.preempt_req = False
        self.busy_us = 0


class TaskContext:
    """What a task program sees: ``cluster``, ``task`` and ``now`` (µs)."""

    __slots__ = ("cluster", "task")

    def __init__(self, cluster: Cluster, task: Task):
        self.cluster = cluster
        self.task = task

    @property
    def now(self) -> int:
        """Current simulated time in microseconds."""
        return self.cluster.now

    @property
    def rng(self) -> random.Random:
        """The cluster's program random stream (deterministic per seed)."""
        return self.cluster.rng_program



def config_options(fault_service: str, refs_per_dispatch: int) -> dict[str, Any]:
    """The cluster options that the event log's ``config`` record names: only those away
    from their defaults, so that a default run's log is unchanged (also written by the
    compiled engine, :mod:`sim.timeshare.fast.run`)."""
    opts: dict[str, Any] = {}
    if fault_service == "fifo":
        opts["fault_service"] = "fifo"
    if refs_per_dispatch != 1:
        opts["refs_per_dispatch"] = refs_per_dispatch
    return opts

class Cluster:
    """A cluster of ``n_nodes`` time-sharing nodes.

    Parameters
    ----------
    n_nodes : int
        Number of nodes (> 0).
    policy : Policy or callable
        The ready-queue policy object (one shared by all nodes; per-node state lives in
        ``node`` / ``task``), or a zero-argument factory returning one.
    latency_us : int
        One-way message latency in microseconds (>= 0); a message sits in the sender's
        SMQ for this long and then enters the receiver's RMQ.
    mem_pages : int or None
        M, page frames per node; None switches paged memory off.
    fault_latency_us : int
        Constant page-fault service time in microseconds (default 20 ms).
    seed : int
        Seeds the memory-reference and program random streams (the policy seeds its own
        from it in ``attach``).
    log : bool
        Record the structured event log (``self.log``) for the checker.
    literal_pgfault : bool
        Use the literal eq. 3 for ``pg_fault`` (AMB-4.2); default the corrected one.
    touch : {"one", "ws"}
        AMB-4.11: a dispatch that hits touches only the referenced page ("one", default)
        or every resident page of the task's working set ("ws", the option that makes the
        pages of rarely scheduled tasks age first).
    fault_service : {"parallel", "fifo"}
        AMB-4.11 page-fault service: "parallel" (default) serves every fault in the
        constant latency; "fifo" has one page-fault server (disk) per node, faults
        queue and each takes the latency once the server is free.
    refs_per_dispatch : int
        Page references made at each dispatch (default 1, the paper's "a new page
        reference" per scheduling); they stop at the first miss (the fault).
    """

    def __init__(self, n_nodes: int, policy: Policy | Callable[[], Policy], *,
                 latency_us: int = 100, mem_pages: int | None = None,
                 fault_latency_us: int = 20_000, seed: int = 0, log: bool = True,
                 literal_pgfault: bool = False, touch: str = "one",
                 fault_service: str = "parallel", refs_per_dispatch: int = 1):
        if not isinstance(n_nodes, int) or not 0 < n_nodes <= MAX_NODES:
            raise ValueError(f"n_nodes must be an integer in [1, {MAX_NODES:,}], got "
                             f"{n_nodes!r}")
        if not isinstance(latency_us, int) or latency_us < 0:
            raise ValueError(f"latency_us must be a non-negative integer, got {latency_us!r}")
        if mem_pages is not None and (not isinstance(mem_pages, int) or mem_pages <= 0):
            raise ValueError(f"mem_pages must be a positive integer or None, got {mem_pages!r}")
        self.n_nodes = n_nodes
        self.policy: Policy = policy if isinstance(policy, Policy) else policy()
        self.latency_us = latency_us
        self.mem_pages = mem_pages
        self.seed = seed
        self.literal_pgfault = literal_pgfault
        if touch not in ("one", "ws"):
            raise ValueError(f"touch must be 'one' or 'ws', got {touch!r}")
        self.touch_ws = touch == "ws"
        if fault_service not in ("parallel", "fifo"):
            raise ValueError(f"fault_service must be 'parallel' or 'fifo', got "
                             f"{fault_service!r}")
        if not isinstance(refs_per_dispatch, int) or \
                not 1 <= refs_per_dispatch <= MAX_REFS_PER_DISPATCH:
            raise ValueError(f"refs_per_dispatch must be an integer in [1, "
                             f"{MAX_REFS_PER_DISPATCH:,}], got {refs_per_dispatch!r}")
        self.fault_fifo = fault_service == "fifo"
        self.refs_per_dispatch = refs_per_dispatch
        self._disk_free = [0] * n_nodes  # per node: when the FIFO fault server is free
        self.nodes = [Node(k, PagedMemory(mem_pages, fault_latency_us)
                           if mem_pages is not None else None) for k in range(n_nodes)]
        self.tasks: list[Task] = []
        self.jobs: dict[int, list[int]] = {}
        self.now = 0
        self.events = 0
        self._heap: list[tuple[int, int, int, Any]] = []
        self._dispatch_q: deque[Node] = deque()  # dispatch requests at self.now
        self._seq = 0
        self._msg_id = 0
        self._live = 0          # unfinished non-daemon tasks
        self._pending_calls = 0  # callbacks not yet run
        self.rng_mem = random.Random(seed * 104_729 + 1)
        self.rng_program = random.Random(seed * 1_299_709 + 2)
        self.log = EventLog(enabled=log)
        self.log.config(n_nodes=n_nodes, mem_pages=mem_pages, latency_us=latency_us,
                        fault_latency_us=fault_latency_us,
                        **config_options(fault_service, refs_per_dispatch))
        self._advancing: Task | None = None
        self.policy.attach(self)

    # ------------------------------------------------------------------ public API
    @property
    def live_tasks(self) -> int:
        """Unfinished non-daemon tasks."""
        return self._live

    @property
    def pending_calls(self) -> int:
        """Callbacks (``at``) not yet run."""
        return self._pending_calls

    def reschedule(self, node: int) -> None:
        """Ask ``node`` to take its running task off the CPU (re-inserted with reason
        "preempted") and let the policy select again, at the current instant."""
        nd = self.nodes[node]
        if nd.running is not None:
            nd.preempt_req = True
        self._request_dispatch(nd)

    def pg_fault(self, task: Task) -> float:
        """Eq. 3 for ``task`` (0 without paged memory)."""
        return task.ws.pg_fault(self.literal_pgfault) if task.ws is not None else 0.0

    def at(self, time_us: int, fn: Callable[[Cluster, int], None]) -> None:
        """Run ``fn(cluster, time_us)`` at ``time_us`` (µs), e.g. a job arrival."""
        if time_us < self.now:
            raise ValueError(f"time_us {time_us} is in the past (now {self.now})")
        self._pending_calls += 1
        self._push(time_us, _CALL, fn)

    def spawn(self, node: int, program: Program, *, job: int | None = None, rank: int = 0,
              vir_mem: int = 0, ws: WorkingSet | None = None, resident: int = 0,
              work: int | None = None, klass: int = 0, daemon: bool = False,
              data: dict[str, Any] | None = None, _registered: bool = False) -> Task:
        """Create a task on ``node`` now and make it ready.

        ``vir_mem`` pages (with ``ws`` its working-set model; memory must be on);
        ``resident`` pages are loaded at once (the WS window first, then the rest), as in
        the paper's eq. 7. ``work`` (µs), when given, is the total compute the program
        will do; the checker verifies it. Returns the Task.
        """
        if not 0 <= node < self.n_nodes:
            raise ValueError(f"node must be in [0, {self.n_nodes}), got {node}")
        t = Task(len(self.tasks), node, job, rank, self.now)
        t.klass, t.daemon, t.work = klass, daemon, work
        if data:
            t.data.update(data)
        nd = self.nodes[node]
        if vir_mem:
            if nd.memory is None:
                raise ValueError("vir_mem given but paged memory is off (mem_pages=None)")
            if vir_mem > nd.memory.pages:
                raise ValueError(f"vir_mem {vir_mem} pages exceeds the node memory "
                                 f"M = {nd.memory.pages} pages")
            t.vir_mem = vir_mem
            t.ws = ws if ws is not None else WorkingSet(vir_mem, 1.0, 0.0, 0)
            if t.ws.vir_mem != vir_mem:
                raise ValueError("ws.vir_mem must equal vir_mem")
            if t.ws.owner is not None:
                raise ValueError(f"ws already belongs to task {t.ws.owner}; use ws.fresh()")
            t.ws.owner = t.tid
            t.ws.new_phase(0, self.rng_mem)
        self.tasks.append(t)
        if job is not None and not _registered:
            self.jobs.setdefault(job, []).append(t.tid)
        nd.tasks[t.tid] = t
        nd.mem_demand += t.vir_mem
        if not daemon:
            self._live += 1
        self.log.add(self.now, "arrive", node, t.tid, job, work)
        if resident and t.ws is not None:
            ws_ = t.ws
            order = list(range(ws_.offset, ws_.offset + ws_.wrk)) + \
                [p for p in range(t.vir_mem) if not ws_.offset <= p < ws_.offset + ws_.wrk]
            for p in order[:min(resident, t.vir_mem)]:
                self._load(nd, t, p)
        t.gen = program(TaskContext(self, t))
        self._advance(t, None)
        if t.state != DONE:
            t.state = READY
            self._insert(nd, t, "arrive")
        return t

    def stop(self, tid: int) -> None:
        """Stop task ``tid`` now (SIGSTOP): it leaves the CPU / RQ and cannot run."""
        t = self.tasks[tid]
        if t.state == DONE or t.stopped:
            return
        if t is self._advancing:
            raise ValueError("a task program cannot stop its own task")
        nd = self.nodes[t.node]
        t.stopped = True
        if t.state == RUNNING:
            self._take_off(nd, t, "stop")
            t.state = READY
            self._request_dispatch(nd)
        elif t.state == READY:
            self.policy.remove(nd, t)
        self.log.add(self.now, "stop", t.node, tid)

    def cont(self, tid: int) -> None:
        """Continue task ``tid`` now (SIGCONT)."""
        t = self.tasks[tid]
        if t.state == DONE or not t.stopped:
            return
        t.stopped = False
        self.log.add(self.now, "cont", t.node, tid)
        if t.state == READY:
            self._insert(self.nodes[t.node], t, "continue")

    def run(self, until: int | None = None) -> Cluster:
        """Process events until every non-daemon task finished and no callback is
        pending, or until simulated time ``until`` (µs). Returns self."""
        heap = self._heap
        pop = heapq.heappop
        dq = self._dispatch_q
        while heap or dq:
            if self._live == 0 and self._pending_calls == 0:
                break
            if dq and (not heap or heap[0][0] > self.now):
                # the dispatch requests of this instant come after every other event
                # of the instant, in request order: the same order as heap entries
                # (now, _DISPATCH, seq) would have, without the heap traffic
                nd = dq.popleft()
                self.events += 1
                nd.dispatch_pending = False
                self._dispatch(nd)
                continue
            if until is not None and heap[0][0] > until:
                self.now = until
                break
            time, cls, _, payload = pop(heap)
            self.now = time
            self.events += 1
            if cls == _CPU_END:
                nd, version = payload
                if version == nd.version:
                    self._segment_end(nd)
            elif cls == _DELIVER:
                self._deliver(payload)
            elif cls == _WAKE:
                self._wake(*payload)
            else:
                self._pending_calls -= 1
                payload(self, time)
        self.log.add(self.now, "end", -1, -1, self._live == 0 and self._pending_calls == 0)
        return self

    # ------------------------------------------------------------------ internals
    def _push(self, time: int, cls: int, payload: Any) -> None:
        heapq.heappush(self._heap, (time, cls, self._seq, payload))
        self._seq += 1

    def _request_dispatch(self, nd: Node) -> None:
        if not nd.dispatch_pending:
            nd.dispatch_pending = True
            self._dispatch_q.append(nd)

    def _insert(self, nd: Node, t: Task, reason: str) -> None:
        if self.policy.insert(nd, t, self.now, reason) and nd.running is not None:
            nd.preempt_req = True
        if nd.running is None or nd.preempt_req:
            self._request_dispatch(nd)

    def _advance(self, t: Task, value: Any) -> None:
        """Step the program to its next operation (or finish it)."""
        prev, self._advancing = self._advancing, t
        try:
            op = t.gen.send(value)
        except StopIteration:
            op = None
        finally:
            self._advancing = prev
        t.op = op
        if op is None:
            self._finish(t)
            return
        tp = type(op)
        if tp is Compute:
            if op.us < 0:
                raise ValueError(f"Compute.us must be >= 0, got {op.us}")
            t.remaining = op.us
        elif tp is Recv:
            if op.spin_us < 0:
                raise ValueError(f"Recv.spin_us must be >= 0, got {op.spin_us}")
            t.spin_left = op.spin_us
        elif tp is Send or tp is Sleep:
            pass
        else:
            raise ValueError(f"task {t.tid} yielded {op!r}, not Compute/Send/Recv/Sleep")

    def _finish(self, t: Task) -> None:
        nd = self.nodes[t.node]
        if nd.running is t:
            nd.running = None
            nd.version += 1
            self.log.add(self.now, "off", nd.id, t.tid, "finish")
            self._request_dispatch(nd)
        t.state = DONE
        t.finish = self.now
        del nd.tasks[t.tid]
        nd.mem_demand -= t.vir_mem
        if not t.daemon:
            self._live -= 1
        if t.ws is not None and t.ws.resident:
            lru = nd.memory.lru
            base = t.tid << PAGE_BITS
            for p in t.ws.resident:
                del lru[base | p]
            t.ws.resident.clear()
            t.ws.res_ws = 0
            self.log.add(self.now, "free", t.node, t.tid)
        self.log.add(self.now, "finish", t.node, t.tid)

    def _match(self, t: Task, op: Recv) -> int:
        for i, m in enumerate(t.rmq):
            if (op.src is None or m.src == op.src) and (op.tag is None or m.tag == op.tag):
                return i
        return -1

    def _dispatch(self, nd: Node) -> None:
        if nd.running is not None:
            if not nd.preempt_req:
                return
            t = nd.running
            self._take_off(nd, t, "preempt")
            t.state = READY
            self.policy.insert(nd, t, self.now, "preempted")
        nd.preempt_req = False
        pol = self.policy
        mem = nd.memory
        logging = self.log.enabled
        while nd.running is None:
            t = pol.select(nd, self.now)
            if t is None:
                return
            if logging:
                self.log.add(self.now, "dispatch", nd.id, t.tid)
            if mem is not None and t.ws is not None and not self._reference(nd, t):
                continue
            t.state = RUNNING
            nd.running = t
            t.q_left = pol.quantum(nd, t, self.now)
            self._go(nd, t)

    def _reference(self, nd: Node, t: Task) -> bool:
        """The page references of a dispatch; False = fault (the task went to sleep)."""
        ws = t.ws
        rng = self.rng_mem
        if ws.phase_end >= 0 and t.cpu >= ws.phase_end:
            ws.new_phase(t.cpu, rng)
        if self.refs_per_dispatch != 1:
            for _ in range(self.refs_per_dispatch):
                if not self._ref_one(nd, t, ws, rng):
                    return False
            return True
        return self._ref_one(nd, t, ws, rng)

    def _ref_one(self, nd: Node, t: Task, ws: WorkingSet, rng: random.Random) -> bool:
        """One page reference; False = fault (the task went to sleep)."""
        # _randbelow(n) is what randrange(n) returns for n > 0 (same stream, less work)
        page = ws.offset + rng._randbelow(ws.wrk)
        ws.refs += 1
        key = (t.tid << PAGE_BITS) | page
        lru = nd.memory.lru
        log = self.log
        if key in lru:
            if self.touch_ws:
                base = t.tid << PAGE_BITS
                res = ws.resident
                mte = lru.move_to_end
                for p in range(ws.offset, ws.offset + ws.wrk):
                    if p in res:
                        mte(base | p)
            lru.move_to_end(key)
            if log.enabled:
                log.add(self.now, "ref", nd.id, t.tid, page, 1)
            return True
        ws.faults += 1
        t.faults += 1
        if log.enabled:
            log.add(self.now, "ref", nd.id, t.tid, page, 0)
            log.add(self.now, "off", nd.id, t.tid, "fault")
        t.state = BLOCKED
        t.blocked_on = "fault"
        if log.enabled:
            log.add(self.now, "block", nd.id, t.tid, "fault")
        lat = nd.memory.fault_latency_us
        if self.fault_fifo:  # one server per node: wait for the faults queued before
            start = max(self.now, self._disk_free[nd.id])
            self._disk_free[nd.id] = start + lat
            self._push(start + lat, _WAKE, (t, "fault", page))
        else:
            self._push(self.now + lat, _WAKE, (t, "fault", page))
        return False

    def _load(self, nd: Node, t: Task, page: int) -> None:
        mem = nd.memory
        lru = mem.lru
        key = (t.tid << PAGE_BITS) | page
        if key in lru:
            lru.move_to_end(key)
            return
        evicted = None
        if len(lru) >= mem.pages:
            ek, _ = lru.popitem(last=False)
            owner = self.tasks[ek >> PAGE_BITS]
            ep = ek & ((1 << PAGE_BITS) - 1)
            ows = owner.ws
            ows.resident.discard(ep)
            if ows.offset <= ep < ows.offset + ows.wrk:
                ows.res_ws -= 1
            evicted = (owner.tid, ep)
        lru[key] = None
        ws = t.ws
        ws.resident.add(page)
        if ws.offset <= page < ws.offset + ws.wrk:
            ws.res_ws += 1
        if self.log.enabled:
            self.log.add(self.now, "load", nd.id, t.tid, page, evicted)

    def _go(self, nd: Node, t: Task) -> None:
        """Run the program of the task on the CPU from now until a timed segment starts,
        it blocks, its quantum is spent or it finishes."""
        while True:
            op = t.op
            tp = type(op)
            if tp is Compute:
                if t.remaining > 0:
                    if t.q_left <= 0:
                        self._expire(nd, t)
                        return
                    seg = t.remaining if t.remaining < t.q_left else t.q_left
                    t.seg_start = self.now
                    t.spinning = False
                    nd.version += 1
                    self._push(self.now + seg, _CPU_END, (nd, nd.version))
                    return
                self._advance(t, self.now)
            elif tp is Send:
                self._send(t, op)
            elif tp is Recv:
                i = self._match(t, op)
                if i >= 0:
                    m = t.rmq.pop(i)
                    self.log.add(self.now, "recv", nd.id, t.tid, m.id)
                    self._advance(t, m)
                elif t.spin_left > 0:
                    if t.q_left <= 0:
                        self._expire(nd, t)
                        return
                    seg = t.spin_left if t.spin_left < t.q_left else t.q_left
                    t.seg_start = self.now
                    t.spinning = True
                    self.log.add(self.now, "spin", nd.id, t.tid, 1)
                    nd.version += 1
                    self._push(self.now + seg, _CPU_END, (nd, nd.version))
                    return
                else:
                    self._block(nd, t, "recv")
                    return
            elif tp is Sleep:
                self._block(nd, t, "sleep")
                self._push(self.now + op.us, _WAKE, (t, "sleep", None))
                return
            else:  # finished (_finish freed the CPU)
                return

    def _send(self, t: Task, op: Send) -> None:
        if not 0 <= op.dst < len(self.tasks):
            raise ValueError(f"task {t.tid} sends to unknown task {op.dst}")
        mid = self._msg_id
        self._msg_id += 1
        t.smq += 1
        self.log.add(self.now, "send", t.node, t.tid, mid, op.dst)
        m = Message(mid, t.tid, op.dst, op.tag, op.payload, self.now,
                    self.now + self.latency_us)
        self._push(self.now + self.latency_us, _DELIVER, m)
        self._advance(t, mid)

    def _block(self, nd: Node, t: Task, why: str) -> None:
        nd.running = None
        t.state = BLOCKED
        t.blocked_on = why
        self.log.add(self.now, "off", nd.id, t.tid, "block")
        self.log.add(self.now, "block", nd.id, t.tid, why)
        self._request_dispatch(nd)

    def _expire(self, nd: Node, t: Task) -> None:
        nd.running = None
        t.state = READY
        self.log.add(self.now, "off", nd.id, t.tid, "quantum")
        self._insert(nd, t, "quantum")
        self._request_dispatch(nd)

    def _account(self, nd: Node, t: Task) -> None:
        """Charge the CPU time of the current segment up to now."""
        el = self.now - t.seg_start
        t.seg_start = self.now
        t.cpu += el
        t.q_left -= el
        nd.busy_us += el
        if t.spinning:
            t.spin_left -= el
        else:
            t.remaining -= el
            t.work_done += el

    def _take_off(self, nd: Node, t: Task, reason: str) -> None:
        """Force the running task off the CPU now (preemption or stop)."""
        self._account(nd, t)
        nd.version += 1
        if t.spinning:
            self.log.add(self.now, "spin", nd.id, t.tid, 0)
            t.spinning = False
        nd.running = None
        self.log.add(self.now, "off", nd.id, t.tid, reason)

    def _segment_end(self, nd: Node) -> None:
        t = nd.running
        self._account(nd, t)
        if t.spinning:
            self.log.add(self.now, "spin", nd.id, t.tid, 0)
            t.spinning = False
            if t.spin_left <= 0:
                self._block(nd, t, "recv")
            else:
                self._expire(nd, t)
            return
        if t.remaining <= 0:
            self._advance(t, self.now)
        self._go(nd, t)

    def _deliver(self, m: Message) -> None:
        src = self.tasks[m.src]
        src.smq -= 1
        t = self.tasks[m.dst]
        nd = self.nodes[t.node]
        t.rmq.append(m)
        self.log.add(self.now, "deliver", t.node, t.tid, m.id)
        if t.state == DONE or type(t.op) is not Recv:
            return
        if self._match(t, t.op) < 0:
            return
        if t.state == RUNNING and t.spinning:
            self._account(nd, t)
            nd.version += 1
            self.log.add(self.now, "spin", nd.id, t.tid, 0)
            t.spinning = False
            self._go(nd, t)
        elif t.state == BLOCKED and t.blocked_on == "recv":
            delay = self.policy.wakeup_delay(nd, t, self.now, "recv")
            t.blocked_on = "recv-woken"
            if delay > 0:
                self._push(self.now + delay, _WAKE, (t, "recv", None))
            else:
                self._wake(t, "recv", None)

    def _wake(self, t: Task, cause: str, page: int | None) -> None:
        nd = self.nodes[t.node]
        if cause == "fault":
            self._load(nd, t, page)
        t.state = READY
        t.blocked_on = None
        if self.log.enabled:
            self.log.add(self.now, "wake", nd.id, t.tid)
        if cause == "sleep":
            self._advance(t, self.now)
            if t.op is None:  # program ended right after the sleep
                return
        if not t.stopped:
            self._insert(nd, t, "wake_recv" if cause == "recv" else cause)

    # ------------------------------------------------------------------ conveniences
    def spawn_job(self, job: int, nodes: Iterable[int], program: Program,
                  per_task: list[dict[str, Any]] | None = None, **kwargs: Any) -> list[Task]:
        """Spawn one task of ``job`` per node in ``nodes`` (rank = position).

        ``kwargs`` go to :meth:`spawn`; a ``ws`` is a template copied per task;
        ``per_task[r]`` (optional) holds keyword arguments for rank r only. The job's task
        ids are in ``cluster.jobs[job]`` before the first program starts.
        """
        nodes = list(nodes)
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"job {job} maps two tasks to one node: {nodes}")
        if job in self.jobs:
            raise ValueError(f"job {job} already exists")
        first = len(self.tasks)
        # peers are known to every program from its first line on
        self.jobs[job] = list(range(first, first + len(nodes)))
        if per_task is not None and len(per_task) != len(nodes):
            raise ValueError(f"per_task has {len(per_task)} entries for {len(nodes)} nodes")
        ws = kwargs.pop("ws", None)
        out = []
        for r, k in enumerate(nodes):
            kw = dict(kwargs)
            if ws is not None:
                kw["ws"] = ws.fresh()
            if per_task is not None:
                kw.update(per_task[r])
            out.append(self.spawn(k, program, job=job, rank=r, _registered=True, **kw))
        return out
