"""Paged memory of one node: M page frames, global LRU, working-set phases.

Model (spec 3.1 and AMB-4.11, page-level default): each task has virtual pages
``0 .. vir_mem - 1``. Its working set (WS) is a contiguous window of ``wrk`` pages at a
uniformly random offset, redrawn at the end of every phase; a phase lasts an
exponential amount of the task's own CPU time (microseconds). At every dispatch one
page is drawn uniformly from the WS: a resident page is touched (moved to the MRU end
of the node's single LRU list); a missing page is a page fault: the task sleeps for the
constant fault latency (microseconds) and then the page is loaded, evicting the node's
globally least recently used page (whichever task owns it) when all M frames are full.
"""

from __future__ import annotations

import random
from collections import OrderedDict

#: Page numbers are packed with the task id into one int key: ``tid << PAGE_BITS | page``.
PAGE_BITS = 20


class WorkingSet:
    """Working-set state of one task.

    Parameters
    ----------
    vir_mem : int
        Virtual size in pages (>= 1).
    ws_mean : float
        Mean WS size as a fraction of ``vir_mem`` (0.5 local, 0.8 distributed in the paper).
    ws_std : float
        Standard deviation of the WS size as a fraction of ``vir_mem`` (AMB-4.11 default 0.1);
        the drawn size is clipped to ``[1, vir_mem]``.
    phase_mean_us : float
        Mean phase length in microseconds of the task's CPU time (the paper: 0.1 tc).
        ``0`` or less: one phase for the whole life of the task.
    """

    __slots__ = ("vir_mem", "ws_mean", "ws_std", "phase_mean_us", "wrk", "offset",
                 "phase_end", "resident", "res_ws", "faults", "refs", "owner")

    def __init__(self, vir_mem: int, ws_mean: float, ws_std: float, phase_mean_us: float):
        if vir_mem < 1:
            raise ValueError(f"vir_mem must be >= 1 page, got {vir_mem}")
        if not 0.0 < ws_mean <= 1.0:
            raise ValueError(f"ws_mean must be in (0, 1], got {ws_mean}")
        if ws_std < 0:
            raise ValueError(f"ws_std must be >= 0, got {ws_std}")
        self.vir_mem = int(vir_mem)
        self.ws_mean = float(ws_mean)
        self.ws_std = float(ws_std)
        self.phase_mean_us = float(phase_mean_us)
        self.wrk = 1
        self.offset = 0
        self.phase_end = 0
        self.resident: set[int] = set()
        self.res_ws = 0
        self.faults = 0
        self.refs = 0
        self.owner: int | None = None

    def fresh(self) -> WorkingSet:
        """A new, unowned working set with the same parameters."""
        return WorkingSet(self.vir_mem, self.ws_mean, self.ws_std, self.phase_mean_us)

    def new_phase(self, cpu_us: int, rng: random.Random) -> None:
        """Draw a new WS size and offset; the phase ends after an Exp(phase_mean_us) CPU time."""
        v = self.vir_mem
        w = int(round(rng.gauss(self.ws_mean * v, self.ws_std * v)))
        self.wrk = min(max(w, 1), v)
        self.offset = rng.randrange(v - self.wrk + 1)
        if self.phase_mean_us > 0:
            self.phase_end = cpu_us + max(1, int(rng.expovariate(1.0 / self.phase_mean_us)))
        else:
            self.phase_end = -1
        lo, hi = self.offset, self.offset + self.wrk
        self.res_ws = sum(1 for p in self.resident if lo <= p < hi)

    def in_ws(self, page: int) -> bool:
        return self.offset <= page < self.offset + self.wrk

    def pg_fault(self, literal: bool = False) -> float:
        """Page-fault probability, eq. 3.

        Corrected reading (AMB-4.2 default): ``max(0, 1 - res_ws / wrk)``, the fraction
        of the WS not resident. Literal reading: ``0`` if ``wrk < res_mem`` else
        ``res_mem / wrk``.
        """
        if literal:
            res = len(self.resident)
            return 0.0 if self.wrk < res else res / self.wrk
        return max(0.0, 1.0 - self.res_ws / self.wrk)


class PagedMemory:
    """The M page frames of one node under global LRU replacement.

    Parameters
    ----------
    pages : int
        M, the number of page frames (> 0).
    fault_latency_us : int
        Constant page-fault service time in microseconds (the paper: 20 ms = 20000 µs);
        concurrent faults are served in parallel.
    """

    __slots__ = ("pages", "fault_latency_us", "lru")

    def __init__(self, pages: int, fault_latency_us: int):
        if pages <= 0:
            raise ValueError(f"mem_pages must be > 0, got {pages}")
        if fault_latency_us < 0:
            raise ValueError(f"fault_latency_us must be >= 0, got {fault_latency_us}")
        self.pages = int(pages)
        self.fault_latency_us = int(fault_latency_us)
        self.lru: OrderedDict[int, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self.lru)
