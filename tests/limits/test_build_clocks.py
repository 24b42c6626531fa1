"""The exact models read the clock inside every long stretch of their build, so that a
build cut by the limit stops within one short step of it at any limit, not after the
stretch it happened to be in (one application's block of the slot model, one job's
rows of the task-mapping model, a loop over jobs x rows of the gang model).

Most tests count model objects made after the deadline on a clock that advances by a
fixed amount per object made (:func:`work_clock`), so no machine's speed decides them."""

from __future__ import annotations

from typing import Any

import pytest

from models.deadline import Deadline
from sim.problems import gang_schedule as gs
from sim.problems import slots as sp
from sim.result import Status

MS = 0.001  # seconds of the work clock per object made


def work_clock(monkeypatch: pytest.MonkeyPatch, module: Any, owner: Any,
               attr: str) -> dict[str, int]:
    """Make ``module.Deadline`` a budget whose clock reads 1 ms per call of ``owner.attr``
    (a model builder's primitive) and count those calls, ``made``, and those made after
    the budget expired, ``late``."""
    count = {"made": 0, "late": 0}
    budgets: list[Deadline] = []

    class WorkDeadline(Deadline):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            budgets.append(self)

        def elapsed(self) -> float:
            return count["made"] * MS

    made = getattr(owner, attr)

    def counted(*args: Any, **kwargs: Any) -> Any:
        if budgets and budgets[-1].expired():
            count["late"] += 1
        count["made"] += 1
        return made(*args, **kwargs)

    monkeypatch.setattr(owner, attr, counted)
    monkeypatch.setattr(module, "Deadline", WorkDeadline)
    return count


def _lone_gap(demand: int, n_slots: int) -> sp.SlotProblem:
    """One application of ``demand`` slots in a round of ``n_slots``, objective gap."""
    return sp.from_dict({"problem": "slot_assignment", "n_nodes": 1, "n_slots": n_slots,
                         "free": 0, "objective": "gap",
                         "apps": [{"nodes": [0], "demand": demand}]})


def test_slot_cpsat_reads_the_clock_inside_one_applications_block(monkeypatch) -> None:
    """The gap model's block of one application holds demand x slots variables (390,000
    of one application took 14 s past a 1 s limit): the clock is read at each of its
    positions, so at most one position's slots are made after the deadline."""
    from ortools.sat.python import cp_model

    from models import slots

    S, d = 200, 50
    count = work_clock(monkeypatch, slots, cp_model.CpModel, "new_bool_var")
    # the deadline falls inside the application's block: x (S) then z (d x S)
    r = slots.solve_cpsat(_lone_gap(d, S), time_limit=(S + 5 * S) * MS)
    assert r.status is Status.FEASIBLE and "while building the model" in r.note
    assert S < count["made"] < S + d * S  # the block began and was cut short
    assert count["late"] <= S


def test_slot_ilp_reads_the_clock_inside_one_applications_block(monkeypatch) -> None:
    """The same for the ILP's gap model (PuLP variables)."""
    from models import cbc, slots

    S, d = 200, 50
    count = work_clock(monkeypatch, slots, cbc, "variable")
    r = slots.solve_ilp(_lone_gap(d, S), time_limit=(S + 5 * S) * MS)
    assert r.status is Status.FEASIBLE and "while building the model" in r.note
    assert S < count["made"] < S + d * S
    assert count["late"] <= S


