"""CP-SAT models of the K-resource problems (one worker, ``random_seed = seed``,
deterministic; ``time_limit`` in seconds of wall clock).

- :func:`solve_epochs` (M1): ``x[j,e]``, ``y[e]``; job j only in epochs ``e <= j``
  (symmetry breaking); ``sum_j r_jk x[j,e] <= C_k y[e]``; ``y[e] >= y[e+1]``;
  ``sum_e y[e] >= max_k ceil(sum r_k / C_k)``; minimise ``sum y``. Epochs up to the best
  greedy packing (also the hint); when that packing meets the lower bound it is
  returned as OPTIMAL without a search (the bound proves it; said in ``note``).
- :func:`solve_selection` (M2): 0/1 knapsack in K dimensions plus the EASY constraint
  on the late jobs; maximise ``(n + 1) sum w_j x_j + sum x_j`` (work, then count). Over
  :data:`IN_PROCESS_MAX` candidates under a time limit, CP-SAT runs in a worker process
  killed at the limit (:mod:`models.cpsat_process`).
- :func:`solve_response` (M3): interval per job in ``[a_j, H)``, one cumulative per
  resource, minimise ``sum w_j (s_j + p_j - a_j)``; hint: the serial list schedule.
  :func:`search_response` runs it restricted (start domains, an objective cap) for
  the portfolio's reduced-cost fixing; :func:`probe_indexed` runs the time-indexed
  model (a Boolean per start, the LP bound's rows and packing cuts) on the starts
  reduced-cost fixing leaves, for the portfolio's bound probes.

The epochs model (``n x E`` variables, ``E x K`` rows over up to ``n`` jobs) reads the
clock (:meth:`models.deadline.Deadline.check`) at every job and every row while it is
built: a stop there returns the greedy packing (FEASIBLE, bound ``lower_bound()``). A
model whose variables (:func:`epochs_variables`) could not be built in the time left
even at :data:`SECONDS_PER_VARIABLE` each is not started: the greedy packing is returned
at once (10^5 jobs in about 39,000 epochs would need 3 x 10^9 of them). The other two models
are linear in the number of jobs; the selection model is built with one weighted sum per
row, the response model checks the clock every :data:`CLOCK_EVERY` jobs while it is
built (a stop there returns UNKNOWN from :func:`search_response`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from models.deadline import Deadline, TimeUp, limit_of
from models.interrupt import run_cpsat
from models.kresource.common import best_packing, epochs_variables, relabel, selection_bound
from sim.problems import checker, scorer
from sim.problems.kresource import EpochProblem, ResponseProblem, SelectionProblem
from sim.result import Result, Status, build

SECONDS_PER_VARIABLE = 1e-6
"""A lower estimate of the seconds one variable of the epochs model takes to build in
Python (measured 3-6 microseconds on an idle 2-core machine): a model that would take
longer than the time left even at this rate is not started."""
PRESOLVE_MAX = 10_000
"""Most candidates of a selection model CP-SAT presolves: its dominance detection does
not look at the clock (62,000 candidates: 2-3 s past a 0.7 s limit at load 7-9)."""
IN_PROCESS_MAX = 10_000
"""Most candidates of a selection model CP-SAT solves in this process under a time limit;
a larger one is solved in a worker process killed at the limit (:func:`_in_worker`).
CP-SAT's probing at the start of its search does not look at the clock, for a time
that grows with the model: measured on the limits benchmark's instances at a 16 s
limit, 6,216 candidates returned at 15.7 s, 18,621 at 17.5 s (load 5), 62,159 at
20.6 s (load 2.8). The worker costs the fork server's start once per process (0.4 s
at load 4.5) and the model's trip in text format: 0.05 s at 6,216 candidates, 0.6 s
at 62,159 (a few hundredths below this size, where the OPT-EASY policy's thousands of
small selections stay in this process)."""
CLOCK_EVERY = 1000
"""Jobs between two looks at the clock while the response model is built."""


def too_large(n: int, epochs: int, left: float | None) -> bool:
    """Whether the epochs model over ``n`` jobs and ``epochs`` epochs cannot be built
    within ``left`` seconds (None: no limit), at :data:`SECONDS_PER_VARIABLE` each."""
    return left is not None and epochs_variables(n, epochs) * SECONDS_PER_VARIABLE > left


def _solver(time_limit: float | None, seed: int,
            deterministic_limit: float | None = None) -> Any:
    from ortools.sat.python import cp_model

    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = int(seed)
    time_limit = limit_of(time_limit)
    if time_limit is not None:
        s.parameters.max_time_in_seconds = time_limit
    if deterministic_limit is not None:
        s.parameters.max_deterministic_time = max(0.0, float(deterministic_limit))
    return s


def _status(st: int) -> Status:
    from ortools.sat.python import cp_model

    return {cp_model.OPTIMAL: Status.OPTIMAL, cp_model.FEASIBLE: Status.FEASIBLE,
            cp_model.INFEASIBLE: Status.INFEASIBLE}.get(st, Status.UNKNOWN)


def solve_epochs(problem: EpochProblem, *, time_limit: float | None = None,
                 seed: int = 0, greedy_bound: bool = True,
                 deterministic_limit: float | None = None) -> Result:
    """Minimum number of epochs with CP-SAT (module docstring); ``greedy_bound=False``
    always runs the search (for cross-checks). The one-time import of CP-SAT happens
    before the clock starts (like Python's start-up, it is outside ``time_limit``).

    ``deterministic_limit`` caps CP-SAT's deterministic time (its own work units,
    roughly seconds on an unloaded machine; ``max_deterministic_time``), so a search it
    stops ends at the same point on any machine; ``time_limit`` (seconds of wall clock)
    is then the outer guard. An answer that is not proved and that the wall clock
    decided (the greedy packing cut short, the build stopped, CP-SAT stopped before its
    deterministic limit) says so in its note (:func:`wall_decided`)."""
    from ortools.sat.python import cp_model  # noqa: F401  (imported before the clock)

    t0 = time.perf_counter()
    dl = Deadline(time_limit, start=t0)
    ub_sol = best_packing(problem, time_limit)
    # best_packing drops rules once a tenth of the limit is spent: the clock may have
    # chosen the packing (the hint and the model's number of epochs)
    cut = dl.limit is not None and dl.elapsed() > 0.1 * dl.limit
    lb = problem.lower_bound()
    params = {"time_limit": time_limit, "greedy_bound": greedy_bound,
              "deterministic_limit": deterministic_limit}
    if greedy_bound and len(ub_sol) == lb:
        return build(solver="cpsat", status=Status.OPTIMAL, solution=ub_sol, bound=lb,
                     check=checker(problem), objective=scorer(problem), seed=seed,
                     runtime=time.perf_counter() - t0, params=params,
                     note="greedy packing meets the lower bound max_k ceil(sum r_k / C_k)")
    n, E = problem.n, len(ub_sol)
    if too_large(n, E, dl.left(0.0)):
        return build(solver="cpsat", status=Status.FEASIBLE, solution=ub_sol, bound=lb,
                     check=checker(problem), objective=scorer(problem), seed=seed,
                     runtime=time.perf_counter() - t0, params=params,
                     note=f"{WALL_DECIDED}: model too large for the time left "
                          f"({epochs_variables(n, E):,} variables); the greedy packing")
    try:
        m, x, y = _epochs_model(problem, ub_sol, lb, dl)
    except TimeUp:
        return build(solver="cpsat", status=Status.FEASIBLE, solution=ub_sol, bound=lb,
                     check=checker(problem), objective=scorer(problem), seed=seed,
                     runtime=time.perf_counter() - t0, params=params,
                     note=f"{WALL_DECIDED}: time limit reached while building; the greedy "
                          "packing")
    left = dl.solver_time()  # the time left less a reserve
    s = _solver(left, seed, deterministic_limit)
    # never start CP-SAT with nothing left of the limit (the greedy packing stands)
    status = Status.UNKNOWN if left is not None and left <= 0 else _status(run_cpsat(s, m))
    sol, bound = None, None
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        sol = relabel([[j for j in range(n) if (j, e) in x and s.value(x[j, e])]
                       for e in range(E)])
        bound = max(lb, s.best_objective_bound)
    elif status is Status.UNKNOWN:
        sol, status, bound = ub_sol, Status.FEASIBLE, lb  # the greedy packing stands
    clock = dl.limit is not None and not dl.interrupted() and status is Status.FEASIBLE \
        and (cut or left is not None and left <= 0 or deterministic_limit is None
             or s.deterministic_time < deterministic_limit)
    return build(solver="cpsat", status=status, solution=sol, bound=bound, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 params=params, note=WALL_DECIDED if clock else "")


WALL_DECIDED = "stopped by the wall-clock limit"
"""The start of the note of an epochs answer (:func:`solve_epochs`) that is not proved
and that the wall clock decided."""


def wall_decided(result: Result) -> bool:
    """Whether :func:`solve_epochs`' ``result`` is an unproved answer the wall-clock
    limit decided (its note says so), so that another machine or load may give another:
    False for a proved answer and for one stopped by the deterministic limit."""
    return result.note.startswith(WALL_DECIDED)


def _epochs_model(problem: EpochProblem, ub_sol: list[list[int]], lb: int, dl: Deadline
                  ) -> tuple[Any, dict, list]:
    """The M1 model over ``len(ub_sol)`` epochs, hinted with ``ub_sol``; raises
    :class:`models.deadline.TimeUp` when ``dl`` runs out while it is built."""
    from ortools.sat.python import cp_model

    n, K, E = problem.n, problem.K, len(ub_sol)
    m = cp_model.CpModel()
    x = {}
    for j in range(n):  # a job's variables and its one-epoch row, the clock at every job
        dl.check()
        for e in range(min(j + 1, E)):
            x[j, e] = m.new_bool_var(f"x{j}_{e}")
        m.add_exactly_one(x[j, e] for e in range(min(j + 1, E)))
    y = [m.new_bool_var(f"y{e}") for e in range(E)]
    for e in range(E):
        js = [j for j in range(e, n)]
        for k in range(K):  # a row holds up to 10^5 terms: the clock at every row
            dl.check()
            terms = [problem.demands[j][k] * x[j, e] for j in js if problem.demands[j][k]]
            if terms:
                m.add(sum(terms) <= problem.capacity[k] * y[e])
        dl.check()
        for j in js:
            m.add_implication(x[j, e], y[e])
        if e + 1 < E:
            m.add(y[e] >= y[e + 1])
    m.add(sum(y) >= lb)
    for e, ep in enumerate(ub_sol):
        for j in ep:
            m.add_hint(x[j, e], 1)
    m.minimize(sum(y))
    return m, x, y


def solve_selection(problem: SelectionProblem, *, time_limit: float | None = None,
                    seed: int = 0, deterministic_limit: float | None = None) -> Result:
    """Optimal backfill selection with CP-SAT (module docstring).

    The greedy backfill (``select_greedy(problem, "bb")``) runs first: it is CP-SAT's
    hint, and the answer (FEASIBLE, without a bound) when the time
    limit runs out while the model is built (the clock is checked after each row) or
    CP-SAT finds no selection in time. CP-SAT gets the time left less a reserve
    (:meth:`models.deadline.Deadline.solver_time`) for reading and checking its answer,
    and presolves only models of at most :data:`PRESOLVE_MAX` candidates. Over
    :data:`IN_PROCESS_MAX` candidates under a time limit it runs in a worker killed half
    the reserve before the limit (:func:`_in_worker`): a killed worker's last improving
    selection answers (FEASIBLE), else the greedy backfill, each with the LP bound
    (:func:`models.kresource.common.selection_bound`) or CP-SAT's reported one, the
    tighter.

    ``deterministic_limit`` caps CP-SAT's deterministic time (its own work measure,
    roughly seconds on an unloaded machine; ``max_deterministic_time``): a solve stopped
    by it stops at the same point on any machine and under any load, unlike
    ``time_limit`` (seconds of wall clock), so a simulation that solves thousands of
    decisions (OPT-EASY) stays reproducible."""
    from ortools.sat.python import cp_model

    from heuristics.kresource import select_greedy

    t0 = time.perf_counter()
    dl = Deadline(time_limit, start=t0)
    n, K = problem.n, problem.K
    elig = [j for j in range(n) if problem.eligible(j)]
    params = {"time_limit": time_limit, "deterministic_limit": deterministic_limit}

    def done(status: Status, sol: list[int] | None, bound: float | None,
             note: str = "") -> Result:
        return build(solver="cpsat", status=status, solution=sol, bound=bound,
                     check=checker(problem), objective=scorer(problem), sense="max",
                     runtime=time.perf_counter() - t0, seed=seed, params=params, note=note)

    if not elig:
        return done(Status.OPTIMAL, [], 0.0)
    greedy = select_greedy(problem, "bb")
    m = cp_model.CpModel()
    proto = m.proto  # written directly: 10^5 terms in a few hundredths of a second
    for _ in elig:
        proto.variables.add().domain.extend((0, 1))
    try:
        for k in range(K):
            dl.check()
            _knapsack_row(proto, [problem.demands[j][k] for j in elig], problem.free[k])
            _knapsack_row(proto, [problem.demands[j][k] if problem.late[j] else 0
                                  for j in elig], problem.extra[k])
        dl.check()
    except TimeUp:
        return done(Status.FEASIBLE, greedy, None,
                    "time limit reached while building; the greedy backfill (bb)")
    w = problem.weights
    proto.objective.vars.extend(range(len(elig)))  # maximise: CP-SAT minimises the negation
    proto.objective.coeffs.extend([-(w[j] * (n + 1) + 1) for j in elig])
    proto.objective.scaling_factor = -1.0
    at = {j: i for i, j in enumerate(elig)}
    proto.solution_hint.vars.extend(at[j] for j in greedy)
    proto.solution_hint.values.extend(1 for _ in greedy)
    left = dl.solver_time()  # the time left less a reserve
    s = _solver(left, seed, deterministic_limit)
    s.parameters.cp_model_presolve = len(elig) <= PRESOLVE_MAX
    if left is not None and 0 < left and len(elig) > IN_PROCESS_MAX:
        return done(*_in_worker(problem, elig, greedy, m, s, dl))
    status = Status.UNKNOWN if left is not None and left <= 0 else _status(run_cpsat(s, m))
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        values = s.response_proto.solution
        return done(status, [j for i, j in enumerate(elig) if values[i]],
                    s.best_objective_bound)
    if status is Status.UNKNOWN:  # the greedy backfill stands (CP-SAT's bound without
        # a solution is no bound: 0 on a stopped 10^5-candidate run)
        return done(Status.FEASIBLE, greedy, None,
                    "CP-SAT found no selection in time; the greedy backfill (bb)")
    return done(status, None, None)


def _in_worker(problem: SelectionProblem, elig: list[int], greedy: list[int], m: Any,
               s: Any, dl: Deadline) -> tuple[Status, list[int] | None, float | None, str]:
    """CP-SAT on the selection model ``m`` (over the candidates ``elig``) with the
    parameters of ``s`` in a worker (:mod:`models.cpsat_process`) killed half
    ``dl``'s reserve before its end: the answer's status, selection, bound and note.
    A killed (or interrupted, or crashed) worker's last improving selection is FEASIBLE
    with the tighter of the bound CP-SAT reported beside it and the LP bound
    (:func:`selection_bound`); without one, the greedy backfill ``greedy`` stands with
    the LP bound."""
    import threading

    from models import cpsat_process

    kill_at = time.monotonic() + dl.left(floor=0.0) - dl.reserve() / 2
    lps: list[int] = []  # the LP bound, made while the worker runs (0.3 s at 62,159)
    side = threading.Thread(target=lambda: lps.append(selection_bound(problem)),
                            name="selection-lp-bound", daemon=True)
    side.start()
    try:
        ans = cpsat_process.solve(m, s.parameters, kill_at=kill_at)
    finally:
        side.join()
    lp = lps[0] if lps else selection_bound(problem)
    status = {"OPTIMAL": Status.OPTIMAL, "FEASIBLE": Status.FEASIBLE,
              "INFEASIBLE": Status.INFEASIBLE}.get(ans.status or "", Status.UNKNOWN)
    if status is Status.INFEASIBLE:  # cannot be: the empty selection is one
        return status, None, None, ""
    if ans.status is not None:  # it returned
        why = "stopped by Ctrl-C" if ans.interrupted else "found no selection in time"
    else:  # "crashed (...)" as it is
        why = {"killed": "killed at the time limit", "interrupted": "killed after Ctrl-C",
               "memory": "killed beyond its memory limit"}.get(ans.why, ans.why)
    why = f"CP-SAT {why}"
    if ans.values is None or (ans.status is not None and status is Status.UNKNOWN):
        return Status.FEASIBLE, greedy, lp, \
            f"{why}; the greedy backfill (bb), with the LP bound of the tightest row"
    sol = [j for i, j in enumerate(elig) if ans.values[i]]
    if ans.status is not None:
        return status, sol, ans.bound, ""
    return Status.FEASIBLE, sol, lp if ans.bound is None else min(ans.bound, lp), \
        f"{why}; its last improving selection, with the tighter of the bound CP-SAT " \
        "reported beside it and the LP bound of the tightest row"


def _knapsack_row(proto: Any, sizes: list[int], cap: int) -> None:
    """``sum_i sizes[i] x_i <= cap`` over the model's first ``len(sizes)`` Booleans
    (``proto`` its ``CpModelProto``), left out when it cannot bind; ``sizes >= 0``."""
    if sum(sizes) > cap:
        keep = [i for i, c in enumerate(sizes) if c]
        row = proto.constraints.add().linear
        row.vars.extend(keep)
        row.coeffs.extend(sizes[i] for i in keep)
        row.domain.extend((0, int(cap)))


def solve_response(problem: ResponseProblem, *, time_limit: float | None = None,
                   seed: int = 0, interleave: int = 0, lower_bound: int | None = None,
                   hint: Sequence[int] | None = None, ignore: Sequence[str] = ()) -> Result:
    """Minimum total (weighted) response time with CP-SAT (module docstring).

    ``interleave``: 0 runs CP-SAT's one-worker search; ``m >= 2`` runs ``m`` of its
    subsolvers (among them large-neighbourhood search) interleaved in the one thread
    (``interleave_search``). ``lower_bound``: a valid lower bound on the optimum (time
    units; e.g. :func:`models.kresource.bounds.response_bound`), added as a redundant
    constraint and reported when above CP-SAT's. ``hint``: starts (a feasible schedule)
    to hint instead of the serial list schedule (:func:`serial_hint`, computed before the
    model). When the time limit runs out while the model is built, or CP-SAT finds no
    schedule in time, the hint is the answer (FEASIBLE, with ``lower_bound`` or CP-SAT's
    bound). ``ignore``: subsolvers left out of the interleaved search."""
    t0 = time.perf_counter()
    given = hint is not None
    if hint is None:
        hint = serial_hint(problem, t0, time_limit)
    status, sol, bound = search_response(problem, time_limit=time_limit, seed=seed,
                                         interleave=interleave, lower_bound=lower_bound,
                                         hint=hint, start=t0, ignore=ignore)
    note = ""
    if status is Status.UNKNOWN and (not given or _feasible(problem, hint)):
        sol, status = [int(t) for t in hint], Status.FEASIBLE  # the hint stands
        note = "CP-SAT found no schedule in time (or its model was not built); the " + \
            ("hint" if given else "serial list schedule")
    if status not in (Status.OPTIMAL, Status.FEASIBLE):
        sol, bound = None, None
    elif lower_bound is not None:
        bound = lower_bound if bound is None else max(bound, lower_bound)
    return build(solver="cpsat", status=status, solution=sol, bound=bound, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 params={"time_limit": time_limit, "interleave": interleave}, note=note)


def _feasible(problem: ResponseProblem, starts: Sequence[int]) -> bool:
    """Whether ``starts`` is a feasible schedule of ``problem`` (the family's check)."""
    try:
        checker(problem)(list(starts))
    except ValueError:
        return False
    return True


def serial_hint(problem: ResponseProblem, t0: float, time_limit: float | None) -> list[int]:
    """The serial list schedule in release order (job starts, time units), cut short
    (the rest one after another) once 0.3 of ``time_limit`` seconds from ``t0``
    (``time.perf_counter``) are spent."""
    from heuristics.kresource import serial_schedule

    order = sorted(range(problem.n), key=lambda j: (problem.release[j], j))
    return serial_schedule(problem, order, stop=None if time_limit is None else
                           (lambda: time.perf_counter() - t0 > 0.3 * time_limit))


def search_response(problem: ResponseProblem, *, time_limit: float | None, seed: int = 0,
                    interleave: int = 0, domains: Sequence[Sequence[int]] | None = None,
                    below: int | None = None, lower_bound: int | None = None,
                    hint: Sequence[int] | None = None, start: float | None = None,
                    ignore: Sequence[str] = (),
                    ) -> tuple[Status, list[int] | None, float | None]:
    """One CP-SAT search of the response model (``solve_response``'s options), possibly
    restricted: ``domains`` (each job's allowed starts, time units) and ``below`` (only
    schedules of objective < ``below``). Returns the status *of the restricted model*
    (INFEASIBLE: no schedule in the domains costs less than ``below``), the starts of the
    best schedule found (or None) and CP-SAT's bound on the restricted model (time
    units; also after a stop without a schedule, UNKNOWN; None when INFEASIBLE or when
    CP-SAT did not run).
    ``time_limit`` seconds count from ``start`` (``time.perf_counter``; default now),
    model building included (the clock is checked every :data:`CLOCK_EVERY` jobs: a
    stop returns UNKNOWN without a bound); ``ignore``: CP-SAT subsolvers left out of the
    interleaved search (``ignore_subsolvers``)."""
    t0 = time.perf_counter() if start is None else start
    dl = Deadline(time_limit, start=t0)
    if domains is not None and any(not d for d in domains):
        return Status.INFEASIBLE, None, None
    if hint is None:
        hint = serial_hint(problem, t0, time_limit)
    try:
        m, st = _response_model(problem, dl, domains, below, lower_bound, hint)
    except TimeUp:
        return Status.UNKNOWN, None, None
    left = dl.solver_time()  # the time left less a reserve
    s = _solver(left, seed)
    if interleave >= 2:
        s.parameters.num_workers = int(interleave)
        s.parameters.interleave_search = True
        s.parameters.ignore_subsolvers.extend(ignore)
    # never start CP-SAT with nothing left of the limit
    if left is not None and left <= 0:
        return Status.UNKNOWN, None, None
    return _answer(s, _status(run_cpsat(s, m)), lambda: [int(s.value(v)) for v in st])


def _response_model(problem: ResponseProblem, dl: Deadline,
                    domains: Sequence[Sequence[int]] | None, below: int | None,
                    lower_bound: int | None, hint: Sequence[int]) -> tuple[Any, list[Any]]:
    """The M3 model of :func:`search_response` and its start variables; raises
    :class:`models.deadline.TimeUp` when ``dl`` runs out while it is built."""
    from ortools.sat.python import cp_model

    n, K = problem.n, problem.K
    H = problem.horizon()
    m = cp_model.CpModel()
    st, iv = [], []
    for j in range(n):
        if j % CLOCK_EVERY == 0:
            dl.check()
        if domains is None:
            v = m.new_int_var(problem.release[j], H - problem.duration[j], f"s{j}")
        else:
            v = m.new_int_var_from_domain(cp_model.Domain.from_values(list(domains[j])),
                                          f"s{j}")
        st.append(v)
        iv.append(m.new_fixed_size_interval_var(v, problem.duration[j], f"i{j}"))
        m.add_hint(v, int(hint[j]))
    for k in range(K):
        dl.check()
        js = [j for j in range(n) if problem.demands[j][k]]
        if sum(problem.demands[j][k] for j in js) > problem.capacity[k]:
            m.add_cumulative([iv[j] for j in js], [problem.demands[j][k] for j in js],
                             problem.capacity[k])
    dl.check()
    const = sum(w * (p - a) for w, p, a in
                zip(problem.weights, problem.duration, problem.release, strict=True))
    obj = cp_model.LinearExpr.weighted_sum(st, list(problem.weights)) + const
    goal = m.proto.objective  # minimize(obj), written directly (10^5 terms)
    goal.vars.extend(v.index for v in st)
    goal.coeffs.extend(int(w) for w in problem.weights)
    goal.offset = int(const)
    goal.scaling_factor = 1.0
    if lower_bound is not None:
        m.add(obj >= int(lower_bound))
    if below is not None:
        m.add(obj <= int(below) - 1)
    dl.check()
    return m, st


def probe_indexed(problem: ResponseProblem, lb: Any, below: int, *,
                  time_limit: float | None, seed: int = 0, start: float | None = None,
                  ) -> tuple[Status, list[int] | None, float | None]:
    """CP-SAT on the time-indexed model restricted by reduced-cost fixing: a Boolean
    ``x[j,t]`` for each start ``t`` a schedule of cost ``<= below - 1`` can use
    (``lb.kept``; ``lb`` a :class:`models.kresource.bounds.ResponseBound`), one start
    per job, ``lb.rows`` (the LP's capacity rows and packing cuts: valid for every
    schedule) on those columns, ``lb.bound <= objective <= below - 1``; one worker at
    linearization level 2, so CP-SAT's LP is the bound's LP with its cuts and its search
    branches on it. Returns the status *of the restricted model* (INFEASIBLE: no
    schedule costs less than ``below``), the starts of the best schedule found (or None)
    and CP-SAT's bound on the restricted model (time units, or None). ``time_limit``
    seconds count from ``start`` (``time.perf_counter``; default now), model building
    included."""
    import numpy as np
    from ortools.sat.python import cp_model

    t0 = time.perf_counter() if start is None else start
    dl = Deadline(time_limit, start=t0)
    keep = lb.kept(below - 1)
    idx = np.nonzero(keep)[0]
    jobs = lb.job[idx]
    if len(set(jobs.tolist())) < problem.n:  # a job with no start left
        return Status.INFEASIBLE, None, None
    m = cp_model.CpModel()
    x = [m.new_bool_var(f"x{i}") for i in range(len(idx))]
    pos = np.full(len(lb.job), -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    for j in range(problem.n):
        m.add_exactly_one(x[i] for i in np.nonzero(jobs == j)[0].tolist())
    try:
        for cols, coef, rhs in lb.rows:
            dl.check()
            at = pos[cols]
            sel = at >= 0
            if coef[sel].sum() > rhs:
                m.add(cp_model.LinearExpr.weighted_sum([x[i] for i in at[sel].tolist()],
                                                       [int(c) for c in coef[sel].tolist()])
                      <= int(math.floor(rhs)))
    except TimeUp:
        return Status.UNKNOWN, None, None
    w, p, a = problem.weights, problem.duration, problem.release
    cost = [w[j] * (t + p[j] - a[j]) for j, t in zip(jobs.tolist(), lb.start[idx].tolist(),
                                                      strict=True)]
    obj = cp_model.LinearExpr.weighted_sum(x, cost)
    m.add(obj <= int(below) - 1)
    m.add(obj >= int(lb.bound))
    m.minimize(obj)
    left = dl.solver_time()  # the time left less a reserve
    if left is not None and left <= 0:
        return Status.UNKNOWN, None, None
    s = _solver(left, seed)
    s.parameters.linearization_level = 2

    def starts() -> list[int]:
        out = [0] * problem.n
        for i, v in enumerate(x):
            if s.value(v):
                out[int(jobs[i])] = int(lb.start[idx[i]])
        return out

    return _answer(s, _status(run_cpsat(s, m)), starts)


def _answer(s: Any, status: Status, starts: Callable[[], list[int]]
            ) -> tuple[Status, list[int] | None, float | None]:
    """A restricted search's answer: its status, the starts of its schedule (``starts()``,
    read from the solver ``s``; None without one) and CP-SAT's bound (time units; also
    after a stop without a schedule; None when INFEASIBLE or none is known)."""
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        return status, starts(), s.best_objective_bound
    if status is Status.UNKNOWN and math.isfinite(s.best_objective_bound):
        return status, None, s.best_objective_bound  # a stop without a schedule
    return status, None, None


def solve_unc(problem: EpochProblem, *, time_limit: float | None = None, seed: int = 0,
              greedy_bound: bool = True) -> Result:
    """The registered ``unc``: :func:`solve_epochs` (CP-SAT) under the name it was asked
    by, so that its results say ``unc``; ``params["model"]`` says ``cpsat``. It is the
    unconstrained optimum (any job order) that Leinberger et al.'s UNC rules approach."""
    res = solve_epochs(problem, time_limit=time_limit, seed=seed, greedy_bound=greedy_bound)
    return dataclasses.replace(res, solver="unc", params={**res.params, "model": "cpsat"})
