"""A large backfill selection runs CP-SAT in a worker killed at the limit
(``models.cpsat_process``): a CP-SAT that does not stop at its limit is killed there and
its last improving selection answers (FEASIBLE, checked, with a bound on the right
side); Ctrl-C keeps it too; the LP bound that backs a killed run's bound is valid.

CP-SAT is made to ignore the limit by its own parameters: 30 s of its own time limit
and no LP relaxation (``linearization_level = 0``), so it cannot prove this instance
and runs all 30 s unless killed."""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import pytest

from models import interrupt, mip
from models.kresource import cpsat
from sim.problems import ensure_feasible, kresource
from sim.result import Status

LIMIT = 3.0  # seconds
SLACK = 2.0  # seconds past the limit the whole call may take


@pytest.fixture(scope="module", autouse=True)
def _started() -> None:
    from ortools.sat.python import cp_model  # noqa: F401  (start-up, outside the limit)

    mip.start_server()  # the worker's fork server: once per process


def _problem(n: int = 2000, seed: int = 1) -> kresource.SelectionProblem:
    """About 2000 candidates, 8-10 of which fit together: CP-SAT without its LP does
    not prove it in 30 s."""
    rng = random.Random(seed)
    cap = (1000, 1000, 1000)
    dem = tuple(tuple(rng.randint(1, 60) for _ in cap) for _ in range(n))
    return kresource.SelectionProblem(capacity=cap, free=(500, 500, 500),
                                      extra=(300, 300, 300), demands=dem,
                                      late=tuple(rng.random() < 0.5 for _ in dem))


@pytest.fixture
def stubborn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every selection solved in the worker, by a CP-SAT that ignores the limit."""
    solver = cpsat._solver

    def ignoring(time_limit, seed, deterministic_limit=None):
        s = solver(time_limit, seed, deterministic_limit)
        s.parameters.max_time_in_seconds = 30.0
        s.parameters.linearization_level = 0
        return s

    monkeypatch.setattr(cpsat, "_solver", ignoring)
    monkeypatch.setattr(cpsat, "IN_PROCESS_MAX", 0, raising=False)


def _answered(p, r) -> None:
    assert r.status is Status.FEASIBLE
    ensure_feasible(p, r.solution)
    assert r.bound is not None and r.bound >= r.objective


def test_a_cpsat_that_ignores_its_limit_is_killed_there_with_its_incumbent(
        stubborn) -> None:
    p = _problem()
    t = time.perf_counter()
    r = cpsat.solve_selection(p, time_limit=LIMIT)
    wall = time.perf_counter() - t
    assert wall < LIMIT + SLACK, wall
    _answered(p, r)
    assert "its last improving selection" in r.note  # streamed by the worker, not greedy


def test_ctrl_c_stops_the_worker_with_its_incumbent(stubborn) -> None:
    p = _problem()
    before = interrupt.count()
    timer = threading.Timer(2.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    t = time.perf_counter()
    timer.start()
    r = cpsat.solve_selection(p, time_limit=60.0)
    took = time.perf_counter() - t
    assert took < 2.0 + interrupt.GRACE + SLACK, took
    _answered(p, r)
    assert interrupt.count() == before + 1


@pytest.mark.untimed
@pytest.mark.parametrize("seed", range(40))
def test_the_lp_bound_is_never_below_the_optimum(seed: int) -> None:
    from models.kresource import brute
    from models.kresource.common import selection_bound

    rng = random.Random(seed)
    K = rng.randint(1, 3)
    huge = seed % 4 == 0  # numbers whose products leave int64 (one capacity: L = C)
    cap = (rng.randint(5, 40) * 10**8,) * K if huge else \
        tuple(rng.randint(5, 40) for _ in range(K))
    dem = tuple(tuple(rng.randint(k == 0, c // 2) for k, c in enumerate(cap))
                for _ in range(rng.randint(1, 14)))
    p = kresource.SelectionProblem(
        capacity=cap, free=tuple(rng.randint(0, c) for c in cap),
        extra=tuple(rng.randint(0, c) for c in cap), demands=dem,
        late=tuple(rng.random() < 0.5 for _ in dem))
    opt = brute.solve_selection(p)
    assert opt.status is Status.OPTIMAL
    assert selection_bound(p) >= opt.objective


@pytest.mark.untimed
@pytest.mark.parametrize("why", ["killed", "memory", "crashed (MemoryError)"])
def test_a_worker_stopped_without_a_selection_leaves_the_greedy_backfill(
        monkeypatch, why: str) -> None:
    from models import cpsat_process

    monkeypatch.setattr(cpsat, "IN_PROCESS_MAX", 0)
    monkeypatch.setattr(cpsat_process, "solve", lambda *a, **k: cpsat_process.Answer(
        None, None, None, why, False, 0.0))
    p = _problem(300)
    r = cpsat.solve_selection(p, time_limit=5.0)
    _answered(p, r)
    assert "the greedy backfill (bb), with the LP bound" in r.note
    assert ("killed at the time limit" if why == "killed" else why.split()[0]) in r.note
