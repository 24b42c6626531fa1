"""Per-(job, start) time-indexed MIP of the slack-constrained insertion problem on HiGHS or
SCIP (OR-Tools' ``model_builder``, presolve on); registered inside the ``cpsat+ti``
portfolio (:mod:`models.slack_insertion.tiportfolio`). Times in integer seconds; prices
in the family's units (:func:`sim.problems.insertion.objective`).

Model
-----
One binary ``x[j, tau]`` per job ``j`` (the waiting jobs and the new job) and candidate
start ``tau``: the job's chain set (:func:`models.slack_insertion.domains.chain_times`
over the dominant start times, inside its domain shrunk by the incumbent's price,
:func:`models.slack_insertion.domains.tighten_domains`), where the job fits next to the
running jobs and its cost is finite. One start per job (``sum_tau x[j, tau] = 1``).
Capacity: at every candidate start ``u`` at which the jobs that can run may exceed the
free processors, ``sum_j sum_{tau in (u - t_j, u]} n_j x[j, tau] <= free(u)``. The load
only rises at starts and the free capacity only rises with time, so rows at the starts
suffice. Objective: the price, each ``x[j, tau]`` costing
:func:`sim.problems.insertion.job_cost` (any alphas). Some optimal schedule (ties of
:data:`sim.problems.insertion.PRICE_TOL` included) starts every job in its set (the proofs
in :mod:`models.slack_insertion.domains`).

Forms (``form=``): ``"start"`` (the default) is the model above, with one nonzero per
(job, start, capacity row) in the window ``(u - t_j, u]``. ``"step"`` has the same
relaxation in "started by" binaries ``z[j, k]`` (job ``j`` starts at its ``k``-th
candidate or earlier; ``x[j, k] = z[j, k] - z[j, k - 1]``, ``z[j, -1] = 0``, the last
``z`` fixed to 1, rows ``z[j, k - 1] <= z[j, k]``): a capacity row holds at most 2
nonzeros per job, so the model stays small where the start form is refused. Measured
(both forms built on the 91 bundled KTH snapshots with 21-50 waiting jobs, from the
current schedule): the start form exceeds :data:`MAX_NONZEROS` on 35 (13 of 40 at
21-30, 22 of 51 at 31-50; up to 152 million), the step form on none (at most 0.31
million). But it proves less. On 12 of those 35 (``cpsat+ti`` at 30 s, load 6-10 on 2
cores) CP-SAT proved 5 within its share, and on the other 7 HiGHS gave no schedule in
the step form before it was killed at the limit, so the step form only took time from
CP-SAT (two prices came out worse); on ``kth-1997-05-remove-21356014-k24``, from CP-SAT's
schedule, neither HiGHS nor SCIP gave a schedule in 60 s (HiGHS with presolve off: none
in 40 s). Where both forms fit, the step form was slower:
``kth-1996-11-remove-3806616-k14`` is proved by HiGHS in 0.8 s in the start form, 27 s
in the step form (with presolve off, not the fewest-moved stage in 30 s);
``kth-1996-11-insert-4587267-k12`` in 2.1 s against 8.2 s. HiGHS's log on k14 says
why: the same relaxation, but after presolve its root bound is -174,092 in the start
form (0.7 s to the optimum -147,684, one node) and -175,927 in the step form, whose
rows of mixed signs its cuts and sub-MIP close only after seven restarts (17 s). (The
cumulative capacity form of :mod:`models.slack_insertion.bounds` has the same
weakness.) So the start form is
the default and the step form an option.

Incumbent filter: with ``P0`` the incumbent's price plus its tie width and ``m_k`` the
cheapest candidate of job ``k``, a schedule no dearer than ``P0`` starts ``j`` only at
``tau`` with ``c[j, tau] <= P0 - sum_{k != j} m_k``; other candidates are dropped (twice
over, and with :data:`FILTER_SLACK` of room against float rounding).

Reduced-cost fixing (``fixing=``, an :class:`models.slack_insertion.bounds.InsertionBound`
of the problem): the certified LP bound's Lagrangian drops more candidates than the
incumbent filter. The LP (:mod:`models.slack_insertion.bounds`) has columns ``x[j, k]``
over each job's dominant starts inside its domain shrunk by the LP's incumbent, one start
per job, and rows ``A x <= b`` that every schedule satisfies (the capacity rows, which
are the inequalities of the start form here, and cardinality cuts). For ANY multipliers
``u >= 0`` (GLOP's duals clipped at 0, used as given: they need not be optimal, nor
even close) and any schedule ``x`` of those columns,

    ``c x >= c x + u (A x - b) = -u b + sum_j (c + u A)[j, k_j]
         >= L + sum_j g[j, k_j] >= L + g[j, k_j]`` for each job ``j``,

with ``L = -u b + sum_j min_k (c + u A)[j, k]`` and ``g[j, k] = (c + u A)[j, k] - min_k'
(c + u A)[j, k'] >= 0``, both recomputed in float64 from the exact costs and the
multipliers (not GLOP's objective or reduced costs), lowered by a relative margin of the
magnitudes summed (:data:`models.slack_insertion.bounds.MARGIN`). So a schedule of price
``<= U`` never starts ``j`` at ``tau_k`` with ``L + g[j, k] > U``:
:meth:`~models.slack_insertion.bounds.InsertionBound.forbidden` at ``U = P`` (the price
of the incumbent the candidates are built from) drops those, with twice the tie width
and the margin of room, and this model drops them from its candidates (the incumbent's
own starts always stay, so the model keeps a schedule). Nothing a needed schedule uses
is dropped: the left-shifted optimum ``S`` of :mod:`models.slack_insertion.domains` (and
the fewest-moved one of the optimum's tie) costs at most the optimum plus the tie
width, which is at most both incumbents' prices plus their tie widths, so it lies in
the LP's shrunk domains and in its dominant starts, i.e. among the LP's columns, where
the inequality applies, and its price is ``<= P`` plus the tie width; a candidate not
among the LP's columns is never dropped. The second stage fixes at its own incumbent's
(stage 1's) price ``P1``, every schedule of the tie of the optimum being within the
tie width of ``P1 >= optimum``. Measured on the KTH snapshots: REPORT.md of
``sim/experiments/talby`` (exact insertion).

Second stage (``tie_break=True``): price ``<= P1 + price_tolerance(P1)`` (``P1`` the first
stage's price) and fewest moved waiting jobs, as the ``ilp`` solver does, on the model
rebuilt with the first stage's schedule as the incumbent. Skipped as proved when that
schedule moves no more jobs than must move: those whose ``te`` left their candidate set
(the left shift of :mod:`models.slack_insertion.domains` never moves a job off its
``te``, so some schedule of the tie with the fewest moved jobs lies in the sets).

What a floating MIP proves
--------------------------
HiGHS and SCIP work in doubles with tolerances. The schedule is read back by rounding,
checked by :func:`sim.problems.insertion.check` and priced exactly by
:func:`sim.problems.insertion.objective`; nothing of the solver's objective is copied.
The solver's bound ``b`` (HiGHS: its objective at a proved optimum, since OR-Tools gives
no other HiGHS bound; SCIP: its dual bound) is made safe as ``b - margin`` with ``margin
= REL_MARGIN max(1, |b|) + FEAS_TOL * (number of binaries)``. Why this covers the
tolerances: the stopping gaps are set to 0; a primal or integrality tolerance only
enlarges the region the solver minimises over, which lowers its bound (the safe side),
while the difference it makes to the schedule's price is not assumed but measured (the
schedule is rounded and priced exactly); a reduced cost accepted within the dual
tolerance :data:`FEAS_TOL` can raise an LP bound by at most that much per binary (each
lies in [0, 1]); ``REL_MARGIN`` covers the rounding of the solver's sums. The price is
*proved* only when the recomputed price minus the safe bound is at most
:func:`sim.problems.insertion.price_tolerance`; otherwise the result is FEASIBLE with the
safe bound (the note gives the gap). This is a careful reading of the tolerances, not an
exact certificate (the dual tolerance applies to the solver's scaled model).

Refusals: a capacity above the backend's exact range
(:data:`models.mip.MAX_MAGNITUDE`: the rows would no longer be exact in the solver's
tolerances), a cost above :data:`MAX_COST`, or more than ``max_variables`` binaries or
``max_nonzeros`` nonzeros raise ValueError naming the field or the size; so do a backend
other than HiGHS or SCIP (CBC with its reason, :func:`check_backend`) and an unknown
form.

Limits: ``time_limit`` covers listing candidates, building, both stages and reading the
answers. The solver runs in the project's MIP worker process
(:func:`models.mip.run_worker`, with :func:`_parameters`), killed with its process group
:data:`GRACE` seconds past the limit or beyond
:data:`models.mip.WORKER_MEMORY_MB`; HiGHS's presolve does not look at its clock, so a
run stuck in it is killed and gives no schedule. Ctrl-C asks the solver to stop, keeping
its answer: the schedule so far (or the incumbent, or the current schedule) is returned
as FEASIBLE, the fewest-moved stage not run, the note saying so. HiGHS gets no solution
hint (through ``model_builder`` it crashed on them); SCIP gets the stage's incumbent as
one when asked (``hint=True``).
"""

