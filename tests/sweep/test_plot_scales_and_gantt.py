"""Plots: a log metric axis where the values span more than two decades (symlog where
some are zero or negative, said in the label), and the Gantt chart zoomed to a time
window with the window, the jobs drawn and the processors in its title."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from sim.sweep import plots  # noqa: E402


def test_the_log_decision_on_synthetic_data():
    assert plots.y_scale([1.0, 50.0, 99.0]).kind == "linear"
    assert plots.y_scale([1.0, 50.0, 101.0]).kind == "log"
    mixed = plots.y_scale([0.0, 0.5, 800.0])
    assert mixed.kind == "symlog" and mixed.linthresh == 0.5
    assert plots.y_scale([-2.0, 1.0, 3.0], "log").kind == "symlog"
    assert plots.y_scale([1.0, 1e6], "linear").kind == "linear"
    assert plots.y_scale([0.0, 0.0], "log").kind == "linear"
    assert plots.y_scale([float("nan"), 2.0, 3000.0]).kind == "log"
    assert plots.y_scale([2.0, 3000.0], lows=[-1.0, 2900.0]).kind == "symlog"
    assert "log scale" in mixed.label("mean wait [s]")
    assert plots.YScale().label("mean wait [s]") == "mean wait [s]"
    with pytest.raises(ValueError, match="expected auto, log or linear"):
        plots.y_scale([1.0], "logarithmic")


def test_back_to_back_jobs_never_count_twice():
    _, busy = plots.busy_processors(np.array([0, 10]), np.array([10, 20]), np.array([16, 16]))
    assert busy.max() == 16


def _rows(values):
    return [{"procs": pr, "label": "fcfs", "policy": "fcfs", "seed": 0, "avg_wait": v,
             "key": str(pr)} for pr, v in zip((16, 32, 64), values, strict=True)]


def test_plot_metric_axis_follows_the_range(tmp_path, monkeypatch):
    seen = []
    real = plots.save

    def spy(fig, out):
        ax = fig.axes[0]
        seen.append((ax.get_yscale(), ax.get_ylabel(), len(ax.lines[0].get_xdata())))
        real(fig, out)

    monkeypatch.setattr(plots, "save", spy)
    plots.plot_metric(_rows([1.0, 10.0, 5000.0]), "avg_wait", "procs", tmp_path / "a.png")
    plots.plot_metric(_rows([0.0, 10.0, 5000.0]), "avg_wait", "procs", tmp_path / "b.png")
    plots.plot_metric(_rows([1.0, 10.0, 50.0]), "avg_wait", "procs", tmp_path / "c.png")
    plots.plot_metric(_rows([1.0, 10.0, 5000.0]), "avg_wait", "procs", tmp_path / "d.png",
                      yscale="linear")
    assert [s[0] for s in seen] == ["log", "symlog", "linear", "linear"]
    assert seen[0][1].endswith("log scale") and "linear within" in seen[1][1]
    assert all(s[2] == 3 for s in seen)  # the zero is drawn, not dropped


def test_a_gap_that_cannot_be_computed_is_said_not_drawn_as_zero(tmp_path, monkeypatch):
    rows = [{"procs": pr, "label": lab, "policy": lab, "seed": 0, "key": f"{pr}{lab}",
             "avg_wait": v} for pr, b, o in ((16, 0.0, 5.0), (32, 10.0, 5.0))
            for lab, v in (("fcfs", b), ("easy", o))]
    seen = []
    monkeypatch.setattr(plots, "save", lambda fig, out: seen.append(fig.axes[0]))
    plots.plot_gap(rows, "avg_wait", "fcfs", "procs", tmp_path / "g.png")
    ax = seen[0]
    heights = [b.get_height() for b in ax.patches]
    assert np.isnan(heights[0]) and heights[1] == pytest.approx(-50.0)
    assert [t.get_text() for t in ax.texts] == ["n/a"]


def test_the_window_selects_the_jobs_running_in_it():
    start = np.array([0, 10, 20, 30, 40, 50])
    end = np.array([5, 25, 20, 60, 45, 55])
    got = np.flatnonzero(plots.in_window(start, end, 12.0, 42.0)).tolist()
    assert got == [1, 2, 3, 4]  # job 0 ended before, job 5 starts after; 2 has no length
    lo, hi, auto = plots.gantt_window(start, end, 0.0, (12.0, 42.0), max_jobs=10)
    assert (lo, hi, auto) == (12.0, 42.0, False)
    with pytest.raises(ValueError, match="4 jobs run in it, more than --gantt-jobs 3"):
        plots.gantt_window(start, end, 0.0, (12.0, 42.0), max_jobs=3)
    lo, hi, auto = plots.gantt_window(start, end, 0.0, None, max_jobs=3)
    assert auto and (lo, hi) == (0.0, 30.0)
    assert plots.in_window(start, end, lo, hi).sum() == 3
    assert plots.gantt_window(start, end, 0.0, None, max_jobs=6) == (0.0, 60.0, False)


def test_gantt_title_carries_the_window_jobs_and_processors():
    t = plots._gantt_title({"label": "easy", "workload": "kth"}, 3600.0, 7200.0, 0.0,
                           12, 500, 100, auto=True)
    assert "easy on kth, 100 processors" in t
    assert "12 of 500 jobs" in t and "3600-7200 s (1-2 h)" in t
    assert "zoomed automatically" in t


ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("gantt")
    spec = {"version": 1, "name": "gantt", "seeds": [0], "procs": [16],
            "metrics": ["avg_wait"],
            "workloads": [{"name": "syn", "synthetic": {"n_jobs": 60, "capacity": 16,
                                                         "load": [0.9]}}],
            "policies": [{"name": "easy"}]}
    (d / "s.json").write_text(json.dumps(spec))
    p = cli("sweep", "s.json", "--out", "r.sqlite", "--jobs", "1", "--quiet", cwd=d)
    assert p.returncode == 0, p.stderr
    return d


def _drawn(store, monkeypatch, **kw):
    from sim.cli.sweep import _cell
    from sim.sweep.store import Store

    with Store.open(str(store / "r.sqlite"), create=False) as st:
        key = next(iter(st.rows(None)))["key"]
    seen = []
    monkeypatch.setattr(plots, "save", lambda fig, out: seen.append(
        (fig.axes[0].get_title(), len(fig.axes[0].collections), fig.axes[2].get_xlim())))
    plots.plot_schedule(_cell(str(store / "r.sqlite"), key), store / "g.png", **kw)
    return seen[0]


def test_a_large_schedule_is_zoomed_to_its_first_jobs(store, monkeypatch):
    title, bars, _ = _drawn(store, monkeypatch, max_jobs=20)
    assert "20 of 60 jobs" in title and "zoomed automatically" in title
    assert "16 processors" in title and 20 <= bars  # a job split over lanes: more bars
    title, _, _ = _drawn(store, monkeypatch, max_jobs=None)
    assert "60 of 60 jobs" in title and "zoomed" not in title


def test_a_window_draws_only_its_jobs(store, monkeypatch):
    title, _, xlim = _drawn(store, monkeypatch, window=(3600.0, 7200.0), max_jobs=None)
    assert "3600-7200 s (1-2 h)" in title and "of 60 jobs" in title
    assert xlim == pytest.approx((1.0, 2.0))
    k = int(title.split("\n")[1].split(" of ")[0])
    assert 0 < k < 60


def test_cli_window_and_its_refusals(store):
    from sim.sweep.store import Store

    with Store.open(str(store / "r.sqlite"), create=False) as st:
        key = next(iter(st.rows(None)))["key"]
    p = cli("report", "r.sqlite", "--gantt", key[:8], "--window", "0:3600", "--out", "w",
            cwd=store)
    assert p.returncode == 0, p.stderr
    assert (store / "w" / f"schedule_{key[:8]}.png").stat().st_size > 1000
    for args, msg in ((["--window", "0:3600"], "only with --gantt"),
                      (["--gantt", key[:8], "--window", "9:1"], "START < END"),
                      (["--gantt", key[:8], "--window", "0:1e9", "--gantt-jobs", "5"],
                       "more than --gantt-jobs 5"),
                      (["--gantt-jobs", "5"], "--gantt-jobs: only with --gantt"),
                      (["--yscale", "log"], "only with --plot"),
                      (["--plot", "procs", "--logy", "--yscale", "linear"], "contradicts")):
        p = cli("report", "r.sqlite", *args, "--out", "refused", cwd=store)
        assert p.returncode == 2 and msg in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1
        assert not (store / "refused").exists()  # refused before report.md is written
