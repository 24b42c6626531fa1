"""Solvers on problem files: run every solver on every file, and measure each one's gap to
the best known value.

``bench`` is the offline counterpart of a sweep: a cell is one (problem file, solver) pair,
run in this process, a local pool or on Dask, and committed to a results store
(``DIR/runs.sqlite``, the sweep store) as runs finish, a few at a time (a run takes
milliseconds; ``BATCH_SECONDS`` of runs per pool task and per transaction), so an
interrupted bench resumes where it stopped and redoes only the runs it had not committed.
Every registered solver runs on one thread with the given seed, so a run's status,
objective and bound do not depend on ``jobs``, unless the clock decides them (a run stopped
by its time limit, the portfolio's time split). From Python::

    from sim.sweep.bench import bench
    summary = bench(["instances/data/library/kresource_selection"], "out",
                    solvers=["cpsat", "ff", "bl", "bb"], time_limit=10)
    summary.runs            # one dict per run, the columns of runs.csv

Nothing a solver or a file says is taken on trust. Every answer passes
:func:`run_solver` (the family's check and objective, :func:`sim.result.verify`; a user's
or plug-in solver runs in a worker process killed at its time limit plus a grace,
:mod:`sim.sandbox`), and a failed check is a failed run naming the violation. Each file
is read once: the runs are keyed by the SHA-256 of the bytes read, and a run whose file
changed since is a failed run. A file's ``best_known``/``proved``/``certificate`` are
claims (:func:`check_claim`).

Definitions (one family's sense decides the sign; a worse value is always positive):

- ``best_known`` of a file: the best objective a solution attains, a run's or the file's
  verified certificate (a claimed value without a certificate is never used);
- ``best_proved``: a run proved that value optimal (status OPTIMAL, or a bound of any run
  meets it) and no solution contradicts a proof (:func:`judge`: contradictions and false
  claims are listed in ``report.md`` and :attr:`BenchSummary.issues`);
- ``gap_to_best`` = (objective - best_known) / |best_known| for minimisation,
  (best_known - objective) / |best_known| for maximisation; 0 when both are 0; empty when
  the run has no solution or best_known is 0 and the run's objective is not.

A solver name is a registered name of the file's family (``sim.registry.SOLVERS``), a
combination of them (``cpsat+scip``, ``models.portfolio``) or a user's
``MODULE:FUNCTION`` with the same ``solve`` signature. A file of another family than the
solver's, or one that fails to load, is a recorded failed run naming the file. A file's
family is resolved once, when it is read (:func:`load`: a :class:`sim.problems.Family`),
and the functions below take that object, never the family's name.
Times are wall-clock seconds.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim import problems
from sim.plugins import SOLVER_GROUP, is_reference

if TYPE_CHECKING:
    from sim.problems import Family

#: columns of ``runs.csv``, in order
COLUMNS = ("file", "family", "solver", "kind", "status", "objective", "bound", "best_known",
           "best_proved", "gap_to_best", "seconds")

#: format version of a bench store (its ``spec_version``)
BENCH_VERSION = 1

#: seconds of runs per pool task and per store transaction (``run_cells``): a run takes
#: milliseconds, a message to a pool worker or a commit about one
BATCH_SECONDS = 0.05

#: families whose objective is maximised (every other family minimises)
MAXIMISE = problems.MAXIMISE

#: relative tolerance (of ``max(1, |value|)``) within which two objective values or a
#: bound and a value are equal (the one of ``sim.result.verify``)
TOLERANCE = 1e-6


# --------------------------------------------------------------------------- solvers
def resolve_solver(family: Family, name: str) -> Any:
    """The ``solve`` function called ``name`` for ``family`` (registered or
    ``MODULE:FUNCTION``). Raises ValueError naming the solver."""
    return family.solver(name)


def foreign_target(family: Family, name: str) -> str | None:
    """``MODULE:FUNCTION`` of a solver the project does not control (a user's reference,
    an installed package's entry point), None for the project's own."""
    return family.foreign_target(name)


def run_solver(family: Family, name: str, problem: Any, *, time_limit: float | None,
               seed: int, options: dict[str, Any] | None = None) -> Any:
    """Solve ``problem`` with the solver ``name`` of ``family`` and return its
    :class:`sim.result.Result` once it passed :func:`sim.result.verify` (the family's
    check and objective): the one edge where every solver's answer comes back.

    A solver the project does not control (:func:`foreign_target`) runs in a worker
    process (:mod:`sim.sandbox`) killed ``time_limit`` plus a grace after it started.

    Raises
    ------
    ValueError
        One line naming the solver: a refusal, an invalid result
        (:class:`sim.result.InvalidResult`), or a foreign solver that raised, exited,
        crashed or ran past its time (:class:`sim.sandbox.ForeignError`).
    """
    from sim import sandbox
    from sim.result import verify

    kwargs = {"time_limit": time_limit, "seed": seed, **(options or {})}
    target = foreign_target(family, name)
    if target is None:
        result = resolve_solver(family, name)(problem, **kwargs)
    else:
        plain = sandbox.call("sim.sweep.bench:call_foreign", (target, problem, kwargs),
                             seconds=sandbox.deadline(time_limit), what=f"solver {name!r}")
        result = from_plain(family, name, plain)
    return verify(problem, result, solver=name, family=family)


#: the fields of a foreign solver's Result that come back from its worker process
PLAIN_FIELDS = ("solver", "status", "objective", "bound", "runtime", "solution", "seed",
                "params", "note")


def call_foreign(target: str, problem: Any, kwargs: dict[str, Any]) -> Any:
    """Run in the sandbox's worker process: call the foreign solver ``target`` and return
    its answer as plain data (a :class:`sim.result.Result`'s fields, its solution in its
    JSON form, every value through ``json``), so that no object of the foreign code's
    making reaches the process that checks it; anything else as its type's name. The
    runtime is the wall-clock seconds the call took here (its import not counted), not
    the one the solver wrote in its Result: a claim, like its objective."""
    from sim.plugins import load_reference
    from sim.result import Result, Status, _jsonable

    solve = load_reference(target, what="solver")
    t0 = time.perf_counter()
    result = solve(problem, **kwargs)
    took = time.perf_counter() - t0
    if not isinstance(result, Result):
        return type(result).__name__
    status = result.status.value if isinstance(result.status, Status) else result.status
    fields = {f: getattr(result, f) for f in PLAIN_FIELDS}
    fields.update(status=status, solution=_jsonable(result.solution), runtime=took)
    try:
        return json.loads(json.dumps(fields, allow_nan=True))
    except (TypeError, ValueError) as exc:
        return {"unplain": f"{type(exc).__name__}: {exc}"[:200]}


def from_plain(family: Family, name: str, plain: Any) -> Any:
    """The :class:`sim.result.Result` of :func:`call_foreign`'s plain answer from the
    solver ``name`` (its fields unchecked: :func:`sim.result.verify` names what is
    wrong), named ``name``; InvalidResult when it was no Result or not JSON data."""
    from sim.result import InvalidResult, Result

    bad = f"solver {name!r} returned an invalid result: "
    if isinstance(plain, str):
        raise InvalidResult(f"{bad}a {plain}, not a sim.result.Result")
    if not isinstance(plain, dict) or "unplain" in plain:
        why = plain.get("unplain") if isinstance(plain, dict) else repr(plain)
        raise InvalidResult(f"{bad}values that are not JSON data ({why})")
    solution = plain["solution"]
    if solution is not None:
        try:
            solution = family.solution_from_json(solution)
        except ValueError:
            pass  # the family's check names what is wrong with it
    # the name it was called by: a Result naming itself "cpsat" is not the project's cpsat
    return Result(**{**plain, "solution": solution, "solver": name})


#: seconds a foreign solver's import may take in the sandbox worker (:func:`probe_solver`)
LOAD_SECONDS = 60.0

_PROBED: dict[str, dict[str, Any]] = {}


def probe_solver(family: Family | None, name: str, *,
                 seconds: float | None = LOAD_SECONDS) -> dict[str, Any]:
    """Import the foreign solver ``name`` (a user's ``MODULE:FUNCTION``, or an installed
    package's entry point of ``family``: :meth:`sim.problems.Family.foreign_target`) in the
    sandbox worker (:mod:`sim.sandbox`, within ``seconds``), never here, and return what
    it declares (``kind``); once per target and process. ValueError naming the solver
    (and its entry point) when it does not import or name a callable, or its import
    raised, crashed, exited, ran out of memory or ran past the limit."""
    target = name if is_reference(name) else (
        family.foreign_target(name) if family is not None else None)
    if target is None:
        raise ValueError(f"solver {name!r} is the project's own")
    if target not in _PROBED:
        from sim import sandbox

        what = "solver" if is_reference(name) or family is None else \
            f"solver {name!r} (entry point {family.name}/{name} of group {SOLVER_GROUP})"
        module = target.partition(":")[0]
        info = sandbox.call("sim.plugins:describe_reference", (target, what),
                            seconds=seconds,
                            what=f"solver {name!r} (module {module!r}, import)")
        if not isinstance(info, dict) or "error" in info:
            raise ValueError(str(info.get("error") if isinstance(info, dict) else info))
        _PROBED[target] = info
    return _PROBED[target]


def solver_kind(family: Family, name: str) -> str:
    """``"exact"`` for the registered exact models (``models.*``) and for a user's
    function that declares ``kind = "exact"``; ``"heuristic"`` otherwise
    (:meth:`sim.problems.Family.kind`; a user's function is asked in the sandbox worker,
    :func:`probe_solver`)."""
    if is_reference(name):
        kind = probe_solver(family, name).get("kind")
        return kind if kind in ("exact", "heuristic") else "heuristic"
    return family.kind(name)


def check_solvers(names: Sequence[str], families: Iterable[Family]) -> None:
    """Refuse, before anything runs, a name no family of the files knows (when a file
    could be read: every run of an unreadable one is refused anyway), and a user's
    ``MODULE:FUNCTION`` or an installed package's solver that does not import (imported in
    the sandbox worker, :func:`probe_solver`), and a name given twice (its one run would
    count twice in every statistic)."""

    repeated = sorted({n for n in names if list(names).count(n) > 1})
    if repeated:
        raise ValueError(f"--solvers: {', '.join(map(repr, repeated))} given more than once")
    families = sorted(set(families), key=lambda f: f.name)
    for name in names:
        if is_reference(name):
            probe_solver(None, name)
        elif families and not any(f.has_solver(name) for f in families):
            valid = {f.name: sorted(f.solvers) for f in families}
            raise ValueError(f"--solvers: unknown solver {name!r}; valid names per family: "
                             + "; ".join(f"{f}: {', '.join(v)}" for f, v in valid.items()))
        for f in families:
            if name in f.plugins:
                probe_solver(f, name)


# --------------------------------------------------------------------------- files
def problem_files(paths: Sequence[str | Path]) -> list[Path]:
    """The problem files named by ``paths``: a JSON file as given, a directory's ``*.json``
    entries (recursively, sorted; an entry that is not a regular file, such as a dangling
    link, a FIFO or a device, is kept so that its run is reported as refused). Raises
    ValueError naming a path that does not exist or a directory with no problem file."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if not q.is_dir())
            if not found:
                raise ValueError(f"{p}: no problem files (*.json) in this directory")
            out += found
        elif p.exists() or p.is_symlink():
            out.append(p)  # a FIFO, a device or a dangling link: its runs are refused
        else:
            raise ValueError(f"{p}: no such file or directory")
    return list(dict.fromkeys(out))


def read_family(path: Path) -> tuple[str | None, dict[str, Any] | None, str | None]:
    """``(family, data, error)`` of a problem file, without building the problem."""
    family, data, _, error = read_file(path)
    return family, data, error


def read_file(path: Path) -> tuple[str | None, dict[str, Any] | None, str, str | None]:
    """``(family, data, sha256, error)`` of a problem file read once: the SHA-256 is that
    of the bytes parsed (``sim.problems.read_bytes``: size-limited, never a device or a
    pipe). ``error`` (one line naming the file) when it cannot be read or parsed."""
    if path.is_symlink() and not path.exists():
        return None, None, "", f"{path}: a dangling symbolic link, not a problem file"
    try:
        raw = problems.read_bytes(path)
    except ValueError as exc:
        return None, None, "", str(exc)
    sha = hashlib.sha256(raw).hexdigest()
    try:
        data = problems.parse_json(raw, path)
    except ValueError as exc:
        return None, None, sha, str(exc)
    if not isinstance(data, dict) or not isinstance(data.get("problem"), str):
        return None, None, sha, f"{path}: missing field 'problem' (the problem family)"
    return data["problem"], data, sha, None


def check_directories(paths: Sequence[str | Path],
                      problem_fields: dict[Path, str | None]) -> None:
    """A directory must hold one family: refuse one that mixes families, naming both.
    ``problem_fields`` gives each file's ``"problem"`` field as written (:func:`read_file`,
    read once)."""
    for p in map(Path, paths):
        if not p.is_dir():
            continue
        fams: dict[str, Path] = {}
        for f in sorted(p.rglob("*.json")):
            fam = problem_fields.get(f)
            if fam is not None:
                fams.setdefault(fam, f)
        if len(fams) > 1:
            first = ", ".join(f"{k} ({v.name})" for k, v in sorted(fams.items())[:3])
            raise ValueError(f"{p}: a directory mixes problem families ({first}); give one "
                             "directory per family")


#: fields of a problem file that belong to the benchmark library, not to the problem: the
#: best known objective, whether it is proved optimal, and the solution that attains it
LIBRARY_FIELDS = ("best_known", "proved", "certificate")


def load(data: dict[str, Any], source: str) -> tuple[Family, Any]:
    """``(family, problem)`` of a parsed problem file, its library fields set aside: its
    family resolved once (:func:`sim.registry.load`)."""
    from sim import registry

    return registry.load({k: v for k, v in data.items() if k not in LIBRARY_FIELDS},
                         source=source)


@dataclass(frozen=True)
class Claim:
    """What a problem file says of itself (:data:`LIBRARY_FIELDS`), once checked.

    ``best_known`` is the claimed value when it is in the family's range (else None);
    ``proved`` whether the file says it is optimal; ``certified`` the objective of the
    file's certificate when the family's check accepts it (else None); ``issues`` one
    line per claim that does not hold (out of range, a certificate that is infeasible or
    does not attain ``best_known``)."""

    best_known: float | None = None
    proved: bool = False
    certified: float | None = None
    issues: tuple[str, ...] = ()


def check_claim(path: str | Path, family: Family, problem: Any, data: dict[str, Any]
                ) -> Claim:
    """The file's claims (:class:`Claim`) checked against the family: the range of
    ``best_known`` (:func:`sim.problems.claim_error`), ``proved`` a boolean, the
    certificate by the family's ``check`` and ``objective``."""
    issues = []
    best = data.get("best_known")
    if best is not None and (why := family.claim_error(best)):
        issues.append(f"{path}: best_known: {why}")
        best = None
    proved = data.get("proved", False)
    if not isinstance(proved, bool):
        issues.append(f"{path}: proved: expected true or false, got {proved!r}")
        proved = False
    if proved and best is None:
        issues.append(f"{path}: proved: true without a valid best_known")
        proved = False
    certified = None
    if data.get("certificate") is not None:
        certified, why = _certificate_value(family, problem, data["certificate"])
        if why:
            issues.append(f"{path}: certificate: {why}")
        elif best is not None and abs(certified - best) > TOLERANCE * max(1.0, abs(best)):
            issues.append(f"{path}: certificate: its objective is {certified!r}, the file "
                          f"claims best_known {best!r}")
    return Claim(None if best is None else float(best), proved, certified, tuple(issues))


def _certificate_value(family: Family, problem: Any, certificate: Any
                       ) -> tuple[float | None, str | None]:
    try:
        solution = family.solution_from_json(certificate)
        violations = family.check(problem, solution)
        if violations:
            return None, f"infeasible: {violations[0]}"
        value = float(family.objective(problem, solution))
    except Exception as exc:  # a certificate of the wrong shape may break the check
        return None, f"not a {family.name} solution ({type(exc).__name__}: {exc})"[:300]
    return value, None


# --------------------------------------------------------------------------- one run
def _metrics(result: Any) -> dict[str, Any]:
    """What a stored run keeps of a solver's Result."""
    return {"status": result.status.value, "objective": result.objective,
            "bound": result.bound, "seconds": result.runtime, "solver_gap": result.gap,
            "note": result.note}


def run_bench_cell(cell: dict[str, Any]) -> dict[str, Any]:
    """Run one solver on one problem file; never raises (a failure is a failed row; one
    whose answer failed the family's check has ``metrics`` ``{"invalid_result": true}``)."""
    from sim.result import InvalidResult

    t0 = time.perf_counter()
    row: dict[str, Any] = {"status": "failed", "error": None, "metrics": None,
                           "worker": f"{os.getpid()}"}
    path = Path(cell["file"])
    try:
        _, data, sha, error = read_file(path)  # these bytes are hashed and solved
        if error:
            raise ValueError(error)
        if sha != cell["file_sha256"]:
            raise ValueError(f"{path}: the file changed since the bench began (its "
                             "SHA-256 differs); rerun the bench")
        fam, problem = load(data, str(path))
        result = run_solver(fam, cell["solver"], problem, time_limit=cell["time_limit"],
                            seed=cell["seed"], options=cell.get("options"))
        row["metrics"] = _metrics(result)
        row["status"] = "done"
    except InvalidResult as exc:  # an answer that failed the family's check
        row["error"] = " ".join(f"{path}: {cell['solver']}: {exc}".split())[:500]
        row["metrics"] = {"invalid_result": True}
    except Exception as exc:  # a failed run is data; the bench goes on
        text = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        row["error"] = " ".join(f"{path}: {cell['solver']}: {text}".split())[:500]
    row["wall_seconds"] = time.perf_counter() - t0
    return row


# --------------------------------------------------------------------------- bench
@dataclass
class BenchSummary:
    """What :func:`bench` did and found; ``issues`` are the contradictions between runs
    and the problem files' claims that do not hold (also in ``report.md``)."""

    out: Path
    runs: list[dict[str, Any]]
    ran: int = 0
    skipped: int = 0
    failed: int = 0
    seconds: float = 0.0
    written: list[Path] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)

    @property
    def invalid(self) -> list[str]:
        """The errors of the runs whose answer failed the family's check."""
        return [r["error"] for r in self.runs if r.get("invalid")]

    @property
    def found_errors(self) -> bool:
        """Whether the bench found a contradiction, a false claim of a file or an
        answer that failed the family's check (``schedsearch bench`` exits
        :data:`EXIT_ERRORS` then)."""
        return bool(self.issues or self.invalid)

    def text(self) -> str:
        s = (f"{self.out}: {len(self.runs)} runs ({self.ran} run now, {self.skipped} "
             f"already in the store, {self.failed} failed) in {self.seconds:.1f} s; "
             f"wrote {', '.join(p.name for p in self.written)}")
        if self.issues:
            s += (f"\nERROR: {len(self.issues)} contradiction(s) or false claim(s) "
                  "(report.md, Contradictions):")
            s += "".join(f"\n  {i}" for i in self.issues[:10])
        invalid = self.invalid
        if invalid:
            s += (f"\nERROR: {len(invalid)} answer(s) that failed the family's check "
                  "(report.md, Failed runs):")
            s += "".join(f"\n  {i}" for i in invalid[:10])
        return s


