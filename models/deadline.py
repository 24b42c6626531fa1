"""A wall-clock budget shared by model building and the back end, and the one reading
of a ``time_limit`` every exact solver shares (:func:`limit_of`)."""

from __future__ import annotations

import math
import time
from typing import Any

from models import interrupt

__all__ = ["Deadline", "MAX_SECONDS", "TimeUp", "limit_of"]

MAX_SECONDS = 1e9
"""Longest time limit (seconds, about 31.7 years) a solver, a thread's wait or a child
process is given. A longer limit outlasts any run, so it is no limit: :func:`limit_of`
reads it as None (exact), and nothing downstream meets a number a clock, a thread's
timeout (``threading.TIMEOUT_MAX``, about 292 years) or a solver's own limit (SCIP's
``limits/time`` stops at 1e20) cannot hold."""


def limit_of(time_limit: Any, field: str = "time_limit") -> float | None:
    """``time_limit`` (seconds) as the solvers use it: None for no limit or one over
    :data:`MAX_SECONDS`, else the float. Raises ValueError naming ``field`` for a
    value that is not a finite number >= 0 (NaN, infinity, negative, text)."""
    if time_limit is None:
        return None
    try:
        value = float(time_limit)
    except (TypeError, ValueError, OverflowError):
        value = math.nan
    if isinstance(time_limit, bool) or not math.isfinite(value) or value < 0:
        from sim.problems.fields import short

        raise ValueError(f"{field} must be a finite number of seconds >= 0, got "
                         f"{short(time_limit)}")
    return None if value > MAX_SECONDS else value


class TimeUp(Exception):
    """Raised by :meth:`Deadline.check`: the budget ran out inside a long stretch of work
    (a model's build), caught once where the solver answers with what it has."""


class Deadline:
    """``time_limit`` seconds from construction, or from ``start`` (a
    ``time.perf_counter`` value) when given (None, or over :data:`MAX_SECONDS`: no
    limit; ValueError for one that is not a finite number >= 0).

    Solvers call :meth:`expired` while they build a model or enumerate, and pass
    :meth:`left` (seconds) on to CP-SAT or CBC. A Ctrl-C that stopped a backend after
    construction (:func:`models.interrupt.count`) ends the budget at once, with or
    without a limit, so that later stages are skipped and the best answer so far stands.
    """

    def __init__(self, time_limit: float | None, start: float | None = None) -> None:
        time_limit = limit_of(time_limit)
        self.t0 = time.perf_counter() if start is None else start  # perf_counter value
        self.limit = time_limit
        self.ctrl_c = interrupt.count()

    def shortened(self, seconds: float) -> Deadline:
        """The same budget ``seconds`` shorter: the same start and the same Ctrl-C baseline
        (a Ctrl-C since this budget began ends the shorter one too)."""
        out = Deadline(None if self.limit is None else max(0.0, self.limit - seconds),
                       start=self.t0)
        out.ctrl_c = self.ctrl_c
        return out

    def interrupted(self) -> bool:
        """Whether a Ctrl-C stopped a backend since this budget began."""
        return interrupt.count() > self.ctrl_c

    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.t0

    def left(self, floor: float = 0.01) -> float | None:
        """Seconds left (at least ``floor``), or None without a limit."""
        if self.interrupted():
            return floor
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
        if self.interrupted():
            return 0.0
        if self.limit is None:
            return None
        return max(self.limit - self.reserve(fraction, cap) - self.elapsed(), 0.0)

    def expired(self, margin: float = 0.0) -> bool:
        """Whether less than ``margin`` seconds of the budget are left."""
        if self.interrupted():
            return True
        return self.limit is not None and self.elapsed() >= self.limit - margin

    def check(self, margin: float = 0.0) -> None:
        """Raise :class:`TimeUp` when less than ``margin`` seconds are left
        (:meth:`expired`): one line per clock read inside a build, one ``except`` for
        the whole of it."""
        if self.expired(margin):
            raise TimeUp
