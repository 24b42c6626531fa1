"""Hostile inputs to ``bench``: a problem file nested too deeply, with a 5000-digit number,
larger than ``solve`` reads, a dangling link, a FIFO, is a refused file named in the
report (never read whole, never opened blocking) and the bench goes on; options that
would be ignored are refused; a plug-in that cannot be used as declared is refused by
name."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

from sim.cli import main
from sim.problems import MAX_FILE_BYTES
from sim.sweep.bench import bench

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"


def _one_line_error(capsys, argv, *words) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert all(w in err for w in words), err
    return err


def _hostile_folder(d: Path) -> dict[str, str]:
    """Problem files a bench must refuse, by name, with what the refusal says."""
    shutil.copy(FIG1, d / "good.json")
    (d / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    (d / "digits.json").write_text('{"problem": "kresource_epochs", "capacity": [1'
                                   + "0" * 5000 + '], "demands": [[1]]}')
    with open(d / "huge.json", "wb") as fh:  # sparse: no disk used
        fh.truncate(MAX_FILE_BYTES + 1)
    (d / "dangling.json").symlink_to(d / "nowhere.json")
    os.mkfifo(d / "fifo.json")
    return {"nested.json": "nested too deeply", "digits.json": "invalid JSON",
            "huge.json": "over the", "dangling.json": "dangling symbolic link",
            "fifo.json": "not a regular file"}


def test_hostile_files_in_a_bench_folder_are_refused_by_name(tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    expected = _hostile_folder(d)
    s = bench([d], tmp_path / "out", solvers=["fcfs"], time_limit=10, plots=False)
    by = {Path(r["file"]).name: r for r in s.runs}
    assert by["good.json"]["status"] == "FEASIBLE"
    for name, message in expected.items():
        assert by[name]["status"] == "FAILED", name
        assert name in by[name]["error"] and message in by[name]["error"], by[name]["error"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert all(name in report for name in expected)
    named = bench([d / "fifo.json", d / "dangling.json"], tmp_path / "out2",
                  solvers=["fcfs"], plots=False)  # named one by one: the same refusals
    assert [r["status"] for r in named.runs] == ["FAILED", "FAILED"]


@pytest.mark.parametrize("argv, words", [
    (["--jobs", "0"], ("--jobs 0", "positive")),
    (["--update-library"], ("--update-library", "--library")),
    (["--dask", "tcp://127.0.0.1:1", "--jobs", "2"], ("--dask", "--jobs")),
])
def test_bench_options_that_would_be_ignored_are_refused(tmp_path, capsys, argv, words):
    out = tmp_path / "out"
    _one_line_error(capsys, ["bench", str(FIG1), "--solvers", "fcfs", "--out", str(out),
                             *argv], *words)
    assert not out.exists()


def test_sweep_refuses_dask_with_jobs(tmp_path, capsys):
    spec = tmp_path / "s.json"
    spec.write_text("{}")
    _one_line_error(capsys, ["sweep", str(spec), "--out", str(tmp_path / "r.sqlite"),
                             "--dask", "tcp://127.0.0.1:1", "--jobs", "2"], "--dask", "--jobs")
    assert not (tmp_path / "r.sqlite").exists()


# --------------------------------------------------------------------------- plug-ins
PLUGIN = textwrap.dedent('''
    from heuristics.kresource import solve_fcfs_ff

    def greedy(problem, *, time_limit=None, seed=0):
        return solve_fcfs_ff(problem, time_limit=time_limit, seed=seed)
''')


@pytest.mark.parametrize("entry, message", [
    ("kresource_epochs/fcfs = shadowplug:greedy", "shadows the built-in solver 'fcfs'"),
    ("noslash = shadowplug:greedy", "expected the name FAMILY/NAME"),
    ("no_such_family/greedy = shadowplug:greedy", "unknown problem family 'no_such_family'"),
])
def test_a_plugin_that_cannot_be_used_as_declared_is_refused_by_name(tmp_path, entry,
                                                                      message):
    import subprocess
    import sys

    (tmp_path / "shadowplug.py").write_text(PLUGIN)
    info = tmp_path / "shadowplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadowplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[schedsearch.solvers]\n{entry}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)}
    p = subprocess.run([sys.executable, "-m", "sim.cli", "bench", str(FIG1), "--solvers",
                        "fcfs", "--out", str(tmp_path / "out"), "--quiet"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr and "shadowplug" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()



@pytest.mark.parametrize("group, name, argv", [
    ("schedsearch.solvers", "kresource_epochs/greedy2",
     ["bench", str(FIG1), "--solvers", "fcfs", "--quiet", "--out", "out"]),
    ("schedsearch.policies", "mine", ["simulate", "KTH-SP2", "--policy", "fcfs", "--procs",
                                      "100", "--out", "out"]),
])
def test_two_plugins_claiming_one_name_are_both_refused(tmp_path, group, name, argv):
    """Neither of two packages' entry points with one name is taken (the import order
    would pick one silently): the first lookup of that kind fails naming both."""
    import subprocess
    import sys

    for pkg in ("plugone", "plugtwo"):
        (tmp_path / f"{pkg}.py").write_text(PLUGIN)
        info = tmp_path / f"{pkg}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {pkg}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {pkg}:greedy\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)}
    p = subprocess.run([sys.executable, "-m", "sim.cli", *argv], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "also claimed by" in p.stderr and "plugone" in p.stderr and "plugtwo" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("how", ["symlink", "copy", "twice"])
def test_one_problem_given_twice_is_refused_naming_both(how, tmp_path, capsys):
    """A link to a problem file, a byte-identical copy or the file named beside its
    directory would be the same instance counted twice in every statistic: refused in
    one line naming both paths, before anything is written."""
    d = tmp_path / "p"
    d.mkdir()
    shutil.copy(FIG1, d / "a.json")
    if how == "symlink":
        (d / "b.json").symlink_to(d / "a.json")
    elif how == "copy":
        shutil.copy(FIG1, d / "b.json")
    again = str(d / ".." / "p" / "a.json")  # another spelling of the same path
    paths = [str(d), again] if how == "twice" else [str(d)]
    other = again if how == "twice" else "b.json"
    out = tmp_path / "out"
    err = _one_line_error(capsys, ["bench", *paths, "--solvers", "fcfs", "--out", str(out)],
                          "a.json", other)
    assert ("byte-identical" in err) == (how == "copy"), err
    assert not out.exists()
    shutil.copy(FIG1, tmp_path / "c.json")  # a problem that differs is another problem
    data = (tmp_path / "c.json").read_text().replace('"problem"', '"name": "c", "problem"', 1)
    (tmp_path / "c.json").write_text(data)
    assert main(["bench", str(d / "a.json"), str(tmp_path / "c.json"), "--solvers", "fcfs",
                 "--out", str(out)]) == 0
