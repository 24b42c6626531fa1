"""The ready-queue policy protocol of a time-sharing node, and plain round robin.

A policy decides three things and may observe the rest:

- ``insert(node, task, now, reason) -> bool``: put a task that became ready into
  ``node.rq`` (a Python list, index 0 = next to run). ``reason`` is one of
  ``"arrive"``, ``"quantum"`` (quantum expired), ``"preempted"`` (forced off the CPU by a
  preemption request), ``"wake_recv"`` (its message arrived), ``"fault"`` (its page was
  loaded), ``"sleep"`` (its timer expired) or ``"continue"`` (resumed after a stop).
  Return True to ask the node to preempt the running task (it is taken off at the same
  instant, after every other event of that instant, and re-inserted with
  ``"preempted"``).
- ``select(node, now) -> Task | None``: remove and return the next task to run.
- ``quantum(node, task, now) -> int``: the time slice in microseconds of CPU time for
  this dispatch.

Optional hooks: ``remove(node, task)`` (a ready task was stopped),
``wakeup_delay(node, task, now, cause) -> int`` (microseconds between the event that
readies a blocked task and its insertion; ``cause`` is ``"recv"``), ``attach(cluster)``
(called once before the run). All times are integer microseconds.
"""

from __future__ import annotations

import random
from typing import Any, Protocol

#: a task of the cluster (``sim.timeshare.cluster.Task``): a policy only orders them
Task = Any


class Node(Protocol):
    """What a policy sees of a node (``sim.timeshare.cluster.Node`` follows it): its ready
    queue, index 0 next to run."""

    rq: list[Task]


class Cluster(Protocol):
    """What every policy sees of the cluster it is attached to
    (``sim.timeshare.cluster.Cluster`` follows it): the run's seed. A policy that needs
    more (tasks, jobs, page-fault times) reads it from the cluster it was given."""

    seed: int


class Policy:
    """Round robin with a fixed or exponential quantum; the base class of all policies.

    Parameters
    ----------
    quantum_us : int
        Mean time slice in microseconds of CPU time (> 0).
    quantum_dist : {"fixed", "exp"}
        ``"fixed"``: every slice is ``quantum_us``; ``"exp"``: each dispatch draws
        Exp(mean ``quantum_us``) rounded up to at least 1 µs (AMB-4.9).
    """

    name = "rr"

    def __init__(self, quantum_us: int = 100_000, quantum_dist: str = "fixed"):
        if not isinstance(quantum_us, int) or quantum_us <= 0:
            raise ValueError(f"quantum_us must be a positive integer, got {quantum_us!r}")
        if quantum_dist not in ("fixed", "exp"):
            raise ValueError(f"quantum_dist must be 'fixed' or 'exp', got {quantum_dist!r}")
        self.quantum_us = quantum_us
        self.quantum_dist = quantum_dist
        self.rng = random.Random(0)
        self.cluster: Any = None

    def attach(self, cluster: Cluster) -> None:
        """Called once by the cluster before the run; seeds the quantum stream."""
        self.cluster = cluster
        self.rng = random.Random(cluster.seed * 7919 + 17)

    def params(self) -> dict[str, Any]:
        """The recorded parameters of this policy."""
        return {"name": self.name, "quantum_us": self.quantum_us,
                "quantum_dist": self.quantum_dist}

    # --- the protocol -------------------------------------------------------------
    def insert(self, node: Node, task: Task, now: int, reason: str) -> bool:
        """Append at the bottom of the RQ (round robin); never preempt."""
        node.rq.append(task)
        return False

    def select(self, node: Node, now: int) -> Task | None:
        """Pop the head of the RQ."""
        return node.rq.pop(0) if node.rq else None

    def remove(self, node: Node, task: Task) -> None:
        """Take a ready task out of the RQ (it was stopped)."""
        node.rq.remove(task)

    def quantum(self, node: Node, task: Task, now: int) -> int:
        """Time slice in microseconds of CPU time for this dispatch."""
        if self.quantum_dist == "fixed":
            return self.quantum_us
        return max(1, int(self.rng.expovariate(1.0 / self.quantum_us)))

    def wakeup_delay(self, node: Node, task: Task, now: int, cause: str) -> int:
        """Microseconds from message delivery to the insertion of a blocked receiver."""
        return 0
