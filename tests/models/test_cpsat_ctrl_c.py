"""Ctrl-C during a CP-SAT stage: CP-SAT stops with its best answer, the Ctrl-C is
recorded (``models.interrupt``), every budget made before it is over, so a portfolio runs
no further stage, and ``schedsearch solve`` answers at once, saying so."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from models import interrupt
from models.deadline import Deadline

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "instances" / "data" / "slack_snapshots" / \
    "kth-1997-02-remove-13402954-k29.json"


def _hard_model():
    """A 400-item, 10-constraint 0/1 knapsack CP-SAT does not prove in a minute."""
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    r = random.Random(0)
    b = [m.new_bool_var(f"b{i}") for i in range(400)]
    for _ in range(10):
        w = [r.randint(1, 1000) for _ in range(400)]
        m.add(sum(w[i] * b[i] for i in range(400)) <= sum(w) // 4)
    m.maximize(sum(r.randint(1, 1000) * b[i] for i in range(400)))
    return m


def test_ctrl_c_stops_cp_sat_keeps_its_answer_and_ends_every_older_budget() -> None:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 60.0
    solver.parameters.num_workers = 1
    before = interrupt.count()
    budget = Deadline(600.0)
    unlimited = Deadline(None)
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    t = time.perf_counter()
    timer.start()
    status = interrupt.run_cpsat(solver, _hard_model())
    took = time.perf_counter() - t
    assert status == cp_model.FEASIBLE and took < 30.0  # not CP-SAT's 60 s
    assert interrupt.count() == before + 1 and interrupt.happened()
    assert budget.expired() and budget.solver_time() == 0.0 and budget.left() == 0.01
    assert unlimited.expired() and unlimited.left() == 0.01
    assert not Deadline(600.0).expired()  # a budget made after it is whole
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.timed
def test_ctrl_c_in_the_cp_sat_stage_of_cpsat_ti_runs_no_mip_stage() -> None:
    """The time-indexed portfolio's CP-SAT stage does not prove this snapshot; a Ctrl-C
    there answers with CP-SAT's schedule instead of going on to the MIP for the rest of
    the minute."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "solve", str(SNAPSHOT), "--solver", "cpsat+ti",
         "--time-limit", "60", "--json"], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(6.0)  # imports, then CP-SAT's share (30 of the 60 s)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=40)
    answered = time.monotonic() - sent
    assert proc.returncode == 0, err
    d = json.loads(out)
    assert d["status"] in ("FEASIBLE", "OPTIMAL") and d["solution"] is not None
    assert "Ctrl-C" in d["note"]
    assert answered < 15.0, answered
