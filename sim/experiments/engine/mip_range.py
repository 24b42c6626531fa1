"""The data magnitudes at which each MIP backend (CBC, HiGHS, SCIP; ``models.mip``) answers
every family's ILP exactly, measured against brute force.

Every MIP on a floating backend is swept: the family ILPs of task mapping (either
objective), the three K-resource problems, the gang schedule, slack insertion, grouping
(``exact-ilp``) and slot assignment, and slack insertion's time-indexed MIP
(``slack_insertion:ti``, HiGHS and SCIP only). For each and each magnitude ``M =
10^d``, small random instances are drawn whose numeric fields are spread over ``[1,
M]`` (not multiples of a common factor, so that no exact rescaling hides the
magnitude): memory pages, capacities and demands, processors; for grouping also the
latency and slice length (over ``[1/M, M]`` seconds) and the references per slice
(``grouping:wide``: two thrashing jobs of up to ``M`` references beside two cheap ones,
a cost spread growing as ``M^2``); for
slot assignment the round (``n_slots`` = ``M``), demands and free slots, up to
:data:`LARGEST`. Each is solved by the oracle (brute force; exhaustive search for
grouping; CP-SAT, which proves these, for slot assignment) and by the MIP on every
backend with the refusals (``models.mip.MAX_MAGNITUDE``,
``models.grouping.SPREAD_LIMIT``) lifted, no time limit. A backend's answer is wrong
when:

- it says OPTIMAL with an objective other than the oracle's optimum;
- its bound is on the wrong side of that optimum (beyond ``1e-9`` relative: these
  objectives are integral, or exact sums of the data for slack insertion; grouping's
  real-valued cost within :data:`TOLERANCE`);
- it says INFEASIBLE of a feasible problem, or returns a solution the family's check
  rejects (``sim.result.build`` raises).

The table gives, per entry, backend and magnitude: the number the entry's refusal
looks at (the largest number in the model's rows and bounds, ``models.mip.magnitude``;
for the time-indexed MIP its capacity or largest width; for grouping, whose rows hold
only 0/1 coefficients and the slice count, the cost spread of
``models.grouping.cost_spread``), the instances checked and the wrong answers (with the
first one's kind). Below it, per entry and backend: the largest such number at which
every check agreed and the smallest at which one failed.

Run: ``python -m sim.experiments.engine.mip_range`` (the full configuration:
magnitudes 10^2..10^11, 12 instances each; writes
``sim/experiments/engine/results/mip_range.md`` with the command and the commit) or
``--quick`` (10^4..10^9, 3 instances; prints only); ``--families`` or ``--backends``
(a part of the configuration; prints only).
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from sim.argparser import Parser
from sim.result import Status

FAMILIES = ("task_mapping", "kresource_epochs", "kresource_selection", "kresource_response",
            "gang_schedule", "slack_insertion", "slack_insertion:ti", "grouping",
            "grouping:wide", "slot_assignment")
"""What is swept (module docstring): a family, or ``FAMILY:NAME`` for a second MIP of
the family (``slack_insertion:ti``, the time-indexed MIP) or a second generator
(``grouping:wide``)."""
MIPS: dict[str, tuple[str, str, str]] = {
    "slack_insertion:ti": ("slack_insertion", "ti", "brute"),
    "grouping": ("grouping", "exact-ilp", "exhaustive"),
    "grouping:wide": ("grouping", "exact-ilp", "exhaustive"),
    "slot_assignment": ("slot_assignment", "ilp", "cpsat"),
}
"""``(family, MIP solver, oracle)`` of each swept entry not solved by the family's
``ilp`` against its ``brute``."""
BACKENDS_OF: dict[str, tuple[str, ...]] = {"slack_insertion:ti": ("highs", "scip")}
"""The backends an entry runs on when not all of ``models.mip.BACKENDS`` (the
time-indexed MIP refuses CBC)."""
LARGEST: dict[str, int] = {"slot_assignment": 3}
"""The largest exponent ``d`` swept for an entry whose model does not solve larger data
in minutes: the slot ILP holds a binary per application (and, for ``"gap"``, per copy)
and slot, and its largest row number is the round ``n_slots`` (the gap model's
positions), at most 75,000 within its ``max_vars`` = 150,000 variables; at ``10^4``
slots a gap model of 3 applications was not solved by any backend in 120 s."""
EXACT_TOL = 1e-9
"""Relative tolerance (of ``max(1, |optimum|)``) of a check."""
TOLERANCE: dict[str, float] = {"grouping": 1e-6}
"""The tolerance of a check of a family whose objective is real rather than an exact sum
of the data: grouping's eq. 4 cost, which every exact grouping solver proves within
``1e-6`` relative (``sim.result.build``'s tolerance; HiGHS stops at a relative gap of
``models.mip.GAP_TOL`` = 1e-7, and its answers differed from exhaustive search by up to
8.4e-9 relative)."""


def _spread(rng: random.Random, lo: int, hi: int) -> int:
    """An integer in ``[lo, hi]`` (log-uniform over the decades, so that small and large
    numbers both appear)."""
    lo, hi = max(1, lo), max(1, hi)
    if hi <= lo:
        return lo
    x = math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))
    return min(hi, max(lo, int(x)))


def task_mapping(rng: random.Random, m: int) -> Any:
    """3 nodes of ``M`` pages, 3 jobs of 1-2 tasks, base memory up to ``M``."""
    from sim.problems.task_mapping import TaskMapping

    jobs = tuple(tuple(rng.randint(max(1, m // 20), m) for _ in range(rng.randint(1, 2)))
                 for _ in range(3))
    base = tuple(rng.randint(0, m * 7 // 10) for _ in range(3))
    return TaskMapping(3, m, jobs, base, rng.choice(("max", "overload")))


def kresource_epochs(rng: random.Random, m: int) -> Any:
    """K in 1..3 resources of capacity in ``[M/2, M]``, 4-6 jobs of demands up to a
    third of it."""
    from sim.problems.kresource import EpochProblem

    cap = tuple(rng.randint(max(1, m // 2), m) for _ in range(rng.randint(1, 3)))
    return EpochProblem(cap, tuple(tuple(_spread(rng, 1, max(1, c // 2)) for c in cap)
                                   for _ in range(rng.randint(4, 6))))


def kresource_selection(rng: random.Random, m: int) -> Any:
    """K in 1..2 resources of one capacity in ``[M/2, M]``, 3-7 candidates."""
    from sim.problems.kresource import SelectionProblem

    K, n = rng.randint(1, 2), rng.randint(3, 7)
    cap = (rng.randint(max(1, m // 2), m),) * K
    free = tuple(rng.randint(0, c) for c in cap)
    extra = tuple(rng.randint(0, f) for f in free)
    dem = tuple(tuple(_spread(rng, 1, max(1, c // 3)) for c in cap) for _ in range(n))
    return SelectionProblem(cap, free, extra, dem, tuple(rng.random() < 0.5 for _ in range(n)))


def kresource_response(rng: random.Random, m: int) -> Any:
    """K in 1..2 resources of capacity in ``[M/2, M]``, 3-4 jobs (times of a few
    seconds)."""
    from sim.problems.kresource import ResponseProblem

    K, n = rng.randint(1, 2), rng.randint(3, 4)
    cap = tuple(rng.randint(max(1, m // 2), m) for _ in range(K))
    return ResponseProblem(cap, tuple(rng.randint(0, 4) for _ in range(n)),
                           tuple(rng.randint(1, 3) for _ in range(n)),
                           tuple(tuple(_spread(rng, 1, c) for c in cap) for _ in range(n)),
                           tuple(rng.randint(1, 3) for _ in range(n)))


def gang_schedule(rng: random.Random, m: int) -> Any:
    """4 nodes of ``M`` pages, 5 jobs on 1-3 nodes, tasks of ``M/10 .. 6M/10`` pages."""
    from sim.problems import gang_schedule as gs

    return gs.random_problem(rng.randrange(2**31), n_nodes=4, n_jobs=5, width=(1, 3),
                             mem=m, task_mem=(max(1, m // 10), max(1, m * 6 // 10)),
                             objective=rng.choice(("rows", "weighted")), weights=(1, 3))


def slack_insertion(rng: random.Random, m: int) -> Any:
    """``M`` processors, 3 waiting jobs (``sim.problems.insertion.random_problem``)."""
    from sim.problems import insertion as ins

    return ins.random_problem(rng.randrange(2**31), 3, capacity=m)


def grouping(rng: random.Random, m: int) -> Any:
    """4-6 jobs; ``P`` processors over ``[1, M]`` (at most ``EXACT_MAX``), demands over
    ``[1, P]``; latency and slice length log-uniform over ``[1/M, M]`` seconds,
    references per slice over ``[1, M]``; memory and footprints over ``[2, min(M,
    10^4)]`` blocks (a curve holds one number per block), curves falling to 0 or to a
    floor up to 0.01; ``S`` free or fixed."""
    from instances.refstreams import exponential_curve, knee_curve
    from sim.memory.model import MissRateCurve
    from sim.problems.fields import EXACT_MAX
    from sim.problems.grouping import GroupingProblem, GroupJob

    n = rng.randint(4, 6)
    P = _spread(rng, 1, min(m, EXACT_MAX))
    blocks = max(2, min(m, 10**4))
    memory = _spread(rng, 2, blocks)
    jobs = []
    for j in range(n):
        fp = _spread(rng, 2, blocks)
        knee = rng.randint(1, fp)
        floor = rng.choice((0.0, rng.uniform(0, 0.01)))
        if rng.random() < 0.5:
            curve = knee_curve(fp, knee, at_knee=rng.uniform(0.01, 0.3), floor=floor)
        else:
            curve = exponential_curve(fp, knee / 3 + 1, floor=floor)
        jobs.append(GroupJob(f"J{j}", _spread(rng, 1, P), MissRateCurve(tuple(curve)),
                             float(_spread(rng, 1, m))))
    return GroupingProblem(tuple(jobs), P, memory,
                           math.exp(rng.uniform(-math.log(m), math.log(m))),
                           math.exp(rng.uniform(-math.log(m), math.log(m))),
                           slices=rng.choice((None, rng.randint(1, n))))


def grouping_wide(rng: random.Random, m: int) -> Any:
    """Grouping with a wide cost spread: two jobs of ``[M/2, M]`` references per slice
    whose slice together thrashes (latency log-uniform over ``[1, M]`` s) beside two
    cheap jobs (1-2 references) whose pairing with them decides the optimum (a few
    processor-seconds); 3 processors, slice length in ``[0.5, 2]`` s, ``S`` free or
    fixed. The largest slice cost grows as ``M^2`` and the optimum stays small."""
    from sim.memory.model import MissRateCurve
    from sim.problems.grouping import GroupingProblem, GroupJob

    def curve() -> MissRateCurve:
        fp = rng.randint(5, 20)
        return MissRateCurve(tuple([1.0 - x / fp for x in range(fp)] + [0.0]))

    jobs = (GroupJob("A", 1, curve(), float(rng.randint(max(1, m // 2), m))),
            GroupJob("B", 1, curve(), float(rng.randint(max(1, m // 2), m))),
            GroupJob("c", 1, curve(), rng.uniform(1, 2)),
            GroupJob("d", rng.randint(1, 2), curve(), rng.uniform(1, 2)))
    return GroupingProblem(jobs, 3, 24, math.exp(rng.uniform(0, math.log(m))),
                           rng.uniform(0.5, 2), slices=rng.choice((None, 3, 4)))


def slot_assignment(rng: random.Random, m: int) -> Any:
    """A round of ``M`` slots on 4 nodes, 2-3 applications on 1-3 nodes each, free
    slots per node over ``[0, M/10]``. ``"round"``: demands over ``[1, M/4]``;
    ``"gap"``: demands 1 or 2 (the gap model has a binary per copy and slot)."""
    from sim.problems.slots import SlotApp, SlotProblem

    objective = rng.choice(("round", "gap"))
    top = max(1, m // 4) if objective == "round" else min(2, m)
    apps = tuple(SlotApp(f"A{a}", tuple(sorted(rng.sample(range(4), rng.randint(1, 3)))),
                         _spread(rng, 1, top)) for a in range(rng.randint(2, 3)))
    free = tuple(rng.randint(0, max(0, m // 10)) for _ in range(4))
    return SlotProblem(4, apps, m, free, objective)


GENERATORS: dict[str, Callable[[random.Random, int], Any]] = {
    "task_mapping": task_mapping, "kresource_epochs": kresource_epochs,
    "kresource_selection": kresource_selection, "kresource_response": kresource_response,
    "gang_schedule": gang_schedule, "slack_insertion": slack_insertion,
    "slack_insertion:ti": slack_insertion, "grouping": grouping,
    "grouping:wide": grouping_wide, "slot_assignment": slot_assignment}
"""One random instance of magnitude ``M`` per family."""


def _ti_number(problem: Any) -> float:
    """The largest number in the rows of the time-indexed MIP: the capacity (a free
    capacity is at most it) or a width (``models.slack_insertion.timeindexed``, whose
    own refusal looks at these, not at ``models.mip.magnitude``)."""
    widths = [w.n for w in problem.waiting] + ([problem.new.n] if problem.new else [])
    return float(max([problem.capacity, *widths]))


def _grouping_spread(problem: Any) -> float:
    """The cost spread of the grouping ILP (``models.grouping.cost_spread``: its
    largest cost over ``max(1, a lower bound on the optimum)``), what its refusal looks
    at: its rows hold only 0/1 coefficients and the slice count."""
    from models.grouping import _coefficients, cost_spread, group_table

    members, cost = group_table(problem)
    top, low = cost_spread(members, cost, _coefficients(problem, cost)[0])
    return top / max(1.0, low)


MODEL_NUMBER: dict[str, Callable[[Any], float]] = {
    "slack_insertion:ti": _ti_number, "grouping": _grouping_spread,
    "grouping:wide": _grouping_spread}
"""The number an entry's refusal looks at when it is not ``models.mip.magnitude`` of a
PuLP model."""


def family_of(entry: str) -> str:
    """The problem family of a swept entry (:data:`FAMILIES`)."""
    return MIPS.get(entry, (entry,))[0]


def solvers(entry: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(mip(problem, backend=...), oracle(problem))`` of the swept ``entry``."""
    from sim import registry

    family, mip_name, oracle = MIPS.get(entry, (entry, "ilp", "brute"))
    return registry.solver(family, mip_name), registry.solver(family, oracle)


