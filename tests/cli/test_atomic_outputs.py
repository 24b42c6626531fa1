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
