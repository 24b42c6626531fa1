"""``bench``: solvers over problem files, gaps to the best known value computed by hand,
failures recorded per run, resumable, users' own solvers."""

from __future__ import annotations

import csv
import json
import shutil
import textwrap
from pathlib import Path

import pytest

from sim.sweep.bench import COLUMNS, bench, compare, gap_to_best

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"
# one resource of 10 units, all free; jobs of 6, 5 and 5 units: FF takes the oldest (6)
SELECTION = {"problem": "kresource_selection", "capacity": [10], "free": [10],
             "extra": [10], "demands": [[6], [5], [5]], "late": [False, False, False]}


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_gap_sign_follows_the_sense():
    assert gap_to_best(3.0, 2.0, "min") == pytest.approx(0.5)
    assert gap_to_best(25.0, 42.0, "max") == pytest.approx(17 / 42)
    assert gap_to_best(0.0, 0.0, "min") == 0.0
    assert gap_to_best(1.0, 0.0, "min") is None
    assert gap_to_best(None, 2.0, "min") is None


def test_bench_on_known_optima_gives_the_hand_computed_gaps(tmp_path):
    epochs = tmp_path / "epochs"
    epochs.mkdir()
    shutil.copy(FIG1, epochs / "figure1.json")
    sel = tmp_path / "sel"
    sel.mkdir()
    (sel / "s.json").write_text(json.dumps(SELECTION))
    s = bench([epochs, sel], tmp_path / "out", solvers=["cpsat", "fcfs", "fcfs-ff", "ff"],
              time_limit=10, plots=False)
    rows = _csv(tmp_path / "out" / "runs.csv")
    assert list(rows[0]) == list(COLUMNS)
    by = {(Path(r["file"]).name, r["solver"]): r for r in rows}
    # Figure 1 of Leinberger et al.: two epochs are optimal; FCFS packs four, FF three
    assert by["figure1.json", "cpsat"]["status"] == "OPTIMAL"
    assert float(by["figure1.json", "fcfs"]["gap_to_best"]) == pytest.approx(1.0)
    assert float(by["figure1.json", "fcfs-ff"]["gap_to_best"]) == pytest.approx(0.5)
    assert by["figure1.json", "fcfs"]["best_proved"] == "True"
    assert by["figure1.json", "fcfs"]["kind"] == "heuristic"
    assert by["figure1.json", "cpsat"]["kind"] == "exact"
    # selection is maximised: FF's worse value is a positive gap
    opt = float(by["s.json", "cpsat"]["objective"])
    ff = float(by["s.json", "ff"]["objective"])
    assert ff < opt and float(by["s.json", "ff"]["gap_to_best"]) == pytest.approx(
        (opt - ff) / opt)
    # a solver of another family is a recorded failed run naming the file, not a crash
    assert by["figure1.json", "ff"]["status"] == "FAILED"
    assert by["s.json", "fcfs"]["status"] == "FAILED"
    assert s.failed == 3  # ff on Figure 1; fcfs and fcfs-ff on the selection
    report = (tmp_path / "out" / "report.md").read_text()
    assert "figure1.json: solver 'ff' does not solve family 'kresource_epochs'" in report


def test_a_rerun_resumes_and_a_broken_file_is_a_failed_run(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    shutil.copy(FIG1, d / "a.json")
    (d / "b.json").write_text('{"problem": "kresource_epochs", "capacity": [4], '
                              '"demands": [[5]]}')
    first = bench([d], tmp_path / "out", solvers=["cpsat", "fcfs"], time_limit=10,
                  plots=False)
    assert first.ran == 4 and first.failed == 2
    again = bench([d], tmp_path / "out", solvers=["cpsat", "fcfs"], time_limit=10,
                  plots=False)
    assert again.skipped == 2 and again.ran == 2  # the failed runs are tried again
    errors = [r["error"] for r in again.runs if r["status"] == "FAILED"]
    assert errors and all("b.json" in e for e in errors)


def test_the_file_own_best_known_is_used_and_a_user_solver_runs(tmp_path, monkeypatch):
    (tmp_path / "mysolvers.py").write_text(textwrap.dedent('''
        import time
        from heuristics.kresource import solve_fcfs

        def worst(problem, *, time_limit=None, seed=0):
            return solve_fcfs(problem, time_limit=time_limit, seed=seed)
    '''))
    monkeypatch.chdir(tmp_path)
    data = json.loads(FIG1.read_text())
    data["best_known"] = 2
    data["proved"] = True
    (tmp_path / "f.json").write_text(json.dumps(data))
    s = bench([tmp_path / "f.json"], tmp_path / "out", solvers=["mysolvers:worst"],
              time_limit=5, plots=False)
    (row,) = s.runs
    assert row["status"] == "FEASIBLE", row["error"]
    assert row["best_known"] == 2 and row["best_proved"] is True
    assert row["gap_to_best"] == pytest.approx(1.0) and row["kind"] == "heuristic"


@pytest.mark.parametrize("solvers, message", [
    (["nosuch"], "unknown solver 'nosuch'"),
    (["nomodule_xyz:f"], "module 'nomodule_xyz' does not import"),
])
def test_bad_solvers_are_refused_before_anything_runs(tmp_path, solvers, message):
    with pytest.raises(ValueError, match=message):
        bench([FIG1], tmp_path / "out", solvers=solvers)
    assert not (tmp_path / "out").exists()


def test_a_directory_mixing_families_is_refused(tmp_path):
    shutil.copy(FIG1, tmp_path / "a.json")
    (tmp_path / "b.json").write_text(json.dumps(SELECTION))
    with pytest.raises(ValueError, match="mixes problem families"):
        bench([tmp_path], tmp_path / "out", solvers=["cpsat"])


def test_compare_one_file_side_by_side():
    rows = compare(FIG1, ["cpsat", "fcfs"], time_limit=10)
    assert [r["solver"] for r in rows] == ["cpsat", "fcfs"]
    assert rows[0]["status"] == "OPTIMAL" and rows[1]["gap_to_best"] == pytest.approx(1.0)
    assert rows[1]["solver_gap"] is None  # a heuristic proves no bound