EXIT_ERRORS = 3
"""Exit code of ``schedsearch bench`` when it ran and found errors
(:attr:`BenchSummary.found_errors`): distinct from 1 (an internal error) and 2 (bad
input, nothing run)."""


@dataclass(frozen=True)
class Planned:
    """A problem file as the bench read it once: its ``"problem"`` field as written (None:
    none), its family resolved (None: the file did not load), SHA-256 of the bytes read,
    the file's checked claims, or the error that refuses its runs."""

    problem_field: str | None
    family: Family | None
    sha256: str
    claim: Claim
    error: str | None


def plan_file(path: Path) -> Planned:
    """Read ``path`` once (:func:`read_file`), build its problem and check its claims."""
    from sim import registry

    written, data, sha, error = read_file(path)
    if error is not None:
        return Planned(written, None, sha, Claim(), error)
    try:
        family, problem = load(data, str(path))
    except (ValueError, RecursionError) as exc:
        known = registry.problem_family(written) if written in registry.SOLVERS else None
        why = str(exc) if isinstance(exc, ValueError) else f"{path}: nested too deeply"
        return Planned(written, known, sha, Claim(), why)
    return Planned(written, family, sha, check_claim(path, family, problem, data), None)


def _where(f: Path) -> Path:
    """The file ``f`` names: its target, or itself when it is a dangling link."""
    return f.absolute() if f.is_symlink() and not f.exists() else f.resolve()


