"""Reports and plots print an interval only where one was computed, name `load` for what it
is with the offered load it gives, and warn of saturated cells with the measure."""

from __future__ import annotations

import pytest

from sim.sweep.report import load_note, report, saturated, saturation_warning, spread_phrase
from sim.sweep.store import Store


def _store(path, seeds_per_label, extra=None):
    with Store.open(path, spec_name="hand", spec_version=1) as st:
        st.set_meta(metrics='["avg_wait"]', labels='["a", "b"]')
        for label, seeds in seeds_per_label.items():
            for seed in range(seeds):
                cell = {"workload": "w", "policy": "fcfs", "label": label, "seed": seed,
                        "options": {}, "trace": "lublin_256", "load": 1.0}
                m = {"avg_wait": 10.0 + seed, "jobs": 5, **(extra or {}).get(label, {})}
                st.put(f"{label}-{seed}", cell, {"status": "done", "metrics": m}, "test")


def test_one_run_per_cell_announces_no_interval(tmp_path):
    _store(tmp_path / "s.sqlite", {"a": 1, "b": 1})
    text = report(tmp_path / "s.sqlite")
    assert "one run per cell (n = 1), so no interval" in text
    assert "confidence" not in text and "over seeds" not in text and "±" not in text
    assert "Runs per cell (n): 1." in text


def test_mixed_and_replicated_cells_say_n(tmp_path):
    _store(tmp_path / "m.sqlite", {"a": 3, "b": 1})
    text = report(tmp_path / "m.sqlite")
    assert "where a cell has n >= 2 runs" in text and "±" in text
    assert spread_phrase([3], 0.95).endswith("n = 3")
    assert spread_phrase([2, 5], 0.9).startswith("mean ± 90% confidence")


@pytest.mark.parametrize("level,shown", [(0.999, "99.9%"), (0.995, "99.5%"), (0.9999, "99.99%"),
                                         (0.004, "0.4%"), (0.95, "95%")])
def test_the_confidence_level_is_printed_as_given_never_rounded(level, shown):
    """A 99.9% interval is wider than a 99% one: the table says which one it shows."""
    assert spread_phrase([3], level).startswith(f"mean ± {shown} confidence")


def test_load_is_named_with_the_offered_load_it_gives(tmp_path):
    rows = [{"workload": "kth", "load": 1.2, "offered_load": 0.83},
            {"workload": "kth", "load": 1.2, "offered_load": 0.83},
            {"workload": "kth", "load": 1.0, "offered_load": 0.69}]
    note = load_note(rows)
    assert "compresses the submit times" in note and "not the offered load" in note
    assert "| kth | 1.2 | 0.830 |" in note and "| kth | 1 | 0.690 |" in note
    assert load_note([{"workload": "x"}]) == ""


def test_saturated_cells_are_warned_with_the_measure(tmp_path):
    fast = {"backlog_growth": 0.3, "backlog_end_s": 5 * 86400.0, "offered_load": 1.27,
            "wait_p99": 20 * 86400.0}
    calm = {"backlog_growth": 0.001, "backlog_end_s": 3600.0, "offered_load": 0.7}
    _store(tmp_path / "w.sqlite", {"a": 1, "b": 1}, {"a": fast, "b": calm})
    text = report(tmp_path / "w.sqlite")
    assert "Warning: 1 of 2 cells saturate" in text
    assert "| 0.300 | 120.0 | 20.0 |" in text
    assert saturation_warning([{"backlog_growth": 0.01, "backlog_end_s": 1e7}]) == ""
    assert saturated([{"backlog_growth": 0.05, "backlog_end_s": 100.0}]) == []


def test_a_cell_records_offered_load_and_backlog_trend():
    import dataclasses

    from sim.batch.machine import simulate
    from sim.batch.metrics import backlog_trend, offered_load
    from sim.batch.runner import load_workload
    from sim.registry import make_policy

    w = load_workload("lublin_256")
    w = dataclasses.replace(w, jobs=w.jobs[:3000], cleaning=None)
    s = simulate(w, make_policy("easy"))
    sub = [j.submit for j in w.jobs]
    work = sum(j.procs * (e - b) for j, b, e in zip(w.jobs, s.start, s.end, strict=True))
    assert offered_load(s) == pytest.approx(work / (w.procs * (sub[-1] - sub[0])))
    squeezed = dataclasses.replace(w, jobs=tuple(
        dataclasses.replace(j, submit=sub[0] + (j.submit - sub[0]) // 3) for j in w.jobs))
    calm, busy = backlog_trend(s), backlog_trend(simulate(squeezed, make_policy("easy")))
    assert busy["backlog_growth"] > 0.5 > calm["backlog_growth"]
    assert busy["backlog_end_s"] > calm["backlog_end_s"]


def test_plot_draws_no_error_bar_for_one_run(tmp_path):
    pytest.importorskip("matplotlib")
    from sim.sweep import plots

    rows = [{"procs": pr, "label": lab, "policy": lab, "seed": 0,
             "avg_wait": float(pr), "key": f"{pr}{lab}"} for pr in (16, 32)
            for lab in ("fcfs", "easy")]
    seen = {}
    real = plots._plt

    def spy():
        plt = real()
        orig = plt.Axes.errorbar

        def errorbar(self, *a, **k):
            seen["bars"] = True
            return orig(self, *a, **k)

        plt.Axes.errorbar = errorbar
        seen["restore"] = (plt.Axes, orig)
        return plt

    plots._plt = spy
    try:
        plots.plot_metric(rows, "avg_wait", "procs", tmp_path / "p.png")
    finally:
        plots._plt = real
        cls, orig = seen["restore"]
        cls.errorbar = orig
    assert "bars" not in seen and (tmp_path / "p.png").stat().st_size > 1000
