"""OPT-EASY: EASY backfilling whose backfill set is the optimal selection (spec 1.8 M2).

At every decision: the FCFS phase as in EASY (start queue heads while they fit); then the
head's shadow time ``T_s`` and extra vector ``E`` (free units at ``T_s`` once the head is
placed there); then the set of the other waiting jobs that maximises the resources put
to work (``sum_k r_jk / C_k`` over the started jobs), then the number started, subject to
fitting now and, for jobs still running at ``T_s``, fitting in ``E``
(``sim.problems.kresource.SelectionProblem``). The head's promise is EASY's (checked by
the validator). Times are integer seconds.

Two exact shortcuts skip the solver: no candidate is eligible alone (nothing starts),
or every eligible candidate fits together (all start). Otherwise the registered selection
solver (``cpsat`` by default) runs with ``time_limit`` seconds; a decision stopped by the
limit uses the solver's best set (counted in ``stats["not_proved"]``).
"""

from __future__ import annotations

from heuristics.backfill import EASY
from instances.job import Job
from sim.batch.policy import MachineInfo
from sim.problems.kresource import SelectionProblem


class OptEASY(EASY):
    """EASY with the optimal backfill selection (module docstring).

    Parameters
    ----------
    time_limit : float, optional
        Seconds per selection solve (default 1.0).
    solver : str
        Registered ``kresource_selection`` solver (``cpsat`` or ``ilp``).
    record : bool
        Keep every selection problem that reached the solver in ``decisions`` (for the
        per-decision gap study).
    """

    name = "opt-easy"

    def __init__(self, time_limit: float | None = 1.0, solver: str = "cpsat",
                 record: bool = False) -> None:
        from sim.registry import solver as get_solver

        self.time_limit = time_limit
        self._solve = get_solver("kresource_selection", solver)
        self.record = record
        self.name = "opt-easy"
        self.params = {"select": "opt", "window": 1, "time_limit": time_limit,
                       "solver": solver}

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.decisions: list[SelectionProblem] = []
        self.stats = {"decisions": 0, "solver_calls": 0, "not_proved": 0}

    def _select(self, cands: list[Job], extra: tuple[int, ...], shadow: int,
                now: int) -> list[int]:
        free = self.plan.free
        K = len(free)
        late = [now + c.requested > shadow for c in cands]
        elig = [i for i, c in enumerate(cands)
                if all(c.demand[k] <= free[k] and (not late[i] or c.demand[k] <= extra[k])
                       for k in range(K))]
        if not elig:
            return []
        tot = [sum(cands[i].demand[k] for i in elig) for k in range(K)]
        lt = [sum(cands[i].demand[k] for i in elig if late[i]) for k in range(K)]
        if all(tot[k] <= free[k] and lt[k] <= extra[k] for k in range(K)):
            return elig
        prob = SelectionProblem(self.machine.capacity, tuple(free), extra,
                                tuple(c.demand for c in cands), tuple(late))
        if self.record:
            self.decisions.append(prob)
        self.stats["solver_calls"] += 1
        res = self._solve(prob, time_limit=self.time_limit)
        if res.status.value != "OPTIMAL":
            self.stats["not_proved"] += 1
        return list(res.solution or [])

    def schedule(self, now: int) -> list[Job]:
        if self.queue:
            self.stats["decisions"] += 1
        started, shadow = self._fcfs_phase(now)
        q = self.queue
        if shadow is None:
            return started
        plan = self.plan
        profile = plan.profile
        head = q[0]
        if len(q) < 2:
            return started
        # free capacity never decreases on [now, shadow) and, with the head reserved, the
        # free vector at the shadow time is the least from then on: a job running past
        # the shadow time fits throughout iff it fits now and in E (spec 1.2.2)
        profile.reserve(shadow, head.requested, head.demand)
        extra = tuple(profile.free_at(shadow))
        profile.release(shadow, head.requested, head.demand)
        cands = q[1:]
        chosen = set(self._select(cands, extra, shadow, now))
        for i in sorted(chosen):
            plan.start(cands[i], now)
            started.append(cands[i])
        self.queue = [head] + [c for i, c in enumerate(cands) if i not in chosen]
        return started