def check_distinct(plans: dict[Path, Planned]) -> None:
    """Refuse the same problem twice, naming both paths: two paths of one file (a
    symbolic link, a path given beside its directory) or two files of the same bytes
    (SHA-256). Each would be another instance in every statistic of the report."""
    by_file: dict[Path, Path] = {}
    by_bytes: dict[str, Path] = {}
    for f, plan in plans.items():
        where = _where(f)
        if where in by_file:
            raise ValueError(f"{by_file[where]} and {f}: the same file ({where}) given "
                             "twice; give it once (each would count as a problem)")
        by_file[where] = f
        if plan.sha256 and plan.sha256 in by_bytes:
            raise ValueError(f"{by_bytes[plan.sha256]} and {f}: byte-identical problem files "
                             "(the same instance twice); give one (each would count as a "
                             "problem)")
        by_bytes.setdefault(plan.sha256, f)


def _cells(files: dict[Path, Planned], solvers: Sequence[str],
           time_limit: float | None, seed: int, backend: str | None = None
           ) -> list[dict[str, Any]]:
    cells = []
    for f, plan in files.items():
        family, error = plan.family, plan.error
        resolved = str(_where(f))
        for s in solvers:
            cell = {"file": resolved, "file_sha256": plan.sha256,
                    "family": plan.problem_field or "?",
                    "solver": s, "time_limit": time_limit, "seed": seed,
                    "workload": str(f), "policy": s, "label": s,
                    "kind": family.kind(s) if error is None else "heuristic"}
            if backend is not None and family is not None and family.ilp == s:
                cell.update(options={"backend": backend}, label=f"{s}[{backend}]")
            if error is None and not is_reference(s) and not family.has_solver(s):
                known = ", ".join(sorted(family.solvers))
                cell["refused"] = (f"{f}: solver {s!r} does not solve family "
                                   f"{family.name!r} (its solvers: {known})")
            elif error is not None:
                cell["refused"] = error
            cells.append(cell)
    return cells