from __future__ import annotations

import math
import threading
import time
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from models import mip
from models.slack_insertion.bounds import InsertionBound
from models.slack_insertion.common import Deadline, finish
from models.slack_insertion.domains import (
    CHAIN_CAP,
    chain_times,
    dominant_times,
    incumbent_domains,
)
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result, Status

__all__ = ["solve_ti", "TiOutcome", "solve_stages", "start_worker_server", "model_size",
           "BACKENDS", "FORMS", "FEAS_TOL", "REL_MARGIN", "MAX_COST",
           "MAX_NONZEROS", "GRACE"]

BACKENDS = ("highs", "scip")
"""The ``model_builder`` backends this model runs on (CBC is refused: see
:func:`check_backend`)."""
FORMS = ("start", "step")
"""The model's forms (module docstring): per (job, start) binaries (the default) or
"started by" binaries."""
FEAS_TOL = 1e-9
"""Primal, dual and integrality feasibility tolerance given to the backend."""
REL_MARGIN = 1e-10
"""Relative share (of ``max(1, |b|)``) a bound is lowered by (rounding of the solver's
sums; the stopping gaps are 0)."""
MAX_COST = 1e15
"""Largest absolute cost of one (job, start) pair (price units)."""
MAX_NONZEROS = 2_000_000
"""Default largest number of nonzeros in the rows (building took 23.6 s for 56.7 million
at load 7 on 2 cores, about 0.4 s per million: about 1 s here)."""
GRACE = 0.5
"""Seconds past the limit after which the worker is killed."""
FILTER_SLACK = 1e-9
"""Relative room (of the sum of the absolute terms) the incumbent filter keeps."""


