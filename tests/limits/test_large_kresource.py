"""The K-resource solvers keep their limit at 10^5 jobs: a model that cannot be built in
the time left is not started, model building is charged to the limit and stops there,
and the greedy answer (packing, backfill, serial schedule) stands when CP-SAT finds
nothing. Slow builds are simulated (a sleep per variable or column), so the bounds hold
on a loaded machine."""

from __future__ import annotations

import random
import time

import pytest

from models.kresource import colgen, cpsat, portfolio
from sim.problems import ensure_feasible, kresource
from sim.result import Status

SLOW = 0.002  # seconds per model variable (or master column) of a slowed-down build


def _slow(f, seconds: float = SLOW):
    def g(*args, **kwargs):
        time.sleep(seconds)
        return f(*args, **kwargs)
    return g


def _pairs(n: int) -> kresource.EpochProblem:
    """Jobs that pack two to an epoch: n / 2 epochs, about 3 n^2 / 8 model variables."""
    return kresource.EpochProblem(capacity=(64, 64), demands=tuple(
        (33, 1) if j % 2 else (1, 33) for j in range(n)))


@pytest.mark.untimed
def test_epochs_model_too_large_for_the_time_left_is_not_started(
        monkeypatch: pytest.MonkeyPatch) -> None:
    p = _pairs(2000)  # 1,500,000 variables: 1.5 s at a microsecond each, limit 1 s

    def no_build(*args, **kwargs):
        raise AssertionError("the model was started")

    monkeypatch.setattr(cpsat, "_epochs_model", no_build)
    r = cpsat.solve_epochs(p, time_limit=1.0)
    assert r.status is Status.FEASIBLE and "model too large" in r.note
    assert r.bound == p.lower_bound()
    ensure_feasible(p, r.solution)


def test_colgen_master_build_stops_at_its_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    cap = (64, 64, 64)
    p = kresource.EpochProblem(capacity=cap, demands=tuple(
        tuple(rng.randint(1, 32) for _ in cap) for _ in range(1500)))
    monkeypatch.setattr(colgen._Master, "add", _slow(colgen._Master.add))
    monkeypatch.setattr(colgen, "CLOCK_EVERY", 10, raising=False)
    # the greedy packings give a few hundred columns: seconds of master building
    r = colgen.solve_epochs(p, time_limit=0.5)
    assert r.runtime < 0.5 + 0.3
    assert r.status is Status.FEASIBLE and "no time to build the master LP" in r.note
    ensure_feasible(p, r.solution)


def test_integer_master_build_stops_at_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from ortools.sat.python import cp_model

    p = _pairs(2000)
    columns = [(j,) for j in range(p.n)]
    monkeypatch.setattr(cp_model.CpModel, "new_bool_var",
                        _slow(cp_model.CpModel.new_bool_var))
    monkeypatch.setattr(colgen, "CLOCK_EVERY", 10, raising=False)
    t = time.perf_counter()  # 2000 columns: 4 s of building without the clock
    assert colgen.integer_master(p, columns, lower=1, incumbent=[[j] for j in range(p.n)],
                                 time_limit=0.3) is None
    assert time.perf_counter() - t < 0.3 + 0.5


def test_selection_out_of_time_answers_the_greedy_backfill() -> None:
    rng = random.Random(6)
    cap = (64, 64, 64)
    dem = tuple(tuple(rng.randint(1, 32) for _ in cap) for _ in range(3000))
    p = kresource.SelectionProblem(capacity=cap, free=(40, 40, 40), extra=(20, 20, 20),
                                   demands=dem, late=tuple(rng.random() < 0.5 for _ in dem))
    r = cpsat.solve_selection(p, time_limit=1e-6)
    assert r.status is Status.FEASIBLE and "greedy backfill" in r.note
    ensure_feasible(p, r.solution)
    assert r.runtime < 1.0  # the greedy and the model's first rows, nothing more


def _response(n: int, seed: int = 7) -> kresource.ResponseProblem:
    rng = random.Random(seed)
    return kresource.ResponseProblem(
        capacity=(8, 8), release=tuple(sorted(rng.randint(0, 5 * n) for _ in range(n))),
        duration=tuple(rng.randint(1, 6) for _ in range(n)),
        demands=tuple((rng.randint(1, 8), rng.randint(0, 8)) for _ in range(n)))


def test_response_build_stops_at_the_limit_with_the_serial_schedule(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ortools.sat.python import cp_model

    p = _response(1500)
    monkeypatch.setattr(cp_model.CpModel, "new_fixed_size_interval_var",
                        _slow(cp_model.CpModel.new_fixed_size_interval_var))
    monkeypatch.setattr(cpsat, "CLOCK_EVERY", 10, raising=False)
    r = cpsat.solve_response(p, time_limit=0.5)  # 3 s of building without the clock
    assert r.runtime < 0.5 + 0.3
    assert r.status is Status.FEASIBLE and "serial list schedule" in r.note
    ensure_feasible(p, r.solution)


def test_response_portfolio_with_a_slow_build_keeps_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from ortools.sat.python import cp_model

    p = _response(1500)
    monkeypatch.setattr(cp_model.CpModel, "new_fixed_size_interval_var",
                        _slow(cp_model.CpModel.new_fixed_size_interval_var))
    monkeypatch.setattr(cpsat, "CLOCK_EVERY", 10, raising=False)
    r = portfolio.solve_response(p, time_limit=1.0)
    assert r.runtime < 1.0 + 0.3
    assert r.status is Status.FEASIBLE and r.params["time_limit"] == 1.0
    ensure_feasible(p, r.solution)


@pytest.mark.untimed
def test_an_epoch_rule_keeps_back_time_for_the_scan_under_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock is asked between scans of the queue, and a scan with its pick can take
    tenths of a second at 10^5 jobs: the rule stops early enough that the scan under way
    and the fcfs rest end within the limit (here each pick is slowed to 0.2 s: a rule that
    looks at the clock only at the limit ends up to 0.2 s past it, this one 0.3 s before)."""
    from heuristics import kresource as hk

    monkeypatch.setattr(hk, "pick", _slow(hk.pick, 0.2))
    p = _pairs(2000)
    r = hk.solve_unc_bb(p, time_limit=2.0)
    assert r.status is Status.FEASIBLE and not kresource.check(p, r.solution)
    assert r.runtime <= 2.0, r.runtime