def check_options(solvers: Sequence[str], time_limit: float | None, jobs: Any,
                  dask: Any) -> None:
    """Refuse bad options before anything is read or written."""
    if not solvers:
        raise ValueError("--solvers: give at least one solver")
    if time_limit is not None and not (isinstance(time_limit, (int, float))
                                       and math.isfinite(time_limit) and time_limit > 0):
        raise ValueError(f"--time-limit: expected a positive number of seconds, got {time_limit}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"--jobs {jobs!r}: expected a positive number of worker processes")
    if dask is not None and jobs != 1:
        raise ValueError("--dask and --jobs: give one (--dask runs on the cluster's workers)")


def bench(paths: Sequence[str | Path], out: str | Path, *, solvers: Sequence[str],
          time_limit: float | None = 10.0, seed: int = 0, jobs: int = 1, dask: Any = None,
          plots: bool = True, progress: bool = False, backend: str | None = None
          ) -> BenchSummary:
    """Run every solver on every problem file under ``paths``; write ``out/runs.csv``,
    ``out/report.md`` and (with matplotlib) the gap and performance-profile plots.

    Every file is read once here (its bytes hashed, its claims checked); a run reads it
    again and is a failed run when the bytes differ. Every answer passes
    :func:`run_solver` (the family's check and objective; a user's solver in a process
    killed at its time limit plus a grace).

    Parameters
    ----------
    paths : problem files or directories (one family per directory)
    out : output directory; its ``runs.sqlite`` makes a rerun resume
    solvers : registered names or ``MODULE:FUNCTION``
    time_limit : seconds per run (None: no limit)
    seed : passed to every solver
    jobs : local worker processes (1: this process)
    dask : a Dask scheduler address or ``distributed.Client`` (with ``jobs`` = 1)
    backend : MIP backend (``models.mip.BACKENDS``) of the families' ILPs among
        ``solvers``; their runs are labelled ``ilp[BACKEND]``

    Raises
    ------
    ValueError
        Bad options or paths, a directory mixing families, one problem file given twice
        (a link to it, or a byte-identical copy), an unknown solver, a store of
        another kind at ``out``, a store another bench is writing or one that cannot be
        written; nothing is run or written then.
    """
    from sim.sweep.execute import code_version, run_cells
    from sim.sweep.spec import cell_key
    from sim.sweep.store import Store, check_writable

    t0 = time.perf_counter()
    check_options(solvers, time_limit, jobs, dask)
    files = problem_files(paths)
    plans = {f: plan_file(f) for f in files}  # each file read once here
    check_directories(paths, {f: p.problem_field for f, p in plans.items()})
    check_distinct(plans)
    check_solvers(solvers, {p.family for p in plans.values()} - {None})
    cells = _cells(plans, solvers, time_limit, seed, _check_backend(backend, solvers))
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a directory")
    check_writable(out)
    out.mkdir(parents=True, exist_ok=True)
    store = Store.open(out / "runs.sqlite", spec_name="bench", spec_version=BENCH_VERSION)
    try:
        stored = {r["key"]: r for r in store.rows(None)}
        keyed = [(cell_key(c), c) for c in cells]
        todo = [(k, c) for k, c in keyed if k not in stored or (
            stored[k]["status"] != "done" and "refused" not in c)]
        version = code_version()
        store.put_many([(k, c, {"status": "failed", "error": c["refused"]})
                        for k, c in todo if "refused" in c], version)
        runnable = [(k, c) for k, c in todo if "refused" not in c]
        run_cells(store, runnable, jobs=jobs, dask=dask, progress=progress,
                  work=run_bench_cell, batch_seconds=BATCH_SECONDS)
        rows = {r["key"]: r for r in store.rows(None)}
    finally:
        store.close()
    claims = {c["file"]: plans[Path(c["workload"])].claim for c in cells}
    senses = {c["file"]: plan.family.sense for c in cells
              if (plan := plans[Path(c["workload"])]).family is not None}
    runs = table([(c, rows.get(k)) for k, c in keyed], claims, senses)
    summary = BenchSummary(out, runs, ran=len(todo), skipped=len(cells) - len(todo),
                           failed=sum(r["status"] == "FAILED" for r in runs),
                           issues=issues_of(runs))
    summary.written = write_outputs(runs, out, plots=plots)
    summary.seconds = time.perf_counter() - t0
    return summary


def _check_backend(backend: str | None, solvers: Sequence[str]) -> str | None:
    """``backend`` when it is a MIP backend and some solver is a family's ILP."""
    if backend is None:
        return None
    from models.mip import BACKENDS, ILP_SOLVERS

    if backend not in BACKENDS:
        raise ValueError(f"--backend {backend!r}: one of {', '.join(BACKENDS)}")
    if not set(solvers) & set(ILP_SOLVERS.values()):
        raise ValueError(f"--backend {backend}: no solver among --solvers is a family's ILP "
                         f"({', '.join(sorted(set(ILP_SOLVERS.values())))})")
    return backend


# --------------------------------------------------------------------------- tables
def gap_to_best(objective: float | None, best: float | None, how: str) -> float | None:
    """Signed relative gap of ``objective`` to ``best`` (worse is positive); None when it
    is undefined (see the module docstring)."""
    if objective is None or best is None:
        return None
    diff = objective - best if how == "min" else best - objective
    if best == 0:
        return 0.0 if diff == 0 else None
    return diff / abs(best)


def table(pairs: Sequence[tuple[dict[str, Any], dict[str, Any] | None]],
          claims: dict[str, Claim] | None = None, senses: dict[str, str] | None = None
          ) -> list[dict[str, Any]]:
    """The rows of ``runs.csv`` from (cell, stored row) pairs: the best known value and
    the gaps are computed over every run of the same file and its claims (``claims``,
    by the cell's ``file``; see :func:`judge`), in the direction of its family's objective
    (``senses``, ``"min"`` or ``"max"`` by the cell's ``file``; ``"min"`` for a file not
    given, one that did not load). Each row also carries ``issues``, its file's
    contradictions and false claims."""
    by_file: dict[str, list[dict[str, Any]]] = {}
    out = []
    for cell, stored in pairs:
        m = (stored or {}).get("metrics") or {}
        failed = stored is None or stored["status"] != "done"
        r = {"file": cell["workload"], "family": cell["family"],
             "solver": cell.get("label", cell["solver"]),
             "kind": cell["kind"],
             "status": "FAILED" if failed else m["status"],
             "objective": None if failed else m.get("objective"),
             "bound": None if failed else m.get("bound"),
             "seconds": None if failed else m.get("seconds"),
             "error": (stored or {}).get("error") if failed else None,
             "invalid": failed and bool(m.get("invalid_result"))}
        out.append(r)
        by_file.setdefault(cell["file"], []).append(r)
    for path, runs in by_file.items():
        claim = (claims or {}).get(path, Claim())
        how = (senses or {}).get(path, "min")
        best, proved, issues = judge(runs, claim, how)
        for r in runs:
            r["best_known"] = best
            r["best_proved"] = proved
            r["gap_to_best"] = gap_to_best(r["objective"], best, how)
            r["issues"] = issues
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))


