"""Slot-based scheduling servers (Karl): share control by SIGSTOP/SIGCONT at slot boundaries.

All times are integer **microseconds**.

A round of ``S`` slots of ``L`` µs; each slot is owned by at most one distributed
application (on all its nodes) or left free for local load. On every node a scheduling
server, a daemon task of the highest real-time class, wakes at each slot boundary, spends
``c_srv_us`` of CPU and then stops (SIGSTOP) the controlled tasks that lose the CPU and
continues (SIGCONT) those that gain it (spec 2.2.1). Three regimes (spec 2.2.2-2.2.3):

- ``"none"``: no server; the program's tasks run in the time-sharing class.
- ``"unsync"``: every node's server is driven by its own timer; node ``k``'s boundaries
  are at ``phi_k + m L`` with independent phases ``phi_k ~ U(0, S L)`` (AMB-2.7; the
  tick quantisation of the sleeps is immaterial because ``L`` is a multiple of the tick
  and every node has its own tick phase).
- ``"sync"``: node 0's server is the master (time-triggered, boundaries at
  ``phi_0 + m L``); at each boundary it broadcasts the slot number, and slave ``k``'s
  server is woken by the control message at ``phi_0 + m L + delta_ctrl + U(0, jitter)``
  (a fresh jitter per message), then acts exactly like the master.

Node scheduling classes (spec 2.5), highest first: 3 OS housekeeping (Fig. 1 model only),
2 scheduling server, 1 controlled task (real-time medium; FIFO, no quantum), 0
time-sharing (round robin with ``ts_quantum_us``). A task of a higher class preempts a
lower one at once. Wake-up after a blocking receive (:meth:`ServerPolicy.wakeup_delay`):
``w_unctl_us`` for the time-sharing class, ``w_ctl_us`` for a controlled task, or with
``ctl_block_wakeup="tick"`` the first timer tick of the node at or after ``now +
w_ctl_us`` (one reading of "has to be rescheduled by the normal operating system
scheduler after a network interrupt occurs"). A policy built with ``tick_exempt`` (a
predicate on the waking task) wakes the tasks it selects after ``w_ctl_us`` even under
``"tick"``: ``sim.timeshare.bsp`` uses it for the reading where only message receives, not
barrier releases, wait for the tick.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sim.timeshare.ops import Compute, Sleep
from sim.timeshare.policy import Policy

if TYPE_CHECKING:
    from sim.timeshare.cluster import Cluster, Node, Task

__all__ = ["HOUSEKEEPING", "SERVER", "CONTROLLED", "TIMESHARE", "REGIMES", "SlotSchedule",
           "ServerParams", "ServerPolicy", "install_servers", "placement"]

HOUSEKEEPING, SERVER, CONTROLLED, TIMESHARE = 3, 2, 1, 0
"""Scheduling classes (``Task.klass``), highest first."""

REGIMES = ("none", "unsync", "sync")
WAKEUPS = ("immediate", "tick")
_FOREVER = 10**15


def _int(value: Any, name: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"field '{name}' must be an integer >= {minimum}, got {value!r}")
    return value


def placement(kind: str | Sequence[int], n_slots: int, k: int) -> tuple[int, ...]:
    """The ``k`` allocated slots of a round of ``n_slots`` (AMB-2.3).

    ``"contiguous"``: ``0 .. k-1`` (the default, a 40 ms window every 200 ms for k = 2);
    ``"spread"``: ``floor(j S / k)`` for ``j < k`` (slots 0 and 5 for k = 2); or an
    explicit sequence of slot numbers.
    """
    if kind == "contiguous":
        return tuple(range(k))
    if kind == "spread":
        return tuple(j * n_slots // k for j in range(k))
    if isinstance(kind, str):
        raise ValueError(f"field 'placement' must be 'contiguous', 'spread' or a list of "
                         f"slots, got {kind!r}")
    slots = tuple(sorted(kind))
    if len(set(slots)) != len(slots) or any(not 0 <= s < n_slots for s in slots):
        raise ValueError(f"field 'placement' must be distinct slots in [0, {n_slots}), "
                         f"got {list(kind)!r}")
    return slots


@dataclass(frozen=True)
class SlotSchedule:
    """A round of ``len(owner)`` slots of ``slot_us`` µs; ``owner[s]`` is the application
    (job id) owning slot ``s`` on all its nodes, or None (free for local load).

    Build the paper's one-program schedule with :meth:`for_share`.
    """

    slot_us: int
    owner: tuple[int | tuple[int, ...] | None, ...]

    def __post_init__(self) -> None:
        _int(self.slot_us, "slot_us", 1)
        if not self.owner:
            raise ValueError("field 'owner' must list at least one slot")
        if all(isinstance(o, int) for o in self.owner):
            raise ValueError("field 'owner' leaves no free slot for local load")

    def apps_in(self, s: int) -> tuple[int, ...]:
        """The applications owning slot ``s`` (several when their node sets are
        disjoint, as in an Ousterhout matrix row)."""
        o = self.owner[s]
        return () if o is None else (o,) if isinstance(o, int) else tuple(o)

    @property
    def n_slots(self) -> int:
        """S, the number of slots per round."""
        return len(self.owner)

    @property
    def round_us(self) -> int:
        """Round length S L in microseconds."""
        return self.slot_us * len(self.owner)

    def slots_of(self, app: int) -> tuple[int, ...]:
        """The slots application ``app`` owns."""
        return tuple(s for s in range(len(self.owner)) if app in self.apps_in(s))

    @classmethod
    def for_share(cls, share: float = 0.2, *, round_us: int = 200_000,
                  slot_us: int = 20_000, place: str | Sequence[int] = "contiguous",
                  app: int = 0) -> SlotSchedule:
        """One application with CPU ``share`` of a round of ``round_us`` in slots of
        ``slot_us`` (both µs); default the paper's 2 of 10 slots of 20 ms.

        Raises ValueError naming the field for a share outside (0, 1], a slot length that
        does not divide the round, a share that is not a whole number of slots, or no
        free slot left for local load.
        """
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not share > 0:
            raise ValueError(f"field 'share' must be > 0, got {share!r}")
        if share > 1:
            raise ValueError(f"field 'share' must be at most 100%, got {share!r}")
        _int(round_us, "round_us", 1)
        _int(slot_us, "slot_us", 1)
        if round_us % slot_us:
            raise ValueError(f"field 'slot_us' ({slot_us}) does not divide the round "
                             f"round_us ({round_us})")
        n = round_us // slot_us
        k = share * n
        if abs(k - round(k)) > 1e-9 or round(k) < 1:
            raise ValueError(f"field 'share' ({share}) is not a whole number of the {n} slots")
        k = round(k)
        if k >= n:
            raise ValueError(f"field 'share' ({share}) leaves no free slot for local load")
        slots = placement(place, n, k)
        if len(slots) != k:
            raise ValueError(f"field 'placement' must name {k} slots, got {len(slots)}")
        return cls(slot_us, tuple(app if s in slots else None for s in range(n)))


@dataclass(frozen=True)
class ServerParams:
    """The constants of the spec 2.5 model (all times µs; defaults are the spec's).

    Parameters
    ----------
    regime : {"none", "unsync", "sync"}
    c_srv_us : int
        CPU time of one slot-boundary action of a server (50 µs).
    delta_ctrl_us, jitter_us : int
        Control-message latency (300 µs) and the upper end of its uniform jitter (200 µs),
        synchronized regime.
    tick_us : int
        OS timer tick (10 ms).
    w_ctl_us, w_unctl_us : int
        Wake-up latency after a blocking receive, controlled (real-time, 100 µs) and
        uncontrolled (time-sharing, 1 ms) class.
    ctl_block_wakeup : {"immediate", "tick"}
        ``"tick"``: a blocked controlled task is picked up only at the node's next timer
        tick (at or after ``w_ctl_us``).
    ts_quantum_us : int
        Round-robin quantum of the time-sharing class (200 ms, Linux 2.0's default
        counter of 20 ticks).
    act_every_slot : bool
        True (the spec's model): the server wakes and spends ``c_srv_us`` at every slot
        boundary. False (a faster approximation): it wakes only at the boundaries where
        the set of tasks allowed to run changes (2 of 10 in the paper's schedule), which
        removes most server events and 80% of the server's CPU time.
    skip_idle : bool
        True (default; exact): a server sleeps through the boundaries where nothing
        changes while every other task of its node is stopped (its action there could
        not delay anyone); results are identical to acting at every boundary (False),
        only the servers' own CPU time and log entries differ. Assumes no task is
        spawned on a node, and no one but its server continues its tasks, while the
        server sleeps through such a stretch.
    """

    regime: str = "sync"
    c_srv_us: int = 50
    delta_ctrl_us: int = 300
    jitter_us: int = 200
    tick_us: int = 10_000
    w_ctl_us: int = 100
    w_unctl_us: int = 1_000
    ctl_block_wakeup: str = "immediate"
    ts_quantum_us: int = 200_000
    act_every_slot: bool = True
    skip_idle: bool = True
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.regime not in REGIMES:
            raise ValueError(f"field 'regime' must be one of {REGIMES}, got {self.regime!r}")
        if self.ctl_block_wakeup not in WAKEUPS:
            raise ValueError(f"field 'ctl_block_wakeup' must be one of {WAKEUPS}, "
                             f"got {self.ctl_block_wakeup!r}")
        for name in ("c_srv_us", "delta_ctrl_us", "jitter_us", "w_ctl_us", "w_unctl_us"):
            _int(getattr(self, name), name)
        _int(self.tick_us, "tick_us", 1)
        _int(self.ts_quantum_us, "ts_quantum_us", 1)

    def to_dict(self) -> dict[str, Any]:
        """The recorded parameters."""
        return {k: getattr(self, k) for k in ("regime", "c_srv_us", "delta_ctrl_us",
                                                "jitter_us", "tick_us", "w_ctl_us",
                                                "w_unctl_us", "ctl_block_wakeup",
                                                "ts_quantum_us", "act_every_slot",
                                                "skip_idle")}


class ServerPolicy(Policy):
    """Strict priority classes (``Task.klass``, higher first; FIFO within a class) with
    immediate preemption, time-sharing round robin, and the wake-up latencies of
    :class:`ServerParams`. ``tick_phase[k]`` (µs) is node k's timer phase.

    ``tick_exempt`` (default None): a predicate on a controlled task whose blocking receive
    is being satisfied; where it returns True the task wakes after ``w_ctl_us`` even under
    ``ctl_block_wakeup="tick"`` (no effect under ``"immediate"``)."""

    name = "server-priority"

    def __init__(self, params: ServerParams | None = None, *,
                 tick_exempt: Callable[[Task], bool] | None = None):
        self.sp = params or ServerParams()
        super().__init__(quantum_us=self.sp.ts_quantum_us)
        self.tick_phase: dict[int, int] = {}
        self.tick_exempt = tick_exempt

    def params(self) -> dict[str, Any]:
        return {"name": self.name, **self.sp.to_dict()}

    def insert(self, node: Node, task: Task, now: int, reason: str) -> bool:
        rq = node.rq
        k = task.klass
        i = len(rq)
        if reason == "preempted":   # back to the head of its class
            i = 0
            while i < len(rq) and rq[i].klass > k:
                i += 1
        else:
            while i > 0 and rq[i - 1].klass < k:
                i -= 1
        rq.insert(i, task)
        run = node.running
        return run is not None and run.klass < k

    def quantum(self, node: Node, task: Task, now: int) -> int:
        return self.sp.ts_quantum_us if task.klass == TIMESHARE else _FOREVER

    def wakeup_delay(self, node: Node, task: Task, now: int, cause: str) -> int:
        k = task.klass
        if k == TIMESHARE:
            return self.sp.w_unctl_us
        if k != CONTROLLED:
            return 0
        if self.sp.ctl_block_wakeup == "immediate" or \
                (self.tick_exempt is not None and self.tick_exempt(task)):
            return self.sp.w_ctl_us
        tick = self.sp.tick_us
        earliest = now + self.sp.w_ctl_us
        ph = self.tick_phase.get(node.id, 0)
        nxt = earliest + (-(earliest - ph)) % tick
        return nxt - now


class _Jitter:
    """The control-message delays of the slave servers (synchronized regime), drawn from
    one random stream in a fixed global order, whoever asks first.

    Slave ``k``'s delay ``d(k, m)`` for boundary ``m`` (µs, ``delta + U{0..jitter}``) is
    drawn when its action at boundary ``m - 1`` completes, at ``T = t(k, m - 1) + c_srv``
    (``t(k, m) = phase + m L + d(k, m)``); draws at the same instant go in the order of the
    previous draws (the order of the servers' timer wake-ups at that instant). This is
    the order in which the servers' own events draw them when every boundary is acted on,
    so a server that skips idle boundaries (and asks later, or for several at once) gets
    the same values.
    """

    __slots__ = ("rng", "delta", "jitter", "c", "phase", "L", "heap", "vals", "rank")

    def __init__(self, rng: random.Random, delta: int, jitter: int, c_srv: int,
                 phase: int, slot_us: int, first: list[tuple[int, int]]):
        self.rng, self.delta, self.jitter, self.c = rng, delta, jitter, c_srv
        self.phase, self.L = phase, slot_us
        # (draw instant, rank of the previous draw, node, boundary)
        self.heap = [(c_srv, -len(first) + r, k, m) for r, (k, m) in enumerate(first)]
        heapq.heapify(self.heap)
        self.vals: dict[tuple[int, int], int] = {}
        self.rank = 0

    def get(self, k: int, m: int) -> int:
        """``d(k, m)`` in µs; draws (in order) every delay due before it."""
        key = (k, m)
        vals = self.vals
        if key in vals:
            return vals.pop(key)
        heap = self.heap
        pop, push = heapq.heappop, heapq.heappush
        # rng.randint(0, j) is rng._randbelow(j + 1): the same stream, a third the cost
        below = self.rng._randbelow if self.jitter else None
        width = self.jitter + 1
        delta, c, phase, L = self.delta, self.c, self.phase, self.L
        rank = self.rank
        while key not in vals:
            _, _, kk, mm = pop(heap)
            d = delta + below(width) if below is not None else delta
            vals[(kk, mm)] = d
            push(heap, (phase + mm * L + d + c, rank, kk, mm + 1))
            rank += 1
        self.rank = rank
        return vals.pop(key)


def _server_program(table: list[list[frozenset[int]]], node: int, phase: int, slot_us: int,
                    c_srv_us: int, jitter: _Jitter | None, delta_us: int,
                    log: list[tuple[int, int, int]] | None, every: bool, skip_idle: bool):
    """A server's program: sleep to each boundary ``m`` (at ``phase + m slot_us``, plus the
    control-message delay for a slave), spend ``c_srv_us`` of CPU, then stop/continue so
    that exactly ``table[node][slot]`` may run.

    ``every=False`` (approximation): skip the boundaries where that set does not change.
    ``skip_idle`` (exact): skip the boundaries where the set does not change while every
    other task of the node is stopped, so that the action could not delay anyone (the
    stopped tasks stay stopped until this server continues them; the server then sleeps
    through such a stretch in one step; the skipped actions are still logged at their
    times).
    """
    def program(ctx):
        cl = ctx.cluster
        me = ctx.task
        nd = cl.nodes[node]
        allowed = table[node]
        S = len(allowed)
        controlled = frozenset().union(*allowed)
        cur: frozenset[int] | None = None
        m = (-phase) // slot_us          # the slot current at time 0: phase + m L <= 0
        t_act = 0
        # yield the CPU once at start, so that the tasks spawned at the same instant
        # execute their first operation (e.g. a Sleep until their start) at that instant
        yield Sleep(0)
        while True:
            if t_act > cl.now:
                yield Sleep(t_act - cl.now)
            if c_srv_us:
                yield Compute(c_srv_us)
            slot = m % S
            new = allowed[slot]
            if cur is None:
                for tid in controlled - new:
                    cl.stop(tid)
                for tid in new:
                    cl.cont(tid)
            else:
                for tid in cur - new:
                    cl.stop(tid)
                for tid in new - cur:
                    cl.cont(tid)
            cur = new
            if log is not None:
                log.append((cl.now, node, slot))
            # the next boundary to act on
            m += 1
            skipped = []
            if not every or skip_idle:
                idle = skip_idle and all(o.stopped for o in nd.tasks.values() if o is not me)
                while (idle or not every) and allowed[m % S] == cur and len(skipped) < S - 1:
                    skipped.append(m)
                    m += 1
            if jitter is None:
                if every and log is not None:
                    log.extend((phase + ms * slot_us + c_srv_us, node, ms % S)
                               for ms in skipped)
                t_act = phase + m * slot_us
                continue
            if skipped:
                # wake when every delay up to this boundary's is due, then draw them
                w = phase + m * slot_us + delta_us
                if w > cl.now:
                    yield Sleep(w - cl.now)
                for ms in skipped:
                    d = jitter.get(node, ms)
                    if every and log is not None:
                        log.append((phase + ms * slot_us + d + c_srv_us, node, ms % S))
            t_act = phase + m * slot_us + jitter.get(node, m)
    return program


def install_servers(cluster: Cluster, schedule: SlotSchedule, params: ServerParams,
                    jobs: dict[int, list[int]], *, phases: Sequence[int],
                    rng: random.Random, action_log: list | None = None) -> list[Task]:
    """Start one scheduling server per node (daemon tasks, class SERVER); does nothing
    for regime ``"none"``.

    Parameters
    ----------
    schedule : SlotSchedule
        Slot -> application (job id).
    jobs : dict
        Job id -> its task ids (one per node) as in ``cluster.jobs``; those tasks must
        have class CONTROLLED.
    phases : sequence of int
        Per node, the time (µs, in ``[0, S L)``) of a boundary of slot 0 of that node's
        own timer; in the synchronized regime only ``phases[0]`` (the master) is used.
    rng : random.Random
        Draws the control-message jitter (synchronized regime).
    action_log : list or None
        If a list, each server action appends ``(time_us, node, slot)``.

    Returns
    -------
    list of Task
        The server tasks (daemons).
    """
    if params.regime == "none":
        return []
    n = cluster.n_nodes
    if len(phases) != n:
        raise ValueError(f"field 'phases' must give one phase per node ({n})")
    table: list[list[frozenset[int]]] = [[frozenset() for _ in schedule.owner]
                                         for _ in range(n)]
    for s in range(schedule.n_slots):
        for app in schedule.apps_in(s):
            for tid in jobs[app]:
                t = cluster.tasks[tid]
                if tid in table[t.node][s] or any(cluster.tasks[o].node == t.node
                                                  for o in table[t.node][s]):
                    raise ValueError(f"slot {s}: node {t.node} would run two applications")
                table[t.node][s] = table[t.node][s] | {tid}
    L = schedule.slot_us
    jitter = None
    if params.regime == "sync" and n > 1:
        # the slaves' first draws (at c_srv) go in the order of their nodes' first
        # dispatch: the order in which the nodes got their first task
        order = list(dict.fromkeys([t.node for t in cluster.tasks] + list(range(n))))
        m1 = (-phases[0]) // L + 1
        jitter = _Jitter(rng, params.delta_ctrl_us, params.jitter_us, params.c_srv_us,
                         phases[0], L, [(k, m1) for k in order if k > 0])
    servers = []
    for k in range(n):
        slave = params.regime == "sync" and k > 0
        every, skip = params.act_every_slot, params.skip_idle
        if slave and L <= params.jitter_us + params.c_srv_us:
            # a slave could not wait for its delays to be due before its next action
            every, skip = True, False
        prog = _server_program(table, k, phases[0] if slave else phases[k], L,
                               params.c_srv_us, jitter if slave else None,
                               params.delta_ctrl_us, action_log, every, skip)
        servers.append(cluster.spawn(k, prog, klass=SERVER, daemon=True))
    return servers
