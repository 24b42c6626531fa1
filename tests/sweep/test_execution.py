"""Running sweeps: resume, identical stores from every executor, failures as data."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import snapshot, tiny_spec, write_json

from sim.sweep import Store, run_sweep
from sim.sweep.spec import cell_key, expand

ROOT = Path(__file__).resolve().parents[2]


def test_a_rerun_skips_finished_cells_and_a_changed_spec_adds_only_new_ones(tmp_path):
    out = tmp_path / "r.sqlite"
    spec = tiny_spec(seeds=(0,))
    first = run_sweep(spec, out)
    assert first.ran == first.cells == 16 and first.done == 16
    again = run_sweep(spec, out)
    assert again.ran == 0 and again.skipped == 16
    before = snapshot(out)
    spec["seeds"] = [0, 1]
    more = run_sweep(spec, out)
    assert more.ran == 16 and more.skipped == 16
    after = snapshot(out)
    assert {k: after[k] for k in before} == before  # old cells untouched
    with Store.open(out, create=False) as st:
        rows = list(st.rows())
    r = rows[0]
    assert r["code_version"] and r["workload_sha256"] and r["wall_seconds"] > 0
    assert r["policy_config"]["policy"] == r["params"]["policy"]
    if r["params"]["policy"] == "slack":
        assert {"sf", "awt", "order", "alpha_u", "alpha_t", "alpha_p", "alpha_f"} \
            <= set(r["policy_config"])


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_one_worker_two_workers_and_dask_give_the_same_store(tmp_path):
    spec = tiny_spec(seeds=(0, 1))
    run_sweep(spec, tmp_path / "one.sqlite", jobs=1)
    run_sweep(spec, tmp_path / "two.sqlite", jobs=2)
    one, two = snapshot(tmp_path / "one.sqlite"), snapshot(tmp_path / "two.sqlite")
    assert one == two and len(one) == 32
    distributed = pytest.importorskip("distributed")
    # two in-process workers (threads) start in a fraction of the processes' time; the
    # cells travel through the same scheduler and futures either way
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        run_sweep(spec, tmp_path / "dask.sqlite", dask=client)
    assert snapshot(tmp_path / "dask.sqlite") == one


def _bad_trace(path: Path, width: int) -> Path:
    path.write_text("; MaxProcs: 8\n; UnixStartTime: 0\n"
                    "1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                    f"2 10 -1 100 {width} -1 -1 {width} 200 -1 1 1 1 -1 -1 -1 -1 -1\n")
    return path


def test_a_failing_cell_is_recorded_and_retried(tmp_path):
    trace = _bad_trace(tmp_path / "t.swf", 12)  # job 2 is wider than the 8 processors
    spec = {"version": 1, "name": "fail", "workloads": [{"name": "t", "trace": str(trace)}],
            "policies": [{"name": "fcfs"}, {"name": "easy"}]}
    out = tmp_path / "f.sqlite"
    s = run_sweep(spec, out)
    assert (s.done, s.failed) == (0, 2)
    with Store.open(out, create=False) as st:
        failed = list(st.rows("failed"))
    assert len(failed) == 2
    assert all("12 processors, machine has 8" in r["error"] for r in failed)
    assert run_sweep(spec, out).ran == 0  # failures are skipped without --retry-failed
    _bad_trace(trace, 4)  # the user fixes the data
    s = run_sweep(spec, out, retry_failed=True)
    assert (s.ran, s.done, s.failed) == (2, 2, 0)
    with Store.open(out, create=False) as st:
        rows = list(st.rows(None))
    assert {r["status"] for r in rows} == {"done"} and {r["attempts"] for r in rows} == {2}


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_a_cell_past_its_time_limit_is_recorded_and_does_not_stop_the_sweep(tmp_path):
    spec = {"version": 1, "name": "tl", "time_limit": 0.05, "seeds": [0],
            "workloads": [{"name": "big", "synthetic": {"n_jobs": 3000, "capacity": 32,
                                                         "load": 1.2}},
                          {"name": "small", "synthetic": {"n_jobs": 20, "capacity": 32}}],
            "policies": [{"name": "slack"}]}
    s = run_sweep(spec, tmp_path / "t.sqlite")
    assert (s.done, s.failed) == (1, 1)
    assert "time limit" in s.errors[0][1]


def test_a_swallowed_alarm_is_raised_again(monkeypatch):
    """Python drops an exception raised inside a weakref callback or a finalizer (it
    reports it as "unraisable"), so a cell's alarm repeats every ``ALARM_REPEAT`` seconds
    until the cell stops: a cell whose first CellTimeout is lost (here, a stage that
    catches it and goes on without progress ticks) still stops at its limit."""
    import sim.sweep.cell as C

    swallowed = []

    def stuck(cell, spec, deadline):
        end = time.monotonic() + 5.0
        while time.monotonic() < end:
            try:
                while time.monotonic() < end:
                    pass
            except C.CellTimeout:
                if swallowed:
                    raise
                swallowed.append(1)
        raise AssertionError("the cell outlived its limit")

    monkeypatch.setattr(C, "_simulate", stuck)
    t0 = time.monotonic()
    row = C.run_cell({"policy": "easy", "options": {}, "time_limit": 0.2})
    assert row["status"] == "failed" and "time limit" in row["error"], row["error"]
    assert swallowed == [1]
    assert time.monotonic() - t0 < 1.2


def _done(path: Path) -> int:
    import sqlite3

    if not path.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:  # the run has not created its tables yet
        return 0


def _wait_unlocked(path: Path, seconds: float = 10.0) -> None:
    """Return once no process holds the store's writer lock (``flock``), as a killed
    sweep's pool workers do until the kernel has ended them."""
    import fcntl

    if not path.exists():
        return
    end = time.monotonic() + seconds
    with open(path, "rb") as f:
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                if time.monotonic() > end:
                    raise AssertionError(f"{path}: still locked {seconds} s after the kill") \
                        from None
                time.sleep(0.005)
            else:
                fcntl.flock(f, fcntl.LOCK_UN)
                return