def judge(runs: Sequence[dict[str, Any]], claim: Claim, how: str
          ) -> tuple[float | None, bool, list[str]]:
    """``(best_known, best_proved, issues)`` of one file from its runs and its claim.

    ``best_known`` is the best value a solution attains: a run's (each passed the
    family's check and objective) or the file's verified certificate; a claimed
    ``best_known`` without a certificate is never used. A solution is a checked fact, so
    a run's proof that excludes it is false (a contradiction) and proves nothing;
    ``best_proved`` when a run whose proofs hold proved ``best_known`` (OPTIMAL at that
    value, or a bound that meets it). ``issues`` name each contradiction: an OPTIMAL
    run worse than a solution found, a bound that excludes a solution found, INFEASIBLE
    while a solution exists, a file's claim beyond a proved bound that holds, a file's
    "proved" value that a solution beats, and the claim's own issues (:func:`check_claim`)."""
    better = (lambda a, b: a < b and not _close(a, b)) if how == "min" else \
        (lambda a, b: a > b and not _close(a, b))
    label = runs[0]["file"] if runs else "?"
    found = [(r["objective"], f"{r['solver']}'s solution") for r in runs
             if r["objective"] is not None]
    if claim.certified is not None:
        found.append((claim.certified, "the file's certificate"))
    best, where = None, ""
    for v, w in found:
        if best is None or better(v, best):
            best, where = v, w
    issues = list(claim.issues)
    proved = False
    for r in runs:
        v, b, s = r["objective"], r["bound"], r["solver"]
        lied = False
        if best is not None and r["status"] == "OPTIMAL" and v is not None \
                and better(best, v):
            issues.append(f"{label}: contradiction: {s} proved {v!r} optimal, but "
                          f"{where} attains {best!r}")
            lied = True
        if best is not None and b is not None and better(best, b):
            issues.append(f"{label}: contradiction: {s}'s bound {b!r} excludes {best!r}, "
                          f"which {where} attains")
            lied = True
        if best is not None and r["status"] == "INFEASIBLE":
            issues.append(f"{label}: contradiction: {s} says infeasible, but {where} "
                          f"attains {best!r}")
            lied = True
        if lied:
            continue
        if best is not None and ((r["status"] == "OPTIMAL" and v is not None
                                  and _close(v, best)) or (b is not None and _close(b, best))):
            proved = True
        if claim.best_known is not None and b is not None and better(claim.best_known, b):
            issues.append(f"{label}: false claim: the file claims best_known "
                          f"{claim.best_known!r}, {s} proved the bound {b!r}")
    if claim.proved and best is not None and better(best, claim.best_known):
        issues.append(f"{label}: false claim: the file claims {claim.best_known!r} proved "
                      f"optimal, but {where} attains {best!r}")
    return best, proved, list(dict.fromkeys(issues))


