"""Targets 3-7 of spec 2.6 under the wake-up and barrier readings (Karl).

Six readings: the barrier (AMB-2.2) central or all-to-all, times three wake-up readings of
a blocked controlled thread: ``immediate`` (after ``w_ctl`` = 100 µs), ``tick`` (every
blocked wake-up, barrier releases included, waits for the node's next 10 ms timer tick) and
``tick-receive`` (only the complete pattern's message receives wait for the tick; a thread
released from the barrier wakes after ``w_ctl``: ``BSPParams(tick_wakeups="receive")``).
Every other constant is that of the figures (``figs.py``): i = 50 measurements per cell
(seeds 0..49), n = 50 supersteps, 2 of 10 slots of 20 ms, the 6 x 5 grid of g and v.

Sources of the cells. The central barrier under ``immediate`` and ``tick`` is the
committed ``results/cells.json`` of the figures, read only. The new readings are computed
into ``results/wakeups_central.json`` and ``results/wakeups_alltoall.json``. Under
``tick-receive`` the barrier pattern has no message receive, so its runs are exactly those
of ``immediate`` (tested in ``tests/timeshare/test_bsp_properties.py``); those cell sets
are taken from ``immediate`` instead of being simulated again. Target 7 (Fig. 1, one node,
no messages) does not depend on either reading and is read from ``results/fig1.json``.

Run ``python -m sim.experiments.karl.wakeups`` (full; writes ``results/wakeups.md``) or
``--quick`` (i = 5, n = 10, every cell computed, written to ``results/bsp_quick/`` at the
repository top and marked PARTIAL).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from sim.argparser import Parser
from sim.experiments.common import markdown_table, write_atomic
from sim.experiments.common import stamp as provenance
from sim.experiments.karl.figs import (
    FIGS,
    FULL_DIR,
    QUICK_DIR,
    TARGET_LABELS,
    TICK_ON_RECEIVES,
    Cells,
    _set_key,
    target3,
    target4,
    target5,
    target6,
    target7,
)

BARRIERS = ("central", "alltoall")
WAKES = ("immediate", "tick", TICK_ON_RECEIVES)
READINGS = tuple((b, w) for b in BARRIERS for w in WAKES)
FIG_SETS = ("fig6", "fig7", "fig8r", "fig9")   # their a (server) and b (none) cell sets
WAKE_TEXT = {"immediate": "immediate", "tick": "tick (every wake-up)",
             TICK_ON_RECEIVES: "tick on receives only"}
BARRIER_TEXT = {"central": "central", "alltoall": "all-to-all"}


class Sources:
    """Where the cells of each reading come from (see the module docstring)."""

    def __init__(self, out: Path, quick: bool, workers: int):
        i, n_over = (5, 10) if quick else (50, None)
        self.quick = quick
        self.committed = None if quick else Cells(FULL_DIR, i=i, n_over=n_over, workers=1)
        self.new = {b: Cells(out, i=i, n_over=n_over, workers=workers, barrier=b,
                             name=f"wakeups_{b}.json") for b in BARRIERS}
        self.used: set[tuple[str, str]] = set()   # (file, cell set) read by get()

    def _where(self, barrier: str, wake: str, cset: tuple) -> tuple[Cells, str]:
        if cset[3] == "none":
            wake = "immediate"          # the switch does not reach the time-sharing class
        if wake == TICK_ON_RECEIVES and cset[1] == "barrier":
            wake = "immediate"          # no message receive: the same runs
        if self.committed is not None and barrier == "central" and wake != TICK_ON_RECEIVES:
            return self.committed, wake
        return self.new[barrier], wake

    def compute(self, order: list[tuple[str, str, tuple]]) -> None:
        """Compute every missing cell set, one set at a time (each saved when done)."""
        for barrier, wake, cset in order:
            cells, w = self._where(barrier, wake, cset)
            if cells is self.committed:
                cells.get(cset, w)      # KeyError if the committed file lacks it
                continue
            t = time.perf_counter()
            cells.need([(cset, w)])
            print(f"[{barrier} {w} {cset}: {time.perf_counter() - t:.0f} s]", file=sys.stderr,
                  flush=True)

    def get(self, barrier: str, wake: str, cset: tuple):
        cells, w = self._where(barrier, wake, cset)
        self.used.add((cells.path.name, _set_key(cset, w)))
        return cells.get(cset, w)

    def provenance(self) -> dict[str, list[str]]:
        """Per file, the distinct provenance stamps of the cell sets read."""
        files = {c.path.name: c for c in (self.committed, *self.new.values()) if c}
        out: dict[str, set[str]] = {}
        for name, key in sorted(self.used):
            out.setdefault(name, set()).add(files[name].data["_provenance"][key])
        return {k: sorted(v) for k, v in out.items()}


def _order() -> list[tuple[str, str, tuple]]:
    """Every cell set needed, the new readings' complete pattern first."""
    sets = [(b, w, FIGS[f][x]) for b in BARRIERS for w in WAKES for f in FIG_SETS
            for x in "ab"]
    sets = list(dict.fromkeys(sets))
    return sorted(sets, key=lambda s: (s[1] != TICK_ON_RECEIVES, s[0] != "central",
                                       s[2][1] != "complete"))


