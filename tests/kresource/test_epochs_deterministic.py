"""The epochs model under CP-SAT's deterministic time: a search that limit stops ends at
the same point every time, and an answer the wall clock decided says so."""

from __future__ import annotations

from instances.kresource import KResourceSpec, generate
from models.kresource.cpsat import solve_epochs, wall_decided
from sim.problems.kresource import EpochProblem
from sim.result import Status


def _hard() -> EpochProblem:
    """240 jobs, K = 4, on a 32-processor machine: the greedy packing misses the lower
    bound and CP-SAT needs about 1.4 deterministic units to prove 13 epochs."""
    w = generate(KResourceSpec(K=4, dist="uniform", jobs=4000, seed=7, P=32, resolution=4))
    return EpochProblem(w.capacity, tuple(j.demand for j in w.jobs[500:740]))


def test_a_deterministic_stop_is_repeatable_and_not_the_clocks() -> None:
    p = _hard()
    first = solve_epochs(p, time_limit=60.0, deterministic_limit=0.2)
    second = solve_epochs(p, time_limit=60.0, deterministic_limit=0.2)
    assert first.status is Status.FEASIBLE  # stopped by the limit, not proved
    assert (first.solution, first.bound) == (second.solution, second.bound)
    assert not wall_decided(first) and first.params["deterministic_limit"] == 0.2


def test_an_answer_the_wall_clock_stopped_says_so() -> None:
    r = solve_epochs(_hard(), time_limit=0.3, deterministic_limit=50.0)
    assert r.status is Status.FEASIBLE and wall_decided(r)
    assert wall_decided(solve_epochs(_hard(), time_limit=0.3))  # the clock alone


def test_a_proved_answer_is_not_the_clocks() -> None:
    r = solve_epochs(_hard(), time_limit=60.0, deterministic_limit=50.0)
    assert r.status is Status.OPTIMAL and not wall_decided(r)
