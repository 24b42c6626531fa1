"""Every time-limit path of the exact solvers reads its limit one way
(``models.deadline.limit_of``): a limit over ``MAX_SECONDS`` is no limit (no thread wait,
clock or solver limit overflows), a tiny one is an honest stop, and a limit that is not
a finite number >= 0 is refused naming ``time_limit``."""

from __future__ import annotations

import json
import math

import pytest

from models import mip, portfolio, task_mapping
from models.deadline import MAX_SECONDS, Deadline, limit_of
from models.kresource import ilp as kilp
from sim.problems import task_mapping as tm
from sim.problems.kresource import EpochProblem
from sim.result import Status


def test_a_limit_beyond_the_maximum_is_no_limit():
    assert limit_of(MAX_SECONDS) == MAX_SECONDS
    assert limit_of(MAX_SECONDS * 10) is None
    assert limit_of(1e300) is None
    assert limit_of(0) == 0.0
    assert Deadline(1e10).left() is None


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1.0, "ten", True, [1]])
def test_a_limit_that_is_not_a_finite_number_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="time_limit must be a finite number of seconds"):
        limit_of(bad)


@pytest.mark.parametrize("backend", mip.BACKENDS)
def test_a_huge_limit_on_every_backend_solves_without_a_thread_error(backend, tmp_path,
                                                                      capfd):
    """``--time-limit 1e10`` gave ``OverflowError: timestamp out of range`` tracebacks
    from the watchdog's and the worker's thread waits, and exit 0."""
    from sim.cli import main

    path = tmp_path / "tm.json"
    path.write_text(json.dumps(tm.random_problem(4, 3, 1, sizes=(1, 2)).to_dict()))
    code = main(["solve", str(path), "--solver", "ilp", "--backend", backend,
                 "--time-limit", "1e10"])
    out, err = capfd.readouterr()
    assert code == 0, err
    assert "Traceback" not in err and "OverflowError" not in err
    assert "status: OPTIMAL" in out


def test_a_huge_limit_in_a_combination_and_in_kresource():
    p = tm.random_problem(4, 3, 2, sizes=(1,))
    assert portfolio.solve(p, members=("cpsat", "cbc"), time_limit=1e12).status \
        is Status.OPTIMAL
    e = EpochProblem((10, 10), ((3, 4), (5, 5), (6, 2)))
    assert kilp.solve_epochs(e, time_limit=1e15, backend="cbc").status is Status.OPTIMAL


@pytest.mark.parametrize("backend", mip.BACKENDS)
def test_a_tiny_limit_is_an_honest_stop(backend):
    p = tm.random_problem(16, 14, 7, objective="max")
    r = task_mapping.solve_ilp(p, time_limit=1e-300, backend=backend)
    assert r.status in (Status.FEASIBLE, Status.UNKNOWN)


def test_a_combination_refuses_a_nan_limit_by_name():
    p = tm.random_problem(4, 3, 2, sizes=(1,))
    with pytest.raises(ValueError, match="time_limit must be a finite number"):
        portfolio.solve(p, members=("cpsat", "cbc"), time_limit=math.nan)
