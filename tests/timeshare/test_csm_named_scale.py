"""The named ``--scale 0.1`` configuration of the CSM figures: where it writes, what it records."""

from __future__ import annotations

import argparse
import json

import pytest

from sim.experiments.gine import figs as csm
from sim.timeshare.workload import CSMConfig


def _setup(monkeypatch, tmp_path, figure, *argv):
    monkeypatch.setattr(csm, "FULL_DIR", tmp_path / "full")
    monkeypatch.setattr(csm, "QUICK_DIR", tmp_path / "quick")
    ap = argparse.ArgumentParser()
    ap.add_argument("figure")
    for opt in ("--seeds", "--jobs"):
        ap.add_argument(opt, type=int)
    ap.add_argument("--scale", type=float)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--mfreq", type=float, nargs="+")
    ap.add_argument("--pdt", type=float, nargs="+")
    return csm.Setup(ap.parse_args([figure, *argv]))


@pytest.mark.parametrize("figure, argv, full, suffix", [
    ("fig5-6", (), True, ""),                        # the 0.01 reproduction
    ("fig5-6", ("--scale", "0.1"), True, "-scale0.1"),  # the named configuration
    ("fig5-6", ("--scale", "0.1", "--seeds", "5"), True, "-scale0.1"),
    ("fig5-6", ("--scale", "0.1", "--seeds", "2"), False, ""),  # fewer seeds: partial
    ("fig5-6", ("--scale", "0.1", "--jobs", "300"), False, ""),
    ("fig5-6", ("--scale", "0.05",), False, ""),      # not a named scale
    ("fig8-9", ("--scale", "0.1"), False, ""),        # no named 0.1 config for fig8-9
    ("fig5-6", ("--scale", "1"), True, "-scale1"),    # the paper's sizes
    ("fig5-6", ("--scale", "1", "--seeds", "2"), False, ""),
    ("fig5-6", ("--seeds", "10"), False, ""),         # not the committed 3 seeds
    ("calib", (), True, ""),                          # its committed 10 seeds by default
    ("calib", ("--seeds", "3"), False, ""),           # fewer: partial, never over calib.md
    ("fig8-9", ("--seeds", "10"), True, ""),
    ("fig8-9", ("--seeds", "3"), False, ""),
])
def test_named_scale_resolves_to_full_or_partial(monkeypatch, tmp_path, figure, argv, full,
                                                 suffix):
    s = _setup(monkeypatch, tmp_path, figure, *argv)
    assert (s.full, s.suffix) == (full, suffix)
    assert s.out == (tmp_path / "full" if full else tmp_path / "quick")
    head = s.header("t")
    assert f"scaled by {s.scale}" in head
    assert ("full configuration" in head) == full


def test_named_scale_results_go_beside_the_default_ones(monkeypatch, tmp_path):
    s = _setup(monkeypatch, tmp_path, "fig5-6", "--scale", "0.1")
    (s.out / "fig5-6.json").write_text("{}")  # the 0.01 results stay untouched
    cfg = CSMConfig(n_nodes=4, n_jobs=6, mem_pages=4096, mest=1024, tc_scale=0.002,
                    mem_scale=0.05, small_sizes=(1, 2), large_sizes=(4,), mfreq_ms=50.0)
    res = csm.run_grid(s, "fig5-6", [("rr/pdt0.5", cfg, "rr", {})],
                       metrics=("mean_pg_fault", "slowdown_local"), seeds=1)
    saved = json.loads((s.out / "fig5-6-scale0.1.json").read_text())
    assert saved["rr/pdt0.5"]["metrics"] == res["rr/pdt0.5"]
    assert res["rr/pdt0.5"]["slowdown_local"][0] >= 1
    assert json.loads((s.out / "fig5-6.json").read_text()) == {}


