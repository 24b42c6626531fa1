"""The paired per-cell tests of protocol S: the outcome of a cell, Welch's interval, and the
committed ``results/stationary/paired.md`` is what the code gives from ``fig2.json``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from sim.experiments.leinberger import paired


def test_a_cell_is_a_gain_a_loss_or_not_distinguishable() -> None:
    assert paired.classify([10.0, 12.0, 11.0])[2] == paired.GAIN
    assert paired.classify([-10.0, -12.0, -11.0])[2] == paired.LOSS
    assert paired.classify([-10.0, 12.0, 11.0])[2] == paired.ND
    mean, half, word = paired.classify([7.0])  # one seed: no interval
    assert (mean, word) == (7.0, paired.ND) and math.isnan(half)
    assert paired.cell_text([10.0, 12.0, 11.0]) == "+11.0 +- 2.5 gain (3/3)"
    assert paired.cell_text([7.0]) == "+7.0 n.d. (1/1)"
    assert paired.cell_text([]) == "-"


def test_welch_interval() -> None:
    d, half = paired.welch([1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0, 5.0])
    assert d == pytest.approx(-1.0)
    assert half == pytest.approx(2.24, abs=0.01)  # df 5.88, t 2.45, se sqrt(1/3 + 1/2)
    assert math.isnan(paired.welch([1.0], [2.0, 3.0])[1])


def test_trend_rows_take_the_ends_of_a_series_with_welchs_interval() -> None:
    def row(K: int, queue: int, bb: list[float]) -> dict:
        return {"scaling": "G-b", "K": K, "dist": "uniform", "queue": queue,
                "policies": {"BB-EASY": {"gain_art_seeds": bb}}}

    rows = [row(2, 64, [1.0, 2.0, 3.0]), row(2, 128, [50.0]),
            row(2, 256, [11.0, 12.0, 13.0, 14.0, 15.0]),
            row(4, 64, [1.0]), row(4, 256, [9.0, 10.0]), row(8, 256, [5.0])]
    out = paired.trend_rows(rows, "BB-EASY", "queue", 64, 256)
    # K = 2: +11.0 +- Welch (df 5.88); the middle cell plays no part
    assert out[0][:5] == ["G-b", 2, "uniform", "+13.0 (5)", "+2.0 (3)"]
    assert out[0][5] == "+11.0 +- 2.2" and out[0][6] == "higher"
    assert out[1][3:] == ["+9.5 (2)", "+1.0 (1)", "+8.5", paired.ND]  # one seed: no interval
    assert out[2][3:] == ["+5.0 (1)", "- (0)", "-", "-"]  # no cell at queue 64
    falling = paired.trend_rows([row(2, 64, [20.0, 21.0]), row(2, 256, [1.0, 2.0])],
                                "BB-EASY", "queue", 64, 256)
    assert falling[0][-1] == "lower"


def tables(text: str) -> list[str]:
    """The lines of a paired.md below its provenance line."""
    return [line for line in text.splitlines() if not line.startswith("Command:")]


def test_the_committed_paired_tests_are_what_the_stationary_results_give() -> None:
    committed = paired.S_DIR / "paired.md"
    text, data = paired.report(json.loads(paired.SOURCE.read_text()), "cmd", "0000000")
    assert tables(committed.read_text()) == tables(text)
    stored = json.loads((paired.S_DIR / "paired.json").read_text())
    assert stored["cells"] == data["cells"] and stored["counts"] == data["counts"]


def test_the_command_writes_only_into_out(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert paired.main(["--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["o", "paired.json", "paired.md"]
    assert "python -m sim.experiments.leinberger.paired --out" in (out / "paired.md").read_text()
    (tmp_path / "f").write_text("x")
    assert paired.main(["--out", str(tmp_path / "f")]) == 2
    assert (tmp_path / "f").read_text() == "x"
