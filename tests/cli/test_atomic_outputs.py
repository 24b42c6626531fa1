"""Every user-named output is written whole or not at all (``instances.atomic``): a write
that fails (a full disk, a file-size limit) leaves an existing output byte-identical and
no temporary file behind."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from instances import atomic
from instances.atomic import write_atomic
from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
OLD = b"an earlier output, to keep\n"
SWF = ("; MaxProcs: 8\n" + "".join(f"{i} {i * 10} -1 30 2 -1 -1 2 40 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                   for i in range(1, 200))).encode()


def _disk_full(monkeypatch):
    def fail(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", fail)


def test_simulate_out_survives_a_file_size_limit(tmp_path):
    trace = tmp_path / "in.swf"
    trace.write_bytes(SWF)
    out = tmp_path / "out.swf"
    out.write_bytes(OLD)
    cmd = (f"ulimit -f 2; exec {sys.executable} -m sim.cli simulate {trace} --policy fcfs "
           f"--out {out} --quiet")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 2, r.stderr
    assert "File too large" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert out.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.swf", "out.swf"]


def _sources(to: Path) -> None:
    """The packages' Python sources, without bytecode, under ``to``."""
    import shutil

    for pkg in ("sim", "models", "heuristics", "instances"):
        shutil.copytree(ROOT / pkg, to / pkg, ignore=lambda d, names: [
            n for n in names if n == "__pycache__" or (Path(d, n).is_file() and
                                                        not n.endswith(".py"))])


def test_a_run_under_a_file_size_limit_leaves_later_runs_working(tmp_path):
    """CPython caches bytecode with one unchecked write: a first run under ``ulimit -f``
    that wrote bytecode would leave truncated files, and every later run would fail at
    import. A fresh copy of the sources, bytecode writing on: the limited run is refused
    in one line, the next one (no limit) runs."""
    src = tmp_path / "src"
    _sources(src)
    trace = tmp_path / "in.swf"
    trace.write_bytes(SWF)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                            "PYTHONPYCACHEPREFIX")}
    run = f"{sys.executable} -m sim.cli simulate {trace} --policy fcfs --quiet --out"
    limited = subprocess.run(["bash", "-c", f"ulimit -f 2; exec {run} {tmp_path / 'a.swf'}"],
                             capture_output=True, text=True, cwd=src, env=env, timeout=120)
    assert limited.returncode == 2, limited.stderr
    assert "File too large" in limited.stderr
    free = subprocess.run(["bash", "-c", f"exec {run} {tmp_path / 'b.swf'}"],
                          capture_output=True, text=True, cwd=src, env=env, timeout=120)
    assert free.returncode == 0, free.stderr
    assert (tmp_path / "b.swf").read_bytes().count(b"\n") > 199
    assert any(src.glob("sim/cli/__pycache__/*.pyc"))   # the free run wrote bytecode


@pytest.mark.parametrize("fmt", ["swf", "kswf"])
def test_simulate_out_survives_a_full_disk(tmp_path, monkeypatch, capsys, fmt):
    trace = tmp_path / "in.swf"
    trace.write_bytes(SWF)
    out = tmp_path / f"out.{fmt}"
    out.write_bytes(OLD)
    _disk_full(monkeypatch)
    argv = ["simulate", str(trace), "--policy", "easy", "--out", str(out), "--quiet"]
    assert main(argv) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert out.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.swf", out.name]


def test_generated_problems_and_kswf_survive_a_full_disk(tmp_path, monkeypatch, capsys):
    out = tmp_path / "w.kswf"
    out.write_bytes(OLD)
    _disk_full(monkeypatch)
    assert main(["generate", "kresource", "--jobs", "50", "--rate", "0.01",
                 "--out", str(out)]) == 2
    assert out.read_bytes() == OLD
    assert main(["generate", "grouping", "--n", "2", "--out", str(tmp_path / "p")]) == 2
    assert list((tmp_path / "p").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p", "w.kswf"]


def test_a_problem_set_is_written_whole_or_not_at_all(tmp_path, monkeypatch, capsys):
    calls = []
    real = os.fsync

    def second_fails(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 3:  # file 1, its directory, then file 2
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", second_fails)
    assert main(["generate", "grouping", "--n", "3", "--out", str(tmp_path / "p")]) == 2
    assert len(calls) == 3
    assert list((tmp_path / "p").iterdir()) == []


def test_report_and_plots_survive_a_full_disk(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from sim.sweep.plots import save

    png = tmp_path / "fig.png"
    png.write_bytes(OLD)
    fig = Figure()
    fig.add_subplot().plot([0, 1], [1, 0])
    _disk_full(monkeypatch)
    with pytest.raises(OSError, match="No space"):
        save(fig, png)
    assert png.read_bytes() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]


def test_write_atomic_keeps_permissions_and_writes_through_links(tmp_path):
    target = tmp_path / "t.txt"
    target.write_bytes(OLD)
    os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomic(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "t.txt"]
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path, "x")
