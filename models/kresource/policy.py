"""OPT-EASY: EASY backfilling whose backfill set is the optimal selection (spec 1.8 M2).

At every decision: the FCFS phase as in EASY (start queue heads while they fit); then the
head's shadow time ``T_s`` and extra vector ``E`` (free units at ``T_s`` once the head is
placed there); then the set of the other waiting jobs that maximises the resources put
to work (``sum_k r_jk / C_k`` over the started jobs), then the number started, subject to
fitting now and, for jobs still running at ``T_s``, fitting in ``E``
(``sim.problems.kresource.SelectionProblem``). The head's promise is EASY's (checked by
the validator). Times are integer seconds.

Three exact shortcuts skip the solver: no candidate is eligible alone (nothing starts);
every eligible candidate fits together (all start); or at most ``enumerate_upto``
candidates are eligible and enumerating their subsets finds exactly one optimal set (a
solver that proves optimality must return that set, so the schedule is the one the
solver would give; with several optimal sets the solver is asked, as it breaks the tie).
Otherwise the registered selection solver (``cpsat`` by default) runs, with CP-SAT's
deterministic time capped at ``deterministic_limit`` (so a decision stops at the same
point whatever the machine's load: the schedule is reproducible) and a wall-clock
safety cap of ``time_limit`` seconds; a decision stopped by either uses the solver's
best set (counted in ``stats["not_proved"]``, and in ``stats["wall_stopped"]`` when the
wall clock stopped it: only those make a run depend on the machine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from heuristics.backfill import EASY
from instances.job import Job
from sim.batch.policy import MachineInfo
from sim.problems.kresource import SelectionProblem


def unique_optimum(free: Sequence[int], extra: Sequence[int],
                   demands: Sequence[Sequence[int]], late: Sequence[bool],
                   values: Sequence[int], max_nodes: int = 20000) -> list[int] | None:
    """The set of item indices maximising ``sum values`` subject to ``sum demands <=
    free`` and ``sum of the late items' demands <= extra`` (componentwise), when it is
    the only optimal set; None when several sets tie at the optimum or the search
    visits more than ``max_nodes`` nodes (depth-first, include before exclude, a branch
    cut only when even taking every remaining item could not reach the best value
    found: a tying branch is explored, so ties are counted)."""
    m = len(values)
    K = len(free)
    suffix = [0] * (m + 1)
    for i in range(m - 1, -1, -1):
        suffix[i] = suffix[i + 1] + values[i]
    best = [-1, 0, None]  # value, how many sets reach it, the set
    nodes = [0]
    chosen: list[int] = []
    fr = list(free)
    ex = list(extra)

    def rec(i: int, val: int) -> bool:
        nodes[0] += 1
        if nodes[0] > max_nodes:
            return False
        if val + suffix[i] < best[0]:
            return True
        if i == m:
            if val > best[0]:
                best[0], best[1], best[2] = val, 1, list(chosen)
            elif val == best[0]:
                best[1] += 1
            return True
        d = demands[i]
        lt = late[i]
        if all(d[k] <= fr[k] for k in range(K)) and (
                not lt or all(d[k] <= ex[k] for k in range(K))):
            for k in range(K):
                fr[k] -= d[k]
                if lt:
                    ex[k] -= d[k]
            chosen.append(i)
            ok = rec(i + 1, val + values[i])
            chosen.pop()
            for k in range(K):
                fr[k] += d[k]
                if lt:
                    ex[k] += d[k]
            if not ok:
                return False
        return rec(i + 1, val)

    if not rec(0, 0) or best[1] != 1:
        return None
    return best[2]


class OptEASY(EASY):
    """EASY with the optimal backfill selection (module docstring).

    Parameters
    ----------
    time_limit : float, optional
        Wall-clock safety cap per selection solve, seconds (default 30).
    deterministic_limit : float, optional
        CP-SAT deterministic-time cap per solve (default 1.0, about a second of an
        unloaded machine; ``solver="cpsat"`` only; None: no cap).
    solver : str
        Registered ``kresource_selection`` solver (``cpsat`` or ``ilp``).
    record : bool
        Keep every selection problem that reached the solver in ``decisions`` (for the
        per-decision gap study).
    enumerate_upto : int
        Decisions with at most this many eligible candidates are enumerated and the
        solver is called only when the optimum is not unique (module docstring); 0
        always calls the solver. The schedule is the same either way (when the solver
        proves every decision).
    """

    name = "opt-easy"

    def __init__(self, time_limit: float | None = 30.0, solver: str = "cpsat",
                 record: bool = False, enumerate_upto: int = 10,
                 deterministic_limit: float | None = 1.0) -> None:
        from sim.registry import solver as get_solver

        self.time_limit = time_limit
        self._solve = get_solver("kresource_selection", solver)
        self.record = record
        if isinstance(enumerate_upto, bool) or not isinstance(enumerate_upto, int) \
                or enumerate_upto < 0:
            raise ValueError(f"enumerate_upto must be an integer >= 0, got {enumerate_upto!r}")
        self.enumerate_upto = enumerate_upto
        dl = deterministic_limit
        if dl is not None and (isinstance(dl, bool) or not isinstance(dl, (int, float))
                               or not 0 < dl < math.inf):
            raise ValueError(f"deterministic_limit must be None or a finite number > 0 "
                             f"(CP-SAT's deterministic time), got {dl!r}")
        self.name = "opt-easy"
        self.deterministic_limit = deterministic_limit if solver == "cpsat" else None
        self.params = {"select": "opt", "window": 1, "time_limit": time_limit,
                       "deterministic_limit": self.deterministic_limit,
                       "solver": solver, "enumerate_upto": enumerate_upto}

    def reset(self, machine: MachineInfo) -> None:
        super().reset(machine)
        self.decisions: list[SelectionProblem] = []
        self.stats = {"decisions": 0, "solver_calls": 0, "not_proved": 0, "wall_stopped": 0,
                      "enumerated": 0}
        cap = self.machine.capacity
        lcm = math.lcm(*cap)
        self._unit = tuple(lcm // c for c in cap)  # SelectionProblem.weights' factors

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
        if len(elig) <= self.enumerate_upto and not self.record:
            # the objective of SelectionProblem.objective: work * (n + 1) + count
            n1 = len(cands) + 1
            unit = self._unit
            vals = [sum(cands[i].demand[k] * unit[k] for k in range(K)) * n1 + 1
                    for i in elig]
            best = unique_optimum(free, extra, [cands[i].demand for i in elig],
                                  [late[i] for i in elig], vals)
            if best is not None:
                self.stats["enumerated"] += 1
                return [elig[i] for i in best]
        prob = SelectionProblem(self.machine.capacity, tuple(free), extra,
                                tuple(c.demand for c in cands), tuple(late))
        if self.record:
            self.decisions.append(prob)
        self.stats["solver_calls"] += 1
        if self.deterministic_limit is not None:
            res = self._solve(prob, time_limit=self.time_limit,
                              deterministic_limit=self.deterministic_limit)
        else:
            res = self._solve(prob, time_limit=self.time_limit)
        if res.status.value != "OPTIMAL":
            self.stats["not_proved"] += 1
            if self.time_limit is not None and res.runtime >= 0.99 * self.time_limit:
                self.stats["wall_stopped"] += 1
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
