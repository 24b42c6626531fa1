"""Commands that only read a store, or refuse a file, leave every byte of it as it was
and create nothing beside it (no ``-wal``, ``-shm`` or ``-journal`` file), through the
command line: exit code 2, one line naming the file, no traceback."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import tiny_spec, write_json

from sim.sweep import StoreError, run_sweep
from sim.sweep.store import Store

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> tuple[int, str, str]:
    """``python -m sim.cli ARGS`` with this checkout first on the path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def refused(*args: str) -> str:
    code, _, err = cli(*args)
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def state(folder: Path) -> dict[str, str]:
    """SHA-256 of every file in ``folder`` (so a new side file shows too)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def _sqlite(path: Path, *statements: str, wal: bool = False) -> Path:
    con = sqlite3.connect(path)
    if wal:
        con.execute("PRAGMA journal_mode=WAL")
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()
    return path


def _store(path: Path) -> Path:
    run_sweep(tiny_spec(seeds=(0,), procs=[16]), path)
    return path


def _with(path: Path, *statements: str) -> Path:
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()
    return path


NOT_STORES = {
    "other.sqlite": (lambda p: _sqlite(p, "CREATE TABLE t (a)"), "not a results store"),
    "other-wal.sqlite": (lambda p: _sqlite(p, "CREATE TABLE t (a)", wal=True),
                         "not a results store"),
    "lookalike.sqlite": (lambda p: _sqlite(p, "CREATE TABLE meta (a, b)",
                                           "CREATE TABLE cells (x)"), "table meta: columns"),
    "lookalike-cells.sqlite": (lambda p: _sqlite(
        p, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE cells (key TEXT, status TEXT, colour TEXT)"), "table cells"),
    "no-tables.sqlite": (lambda p: _sqlite(p, "PRAGMA user_version = 3"),
                         "not a results store"),
    "empty.sqlite": (lambda p: p.write_bytes(b"") and p, "empty file"),
    "text.sqlite": (lambda p: p.write_text("hello\n") and p, "not an SQLite file"),
    "future.sqlite": (lambda p: _with(_store(p), "UPDATE meta SET value = '9' WHERE "
                                      "key = 'schema_version'"), "schema_version"),
}


@pytest.mark.parametrize("name", sorted(NOT_STORES))
def test_report_on_a_file_that_is_not_a_store_changes_no_byte(tmp_path, name):
    make, text = NOT_STORES[name]
    path = tmp_path / name
    make(path)
    before = state(tmp_path)
    err = refused("report", str(path))
    assert name in err and text in err
    assert state(tmp_path) == before


@pytest.mark.parametrize("name", ["other.sqlite", "other-wal.sqlite", "lookalike.sqlite",
                                  "lookalike-cells.sqlite", "text.sqlite", "future.sqlite"])
def test_sweep_into_a_file_that_is_not_a_store_changes_no_byte(tmp_path, name):
    make, text = NOT_STORES[name]
    path = tmp_path / name
    make(path)
    spec = write_json(tmp_path / "tiny.json", tiny_spec(seeds=(0,), procs=[16]))
    before = state(tmp_path)
    err = refused("sweep", str(spec), "--out", str(path), "--quiet")
    assert name in err and text in err
    assert state(tmp_path) == before


def test_report_reads_a_store_without_writing_anything(tmp_path):
    path = _store(tmp_path / "r.sqlite")
    before = state(tmp_path)
    assert set(before) == {"r.sqlite"}  # the writer removed its side files
    code, out, err = cli("report", str(path))
    assert code == 0, err
    assert "avg_wait" in out
    assert state(tmp_path) == before


def test_a_read_only_open_cannot_write(tmp_path):
    path = _store(tmp_path / "r.sqlite")
    with Store.open(path, create=False) as st:
        assert st.statuses()
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            st.set_meta(spec_name="other")


@pytest.mark.parametrize("target", ["/dev/null", "DIR"])
def test_sweep_out_must_be_a_regular_file(tmp_path, target):
    if target == "DIR":
        target = str(tmp_path)
    elif not Path(target).exists():
        pytest.skip("no /dev/null here")
    journal = Path(f"{target}-journal")
    had_journal = journal.exists()
    spec = write_json(tmp_path / "tiny.json", tiny_spec(seeds=(0,), procs=[16]))
    before = state(tmp_path)
    err = refused("sweep", str(spec), "--out", target, "--quiet")
    assert f"{target}:" in err and "regular file" in err
    assert state(tmp_path) == before
    assert journal.exists() == had_journal


def test_a_spec_with_an_unstorable_seed_leaves_the_store_as_it_was(tmp_path):
    """Seed 2^64 does not fit SQLite's INTEGER: refused by the spec check, before the
    store (and its meta) is touched."""
    path = _store(tmp_path / "r.sqlite")
    spec = tiny_spec(seeds=(0, 2 ** 64), procs=[16], metrics=["max_wait"])
    spec_file = write_json(tmp_path / "tiny.json", spec)
    before = state(tmp_path)
    err = refused("sweep", str(spec_file), "--out", str(path), "--quiet")
    assert "tiny.json: seed" in err and "18446744073709551616" in err
    assert state(tmp_path) == before


def test_a_failed_put_leaves_the_meta_as_it_was(tmp_path):
    """The meta rows of a sweep go in the transaction of its first stored cell: a put
    that fails rolls them back with it."""
    path = _store(tmp_path / "r.sqlite")
    with Store.open(path, create=False) as st:
        meta = st.meta()
    cell = {"workload": "w", "policy": "fcfs", "label": "fcfs", "seed": 2 ** 64}
    with pytest.raises(StoreError, match="seed"):
        Store.check_cell(cell, "x.json")
    with Store.open(path, spec_name="tiny", spec_version=1) as st:
        st.stage_meta(metrics=json.dumps(["max_wait"]), labels="[]")
        with pytest.raises(OverflowError):
            st.put("k", cell, {"status": "failed", "error": "e"}, "test")
        assert st.meta() == meta
        assert "k" not in st.statuses()
        cell["seed"] = 1
        assert st.put("k", cell, {"status": "failed", "error": "e"}, "test")
        assert json.loads(st.meta()["metrics"]) == ["max_wait"]
