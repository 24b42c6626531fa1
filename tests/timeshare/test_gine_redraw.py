"""``python -m sim.experiments.gine.figs fig8-9 --plot-only``: Figures 8-9 redrawn from the
committed ``fig8-9.json`` against the message frequency, computing nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sim.experiments.gine import figs

RESULTS = Path(figs.__file__).resolve().parent / "results"


def test_plot_only_redraws_from_the_json(tmp_path, capsys, monkeypatch):
    shutil.copy(RESULTS / "fig8-9.json", tmp_path / "fig8-9.json")
    drawn = {}

    def spy(path, title, res, pols, mfreq_ms, panels=figs.FIG8_9_PANELS):
        drawn.update(pols=pols, mfreq=mfreq_ms, panels=panels)
        real(path, title, res, pols, mfreq_ms, panels)

    real = figs.plot_frequency
    monkeypatch.setattr(figs, "plot_frequency", spy)
    assert figs.main(["fig8-9", "--plot-only", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig8-9.json", "fig8-9.png"]
    assert (tmp_path / "fig8-9.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keys = json.loads((RESULTS / "fig8-9.json").read_text())
    assert drawn["pols"] == ("rr", "pred", "csm")
    assert sorted(f"{p}/m{f:g}" for p in drawn["pols"] for f in drawn["mfreq"]) == sorted(keys)
    assert [m for *_, m, _ in drawn["panels"]] == ["mean_pg_fault", "correlation",
                                                    "slowdown_small", "slowdown_large"]


def test_plot_only_refuses_without_data_or_for_another_figure(tmp_path, capsys):
    assert figs.main(["fig8-9", "--plot-only", "--out", str(tmp_path)]) == 2
    assert "fig8-9.json" in capsys.readouterr().err
    assert figs.main(["fig7", "--plot-only", "--out", str(tmp_path)]) == 2
    assert list(tmp_path.iterdir()) == []
