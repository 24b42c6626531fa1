"""One Student-t interval for every report, study and figure: exact at any number of
replications (no table that stops at some n, no normal approximation past it)."""

from __future__ import annotations

import math

import pytest

from sim.experiments.leinberger.figs import _t95
from sim.stats import mean_ci, t_quantile
from sim.timeshare import metrics

# two-sided 95% quantiles t_{0.975, df} (printed tables, 3 decimals)
_PRINTED = {11: 2.201, 29: 2.045, 40: 2.021, 60: 2.000, 120: 1.980}


@pytest.mark.parametrize("n", [12, 30, 41, 61, 121])
def test_every_interval_uses_t_with_n_minus_1_degrees_of_freedom(n):
    xs = [float(i % 7) for i in range(n)]
    mean = math.fsum(xs) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    want = _PRINTED[n - 1] * sd / math.sqrt(n)
    for got in (mean_ci(xs)[1], metrics.mean_ci(xs)[1], _t95(xs)[1]):
        assert got == pytest.approx(want, rel=5e-4)


def test_the_quantile_falls_to_the_normal_one():
    assert t_quantile(0.975, 10_000) == pytest.approx(1.960, abs=1e-3)
    assert t_quantile(0.975, 1e9) == pytest.approx(1.95996, abs=1e-4)


def test_fewer_than_two_values_have_no_interval():
    assert math.isnan(mean_ci([1.0])[1])
    assert math.isnan(metrics.mean_ci([1.0, math.nan])[1])
    assert math.isnan(_t95([3.0])[1])