def verdict(family: str, ref: Any, r: Any) -> str:
    """Empty when the backend's result ``r`` agrees with brute force's ``ref``, else the
    kind of disagreement."""
    from sim.problems import sense

    if ref.status not in (Status.OPTIMAL, Status.INFEASIBLE):
        raise RuntimeError(f"{family}: the oracle proved nothing ({ref.status.value})")
    if ref.status is Status.INFEASIBLE:
        return "" if r.status in (Status.INFEASIBLE, Status.UNKNOWN) else "feasible?"
    if r.status is Status.INFEASIBLE:
        return "false infeasible"
    opt = ref.objective
    tol = TOLERANCE.get(family, EXACT_TOL) * max(1.0, abs(opt))
    lower = sense(family) == "min"
    if r.status is Status.OPTIMAL and abs(r.objective - opt) > tol:
        return "false optimum"
    if r.bound is not None and (r.bound > opt + tol if lower else r.bound < opt - tol):
        return "bound beyond the optimum"
    return ""


class Unlimited:
    """Within it, ``models.mip`` refuses no magnitude (nor ``models.grouping`` a cost
    spread) and records the largest model
    magnitude it was given (:attr:`seen`)."""

    def __enter__(self) -> Unlimited:
        from models import grouping, mip

        self.saved = dict(mip.MAX_MAGNITUDE)
        self.spread = dict(grouping.SPREAD_LIMIT)
        self.check = mip.check_magnitude
        self.seen = 0.0
        mip.MAX_MAGNITUDE.update({b: math.inf for b in mip.BACKENDS})
        grouping.SPREAD_LIMIT.update({b: math.inf for b in mip.BACKENDS})

        def record(prob: Any, backend: str, data: Any = None) -> None:
            self.seen = max(self.seen, mip.magnitude(prob)[0])

        mip.check_magnitude = record
        return self

    def __exit__(self, *exc: Any) -> None:
        from models import grouping, mip

        mip.MAX_MAGNITUDE.update(self.saved)
        grouping.SPREAD_LIMIT.update(self.spread)
        mip.check_magnitude = self.check


