"""``schedsearch solve``, ``bench`` and ``schema``: offline problems from JSON files.

``solve FILE`` runs the family's default exact solver, ``--solver NAME`` one solver,
``--solvers A,B,C`` several side by side with each one's gap to the best proved optimum
among them; ``bench PATH...`` runs solvers over many problem files
(:mod:`sim.sweep.bench`); ``schema FAMILY`` prints a family's JSON Schema or, with
``--example``, a small valid instance. A file's family is resolved once, from its
``"problem"`` field (:func:`sim.registry.load`), and passed on as that
:class:`sim.problems.Family`.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from sim import registry
from sim.cli.common import (
    Fmt,
    clean,
    dump,
    json_default,
    names_arg,
    read_json,
    seconds_arg,
    seed_arg,
)

if TYPE_CHECKING:
    from sim.problems import Family


def named(problem: Any, solution: Any) -> Any:
    """The solution with job indices replaced by the problem's job names, where the
    problem names its jobs and the solution lists indices (K-resource epochs)."""
    names = getattr(problem, "names", None)
    if not names or not isinstance(solution, list):
        return solution
    if all(isinstance(g, list) and all(isinstance(i, int) for i in g) for g in solution):
        return [[names[i] for i in g] for g in solution]
    return solution


def _num(x: Any, digits: int = 6) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, float) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.{digits}g}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def _backend_options(args: argparse.Namespace, family: Family, name: str) -> dict[str, Any]:
    """``{"backend": ...}`` when ``--backend`` is given: only for the family's ILP or a
    solver whose function names the backends it runs on (its ``backends`` attribute,
    e.g. ``ti``: HiGHS or SCIP)."""
    if args.backend is None:
        return {}
    if family.ilp == name:
        return {"backend": args.backend}
    if registry.is_combination(name) and name not in family.solvers:
        takes: tuple[str, ...] = ()
    elif family.is_foreign(name):  # asked in the sandbox worker, never imported here
        takes = tuple(_known(args, family, name).get("backends") or ())
    else:
        takes = tuple(getattr(family.solver(name), "backends", ()))
    if args.backend in takes:
        return {"backend": args.backend}
    if takes:
        raise ValueError(f"--backend {args.backend}: solver {name} runs on "
                         f"{' or '.join(takes)} only")
    ilp = family.ilp
    raise ValueError(f"--backend {args.backend}: only the ILP takes a MIP backend; "
                     + (f"use --solver {ilp} for {family.name}" if ilp else
                        f"{family.name} has no ILP"))


def _known(args: argparse.Namespace, family: Family, name: str) -> dict[str, Any]:
    """Refuse an unknown solver ``name``; a foreign one is imported in the sandbox worker
    only (:func:`sim.sweep.bench.probe_solver`, within the time limit plus its grace, at
    most ``LOAD_SECONDS``), and what it declares is returned (empty for the project's
    own)."""
    if not family.is_foreign(name):
        family.solver(name)
        return {}
    from sim.sandbox import deadline
    from sim.sweep.bench import LOAD_SECONDS, probe_solver

    limit = deadline(args.time_limit)
    return probe_solver(family, name, seconds=LOAD_SECONDS if limit is None
                        else min(limit, LOAD_SECONDS))


def _claim_issues(args: argparse.Namespace, data: Any, family: Family, problem: Any,
                  d: dict[str, Any]) -> list[str]:
    """The file's claims (``best_known``, ``proved``, ``certificate``) checked as ``bench``
    checks them (:func:`sim.sweep.bench.check_claim`), and judged against this one run
    (:func:`sim.sweep.bench.judge`): a false claim, or a proof that the file's verified
    certificate contradicts, is an issue."""
    from sim.sweep.bench import check_claim, judge

    if not isinstance(data, dict):
        return []
    claim = check_claim(args.problem, family, problem, data)
    run = {"file": args.problem, "solver": d["solver"], "status": d["status"],
           "objective": d["objective"], "bound": d["bound"]}
    return judge([run], claim, family.sense)[2]


def _single(args: argparse.Namespace, data: Any, family: Family, problem: Any,
            name: str) -> int:
    from sim.sweep.bench import EXIT_ERRORS, run_solver

    _known(args, family, name)  # an unknown name is refused without the file's name
    options = _backend_options(args, family, name)
    try:
        result = run_solver(family, name, problem, time_limit=args.time_limit,
                            seed=args.seed, options=options)
    except ValueError as exc:  # a refusal (e.g. too large for the model): name the file
        raise ValueError(f"{args.problem}: {exc}") from None
    d = result.to_dict()
    from models.interrupt import happened

    if happened():
        d["note"] = "; ".join(filter(None, [d["note"], "stopped by Ctrl-C: the best answer "
                                                      "found so far"]))
    issues = _claim_issues(args, data, family, problem, d)
    code = EXIT_ERRORS if issues else 0  # as --solvers and bench: an ERROR exits 3
    d["problem"] = family.name
    d["solution"] = named(problem, d["solution"])
    if args.json:
        print(dump({**d, "issues": issues}))
        return code
    shown = {"problem": family.name, "solver": d["solver"], "status": d["status"],
             "objective": _num(d["objective"]), "bound": _num(d["bound"]),
             "gap": _gap_text(d),
             "seconds": f"{d['runtime']:.3f}"}
    for k, v in shown.items():
        print(f"{k:>10}: {v}")
    if d.get("note"):
        print(f"{'note':>10}: {d['note']}")
    print(f"{'solution':>10}: {json.dumps(clean(d['solution']), default=json_default)}")
    for issue in issues:
        print(f"ERROR: {issue}")
    return code


def _gap_text(d: dict[str, Any]) -> str:
    """The printed gap (``Result.gap``, relative to the objective) and what it is: the
    solver's own optimality gap; none relative to an objective of 0 that its bound does
    not meet; for a result not proved whose objective meets its bound, the objective
    proved but not the result (a tie-break stage stopped, say: the note tells)."""
    if d["gap"] is None:
        return _pct(None)
    if d["objective"] == 0 and d["gap"] != 0:
        return "- (no relative gap to an objective of 0)"
    if d["status"] == "FEASIBLE" and d["gap"] == 0:
        return _pct(0.0) + " (the objective meets the bound; the result is not proved: " \
            "see the note)"
    return _pct(d["gap"]) + " (the solver's own optimality gap)"


def side_by_side(rows: list[dict[str, Any]], family: Family) -> tuple[str, str]:
    """``(header, label)`` of the comparison column: the gap to the best found when runs
    contradict each other (their ``issues``), to the proved optimum when a solver proved
    one, else to the best bound (a certified gap), else to the best
    objective found."""
    from sim.sweep.bench import gap_to_best

    how = family.sense
    pick = min if how == "min" else max
    proved = [r["objective"] for r in rows if r["status"] == "OPTIMAL"]
    bounds = [r["bound"] for r in rows if r["bound"] is not None]
    if any(r.get("issues") for r in rows):  # a contradicted proof is no reference
        return "gap to best found", "gap_to_best"
    if proved:
        ref, label = pick(proved), "gap to optimum"
    elif bounds:
        # the tightest bound: the largest lower bound of a minimisation
        ref = max(bounds) if how == "min" else min(bounds)
        label = "gap to best bound"
    else:
        return "gap to best found", "gap_to_best"
    for r in rows:
        r["gap_to_ref"] = gap_to_best(r["objective"], ref, how)
    return label, "gap_to_ref"


def _several(args: argparse.Namespace, data: Any, family: Family, problem: Any,
             names: list[str]) -> int:
    from sim.sweep.bench import EXIT_ERRORS, check_solvers, compare

    check_solvers(names, [family])
    try:
        rows = compare(args.problem, names, time_limit=args.time_limit, seed=args.seed,
                       read=(data, family, problem))
    except ValueError as exc:
        raise ValueError(f"{args.problem}: {exc}") from None
    label, key = side_by_side(rows, family)
    # as bench: a contradiction, a file's false claim or an answer that failed the
    # family's check is an error of the run, said by the exit code too
    code = EXIT_ERRORS if any(r.get("issues") or r.get("invalid") for r in rows) else 0
    if args.json:
        print(dump({"problem": family.name, "file": args.problem, "reference": label,
                    "runs": [{**r, "gap_to_reference": r.get(key)} for r in rows]}))
        return code
    head = ["solver", "kind", "status", "objective", "bound", "solver gap", label, "seconds"]
    body = [[r["solver"], r["kind"], r["status"], _num(r["objective"]), _num(r["bound"]),
             _pct(r["solver_gap"]), _pct(r.get(key)),
             "-" if r["seconds"] is None else f"{r['seconds']:.3f}"] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    for line in [head, *body]:
        print("  ".join(str(x).rjust(w) for x, w in zip(line, widths, strict=True)))
    for r in rows:
        if r["status"] == "FAILED":
            print(f"{'ERROR' if r.get('invalid') else 'FAILED'} {r['solver']}: {r['error']}")
    for issue in dict.fromkeys(i for r in rows for i in r.get("issues", ())):
        print(f"ERROR: {issue}")
    print(f"{family.name} in {args.problem}. solver gap: the solver's own (objective - bound); "
          f"{label}: (objective - reference) / |reference|, worse is positive; seconds: "
          "wall clock.")
    return code


def cmd_solve(args: argparse.Namespace) -> int:
    if args.solver and args.solvers:
        raise ValueError("give --solver NAME or --solvers A,B,C, not both")
    data = read_json(args.problem)
    from sim.sweep.bench import load

    family, problem = load(data, args.problem) if isinstance(data, dict) else \
        registry.load(data, source=args.problem)
    if args.solvers:
        if args.backend is not None:
            raise ValueError("--backend goes with --solver (the family's ILP), not --solvers")
        return _several(args, data, family, problem, args.solvers)
    return _single(args, data, family, problem, args.solver or family.default_solver)


def cmd_bench(args: argparse.Namespace) -> int:
    from sim.sweep.bench import EXIT_ERRORS, bench, library_paths

    paths = list(args.paths)
    if args.update_library and not args.library:
        raise ValueError("--update-library goes with --library FAMILY (it rewrites that "
                         "family's table)")
    if args.dask is not None and args.jobs is not None:
        raise ValueError("--dask and --jobs: give one (--dask runs on the cluster's workers)")
    if args.library:
        paths += library_paths(args.library)
    if not paths:
        raise ValueError("bench: give problem files or directories, or --library FAMILY")
    solvers = args.solvers
    if solvers is None:
        if not args.library:
            raise ValueError("bench: --solvers is required (or --library FAMILY, which "
                             "runs every registered solver of the family)")
        solvers = sorted(registry.SOLVERS[args.library])
    out = args.out
    summary = bench(paths, out, solvers=solvers, time_limit=args.time_limit, seed=args.seed,
                    jobs=1 if args.jobs is None else args.jobs, dask=args.dask,
                    progress=not args.quiet, backend=args.backend)
    print((summary.out / "report.md").read_text())
    print(summary.text())
    if args.update_library:
        from sim.sweep.bench import write_library_table

        print(f"wrote {write_library_table(args.library, summary.runs)}")
    return EXIT_ERRORS if summary.found_errors else 0


def cmd_schema(args: argparse.Namespace) -> int:
    from sim import problems

    if args.family not in problems.MODULES:
        from sim.sweep.spec import closest

        raise ValueError(f"schema: unknown problem family {args.family!r}; "
                         f"{closest(args.family, problems.MODULES, 'families')}")
    doc = problems.example(args.family) if args.example else problems.schema(args.family)
    print(json.dumps(doc, indent=2, ensure_ascii=False))
    return 0


def _solvers_help() -> str:
    return "; ".join(f"{fam}: {', '.join(sorted(names))}"
                     for fam, names in sorted(registry.SOLVERS.items()))


def add_solve(sub: Any) -> None:
    """Register ``solve``, ``bench`` and ``schema`` on the ``schedsearch`` parser."""
    p = sub.add_parser("solve", help="solve an offline problem from a JSON file",
                       formatter_class=Fmt,
                       description="Solve PROBLEM with the family's default exact solver, "
                       "one --solver, or several --solvers side by side.")
    p.add_argument("problem", help="problem JSON (its 'problem' field names the family; "
                                   "`schedsearch schema FAMILY` gives the format)")
    p.add_argument("--solver", help="one solver: a registered name or MODULE:FUNCTION "
                                    "(default: the family's default exact solver, "
                                    + ", ".join(f"{f}: {s}" for f, s in
                                                sorted(registry.DEFAULT_SOLVERS.items()))
                                    + "); registered: " + _solvers_help())
    p.add_argument("--solvers", type=names_arg, metavar="A,B,C",
                   help="several solvers side by side, with each one's gap to the best "
                        "proved optimum among them; exit 3 when an ERROR is printed "
                        "(runs that contradict each other, the file's false claim, an "
                        "answer that failed the family's check)")
    p.add_argument("--time-limit", type=seconds_arg, help="seconds per solver (finite, >= 0)")
    p.add_argument("--seed", type=seed_arg, default=0, help="integer in [0, 2**63 - 1]")
    p.add_argument("--backend", choices=("cbc", "highs", "scip"),
                   help="MIP backend of the family's ILP (--solver ilp or exact-ilp): CBC "
                        "through PuLP (default), HiGHS or SCIP through OR-Tools; also "
                        "HiGHS (default) or SCIP for slack_insertion's ti and cpsat+ti")
    p.add_argument("--json", action="store_true", help="exact numbers as JSON")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("bench", help="run solvers over many problem files; gaps to the "
                                     "best known value", formatter_class=Fmt,
                       description="Run every solver on every problem file (directories: "
                       "their *.json, one family per directory) into DIR/runs.sqlite "
                       "(resumable), and write DIR/runs.csv, DIR/report.md and, with "
                       "matplotlib, DIR/gaps.png and DIR/profile.png. Exit 0; 3 when "
                       "the report holds an ERROR (runs that contradict each other, a file's "
                       "false claim, an answer that failed the family's check); 2 for bad "
                       "input (nothing run).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="problem files or directories")
    p.add_argument("--solvers", type=names_arg, metavar="A,B,C",
                   help="registered names or MODULE:FUNCTION; " + _solvers_help())
    p.add_argument("--time-limit", type=seconds_arg, default=10.0, help="seconds per run")
    p.add_argument("--seed", type=seed_arg, default=0)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--jobs", type=int, help="local worker processes (default 1)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on this Dask scheduler instead")
    p.add_argument("--library", metavar="FAMILY",
                   help="add the benchmark library's files of FAMILY "
                        "(instances/data/library/FAMILY)")
    p.add_argument("--update-library", action="store_true",
                   help="with --library: rewrite the library's table of gaps "
                        "(instances/data/library/FAMILY/TABLE.md)")
    p.add_argument("--backend", choices=("cbc", "highs", "scip"),
                   help="MIP backend of the families' ILPs among --solvers (ilp, exact-ilp); "
                        "their runs are labelled ilp[BACKEND]")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("schema", help="the JSON format of a problem family",
                       formatter_class=Fmt,
                       description="Print FAMILY's JSON Schema (every field with its "
                       "meaning, unit, range and default) or a small valid instance.")
    p.add_argument("family", help="problem family: " + ", ".join(sorted(registry.SOLVERS)))
    p.add_argument("--example", action="store_true",
                   help="a small valid instance every solver of the family accepts")
    p.set_defaults(func=cmd_schema)
