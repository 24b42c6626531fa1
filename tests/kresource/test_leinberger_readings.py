"""AMB-1.10 readings of the Leinberger study: the size-runtime coupling and the WART
weight (sim/experiments/leinberger/readings.py)."""

from dataclasses import replace

import numpy as np
import pytest

from instances.kresource import KResourceSpec, generate, job_sizes, size_distribution
from sim.batch.machine import simulate
from sim.experiments.leinberger import figs
from sim.experiments.leinberger.readings import Reading, job_weights, metrics
from sim.registry import make_policy


@pytest.mark.parametrize("field,value", [("coupling", "strong"), ("weight", "area"),
                                         ("weight", None)])
def test_an_unknown_reading_is_refused_naming_its_field(field, value):
    with pytest.raises(ValueError, match=f"field '{field}'"):
        Reading(**{field: value})


def _long_fraction(spec: KResourceSpec) -> float:
    n = np.arange(1, spec.P + 1)
    return float((size_distribution(spec) * (spec.p0 + (spec.p1 - spec.p0) * (n - 1)
                                             / (spec.P - 1))).sum())


def test_couplings_keep_the_fraction_of_long_jobs_and_change_only_the_slope():
    base = KResourceSpec(K=2, jobs=50)
    lin, weak, none = (Reading(coupling=c).spec(base) for c in ("linear", "weak", "none"))
    assert (lin.p0, lin.p1) == (0.1, 0.9)
    assert none.p0 == none.p1
    assert weak.p1 - weak.p0 == pytest.approx(0.2)
    for s in (weak, none):
        assert _long_fraction(s) == pytest.approx(_long_fraction(lin))
    # the runtimes follow the reading: no size-runtime correlation without coupling
    w_lin = generate(replace(lin, jobs=20000))
    w_none = generate(replace(none, jobs=20000))
    big = job_sizes(replace(lin, jobs=20000)) >= 32
    assert w_lin.columns().runtime[big].mean() > 3 * w_none.columns().runtime[big].mean()


def test_weights_mean_is_sum_over_k_and_size_is_max_under_g_b():
    spec = KResourceSpec(K=4, dist="exponential", jobs=400, seed=3)
    w = generate(spec)
    c = w.columns()
    sizes = job_sizes(spec)
    assert np.array_equal(c.demand.max(axis=1), sizes * spec.resolution)
    wt = {k: job_weights(c.demand, w.capacity, c.runtime, sizes, spec.P, k)
          for k in ("sum", "mean", "max", "size")}
    assert np.allclose(wt["mean"] * 4, wt["sum"])
    assert np.allclose(wt["size"], wt["max"])
    ga = replace(spec, scaling="G-a")
    g = generate(ga)
    wa = job_weights(g.columns().demand, g.capacity, g.columns().runtime, job_sizes(ga),
                     ga.P, "size")
    wm = job_weights(g.columns().demand, g.capacity, g.columns().runtime, job_sizes(ga),
                     ga.P, "max")
    assert not np.allclose(wa, wm)  # under G-a the size is not the largest requirement


def test_the_sum_weight_is_the_committed_figure_3_metric():
    spec = KResourceSpec(K=2, jobs=600, seed=2, rate=0.02)
    w = generate(spec)
    s = simulate(w, make_policy("easy", select="bb"))
    m = metrics(spec, w, s.end, skip=150)
    art, wart = figs._metrics(w, s, skip=150)
    assert m["art"] == pytest.approx(art, rel=1e-12)
    assert m["wart_sum"] == pytest.approx(wart, rel=1e-12)
    # the part of each metric no policy can change: every job started on arrival
    assert 0 < m["floor_art"] < m["art"]
    for k in ("sum", "mean", "max", "size"):
        assert 0 < m[f"floor_wart_{k}"] < m[f"wart_{k}"]
    c = w.columns()
    assert m["floor_art"] == pytest.approx(c.runtime[150:540].mean())


@pytest.mark.parametrize("argv,msg", [(["weights", "--K", "two"], "--K must be"),
                                      (["weights", "--seeds", "3"], "--seeds is"),
                                      (["coupling", "--seeds", "0"], "--seeds is")])
def test_bad_options_are_one_line_errors_with_exit_2(argv, msg, capsys, tmp_path):
    from sim.experiments.leinberger.readings import main

    assert main([*argv, "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())  # nothing computed
