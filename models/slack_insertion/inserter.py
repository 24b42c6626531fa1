"""Exact inserters: ``InsertionProblem -> InsertionSchedule`` callables built on the solvers.

``sim.batch.slack_scheduler.SlackScheduler`` calls an inserter at every insert and remove;
:class:`CpsatInserter` answers with CP-SAT (:mod:`models.slack_insertion.cpsat`) or another
exact solver or combination (``cpsat+scip``, :mod:`models.portfolio`).
"""

from __future__ import annotations

from collections.abc import Callable

from models.slack_insertion.brute import solve_brute
from models.slack_insertion.cpsat import solve_cpsat
from models.slack_insertion.ilp import solve_ilp
from sim.problems import insertion as ins
from sim.problems.insertion import InsertionProblem, InsertionSchedule
from sim.result import Result

__all__ = ["insert", "CpsatInserter", "guard_reached", "deterministic_params"]

_SOLVERS: dict[str, Callable[..., Result]] = {
    "cpsat": solve_cpsat, "ilp": solve_ilp, "brute": solve_brute}


def insert(problem: InsertionProblem, *, solver: str = "cpsat", time_limit: float | None = None,
           seed: int = 0) -> InsertionSchedule:
    """The optimal schedule as an :class:`InsertionSchedule` (an *inserter* callable)."""
    res = _SOLVERS[solver](problem, time_limit=time_limit, seed=seed)
    return res.solution


class CpsatInserter:
    """Inserter callable for ``sim.batch.slack_scheduler.SlackScheduler``: an exact solver
    (CP-SAT by default) at every call.

    Parameters
    ----------
    time_limit : float, optional
        Wall-clock seconds per insertion; a stopped search returns its best schedule
        (never worse than the current one, which is always feasible). With ``dtime`` it
        is only the outer guard.
    dtime : float, optional
        CP-SAT's deterministic time limit per stage (its own work units, about seconds on
        a quiet machine; ``solver="cpsat"`` only). A search stopped by it returns the same
        schedule on any machine, so a simulation is reproducible as long as the wall
        guard ``time_limit`` never fires; ``stats["guard"]`` counts the calls that reached
        90% of it (and so may have been stopped by the clock).
    seed : int
        Solver seed (CP-SAT runs one worker, so deterministic without a time limit).
    solver : str
        The exact solver of each insertion: ``"cpsat"`` (default), ``"ilp"``,
        ``"brute"``, or a combination of the family's solvers and MIP backends
        (``"cpsat+scip"``, :mod:`models.portfolio`: best schedule and best bound of
        all members). ValueError for a heuristic or an unknown name.

    Attributes
    ----------
    stats : dict
        Counts of calls by status (``OPTIMAL``, ``FEASIBLE``), ``trivial`` (empty
        queue, answered without a solver) and ``guard`` (see ``dtime``), and the total
        solver seconds.
    """

    def __init__(self, time_limit: float | None = 10.0, seed: int = 0,
                 solver: str = "cpsat", dtime: float | None = None) -> None:
        from sim import registry
        from sim.problems.family import is_combination

        family = registry.problem_family(ins.FAMILY)
        target = family.solvers.get(solver, "") if isinstance(solver, str) else ""
        exact = target.startswith("models.") or (
            not target and isinstance(solver, str) and is_combination(solver))
        if not exact or not family.has_solver(solver):
            raise ValueError(f"slack-optimal: solver must be an exact insertion solver "
                             f"(cpsat, ilp, brute) or a combination such as cpsat+scip, "
                             f"got {solver!r}")
        real = isinstance(dtime, (int, float)) and not isinstance(dtime, bool)
        if dtime is not None and (solver != "cpsat" or not real or not dtime > 0):
            raise ValueError(f"slack-optimal: dtime (CP-SAT's deterministic time) must be "
                             f"> 0 and needs solver='cpsat', got dtime={dtime!r}, "
                             f"solver={solver!r}")
        self.time_limit = time_limit
        self.dtime = dtime
        self.seed = seed
        self.solver = solver
        self._solve = solve_cpsat if solver == "cpsat" else family.solver(solver)
        self.stats: dict[str, float] = {"OPTIMAL": 0, "FEASIBLE": 0, "trivial": 0,
                                        "guard": 0, "seconds": 0.0}

    def __call__(self, problem: InsertionProblem) -> InsertionSchedule:
        if not problem.waiting:
            # nothing can move: the optimum is the new job at its earliest fit
            self.stats["trivial"] += 1
            return ins.current_schedule(problem)
        res = self._solve(problem, time_limit=self.time_limit, seed=self.seed,
                          **deterministic_params(self.dtime))
        self.stats[res.status.value] = self.stats.get(res.status.value, 0) + 1
        self.stats["seconds"] += res.runtime
        if guard_reached(res.runtime, self.time_limit):
            self.stats["guard"] += 1
        if res.solution is None:  # no member gave a schedule: the current one is feasible
            return ins.current_schedule(problem)
        return res.solution

    def __repr__(self) -> str:
        return (f"CpsatInserter(time_limit={self.time_limit!r}, dtime={self.dtime!r}, "
                f"solver={self.solver!r})")


def deterministic_params(dtime: float | None) -> dict[str, dict[str, float]]:
    """The keyword arguments that put :func:`solve_cpsat` under CP-SAT's deterministic
    time limit ``dtime`` per stage (its work units, about seconds on a quiet machine);
    empty for None (the wall clock alone limits the call)."""
    return {} if dtime is None else {"sat_params": {"max_deterministic_time": dtime}}


def guard_reached(runtime: float, time_limit: float | None) -> bool:
    """Whether a call of ``runtime`` seconds reached 90% of its wall-clock limit, so that
    the clock (rather than a deterministic limit or a proof) may have stopped it."""
    return time_limit is not None and runtime >= 0.9 * time_limit
