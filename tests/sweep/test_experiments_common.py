"""The study modules' shared helpers (``sim.experiments.common``): Markdown and CSV tables,
atomic writing, plot colours; and the CSM study's static run no longer imports the figure
module (the import circle between them is gone)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sim.experiments import common


def test_markdown_table_lines() -> None:
    lines = common.markdown_table(["a", "b", "c"], [[1, "x", 2.5], ["", "y", None]])
    assert lines == ["| a | b | c |", "|---|---|---|", "| 1 | x | 2.5 |", "|  | y | |"]
    assert common.markdown_text(["a"], [[1]]) == "| a |\n|---|\n| 1 |\n"


def test_markdown_rule_alignment() -> None:
    assert common.markdown_rule(3) == "|---|---|---|"
    assert common.markdown_rule("lrr") == "|---|---:|---:|"
    assert common.markdown_table(["n", "t"], [], align="rl")[1] == "|---:|---|"
    with pytest.raises(ValueError, match="align has 1 columns, the header 2"):
        common.markdown_table(["n", "t"], [], align="r")
    with pytest.raises(ValueError, match="'l' or 'r'"):
        common.markdown_rule("lc")


def test_csv_text_quotes_and_newlines() -> None:
    text = common.csv_text(["name", "value"], [["a,b", 1], ["c", ""]])
    assert text == 'name,value\n"a,b",1\nc,\n'


def test_write_atomic_replaces_and_leaves_no_temporary(tmp_path) -> None:
    path = tmp_path / "out.md"
    path.write_text("old")
    common.write_atomic(path, "new\n")
    assert path.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.md"]


def test_write_atomic_creates_the_missing_directory(tmp_path) -> None:
    """A partial study run writes into the git-ignored ``results/``, absent in a fresh clone."""
    path = tmp_path / "results" / "mip_bench.md"
    common.write_atomic(path, "table\n")
    assert path.read_text() == "table\n"
    assert [p.name for p in path.parent.iterdir()] == ["mip_bench.md"]


def test_label_colours_one_per_label_in_first_appearance_order() -> None:
    c = common.label_colours(["FF", "BB", "FF", "BL"])
    assert c == {"FF": "C0", "BB": "C1", "BL": "C2"}


def test_mean_ci_is_the_timeshare_one() -> None:
    from sim.timeshare.metrics import mean_ci

    assert common.mean_ci is mean_ci
    m, h = common.mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and h == pytest.approx(2.484, abs=1e-3)  # t(2) = 4.303, sd 1, n 3


def test_static_run_does_not_import_the_figure_module() -> None:
    code = ("import sys, sim.experiments.gine.static; "
            "print('sim.experiments.gine.figs' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


def test_a_result_file_being_written_leaves_the_recorded_commit_clean(tmp_path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    files = {"sim/experiments/x/results/deep/table.md": "a\n",
             "sim/experiments/x/REPORT.md": "r\n", "models/m.py": "m = 1\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c")
    (tmp_path / "sim/experiments/x/results/deep/table.md").write_text("b\n")
    (tmp_path / "sim/experiments/x/REPORT.md").write_text("s\n")
    assert not common.code_changed(tmp_path)
    (tmp_path / "models/m.py").write_text("m = 2\n")
    assert common.code_changed(tmp_path)
