"""``python -m sim.experiments.gine.figs FIG --plot-only``: Figures 7, 8-9, 10-11 and 12
redrawn from the committed JSON against the message frequency, computing nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sim.experiments.gine import figs

RESULTS = Path(figs.__file__).resolve().parent / "results"
#: figure -> (the JSON files it is drawn from, the series, the panels' metrics)
CASES = {
    "fig7": (["fig7.json"], ("mnod1", "mnod2", "mnod3"), ["slowdown_small", "slowdown_large"]),
    "fig8-9": (["fig8-9.json"], ("rr", "pred", "csm"),
               ["mean_pg_fault", "correlation", "slowdown_small", "slowdown_large"]),
    "fig10-11": (["fig10-11.json"], ("rr", "pred", "csm"),
                 ["mean_pg_fault", "correlation", "slowdown_small", "slowdown_large"]),
    "fig12": (["fig8-9.json", "fig10-11.json"], ("rr", "pred", "csm"),
              ["mem_load 1", "mem_load 1.5"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_plot_only_redraws_from_the_json(name, tmp_path, capsys, monkeypatch):
    sources, series, metrics = CASES[name]
    for src in sources:
        shutil.copy(RESULTS / src, tmp_path / src)
    drawn = {}

    def spy(path, title, res, pols, mfreq_ms, panels=figs.FIG8_9_PANELS, labels=None):
        drawn.update(res=res, pols=pols, mfreq=mfreq_ms, panels=panels)
        real(path, title, res, pols, mfreq_ms, panels, labels)

    real = figs.plot_frequency
    monkeypatch.setattr(figs, "plot_frequency", spy)
    assert figs.main([name, "--plot-only", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*sources, f"{name}.png"])
    assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keys = json.loads((RESULTS / sources[0]).read_text())
    assert drawn["pols"] == series
    assert sorted(f"{p}/m{f:g}" for p in drawn["pols"] for f in drawn["mfreq"]) == sorted(keys)
    assert [m for *_, m, _ in drawn["panels"]] == metrics
    assert all(m in drawn["res"][k] for k in keys for m in metrics)


def test_plot_only_refuses_without_data_or_for_another_figure(tmp_path, capsys):
    assert figs.main(["fig8-9", "--plot-only", "--out", str(tmp_path)]) == 2
    assert "fig8-9.json" in capsys.readouterr().err
    assert figs.main(["fig12", "--plot-only", "--out", str(tmp_path)]) == 2
    assert "fig8-9.json" in capsys.readouterr().err
    assert figs.main(["fig5-6", "--plot-only", "--out", str(tmp_path)]) == 2
    assert list(tmp_path.iterdir()) == []
