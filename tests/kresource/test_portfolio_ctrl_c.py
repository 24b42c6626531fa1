"""A Ctrl-C ends the K-resource response portfolio after the stage it stopped: no later
stage (the time-indexed ILP, the LP bound, the probes) starts, with or without a limit."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from models import interrupt
from models.kresource import portfolio
from sim.problems.generate import instance
from sim.registry import load_problem
from sim.result import Status


@pytest.fixture
def fresh_ctrl_c(monkeypatch):
    """The process's Ctrl-C record as if none had happened (restored afterwards)."""
    monkeypatch.setattr(interrupt, "_COUNT", [interrupt.count()])
    monkeypatch.setattr(interrupt, "_HAPPENED", threading.Event())


@pytest.mark.parametrize("time_limit", [20.0, None])
def test_a_ctrl_c_in_the_short_cp_sat_stage_starts_no_further_stage(
        monkeypatch, fresh_ctrl_c, time_limit):
    _, pb = load_problem(instance("kresource_response", 3, n=12, K=2))
    real = portfolio.cpsat.solve_response
    calls = []

    def stopped_by_ctrl_c(problem, **kw):  # the stage's answer, then the Ctrl-C recorded
        calls.append(kw)
        r = real(problem, **{**kw, "time_limit": 0.2})
        interrupt._record()
        return dataclasses.replace(r, status=Status.FEASIBLE) if r.solution else r

    def must_not_run(*a, **kw):
        raise AssertionError("a stage started after the Ctrl-C")

    monkeypatch.setattr(portfolio.cpsat, "solve_response", stopped_by_ctrl_c)
    monkeypatch.setattr(portfolio.ilp, "solve_response", must_not_run)
    monkeypatch.setattr(portfolio.bounds, "response_bound", must_not_run)
    r = portfolio.solve_response(pb, time_limit=time_limit)
    assert len(calls) == 1
    assert r.status is Status.FEASIBLE and r.solution is not None
