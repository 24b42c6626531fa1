"""SIGTERM for the command line.

SIGTERM is raised in the main thread as :class:`Terminated` (a ``KeyboardInterrupt``), so
every ``finally`` runs: a solver's children are killed and its temporary files removed
before the command ends with exit 143. A main thread inside a long native call (CP-SAT
without a limit, say) runs no Python until the call returns, so a watcher thread, woken by
the signal itself (``signal.set_wakeup_fd``), ends the process with exit 143
:data:`TERM_GRACE` seconds after the signal if the command is still running; its children
die with it (``models.cbc.die_with_parent``, the MIP fork server's watch of its parent) and
the next MIP run removes its temporary files (``models.cbc.sweep_stale``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["TERM_GRACE", "Terminated", "sigterm_raises"]

TERM_GRACE = 2.0
"""Seconds after SIGTERM after which the watcher ends a command still running."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """Within it (main thread only; elsewhere nothing changes), SIGTERM raises
    :class:`Terminated`, and a command still running :data:`TERM_GRACE` seconds after
    it ends with exit 143."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    previous_fd = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    previous = signal.signal(signal.SIGTERM, _terminate)
    done = threading.Event()

    def watch() -> None:
        with os.fdopen(r, "rb", buffering=0) as pipe:
            while True:
                data = pipe.read(64)
                if not data:  # the command ended (the write end is closed)
                    return
                if signal.SIGTERM in data and not done.wait(TERM_GRACE):
                    sys.stderr.write("schedsearch: terminated\n")
                    sys.stderr.flush()
                    os._exit(143)

    threading.Thread(target=watch, name="sigterm-watch", daemon=True).start()
    try:
        yield
    finally:
        done.set()
        signal.signal(signal.SIGTERM, previous)
        signal.set_wakeup_fd(previous_fd)
        os.close(w)
