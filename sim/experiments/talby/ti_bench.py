"""Default CP-SAT against the ``cpsat+ti`` portfolio, without and with LP reduced-cost
fixing on SCIP, on the bundled KTH snapshots.

``python -m sim.experiments.talby.ti_bench`` (the full configuration: every snapshot of
the waiting-job bins 21-30, 31-50 and 51-70, the three solvers, 30 s, seed 0; writes
``sim/experiments/talby/results/ti_bench.md``). ``--time-limit S``, ``--sample N``
(``N`` snapshots per bin evenly spaced over the bin's sorted list; 0: all), ``--bins
lo-hi,...``, ``--solvers a,b`` and ``--files NAME,...`` (named snapshots, in a bin of
their own) run a part: it is written to ``results/ti_bench.md`` at the repository top
(git-ignored) or ``--out``, marked partial, and never to the committed file.

Each solver (registry names of the family ``slack_insertion``, or a name of
:data:`VARIANTS`: a registered solver with options; seed 0) runs in this
process, one run at a time. Per run: waiting jobs k, price, bound, status (OPTIMAL: the
price and the fewest moved jobs proved), moved jobs (proved when OPTIMAL), wall seconds,
and the certified gap (:func:`sim.experiments.common.relative_gap` of the price against
the best bound of every solver on the snapshot). Per bin and solver: runs, proved, price
proved (bound within :func:`sim.problems.insertion.price_tolerance` of the price), median
wall (a run that did not prove counts as the limit), median certified gap, and the
snapshots it proved that another solver did not. Then, per snapshot some solver left
open, which found the lower price; and :func:`verdict`, the rule deciding the family's
default, for each of :data:`CHALLENGERS` against ``cpsat``. The load average is recorded
before and after (the machine is shared: only a comparison within one run means anything).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sim import registry
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, markdown_table, relative_gap
from sim.experiments.talby.snapshots import OUT as SNAPSHOTS
from sim.experiments.talby.snapshots import load_snapshots
from sim.problems import insertion as ins
from sim.result import Status

RESULTS = Path(__file__).parent / "results" / "ti_bench.md"
"""The committed results file, written only by the full configuration."""
VARIANTS = {"cpsat+ti+fix": ("cpsat+ti", {"fixing": True, "backend": "scip"})}
"""Bench names of a registered solver with options (``name -> (registered, options)``):
``cpsat+ti`` with LP reduced-cost fixing on SCIP."""
BASE = "cpsat"
CHALLENGERS = ("cpsat+ti", "cpsat+ti+fix")
"""Each challenger is decided by :func:`rule` against :data:`BASE` on its own."""
FULL = {"time_limit": 30.0, "sample": 0, "bins": "21-30,31-50,51-70",
        "solvers": ",".join((BASE, *CHALLENGERS)), "files": ""}
"""The full configuration (the defaults of :func:`main`)."""
COUNT_BINS, GAP_BIN = ("21-30", "31-50"), "51-70"


def rule(challenger: str) -> str:
    """The rule deciding whether ``challenger`` becomes the family's default, written
    before the full configuration's run (the same for every challenger)."""
    return (f"`{challenger}` becomes the default of `slack_insertion` iff, in the full "
            f"configuration's run, it proves (OPTIMAL) at least as many snapshots as "
            f"`{BASE}` in 21-30 and in 31-50, strictly more in at least one of the two, "
            f"loses no snapshot that `{BASE}` proves in any bin, and its median certified "
            f"gap at 51-70 is no worse (not larger, unrounded; a run without a certified "
            f"gap counts as an infinite gap).")


@dataclass(frozen=True)
class Run:
    """One solver's run on one snapshot.

    Parameters
    ----------
    snapshot : str
        File name in :data:`sim.experiments.talby.snapshots.OUT`.
    k : int
        Waiting jobs.
    bin : str
        ``lo-hi`` of the bin it was drawn from (``named`` for ``--files``).
    solver : str
    status : str
        ``Status`` value.
    price : float or None
        The schedule's price (recomputed by the problem).
    bound : float or None
        The solver's proved lower bound on the price.
    moved : int or None
        Moved jobs of the schedule.
    wall : float
        Seconds of the solve call.
    note : str
    """

    snapshot: str
    k: int
    bin: str
    solver: str
    status: str
    price: float | None
    bound: float | None
    moved: int | None
    wall: float
    note: str = ""

    @property
    def proved(self) -> bool:
        """OPTIMAL: the price and the fewest moved jobs proved."""
        return self.status == Status.OPTIMAL.value

    @property
    def price_proved(self) -> bool:
        """The bound within :func:`sim.problems.insertion.price_tolerance` of the price."""
        return (self.price is not None and self.bound is not None
                and self.price - self.bound <= ins.price_tolerance(self.price))