def issues_of(runs: Sequence[dict[str, Any]]) -> list[str]:
    """Every file's issues (:func:`judge`), each once, in run order."""
    return list(dict.fromkeys(i for r in runs for i in r.get("issues", ())))


def to_csv(runs: Sequence[dict[str, Any]]) -> str:
    """``runs.csv``: exactly :data:`COLUMNS`, numbers in full precision."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in runs:
        w.writerow(["" if r[c] is None else (repr(r[c]) if isinstance(r[c], float) else r[c])
                    for c in COLUMNS])
    return buf.getvalue()


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def solver_summary(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per solver: runs by status, mean / median / p90 of the gap to the best known value,
    the share of files on which it reached a proved optimum, and its time."""
    import numpy as np

    out = []
    for s in dict.fromkeys(r["solver"] for r in runs):
        rs = [r for r in runs if r["solver"] == s]
        gaps = np.array([r["gap_to_best"] for r in rs if r["gap_to_best"] is not None])
        secs = [r["seconds"] for r in rs if r["seconds"] is not None]
        statuses: dict[str, int] = {}
        for r in rs:
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
        optimal = sum(1 for r in rs if r["best_proved"] and r["gap_to_best"] is not None
                      and r["gap_to_best"] <= 1e-9)
        out.append({
            "solver": s, "kind": rs[0]["kind"], "runs": len(rs), "statuses": statuses,
            "mean_gap": float(gaps.mean()) if len(gaps) else None,
            "median_gap": float(np.median(gaps)) if len(gaps) else None,
            "p90_gap": float(np.percentile(gaps, 90)) if len(gaps) else None,
            "share_optimal": optimal / len(rs),
            "mean_seconds": float(np.mean(secs)) if secs else None,
            "total_seconds": float(np.sum(secs)) if secs else None,
        })
    return out


