"""Python's cycle collector paused around work that allocates many objects and makes no
reference cycles (a loader's tuples, an enumeration's candidates).

Each collection of the oldest generation scans every object the process holds, and the
collector starts one every few hundred thousand allocations; in a process with a large
heap (a test worker late in a run, a notebook holding a trace) the scans cost more than
the work itself. Reference counting still frees everything such work drops.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cycle collector off for the ``with`` block (back on after it if it was on)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