def test_slot_cpsat_reads_the_clock_at_every_row_of_a_node(monkeypatch) -> None:
    """A node's rows (one per slot of the round) are made with the clock read at each:
    at most one row after the deadline."""
    from ortools.sat.python import cp_model

    from models import slots

    S = 2000
    count = work_clock(monkeypatch, slots, cp_model.CpModel, "add")
    # x (no Add), the demand row (1 Add), then the node's S rows; the deadline inside them
    r = slots.solve_cpsat(_lone_gap(1, S), time_limit=S // 2 * MS, hint=False)
    assert r.status is Status.FEASIBLE and "while building the model" in r.note
    assert count["made"] < S
    assert count["late"] <= 1


def _star(n: int) -> gs.GangProblem:
    """A hub job on every node, one job of its own on each node: the hub's degree, and
    so the weighted model's rows ``R``, is ``n``; every other job has 2 rows."""
    jobs = [{"name": "hub", "nodes": list(range(n)), "mem": [1] * n, "weight": 1.0}]
    jobs += [{"name": f"J{i}", "nodes": [i], "mem": [1], "weight": 1.0} for i in range(n)]
    return gs.from_dict({"problem": "gang_schedule", "n_nodes": n, "mem": 100,
                         "max_rows": n + 1, "objective": "weighted", "local_mem": [0] * n,
                         "jobs": jobs})


def test_gang_ilp_builds_over_each_jobs_own_rows(monkeypatch) -> None:
    """15,000 jobs of 2 rows beside a hub of 15,001: each job's one-row constraint is a
    sum over the job's own rows, not over R (jobs x R: 2.25e8 look-ups, 28 s of CPU
    past a 2 s limit), and the clock is read at every job, so at most one job's sum is
    made after the deadline. The work clock advances 1 ms per sum made; the deadline
    falls inside the jobs' sums, after the hub's."""
    import pulp

    from models import gang_schedule as mg

    sizes: list[int] = []
    lp_sum = pulp.lpSum

    def listed(terms):
        terms = list(terms)
        sizes.append(len(terms))
        return lp_sum(terms)

    monkeypatch.setattr(pulp, "lpSum", listed)
    count = work_clock(monkeypatch, mg, pulp, "lpSum")
    n = 15_000
    pb = _star(n)
    r = mg.solve_ilp(pb, time_limit=5500 * MS)
    assert r.status is Status.FEASIBLE and "while building the model" in r.note
    assert gs.check(pb, r.solution) == []  # the colouring heuristic's rows
    assert count["late"] <= 1  # the clock read at every job
    assert 5500 <= count["made"] <= 5501
    assert sizes[0] == n + 1 and set(sizes[1:]) == {2}  # the hub's rows, then two each


def test_gang_cpsat_builds_and_reads_over_each_jobs_own_rows() -> None:
    """The weighted CP-SAT model of a 6,000-job star: its node rows are the rows two jobs
    of the node share (2 here, not R = 6,001 per node) and its answer is read over its
    variables, so CP-SAT gets the time and proves the optimum well inside the limit
    (over jobs x rows the build alone outlasted it)."""
    from models import gang_schedule as mg

    pb = _star(6000)
    r = mg.solve_cpsat(pb, time_limit=10.0)
    assert r.status is Status.OPTIMAL, r.note
    assert r.runtime < 10.0 + 2.0
    assert gs.check(pb, r.solution) == []


def _one_job(tasks: int, nodes: int) -> Any:
    """One job of ``tasks`` tasks on ``nodes`` nodes: the whole model is one job's."""
    from sim.problems import task_mapping as tm

    return tm.from_dict({"problem": "task_mapping", "name": "one-job", "n_nodes": nodes,
                         "mem_pages": 32768, "jobs": [[1000 + 7 * t for t in range(tasks)]],
                         "base": [0] * nodes, "objective": "max"})


@pytest.mark.parametrize("backend", ["cpsat", "ilp"])
def test_task_mapping_reads_the_clock_at_every_task_of_one_job(monkeypatch,
                                                               backend: str) -> None:
    """One job may hold every variable of the model (495 tasks x 500 nodes ran 3.3 s past
    a 1 s limit under cpsat): the clock is read at every task, so at most one task's
    nodes are made after the deadline."""
    from ortools.sat.python import cp_model

    from models import cbc
    from models import task_mapping as mt

    T, n = 40, 50
    owner, attr = (cp_model.CpModel, "new_bool_var") if backend == "cpsat" \
        else (cbc, "variable")
    count = work_clock(monkeypatch, mt, owner, attr)
    solve = mt.solve_cpsat if backend == "cpsat" else mt.solve_ilp
    r = solve(_one_job(T, n), time_limit=5 * n * MS)
    assert r.status is Status.FEASIBLE and "while building the model" in r.note
    assert count["made"] < T * n  # the job's variables began and were cut short
    assert count["late"] <= n