def sample(pool: Sequence[tuple[str, ins.InsertionProblem]], lo: int, hi: int, n: int
           ) -> list[tuple[str, ins.InsertionProblem]]:
    """``n`` snapshots of ``pool`` (``(file name, problem)``, as
    :func:`sim.experiments.talby.snapshots.load_snapshots` gives them) with ``lo <= k <=
    hi``, evenly spaced over their list sorted by (k, name) (all for ``n <= 0``)."""
    found = sorted(((pb.k, name, pb) for name, pb in pool if lo <= pb.k <= hi),
                   key=lambda x: (x[0], x[1]))
    if 0 < n < len(found):
        found = [found[round(i * (len(found) - 1) / (n - 1))] for i in range(n)] if n > 1 \
            else found[:1]
    return [(name, pb) for _, name, pb in found]


def run(name: str, snapshot: str, pb: ins.InsertionProblem, bin_: str, limit: float) -> Run:
    """Solver ``name`` (registered or in :data:`VARIANTS`) on ``pb`` with ``limit``
    seconds, seed 0."""
    registered, options = VARIANTS.get(name, (name, {}))
    t0 = time.perf_counter()
    r = registry.solver("slack_insertion", registered)(pb, time_limit=limit, **options)
    wall = time.perf_counter() - t0
    moved = ins.moved(pb, r.solution) if r.solution is not None else None
    return Run(snapshot, pb.k, bin_, name, r.status.value, r.objective, r.bound, moved, wall,
               r.note)


def best_bounds(rows: Sequence[Run]) -> dict[str, float]:
    """Per snapshot, the largest bound of every solver (the prices are minimised)."""
    out: dict[str, float] = {}
    for r in rows:
        if r.bound is not None:
            out[r.snapshot] = max(out.get(r.snapshot, -math.inf), r.bound)
    return out


def certified_gap(r: Run, best: dict[str, float]) -> float | None:
    """``r``'s price against the best bound on its snapshot (None without either)."""
    return relative_gap(r.price, best.get(r.snapshot))


def _median_gap(rs: Sequence[Run], best: dict[str, float]) -> float:
    gaps = [certified_gap(r, best) for r in rs]
    return statistics.median(math.inf if g is None else g for g in gaps) if gaps else math.nan


