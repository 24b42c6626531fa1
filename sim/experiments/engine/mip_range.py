"""The data magnitudes at which each MIP backend (CBC, HiGHS, SCIP; ``models.mip``) answers
every family's ILP exactly, measured against brute force.

For each family whose rows carry the problem's numbers (task mapping with either
objective, the three K-resource problems, the gang schedule, slack insertion) and each
magnitude ``M = 10^d``, ``--instances`` small random instances are drawn whose numbers
(memory pages, capacities and demands, processors) are spread over ``[1, M]`` (not
multiples of a common factor, so that no exact rescaling hides the magnitude). Each is
solved by brute force and by the family's ILP on every backend with the refusal
(``models.mip.MAX_MAGNITUDE``) lifted, no time limit. A backend's answer is wrong when:

- it says OPTIMAL with an objective other than brute force's optimum;
- its bound is on the wrong side of that optimum (beyond ``1e-9`` relative: these
  objectives are integral, or exact sums of the data for slack insertion);
- it says INFEASIBLE of a feasible problem, or returns a solution the family's check
  rejects (``sim.result.build`` raises).

The table gives, per family, backend and magnitude: the largest number in the models'
rows and bounds (``models.mip.magnitude``, what the refusal looks at), the instances
checked and the wrong answers (with the first one's kind). Below it, per family and
backend: the largest model magnitude at which every check agreed and the smallest at
which one failed.

Families left out: grouping and slot assignment, whose rows hold only 0/1 coefficients
and counts (slices, slots: at most a few hundred), so their data never reaches a row.

Run: ``python -m sim.experiments.engine.mip_range`` (the full configuration:
magnitudes 10^2..10^11, 12 instances each; writes
``sim/experiments/engine/results/mip_range.md`` with the command and the commit) or
``--quick`` (10^4..10^9, 3 instances; prints only).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from sim.result import Status

FAMILIES = ("task_mapping", "kresource_epochs", "kresource_selection", "kresource_response",
            "gang_schedule", "slack_insertion")
"""The families swept (module docstring)."""
EXACT_TOL = 1e-9
"""Relative tolerance (of ``max(1, |optimum|)``) of a check."""


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


GENERATORS: dict[str, Callable[[random.Random, int], Any]] = {
    "task_mapping": task_mapping, "kresource_epochs": kresource_epochs,
    "kresource_selection": kresource_selection, "kresource_response": kresource_response,
    "gang_schedule": gang_schedule, "slack_insertion": slack_insertion}
"""One random instance of magnitude ``M`` per family."""


def solvers(family: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(ilp(problem, backend=...), brute(problem))`` of ``family``."""
    from sim import registry

    ilp = {"slack_insertion": "ilp"}.get(family, "ilp")
    return registry.solver(family, ilp), registry.solver(family, "brute")


def verdict(family: str, ref: Any, r: Any) -> str:
    """Empty when the backend's result ``r`` agrees with brute force's ``ref``, else the
    kind of disagreement."""
    from sim.problems import sense

    if ref.status is Status.INFEASIBLE:
        return "" if r.status in (Status.INFEASIBLE, Status.UNKNOWN) else "feasible?"
    if r.status is Status.INFEASIBLE:
        return "false infeasible"
    opt = ref.objective
    tol = EXACT_TOL * max(1.0, abs(opt))
    lower = sense(family) == "min"
    if r.status is Status.OPTIMAL and abs(r.objective - opt) > tol:
        return "false optimum"
    if r.bound is not None and (r.bound > opt + tol if lower else r.bound < opt - tol):
        return "bound beyond the optimum"
    return ""


class Unlimited:
    """Within it, ``models.mip`` refuses no magnitude and records the largest model
    magnitude it was given (:attr:`seen`)."""

    def __enter__(self) -> Unlimited:
        from models import mip

        self.saved = dict(mip.MAX_MAGNITUDE)
        self.check = mip.check_magnitude
        self.seen = 0.0
        mip.MAX_MAGNITUDE.update({b: math.inf for b in mip.BACKENDS})

        def record(prob: Any, backend: str, data: Any = None) -> None:
            self.seen = max(self.seen, mip.magnitude(prob)[0])

        mip.check_magnitude = record
        return self

    def __exit__(self, *exc: Any) -> None:
        from models import mip

        mip.MAX_MAGNITUDE.update(self.saved)
        mip.check_magnitude = self.check


def sweep(families: tuple[str, ...], backends: tuple[str, ...], exponents: range,
          instances: int, seed: int = 0, out: Any = sys.stdout) -> list[dict[str, Any]]:
    """One row per family x backend x magnitude (module docstring)."""
    rows = []
    with Unlimited() as lift:
        for family in families:
            ilp, brute = solvers(family)
            for d in exponents:
                rng = random.Random(f"{seed}-{family}-{d}")
                problems = [GENERATORS[family](rng, 10 ** d) for _ in range(instances)]
                refs = [brute(p) for p in problems]
                for backend in backends:
                    lift.seen = 0.0
                    wrong, first = 0, ""
                    for p, ref in zip(problems, refs, strict=True):
                        try:
                            why = verdict(family, ref, ilp(p, backend=backend))
                        except ValueError as exc:  # build: an infeasible solution
                            why = f"rejected ({str(exc)[:40]})"
                        if why:
                            wrong += 1
                            first = first or why
                    rows.append({"family": family, "backend": backend, "exponent": d,
                                 "model": lift.seen, "checks": instances, "wrong": wrong,
                                 "first": first})
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

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
