"""K-resource epochs and response models check the clock while they are built:
a slow model build cannot carry a solver past its limit."""

from __future__ import annotations

import random
import time

import pytest

from models.deadline import Deadline, TimeUp
from models.kresource import common
from sim.problems import ensure_feasible, kresource
from sim.result import Status

SLOW = 0.002  # seconds per model variable in the fake slow build


def _epochs(n: int = 60) -> kresource.EpochProblem:
    rng = random.Random(1)
    cap = (64, 64, 64)
    return kresource.EpochProblem(
        capacity=cap, demands=tuple(tuple(rng.randint(1, 32) for _ in cap) for _ in range(n)))


def _slow(f):
    def g(*args, **kwargs):
        time.sleep(SLOW)
        return f(*args, **kwargs)
    return g


@pytest.mark.parametrize("backend", ["ilp", "cpsat"])
def test_slow_epochs_build_stops_at_the_limit_with_the_greedy_packing(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _epochs()
    greedy = common.best_packing(p)
    assert len(greedy) > p.lower_bound()  # else CP-SAT proves the packing without a model
    if backend == "ilp":
        from models.kresource import ilp as mod

        monkeypatch.setattr(mod, "variable", _slow(mod.variable))
    else:
        from ortools.sat.python import cp_model

        from models.kresource import cpsat as mod

        monkeypatch.setattr(cp_model.CpModel, "new_bool_var",
                            _slow(cp_model.CpModel.new_bool_var))
    # about n * E / 2 = 60 * 20 / 2 variables: 1.2 s of building at SLOW per variable
    t = time.perf_counter()
    r = mod.solve_epochs(p, time_limit=0.3)
    assert time.perf_counter() - t < 0.3 + 0.5
    assert r.status is Status.FEASIBLE
    assert "while building" in r.note
    ensure_feasible(p, r.solution)
    # the greedy packing (under a limit only the rules that fit in a tenth of it run)
    assert len(greedy) <= r.objective <= len(common.best_packing(p, time_limit=1e-9))
    assert r.bound == p.lower_bound()


def test_slow_response_build_stops_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from models.kresource import ilp

    rng = random.Random(2)
    n = 30
    p = kresource.ResponseProblem(
        capacity=(8, 8), release=tuple(sorted(rng.randint(0, 20) for _ in range(n))),
        duration=tuple(rng.randint(1, 5) for _ in range(n)),
        demands=tuple((rng.randint(1, 8), rng.randint(0, 8)) for _ in range(n)))
    monkeypatch.setattr(ilp, "variable", _slow(ilp.variable))
    t = time.perf_counter()
    r = ilp.solve_response(p, time_limit=0.3)
    assert time.perf_counter() - t < 0.3 + 0.5
    assert r.status is Status.UNKNOWN
    assert "while building" in r.note


@pytest.mark.untimed
def test_stopped_epoch_packing_finishes_fcfs() -> None:
    from heuristics.kresource import pack_epochs

    p = _epochs()
    full = pack_epochs(p, "unc-ff")
    assert pack_epochs(p, "unc-ff", stop=lambda: False) == full
    assert pack_epochs(p, "unc-ff", stop=lambda: True) == pack_epochs(p, "fcfs")
    asked = []

    def after_three() -> bool:
        asked.append(1)
        return len(asked) > 3

    part = pack_epochs(p, "unc-ff", stop=after_three)
    ensure_feasible(p, part)
    assert part != full
    # the epochs before the stop are the full run's; the epoch being filled closes as a
    # prefix of the full run's (stop is asked before each epoch and each scan of the queue)
    i = next(i for i, (a, b) in enumerate(zip(part, full, strict=False)) if a != b)
    assert part[i] == full[i][:len(part[i])] and len(part[i]) < len(full[i])


def _response(n: int = 40, seed: int = 3) -> kresource.ResponseProblem:
    rng = random.Random(seed)
    return kresource.ResponseProblem(
        capacity=(8, 8), release=tuple(sorted(rng.randint(0, 30) for _ in range(n))),
        duration=tuple(rng.randint(1, 6) for _ in range(n)),
        demands=tuple((rng.randint(1, 8), rng.randint(0, 8)) for _ in range(n)))


@pytest.mark.untimed
def test_stopped_serial_schedule_is_feasible() -> None:
    from heuristics.kresource import serial_schedule

    p = _response()
    order = sorted(range(p.n), key=lambda j: (p.release[j], j))
    full = serial_schedule(p, order)
    assert serial_schedule(p, order, stop=lambda: False) == full
    asked = []

    def after_ten() -> bool:
        asked.append(1)
        return len(asked) > 10

    part = serial_schedule(p, order, stop=after_ten)
    ensure_feasible(p, part)
    assert [part[j] for j in order[:10]] == [full[j] for j in order[:10]]
    ensure_feasible(p, serial_schedule(p, order, stop=lambda: True))


def test_list_heuristic_with_a_slow_placement_stops_at_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from heuristics import kresource as hk

    p = _response(200)
    stop_calls = []
    serial = hk.serial_schedule

    def slow_serial(problem, order, stop=None):
        def slow_stop() -> bool:
            time.sleep(0.01)  # 2 s for 200 jobs without the limit
            stop_calls.append(1)
            return stop is not None and stop()
        return serial(problem, order, stop=slow_stop)

    monkeypatch.setattr(hk, "serial_schedule", slow_serial)
    t = time.perf_counter()
    r = hk.solve_list(p, time_limit=0.3)
    assert time.perf_counter() - t < 0.3 + 0.5
    assert r.status is Status.FEASIBLE and "stopped by the time limit" in r.note
    ensure_feasible(p, r.solution)


def test_cbc_not_started_without_time_to_write_the_model(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from models.kresource import ilp

    rng = random.Random(4)
    n = 200
    dem = tuple((rng.randint(1, 30), rng.randint(1, 30)) for _ in range(n))
    p = kresource.SelectionProblem(capacity=(64, 64), free=(40, 40), extra=(20, 20),
                                   demands=dem, late=tuple(rng.random() < 0.5 for _ in dem))
    calls = []
    monkeypatch.setattr(ilp, "solve_guarded", lambda *a, **k: calls.append(1) or True)
    monkeypatch.setattr(ilp, "variable", _slow(ilp.variable))  # about 0.4 s of building
    r = ilp.solve_selection(p, time_limit=0.6)
    assert not calls  # 0.2 s left, less than the build (and write) time
    assert r.status is Status.UNKNOWN


def test_epochs_build_reads_the_clock_at_every_job_and_row(monkeypatch) -> None:
    """The epochs model's one-epoch rows are made with each job's variables, the clock
    read at every job, and its capacity rows (up to 10^5 terms each) with the clock read
    at every row. On a clock that counts model objects (variables and one-epoch rows),
    expiring just after the last variable, at most one job's objects follow it."""
    from ortools.sat.python import cp_model

    from models.kresource import cpsat

    p = _epochs(200)
    ub = common.best_packing(p)
    E = len(ub)
    n_vars = cpsat.epochs_variables(p.n, E)
    count = {"made": 0, "late": 0}

    class Clock(Deadline):  # expires once n_vars + 5 objects are made
        def expired(self, margin: float = 0.0) -> bool:
            return count["made"] >= n_vars + 5

    def counted(f):
        def g(*args, **kwargs):
            count["late"] += count["made"] >= n_vars + 5
            count["made"] += 1
            return f(*args, **kwargs)
        return g

    for name in ("new_bool_var", "add_exactly_one"):
        monkeypatch.setattr(cp_model.CpModel, name, counted(getattr(cp_model.CpModel, name)))
    with pytest.raises(TimeUp):
        cpsat._epochs_model(p, ub, p.lower_bound(), Clock(1.0))
    assert count["late"] <= E + 1  # one job's variables and its row (main: every row)


def test_epochs_ilp_does_not_build_a_model_too_large_to_hold(monkeypatch) -> None:
    """The epochs ILP over more than MAX_EPOCH_VARIABLES variables is not built: the
    greedy packing at once (its build ran until the limit, holding 1.1 GB at 16 s on
    10^5 jobs). Counted in PuLP variables made, none."""
    from models.kresource import cpsat, ilp

    made = []
    make = ilp.variable
    monkeypatch.setattr(ilp, "variable", lambda *a, **k: made.append(1) or make(*a, **k))
    p = _epochs(2000)
    E = len(common.best_packing(p, 5.0))
    assert cpsat.epochs_variables(p.n, E) > 500_000
    r = ilp.solve_epochs(p, time_limit=5.0)
    assert made == [] and "model too large" in r.note
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL) and r.bound == p.lower_bound()
    ensure_feasible(p, r.solution)