def _pct(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else "inf" if math.isinf(x) else f"{x:.2%}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.10g}"


def run_rows(rows: Sequence[Run]) -> list[list[object]]:
    """Cells of the per-run table."""
    best = best_bounds(rows)
    return [[r.snapshot, r.k, r.solver, _num(r.price), _num(r.bound), r.status,
             "-" if r.moved is None else f"{r.moved}" + (" proved" if r.proved else ""),
             f"{r.wall:.1f}", _pct(certified_gap(r, best))] for r in rows]


def bin_rows(rows: Sequence[Run], limit: float) -> list[list[object]]:
    """Cells of the per (bin, solver) table; the last column lists the snapshots the
    solver proved that another solver did not."""
    best = best_bounds(rows)
    out = []
    for b in dict.fromkeys(r.bin for r in rows):
        in_bin = [r for r in rows if r.bin == b]
        for s in dict.fromkeys(r.solver for r in in_bin):
            rs = [r for r in in_bin if r.solver == s]
            mine = {r.snapshot for r in rs if r.proved}
            others = [{r.snapshot for r in in_bin if r.solver == o and r.proved}
                      for o in dict.fromkeys(r.solver for r in in_bin) if o != s]
            alone = sorted(mine - set.intersection(*others)) if others else []
            med = statistics.median(r.wall if r.proved else limit for r in rs)
            out.append([b, s, len(rs), len(mine), sum(r.price_proved for r in rs),
                        f"{med:.1f}", _pct(_median_gap(rs, best)),
                        ", ".join(alone) or "-"])
    return out


def price_rows(rows: Sequence[Run]) -> list[list[object]]:
    """Per snapshot that some solver left open: each solver's price, and which found the
    lowest (``tie``: every price within :func:`sim.problems.insertion.price_tolerance`
    of the lowest)."""
    out = []
    for snap in dict.fromkeys(r.snapshot for r in rows):
        rs = [r for r in rows if r.snapshot == snap]
        if all(r.proved for r in rs):
            continue
        prices = [r.price for r in rs if r.price is not None]
        low = min(prices, default=None)
        ahead = [r.solver for r in rs if r.price is not None and low is not None
                 and r.price - low <= ins.price_tolerance(low)]
        better = "tie" if len(ahead) == len(rs) else ", ".join(ahead) or "-"
        out.append([snap, rs[0].k, "; ".join(f"{r.solver} {_num(r.price)}" for r in rs),
                    better])
    return out


def verdict(rows: Sequence[Run], base: str = BASE, challenger: str = CHALLENGERS[0]
            ) -> tuple[bool, list[str]]:
    """Whether :func:`rule` holds for ``challenger`` against ``base`` on ``rows``, and one
    line per clause with its figures."""
    def proved(s: str, b: str | None = None) -> set[str]:
        return {r.snapshot for r in rows if r.solver == s and r.proved and b in (None, r.bin)}

    counts = {b: (len(proved(base, b)), len(proved(challenger, b))) for b in COUNT_BINS}
    at_least = all(c >= p for p, c in counts.values())
    more = any(c > p for p, c in counts.values())
    lost = sorted(proved(base) - proved(challenger))
    best = best_bounds(rows)
    gaps = {s: _median_gap([r for r in rows if r.solver == s and r.bin == GAP_BIN], best)
            for s in (base, challenger)}
    no_worse = not math.isnan(gaps[challenger]) and gaps[challenger] <= gaps[base]
    lines = [f"proved {b}: {base} {p}, {challenger} {c}" for b, (p, c) in counts.items()]
    lines += [f"at least as many in {' and '.join(COUNT_BINS)}: {at_least}; "
              f"strictly more in one: {more}",
              f"snapshots {base} proves and {challenger} does not: "
              f"{', '.join(lost) or 'none'}",
              f"median certified gap {GAP_BIN}: {base} {_pct(gaps[base])}, {challenger} "
              f"{_pct(gaps[challenger])}; no worse: {no_worse}"]
    holds = at_least and more and not lost and no_worse
    return holds, lines


def report(rows: Sequence[Run], limit: float, header: Sequence[str], full: bool = True
           ) -> str:
    """The results file: ``header`` lines, the rule and its verdict (on a partial run,
    ``full=False``, marked as deciding nothing), the per-bin table, the price comparison
    on open snapshots, and the per-run table."""
    solvers = list(dict.fromkeys(r.solver for r in rows))
    lines = list(header)
    for c in (c for c in CHALLENGERS if {BASE, c} <= set(solvers)):
        holds, why = verdict(rows, challenger=c)
        scope = "" if full else " on this partial run (the rule decides on the full " \
            "configuration only)"
        lines += ["", f"## The rule for `{c}` (written before the run)", "", rule(c), "",
                  f"Verdict{scope}: the rule {'holds' if holds else 'does not hold'}.", "",
                  *(f"- {x}" for x in why)]
    lines.append("")
    lines += ["## Per bin and solver", "",
              *markdown_table(["k", "solver", "runs", "proved", "price proved",
                               f"median s (limit {limit:g})", "median cert. gap",
                               "proved here only"], bin_rows(rows, limit)), "",
              "## Prices on the snapshots left open", "",
              *markdown_table(["snapshot", "k", "prices", "lowest"], price_rows(rows)), "",
              "## Per run", "",
              *markdown_table(["snapshot", "k", "solver", "price", "bound", "status",
                               "moved", "wall s", "cert. gap"], run_rows(rows)), ""]
    return "\n".join(lines)


def is_full(time_limit: float, sample_: int, bins: str, solvers: str, files: str) -> bool:
    """Whether the options are the full configuration (:data:`FULL`)."""
    return {"time_limit": time_limit, "sample": sample_, "bins": bins, "solvers": solvers,
            "files": files} == FULL


def main(argv: list[str] | None = None) -> int:
    ap = Parser(prog="python -m sim.experiments.talby.ti_bench",
                description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=FULL["time_limit"])
    ap.add_argument("--sample", type=int, default=FULL["sample"])
    ap.add_argument("--bins", default=FULL["bins"])
    ap.add_argument("--solvers", default=FULL["solvers"])
    ap.add_argument("--files", default=FULL["files"],
                    help="comma-separated snapshot names solved after the bins (partial run)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"where a partial run is written (default {PARTIAL_DIR}/ti_bench.md)")
    a = ap.parse_args(argv)
    full = is_full(a.time_limit, a.sample, a.bins, a.solvers, a.files)
    out = a.out or (RESULTS if full else PARTIAL_DIR / "ti_bench.md")
    if not full and out.resolve() == RESULTS.resolve():
        ap.error(f"--out: {RESULTS.name} is written only by the full configuration")
    if not 0 < a.time_limit < math.inf:
        ap.error(f"--time-limit must be a positive number of seconds, got {a.time_limit:g}")
    try:
        bins = [tuple(int(x) for x in part.split("-")) for part in filter(None,
                                                                           a.bins.split(","))]
    except ValueError:
        ap.error(f"--bins: expected lo-hi,..., got {a.bins!r}")
    solvers = a.solvers.split(",")
    for s in solvers:
        if s not in registry.SOLVERS["slack_insertion"] and s not in VARIANTS:
            ap.error(f"--solvers: unknown solver {s!r} of slack_insertion (registered, or "
                     f"one of {', '.join(VARIANTS)})")
    if len(set(solvers)) < len(solvers):
        ap.error(f"--solvers: a solver named twice in {a.solvers!r}")
    for f in filter(None, a.files.split(",")):
        if not (SNAPSHOTS / f).is_file():
            ap.error(f"--files: no snapshot {f!r} in {SNAPSHOTS}")
    argv_shown = None if argv is None else ["ti_bench", *argv]
    load0, t0 = provenance.load_average(), time.perf_counter()
    print(f"# {provenance.stamp(argv_shown)}; load average {load0}", flush=True)
    pool = load_snapshots()  # read once for every bin
    work = [(f"{lo}-{hi}", name, pb) for lo, hi in bins
            for name, pb in sample(pool, lo, hi, a.sample)]
    work += [("named", f, ins.load(SNAPSHOTS / f)) for f in filter(None, a.files.split(","))]
    rows = []
    for b, name, pb in work:
        for s in solvers:
            r = run(s, name, pb, b, a.time_limit)
            rows.append(r)
            print(f"{name} (k={r.k}) {s:9s} price {_num(r.price)} bound {_num(r.bound)} "
                  f"{r.status} moved {r.moved} {r.wall:.1f} s  {r.note[:120]}", flush=True)
    kind = "full configuration" if full else "partial run, not the committed configuration"
    header = [f"# Exact slack insertion: {' against '.join(solvers)} on the KTH snapshots "
              f"({kind})", "",
              f"Recorded by {provenance.stamp(argv_shown)}; {platform.machine()}, "
              f"{os.cpu_count()} cores shared with other work, Python "
              f"{platform.python_version()}; load average (1 / 5 / 15 min) {load0} at the "
              f"start, {provenance.load_average()} at the end; "
              f"{time.perf_counter() - t0:.0f} s in all. Limit {a.time_limit:g} s per run, "
              f"seed 0, one run at a time in one process.", "",
              "Columns: proved = OPTIMAL (price and fewest moved jobs proved); price proved "
              "= bound within the price tolerance of the price; median s: a run that did "
              "not prove counts as the limit; cert. gap = |price - best bound| / "
              "max(|price|, |best bound|), the best bound of every solver on the snapshot."]
    text = report(rows, a.time_limit, header, full)
    provenance.write_atomic(out, text)
    print(text)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
