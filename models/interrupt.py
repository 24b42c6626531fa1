"""Ctrl-C during a MIP solve: the backend is asked to stop and keep its best answer, as
CP-SAT does on Ctrl-C; a second Ctrl-C stops at once (``KeyboardInterrupt``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["CtrlC", "GRACE", "happened"]

GRACE = 2.0
"""Seconds a backend asked to stop gets to write its answer before it is killed."""


class CtrlC:
    """A context in which the first SIGINT calls ``ask()`` (ask the backend to stop,
    keeping its best answer; it returns False when there is nothing to ask yet, and
    then KeyboardInterrupt is raised at once) instead of raising KeyboardInterrupt; a
    second SIGINT raises it. Active only in the main thread and while Python's own
    SIGINT handler is the one installed (a caller's handler is left alone).

    Attributes
    ----------
    asked : threading.Event
        Set once the backend was asked to stop.
    """

    def __init__(self, ask: Callable[[], bool]) -> None:
        self.ask = ask
        self.asked = threading.Event()
        self._previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        if self.asked.is_set() or not self.ask():
            raise KeyboardInterrupt
        self.asked.set()
        _HAPPENED.set()

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


_HAPPENED = threading.Event()


def happened() -> bool:
    """Whether a Ctrl-C asked a backend of this process to stop (its answer, or the
    family's fallback, is then the best found so far, not what the limit allowed)."""
    return _HAPPENED.is_set()
