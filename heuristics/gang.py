"""Gang-scheduled reference for the CSM experiments: explicit coordination.

An Ousterhout matrix of rows: a distributed job joins the first row whose jobs use none
of its nodes (a new row otherwise) and leaves it when its last task finishes. Time is cut
into slots of ``slot_us`` microseconds; slot s of a round of ``rows + 1`` slots belongs
to row s, the last slot to local tasks. On every node the policy runs the task of the
current row's job first, then local tasks, and a distributed task of another row only
when ``fill`` is True (default False: perfect coordination, every job's tasks run only
together). Use it on a cluster without paged memory (``mem_pages=None``) for the "no
paging" bound. With ``assignment`` (job id -> row label, e.g. an optimal
``gang_schedule`` solution from ``models.gang_schedule``) every job joins the row of its
label instead of the first fit; jobs of one label must not share a node (checked).
Times in microseconds.
"""

from __future__ import annotations

from typing import Any

from sim.timeshare.cluster import Cluster, Node, Task
from sim.timeshare.policy import Policy


class Gang(Policy):
    """Ready-queue side of the gang reference; call :meth:`start` once after building
    the cluster (it arms the slot timer)."""

    name = "gang"

    def __init__(self, slot_us: int = 100_000, fill: bool = False,
                 assignment: dict[int, int] | None = None):
        super().__init__(quantum_us=slot_us, quantum_dist="fixed")
        self.slot_us = slot_us
        self.fill = fill
        self.rows: list[set[int]] = []      # job ids per row
        self.row_nodes: list[set[int]] = []
        self.slot = 0
        self._job_row: dict[int, int] = {}
        self.assignment = dict(assignment) if assignment is not None else None
        self.labels: list[int | None] = []   # the assignment's label of each row

    def params(self) -> dict[str, Any]:
        return {**super().params(), "slot_us": self.slot_us, "fill": self.fill,
                "assignment": None if self.assignment is None else
                {str(j): r for j, r in sorted(self.assignment.items())}}

    def start(self, cluster: Cluster) -> None:
        cluster.at(0, self._tick)

    # --- the matrix -------------------------------------------------------------------
    def _place(self, job: int, nodes: set[int]) -> None:
        if self.assignment is not None:
            label = self.assignment[job]
            for r, lab in enumerate(self.labels):
                if lab == label:
                    if self.row_nodes[r] & nodes:
                        raise ValueError(f"assignment: job {job} shares nodes "
                                         f"{sorted(self.row_nodes[r] & nodes)} in row {label}")
                    self.rows[r].add(job)
                    self.row_nodes[r] |= nodes
                    self._job_row[job] = r
                    return
            self.rows.append({job})
            self.row_nodes.append(set(nodes))
            self.labels.append(label)
            self._job_row[job] = len(self.rows) - 1
            return
        for r, used in enumerate(self.row_nodes):
            if not used & nodes:
                self.rows[r].add(job)
                used |= nodes
                self._job_row[job] = r
                return
        self.rows.append({job})
        self.row_nodes.append(set(nodes))
        self.labels.append(None)
        self._job_row[job] = len(self.rows) - 1

    def _current(self) -> int | None:
        """The row of the current slot, or None in the local slot."""
        r = self.slot % (len(self.rows) + 1)
        return r if r < len(self.rows) else None

    def _tick(self, c: Cluster, now: int) -> None:
        # drop finished jobs and empty rows
        for r in range(len(self.rows) - 1, -1, -1):
            for j in list(self.rows[r]):
                if all(c.tasks[t].finish is not None for t in c.jobs[j]):
                    self.rows[r].discard(j)
                    self.row_nodes[r] -= {c.tasks[t].node for t in c.jobs[j]}
                    del self._job_row[j]
            if not self.rows[r]:
                del self.rows[r], self.row_nodes[r], self.labels[r]
                self._job_row = {j: (q - 1 if q > r else q) for j, q in self._job_row.items()}
        self.slot += 1
        for k in range(c.n_nodes):
            c.reschedule(k)
        if c.live_tasks or c.pending_calls:
            c.at(now + self.slot_us, self._tick)

    # --- the protocol -----------------------------------------------------------------
    def _rank(self, t: Task) -> int:
        if t.job is None:
            return 1
        if t.job not in self._job_row:
            tids = self.cluster.jobs[t.job]
            if tids[-1] >= len(self.cluster.tasks):  # the job is still being spawned
                return 2
            self._place(t.job, {self.cluster.tasks[q].node for q in tids})
        cur = self._current()
        if cur is not None and self._job_row[t.job] == cur:
            return 0
        return 2

    def insert(self, node: Node, task: Task, now: int, reason: str) -> bool:
        """Append; preempt a running task of lower rank when the current row's task
        becomes ready (it was blocked on a receive or a fault)."""
        node.rq.append(task)
        run = node.running
        return run is not None and self._rank(task) == 0 and self._rank(run) > 0

    def select(self, node: Node, now: int) -> Task | None:
        best = None
        for i, t in enumerate(node.rq):
            r = self._rank(t)
            if r == 2 and not self.fill:
                continue
            if best is None or r < best[0]:
                best = (r, i)
        if best is None:
            return None
        return node.rq.pop(best[1])

    def quantum(self, node: Node, task: Task, now: int) -> int:
        """Until the end of the current slot (at least 1 µs)."""
        return max(1, self.slot_us - (now % self.slot_us))
