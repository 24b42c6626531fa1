"""``kill -9`` of a running sweep or bench leaves no pool worker behind: each worker ends on
its own once its parent is gone, instead of waiting forever on its task pipe."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import tiny_spec, write_json

pytestmark = pytest.mark.timed  # tests/conftest.py: never beside another timed test

ROOT = Path(__file__).resolve().parents[2]


def _children(pid: int) -> set[int]:
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        kids.update(int(k) for k in text)
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_sigkill_of_the_sweep_command_leaves_no_worker(tmp_path):
    spec = write_json(tmp_path / "s.json", tiny_spec(name="orphans", n_jobs=400,
                                                      seeds=tuple(range(20))))
    _kill_and_check(tmp_path, ["sweep", str(spec), "--out", str(tmp_path / "r.sqlite"),
                               "--jobs", "2", "--quiet"])


def test_sigkill_of_the_bench_command_leaves_no_worker(tmp_path):
    from sim.problems.generate import write_set

    write_set("kresource_epochs", 300, 1, tmp_path / "p", n=10, K=3)  # 1,800 runs
    _kill_and_check(tmp_path, ["bench", str(tmp_path / "p"), "--solvers",
                               "brute,cpsat,unc,fcfs,fcfs-ff,fcfs-bb", "--out",
                               str(tmp_path / "out"), "--jobs", "2", "--quiet"])


def _kill_and_check(tmp_path: Path, args: list[str]) -> None:
    """Start ``schedsearch ARGS``, SIGKILL it (not its workers) once its pool runs, and
    check that every pool worker ends within 10 s."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", *args],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    t0 = time.monotonic()
    while len(workers) < 2 and time.monotonic() - t0 < 60 and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) >= 2 and proc.poll() is None, "the pool never started"
    time.sleep(0.5)  # the workers are busy with cells, or blocked on the task pipe
    assert proc.poll() is None, "the command ended before the kill"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [w for w in workers if _alive(w)]
    for w in left:  # never leave them behind, even when the test fails
        os.kill(w, signal.SIGKILL)
    assert not left, f"pool workers {left} outlived their killed parent"
