"""HiGHS and SCIP run in a killable worker (``models.mip.run_worker``): a worker that
ignores its limit is killed with its children at limit + grace, one beyond its memory
cap is killed, a crash is reported, the real worker never imports ``highspy``, and the
KTH snapshot on which HiGHS's root cut separation ignored its clock (46 s on an 8 s
limit in-process) ends within the limit.

Fake workers are fork servers speaking the worker protocol (one directory per line in,
one process id per line out), so the tests take about their time limits."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from processes import gone

from models import mip
from sim.result import Status

SNAPSHOTS = Path(__file__).resolve().parents[2] / "instances" / "data" / "slack_snapshots"

pytestmark = pytest.mark.timed  # tests/conftest.py: never beside another timed test

FAKE = """
import os, subprocess, sys, time
print("ready", flush=True)
for line in sys.stdin:
    directory = line.split()[0]
    pid = os.fork()
    if pid == 0:
        os.setsid()
        {body}
        os._exit(0)
    print(pid, flush=True)
"""
SLOW = """child = subprocess.Popen(["sleep", "60"])
        open(os.path.join(directory, "..", "child"), "w").write(str(child.pid))
        time.sleep(60)"""
FAT = """block = bytearray(300 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(60)"""
CRASH = """open(os.path.join(directory, "error.txt"), "w").write("MemoryError: fake")
        os._exit(1)"""


@pytest.fixture()
def fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Install a fake worker server whose workers run ``body``."""
    server = mip._Server()

    def install(body: str) -> Path:
        script = tmp_path / "fake_worker.py"
        script.write_text(FAKE.format(body=body))
        monkeypatch.setattr(mip, "WORKER", str(script))
        monkeypatch.setattr(mip, "_SERVER", server)
        monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
        return tmp_path

    yield install
    if server.proc is not None:
        server.proc.kill()
        server.proc.wait()


def _tiny_model():
    import pulp

    prob = pulp.LpProblem("t", pulp.LpMinimize)
    x = prob.add_variable("x", lowBound=0, upBound=3, cat="Integer")
    prob += x
    prob += x >= 1.5
    return prob


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_worker_ignoring_its_limit_is_killed_with_its_children(fake_server) -> None:
    tmp = fake_server(SLOW)
    prob = _tiny_model()
    t = time.perf_counter()
    assert mip.solve(prob, backend="highs", time_limit=0.8, grace=0.2) is False
    wall = time.perf_counter() - t
    assert wall < 0.8 + 0.2 + 1.0, wall
    assert all(v.varValue is None for v in prob.variables())
    assert mip.killed_note("highs", prob) == "HiGHS killed past the time limit"
    child = int((tmp / "child").read_text())
    assert gone(child), "the worker's child survived: the process group was not killed"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_worker_beyond_its_memory_cap_is_killed(fake_server) -> None:
    fake_server(FAT)
    model, _ = mip.translate(_tiny_model())
    t = time.perf_counter()
    answer = mip.run_worker(model, "scip", deadline=time.monotonic() + 30.0,
                            memory_mb=100)
    assert time.perf_counter() - t < 10.0
    assert answer["status"] is None and answer["why"] == "memory"


def test_a_crashed_worker_gives_no_answer_and_says_why(fake_server) -> None:
    fake_server(CRASH)
    prob = _tiny_model()
    assert mip.solve(prob, backend="scip", time_limit=5.0) is False
    assert mip.killed_note("scip", prob) == "SCIP crashed (MemoryError: fake)"


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_the_real_worker_solves_and_never_imports_highspy(backend: str) -> None:
    model, _ = mip.translate(_tiny_model())
    answer = mip.run_worker(model, backend, deadline=time.monotonic() + 20.0)
    assert answer["status"] == "OPTIMAL" and answer["has_solution"]
    assert list(answer["values"]) == [2.0]
    assert answer["highspy"] is False
    assert "highspy" not in sys.modules


def test_the_worker_server_restarts_after_it_died() -> None:
    import pulp

    prob = _tiny_model()
    assert mip.solve(prob, backend="scip", time_limit=20.0)
    mip._SERVER.proc.kill()
    mip._SERVER.proc.wait()
    prob = _tiny_model()
    assert mip.solve(prob, backend="scip", time_limit=20.0)
    assert prob.sol_status == pulp.LpSolutionOptimal


def test_highs_on_the_snapshot_its_root_ignored_the_clock_ends_within_the_limit() -> None:
    """In-process, HiGHS ran 46 s on an 8 s limit here (root cut separation); killed at
    the limit + grace, the ILP returns its fallback schedule in time."""
    from models.slack_insertion import ilp
    from sim.problems import insertion as ins

    path = SNAPSHOTS / "kth-1997-04-insert-17738308-k27.json"
    p = ins.from_dict(json.loads(path.read_text()))
    limit = 4.0
    t = time.perf_counter()
    r = ilp.solve_ilp(p, time_limit=limit, backend="highs")
    wall = time.perf_counter() - t
    assert wall < limit + 2.0, (wall, r.note)
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert ins.check(p, r.solution) == []


def test_a_forked_process_starts_its_own_worker_server() -> None:
    """A process pool forked after a solve, while a thread of the parent talks to its
    server (its lock held), starts its own server in each child."""
    import multiprocessing

    prob = _tiny_model()
    assert mip.solve(prob, backend="scip", time_limit=20.0)
    parent_server = mip._SERVER.proc.pid
    with mip._SERVER.lock, multiprocessing.get_context("fork").Pool(2) as pool:
        pids = pool.map_async(_solve_in_child, range(4)).get(timeout=60)
    assert all(pid is not None and pid != parent_server for pid in pids)
    prob = _tiny_model()
    assert mip.solve(prob, backend="scip", time_limit=20.0)
    assert mip._SERVER.proc.pid == parent_server


def _solve_in_child(_: int) -> int | None:
    import pulp

    prob = _tiny_model()
    ok = mip.solve(prob, backend="highs", time_limit=20.0)
    if not ok or prob.sol_status != pulp.LpSolutionOptimal:
        return None
    return mip._SERVER.proc.pid


def test_the_workers_peak_memory_is_reported() -> None:
    """The workers are the fork server's children, not this process's: their peak is
    reported by ``worker_peak_mb`` (it includes OR-Tools, tens of MB)."""
    model, _ = mip.translate(_tiny_model())
    answer = mip.run_worker(model, "scip", deadline=time.monotonic() + 20.0)
    assert 10.0 < answer["peak_mb"] < mip.WORKER_MEMORY_MB
    assert mip.worker_peak_mb() >= answer["peak_mb"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_killed_workers_peak_is_its_last_measured_one(fake_server) -> None:
    fake_server(FAT)
    model, _ = mip.translate(_tiny_model())
    answer = mip.run_worker(model, "scip", deadline=time.monotonic() + 30.0,
                            memory_mb=100)
    assert answer["why"] == "memory" and answer["peak_mb"] > 100


COPY_JOB = """import shutil
        shutil.copy(os.path.join(directory, "job.json"), os.path.join(directory, "..",
                                                                      "job.json"))
        os._exit(0)"""


def test_run_worker_passes_the_backend_parameters_to_the_worker(fake_server) -> None:
    """``parameters=`` reaches the worker's job (HiGHS's and SCIP's own names); without
    it the parameters are those of ``mip.solve``."""
    tmp = fake_server(COPY_JOB)
    model, _ = mip.translate(_tiny_model())
    given = {"presolve": True, "seed": 7, "rel_gap": 0.0, "abs_gap": 0.0,
             "feasibility_tol": 1e-9}
    mip.run_worker(model, "highs", deadline=time.monotonic() + 5.0, parameters=given)
    words = json.loads((tmp / "job.json").read_text())["parameters"].split(",")
    for word in ("presolve=on", "random_seed=7", "mip_rel_gap=0.0", "mip_abs_gap=0.0",
                 "mip_feasibility_tolerance=1e-09", "dual_feasibility_tolerance=1e-09",
                 "threads=1", "output_flag=false"):
        assert word in words, words
    mip.run_worker(model, "scip", deadline=time.monotonic() + 5.0,
                   parameters=mip.MipParameters(presolve=False, seed=3, rel_gap=0.0))
    lines = json.loads((tmp / "job.json").read_text())["parameters"].split("\n")
    assert set(lines) == {f"limits/memory = {mip.SCIP_MEMORY_MB}", "misc/catchctrlc = TRUE",
                          "presolving/maxrounds = 0", "randomization/randomseedshift = 3",
                          "limits/gap = 0.0"}
    mip.run_worker(model, "highs", deadline=time.monotonic() + 5.0)
    words = json.loads((tmp / "job.json").read_text())["parameters"].split(",")
    assert "presolve=off" in words and f"mip_rel_gap={mip.GAP_TOL}" in words


@pytest.mark.parametrize(("given", "match"), [
    ({"presolv": True}, "unknown MIP parameter 'presolv'"),
    ({"seed": -1}, "seed = -1"),
    ({"seed": 2**31}, "seed"),
    ({"seed": True}, "seed"),
    ({"rel_gap": float("nan")}, "rel_gap"),
    ({"abs_gap": float("inf")}, "abs_gap"),
    ({"feasibility_tol": 0.0}, "feasibility_tol"),
    ({"presolve": "on"}, "presolve"),
    ([("presolve", True)], "mapping"),
])
def test_bad_backend_parameters_are_refused_before_anything_runs(given, match) -> None:
    model, _ = mip.translate(_tiny_model())
    with pytest.raises(ValueError, match=match):
        mip.run_worker(model, "highs", deadline=time.monotonic() + 5.0, parameters=given)


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_the_real_worker_solves_with_presolve_on(backend: str) -> None:
    model, _ = mip.translate(_tiny_model())
    answer = mip.run_worker(model, backend, deadline=time.monotonic() + 20.0,
                            parameters={"presolve": True, "rel_gap": 0.0, "seed": 1})
    assert answer["status"] == "OPTIMAL" and list(answer["values"]) == [2.0]
    assert answer["interrupted"] is False


BUSY = """end = time.process_time() + 0.6
        while time.process_time() < end:
            pass
        time.sleep(60)"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_workers_cpu_time_is_counted_even_when_it_is_killed(fake_server) -> None:
    """The workers' CPU escapes ``getrusage`` (they are the fork server's children):
    ``worker_cpu_s`` adds what ``/proc`` showed of each, here a worker that burns 0.6 s
    of CPU and is then killed at its limit."""
    fake_server(BUSY)
    model, _ = mip.translate(_tiny_model())
    before = mip.worker_cpu_s()
    answer = mip.run_worker(model, "scip", deadline=time.monotonic() + 2.0, grace=0.5)
    assert answer["why"] == "killed"
    assert 0.5 <= mip.worker_cpu_s() - before <= 2.6


def test_the_real_workers_cpu_time_is_counted() -> None:
    model, _ = mip.translate(_tiny_model())
    before = mip.worker_cpu_s()
    answer = mip.run_worker(model, "scip", deadline=time.monotonic() + 20.0)
    assert answer["has_solution"]
    # forked from a server that has OR-Tools loaded, it may solve in a few milliseconds:
    # what it reports of itself (getrusage, microseconds) is counted, however small
    assert answer["cpu_s"] > 0
    assert mip.worker_cpu_s() - before >= answer["cpu_s"] - 1e-9   # float sums
