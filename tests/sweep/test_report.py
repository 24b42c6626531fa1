"""Report tables checked against hand-computed means, intervals and gaps."""

from __future__ import annotations

import csv
import io
import math

import pytest

from sim.cli import main
from sim.stats import t_quantile
from sim.sweep.report import mean_ci, pivot, report, to_csv
from sim.sweep.store import Store


@pytest.mark.parametrize("df, value", [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228),
                                       (30, 2.042), (1000, 1.962)])
def test_t_quantiles_match_the_printed_tables(df, value):
    assert t_quantile(0.975, df) == pytest.approx(value, abs=1e-3)


def _store(path, values):
    """A store with avg_wait = values[(label, procs)] over seeds 0, 1, 2."""
    with Store.open(path, spec_name="hand", spec_version=1) as st:
        st.set_meta(metrics='["avg_wait"]', labels='["base", "new"]')
        for (label, procs), seeds in values.items():
            for seed, v in enumerate(seeds):
                cell = {"workload": "w", "policy": "fcfs", "label": label, "procs": procs,
                        "seed": seed, "options": {}, "synthetic": {"n_jobs": 5}}
                st.put(f"{label}-{procs}-{seed}", cell,
                       {"status": "done", "metrics": {"avg_wait": v, "jobs": 5}}, "test")


def test_means_intervals_and_gaps_are_the_hand_computed_ones(tmp_path, capsys):
    path = tmp_path / "h.sqlite"
    _store(path, {("base", 8): [1.0, 2.0, 6.0], ("new", 8): [2.0, 2.0, 2.0],
                  ("base", 16): [10.0, 20.0, 30.0], ("new", 16): [4.0, 5.0, 6.0]})
    # base at 8: mean 3, s^2 = ((-2)^2 + (-1)^2 + 3^2) / 2 = 7, half-width t(.975, 2) sqrt(7/3)
    hw = 4.302652729749464 * math.sqrt(7 / 3)
    assert mean_ci([1.0, 2.0, 6.0]) == pytest.approx((3.0, hw, 3))
    from sim.sweep.report import load_rows

    p = pivot(load_rows(path), "avg_wait", rows_by=["procs"], baseline="base")
    assert p.cells[(("8",), "base")] == pytest.approx((3.0, hw, 3))
    assert p.cells[(("16",), "base")] == pytest.approx((20.0, 4.302652729749464 * 10 /
                                                        math.sqrt(3), 3))
    assert p.cells[(("8",), "new")][1] == 0.0
    assert p.gap(("8",), "new") == pytest.approx((2 - 3) / 3 * 100)
    assert p.gap(("16",), "new") == pytest.approx((5 - 20) / 20 * 100)
    text = report(path, rows_by=["procs"], baseline="base", out_dir=tmp_path / "rep")
    assert f"| 8 | 3.00 ± {hw:.2f} | 2.00 ± 0.00 |" in text
    assert "| 16 | +0.0 | -75.0 |" in text
    assert "`avg_wait`: mean wait" in text  # the abbreviations are explained
    rows = list(csv.DictReader(io.StringIO((tmp_path / "rep" / "avg_wait.csv").read_text())))
    r = next(r for r in rows if r["procs"] == "8" and r["label"] == "base")
    assert float(r["mean"]) == 3.0 and float(r["ci_half_width"]) == pytest.approx(hw)
    assert to_csv(p).splitlines()[0].startswith("procs,label,metric,mean")
    # the CLI prints the same table
    assert main(["report", str(path), "--rows", "procs", "--baseline", "base"]) == 0
    assert f"| 8 | 3.00 ± {hw:.2f} |" in capsys.readouterr().out


def test_a_parameter_varying_inside_a_cell_is_an_error(tmp_path, capsys):
    path = tmp_path / "h.sqlite"
    _store(path, {("base", 8): [1.0, 2.0], ("base", 16): [3.0, 4.0]})
    from sim.sweep.report import load_rows

    with pytest.raises(ValueError, match="'procs' varies inside a table cell"):
        pivot(load_rows(path), "avg_wait", rows_by=[])
    assert main(["report", str(path), "--metric", "avg_wiat"]) == 2
    assert "avg_wiat" in capsys.readouterr().err


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    from helpers import tiny_spec

    from sim.sweep import run_sweep

    out = tmp_path / "p.sqlite"
    run_sweep(tiny_spec(seeds=(0, 1)), out)
    d = tmp_path / "plots"
    from sim.sweep.store import Store as S

    with S.open(out, create=False) as st:
        key = next(st.rows())["key"]
    assert main(["report", str(out), "--where", "syn.load=0.9", "--plot", "procs",
                 "--baseline", "conservative", "--gantt", key[:8], "--out", str(d)]) == 0
    names = sorted(p.name for p in d.iterdir())
    assert "avg_wait_vs_procs.png" in names and "avg_wait_gap_to_conservative.png" in names
    assert f"schedule_{key[:8]}.png" in names and "report.md" in names
    assert all((d / n).stat().st_size > 1000 for n in names if n.endswith(".png"))