class _Stopped(Exception):
    """The time limit ran out while preparing the model."""


CLOCK_POINTS = 256
"""Candidate starts (or capacity rows) between two looks at the clock while the
capacity rows are found and their nonzeros counted: each costs O(jobs) bisections, and
10^6 candidates of 100 jobs took 2.6 s and 2.4 s of CPU for the two."""


@dataclass(frozen=True)
class _Data:
    """The model's data: jobs ``(id, n, t)``, candidate starts and costs per job,
    capacity rows (times) and the free processors at each."""

    jobs: list[tuple[int, int, int]]
    cand: dict[int, list[int]]
    cost: dict[int, list[float]]
    rows: list[int]
    free: dict[int, int]
    fixed: int = 0


@dataclass(frozen=True)
class TiOutcome:
    """What :func:`solve_stages` found: the schedule (or None), the safe bound on the
    price (or None), whether the price and the fewest-moved stage were proved, and
    notes."""

    schedule: InsertionSchedule | None
    bound: float | None
    price_proved: bool
    moved_proved: bool
    notes: tuple[str, ...]
    params: dict[str, Any]


def solve_ti(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
             backend: str = "highs", incumbent: InsertionSchedule | None = None,
             tie_break: bool = True, max_points: int = 200_000,
             max_variables: int = 200_000, max_nonzeros: int = MAX_NONZEROS,
             form: str = "start") -> Result:
    """Optimal insertion by the time-indexed MIP of the module docstring.

    Parameters
    ----------
    problem : InsertionProblem
        Any alphas.
    time_limit : float, optional
        Seconds for everything.
    seed : int
        The backend's random seed.
    backend : {"highs", "scip"}
        The MIP backend (``"cbc"`` is refused with the reason, ValueError).
    incumbent : InsertionSchedule, optional
        A feasible schedule whose price shrinks the domains (checked; the current
        schedule is used as well).
    tie_break : bool
        Run the fewest-moved stage.
    max_points : int
        Refuse more candidate start times (ValueError).
    max_variables : int
        Refuse more binaries (ValueError).
    max_nonzeros : int
        Refuse more nonzeros in the rows (ValueError): a capacity row holds every
        candidate start of every job that may run at its time, so long jobs with dense
        candidate sets give tens of millions (56.7 million on the k = 21 KTH snapshot
        ``kth-1997-05-insert-21180393-k21`` in the ``"start"`` form, which took 24 s to
        build; 0.17 million in the ``"step"`` form).
    form : {"start", "step"}
        The model's form (:data:`FORMS`; module docstring for the measurements).

    Returns
    -------
    Result
        OPTIMAL only when the price is proved within the tie tolerance by the safe bound
        and the fewest-moved stage was proved (never without ``tie_break``).
    """
    deadline = Deadline(time_limit)
    out = solve_stages(problem, deadline=deadline, seed=seed, backend=backend,
                       incumbent=incumbent, tie_break=tie_break, max_points=max_points,
                       max_variables=max_variables, max_nonzeros=max_nonzeros, form=form)
    sch = ins.best(problem, [s for s in (out.schedule, incumbent,
                                         ins.current_schedule(problem)) if s is not None])
    proved = out.price_proved and out.moved_proved and sch is out.schedule
    status = Status.OPTIMAL if proved else Status.FEASIBLE
    notes = list(out.notes)
    if out.price_proved and not proved:
        notes.append("the price is proved optimal by the safe bound; fewest moved jobs not "
                     "proved")
    params = {"time_limit": time_limit, "backend": backend, "tie_break": tie_break,
              "form": form, **out.params}
    bound = out.bound
    if out.price_proved and bound is not None:
        bound = min(bound, ins.objective(problem, sch))
    return finish("ti", problem, sch, status, bound, deadline, seed, params,
                  note="; ".join(notes))


