"""The load calibration on the compiled engine and with a warm-up.

The compiled engine gives the Python engine's FF-EASY schedule, so a calibration on it
visits the same rates and reaches the same rate, queue and halves; the Figures 2/3 units
run on it give the same response times. The warm-up window starts at the submit of the
job of rank ``skip``; its averages are checked against a second-by-second count of the
waiting jobs. Times are integer seconds.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.compiled

from heuristics.backfill import EASY  # noqa: E402
from instances.kresource import KResourceSpec, generate  # noqa: E402
from sim.batch.calibrate import (  # noqa: E402
    calibrate,
    queue_average,
    queue_halves,
    warmup_jobs,
)
from sim.batch.machine import simulate  # noqa: E402


def _same_but_engine(a: dict, b: dict) -> None:
    assert a.pop("engine") == "python" and b.pop("engine") == "compiled"
    assert a == b


@pytest.mark.parametrize("K, dist, target, kwargs", [
    (2, "uniform", 32, {}),
    (4, "exponential", 16, {"warmup": 0.25}),
    (2, "uniform", 4, {"stationarity": 0.15}),
])
def test_calibration_gives_the_same_rate_and_queue_on_both_engines(K, dist, target, kwargs):
    spec = KResourceSpec(K=K, dist=dist, jobs=1500 if not kwargs.get("stationarity") else 3000,
                         seed=4)
    try:
        py = calibrate(spec, target, **kwargs).to_dict()
    except ValueError as exc:  # a refusal must be the same refusal
        with pytest.raises(ValueError, match="calibrate:") as other:
            calibrate(spec, target, engine="compiled", **kwargs)
        assert str(other.value) == str(exc)
        return
    co = calibrate(spec, target, engine="compiled", **kwargs).to_dict()
    assert py["iterations"] >= 2
    _same_but_engine(py, co)


def _brute_queue(start: np.ndarray, submit: np.ndarray, t0: int, t1: int) -> float:
    """Mean over the integer seconds t0 .. t1 - 1 of the jobs submitted by t and not
    started by t (a job arriving and starting at the same second does not count)."""
    ts = np.arange(t0, t1)
    waiting = ((submit[None, :] <= ts[:, None]) & (start[None, :] > ts[:, None])).sum(axis=1)
    return float(waiting.mean())


def test_warmup_window_averages_match_a_second_by_second_count():
    spec = KResourceSpec(K=2, jobs=400, seed=2, rate=0.2)
    w = generate(spec)
    s = simulate(w, EASY(), engine="compiled")
    submit = np.array([j.submit for j in w.jobs])
    skip = warmup_jobs(len(w.jobs), 0.3)
    assert skip == 120
    t0, t1 = int(submit[skip]), int(submit.max())
    assert queue_average(s.start, submit, skip=skip) == pytest.approx(
        _brute_queue(s.start, submit, t0, t1))
    q1, q2 = queue_halves(s.start, submit, skip)
    tm = (t0 + t1) // 2
    if (t0 + t1) % 2 == 0:  # a whole-second midpoint: each half is a sum of seconds
        assert q1 == pytest.approx(_brute_queue(s.start, submit, t0, tm))
        assert q2 == pytest.approx(_brute_queue(s.start, submit, tm, t1))
    # the whole window again, and the warm-up moves it
    assert queue_average(s.start, submit) == pytest.approx(
        _brute_queue(s.start, submit, int(submit[0]), t1))
    assert queue_average(s.start, submit, skip=skip) != queue_average(s.start, submit)
    with pytest.raises(ValueError, match="warm-up"):
        queue_halves(s.start, submit, len(submit))


@pytest.mark.parametrize("bad", [-0.1, 0.95, True, "0.2"])
def test_bad_warmup_or_engine_is_refused_by_name(bad):
    spec = KResourceSpec(K=2, jobs=200, seed=1)
    with pytest.raises(ValueError, match="field 'warmup'"):
        calibrate(spec, 4, warmup=bad)
    with pytest.raises(ValueError, match="field 'engine'"):
        calibrate(spec, 4, engine="fast")


def test_calibrated_rate_reproduces_the_warmup_queue():
    spec = KResourceSpec(K=2, jobs=1500, seed=3)
    c = calibrate(spec, 24, warmup=0.2, engine="compiled")
    assert c.warmup == 0.2 and abs(c.queue / 24 - 1) <= 0.05
    w = generate(replace(spec, rate=c.rate))
    s = simulate(w, EASY())
    submit = np.array([j.submit for j in w.jobs])
    assert queue_average(s.start, submit, skip=300) == pytest.approx(c.queue)
    assert queue_halves(s.start, submit, 300) == pytest.approx((c.first_half, c.second_half))


def test_fig2_units_are_the_same_on_both_engines(tmp_path):
    from sim.experiments.leinberger.figs import FULL, fig2

    cfg = dict(FULL, jobs=800, seeds=1, K=[2], dists=["uniform"], queues=[16],
               scalings=["G-b"], opt_easy=False, warmup=0.2)
    runs = {}
    for engine in ("python", "compiled"):
        store = tmp_path / f"store-{engine}"
        fig2(tmp_path / f"out-{engine}", True, dict(cfg, engine=engine), store=store,
             workers=1)
        (unit,) = [json.loads(f.read_text()) for f in store.glob("*.json")]
        runs[engine] = unit
    py, co = runs["python"], runs["compiled"]
    assert py["calibration"]["rate"] == co["calibration"]["rate"]
    assert py["calibration"]["warmup"] == 0.2
    assert set(py["policies"]) == set(co["policies"]) == {
        "FF-EASY", "BL-EASY", "BB-EASY", "BB-EASY-nofull", "FF-CONS"}
    for lab, v in py["policies"].items():
        assert v["engine"] == "python" and co["policies"][lab]["engine"] == "compiled"
        assert (v["art"], v["wart"]) == (co["policies"][lab]["art"],
                                         co["policies"][lab]["wart"])


def test_compiled_calibration_runs_every_baseline_on_the_compiled_engine(monkeypatch):
    import sim.batch.fast.run as fast

    calls = []
    real = fast.simulate_compiled

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(fast, "simulate_compiled", counting)
    c = calibrate(KResourceSpec(K=2, jobs=600, seed=5), 8, engine="compiled")
    assert len(calls) == c.iterations >= 2
    calls.clear()
    calibrate(KResourceSpec(K=2, jobs=600, seed=5), 8)
    assert calls == []


def test_generate_kresource_calibrates_with_a_warmup_on_the_compiled_engine(tmp_path, capsys):
    from sim.cli import main

    spec = KResourceSpec(K=2, jobs=1500, seed=3)
    c = calibrate(spec, 24, warmup=0.2)
    out = tmp_path / "w.kswf"
    assert main(["generate", "kresource", "--K", "2", "--jobs", "1500", "--seed", "3",
                 "--queue", "24", "--stationarity", "0", "--warmup", "0.2",
                 "--engine", "compiled", "--out", str(out)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["rate"] == c.rate and info["warmup"] == 0.2
    assert info["achieved_queue"] == pytest.approx(c.queue)
    assert main(["generate", "kresource", "--K", "2", "--rate", "0.1", "--warmup", "0.2",
                 "--out", str(tmp_path / "x.kswf")]) == 2
    assert "--warmup applies only to the calibration" in capsys.readouterr().err
    assert main(["generate", "kresource", "--K", "2", "--rate", "0.1", "--engine", "compiled",
                 "--out", str(tmp_path / "y.kswf")]) == 2
    assert "--engine applies only to the calibration" in capsys.readouterr().err
    assert not (tmp_path / "y.kswf").exists()
