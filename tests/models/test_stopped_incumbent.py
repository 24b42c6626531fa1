"""A MIP solve stopped with an incumbent (its time limit, Ctrl-C) answers the better of
that incumbent and the family's heuristic fallback, FEASIBLE, with a bound on no wrong
side of either. The backend is replaced by one that stops at once holding a poor
incumbent (every job, or task, where the model lets the first index put it)."""

from __future__ import annotations

import re

from models import gang_schedule as gang_models
from models import mip
from models import task_mapping as tm_models
from sim.problems import gang_schedule as gs
from sim.problems import task_mapping as tm
from sim.result import Status


def _stopped_with(values):
    """A stand-in for ``mip.solve_logged``: sets each variable to ``values(name)`` and
    reports a run stopped with that solution and no bound of its own."""

    def solve_logged(prob, **kwargs):
        for v in prob.variables():
            v.varValue = values(v.name)
        return "feasible", None

    return solve_logged


def test_task_mapping_answers_the_greedy_when_it_beats_a_stopped_incumbent(monkeypatch):
    p = tm.random_problem(8, 10, 1, objective="max")

    def packed(name: str) -> float:  # every task of job j on node t: one node overloaded
        m = re.fullmatch(r"x_(\d+)_(\d+)_(\d+)", name)
        return float(m is not None and int(m[2]) == int(m[3]))

    monkeypatch.setattr(mip, "solve_logged", _stopped_with(packed))
    r = tm_models.solve_ilp(p, time_limit=30, backend="highs")
    greedy = tm.objective(p, tm_models._greedy_sorted(p))
    assert r.status is Status.FEASIBLE and r.objective == greedy, (r.objective, greedy)
    assert "greedy mapping: better than the incumbent of HiGHS" in r.note
    assert r.bound is not None and r.bound <= r.objective


def test_gang_ilp_answers_the_colouring_when_it_beats_a_stopped_incumbent(monkeypatch):
    p = gs.random_problem(3, n_nodes=16, n_jobs=12, width=(1, 4))

    def alone(name: str) -> float:  # every job in a row of its own
        m = re.fullmatch(r"x_(\d+)_(\d+)", name)
        return float(m is not None and m[1] == m[2])

    monkeypatch.setattr(mip, "solve_logged", _stopped_with(alone))
    r = gang_models.solve_ilp(p, time_limit=30, backend="highs")
    colouring = gs.objective(p, [row for row in gang_models._fallback(p) if row])
    assert colouring < len(p.jobs)  # the heuristic shares rows: better than one per job
    assert r.status is Status.FEASIBLE and r.objective == colouring
    assert "colouring heuristic's rows: better than the incumbent of HiGHS" in r.note
    assert r.bound is None or r.bound <= r.objective


def test_slots_ilp_answers_the_heuristic_table_when_it_beats_a_stopped_incumbent(
        monkeypatch):
    """The stopped backend holds the heuristics' table (gap 7); the fallback offered is
    CP-SAT's optimum (gap 4): the answer is the latter."""
    from models import slots as slot_models
    from sim.problems import slots as sp

    p = sp.random_problem(1, n_nodes=8, n_apps=4, n_slots=12, free=0, nodes_range=(2, 4),
                          demand_range=(3, 4), objective="gap")
    poor = slot_models._best_heuristic(p)
    best = slot_models.solve_cpsat(p, time_limit=10).solution
    assert sp.objective(p, best) < sp.objective(p, poor)
    names = [a.name for a in p.apps]

    def table(name: str) -> float:  # x_a_s = 1 when the poor table runs app a in slot s
        m = re.fullmatch(r"x_(\d+)_(\d+)", name)
        return float(m is not None and names[int(m[1])] in poor[int(m[2])])

    monkeypatch.setattr(mip, "solve_logged", _stopped_with(table))
    monkeypatch.setattr(slot_models, "_best_heuristic", lambda problem: best)
    r = slot_models.solve_ilp(p, time_limit=30, backend="highs")
    assert r.status is Status.FEASIBLE and r.objective == sp.objective(p, best)
    assert "heuristic table: better than the incumbent of HiGHS" in r.note
