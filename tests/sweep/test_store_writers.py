"""One writer per results store: a second bench or sweep into a store that is being
written is refused in one line; a resume that runs nothing leaves the store's bytes as
they were; a read-only store is refused in one line and nothing is created beside it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sweep.helpers import tiny_spec

from sim.sweep.bench import bench
from sim.sweep.execute import run_sweep
from sim.sweep.store import Store, StoreError

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"


def cli(*args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", "sim.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_a_second_writer_is_refused_while_the_first_holds_the_store(tmp_path):
    out = tmp_path / "out"
    bench([FIG1], out, solvers=["fcfs"], time_limit=10, plots=False)
    before = (out / "runs.sqlite").read_bytes()
    with Store.open(out / "runs.sqlite", spec_name="bench", spec_version=1):
        with pytest.raises(StoreError, match="another sweep or bench is writing"):
            bench([FIG1], out, solvers=["fcfs", "cpsat"], time_limit=10, plots=False)
        p = cli("bench", str(FIG1), "--solvers", "cpsat", "--out", str(out), "--quiet",
                cwd=tmp_path)
        assert p.returncode == 2 and "another sweep or bench" in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
    assert (out / "runs.sqlite").read_bytes() == before


def test_a_second_sweep_into_one_store_is_refused(tmp_path):
    store = tmp_path / "r.sqlite"
    spec = tiny_spec(n_jobs=20, seeds=(0,))
    run_sweep(spec, store)
    with Store.open(store):
        with pytest.raises(StoreError, match="another sweep or bench is writing"):
            run_sweep(spec, store)


def test_a_resume_that_runs_nothing_keeps_the_bytes_of_the_store(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    shutil.copy(FIG1, d / "a.json")
    (d / "b.json").write_text('{"problem": "kresource_epochs", "capacity": [4], '
                              '"demands": [[5]]}')  # refused: every run of it fails
    bench([d], tmp_path / "out", solvers=["cpsat", "fcfs"], time_limit=10, plots=False)
    before = (tmp_path / "out" / "runs.sqlite").read_bytes()
    again = bench([d], tmp_path / "out", solvers=["cpsat", "fcfs"], time_limit=10,
                  plots=False)
    assert again.ran == 0
    assert (tmp_path / "out" / "runs.sqlite").read_bytes() == before

    store = tmp_path / "r.sqlite"
    spec = tiny_spec(n_jobs=20, seeds=(0,))
    run_sweep(spec, store)
    before = store.read_bytes()
    assert run_sweep(spec, store).ran == 0
    assert store.read_bytes() == before


def _unshare(tmp_path: Path) -> tuple[str, ...]:
    """A prefix that runs a command as a user without root's rights over the files
    (root ignores permission bits), or () when this user has none already."""
    if os.geteuid() != 0:
        return ()
    unshare = shutil.which("unshare")
    prefix = (unshare, "--user", "--map-user=1000") if unshare else ()
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    probe = subprocess.run([*prefix, sys.executable, "-c",
                            f"import os; print(os.access({str(locked)!r}, os.W_OK))"],
                           capture_output=True, text=True)
    locked.rmdir()
    if not prefix or probe.returncode != 0 or probe.stdout.strip() != "False":
        pytest.skip("root, and no unshare to drop root's rights over files")
    return prefix


@pytest.mark.parametrize("folder", [0o555, 0o777], ids=["read-only folder", "open folder"])
@pytest.mark.parametrize("command", ["bench", "sweep"])
def test_a_read_only_store_is_one_line_and_nothing_is_created(tmp_path, command, folder):
    prefix = _unshare(tmp_path)
    out = tmp_path / "ro"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(tiny_spec(n_jobs=20, seeds=(0,))))
    if command == "bench":
        bench([FIG1], out, solvers=["fcfs"], time_limit=10, plots=False)
        args = ["bench", str(FIG1), "--solvers", "fcfs,cpsat", "--out", str(out), "--quiet"]
        store = out / "runs.sqlite"
    else:
        out.mkdir()
        store = out / "r.sqlite"
        run_sweep(spec, store)
        args = ["sweep", str(spec), "--out", str(store), "--quiet"]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for p in out.iterdir():
        p.chmod(0o444)
    out.chmod(folder)
    for d in (tmp_path, tmp_path.parent, tmp_path.parent.parent):
        d.chmod(0o755)  # the other user can reach the store
    try:
        p = cli(*args, cwd=tmp_path, prefix=prefix)
    finally:
        out.chmod(0o755)
    assert p.returncode == 2, p.stderr
    assert "read-only" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert {q.name: q.read_bytes() for q in out.iterdir()} == before  # no -wal, no -shm