def evaluate(src: Sources, fig1: Path | None) -> list[tuple[str, str, int, str, bool]]:
    """Rows (barrier, wake-up, target, evidence, met) for targets 3-7 of every reading."""
    rows = []
    for barrier, wake in READINGS:
        def ratio(fig: str, b: str = barrier, w: str = wake):
            A = src.get(b, w, FIGS[fig]["a"])
            B = src.get(b, w, FIGS[fig]["b"])
            return {k: A[k]["mean_us"] / B[k]["mean_us"] for k in A}
        r6, r7, r8, r9 = (ratio(f) for f in FIG_SETS)
        rows.append((barrier, wake, 3, *target3(r6, r7)))
        rows.append((barrier, wake, 4, *target4(r8)))
        rows.append((barrier, wake, 5, *target5(r9, r8)))
        rows.append((barrier, wake, 6, *target6(src.get(barrier, wake, FIGS["fig9"]["b"]),
                                                src.get(barrier, wake, FIGS["fig9"]["a"]))))
        if fig1 is not None and fig1.exists():
            rows.append((barrier, wake, 7, *target7(fig1)))
    return rows


def report(rows, src: Sources, quick: bool) -> str:
    head = [f"{BARRIER_TEXT[b]}, {WAKE_TEXT[w]}" for b, w in READINGS]
    verdict = {(b, w, t): ok for b, w, t, _, ok in rows}
    targets = sorted({t for _, _, t, _, _ in rows})
    lines = []
    if quick:
        lines.append("**PARTIAL (quick run: i = 5 measurements, n = 10 supersteps); not the "
                     "full configuration.**\n")
    lines += ["# Spec 2.6 targets 3-7 under the wake-up and barrier readings", "",
              "Barrier (AMB-2.2): central (every thread sends 'arrived' to thread 0, which "
              "releases) or all-to-all (each sends to each and waits for the others). "
              "Wake-up of a blocked controlled thread: immediate (after w_ctl = 100 µs); "
              "tick, every wake-up (barrier releases included) at the node's next 10 ms "
              "tick; tick on receives only (the complete pattern's message exchange waits "
              "for the tick, a barrier wake-up takes w_ctl). The figures are drawn under the "
              "central barrier with tick on receives only, on 200 seeds per cell "
              "(`figure_cells.json`, `targets.md`); the cells here take 50.", "",
              "## Verdicts", "",
              *markdown_table(["target", *head],
                              [[TARGET_LABELS[t], *("yes" if verdict[(b, w, t)] else "NO"
                                                    for b, w in READINGS)] for t in targets]),
              "", "## Evidence", "",
              *markdown_table(["barrier", "wake-up", "target", "ours", "met"],
                              [[BARRIER_TEXT[b], WAKE_TEXT[w], t, o, "yes" if ok else "NO"]
                               for b, w, t, o, ok in rows])]
    i, n = (5, 10) if quick else (50, 50)
    prov = src.provenance()
    lines += ["", f"n = {n} supersteps, i = {i} measurements per cell (seeds 0..{i - 1}); "
              "model constants of spec 2.5; 2 of 10 slots of 20 ms (contiguous); measurement "
              "start inside thread 0's window. Under 'tick on receives only' the "
              "barrier-pattern cells (targets 3) are those of 'immediate' (the same runs). "
              "Target 7 is the single-node Fig. 1 model (`fig1.json`), the same for every "
              "reading.", "", "Cells produced at:", ""]
    lines += [f"- `{name}`: {'; '.join(p)}" for name, p in prov.items()]
    lines += ["", f"Table produced at {provenance()}.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.karl.wakeups",
                description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="partial run (i=5, n=10)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    out = QUICK_DIR if args.quick else FULL_DIR
    out.mkdir(parents=True, exist_ok=True)
    provenance()   # the commit is read once, at the start (the run is long)
    src = Sources(out, args.quick, args.workers)
    t = time.perf_counter()
    src.compute(_order())
    rows = evaluate(src, FULL_DIR / "fig1.json")
    text = report(rows, src, args.quick)
    write_atomic(out / "wakeups.md", text)
    print(text)
    print(f"[wakeups: {time.perf_counter() - t:.0f} s, written to {out / 'wakeups.md'}]",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