def to_markdown(runs: Sequence[dict[str, Any]]) -> str:
    """``report.md``: the per-solver summary and the failed runs."""
    files = len({r["file"] for r in runs})
    proved = len({r["file"] for r in runs if r["best_proved"]})
    lines = ["# Bench report", "",
             f"{files} problem files, {len(runs)} runs; the best known value is proved "
             f"optimal on {proved} of {files} files.", "",
             "Gap to best = (objective - best known) / |best known| (signed so that worse is "
             "positive), in %, over the runs with a solution. Share optimal: runs that reach "
             "a proved optimum. Seconds: the solver's own wall-clock time.", "",
             "| solver | kind | runs | statuses | mean gap % | median gap % | p90 gap % | "
             "share optimal | mean s | total s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in solver_summary(runs):
        st = ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items()))
        lines.append(
            f"| {s['solver']} | {s['kind']} | {s['runs']} | {st} | {_pct(s['mean_gap'])} | "
            f"{_pct(s['median_gap'])} | {_pct(s['p90_gap'])} | {s['share_optimal']:.0%} | "
            + ("-" if s["mean_seconds"] is None else f"{s['mean_seconds']:.3f}") + " | "
            + ("-" if s["total_seconds"] is None else f"{s['total_seconds']:.2f}") + " |")
    issues = issues_of(runs)
    if issues:
        lines += ["", f"## Contradictions and false claims ({len(issues)})", "",
                  "A run's proof (OPTIMAL, a bound) that a solution contradicts, or a problem "
                  "file's claim that does not hold; a contradicted proof proves nothing here.",
                  ""]
        lines += [f"- ERROR: {i}" for i in issues[:50]]
    failed = [r for r in runs if r["status"] == "FAILED"]
    if failed:
        lines += ["", f"Failed runs ({len(failed)}):", ""]
        lines += [f"- {'ERROR: ' if r.get('invalid') else ''}{r['error']}"
                  for r in failed[:50]]
        if len(failed) > 50:
            lines.append(f"- ... {len(failed) - 50} more (runs.csv, runs.sqlite)")
    return "\n".join(lines) + "\n"