def sweep(families: tuple[str, ...], backends: tuple[str, ...], exponents: range,
          instances: int, seed: int = 0, out: Any = sys.stdout) -> list[dict[str, Any]]:
    """One row per family x backend x magnitude (module docstring)."""
    rows = []
    with Unlimited() as lift:
        for family in families:
            ilp, brute = solvers(family)
            for d in exponents:
                if d > LARGEST.get(family, d):
                    continue
                rng = random.Random(f"{seed}-{family}-{d}")
                problems = [GENERATORS[family](rng, 10 ** d) for _ in range(instances)]
                refs = [brute(p) for p in problems]
                for backend in backends:
                    if backend not in BACKENDS_OF.get(family, backends):
                        continue
                    lift.seen = 0.0
                    wrong, first = 0, ""
                    number = MODEL_NUMBER.get(family)
                    top = 0.0
                    for p, ref in zip(problems, refs, strict=True):
                        if number is not None:
                            top = max(top, number(p))
                        try:
                            why = verdict(family_of(family), ref, ilp(p, backend=backend))
                        except ValueError as exc:  # build: an infeasible solution
                            why = f"rejected ({str(exc)[:40]})"
                        if why:
                            wrong += 1
                            first = first or why
                    rows.append({"family": family, "backend": backend, "exponent": d,
                                 "model": lift.seen if number is None else top,
                                 "checks": instances, "wrong": wrong, "first": first})
                    print(_line(rows[-1]), file=out, flush=True)
    return rows


