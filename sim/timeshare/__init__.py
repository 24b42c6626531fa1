"""Time-sharing cluster core (shared by CSM and the BSP scheduling servers).

All times are integer **microseconds**.

Run a cluster::

    from sim.timeshare import Cluster, Policy, Compute, Send, Recv, Sleep

    def worker(ctx):                     # a task program: a generator of operations
        peers = ctx.cluster.jobs[ctx.task.job]
        yield Compute(5_000)             # 5 ms of CPU
        yield Send(peers[1 - ctx.task.rank], tag=0)
        msg = yield Recv(tag=0, spin_us=100)   # spin 100 µs, then block
        yield Compute(1_000)

    cl = Cluster(2, Policy(quantum_us=10_000), latency_us=500, seed=1)
    cl.spawn_job(0, [0, 1], worker)      # one task per node, ranks 0 and 1
    cl.at(20_000, lambda c, t: c.spawn(0, lambda ctx: iter([Compute(3_000)])))
    cl.run()
    cl.tasks[0].finish                   # µs
    check(cl.log.records)                # independent re-validation (sim.timeshare.check)

Write a policy by subclassing :class:`Policy` (round robin) and overriding
``insert(node, task, now, reason) -> preempt?`` (place the task in ``node.rq``, index 0
runs next), ``select(node, now)``, ``quantum(node, task, now)``, ``remove(node, task)``,
``wakeup_delay(node, task, now, cause)``; see :mod:`sim.timeshare.policy`. Tasks carry
``klass`` / ``data`` / ``mes`` / ``de`` for policy state; ``node.mem_demand`` is N_k.mem;
``cluster.pg_fault(task)`` is eq. 3; ``len(task.rmq)`` / ``task.smq`` are the RMQ / SMQ
counts.

Stop/continue (SIGSTOP/SIGCONT): ``cluster.stop(tid)`` / ``cluster.cont(tid)`` from a
callback (``cluster.at``) or another task's program. ``cluster.reschedule(node)`` forces
a new selection on a node at the current instant (e.g. at a slot boundary);
``cluster.live_tasks`` / ``cluster.pending_calls`` tell a periodic timer when to stop
re-arming itself. A server that consumes CPU is a
``daemon=True`` task looping on ``Sleep`` / ``Compute``; the run ends when every
non-daemon task has finished and no callback is pending (or at ``run(until=...)``).

Paged memory: ``Cluster(..., mem_pages=M, fault_latency_us=20_000)`` and
``spawn(..., vir_mem=pages, ws=WorkingSet(...), resident=pages)``; every dispatch makes
one page reference (global LRU, constant fault latency). ``mem_pages=None`` switches
memory off.

The log (``cluster.log.records``) is a list of ``(time_us, kind, node, task, a, b)``
records described in :mod:`sim.timeshare.log`; :func:`sim.timeshare.check.check`
re-validates a run from it alone.
"""

from sim.timeshare.cluster import Cluster, Node, Task, TaskContext
from sim.timeshare.memory import PagedMemory, WorkingSet
from sim.timeshare.ops import Compute, Message, Recv, Send, Sleep
from sim.timeshare.policy import Policy

__all__ = ["Cluster", "Compute", "Message", "Node", "PagedMemory", "Policy", "Recv",
           "Send", "Sleep", "Task", "TaskContext", "WorkingSet"]
