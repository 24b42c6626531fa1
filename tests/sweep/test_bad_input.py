"""Bad specs and stores: one-line errors naming the file and key, exit code 2, and no
cell of an existing store lost."""

from __future__ import annotations

import copy
import shutil

import pytest
from helpers import snapshot, tiny_spec, write_json, write_toml

from sim.cli import main
from sim.sweep import SpecError, StoreError, run_sweep
from sim.sweep.spec import expand


def _one_line_error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("edit, key, text", [
    (lambda s: s["policies"].append({"name": "nosuch"}), "policies[3].name", "nosuch"),
    (lambda s: s["policies"][2]["options"].update(sff=2), "policies[2].options.sff",
     "does not take"),
    (lambda s: s["policies"][2]["options"].update(order="XYZ"), "policies[2].options",
     "XYZ"),
    (lambda s: s.update(metrics=["avg_wiat"]), "metrics", "avg_wiat"),
    (lambda s: s["workloads"].append({"name": "w", "trace": "NO-SUCH-TRACE"}),
     "workloads[1].trace", "NO-SUCH-TRACE"),
    (lambda s: s["workloads"][0]["synthetic"].update(n_jbos=3),
     "workloads[0].synthetic.n_jbos", "unknown key"),
    (lambda s: s.update(seeds=[]), "seeds", "zero cells"),
    (lambda s: s["workloads"][0]["synthetic"].update(load=[]),
     "workloads[0].synthetic.load", "zero cells"),
    (lambda s: s.update(procs=[]), "procs", "zero cells"),
    (lambda s: s.update(wide="shrink"), "wide", "shrink"),
    (lambda s: s.update(version=2), "version", "version 2"),
    (lambda s: s.update(polices=[]), "polices", "unknown key"),
    (lambda s: s["policies"][0].update(name=[1]), "policies[0].name", "(a string), got [1]"),
    (lambda s: s["policies"][0].update(name=None), "policies[0].name", "a string"),
])
def test_a_bad_spec_names_the_file_and_key(tmp_path, capsys, edit, key, text):
    spec = tiny_spec()
    edit(spec)
    path = write_json(tmp_path / "bad.json", spec)
    with pytest.raises(SpecError, match=f"bad.json: {key.replace('[', '.').replace(']', '.')}"):
        expand(spec, str(path))
    err = _one_line_error(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])
    assert f"bad.json: {key}:" in err and text in err
    assert not (tmp_path / "o.sqlite").exists()


def test_a_bad_toml_spec_names_the_file(tmp_path, capsys):
    path = write_toml(tmp_path / "s.toml", 'version = 1\nname = "x"\n[[policies]\n')
    assert "s.toml: invalid TOML" in _one_line_error(
        capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])


def test_a_json_spec_with_a_key_twice_is_refused(tmp_path, capsys):
    """TOML refuses a repeated key; the JSON form of a spec does too, instead of running
    the last value."""
    path = tmp_path / "s.json"
    path.write_text('{"version": 1, "name": "a", "name": "b", "workloads": [], '
                    '"policies": []}')
    err = _one_line_error(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])
    assert "s.json: invalid JSON: key 'name' appears twice in one object" in err
    assert not (tmp_path / "o.sqlite").exists()


@pytest.mark.parametrize("kind", ["device", "fifo", "directory"])
def test_a_spec_that_is_not_a_regular_file_is_refused_unread(tmp_path, capsys, kind):
    """A device (/dev/zero) or a pipe is never read (it would be read without end, or
    block for ever); a directory is refused the same way."""
    import os

    path = {"device": "/dev/zero", "fifo": str(tmp_path / "s.toml"),
            "directory": str(tmp_path / "d.toml")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    err = _one_line_error(capsys, ["sweep", path, "--out", str(tmp_path / "o.sqlite")])
    assert f"{path}: not a regular file (a sweep spec must be one)" in err
    assert not (tmp_path / "o.sqlite").exists()


def test_toml_and_json_specs_expand_alike(tmp_path):
    toml = write_toml(tmp_path / "s.toml", """
version = 1
name = "tiny"
seeds = [0, 1, 2]
metrics = ["avg_wait", "avg_bounded_slowdown"]
procs = [16, 32]

[[workloads]]
name = "syn"
synthetic = { n_jobs = 60, capacity = 32, load = [0.7, 0.9] }

[[policies]]
name = "fcfs"
[[policies]]
name = "conservative"
[[policies]]
name = "slack"
options = { sf = [1.0, 3.0] }
""")
    from sim.sweep.spec import load

    assert load(toml)[1] == expand(tiny_spec())


def test_a_store_of_another_spec_or_version_or_a_corrupted_one_is_refused_intact(
        tmp_path, capsys):
    spec = tiny_spec(seeds=(0,))
    out = tmp_path / "r.sqlite"
    run_sweep(spec, out)
    before = snapshot(out)
    other = copy.deepcopy(spec)
    other["name"] = "another"
    path = write_json(tmp_path / "other.json", other)
    err = _one_line_error(capsys, ["sweep", str(path), "--out", str(out)])
    assert "r.sqlite: name:" in err and "'tiny'" in err
    # a store written by another spec format version
    import sqlite3

    con = sqlite3.connect(out)
    con.execute("UPDATE meta SET value = '0' WHERE key = 'spec_version'")
    con.commit()
    con.close()
    path = write_json(tmp_path / "tiny.json", spec)
    err = _one_line_error(capsys, ["sweep", str(path), "--out", str(out)])
    assert "r.sqlite: spec_version:" in err
    assert snapshot(out) == before  # nothing lost
    # a corrupted store: the bytes stay as they were
    bad = tmp_path / "bad.sqlite"
    shutil.copy(out, bad)
    data = bytearray(bad.read_bytes())
    data[:16] = b"garbage garbage!"
    bad.write_bytes(bytes(data))
    err = _one_line_error(capsys, ["sweep", str(path), "--out", str(bad)])
    assert "bad.sqlite: not a results store" in err
    assert bad.read_bytes() == bytes(data)
    err = _one_line_error(capsys, ["report", str(bad)])
    assert "bad.sqlite" in err
    data2 = bytearray(out.read_bytes())
    data2[100:4096] = b"\xff" * (4096 - 100)  # the page header of the schema destroyed
    bad.write_bytes(bytes(data2))
    with pytest.raises(StoreError, match="bad.sqlite"):
        run_sweep(spec, bad)


@pytest.mark.parametrize("name", ["sweep_synthetic.toml", "sweep_kth.toml"])
def test_the_example_specs_expand(name):
    from pathlib import Path

    from sim.sweep.spec import load

    root = Path(__file__).resolve().parents[2]
    spec, cells = load(root / "sim" / "sweep" / "examples" / name)
    assert cells and spec["name"]