def _line(r: dict[str, Any]) -> str:
    return (f"| {r['family']} | {r['backend']} | 1e{r['exponent']} | {r['model']:.3g} | "
            f"{r['checks']} | {r['wrong']} | {r['first'] or '-'} |")


def ranges(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per family x backend: the largest model magnitude at which every check agreed
    (below the first failure) and the smallest at which one failed (None: none failed)."""
    out = []
    keys = dict.fromkeys((r["family"], r["backend"]) for r in rows)
    for family, backend in keys:
        mine = sorted((r for r in rows if (r["family"], r["backend"]) == (family, backend)),
                      key=lambda r: r["model"])
        failed = [r["model"] for r in mine if r["wrong"]]
        first_fail = min(failed) if failed else None
        ok = [r["model"] for r in mine if not r["wrong"]
              and (first_fail is None or r["model"] < first_fail)]
        out.append({"family": family, "backend": backend,
                    "exact_up_to": max(ok) if ok else None, "first_wrong": first_fail})
    return out


HEAD = ("| family | backend | data magnitude | largest model number | checks | wrong | "
        "first wrong |\n|---|---|---|---|---|---|---|")


def report(rows: list[dict[str, Any]], stamp: str, load: str, seconds: float) -> str:
    """The Markdown of ``results/mip_range.md``."""
    lines = ["# MIP backends: exact range against brute force", "",
             f"{stamp}; load average at the start: {load}; {seconds:.0f} s.", "", HEAD,
             *(_line(r) for r in rows), "",
             "| family | backend | all agreed up to (model number) | first wrong at |",
             "|---|---|---|---|"]
    for g in ranges(rows):
        up = "-" if g["exact_up_to"] is None else f"{g['exact_up_to']:.3g}"
        bad = "none" if g["first_wrong"] is None else f"{g['first_wrong']:.3g}"
        lines.append(f"| {g['family']} | {g['backend']} | {up} | {bad} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from models.mip import BACKENDS
    from sim.experiments.common import load_average, stamp, write_atomic

    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10^4..10^9, 3 instances; prints only")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--backends", default=",".join(BACKENDS))
    args = ap.parse_args(argv)
    families = tuple(f for f in args.families.split(",") if f)
    backends = tuple(b for b in args.backends.split(",") if b)
    for f in families:
        if f not in GENERATORS:
            ap.error(f"--families: unknown family {f!r}; one of {', '.join(FAMILIES)}")
    for b in backends:
        if b not in BACKENDS:
            ap.error(f"--backends: unknown backend {b!r}; one of {', '.join(BACKENDS)}")
    full = not args.quick and families == FAMILIES and backends == tuple(BACKENDS)
    exponents = range(4, 10) if args.quick else range(2, 12)
    load = load_average()
    recorded = stamp(None if argv is None else ["mip_range", *argv])  # the code measured
    t0 = time.perf_counter()
    print(HEAD, flush=True)
    rows = sweep(families, backends, exponents, 3 if args.quick else 12)
    text = report(rows, recorded, load, time.perf_counter() - t0)
    print(text.split("\n\n")[-1])
    if full:
        from pathlib import Path

        path = Path(__file__).resolve().parent / "results" / "mip_range.md"
        write_atomic(path, text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