def write_outputs(runs: Sequence[dict[str, Any]], out: Path, *, plots: bool = True
                  ) -> list[Path]:
    """Write ``runs.csv``, ``report.md`` and, when matplotlib is installed and ``plots``,
    ``gaps.png`` and ``profile.png``; return the paths written."""
    from instances.atomic import write_atomic

    written = []
    for name, text in (("runs.csv", to_csv(runs)), ("report.md", to_markdown(runs))):
        written.append(write_atomic(out / name, text))
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return written
        from sim.sweep.plots import plot_bench_gaps, plot_performance_profile

        written.append(plot_bench_gaps(runs, out / "gaps.png"))
        written.append(plot_performance_profile(runs, out / "profile.png"))
    return written


def compare(path: str | Path, solvers: Sequence[str], *, time_limit: float | None = None,
            seed: int = 0, read: tuple[dict[str, Any], Family, Any] | None = None
            ) -> list[dict[str, Any]]:
    """Solve one problem file with several solvers, side by side; rows as in ``runs.csv``
    plus ``solver_gap`` (the solver's own optimality gap), ``solution`` (JSON-ready,
    jobs named as the problem names them) and ``issues`` (:func:`judge`). Every answer
    passes :func:`run_solver`; one that does not is a FAILED row with its ``error``
    (``invalid`` when the answer failed the family's check, as in :func:`bench`).
    ``read``: the file's parsed JSON, family and problem when the caller has read it
    (:func:`load`), so that the file is read once."""
    from sim.result import InvalidResult, _jsonable

    path = Path(path)
    if read is None:
        _, data, _, error = read_file(path)
        if error:
            raise ValueError(error)
        family, problem = load(data, str(path))
    else:
        data, family, problem = read
    claim = check_claim(path, family, problem, data)
    pairs, extra = [], []
    for s in solvers:
        cell = {"file": str(path.resolve()), "workload": str(path), "family": family.name,
                "solver": s, "kind": family.kind(s)}
        try:
            result = run_solver(family, s, problem, time_limit=time_limit, seed=seed)
        except ValueError as exc:  # an answer that failed the family's check is invalid
            invalid = {"invalid_result": True} if isinstance(exc, InvalidResult) else None
            pairs.append((cell, {"status": "failed", "error": str(exc), "metrics": invalid}))
            extra.append({"solver_gap": None, "note": "", "solution": None})
            continue
        pairs.append((cell, {"status": "done", "metrics": _metrics(result)}))
        extra.append({"solver_gap": result.gap, "note": result.note,
                      "solution": _jsonable(result.solution)})
    rows = table(pairs, {str(path.resolve()): claim}, {str(path.resolve()): family.sense})
    for r, e in zip(rows, extra, strict=True):
        r.update(e)
    return rows


# --------------------------------------------------------------------------- library
def library_dir(family: str) -> Path:
    """The benchmark library's folder of ``family`` (``instances/data/library/FAMILY``)."""
    import instances
    from sim import registry

    if family not in registry.SOLVERS:
        raise ValueError(f"--library: unknown problem family {family!r}; known: "
                         f"{', '.join(sorted(registry.SOLVERS))}")
    return Path(instances.__file__).resolve().parent / "data" / "library" / family


def library_paths(family: str) -> list[Path]:
    """The library's problem files of ``family``; ValueError when it has none."""
    d = library_dir(family)
    files = sorted(d.glob("*.json")) if d.is_dir() else []
    if not files:
        raise ValueError(f"--library {family}: the library has no files for this family "
                         f"({d})")
    return files


def write_library_table(family: str, runs: Sequence[dict[str, Any]]) -> Path:
    """Rewrite ``TABLE.md`` of the library's ``family`` folder: every solver's gap to the
    stored best known values, from a bench over the library."""
    from sim.sweep.execute import code_version

    d = library_dir(family)
    lib = {str(p.resolve()) for p in library_paths(family)}
    mine = [r for r in runs if str(Path(r["file"]).resolve()) in lib]
    text = (f"# Benchmark library: {family}\n\nEvery registered solver on the {len(lib)} "
            f"files of this folder. Regenerated by `schedsearch bench --library {family} "
            f"--update-library --out DIR` at commit {code_version()[:12]}.\n\n" + to_markdown(mine)
            .split("\n", 2)[2])
    from instances.atomic import write_atomic

    # files named relative to the folder
    return write_atomic(d / "TABLE.md", text.replace(f"{d}/", ""))
