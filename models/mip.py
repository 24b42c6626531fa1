"""The MIP backends of the PuLP models: CBC (through PuLP), HiGHS and SCIP (through
OR-Tools' ``model_builder``).

Every ILP of the toolkit is built once as a PuLP model, the modelling layer its users
know. :func:`solve` runs it on one of :data:`BACKENDS`:

``"cbc"``
    PuLP's CBC under :func:`models.cbc.solve_guarded` (one thread; killed ``grace``
    seconds past the limit).
``"highs"``, ``"scip"``
    The PuLP model is translated into an OR-Tools ``model_builder`` model in memory
    (variables with their bounds and integrality, rows, objective and its constant) and
    solved by the HiGHS or SCIP bundled in the pinned ``ortools`` wheel in a worker
    process (:func:`run_worker`, :mod:`models.mip_worker`): the model goes to it as a
    binary ``MPModelProto`` file, the solution comes back as a NumPy file. The workers
    are forked from one fork server per process (started on the first solve, about 1 s;
    then about 0.04-0.07 s per solve more than in-process on a tiny model, measured at
    load average 11 on 2 cores), which imports only NumPy and OR-Tools (``highspy`` is
    never imported: its symbols clash with OR-Tools'; the same server forks the CP-SAT
    workers of :mod:`models.cpsat_process`). The worker asks its solver to
    stop (``interrupt_solve``, keeping its answer) :data:`INTERRUPT_SHARE` of ``grace``
    past the limit; it leads its own session and is killed with its process group
    ``grace`` seconds past the limit, or beyond :data:`WORKER_MEMORY_MB` of resident
    memory. A killed (or crashed) worker gives no values: :func:`solve` returns False
    and :func:`killed_note` says why. Being the fork server's children, the workers
    escape this process's ``ru_maxrss`` and CPU time: their peak is
    :func:`worker_peak_mb`, their CPU :func:`worker_cpu_s`. The time
    spent translating, writing the model and starting the worker is charged to
    ``time_limit``; the solver gets what is left (none left: nothing is solved,
    :func:`solve` returns False). HiGHS runs without presolve (its presolve does not
    look at the clock) and gets :data:`HIGHS_SETUP_PER_INTEGER` seconds per integer
    variable less than is left (its set-up before its first look at the clock).

After :func:`solve`, the PuLP model reads as if CBC had solved it: ``prob.status``,
``prob.sol_status`` (``LpSolutionOptimal`` only for a proved optimum,
``LpSolutionIntegerFeasible`` for a stopped run with a solution) and every variable's
``varValue``; :func:`bound` gives the backend's proved bound on the optimum.

Honesty (what each backend's statuses mean, checked against OR-Tools' sources of its
HiGHS and SCIP proto solvers):

- Exact range: all three backends solve in doubles with absolute tolerances, so a model
  whose rows hold large numbers gets false optima and bounds beyond the optimum
  (measured against brute force: ``sim/experiments/engine/mip_range.py``). :func:`solve`
  refuses a model whose largest number in a row or a bound exceeds the backend's
  :data:`MAX_MAGNITUDE` (ValueError naming the backend and the problem's largest
  field); a backend's bound on an integral objective is rounded up only after
  :func:`ceil_bound` moved it down by the backends' tolerance.

- SCIP: ``OPTIMAL`` includes SCIP's gap-limit stop; SCIP's default gap limit is 0, and
  :func:`solve` additionally requires the reported dual bound to meet the objective
  within ``1e-6`` relative (the tolerance of ``sim.result.build``), or within
  :data:`INTEGRAL_GAP` on a model whose objective is integral (:func:`integral_objective`),
  before it calls a run proved. A stopped run's bound is SCIP's dual bound
  (``best_objective_bound``), a valid bound.
- HiGHS: HiGHS stops as "optimal" at its relative MIP gap (default ``1e-4``); it runs
  with ``mip_rel_gap`` = :data:`GAP_TOL`, or, on a model whose objective is integral,
  with no relative gap and an absolute one of :data:`INTEGRAL_GAP` (both backends get
  :data:`INTEGRAL_PARAMETERS` there). OR-Tools reports HiGHS's incumbent value as
  its ``best_objective_bound`` (also after a time-limit stop), which is no bound: a
  stopped HiGHS run has no bound here (None), and the caller's own bound (a family's
  lower bound, the LP relaxation) is used instead.
- A solution read back is checked against every row of the PuLP model (integer values
  are rounded by OR-Tools): one violating a row by more than :data:`FEAS_TOL` is
  rejected with its bound, the run counting as one without a solution (measured: SCIP
  returned an "optimal" schedule violating equality rows by 0.25 on a k = 21 KTH
  insertion snapshot; HiGHS proved a worse optimum than SCIP's rejected one).
- SCIP runs with ``limits/memory`` = :data:`SCIP_MEMORY_MB`.
- HiGHS's root cut separation looks neither at its clock nor at an interrupt (in-process
  on the k = 27 KTH insertion snapshot ``kth-1997-04-insert-17738308-k27``: 46 s on an
  8 s limit, 31 s on 10 s); the worker is killed instead (8.5 s on the 8 s limit with
  the slack ILP's 0.5 s grace).
- Ctrl-C (``models.interrupt``): SCIP stops at the SIGINT the worker sends itself and
  answers (FEASIBLE, its dual bound); HiGHS, which does not stop (``interrupt_solve``
  reaches neither backend through OR-Tools 9.15's ``model_builder``: measured, both ran
  on to their own limit), is killed at once and its last incumbent read from its file
  of improving solutions (FEASIBLE, no bound), which it writes whole before going on. The family
  then answers the better of that incumbent and its fallback.
- A bound is never trusted blindly downstream: ``sim.result.build`` drops one on the
  wrong side of the recomputed objective.

All backends run single-threaded (CBC serially, HiGHS ``threads=1``; SCIP is
sequential).

Nothing outlives the solve: CBC, the fork server and its workers die with this process
(also when it is killed by SIGKILL: ``models.cbc.die_with_parent``, the server watching
its parent), an interrupted solve (Ctrl-C; SIGTERM, which the CLI raises as an
exception) kills them before it returns, and their files live in per-run temporary
folders (``models.cbc.run_dir``) removed when the solve ends, those of a process killed
by SIGKILL by the next MIP run (the fork server removes its own workers' folders).
"""

