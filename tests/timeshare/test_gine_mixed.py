"""The ``--scale`` option of ``sim.experiments.gine.mixed``: what it refuses, where it
writes, what the results record."""

from __future__ import annotations

import contextlib
import json
import sys

import pytest

from sim.experiments.gine import mixed


@pytest.mark.parametrize("value", ["0", "-0.5", "1.5", "nan", "inf", "0.05"])
def test_bad_scale_is_refused_naming_the_option(capsys, tmp_path, value):
    assert mixed.main(["--scale", value, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--scale" in err[0]
    assert not (tmp_path / "o").exists()  # refused before anything is written


def test_scale_names_its_own_directory(monkeypatch, tmp_path):
    monkeypatch.setattr(mixed, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(mixed, "PARTIAL_DIR", tmp_path / "partial")
    assert mixed.out_dir(1.0, 10) == tmp_path / "results" / "mixed"
    assert mixed.out_dir(0.01, 10) == tmp_path / "results" / "mixed-scale0.01"
    assert mixed.out_dir(0.01, 3) == tmp_path / "partial" / "csm-mixed-scale0.01"
    assert mixed.base(1.5, 0.01).tc_scale == mixed.base(1.5, 0.01).mem_scale == 0.01


@pytest.mark.compiled
def test_tiny_scaled_run_writes_where_it_should(monkeypatch, tmp_path, capsys):
    """A 1-seed run at scale 0.01 with 4 distributed jobs: a partial run in its own
    directory, calibrated at its scale, every point of the part run with that scale."""
    pytest.importorskip("numba")
    monkeypatch.setattr(mixed, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(mixed, "PARTIAL_DIR", tmp_path / "partial")
    monkeypatch.setattr(mixed, "JOBS", 4)
    calls = []

    def fake(c, make, seeds, iters, tol, engine="python"):  # the procedure is tested elsewhere
        calls.append((c.mem_load, c.class_mix, c.tc_scale, c.count_locals))
        return 3.0 * mixed.calibrate_mit(c), 1.0, [(3.0, 1.0)]

    monkeypatch.setattr(mixed, "calibrate_measured", fake)
    argv = ["--scale", "0.01", "--seeds", "1", "--parts", "mnod"]
    monkeypatch.setattr(sys, "argv", ["mixed.py", *argv])  # what the README records
    assert mixed.main() == 0
    out = tmp_path / "partial" / "csm-mixed-scale0.01"
    assert not (tmp_path / "results").exists()
    assert calls == [(1.0, "c", 0.01, False)]
    cal = json.loads((out / "calib_mit.json").read_text())
    assert set(cal) == {"1.0/c"}  # the key figs.Setup.mit reads at scale 0.01
    grid = json.loads((out / "mnod.json").read_text())
    assert len(grid) == 9
    for v in grid.values():
        cfg = json.loads(v["ident"])[0]
        assert (cfg["tc_scale"], cfg["mem_scale"], cfg["n_jobs"]) == (0.01, 0.01, 4)
        assert cfg["mit_s"] == pytest.approx(3.0 * mixed.calibrate_mit(
            mixed.base(1.0, 0.01, pdt=0.5, mfreq_ms=cfg["mfreq_ms"])))
        assert len(v["metrics"]["tasks_per_node"]) == 1
    readme = (out / "README.md").read_text()
    assert "PARTIAL run" in readme and "x 0.01 (scale 0.01" in readme
    assert "1 seeds" in readme and " ".join(argv) in readme
    assert f"at commit {mixed.commit()}" in readme


@pytest.mark.parametrize("value", [["50"], ["20", "20"], ["x"]])
def test_bad_mfreq_is_refused_naming_the_option(capsys, tmp_path, value):
    with pytest.raises(SystemExit) if value == ["x"] else contextlib.nullcontext():
        code = mixed.main(["--mfreq", *value, "--out", str(tmp_path / "o")])
        assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--mfreq" in err[-1]
    assert not (tmp_path / "o").exists()


@pytest.mark.compiled
def test_mfreq_subset_and_tpn_write_their_own_directory_and_cost(monkeypatch, tmp_path):
    """``--mfreq 20 1000`` names its directory; ``tpn`` runs RR at the calibration point
    with local tasks counted and not; ``cost.json`` records every point run."""
    pytest.importorskip("numba")
    monkeypatch.setattr(mixed, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(mixed, "PARTIAL_DIR", tmp_path / "partial")
    monkeypatch.setattr(mixed, "JOBS", 4)
    assert mixed.out_dir(0.05, 10, (20, 1000)) == (
        tmp_path / "results" / "mixed-scale0.05-mfreq20-1000")
    monkeypatch.setattr(mixed, "calibrate_measured", lambda c, make, seeds, iters, tol,
                        engine="python": (3.0 * mixed.calibrate_mit(c), 1.0, [(3.0, 1.0)]))
    argv = ["--scale", "0.01", "--seeds", "1", "--mfreq", "1000", "20", "--parts", "load1",
            "tpn"]
    monkeypatch.setattr(sys, "argv", ["mixed.py", *argv])
    assert mixed.main() == 0
    out = tmp_path / "partial" / "csm-mixed-scale0.01-mfreq20-1000"
    load1 = json.loads((out / "load1.json").read_text())
    assert sorted(load1) == sorted(f"{p}/m{f}" for p in ("rr", "pred", "csm")
                                   for f in (20, 1000))
    tpn = json.loads((out / "tpn.json").read_text())
    assert len(tpn) == 6
    for key, v in tpn.items():
        cfg = json.loads(v["ident"])[0]
        assert cfg["count_locals"] == key.endswith("/locals-counted")
        assert (cfg["mfreq_ms"], cfg["pdt"]) == (mixed.TPN_MFREQ, 0.5)
    cost = json.loads((out / "cost.json").read_text())
    assert set(cost) == {f"load1/{k}" for k in load1} | {f"tpn/{k}" for k in tpn}
    assert all(v["cpu_s"] >= 0 and " ".join(argv) in v["command"] for v in cost.values())
    readme = (out / "README.md").read_text()
    assert "mfreq grid 20, 1000 ms" in readme and "## tpn" in readme


@pytest.mark.parametrize("argv", [["--seed", "3"], ["--factor", "2"],
                                  ["--mixed", "1.0", "--engine", "python"],
                                  ["--mixed", "1.0", "--full"]])
def test_bench_mixed_options_act_or_are_refused(argv, capsys):
    """``gine.bench --mixed`` options without ``--mixed``, or ``--mixed`` with what it
    does not run, are refused by argparse (exit 2) before anything runs."""
    from sim.experiments.gine import bench

    with pytest.raises(SystemExit) as e:
        bench.main(argv)
    assert e.value.code == 2
    assert "--mixed" in capsys.readouterr().err.strip().splitlines()[-1]
