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
    # the broken file's runs were refused before they ran: the same bytes again are not
    # re-recorded (a changed file has another key and is tried again)
    assert again.skipped == 4 and again.ran == 0
    errors = [r["error"] for r in again.runs if r["status"] == "FAILED"]
    assert errors and all("b.json" in e for e in errors)


def test_the_file_certified_best_known_is_used_and_a_user_solver_runs(tmp_path, monkeypatch):
    (tmp_path / "mysolvers.py").write_text(textwrap.dedent('''
        import time
        from heuristics.kresource import solve_fcfs

        def worst(problem, *, time_limit=None, seed=0):
            return solve_fcfs(problem, time_limit=time_limit, seed=seed)
    '''))
    monkeypatch.chdir(tmp_path)
    data = json.loads(FIG1.read_text())
    from sim import registry

    _, problem = registry.load_problem(data)
    optimum = registry.solver("kresource_epochs", "cpsat")(problem, time_limit=10)
    data["best_known"] = 2
    data["proved"] = True
    data["certificate"] = optimum.solution
    (tmp_path / "f.json").write_text(json.dumps(data))
    s = bench([tmp_path / "f.json"], tmp_path / "out", solvers=["mysolvers:worst"],
              time_limit=5, plots=False)
    (row,) = s.runs
    assert row["status"] == "FEASIBLE", row["error"]
    # the certificate attains 2; "proved" is the file's claim, which no run of this
    # bench checked
    assert row["best_known"] == 2 and row["best_proved"] is False and not s.issues
    assert row["gap_to_best"] == pytest.approx(1.0) and row["kind"] == "heuristic"


@pytest.mark.parametrize("solvers, message", [
    (["nosuch"], "unknown solver 'nosuch'"),
    (["nomodule_xyz:f"], "module 'nomodule_xyz' does not import"),
    # its one stored run would count twice in every statistic of the report
    (["fcfs", "cpsat", "fcfs"], "'fcfs' given more than once"),
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


# --------------------------------------------------------------------------- workers
def _results(out: Path) -> dict[str, tuple]:
    """Per stored run, everything that must not depend on the workers: its parameters,
    status and error, and every metric but the solver's time."""
    from sim.sweep.store import Store

    with Store.open(out / "runs.sqlite", create=False) as st:
        rows = list(st.rows(None))
    return {r["key"]: (r["params"], r["status"], r["error"],
                       {k: v for k, v in (r["metrics"] or {}).items() if k != "seconds"})
            for r in rows}


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_one_and_two_workers_store_the_same_results(tmp_path):
    from sim.problems.generate import write_set
    from sim.sweep.store import Store

    write_set("kresource_epochs", 8, 1, tmp_path / "p", n=8, K=3)
    solvers = ["brute", "cpsat", "unc", "fcfs", "fcfs-bb", "unc-ff"]
    one = bench([tmp_path / "p"], tmp_path / "one", solvers=solvers, time_limit=10,
                plots=False)
    two = bench([tmp_path / "p"], tmp_path / "two", solvers=solvers, time_limit=10, jobs=2,
                plots=False)
    assert one.failed == two.failed == 0 and len(one.runs) == 48
    assert _results(tmp_path / "one") == _results(tmp_path / "two")
    drop = COLUMNS.index("seconds")
    lines = [[r[:drop] for r in csv.reader((tmp_path / d / "runs.csv").open())]
             for d in ("one", "two")]
    assert lines[0] == lines[1]
    with Store.open(tmp_path / "two" / "runs.sqlite", create=False) as st:
        workers = {r["worker"] for r in st.rows(None)}
    assert len(workers) == 2  # both pool workers ran cells


def test_chunks_fill_the_batch_time_and_shrink_at_the_end():
    from sim.sweep.execute import _ChunkSizer

    sizer = _ChunkSizer(0.05, jobs=2)
    assert sizer.size(1000) == 1  # no cell timed yet
    sizer.add(4, 0.008)  # 2 ms per cell: 25 cells fill 0.05 s
    assert sizer.size(1000) == 25
    assert sizer.size(40) == 10  # at most the cells left over twice the workers
    assert sizer.size(3) == 1
    assert _ChunkSizer(0.0, jobs=2).size(1000) == 1  # one cell per task


def test_a_batch_of_rows_is_committed_all_or_none(tmp_path):
    import sqlite3

    from sim.sweep.store import Store

    cell = {"workload": "w", "policy": "p", "label": "p", "seed": 0}
    with Store.open(tmp_path / "s.sqlite") as st:
        with pytest.raises(sqlite3.IntegrityError):
            st.put_many([("a", cell, {"status": "done"}), ("b", cell, {"status": "bogus"})],
                        "test")
        assert st.statuses() == {}
        assert st.put_many([("a", cell, {"status": "done"}),
                            ("b", cell, {"status": "failed", "error": "e"})], "test") == 2
        # a done row is kept, a failed one replaced
        assert st.put_many([("a", cell, {"status": "failed", "error": "x"}),
                            ("b", cell, {"status": "done"})], "test") == 1
        assert st.statuses() == {"a": "done", "b": "done"}


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_sigkill_of_bench_leaves_a_valid_store_and_the_rerun_redoes_no_stored_run(
        tmp_path, monkeypatch):
    import os
    import signal
    import subprocess
    import sys
    import time

    from sim.problems.generate import write_set
    from sim.sweep.store import Store

    write_set("kresource_epochs", 60, 1, tmp_path / "p", n=10, K=3)
    solvers = "brute,cpsat,unc,fcfs,fcfs-ff,fcfs-bl,fcfs-bb,unc-ff,unc-bl,unc-bb"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "bench", "p", "--solvers",
                             solvers, "--out", "out", "--jobs", "2", "--quiet"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    store = tmp_path / "out" / "runs.sqlite"
    t0 = time.monotonic()
    try:
        while proc.poll() is None and time.monotonic() - t0 < 120:
            if _stored(store) > 0:
                break
            time.sleep(0.01)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the bench and its pool workers
        except ProcessLookupError:
            pass
        proc.wait()
    _wait_unlocked(store)  # the killed pool workers' ends release the lock a moment later
    with Store.open(store, create=False) as st:  # opens and checks cleanly
        before = {r["key"]: r for r in st.rows(None)}
    assert 0 < len(before) < 600, f"the kill should land while the bench runs: {len(before)}"
    assert {r["status"] for r in before.values()} == {"done"}
    monkeypatch.chdir(tmp_path)  # the same command: paths as given are part of a run's key
    again = bench(["p"], "out", solvers=solvers.split(","), plots=False)
    assert (again.skipped, again.ran, again.failed) == (len(before), 600 - len(before), 0)
    with Store.open(store, create=False) as st:
        after = {r["key"]: r for r in st.rows(None)}
    assert len(after) == 600 and {r["attempts"] for r in after.values()} == {1}
    assert all(after[k] == r for k, r in before.items())  # stored runs left as they were


def _wait_unlocked(path: Path, within: float = 30.0) -> None:
    """Wait until no process holds the store's write lock (``flock``)."""
    import fcntl
    import time

    t0 = time.monotonic()
    with open(path, "rb") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                assert time.monotonic() - t0 < within, "a killed bench still holds the lock"
                time.sleep(0.05)
                continue
            fcntl.flock(f, fcntl.LOCK_UN)
            return


def _stored(path: Path) -> int:
    import sqlite3

    if not path.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # the tables are not created yet
        return 0
