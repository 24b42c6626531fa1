"""A small deterministic event core.

Events are ordered by ``(time, ordering class, sequence)``: earlier time first; at
equal time, the lower ordering class first; within a class, the order of insertion.
The batch machine uses the classes below (ends before notices before arrivals before
policy wake-ups, so that a scheduler deciding at time t sees every job that ended at t
and every job that arrived at t). The time-sharing cluster defines its own classes on
the same core.
"""

from __future__ import annotations

import heapq
from typing import Any

#: Ordering classes of the batch machine, in processing order at equal time.
END = 0
OVERRUN = 1
ARRIVAL = 2
WAKEUP = 3


class EventQueue:
    """Heap of ``(time, cls, seq, payload)``; no global state."""

    __slots__ = ("_heap", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[Any, int, int, Any]] = []
        self._seq = 0

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def push(self, time: Any, cls: int, payload: Any = None) -> None:
        """Schedule ``payload`` at ``time`` with ordering class ``cls``."""
        heapq.heappush(self._heap, (time, cls, self._seq, payload))
        self._seq += 1

    def pop(self) -> tuple[Any, int, int, Any]:
        """Remove and return the first event ``(time, cls, seq, payload)``."""
        return heapq.heappop(self._heap)

    def peek_time(self) -> Any:
        """Time of the first event, or None when empty."""
        return self._heap[0][0] if self._heap else None

    def peek(self) -> tuple[Any, int, int, Any] | None:
        """The first event without removing it, or None."""
        return self._heap[0] if self._heap else None