def solve_stages(problem: InsertionProblem, *, deadline: Deadline, seed: int = 0,
                 backend: str = "highs", incumbent: InsertionSchedule | None = None,
                 tie_break: bool = True, max_points: int = 200_000,
                 max_variables: int = 200_000, max_nonzeros: int = MAX_NONZEROS,
                 form: str = "start", fixing: InsertionBound | None = None,
                 hint: bool = False) -> TiOutcome:
    """Both stages of the module docstring under ``deadline`` (see :func:`solve_ti`).

    ``fixing``: a certified LP bound (:func:`models.slack_insertion.bounds.insertion_bound`
    of this problem) whose reduced costs drop the candidates no schedule within the tie
    of the stage's incumbent can use ("Reduced-cost fixing" in the module docstring).
    ``hint``: give SCIP the incumbent as its starting solution (ignored on HiGHS, which
    crashed on hints through ``model_builder``).
    """
    check_backend(backend)
    check_form(form)
    _check_magnitude(problem, backend)
    if incumbent is not None:
        wrong = ins.check(problem, incumbent)
        if wrong:
            raise ValueError(f"ti: the incumbent schedule is infeasible: {wrong[0]}")
    inc = ins.best(problem, [s for s in (incumbent, ins.current_schedule(problem))
                             if s is not None])
    params: dict[str, Any] = {}
    try:
        data = _data(problem, inc, deadline, max_points, fixing)
    except _Stopped:
        return TiOutcome(None, None, False, False, ("stopped by the time limit while "
                                                    "listing candidate starts",), params)
    nx = sum(len(v) for v in data.cand.values())
    try:
        nnz = _nonzeros(data, form, deadline)
    except _Stopped:
        return TiOutcome(None, None, False, False, ("stopped by the time limit while "
                                                    "counting the model's nonzeros",), params)
    params.update(variables=nx, capacity_rows=len(data.rows), nonzeros=nnz, model_form=form)
    if fixing is not None:
        params["fixed_starts"] = data.fixed
    if nx > max_variables or nnz > max_nonzeros:
        raise ValueError(f"ti: {nx:,} (job, start) variables and {nnz:,} nonzeros, more "
                         f"than max_variables={max_variables:,} or max_nonzeros="
                         f"{max_nonzeros:,}")
    margin = FEAS_TOL * nx
    try:
        model = _model(data, deadline, form)
    except _Stopped:
        return TiOutcome(None, None, False, False, ("stopped by the time limit while "
                                                    "building the model",), params)
    if hint and backend == "scip":
        _hint(model, problem, data, form, inc)
    ans = _run(model, backend, deadline, seed)
    params["stage1_status"] = ans.get("status")
    if not ans.get("has_solution"):
        why = ans.get("why") or ans.get("status")
        return TiOutcome(None, None, False, False,
                         (f"{mip.NAMES[backend]} stage 1 gave no schedule ({why})",), params)
    sch1 = _read(problem, data, _x_values(data, form, ans["values"]))
    if ins.check(problem, sch1):
        return TiOutcome(None, None, False, False, (
            f"the schedule of {mip.NAMES[backend]} failed the exact check (solver "
            "tolerances); rejected",), params)
    p1 = ins.objective(problem, sch1)
    raw = None
    if ans["status"] == "OPTIMAL":
        raw = float(ans["objective"]) if backend == "highs" else _finite(ans.get("bound"))
    elif backend == "scip":
        raw = _finite(ans.get("bound"))
    bound = None
    if raw is not None:
        bound = min(raw - REL_MARGIN * max(1.0, abs(raw)) - margin, p1)
    params.update(stage1_objective=ans.get("objective"), stage1_bound=raw, safe_bound=bound,
                  bound_margin=margin)
    price_proved = bound is not None and p1 - bound <= ins.price_tolerance(p1)
    notes = []
    if ans.get("interrupted"):
        notes.append(f"{mip.NAMES[backend]} stopped by Ctrl-C")
    if ans["status"] == "OPTIMAL" and not price_proved:
        notes.append(f"{mip.NAMES[backend]} optimal within its tolerances only: price "
                     f"within {p1 - bound:.3g} of the safe bound")
    elif ans["status"] != "OPTIMAL":
        notes.append(f"{mip.NAMES[backend]} stage 1 stopped ({ans['status']})")
    if not price_proved or not tie_break or deadline.expired() or ans.get("interrupted"):
        if price_proved and tie_break and not ans.get("interrupted"):
            notes.append("stopped by the time limit before the fewest-moved stage")
        return TiOutcome(sch1, bound, price_proved, False, tuple(notes), params)
    return _tie_stage(problem, backend, deadline, seed, sch1, bound, notes, params,
                      max_points, form, fixing, hint)