from __future__ import annotations

import math
import os
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from models.cbc import (
    _alive,
    bound_from_log,
    cpu_seconds,
    kill_group,
    log_file,
    run_dir,
    solve_guarded,
)

__all__ = ["BACKENDS", "NAMES", "ILP_SOLVERS", "GAP_TOL", "MAX_MAGNITUDE", "ROUND_TOL",
           "WORKER_MEMORY_MB", "INTEGRAL_GAP", "INTEGRAL_PARAMETERS", "MipParameters",
           "ceil_bound", "check_backend", "integral_objective",
           "check_magnitude", "killed_note", "magnitude", "solve", "bound", "rejected",
           "fork_worker", "run_worker", "start_server", "translate", "wait_worker",
           "worker_cpu_s", "worker_peak_mb"]

BACKENDS: tuple[str, ...] = ("cbc", "highs", "scip")
"""The MIP backends every ILP of the toolkit runs on (``backend=`` keyword)."""
NAMES: dict[str, str] = {"cbc": "CBC", "highs": "HiGHS", "scip": "SCIP"}
"""Each backend's name as written in notes."""
ILP_SOLVERS: dict[str, str] = {
    "slack_insertion": "ilp",
    "grouping": "exact-ilp",
    "kresource_epochs": "ilp",
    "kresource_selection": "ilp",
    "kresource_response": "ilp",
    "task_mapping": "ilp",
    "gang_schedule": "ilp",
    "slot_assignment": "ilp",
}
"""The registered solver (``sim.registry.SOLVERS[family]``) of each family that takes
``backend=``; a family not listed has no ILP."""
GAP_TOL = 1e-7
"""Relative gap at which HiGHS and SCIP may call a run optimal (below the 1e-6 within
which ``sim.result.build`` counts a bound as meeting the objective)."""

INTEGRAL_GAP = 0.5
"""Largest absolute gap (objective units) at which a backend may call a run on a model
with an integral objective (:func:`integral_objective`) optimal: below one unit, so the
optimum is proved whole, where :data:`GAP_TOL`'s relative gap would leave whole units
open once the objective passes 1e7 (measured: HiGHS called a subset-sum model with
objective 999,999,926 optimal, where CBC proves 999,999,900)."""
_BOUND_ATTR = "_schedsearch_mip_bound"
_BACKEND_ATTR = "_schedsearch_mip_backend"
_REJECTED_ATTR = "_schedsearch_mip_rejected"
_WHY_ATTR = "_schedsearch_mip_why"
WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mip_worker.py")
"""The HiGHS/SCIP worker script (:mod:`models.mip_worker`), run as ``python -I WORKER``."""


