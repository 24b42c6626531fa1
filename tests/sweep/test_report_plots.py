"""``report --plot`` with other parameters varying (one panel per value), every metric
plotted without --metric, units and filters on the plots, one colour per label, and the
cell keys listed for --gantt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    spec = {"version": 1, "name": "plots", "seeds": [0, 1], "procs": [16, 32],
            "metrics": ["avg_wait", "avg_bounded_slowdown"],
            "workloads": [{"name": "syn", "synthetic": {"n_jobs": 40, "capacity": 16,
                                                         "load": [0.7, 0.9]}}],
            "policies": [{"name": "fcfs"}, {"name": "easy"}]}
    (d / "s.json").write_text(json.dumps(spec))
    p = cli("sweep", "s.json", "--out", "r.sqlite", "--jobs", "1", "--quiet", cwd=d)
    assert p.returncode == 0, p.stderr
    return d


def test_plot_with_another_parameter_varying_draws_every_metric(store):
    p = cli("report", "r.sqlite", "--plot", "procs", "--out", "rep", "--baseline", "fcfs",
            "--logy", cwd=store)
    assert p.returncode == 0, p.stderr
    for name in ("avg_wait_vs_procs.png", "avg_bounded_slowdown_vs_procs.png",
                 "avg_wait_gap_to_fcfs.png"):
        assert (store / "rep" / name).stat().st_size > 1000
    assert "`--gantt KEY`" in p.stdout and p.stdout.count("- `") == 16


def test_panels_titles_units_and_colours():
    from sim.sweep import plots

    rows = [{"procs": pr, "syn.load": ld, "label": lab, "policy": lab, "seed": s,
             "avg_wait": float(pr + s), "key": f"{pr}{ld}{lab}{s}"}
            for pr in (16, 32) for ld in (0.7, 0.9) for lab in ("fcfs", "easy")
            for s in (0, 1)]
    panels = plots.facets(rows, "procs")
    assert [name for name, _ in panels] == ["syn.load=0.7", "syn.load=0.9"]
    assert plots._metric_label("avg_wait") == "mean wait (start - submit) [s]"
    assert plots._axis_label("procs") == "procs [processors]"
    assert "16 processors" not in plots._title("t", rows, ["load=1"])
    assert "where load=1" in plots._title("t", rows, ["load=1"])
    a = plots.label_colours(["fcfs", "easy"])
    b = plots.label_colours(["fcfs", "easy", "conservative"])
    assert a["easy"] == b["easy"] and a["fcfs"] != a["easy"]


@pytest.mark.parametrize("args,msg", [
    (["--plot", "label"], "--plot 'label': not a numeric parameter"),
    (["--plot", "policy"], "--plot 'policy': not a numeric parameter"),
    (["--plot", "no_such"], "--plot 'no_such': unknown parameter"),
    (["--plot", "procs", "--facet", "no_such"], "--facet 'no_such': unknown parameter"),
    (["--facet", "procs"], "--facet: only with --plot"),
    (["--metric="], "--metric: no name given"), (["--over", ","], "--over: no name given"),
    (["--plot", "procs", "--facet="], "--facet: no name given"),
])
def test_a_plot_it_cannot_draw_is_refused_before_any_file_is_written(store, args, msg,
                                                                     capsys, monkeypatch):
    from sim.cli import main

    monkeypatch.chdir(store)
    assert main(["report", "r.sqlite", *args, "--out", "refused"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and msg in err[0], err
    assert not (store / "refused").exists()  # not even report.md