def model_size(problem: InsertionProblem, deadline: Deadline,
               incumbent: InsertionSchedule | None = None,
               max_points: int = 200_000, backend: str = "highs",
               form: str = "start", fixing: InsertionBound | None = None
               ) -> tuple[int, int] | None:
    """``(binaries, row nonzeros)`` of the stage-1 model in ``form`` with the domains
    shrunk by the best of ``incumbent`` and the current schedule, less the candidates
    ``fixing`` rules out (None when ``deadline`` passed while listing the candidates);
    ValueError as :func:`solve_stages` for data it refuses."""
    check_backend(backend)
    check_form(form)
    _check_magnitude(problem, backend)
    inc = ins.best(problem, [s for s in (incumbent, ins.current_schedule(problem))
                             if s is not None])
    try:
        data = _data(problem, inc, deadline, max_points, fixing)
        return sum(len(v) for v in data.cand.values()), _nonzeros(data, form, deadline)
    except _Stopped:
        return None


def _tie_stage(problem: InsertionProblem, backend: str, deadline: Deadline, seed: int,
               sch1: InsertionSchedule, bound: float, notes: list[str],
               params: dict[str, Any], max_points: int, form: str,
               fixing: InsertionBound | None = None, hint: bool = False) -> TiOutcome:
    """The fewest-moved stage: the model rebuilt with ``sch1`` (stage 1's schedule, price
    ``P1``) as the incumbent, which drops every candidate no schedule of the price tie
    can use, and the row price ``<= P1 + price_tolerance(P1)``."""
    from ortools.linear_solver.python import model_builder_helper as mbh

    p1 = ins.objective(problem, sch1)
    try:
        data = _data(problem, sch1, deadline, max_points, fixing)
    except _Stopped:
        notes.append("stopped by the time limit before the fewest-moved stage")
        return TiOutcome(sch1, bound, True, False, tuple(notes), params)
    forced = sum(1 for w in problem.waiting if w.te not in data.cand[w.id])
    params["stage2_forced_moves"] = forced
    if ins.moved(problem, sch1) <= forced:
        return TiOutcome(sch1, bound, True, True, tuple(notes), params)
    try:
        model = _model(data, deadline, form)
    except _Stopped:
        notes.append("stopped by the time limit while building the fewest-moved model")
        return TiOutcome(sch1, bound, True, False, tuple(notes), params)
    params["stage2_variables"] = sum(len(v) for v in data.cand.values())
    if hint and backend == "scip":
        _hint(model, problem, data, form, sch1)
    row = model.add_linear_constraint()
    model.set_constraint_upper_bound(row, p1 + ins.price_tolerance(p1))
    idx, val = _terms(data, form, data.cost)
    model.add_terms_to_constraint(row, [mbh.Variable(model, i) for i in idx], val)
    model.clear_objective()
    te = {w.id: w.te for w in problem.waiting}
    kept = {jid: [-1.0 if tau == te[jid] else 0.0 for tau in data.cand[jid]]
            for jid, _, _ in data.jobs if jid in te}
    idx, val = _terms(data, form, kept)
    if idx:
        model.set_objective_coefficients(idx, val)
    model.set_objective_offset(float(len(problem.waiting)))
    ans = _run(model, backend, deadline, seed)
    params["stage2_status"] = ans.get("status")
    if not ans.get("has_solution"):
        notes.append(f"fewest-moved stage gave no schedule ({ans.get('why') or ans.get('status')})")
        return TiOutcome(sch1, bound, True, False, tuple(notes), params)
    sch2 = _read(problem, data, _x_values(data, form, ans["values"]))
    if ins.check(problem, sch2) or ins.objective(problem, sch2) > p1 + ins.price_tolerance(p1):
        notes.append("the fewest-moved pick was beyond the price tie (solver tolerances); "
                     "fewest moved not proved")
        return TiOutcome(sch1, bound, True, False, tuple(notes), params)
    best = sch2 if ins.moved(problem, sch2) <= ins.moved(problem, sch1) else sch1
    proved = ans["status"] == "OPTIMAL" and best is sch2
    if not proved:
        notes.append("fewest-moved stage stopped by Ctrl-C" if ans.get("interrupted")
                     else "fewest-moved stage stopped by the time limit")
    return TiOutcome(best, min(bound, ins.objective(problem, best)), True, proved,
                     tuple(notes), params)


