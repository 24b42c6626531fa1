"""Solver options are explicit keyword parameters: a misspelt option is a TypeError
for every registered solver of every family."""

from __future__ import annotations

import pytest

from sim import registry

pytestmark = pytest.mark.untimed  # tests/conftest.py: no clock, runs beside timed tests


def _small(family: str):
    """A small problem of ``family`` through its registered loader, or None."""
    if family == "grouping":
        from sim.problems.grouping import random_problem
        data = random_problem(5, 8, max_procs=4, seed=1).to_dict()
    elif family == "slack_insertion":
        import json

        from sim.problems.insertion import random_problem
        data = json.loads(json.dumps(random_problem(1, 3).to_dict()))
    elif family == "task_mapping":
        from sim.problems.task_mapping import random_problem
        data = random_problem(4, 2, 1, sizes=(1, 2)).to_dict()
    elif family == "slot_assignment":
        from sim.problems.slots import random_problem
        data = random_problem(1, n_nodes=4, n_apps=3, n_slots=8, free=1, nodes_range=(1, 2),
                              demand_range=(1, 2)).to_dict()
    elif family == "slot_placement":
        from sim.problems.placement import PlacementProblem
        data = PlacementProblem(g_us=100, n_slots=4, k=2, i=1).to_dict()
    elif family == "gang_schedule":
        from sim.problems.gang_schedule import random_problem
        data = random_problem(1, n_nodes=4, n_jobs=3, width=(1, 2)).to_dict()
    elif family == "kresource_epochs":
        from sim.problems.kresource import EpochProblem
        data = EpochProblem(capacity=(4, 4), demands=((1, 2), (2, 1), (3, 3))).to_dict()
    elif family == "kresource_selection":
        from sim.problems.kresource import SelectionProblem
        data = SelectionProblem(capacity=(4, 4), free=(3, 3), extra=(1, 1),
                                demands=((1, 2), (2, 1)), late=(True, False)).to_dict()
    elif family == "kresource_response":
        from sim.problems.kresource import ResponseProblem
        data = ResponseProblem(capacity=(4, 4), release=(0, 1), duration=(2, 3),
                               demands=((1, 2), (2, 1))).to_dict()
    else:
        return None
    fam, problem = registry.load_problem(data)
    assert fam == family
    return problem


CASES = [(f, n) for f in sorted(registry.SOLVERS) for n in sorted(registry.SOLVERS[f])]


@pytest.mark.parametrize(("family", "name"), CASES)
def test_misspelt_option_is_a_type_error(family: str, name: str) -> None:
    problem = _small(family)
    if problem is None:
        pytest.skip(f"no small instance of family {family!r} in this test")
    solve = registry.solver(family, name)
    with pytest.raises(TypeError, match="look_ahaed"):
        solve(problem, time_limit=1.0, seed=0, look_ahaed=False)


def test_grouping_greedy_records_its_options() -> None:
    from heuristics.grouping import greedy
    from sim.problems.grouping import random_problem

    r = greedy(random_problem(6, 8, max_procs=4, seed=2), gain="marginal", look_ahead=False)
    assert r.params["gain"] == "marginal" and r.params["look_ahead"] is False