def _sweep_in_new_session(spec: Path, out: Path, jobs: int) -> None:
    os.setsid()  # its own process group: the kill takes the pool workers too
    run_sweep(spec, out, jobs=jobs)
    os._exit(0)


@pytest.mark.timed  # tests/conftest.py: never beside another timed test
def test_sigkill_at_random_moments_twenty_times_then_resume_gives_the_same_store(tmp_path):
    import multiprocessing

    # 240 cells: room for 20 kills even when a loaded machine lets a dozen cells finish
    # between two polls of the store (120 were all done after 20 kills at load 4, nice 19)
    spec = write_json(tmp_path / "k.json", tiny_spec(name="kill", n_jobs=30,
                                                      seeds=tuple(range(30))))
    ref = tmp_path / "ref.sqlite"
    run_sweep(spec, ref)
    out = tmp_path / "killed.sqlite"
    rng = random.Random(11)
    ctx = multiprocessing.get_context("fork")  # already imported: each start costs ms
    kills = 0
    for i in range(20):
        p = ctx.Process(target=_sweep_in_new_session, args=(spec, out, 1 + i % 2))
        p.start()
        # kill at a random moment: a few cells after the last kill, plus 0-30 ms
        target = _done(out) + rng.randint(1, 3)
        t0 = time.monotonic()
        while _done(out) < target and p.exitcode is None and time.monotonic() - t0 < 60:
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.03))
        if p.exitcode is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:  # ended between the check and the kill
                pass
            else:
                kills += 1
        p.join()
        _wait_unlocked(out)  # the killed group's pool workers may still hold the lock
        # the store opens and checks cleanly after every kill
        with Store.open(out, create=False) as st:
            assert set(st.statuses().values()) <= {"done"}
            left = len(expand(json.loads(spec.read_text()))) - len(st.statuses())
    assert kills == 20 and left > 0, f"every kill should land while the sweep runs: " \
        f"{kills} kills, {left} cells left"
    # the command line finishes the job
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "sim.cli", "sweep", str(spec), "--out",
                           str(out), "--quiet"], cwd=ROOT, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert snapshot(out) == snapshot(ref)


def test_cell_keys_name_every_parameter():
    cells = expand(tiny_spec())
    assert len({cell_key(c) for c in cells}) == len(cells) == 48
    assert json.loads(json.dumps(cells)) == cells  # plain JSON, stored as is
