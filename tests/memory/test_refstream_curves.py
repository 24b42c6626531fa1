"""Curves of the synthetic streams: the hot/cold closed form and the stack-model twin."""

from __future__ import annotations

import numpy as np
import pytest

from instances.refstreams import hot_cold, hot_cold_curve, phases, stack_model
from sim.memory.lru import miss_rate_curve


def test_hot_cold_curve_matches_the_lru_curve_of_its_stream():
    n = 120_000
    for F, hot, p in ((800, 40, 0.95), (500, 150, 0.7)):
        exact = miss_rate_curve(hot_cold(F, n, hot=hot, p_hot=p, seed=3), skip=n // 4)
        model = hot_cold_curve(F, hot, p)
        assert model.size == F + 1 and model[0] == 1.0 and model[-1] == 0.0
        assert np.all(np.diff(model) <= 0)
        assert np.abs(model[: exact.size] - exact).max() < 0.01


def test_hot_cold_curve_takes_a_fraction_of_a_block_and_checks_fields():
    m = hot_cold_curve(100, 0.25, 0.99)
    assert m[1] < 0.05  # a quarter-block hot set fits in one block
    with pytest.raises(ValueError, match="hot"):
        hot_cold_curve(100, 0, 0.9)
    with pytest.raises(ValueError, match="p_hot"):
        hot_cold_curve(100, 10, 1.5)


def test_stack_model_twin_has_the_curve_but_not_the_phases():
    n = 100_000
    src = phases(400, n, working_set=80, phase_length=4000, seed=2)
    m = miss_rate_curve(src, skip=n // 4)
    twin = stack_model(m, n, seed=1)
    mt = miss_rate_curve(twin, skip=n // 4)
    k = min(m.size, mt.size)
    assert np.abs(m[:k] - mt[:k]).max() < 0.01
    assert stack_model(m, 1000, seed=1).tolist() == stack_model(m, 1000, seed=1).tolist()
    with pytest.raises(ValueError, match="curve"):
        stack_model(np.array([0.5, 0.7]), 10)


def test_case_study_curves_fit_the_papers_table_2():
    from sim.experiments.suh.casestudy import (
        LETTERS,
        PAPER_T2,
        SCHEDULES,
        fit_loss,
        job_curve,
        sched_name,
        steady_rates,
    )

    curves = [job_curve(L) for L in LETTERS]
    assert [c.size for c in curves] == [round(v * 256) for v in (6.2, 22.3, 76.2, 9.9, 83.0,
                                                                 1.6)]
    assert fit_loss(curves, 1) < 0.3  # about 12% per cell over the 18 numbers
    r = steady_rates(curves)[16]
    names = [sched_name(s) for s in SCHEDULES]
    # at 16 MB the paper's worst and best schedules are ours too (not fitted)
    assert names[int(r.argmax())] == PAPER_T2[16][2]
    assert names[int(r.argmin())] == PAPER_T2[16][4]
