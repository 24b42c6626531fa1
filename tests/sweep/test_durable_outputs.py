"""bench's outputs, the benchmark library's files and a problem's ``dump`` reach the disk
before they replace what was there: each is written to a temporary file that is fsynced,
renamed over the target, and the folder fsynced after the rename (``instances.atomic``),
so a power loss or a kill leaves the old file or the new one, never a torn one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sim.problems import gang_schedule, insertion, slots
from sim.sweep import bench as bench_mod

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every fsync (of the path its descriptor names) and rename, in order."""
    seen: list[tuple[str, str]] = []
    fsync, replace = os.fsync, os.replace

    def spy_fsync(fd: int) -> None:
        seen.append(("fsync", os.path.realpath(f"/proc/self/fd/{fd}")))
        fsync(fd)

    def spy_replace(src, dst) -> None:
        seen.append(("replace", f"{os.path.realpath(src)} {os.path.realpath(dst)}"))
        replace(src, dst)

    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "replace", spy_replace)
    return seen


def assert_durable(seen: list[tuple[str, str]], target: Path) -> None:
    """``target`` came from a temporary file fsynced before the rename, and its folder
    was fsynced after it."""
    target = Path(os.path.realpath(target))
    renames = [i for i, (kind, what) in enumerate(seen)
               if kind == "replace" and what.endswith(f" {target}")]
    assert renames, f"{target} was not renamed into place: {seen}"
    i = renames[-1]
    tmp = seen[i][1].split(" ")[0]
    assert ("fsync", tmp) in seen[:i], f"{target}'s data not fsynced before the rename"
    assert ("fsync", str(target.parent)) in seen[i + 1:], f"{target.parent} not fsynced"


def test_bench_outputs_are_fsynced_before_their_rename(tmp_path, events):
    out = tmp_path / "out"
    bench_mod.bench([FIG1], out, solvers=["fcfs"], time_limit=10, plots=False)
    for name in ("runs.csv", "report.md"):
        assert_durable(events, out / name)


def test_the_library_table_is_fsynced_before_its_rename(tmp_path, events, monkeypatch):
    lib = tmp_path / "library" / "kresource_epochs"
    lib.mkdir(parents=True)
    (lib / "figure1.json").write_bytes(FIG1.read_bytes())
    monkeypatch.setattr(bench_mod, "library_dir", lambda family: lib)
    s = bench_mod.bench([lib / "figure1.json"], tmp_path / "out", solvers=["fcfs"],
                        time_limit=10, plots=False)
    assert_durable(events, bench_mod.write_library_table("kresource_epochs", s.runs))


@pytest.mark.parametrize("make", [lambda: slots.random_problem(1),
                                  lambda: insertion.random_problem(1, 3),
                                  lambda: gang_schedule.random_problem(1)],
                         ids=["slots", "insertion", "gang_schedule"])
def test_a_problem_dump_is_fsynced_before_its_rename(tmp_path, events, make):
    path = tmp_path / "p.json"
    path.write_text("an earlier file")
    make().dump(path)
    assert_durable(events, path)


#: writers left in place: temporary problem files a benchmark solves (in its own
#: temporary folder) and numba's cache stamp; none is a result
IN_PLACE = {
    "sim/numba_cache.py": 1,
    "sim/experiments/engine/limits_bench.py": 4,
    "sim/experiments/engine/mip_bench.py": 1,
}


def test_no_result_is_written_in_place():
    """Every file of results (``sim/experiments/*/results``, a report, a library file)
    goes through ``instances.atomic.write_atomic``: ``Path.write_text`` and
    ``write_bytes`` appear only where :data:`IN_PLACE` allows them."""
    import re

    found: dict[str, int] = {}
    for top in ("sim", "models", "instances", "heuristics"):
        for path in (ROOT / top).rglob("*.py"):
            n = len(re.findall(r"\.write_(?:text|bytes)\(", path.read_text()))
            if n:
                found[str(path.relative_to(ROOT))] = n
    assert found == IN_PLACE
