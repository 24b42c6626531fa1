"""``report`` and spec refusals through the command line: exit code 2, one short line
naming the file and the option or field, the closest names instead of every name, user
values cut short, and the store left byte-identical."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3

import pytest
from helpers import tiny_spec, write_json, write_toml

from sim.cli import main
from sim.sweep import run_sweep

#: no refusal may be longer than this (characters, with the prefix and a temporary path of about 90)
LONGEST = 400


def refused(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert len(err) < LONGEST, err
    return err


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "r.sqlite"
    run_sweep(tiny_spec(seeds=(0, 1), n_jobs=20), path)
    return path


def _copy(store, tmp_path, *statements):
    path = tmp_path / "c.sqlite"
    shutil.copy(store, path)
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.execute("PRAGMA journal_mode=DELETE")
    con.close()
    return path


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("statement, text", [
    ("""UPDATE cells SET metrics = '{"avg_wait": "abc"}' WHERE rowid = 3""",
     "metrics.avg_wait: expected a number, got 'abc'"),
    ("UPDATE cells SET metrics = '{bad' WHERE rowid = 3", "column metrics: invalid JSON"),
    ("UPDATE cells SET params = '[1, 2]' WHERE rowid = 3", "column params: expected a JSON"),
    ("""UPDATE meta SET value = '{"a": 1}' WHERE key = 'metrics'""", "meta metrics"),
    ("UPDATE meta SET value = 'x[' WHERE key = 'labels'", "meta labels"),
])
def test_a_corrupt_row_or_meta_is_named_with_its_file_and_field(store, tmp_path, capsys,
                                                                  statement, text):
    path = _copy(store, tmp_path, statement)
    before = _sha(path)
    err = refused(capsys, ["report", str(path)])
    assert "c.sqlite:" in err and text in err
    assert _sha(path) == before


@pytest.mark.parametrize("level", ["2", "1", "0", "-0.5", "nan", "inf"])
def test_a_confidence_level_outside_0_1_is_refused(store, capsys, level):
    err = refused(capsys, ["report", str(store), "--level", level])
    assert "r.sqlite: --level" in err and "between 0 and 1" in err


@pytest.mark.parametrize("argv, text", [
    (["--where", "bogus=1"], "--where 'bogus': unknown parameter; none close"),
    (["--where", "sff=1"], "closest: sf"),
    (["--where", "x" * 5000 + "=1"], "--where 'xxx"),
    (["--where", "nosep"], "--where 'nosep': expected KEY=VALUE"),
    # the report said "selected with sf=1 and sf=3" and kept only sf=3's cells
    (["--where", "sf=1", "--where", "sf=3"], "--where 'sf': given more than once"),
    (["--metric", "avg_wiat"], "closest: avg_wait"),
    (["--rows", "lod"], "--rows 'lod': unknown parameter; closest: load"),
    (["--cols", "polcy"], "--cols 'polcy': unknown parameter; closest: policy"),
    (["--baseline", "fcfz"], "--baseline 'fcfz': not a value of 'label'"),
])
def test_an_unknown_name_gets_the_closest_names_not_all(store, capsys, argv, text):
    err = refused(capsys, ["report", str(store), *argv])
    assert "r.sqlite:" in err and text in err


def test_out_onto_a_file_is_refused_naming_it_and_leaves_it(store, tmp_path, capsys):
    taken = tmp_path / "taken.md"
    taken.write_text("mine")
    err = refused(capsys, ["report", str(store), "--out", str(taken)])
    assert f"--out {taken}: exists and is not a directory" in err
    assert taken.read_text() == "mine"


def test_the_report_still_works(store, capsys):
    assert main(["report", str(store), "--where", "sf=3", "--level", "0.9"]) == 0
    assert "90% confidence" in capsys.readouterr().out


def test_a_deeply_nested_spec_is_refused_naming_the_file(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text('{"version": 1, "policies": ' + "[" * 100_000 + "]" * 100_000 + "}")
    err = refused(capsys, ["sweep", str(deep), "--out", str(tmp_path / "o.sqlite")])
    assert "deep.json:" in err and "nested" in err
    spec = tiny_spec(seeds=(0,))
    spec["policies"][2]["options"]["sf"] = [[[[[[[[[[1.0]]]]]]]]]]
    err = refused(capsys, ["sweep", str(write_json(tmp_path / "d2.json", spec)),
                           "--out", str(tmp_path / "o.sqlite")])
    assert "d2.json:" in err and "nested" in err
    toml = write_toml(tmp_path / "d3.toml", "version = 1\nx = " + "[" * 5000 + "]" * 5000)
    err = refused(capsys, ["sweep", str(toml), "--out", str(tmp_path / "o.sqlite")])
    assert "d3.toml:" in err
    assert not (tmp_path / "o.sqlite").exists()


@pytest.mark.parametrize("edit, key", [
    (lambda s: s["policies"].append({"name": "p" * 5000}), "policies[3].name"),
    (lambda s: s["policies"][2]["options"].update({"s" * 5000: 1}), "policies[2].options.sss"),
    (lambda s: s.update(metrics=["m" * 5000]), "metrics"),
    (lambda s: s.update(seeds=[10 ** 400]), "seeds"),
    (lambda s: s.update(wide="w" * 5000), "wide"),
    (lambda s: s.update({"k" * 5000: 1}), "kkk"),
])
def test_a_long_value_in_a_spec_is_echoed_cut_short(tmp_path, capsys, edit, key):
    spec = tiny_spec(seeds=(0,))
    edit(spec)
    path = write_json(tmp_path / "long.json", spec)
    err = refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])
    assert f"long.json: {key}" in err
