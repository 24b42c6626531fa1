"""Every exact solver either refuses a problem (ValueError naming a field) or answers it
as brute force does, on small instances with huge coefficients: a model that cannot
represent its data exactly never answers (``sim.problems.fields.EXACT_MAX``)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim import registry
from sim.result import Status

pytestmark = pytest.mark.untimed  # tests/conftest.py: no clock, runs beside timed tests

HUGE = [1, 2, 3, 7, 10**6 + 3, 10**12 - 1, 10**12, 10**12 + 1, 2**53 - 1, 2**53 + 1,
        2**62 + 1, 2**63 - 1]
"""Magnitudes around every limit an exact model has (13 digits, 2^53, int64)."""

EXACT = {"kresource_epochs": ("cpsat", "colgen", "ilp"), "kresource_selection": ("cpsat", "ilp"),
         "kresource_response": ("cpsat", "ilp"), "gang_schedule": ("cpsat", "ilp"),
         "task_mapping": ("cpsat", "ilp"), "slot_assignment": ("cpsat", "ilp")}
"""The exact solvers of each family checked here against its ``brute`` solver."""

SENSE = {"kresource_selection": "max"}

big = st.sampled_from(HUGE)


@st.composite
def _fraction_of(draw: Any, whole: int) -> int:
    """An integer in [0, whole]: 0, the whole, or a fraction of it."""
    return draw(st.sampled_from([0, 1, whole, whole // 2, whole // 3, max(0, whole - 1)]))


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    """A small problem of one family as its JSON dictionary, numbers drawn from HUGE."""
    fam = draw(st.sampled_from(sorted(EXACT)))
    n = draw(st.integers(2, 4))
    if fam.startswith("kresource"):
        cap = [draw(big), draw(big)]
        dem = []
        for _ in range(n):
            row = [draw(_fraction_of(c)) for c in cap]
            dem.append(row if sum(row) else [1, 0])
        if fam == "kresource_epochs":
            return {"problem": fam, "capacity": cap, "demands": dem}
        if fam == "kresource_selection":
            return {"problem": fam, "capacity": cap, "demands": dem,
                    "free": [draw(_fraction_of(c)) for c in cap],
                    "extra": [draw(_fraction_of(c)) for c in cap],
                    "late": [draw(st.booleans()) for _ in range(n)]}
        return {"problem": fam, "capacity": cap, "demands": dem,
                "release": [draw(st.sampled_from([0, 1, 3])) for _ in range(n)],
                "duration": [draw(st.sampled_from([1, 2, 3])) for _ in range(n)],
                "weights": [draw(st.sampled_from([0, 1] + HUGE)) for _ in range(n)]}
    if fam == "gang_schedule":
        nodes = 3
        jobs = [{"name": f"J{i}", "nodes": sorted(draw(st.sets(st.integers(0, nodes - 1),
                                                               min_size=1, max_size=2))),
                 "mem": 1, "weight": draw(st.sampled_from([1.0, 2.5, 1e300] + HUGE))}
                for i in range(n)]
        return {"problem": fam, "n_nodes": nodes, "mem": draw(big), "jobs": jobs,
                "objective": "weighted"}
    if fam == "task_mapping":
        m = draw(big)
        jobs = [[draw(_fraction_of(m)) or 1 for _ in range(draw(st.integers(1, 2)))]
                for _ in range(n)]
        return {"problem": fam, "n_nodes": 2, "mem_pages": m, "jobs": jobs,
                "base": [draw(_fraction_of(m)), 0],
                "objective": draw(st.sampled_from(["max", "overload"]))}
    apps = [{"name": f"A{i}", "nodes": sorted(draw(st.sets(st.integers(0, 2), min_size=1,
                                                           max_size=2))),
             "demand": draw(st.integers(1, 2))} for i in range(n)]
    return {"problem": fam, "n_nodes": 3, "n_slots": 6, "apps": apps, "free": 0,
            "slot_us": draw(big), "objective": draw(st.sampled_from(["round", "gap"]))}


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_exact_solvers_refuse_or_match_brute_force(data: dict[str, Any]) -> None:
    fam = data["problem"]
    try:
        _, problem = registry.load_problem(data, source="p.json")
    except ValueError as exc:
        msg = str(exc)
        assert msg.startswith("p.json") and "\n" not in msg, msg
        assert "field" in msg, msg
        return
    ref = registry.solver(fam, "brute")(problem, time_limit=30)
    assert ref.status in (Status.OPTIMAL, Status.INFEASIBLE), ref
    for name in EXACT[fam]:
        try:
            got = registry.solver(fam, name)(problem, time_limit=20)
        except ValueError as exc:  # a size limit of the model, said in one line
            assert "\n" not in str(exc), exc
            continue
        if ref.status is Status.INFEASIBLE:
            assert got.status is Status.INFEASIBLE, (name, data, got)
            continue
        opt, sign = ref.objective, -1.0 if SENSE.get(fam) == "max" else 1.0
        if got.status is Status.OPTIMAL:
            assert _same(got.objective, opt), (name, data, got.objective, opt)
        else:  # a solver that says why it proves nothing (scaled weights): never wrong
            assert got.status is Status.FEASIBLE and got.note, (name, data, got)
            assert sign * got.objective >= sign * opt or _same(got.objective, opt), got
            assert got.bound is None or sign * got.bound <= sign * opt or _same(
                got.bound, opt), (name, data, got)


@pytest.mark.parametrize("data", [
    {"problem": "kresource_selection", "capacity": [1100000000000, 1100000000001],
     "free": [1100000000000, 1100000000000], "extra": [10**12, 10**12],
     "demands": [[10**12, 3], [7, 1100000000000], [5, 5]], "late": [False, True, False]},
    {"problem": "kresource_response", "capacity": [4, 4], "release": [0, 0, 1],
     "duration": [2, 1, 2], "demands": [[1, 1], [2, 1], [1, 2]],
     "weights": [2**63 - 1, 1, 2**63 - 1]},
    {"problem": "gang_schedule", "n_nodes": 3, "mem": 10, "objective": "weighted",
     "jobs": [{"name": "A", "nodes": [0, 1], "mem": [3, 4], "weight": 1e300},
              {"name": "B", "nodes": [1, 2], "mem": 2}, {"name": "C", "nodes": [0], "mem": 5}]},
])
def test_the_reported_cases_are_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"^p\.json: .*(field|weight|capacity)"):
        registry.load_problem(data, source="p.json")