def _finite(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def check_backend(backend: str) -> str:
    """``backend`` when it is one of :data:`BACKENDS`; else ValueError of one line (CBC
    with its reason: the model is built for OR-Tools' ``model_builder``, and PuLP's
    CBC has neither its presolve-on set-up nor a worker a time limit can kill in
    time: ``--solver ilp --backend cbc`` is the insertion ILP on CBC)."""
    if backend == "cbc":
        raise ValueError("ti: backend 'cbc' refused: the time-indexed MIP runs on HiGHS or "
                         "SCIP (OR-Tools model_builder); use --backend highs or scip, or "
                         "--solver ilp --backend cbc")
    if backend not in BACKENDS:
        raise ValueError(f"ti: backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    return backend


def check_form(form: str) -> str:
    """``form`` when it is one of :data:`FORMS`; else ValueError."""
    if form not in FORMS:
        raise ValueError(f"ti: form must be one of {', '.join(FORMS)}, got {form!r}")
    return form


def _check_magnitude(problem: InsertionProblem, backend: str) -> None:
    """Refuse a capacity or width beyond the backend's exact range
    (:data:`models.mip.MAX_MAGNITUDE`: the largest number in the rows is the capacity,
    a free capacity or a width) with a ValueError naming the field."""
    top = mip.MAX_MAGNITUDE[backend]
    fields = [("capacity", problem.capacity)]
    fields += [(f"waiting[{i}].n", w.n) for i, w in enumerate(problem.waiting)]
    if problem.new is not None:
        fields.append(("new.n", problem.new.n))
    for field, value in fields:
        if value > top:
            raise ValueError(f"field {field!r} = {value}: the time-indexed MIP on "
                             f"{mip.NAMES[backend]} is exact only up to {top:.0e} "
                             "processors; use --solver cpsat")


def _data(problem: InsertionProblem, inc: InsertionSchedule, deadline: Deadline,
          max_points: int, fixing: InsertionBound | None = None) -> _Data:
    """Candidate starts, costs and capacity rows (module docstring), less the candidates
    ``fixing``'s reduced costs rule out at ``inc``'s price."""
    dom, new_dom, cap_t = incumbent_domains(problem, inc)
    try:
        C = dominant_times(problem, cap_t, max_points, stop=deadline.expired)
        sets, new_set = chain_times(problem, dom, new_dom, C, stop=deadline.expired,
                                    max_points=CHAIN_CAP * max_points)
    except ValueError:
        if deadline.expired():
            raise _Stopped from None
        raise
    run = ins.profile_of(problem)
    jobs = [(w.id, w.n, w.t) for w in problem.waiting]
    if problem.new is not None:
        jobs.append((problem.new.id, problem.new.n, problem.new.t))
        sets[problem.new.id] = new_set or []
    cand: dict[int, list[int]] = {}
    cost: dict[int, list[float]] = {}
    for jid, n, t in jobs:
        taus, cs = [], []
        for tau in sets[jid]:
            if not run.fits(tau, t, (n,)):
                continue
            c = _cost(problem, jid, tau)
            if math.isinf(c):
                continue
            if not abs(c) <= MAX_COST:
                raise ValueError(f"job {jid}: the cost {c!r} of starting at {tau} exceeds "
                                 f"{MAX_COST:.0e}; the time-indexed MIP refuses it")
            taus.append(tau)
            cs.append(c)
        cand[jid], cost[jid] = taus, cs
        if deadline.expired():
            raise _Stopped
    _keep_incumbent(problem, inc, cand, cost)
    _filter(problem, inc, cand, cost)
    fixed = 0 if fixing is None else _fix(problem, inc, cand, cost, fixing)
    starts_all = sorted({tau for taus in cand.values() for tau in taus})
    free = {u: problem.capacity - sum(r.n for r in problem.running if r.end > u)
            for u in starts_all}
    rows = []
    for k, u in enumerate(starts_all):  # O(jobs) each: the clock every CLOCK_POINTS
        if k % CLOCK_POINTS == CLOCK_POINTS - 1 and deadline.expired():
            raise _Stopped
        load = sum(n for jid, n, t in jobs
                   if bisect_right(cand[jid], u) > bisect_right(cand[jid], u - t))
        if load > free[u]:
            rows.append(u)
    return _Data(jobs, cand, cost, rows, free, fixed)


def _cost(problem: InsertionProblem, jid: int, tau: int) -> float:
    if problem.new is not None and jid == problem.new.id:
        return ins.new_weight(problem) * ins.signed_power(tau - problem.now, problem.alpha_t)
    return ins.job_cost(problem, problem.job(jid), tau)


def _keep_incumbent(problem: InsertionProblem, inc: InsertionSchedule,
                    cand: dict[int, list[int]], cost: dict[int, list[float]]) -> None:
    """Make sure every job has a candidate: add the incumbent's start where the sets
    miss it (the incumbent is feasible, so the model then is too)."""
    for jid in cand:
        tau = _start_of(problem, inc, jid)
        if tau not in cand[jid]:
            k = bisect_right(cand[jid], tau)
            cand[jid].insert(k, tau)
            cost[jid].insert(k, _cost(problem, jid, tau))


def _start_of(problem: InsertionProblem, sch: InsertionSchedule, jid: int) -> int:
    """Job ``jid``'s start in ``sch`` (s; the new job's when ``jid`` is its id)."""
    return sch.new_start if problem.new is not None and jid == problem.new.id \
        else sch.starts[jid]


def _fix(problem: InsertionProblem, inc: InsertionSchedule, cand: dict[int, list[int]],
         cost: dict[int, list[float]], fixing: InsertionBound) -> int:
    """Drop the candidates ``fixing`` forbids at ``inc``'s price (module docstring,
    "Reduced-cost fixing"); ``inc``'s own starts always stay. Returns how many were
    dropped."""
    drop = fixing.forbidden(ins.objective(problem, inc))
    dropped = 0
    for jid, banned in drop.items():
        if jid not in cand:
            continue
        own = _start_of(problem, inc, jid)
        keep = [k for k, tau in enumerate(cand[jid]) if tau == own or tau not in banned]
        dropped += len(cand[jid]) - len(keep)
        cand[jid] = [cand[jid][k] for k in keep]
        cost[jid] = [cost[jid][k] for k in keep]
    return dropped


def _hint(model: Any, problem: InsertionProblem, data: _Data, form: str,
          sch: InsertionSchedule) -> None:
    """Give the backend ``sch`` (whose starts are among the candidates:
    :func:`_keep_incumbent`) as its starting solution, in ``form``'s variables."""
    k = 0
    for jid, _, _ in data.jobs:
        tau = _start_of(problem, sch, jid)
        for i, c in enumerate(data.cand[jid]):
            on = c == tau if form == "start" else c >= tau
            model.add_hint(k + i, 1.0 if on else 0.0)
        k += len(data.cand[jid])


def _filter(problem: InsertionProblem, inc: InsertionSchedule,
            cand: dict[int, list[int]], cost: dict[int, list[float]]) -> None:
    """Drop candidates no schedule within the tie of ``inc``'s price can use (module
    docstring); the incumbent's own starts always stay."""
    p0 = ins.objective(problem, inc)
    p0 += ins.price_tolerance(p0)
    for _ in range(2):
        mins = {jid: min(cs) for jid, cs in cost.items()}
        total = math.fsum(mins.values())
        scale = math.fsum(abs(c) for c in mins.values()) + abs(p0)
        for jid in cand:
            cap = p0 - (total - mins[jid]) + FILTER_SLACK * max(1.0, scale)
            keep = [k for k, c in enumerate(cost[jid]) if c <= cap]
            cand[jid] = [cand[jid][k] for k in keep]
            cost[jid] = [cost[jid][k] for k in keep]


def _window(ts: list[int], u: int, t: int) -> tuple[int, int]:
    """``(lo, hi)``: the candidates of ``ts`` in ``(u - t, u]`` are ``ts[lo:hi]``."""
    return bisect_right(ts, u - t), bisect_right(ts, u)


def _nonzeros(data: _Data, form: str, deadline: Deadline | None = None) -> int:
    """Nonzeros of the rows of the model in ``form`` (module docstring): one-start and
    capacity rows (``"start"``), or order and capacity rows (``"step"``); raises
    :class:`_Stopped` when ``deadline`` passes (read every :data:`CLOCK_POINTS` rows)."""
    if form == "start":
        total = sum(len(v) for v in data.cand.values())
    else:
        total = sum(2 * (len(v) - 1) for v in data.cand.values())
    for k, u in enumerate(data.rows):
        if deadline is not None and k % CLOCK_POINTS == CLOCK_POINTS - 1 \
                and deadline.expired():
            raise _Stopped
        for jid, _, t in data.jobs:
            lo, hi = _window(data.cand[jid], u, t)
            if form == "start":
                total += hi - lo
            elif hi > lo:
                total += 1 if lo == 0 else 2
    return total


def _terms(data: _Data, form: str, coef: dict[int, list[float]]) -> tuple[list[int], list[float]]:
    """The model's variables and coefficients of ``sum_j sum_k coef[j][k] x[j, k]`` (a
    linear form in the per-(job, start) binaries, ``coef`` per job in candidate order):
    itself in the ``"start"`` form; ``sum_k (coef[k] - coef[k + 1]) z[j, k]`` (``coef[K]
    = 0``) in the ``"step"`` form, as ``x[j, k] = z[j, k] - z[j, k - 1]``."""
    idx: list[int] = []
    val: list[float] = []
    k = 0
    for jid, _, _ in data.jobs:
        a = coef.get(jid)
        size = len(data.cand[jid])
        if a is not None:
            for i in range(size):
                c = a[i] if form == "start" else a[i] - (a[i + 1] if i + 1 < size else 0.0)
                if c != 0.0:
                    idx.append(k + i)
                    val.append(c)
        k += size
    return idx, val


def _model(data: _Data, deadline: Deadline, form: str) -> Any:
    """The stage-1 ``model_builder`` model in ``form`` (variables in job order, then
    start order); raises :class:`_Stopped` when ``deadline`` passes while building."""
    import numpy as np
    from ortools.linear_solver.python import model_builder_helper as mbh

    m = mbh.ModelBuilderHelper()
    nx = sum(len(v) for v in data.cand.values())
    lb = np.zeros(nx)
    first: dict[int, int] = {}
    k = 0
    for jid, _, _ in data.jobs:
        first[jid] = k
        k += len(data.cand[jid])
        if form == "step":
            lb[k - 1] = 1.0  # every job starts by its last candidate
    m.add_var_array_with_bounds(lb, np.ones(nx), np.ones(nx, dtype=bool), "")
    var = [mbh.Variable(m, i) for i in range(nx)]
    for jid, _, _ in data.jobs:
        k, size = first[jid], len(data.cand[jid])
        if form == "start":
            row = m.add_linear_constraint()
            m.set_constraint_lower_bound(row, 1.0)
            m.set_constraint_upper_bound(row, 1.0)
            m.add_terms_to_constraint(row, var[k:k + size], [1.0] * size)
            continue
        for i in range(k + 1, k + size):  # z[j, i - 1] <= z[j, i]
            row = m.add_linear_constraint()
            m.set_constraint_upper_bound(row, 0.0)
            m.add_terms_to_constraint(row, [var[i - 1], var[i]], [1.0, -1.0])
    for u in data.rows:
        vs, cs = [], []
        for jid, n, t in data.jobs:
            lo, hi = _window(data.cand[jid], u, t)
            k = first[jid]
            if form == "start":
                vs.extend(var[k + lo:k + hi])
                cs.extend([float(n)] * (hi - lo))
            elif hi > lo:  # started by the last candidate <= u, not by the last <= u - t
                vs.append(var[k + hi - 1])
                cs.append(float(n))
                if lo > 0:
                    vs.append(var[k + lo - 1])
                    cs.append(-float(n))
        row = m.add_linear_constraint()
        m.set_constraint_upper_bound(row, float(data.free[u]))
        m.add_terms_to_constraint(row, vs, cs)
        if deadline.expired():
            raise _Stopped
    idx, val = _terms(data, form, data.cost)
    m.set_objective_coefficients(idx, val)
    return m


def _x_values(data: _Data, form: str, values: Any) -> list[float]:
    """The per-(job, start) values of the solver's ``values`` in ``form``."""
    if form == "start":
        return list(values)
    out: list[float] = []
    k = 0
    for jid, _, _ in data.jobs:
        size = len(data.cand[jid])
        part = [float(v) for v in values[k:k + size]]
        out.extend(part[i] - (part[i - 1] if i else 0.0) for i in range(size))
        k += size
    return out


def _read(problem: InsertionProblem, data: _Data, values: Any) -> InsertionSchedule:
    """The schedule of the solver's values: each job at its largest ``x``."""
    k = 0
    chosen: dict[int, int] = {}
    for jid, _, _ in data.jobs:
        size = len(data.cand[jid])
        part = values[k:k + size]
        chosen[jid] = data.cand[jid][max(range(size), key=lambda i: part[i])]
        k += size
    new = chosen[problem.new.id] if problem.new is not None else None
    return InsertionSchedule(new, {w.id: chosen[w.id] for w in problem.waiting})


def _parameters(seed: int) -> mip.MipParameters:
    """Presolve on, stopping gaps 0, feasibility tolerances :data:`FEAS_TOL`, the seed
    reduced to the backends' range (``seed mod 2**31``)."""
    return mip.MipParameters(presolve=True, seed=seed % 2**31, rel_gap=0.0, abs_gap=0.0,
                             feasibility_tol=FEAS_TOL)


def start_worker_server() -> threading.Thread:
    """Start the MIP fork server of :mod:`models.mip` in a background thread, unless it
    runs already (it takes a few seconds on a loaded machine, which a solve that starts
    it would spend past its limit); returns the thread (a daemon)."""
    t = threading.Thread(target=mip.start_server, daemon=True)
    t.start()
    return t


_WHY = {"killed": "killed past the time limit",
        "memory": f"killed beyond {mip.WORKER_MEMORY_MB} MB",
        "interrupted": "stopped by Ctrl-C without an answer"}


def _run(model: Any, backend: str, deadline: Deadline, seed: int) -> dict[str, Any]:
    """Solve ``model`` with :func:`models.mip.run_worker` (the backend's own limit
    the deadline less :meth:`models.deadline.Deadline.reserve`, as HiGHS reads its clock
    only now and then: 0.66 s past a 30 s limit on ``kth-1997-02-remove-13405751-k23``
    without it; the worker killed :data:`GRACE` seconds past the deadline or beyond its
    memory cap; Ctrl-C asks it to stop, keeping its answer) with this module's
    parameters.

    Returns the worker's answer (``status``, ``has_solution``, ``objective``, ``bound``,
    ``values``, ``interrupted``) or ``{"status": None, "has_solution": False, "why":
    ...}``.
    """
    left = deadline.left(0.0) if deadline.limit is not None else None
    if left is not None and left < 0.05:
        return {"status": None, "has_solution": False, "why": "no time left",
                "interrupted": False}
    end = None if left is None else time.monotonic() + left
    ans = mip.run_worker(model, backend, deadline=end, grace=GRACE,
                         reserve=deadline.reserve(), parameters=_parameters(seed))
    if ans.get("status") is None:
        why = ans.get("why") or "no answer"
        ans["why"] = _WHY.get(why, why)
    return ans


solve_ti.backends = BACKENDS  # type: ignore[attr-defined]  # --backend takes these
