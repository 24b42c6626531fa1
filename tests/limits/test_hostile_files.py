"""Workload and problem files read as what they are: a gzipped K-resource workload keeps
every resource, options that do not apply to it are refused by name, and a device named
like an input file is refused before anything is read (through the command line: exit 2,
one line naming the file, no traceback)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from instances.kresource import KResourceSpec, generate, read_kswf, write_kswf
from sim.batch.runner import load_workload

pytestmark = pytest.mark.untimed  # tests/conftest.py: no clock, runs beside timed tests


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def _refused(r: subprocess.CompletedProcess, *names: str) -> None:
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])


@pytest.fixture(scope="module")
def k2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A K = 2 workload as .kswf, gzipped .kswf.gz, and gzipped under an SWF name."""
    d = tmp_path_factory.mktemp("k2")
    w = generate(KResourceSpec(K=2, jobs=300, rate=0.02, seed=3))
    plain = d / "w.kswf"
    write_kswf(plain, w)
    packed = gzip.compress(plain.read_bytes(), mtime=0)
    (d / "w.kswf.gz").write_bytes(packed)
    (d / "w.swf").write_bytes(packed)
    return {"plain": plain, "gz": d / "w.kswf.gz", "disguised": d / "w.swf"}


@pytest.mark.parametrize("name", ["gz", "disguised"])
def test_gzipped_kswf_keeps_every_resource(k2: dict[str, Path], name: str) -> None:
    ref = read_kswf(k2["plain"])
    for w in (read_kswf(k2[name]), load_workload(k2[name])):
        assert w.K == 2 and w.capacity == ref.capacity
        assert [j.demand for j in w.jobs] == [j.demand for j in ref.jobs]
        assert w.name == "w"


def test_gzipped_kswf_simulates_like_the_plain_file(k2: dict[str, Path]) -> None:
    out = [_cli("simulate", str(k2[n]), "--policy", "easy", "--json") for n in ("plain", "gz")]
    assert all(r.returncode == 0 for r in out), out
    assert out[0].stdout.split('"avg_wait"')[1][:30] == out[1].stdout.split('"avg_wait"')[1][:30]


@pytest.mark.parametrize(("option", "shown"), [
    (["--procs", "64"], "--procs"), (["--perfect-estimates"], "--perfect-estimates"),
    (["--wide", "clip"], "--wide")])
def test_options_that_do_not_apply_to_kswf_are_refused(k2: dict[str, Path], option: list[str],
                                                       shown: str) -> None:
    _refused(_cli("simulate", str(k2["gz"]), "--policy", "easy", *option), str(k2["gz"]),
             shown)
    with pytest.raises(ValueError, match=shown.lstrip("-").replace("-", ".")):
        load_workload(k2["plain"], **{"procs": {"procs": 64}, "perfect-estimates":
                                      {"perfect_estimates": True}, "wide": {"wide": "clip"}}[
            shown.lstrip("-")])


@pytest.mark.parametrize("suffix", [".kswf", ".swf", ".json"])
def test_a_device_named_like_an_input_is_refused_unread(tmp_path: Path, suffix: str) -> None:
    link = tmp_path / f"zero{suffix}"
    link.symlink_to("/dev/zero")
    if suffix == ".json":
        from sim.problems import read_json

        with pytest.raises(ValueError, match="not a regular file"):
            read_json(link)
        return
    _refused(_cli("simulate", str(link), "--policy", "easy", timeout=20), str(link),
             "not a regular file")


@pytest.mark.parametrize("reader", ["swf", "batsim"])
def test_the_python_readers_refuse_a_device_unread(tmp_path: Path, reader: str) -> None:
    """``read_swf`` and ``read_batsim`` called from Python (no CLI check before them) refuse
    a device, as the CLI does, instead of reading it until the memory runs out."""
    from instances.batsim import BatsimError, read_batsim
    from instances.swf import SwfError, read_swf

    read, error = (read_swf, SwfError) if reader == "swf" else (read_batsim, BatsimError)
    link = tmp_path / f"zero.{'swf' if reader == 'swf' else 'json'}"
    link.symlink_to("/dev/zero")
    with pytest.raises(error, match="not a regular file"):
        read(link)


def test_a_gzip_bomb_is_refused(tmp_path: Path) -> None:
    from instances import files

    bomb = tmp_path / "bomb.kswf"
    bomb.write_bytes(gzip.compress(b"; KResource: 2\n" + b" " * (3 << 20), mtime=0))
    with pytest.raises(ValueError, match="unpacks to over"):
        files.read_bytes(bomb, limit=1 << 20)
