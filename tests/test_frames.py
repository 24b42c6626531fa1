"""Results as pandas data frames: a store, a bench, results and a schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")

from sim import frames  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_schedule_frame_has_one_row_per_job_with_the_metrics():
    from heuristics.backfill import EASY
    from instances.synthetic import random_workload
    from sim.batch.machine import simulate
    from sim.batch.metrics import summary

    s = simulate(random_workload(50, 16, seed=1), EASY())
    df = frames.schedule_frame(s)
    assert len(df) == 50 and {"id", "wait", "bounded_slowdown", "killed"} <= set(df.columns)
    assert df["wait"].mean() == pytest.approx(summary(s)["avg_wait"])


def test_result_and_bench_frames(tmp_path):
    from sim import registry
    from sim.sweep.bench import COLUMNS, bench

    fig1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"
    import json

    fam, problem = registry.load_problem(json.loads(fig1.read_text()))
    r = registry.solver(fam, "cpsat")(problem, time_limit=10)
    df = frames.result_frame(r)
    assert df.loc[0, "status"] == "OPTIMAL" and df.loc[0, "objective"] == 2
    b = bench([fig1], tmp_path / "out", solvers=["cpsat", "fcfs"], time_limit=10, plots=False)
    for f in (frames.bench_frame(b), frames.bench_frame(tmp_path / "out")):
        assert list(f.columns) == list(COLUMNS) and len(f) == 2
        assert f.set_index("solver").loc["fcfs", "gap_to_best"] == pytest.approx(1.0)


def test_store_frame(tmp_path):
    from sim.sweep import run_sweep

    spec = {"version": 1, "name": "frames", "seeds": [0, 1], "metrics": ["avg_wait"],
            "procs": [16],
            "workloads": [{"name": "syn", "synthetic": {"n_jobs": 20, "capacity": 16,
                                                         "load": [0.7, 0.9]}}],
            "policies": [{"name": "fcfs"}, {"name": "easy"}]}
    run_sweep(spec, tmp_path / "r.sqlite")
    df = frames.store_frame(tmp_path / "r.sqlite")
    assert len(df) == 8 and {"label", "avg_wait", "seed", "key"} <= set(df.columns)
