"""``python -m sim.experiments.leinberger.figs fig2 --plot-only``: Figures 2 and 3 redrawn
from the committed ``fig2.json`` without computing anything."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sim.experiments.leinberger import figs

RESULTS = Path(figs.__file__).resolve().parent / "results"


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


@pytest.mark.study
def test_plot_only_redraws_both_figures_from_the_json(tmp_path, capsys):
    shutil.copy(RESULTS / "fig2.json", tmp_path / "fig2.json")
    before = (tmp_path / "fig2.json").read_bytes()
    assert figs.main(["fig2", "--plot-only", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig2.json", "fig2.png", "fig3.png"]
    assert (tmp_path / "fig2.json").read_bytes() == before
    # 6 panels (K x distribution) across; the EASY variants of each scaling and FF-CONS
    # on its own scale down: 3 rows of 3.1 x 3.0 inches at 100 dpi
    for name in ("fig2.png", "fig3.png"):
        assert _png_size(tmp_path / name) == (1860, 900)


def test_plot_only_without_data_is_refused(tmp_path, capsys):
    assert figs.main(["fig2", "--plot-only", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "fig2.json" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
    assert figs.main(["gaps", "--plot-only", "--out", str(tmp_path)]) == 2


def test_few_seed_cells_do_not_set_the_y_range():
    # a 1-seed cell at +300% next to 5-seed cells within -10..+20
    extent = [(-10.0, 5.0, 5), (2.0, 20.0, 5), (300.0, 300.0, 1), (-80.0, 90.0, 2)]
    assert figs.gain_limits(extent) == (-10.0, 20.0)
    # only few-seed cells: they set it (nothing else to draw by)
    assert figs.gain_limits([(40.0, 60.0, 1), (-5.0, 10.0, 2)]) == (-5.0, 60.0)
    assert figs.seed_count({"seeds": [1, 2]}) == 2
    assert figs.seed_count({}) == figs.FEW_SEEDS


@pytest.mark.study
def test_stationary_figures_redraw_with_uneven_seed_counts(tmp_path):
    # the committed protocol S cells at K = 2 (kept small: two panels across)
    data = json.loads((RESULTS / "stationary" / "fig2.json").read_text())
    data["rows"] = [r for r in data["rows"] if r["K"] == 2]
    counts = {figs.seed_count(p) for r in data["rows"] for p in r["policies"].values()}
    assert min(counts) < figs.FEW_SEEDS <= max(counts)   # the case the hollow cells are for
    (tmp_path / "fig2.json").write_text(json.dumps(data))
    assert figs.main(["fig2", "--plot-only", "--out", str(tmp_path)]) == 0
    for name in ("fig2.png", "fig3.png"):
        assert _png_size(tmp_path / name) == (620, 900)   # 2 panels of 3.1 x 3 rows of 3.0 in