def check_backend(backend: str) -> str:
    """``backend`` if it is one of :data:`BACKENDS`, else ValueError naming the valid
    ones."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown MIP backend {backend!r}; valid backends: "
                         f"{', '.join(BACKENDS)}")
    return backend


MAX_MAGNITUDE: dict[str, float] = {"cbc": 1e9, "highs": 1e7, "scip": 1e8}
"""Largest absolute number in a row or a bound (a coefficient, a right-hand side, a
variable's bound: :func:`magnitude`) a model may hold on each backend: all three solve in
doubles with absolute tolerances (integrality 1e-6 and feasibility 1e-6 to 1e-9), so a
binary within tolerance of 0 or 1 times a large coefficient moves a row or the objective
by whole units, and a proof or a bound stops being one. Measured against brute force at
growing magnitudes by ``sim/experiments/engine/mip_range.py``
(``results/mip_range.md``): the first wrong answer (false optimum) came on task
mapping, at a largest model number of 1.57e9 on HiGHS and 1.63e10 on SCIP, with every
answer right up to 1.76e8 and 1.57e9; CBC answered every instance right up to 8.85e10
in every family (a bound beyond the optimum at 2.16e13 on slack insertion). Each limit
is a power of ten one decade below the largest at which every family agreed: the
sweep's models are tiny, and a row with more terms adds up more tolerance. The same
limit holds for every family. :func:`solve` refuses a model beyond it
(:func:`check_magnitude`). Grouping's rows hold only 0/1 coefficients and the slice
count, and its costs are scaled: its ILP refuses instead a spread of costs its backend
cannot resolve (``models.grouping.SPREAD_LIMIT``). The slot ILP's largest row number is
its round (``n_slots``), at most 75,000 within its variable cap."""


def magnitude(prob: Any) -> tuple[float, str]:
    """The largest absolute finite number in the rows and bounds of the PuLP model
    ``prob`` and where it is (``"coefficient of x_1_0 in row _C3"``, ``"right-hand side
    of row _C3"``, ``"bound of z"``); ``(0.0, "")`` for a model without one.

    The objective's coefficients are not counted: an error in them is relative to the
    objective, which the relative tolerance of a proof (``sim.result.build``) covers;
    an error in a row is absolute (a binary within the integrality tolerance of 0 times
    a large coefficient), which nothing downstream can see."""
    best, where = 0.0, ""

    def finite(values: Any) -> float:
        values = list(values)
        if not values:
            return 0.0
        top = max(max(values), -min(values))  # builtins: no Python call per value
        if top == math.inf:
            return max((v for v in map(abs, values) if v != math.inf), default=0.0)
        return top

    cons = prob.constraints
    for i, c in enumerate(cons() if callable(cons) else cons.values()):
        top = finite(c.values())
        if top > best:
            var = next(v for v, a in c.items() if abs(a) == top)
            best, where = float(top), f"coefficient of {var.name} in row {c.name or f'#{i + 1}'}"
        if c.constant is not None and math.inf != abs(c.constant) > best:
            best, where = float(abs(c.constant)), f"right-hand side of row {c.name or f'#{i + 1}'}"
    for var in prob.variables():
        top = finite(b for b in (var.lowBound, var.upBound) if b is not None)
        if top > best:
            best, where = float(top), f"bound of {var.name}"
    return best, where


ROUND_TOL = 1e-6
"""Relative tolerance (of ``max(1, |bound|)``) a backend's bound is moved down by before
it is rounded up to an integer (:func:`ceil_bound`): it covers the backends'
feasibility and optimality tolerances (1e-6 and tighter) and their relative gap
(:data:`GAP_TOL`)."""


def ceil_bound(bound: float) -> int:
    """A backend's lower bound on an integral minimum rounded up safely: ``ceil(bound -
    ROUND_TOL * max(1, |bound|))`` (a bound a floating backend overshot by its tolerance
    never rounds up past the optimum)."""
    return math.ceil(bound - ROUND_TOL * max(1.0, abs(bound)))


def check_magnitude(prob: Any, backend: str, data: Any = None) -> None:
    """Refuse (ValueError, one line naming the backend, the model's row or bound and, with
    ``data``, the problem's field holding that number, else its largest finite field) a
    model beyond :data:`MAX_MAGNITUDE` of ``backend``. The built model is measured, not the data: a
    row whose numbers the model computes from several fields (a product, a big-M) can
    pass the range while every field is within it; the message then says so."""
    from sim.problems.fields import largest

    value, where = magnitude(prob)
    limit = MAX_MAGNITUDE[backend]
    if value <= limit:
        return
    field, built = "", ""
    if data is not None:
        path, top = largest(data, value)  # the field holding it, else the largest field
        if path and math.isfinite(top):
            field = f"field {path!r} = {top:.15g}: "
        if top != value:
            built = ", a number the model computes from the problem's fields"
    raise ValueError(f"{field}the {NAMES[backend]} backend is exact only on models whose "
                     f"numbers are at most {limit:.0e} in absolute value, and this one holds "
                     f"{value:.15g} ({where}{built}); use --solver cpsat or scale the data "
                     "down")


def killed_note(backend: str, prob: Any = None) -> str:
    """The note of a run :func:`solve` returned False for: CBC killed past its limit,
    HiGHS/SCIP not run, killed past the limit or beyond :data:`WORKER_MEMORY_MB`, or
    their worker crashed (said when ``prob``, the model of that run, is given)."""
    if backend == "cbc":
        from models.cbc import STOPPED_ATTR

        if prob is not None and getattr(prob, STOPPED_ATTR, "") == "interrupted":
            return "CBC stopped by Ctrl-C without an answer"
        return "CBC killed past the time limit"
    why = "" if prob is None else str(getattr(prob, _WHY_ATTR, ""))
    if why == "killed":
        return f"{NAMES[backend]} killed past the time limit"
    if why == "memory":
        return f"{NAMES[backend]} killed beyond {WORKER_MEMORY_MB} MB of memory"
    if why == "interrupted":
        return f"{NAMES[backend]} stopped by Ctrl-C without an answer"
    if why.startswith("crashed"):
        return f"{NAMES[backend]} {why}"
    return f"{NAMES[backend]} gave no answer within the time limit"


def translate(prob: Any) -> tuple[Any, list[Any]]:
    """The PuLP model ``prob`` as an OR-Tools ``model_builder`` model.

    Returns
    -------
    (helper, variables)
        The model (a ``model_builder_helper.ModelBuilderHelper``, the model of
        ``model_builder.Model``, used directly: ``model_builder`` itself imports pandas,
        0.4 s charged to every first solve) and PuLP's variables in the order of the
        model's variable indices.
    """
    import numpy as np
    import pulp
    from ortools.linear_solver.python import model_builder_helper as mbh

    helper = mbh.ModelBuilderHelper()
    pvars = prob.variables()
    n = len(pvars)
    index = {v.name: i for i, v in enumerate(pvars)}
    inf = math.inf
    lb = np.array([-inf if v.lowBound is None else float(v.lowBound) for v in pvars],
                  dtype=np.float64)
    ub = np.array([inf if v.upBound is None else float(v.upBound) for v in pvars],
                  dtype=np.float64)
    integer = np.array([v.cat == pulp.LpInteger for v in pvars], dtype=bool)
    if n:
        helper.add_var_array_with_bounds(lb, ub, integer, "")
    handles = [mbh.Variable(helper, i) for i in range(n)]
    cons = prob.constraints  # a list from a call in PuLP 3.3+ (the mapping is deprecated)
    for c in (cons() if callable(cons) else cons.values()):
        row = helper.add_linear_constraint()
        rhs = -float(c.constant)
        if c.sense == pulp.LpConstraintLE:
            helper.set_constraint_upper_bound(row, rhs)
        elif c.sense == pulp.LpConstraintGE:
            helper.set_constraint_lower_bound(row, rhs)
        else:
            helper.set_constraint_lower_bound(row, rhs)
            helper.set_constraint_upper_bound(row, rhs)
        if c:
            helper.add_terms_to_constraint(row, [handles[index[v.name]] for v in c],
                                           [float(a) for a in c.values()])
    obj = prob.objective
    if obj is not None:
        if obj:
            helper.set_objective_coefficients([index[v.name] for v in obj],
                                              [float(a) for a in obj.values()])
        helper.set_objective_offset(float(obj.constant))
    helper.set_maximize(prob.sense == pulp.LpMaximize)
    return helper, pvars


HIGHS_SETUP_PER_INTEGER = 1e-4
"""Seconds per integer variable HiGHS spends, through OR-Tools, before it first looks at
its clock (measured: 2.9 s for 40,000 binaries at a 0.01 s limit, 0.16 s for as many
continuous variables); that much of the limit is kept back from its ``time_limit``."""


SCIP_MEMORY_MB = 800
"""SCIP's ``limits/memory`` (MB): it stops (with its best solution) beyond it."""
FEAS_TOL = 1e-6
"""Absolute violation of a row (scaled by ``max(1, |rhs|)``) beyond which a solution read
back from HiGHS or SCIP is rejected."""


def _violated(prob: Any) -> bool:
    """Whether the values read into ``prob`` violate a row by more than :data:`FEAS_TOL`
    (relative to ``max(1, |rhs|)``)."""
    import pulp

    cons = prob.constraints
    for c in (cons() if callable(cons) else cons.values()):
        v = c.value()
        if v is None:
            return True
        tol = FEAS_TOL * max(1.0, abs(c.constant))
        if (c.sense == pulp.LpConstraintLE and v > tol) or \
                (c.sense == pulp.LpConstraintGE and v < -tol) or \
                (c.sense == pulp.LpConstraintEQ and abs(v) > tol):
            return True
    return False


@dataclass(frozen=True)
class MipParameters:
    """Backend parameters of one HiGHS/SCIP run (:func:`run_worker`); None keeps the
    toolkit's default of :func:`solve` (HiGHS: presolve off, relative gap
    :data:`GAP_TOL`, seed 0; SCIP: its own defaults). SCIP always gets
    ``limits/memory`` = :data:`SCIP_MEMORY_MB`, HiGHS one thread and no output.

    Attributes
    ----------
    presolve : bool, optional
        The backend's presolve (HiGHS ``presolve``; SCIP off: ``presolving/maxrounds = 0``).
    seed : int, optional
        Random seed (HiGHS ``random_seed``, SCIP ``randomization/randomseedshift``),
        in [0, 2**31 - 1].
    rel_gap, abs_gap : float, optional
        Stopping gaps, relative and absolute (objective units), >= 0.
    feasibility_tol : float, optional
        Primal feasibility tolerance (HiGHS also its MIP and dual ones; SCIP
        ``numerics/feastol``), in (0, 1e-3].
    """

    presolve: bool | None = None
    seed: int | None = None
    rel_gap: float | None = None
    abs_gap: float | None = None
    feasibility_tol: float | None = None

    def __post_init__(self) -> None:
        if self.presolve is not None and not isinstance(self.presolve, bool):
            raise ValueError(f"MIP parameter presolve = {self.presolve!r}: true or false")
        if self.seed is not None and (isinstance(self.seed, bool) or
                                      not isinstance(self.seed, int) or
                                      not 0 <= self.seed <= 2**31 - 1):
            raise ValueError(f"MIP parameter seed = {self.seed!r}: an integer in "
                             "[0, 2**31 - 1]")
        for name in ("rel_gap", "abs_gap"):
            v = getattr(self, name)
            if v is not None and not (_real(v) and 0 <= v < math.inf):
                raise ValueError(f"MIP parameter {name} = {v!r}: a finite number >= 0")
        v = self.feasibility_tol
        if v is not None and not (_real(v) and 0 < v <= 1e-3):
            raise ValueError(f"MIP parameter feasibility_tol = {v!r}: a number in (0, 1e-3]")

    @classmethod
    def of(cls, given: MipParameters | Any | None) -> MipParameters:
        """``given`` itself, the defaults for None, or the parameters of a mapping of
        names to values (ValueError naming an unknown name or a bad value)."""
        if given is None:
            return cls()
        if isinstance(given, cls):
            return given
        from collections.abc import Mapping
        from dataclasses import fields

        if not isinstance(given, Mapping):
            raise ValueError(f"MIP parameters: a mapping of names to values, got "
                             f"{type(given).__name__}")
        known = [f.name for f in fields(cls)]
        for name in given:
            if name not in known:
                raise ValueError(f"unknown MIP parameter {name!r}; known: {', '.join(known)}")
        return cls(**given)


def _real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)


INTEGRAL_PARAMETERS = MipParameters(rel_gap=0.0, abs_gap=INTEGRAL_GAP)
"""The parameters :func:`solve` gives HiGHS and SCIP on a model whose objective is
integral: no relative gap, an absolute one of :data:`INTEGRAL_GAP`."""


def integral_objective(prob: Any) -> bool:
    """Whether every value of the PuLP model ``prob``'s objective is a whole number: a
    whole constant, and whole coefficients on integer variables only."""
    import pulp

    obj = prob.objective
    if obj is None or float(obj.constant) != math.floor(obj.constant):
        return False
    return all(v.cat == pulp.LpInteger and float(c) == math.floor(c)
               for v, c in obj.items() if c)


def _parameters(backend: str, params: MipParameters | None = None) -> str:
    """The backend's parameter string of ``params`` (:class:`MipParameters`)."""
    p = MipParameters() if params is None else params
    if backend == "highs":
        # output off first (else HiGHS prints a banner on stdout); presolve off by
        # default: HiGHS's presolve does not look at the clock (measured: 39 s on a 5 s
        # limit, k = 29 KTH insertion snapshot); the worker is killed past the limit
        words = ["output_flag=false", "log_to_console=false",
                 f"mip_rel_gap={GAP_TOL if p.rel_gap is None else p.rel_gap}", "threads=1",
                 f"random_seed={0 if p.seed is None else p.seed}",
                 f"presolve={'on' if p.presolve else 'off'}"]
        if p.abs_gap is not None:
            words.append(f"mip_abs_gap={p.abs_gap}")
        if p.feasibility_tol is not None:
            words += [f"{k}_feasibility_tolerance={p.feasibility_tol}"
                      for k in ("mip", "primal", "dual")]
        return ",".join(words)
    # SCIP: a memory limit (MB; measured: 2.1 GB and 40 s on a 10 s limit, k = 27 KTH
    # insertion snapshot, without it); its SIGINT handler stops it on Ctrl-C (mip_worker)
    lines = [f"limits/memory = {SCIP_MEMORY_MB}", "misc/catchctrlc = TRUE"]
    if p.presolve is False:
        lines.append("presolving/maxrounds = 0")
    if p.rel_gap is not None:
        lines.append(f"limits/gap = {p.rel_gap}")
    if p.abs_gap is not None:
        lines.append(f"limits/absgap = {p.abs_gap}")
    if p.feasibility_tol is not None:
        lines.append(f"numerics/feastol = {p.feasibility_tol}")
    if p.seed is not None:
        lines.append(f"randomization/randomseedshift = {p.seed}")
    return "\n".join(lines)


WORKER_MEMORY_MB = 1024
"""Resident memory (MB) beyond which the HiGHS/SCIP worker process is killed (its run
then has no answer)."""
INTERRUPT_SHARE = 0.5
"""The worker asks its solver to stop (keeping its incumbent and bound) this share of
``grace`` past the limit, before the parent kills it at the whole ``grace``."""
_POLL = 0.01  # most seconds between two looks at the worker


def _memory_mb(pid: int) -> tuple[float, float]:
    """Resident memory of ``pid`` and its peak so far (``VmRSS``, ``VmHWM``), MB (Linux
    ``/proc``; 0 elsewhere or when gone)."""
    rss = hwm = 0.0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024.0
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return rss, hwm


_PEAK_MB = 0.0


_CPU_S = 0.0


def worker_cpu_s() -> float:
    """CPU seconds (user + system, all threads) of every HiGHS/SCIP/CP-SAT worker this
    process has run: the larger of what ``/proc`` showed while waiting for each (polled
    every :data:`_POLL` s and once more as it ends) and what a worker that ended by itself
    wrote in its answer (``cpu_s``; a killed worker writes none). Like their
    peak memory (:func:`worker_peak_mb`), the workers' CPU escapes this process's
    ``getrusage`` and its parent's ``wait4``: a benchmark adds this figure."""
    return _CPU_S


def _cpu_reported(directory: str) -> float:
    """The CPU seconds a worker that ended by itself wrote in its ``result.json`` (0
    without one): a worker that ends between two looks is gone before ``/proc`` shows it."""
    import json

    try:
        with open(os.path.join(directory, "result.json")) as fh:
            return float(json.load(fh).get("cpu_s") or 0.0)
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def worker_peak_mb() -> float:
    """The largest peak resident memory (MB) of any HiGHS/SCIP worker this process has
    run (0 before the first). The workers are not this process's children (they are the
    fork server's), so this process's ``ru_maxrss`` and its parent's ``wait4`` do not
    count them: a benchmark adds this figure."""
    return _PEAK_MB


def _kill_group(pid: int) -> None:
    """SIGKILL the worker ``pid`` with its process group (it leads its own session once
    started) and wait until it is gone."""
    kill_group(pid)
    end = time.monotonic() + 5.0
    while _alive(pid) and time.monotonic() < end:
        time.sleep(0.005)


class _Server:
    """This process's fork server (:func:`models.mip_worker.serve`), started on the first
    HiGHS/SCIP solve and restarted if it died; one request at a time."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.lock = threading.Lock()

    def forget(self) -> None:
        """In a child forked from this process (a process pool): the parent's server and
        its pipes are the parent's; this process starts its own on its first solve."""
        self.proc = None
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen:
        import sys

        proc = subprocess.Popen([sys.executable, "-I", WORKER, "--serve"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, bufsize=1, start_new_session=True)
        if proc.stdout.readline().strip() != "ready":
            proc.kill()
            proc.wait()
            raise RuntimeError("the MIP worker server did not start")
        return proc

    def ensure(self) -> None:
        """Start the server unless it runs."""
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = self._start()

    def fork(self, directory: str, deadline: float | None) -> int:
        """Process id of a new worker solving the model in ``directory``."""
        request = directory + ("" if deadline is None else f" {deadline!r}") + "\n"
        with self.lock:
            for attempt in (0, 1):
                if self.proc is None or self.proc.poll() is not None:
                    self.proc = self._start()
                try:
                    self.proc.stdin.write(request)
                    self.proc.stdin.flush()
                    answer = self.proc.stdout.readline()
                    return int(answer)
                except (OSError, ValueError):
                    self.proc.kill()
                    self.proc.wait()
                    self.proc = None
                    if attempt:
                        raise
        raise AssertionError("unreachable")


_SERVER = _Server()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _SERVER.forget())


def start_server() -> None:
    """Start this process's fork server now unless it runs (about 1 s, more on a loaded
    machine: a caller that will run a worker later starts it early, in a thread)."""
    _SERVER.ensure()


def _done(pid: int, directory: str) -> bool:
    """Whether the worker ``pid`` ended: its answer written (``result.json`` appears whole,
    by a rename), or the process gone (then ``error.txt``, if any, is complete: an
    ``error.txt`` that exists may still be being written)."""
    return os.path.exists(os.path.join(directory, "result.json")) or not _alive(pid)


def fork_worker(directory: str, deadline: float | None) -> int:
    """Process id of a new worker (:func:`models.mip_worker.child`, forked by this
    process's fork server) solving the job in ``directory``; it ends itself
    ``models.mip_worker.SELF_KILL`` seconds past ``deadline`` (``time.monotonic()``
    seconds; None: never) should its parent die first."""
    return _SERVER.fork(directory, deadline)


def crash_reason(directory: str) -> str:
    """Why a worker of ``directory`` that ended by itself left no answer: ``"crashed
    (...)"`` with the error it wrote, or that it ended without one."""
    err = os.path.join(directory, "error.txt")
    tail = open(err).read().strip() if os.path.exists(err) else "ended without an answer"
    return f"crashed ({tail})"


def wait_worker(pid: int, directory: str, *, kill_at: float | None,
                memory_mb: float = WORKER_MEMORY_MB, ctrl_c_grace: float | None = None
                ) -> tuple[str, float, bool]:
    """Wait until the worker ``pid`` of ``directory`` ends (:func:`fork_worker`), and kill
    it with its process group in any case before returning: at ``kill_at``
    (``time.monotonic()`` seconds; None: no limit), beyond ``memory_mb`` of resident
    memory, or ``ctrl_c_grace`` seconds (default :data:`models.interrupt.GRACE`) after a
    Ctrl-C, which first asks it to stop keeping its answer (the file
    ``models.mip_worker.INTERRUPT`` in ``directory``).

    Returns
    -------
    why : str
        ``"killed"`` (past ``kill_at``), ``"interrupted"`` (killed after a Ctrl-C),
        ``"memory"``, or empty when it ended by itself.
    peak_mb : float
        Its peak resident memory seen, MB.
    asked : bool
        Whether a Ctrl-C asked it to stop.
    """
    from models.interrupt import GRACE, CtrlC

    global _CPU_S
    why, peak, cpu = "", 0.0, 0.0

    def ask() -> bool:  # Ctrl-C: the worker's solver stops, keeping its answer
        nonlocal kill_at
        open(os.path.join(directory, "interrupt"), "w").close()
        end = time.monotonic() + (GRACE if ctrl_c_grace is None else ctrl_c_grace)
        kill_at = end if kill_at is None else min(kill_at, end)
        return True

    try:
        pause = 0.001
        with CtrlC(ask) as ctrl:
            while not _done(pid, directory):
                time.sleep(pause)
                pause = min(2 * pause, _POLL)
                rss, hwm = _memory_mb(pid)
                peak = max(peak, hwm)
                cpu = max(cpu, cpu_seconds(pid))
                if kill_at is not None and time.monotonic() >= kill_at:
                    why = "interrupted" if ctrl.asked.is_set() else "killed"
                elif rss > memory_mb:
                    why = "memory"
                if why:
                    break
    finally:  # killed past its limit, interrupted (Ctrl-C), or ended: nothing outlives
        _CPU_S += max(cpu, cpu_seconds(pid), _cpu_reported(directory))
        _kill_group(pid)
    return why, peak, ctrl.asked.is_set()


def run_worker(model: Any, backend: str, *, deadline: float | None, reserve: float = 0.0,
               grace: float = 0.5, memory_mb: float | None = None,
               parameters: MipParameters | Any | None = None) -> dict[str, Any]:
    """Solve the ``model_builder`` model ``model`` on HiGHS or SCIP in a child process
    (:mod:`models.mip_worker`) that is killed with its process group ``grace`` seconds
    past ``deadline`` or beyond ``memory_mb`` of resident memory.

    Parameters
    ----------
    model : ModelBuilderHelper
    backend : {"highs", "scip"}
    deadline : float or None
        ``time.monotonic()`` seconds at which the solver's time is up (its start-up and
        the model's transfer are charged to it); None: no limit.
    reserve : float
        Seconds kept back from the solver's own limit (its set-up before it first looks
        at its clock).
    grace : float
        Seconds past ``deadline`` after which the worker is killed.
    memory_mb : float, optional
        Default :data:`WORKER_MEMORY_MB`.
    parameters : MipParameters or mapping, optional
        The backend's parameters (:class:`MipParameters`, or a mapping of its field
        names to values; ValueError naming an unknown name or a bad value before
        anything runs). Default: those of :func:`solve`.

    Returns
    -------
    dict
        The worker's ``result.json`` (``status``, ``has_solution``, ``objective``,
        ``bound``, ``highspy``) with ``values`` (a NumPy array, or None), ``peak_mb``
        (the worker's peak resident memory, MB) and ``why`` (why
        there is no answer: ``"killed"`` past the limit, ``"memory"``, ``"crashed"``,
        ``"interrupted"``; empty otherwise); ``status`` None when the worker gave no
        answer; ``interrupted``: whether a Ctrl-C asked the solver to stop (its answer is
        then the best so far, not what the limit allowed).
    """
    import json

    import numpy as np

    check_backend(backend)
    if backend == "cbc":
        raise ValueError("run_worker: the worker runs HiGHS or SCIP, not CBC")
    params = MipParameters.of(parameters)
    memory_mb = WORKER_MEMORY_MB if memory_mb is None else float(memory_mb)
    with run_dir("schedsearch_mip_") as tmp:
        if not model.write_model_to_proto_file(os.path.join(tmp, "model.pb")):
            raise RuntimeError("could not write the model for the MIP worker")
        with open(os.path.join(tmp, "job.json"), "w") as fh:
            json.dump({"backend": backend, "parameters": _parameters(backend, params),
                       "deadline": deadline, "reserve": reserve,
                       "interrupt_at": None if deadline is None else
                       deadline + INTERRUPT_SHARE * grace}, fh)
        pid = fork_worker(tmp, deadline)
        # HiGHS heeds no interrupt: waiting after a Ctrl-C would only delay reading its file
        why, peak, asked = wait_worker(pid, tmp, kill_at=None if deadline is None else
                                       deadline + grace, memory_mb=memory_mb,
                                       ctrl_c_grace=0.0 if backend == "highs" else None)
        result_path = os.path.join(tmp, "result.json")
        if why == "interrupted" and backend == "highs":
            return _improving(tmp, model.num_variables(), peak)
        if why or not os.path.exists(result_path):
            why = why or crash_reason(tmp)
            _record_peak(peak)
            return {"status": None, "has_solution": False, "objective": None, "bound": None,
                    "values": None, "why": why, "peak_mb": peak, "interrupted": asked}
        with open(result_path) as fh:
            out = json.load(fh)
        out["peak_mb"] = max(peak, float(out.get("peak_mb") or 0.0))
        _record_peak(out["peak_mb"])
        values_path = os.path.join(tmp, "values.npy")
        out["values"] = np.load(values_path) if out["has_solution"] else None
        out["why"] = "interrupted" if asked else ""
        out["interrupted"] = asked
        return out


def _improving(directory: str, n: int, peak: float) -> dict[str, Any]:
    """:func:`run_worker`'s answer for a HiGHS worker killed after a Ctrl-C: its last
    incumbent from its file of improving solutions (FEASIBLE, no bound), else none."""
    import numpy as np

    from models.mip_worker import read_improving

    _record_peak(peak)
    found = read_improving(directory, n)
    return {"status": None if found is None else "FEASIBLE", "has_solution": found is not None,
            "objective": None if found is None else found[0], "bound": None,
            "values": None if found is None else np.asarray(found[1], dtype=np.float64),
            "why": "interrupted", "peak_mb": peak, "interrupted": True}


def _record_peak(mb: float) -> None:
    global _PEAK_MB
    _PEAK_MB = max(_PEAK_MB, mb)


def solve(prob: Any, *, backend: str = "cbc", time_limit: float | None = None,
          grace: float = 0.5, log_path: str | None = None, data: Any = None) -> bool:
    """Solve the PuLP model ``prob`` on ``backend`` (module docstring).

    Parameters
    ----------
    prob : pulp.LpProblem
    backend : {"cbc", "highs", "scip"}
    time_limit : float, optional
        Seconds from this call, translation included (None: no limit).
    grace : float
        Seconds past the limit after which CBC or the HiGHS/SCIP worker is killed.
    log_path : str, optional
        CBC only: the log file :func:`bound` reads CBC's bound from.
    data : optional
        The problem the model was built from: named in a refusal.

    Returns
    -------
    bool
        True when the backend ended and its answer was read into ``prob``; False when
        it was killed (time or memory), its worker crashed, or the limit left no time
        to solve (no values read; :func:`killed_note` says which).

    Raises
    ------
    ValueError
        An unknown backend, or a model beyond the backend's :data:`MAX_MAGNITUDE`.
    """
    import pulp

    from models.deadline import limit_of

    check_backend(backend)
    check_magnitude(prob, backend, data)
    time_limit = limit_of(time_limit)
    setattr(prob, _BOUND_ATTR, None)
    setattr(prob, _BACKEND_ATTR, backend)
    setattr(prob, _REJECTED_ATTR, False)
    if backend == "cbc":
        return solve_guarded(prob, time_limit=time_limit, grace=grace, log_path=log_path)
    start = time.perf_counter()
    model, pvars = translate(prob)
    reserve = 0.0
    if backend == "highs":
        reserve = HIGHS_SETUP_PER_INTEGER * sum(1 for v in pvars if v.cat == pulp.LpInteger)
    deadline = None
    if time_limit is not None:
        deadline = time.monotonic() + float(time_limit) - (time.perf_counter() - start)
        if deadline - time.monotonic() - reserve < 0.01:
            return False
    integral = integral_objective(prob)
    answer = run_worker(model, backend, deadline=deadline, reserve=reserve, grace=grace,
                        parameters=INTEGRAL_PARAMETERS if integral else None)
    setattr(prob, _WHY_ATTR, answer.get("why", ""))
    if answer.get("status") in (None, "NO_TIME"):
        for v in pvars:
            v.varValue = None
        return False
    status = answer["status"]
    has = bool(answer["has_solution"])
    values = answer.get("values")
    for i, v in enumerate(pvars):
        v.varValue = None if values is None else float(values[i])
    obj = float(answer["objective"]) if has else None
    if has and _violated(prob):  # numerical trouble: trust neither solution nor bound
        for v in pvars:
            v.varValue = None
        prob.status = pulp.LpStatusNotSolved
        prob.sol_status = pulp.LpSolutionNoSolutionFound
        setattr(prob, _REJECTED_ATTR, True)
        return True
    proved_bound = None
    if backend == "scip" and has and not _missing(answer["bound"]):
        proved_bound = float(answer["bound"])
    proved = status == "OPTIMAL"
    if proved and backend == "scip":
        proved = proved_bound is not None and abs(obj - proved_bound) <= \
            (INTEGRAL_GAP if integral else 1e-6 * max(1.0, abs(obj)))
    if proved:
        prob.status, prob.sol_status = pulp.LpStatusOptimal, pulp.LpSolutionOptimal
        proved_bound = obj if proved_bound is None else proved_bound
    elif has:
        prob.status, prob.sol_status = pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible
    elif status == "INFEASIBLE":
        prob.status, prob.sol_status = pulp.LpStatusInfeasible, pulp.LpSolutionInfeasible
    elif status == "UNBOUNDED":
        prob.status, prob.sol_status = pulp.LpStatusUnbounded, pulp.LpSolutionUnbounded
    else:
        prob.status = pulp.LpStatusNotSolved
        prob.sol_status = pulp.LpSolutionNoSolutionFound
    setattr(prob, _BOUND_ATTR, proved_bound)
    return True


def solve_logged(prob: Any, *, backend: str = "cbc", time_limit: float | None = None,
                 grace: float = 0.5, prefix: str = "cbc_", data: Any = None
                 ) -> tuple[str, float | None]:
    """:func:`solve` with CBC's log in a temporary file (name ``prefix...``), removed
    before returning.

    Returns
    -------
    outcome : {"optimal", "feasible", "infeasible", "none", "stopped"}
        A proved optimum, a solution not proved, proved infeasible, no solution (stopped,
        unbounded or rejected), or :func:`solve` returned False (killed, or no time to
        solve; nothing read).
    bound : float or None
        The bound the run proved (:func:`bound`; None when it was stopped or proved none).
    """
    import pulp

    logfile = log_file(prefix)
    try:
        if not solve(prob, backend=backend, time_limit=time_limit, grace=grace,
                     log_path=logfile, data=data):
            return "stopped", None
        found = bound(prob, logfile)
    finally:
        os.unlink(logfile)
    if prob.sol_status == pulp.LpSolutionOptimal:
        return "optimal", found
    if prob.sol_status == pulp.LpSolutionIntegerFeasible:
        return "feasible", found
    return ("infeasible" if prob.status == pulp.LpStatusInfeasible else "none"), found


def _missing(x: Any) -> bool:
    try:
        return x is None or not math.isfinite(float(x))
    except (TypeError, ValueError):  # pandas.NA
        return True


def rejected(prob: Any) -> bool:
    """Whether the last :func:`solve` of ``prob`` rejected the backend's solution (a row
    violated beyond :data:`FEAS_TOL`); the run then counts as one without a solution."""
    return bool(getattr(prob, _REJECTED_ATTR, False))


def bound(prob: Any, log_path: str | None = None) -> float | None:
    """The proved bound on the optimum of the last :func:`solve` of ``prob`` (lower for
    minimisation, upper for maximisation): CBC's from its log (``log_path``), SCIP's
    dual bound, or for HiGHS the objective of a proved optimum only; None when there
    is none."""
    if getattr(prob, _BACKEND_ATTR, "cbc") == "cbc":
        return None if log_path is None else bound_from_log(log_path)
    value = getattr(prob, _BOUND_ATTR, None)
    return None if value is None else float(value)
