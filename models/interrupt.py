"""Ctrl-C during a solve: the backend is asked to stop and keep its best answer; a second
Ctrl-C stops at once (``KeyboardInterrupt``).

A MIP worker is asked through :class:`CtrlC`. CP-SAT is run by :func:`run_cpsat`: left
to itself, CP-SAT catches SIGINT in C++ and stops quietly, so the caller never learns
of it and a portfolio would go on to its next stage; :func:`run_cpsat` turns CP-SAT's
own catching off, stops the search from a thread woken by the signal
(``signal.set_wakeup_fd``; the solve releases the GIL) and records the Ctrl-C, so
:func:`happened` says so afterwards. SIGTERM, raised by the CLI as a
``KeyboardInterrupt``, stops the search the same way before it is raised.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["CtrlC", "GRACE", "count", "happened", "run_cpsat"]

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
        _record()

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
_COUNT = [0]


def _record() -> None:
    _COUNT[0] += 1
    _HAPPENED.set()


def count() -> int:
    """How many Ctrl-Cs stopped a backend in this process so far: a
    :class:`models.deadline.Deadline` made before one is over (every later stage of a
    portfolio is then skipped as if its time were up)."""
    return _COUNT[0]


def happened() -> bool:
    """Whether a Ctrl-C asked a backend of this process to stop (its answer, or the
    family's fallback, is then the best found so far, not what the limit allowed)."""
    return _HAPPENED.is_set()


_DONE = b"\xff"
"""The byte that ends :func:`run_cpsat`'s watcher (no signal has this number)."""


def run_cpsat(solver: Any, model: Any, callback: Any = None) -> Any:
    """``solver.solve(model[, callback])`` for a CP-SAT ``CpSolver``, stopped by Ctrl-C
    (or SIGTERM) with its best answer (the status CP-SAT gives then: FEASIBLE or
    UNKNOWN) and the Ctrl-C recorded (:func:`count`, :func:`happened`). A wakeup fd the
    process already has (the CLI's SIGTERM watch, ``sim.cli.signals``) gets every signal
    byte passed on. Outside the main thread CP-SAT's own SIGINT catching is kept (it stops
    the search, unrecorded)."""
    args = (model,) if callback is None else (model, callback)
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(*args)
    rfd, wfd = os.pipe()
    os.set_blocking(wfd, False)
    previous_fd = signal.set_wakeup_fd(wfd, warn_on_full_buffer=False)
    asked = threading.Event()

    def watch() -> None:
        while (b := os.read(rfd, 1)) and b != _DONE:
            if previous_fd != -1:
                try:
                    os.write(previous_fd, b)
                except OSError:
                    pass
            if b[0] in (signal.SIGINT, signal.SIGTERM) and not asked.is_set():
                if b[0] == signal.SIGINT:
                    asked.set()
                solver.stop_search()

    solver.parameters.catch_sigint_signal = False
    previous = signal.getsignal(signal.SIGINT)
    ours = previous is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, lambda *_: asked.set())
    watcher = threading.Thread(target=watch, name="cpsat-ctrl-c", daemon=True)
    watcher.start()
    try:
        return solver.solve(*args)
    finally:
        os.write(wfd, _DONE)
        watcher.join()
        signal.set_wakeup_fd(previous_fd, warn_on_full_buffer=False)
        os.close(rfd)
        os.close(wfd)
        if ours:
            signal.signal(signal.SIGINT, previous)
        if asked.is_set():
            _record()
