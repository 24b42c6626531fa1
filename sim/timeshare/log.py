"""The structured event log of a time-sharing run.

Each record is a tuple ``(time_us, kind, node, task, a, b)``; time in microseconds.
Kinds and their fields:

========== ====================================================================
config     a = dict(n_nodes, mem_pages, latency_us, fault_latency_us) (first record)
arrive     task created on node; a = job (None: local), b = work in µs (None: unknown)
dispatch   the policy picked the task for the CPU
ref        page reference at dispatch; a = page, b = 1 hit / 0 fault
load       page a loaded for task; b = (task, page) evicted or None
free       all pages of the finished task released
off        task left the CPU; a = "quantum" | "preempt" | "block" | "fault" |
           "finish" | "stop"
spin       a = 1: the running task starts spinning in a receive; 0: stops spinning
block      task entered the sleep queue; a = "recv" | "fault" | "sleep"
wake       task left the sleep queue (ready, or stopped-and-runnable)
stop/cont  task stopped / continued
send       a = message id, b = destination task
deliver    message a entered the RMQ of task
recv       task consumed message a
finish     task's program ended
end        a = True when every non-daemon task finished (a complete run)
========== ====================================================================
"""

from __future__ import annotations

import json
from typing import Any

Record = tuple[int, str, int, int, Any, Any]


class EventLog:
    """An append-only list of records; ``enabled=False`` records nothing."""

    __slots__ = ("records", "enabled")

    def __init__(self, enabled: bool = True):
        self.records: list[Record] = []
        self.enabled = enabled

    def add(self, time: int, kind: str, node: int, task: int, a: Any = None,
            b: Any = None) -> None:
        if self.enabled:
            self.records.append((time, kind, node, task, a, b))

    def config(self, **fields: Any) -> None:
        if self.enabled:
            self.records.append((0, "config", -1, -1, dict(fields), None))

    def __len__(self) -> int:
        return len(self.records)

    def kinds(self, *kinds: str) -> list[Record]:
        """Records of the given kinds, in order."""
        return [r for r in self.records if r[1] in kinds]

    def to_jsonl(self) -> str:
        """One JSON array per line (tuples become lists)."""
        return "\n".join(json.dumps(list(r)) for r in self.records)
