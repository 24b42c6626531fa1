"""A wall-clock budget shared by model building and the back end."""

from __future__ import annotations

import time

__all__ = ["Deadline"]


class Deadline:
    """``time_limit`` seconds from construction, or from ``start`` (a
    ``time.perf_counter`` value) when given (None = no limit).

    Solvers call :meth:`expired` while they build a model or enumerate, and pass
    :meth:`left` (seconds) on to CP-SAT or CBC.
    """

    def __init__(self, time_limit: float | None, start: float | None = None) -> None:
        if time_limit is not None:
            time_limit = float(time_limit)
            if not time_limit >= 0 or time_limit == float("inf"):
                raise ValueError(f"time_limit must be a finite number >= 0 seconds, "
                                 f"got {time_limit!r}")
        self.t0 = time.perf_counter() if start is None else start  # perf_counter value
        self.limit = time_limit

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.t0

    def left(self, floor: float = 0.01) -> float | None:
        """Seconds left (at least ``floor``), or None without a limit."""
        if self.limit is None:
            return None
        return max(self.limit - self.elapsed(), floor)

    def reserve(self, fraction: float = 0.05, cap: float = 0.5) -> float:
        """Seconds kept back at the end of the limit (``fraction`` of it, at most ``cap``)
        for the work after a stop: reading and checking the answer, freeing the model."""
        return 0.0 if self.limit is None else min(cap, fraction * self.limit)

    def solver_time(self, fraction: float = 0.05, cap: float = 0.5) -> float | None:
        """Seconds to give a CP-SAT stage: the time left less a reserve of ``fraction`` of
        the limit (at most ``cap`` seconds) for reading the solution, checking it and
        freeing the model after CP-SAT returns (CP-SAT also checks its own clock only
        now and then on a loaded machine); 0 when nothing is left, None without a limit."""
        if self.limit is None:
            return None
        return max(self.limit - self.reserve(fraction, cap) - self.elapsed(), 0.0)

    def expired(self, margin: float = 0.0) -> bool:
        """Whether less than ``margin`` seconds of the budget are left."""
        return self.limit is not None and self.elapsed() >= self.limit - margin