def test_calibration_is_keyed_by_scale(monkeypatch, tmp_path):
    """A named scale calibrates its own mit factor; the 0.01 entry is not reused for it."""
    s = _setup(monkeypatch, tmp_path, "fig5-6", "--scale", "1")
    calls = []

    def fake(base, make, seeds, iters, tol, engine="python"):
        calls.append(base.tc_scale)
        return 2.0 * csm.calibrate_mit(base), 0.7, []

    monkeypatch.setattr(csm, "calibrate_measured", fake)
    (s.out / "calib_mit.json").write_text(json.dumps({"0.7/b": {
        "mit_s": 5.0, "measured": 0.7, "eq5_mit_s": 1.0, "trace": [], "seeds": [101]}}))
    c = CSMConfig(n_jobs=1000, tc_scale=1.0, mem_scale=1.0, mem_load=0.7, class_mix="b")
    mit = s.mit(c)
    assert calls == [1.0]                       # calibrated at scale 1, not the 0.01 entry
    assert mit == pytest.approx(2.0 * csm.calibrate_mit(c))
    cache = json.loads((s.out / "calib_mit.json").read_text())
    assert set(cache) == {"0.7/b", "0.7/b@scale1"}


def test_calibration_on_other_seeds_is_redone(monkeypatch, tmp_path):
    """A cached 0.01 entry calibrated on other seeds than CALIB_SEEDS is calibrated again,
    on CALIB_SEEDS, and the entry records its seeds, commit and command."""
    s = _setup(monkeypatch, tmp_path, "fig8-9")
    calls = []

    def fake(base, make, seeds, iters, tol, engine="python"):
        calls.append(tuple(seeds))
        return 2.0 * csm.calibrate_mit(base), 1.0, []

    monkeypatch.setattr(csm, "calibrate_measured", fake)
    (s.out / "calib_mit.json").write_text(json.dumps({"1.0/a": {
        "mit_s": 5.0, "measured": 1.0, "eq5_mit_s": 1.0, "trace": [], "seeds": [101]}}))
    c = CSMConfig(n_jobs=1000, tc_scale=0.01, mem_scale=0.01, mem_load=1.0, class_mix="a")
    assert s.mit(c) == pytest.approx(2.0 * csm.calibrate_mit(c))
    assert calls == [csm.CALIB_SEEDS] and len(csm.CALIB_SEEDS) == 30
    entry = json.loads((s.out / "calib_mit.json").read_text())["1.0/a"]
    assert entry["seeds"] == list(csm.CALIB_SEEDS)
    assert entry["commit"] and entry["command"]
    assert s.mit(c) == pytest.approx(2.0 * csm.calibrate_mit(c)) and len(calls) == 1


def test_calibration_seeds_per_key(monkeypatch, tmp_path):
    """Thirty seeds at every key but mem_load 1.0 at the named scales (three)."""
    s = _setup(monkeypatch, tmp_path, "fig5-6")

    def cfg(load, mix, scale):
        return CSMConfig(n_jobs=1000, tc_scale=scale, mem_scale=scale, mem_load=load,
                         class_mix=mix)

    assert s.calib_seeds(cfg(0.7, "b", 1.0)) == csm.CALIB_SEEDS
    assert s.calib_seeds(cfg(0.7, "b", 0.1)) == csm.CALIB_SEEDS
    assert s.calib_seeds(cfg(1.5, "a", 0.01)) == csm.CALIB_SEEDS
    assert s.calib_seeds(cfg(1.0, "a", 1.0)) == (101, 102, 103)
    assert s.calib_seeds(cfg(1.0, "a", 0.1)) == (101, 102, 103)


@pytest.mark.parametrize("figure, scale, seeds", [
    ("calib", None, 10), ("fig12", None, 10), ("gang", None, 10), ("fig7", None, 3),
    ("fig5-6", "0.1", 5),
    ("fig5-6", "1", 10)])
def test_a_figures_default_seeds_are_its_committed_files(monkeypatch, tmp_path, figure,
                                                         scale, seeds):
    s = _setup(monkeypatch, tmp_path, figure, *(("--scale", scale) if scale else ()))
    assert (s.seeds, s.full) == (seeds, True)
