"""The results store: one SQLite file, one row per cell.

Every row carries the cell's parameters (``params``, canonical JSON, plus the main ones
as columns for SQL), its status (``done`` or ``failed`` with ``error``), the metrics, the
full policy configuration, the trace file's SHA-256 and that of the jobs simulated, the
cleaning report, the code version, the seed, and the timings. Open it with any SQLite
client, for example::

    sqlite3 results.sqlite "select label, json_extract(metrics, '$.avg_wait') from cells"

Safety: the store runs in WAL mode and each finished cell is committed in its own
transaction by the one process that writes (workers only compute), so a run killed
with SIGKILL at any moment loses at most the cells in flight and never corrupts the
file. A done row is never replaced; a failed row is replaced only by a rerun of that
cell (``--retry-failed``), and rows are never deleted.

A store remembers the spec's name and format version; opening it for another spec or
format version, or a file that is not a store, raises ``StoreError`` (a ValueError)
naming the file and the key, and changes nothing.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: layout version of the store file
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('done', 'failed')),
    error TEXT,
    params TEXT NOT NULL,
    workload TEXT, policy TEXT, label TEXT, seed INTEGER,
    metrics TEXT, policy_config TEXT,
    trace_sha256 TEXT, workload_sha256 TEXT, cleaning TEXT,
    code_version TEXT,
    wall_seconds REAL, sim_seconds REAL, load_seconds REAL,
    worker TEXT, finished_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 1
);
"""

#: columns that hold JSON text
JSON_COLUMNS = ("params", "metrics", "policy_config", "cleaning")


class StoreError(ValueError):
    """A store that cannot be used: the message names the file and the key."""


def _dumps(x: Any) -> str | None:
    return None if x is None else json.dumps(x, sort_keys=True, separators=(",", ":"))


class Store:
    """A results store (see the module docstring). Use :meth:`open`."""

    def __init__(self, path: Path, con: sqlite3.Connection) -> None:
        self.path = path
        self.con = con

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path, *, spec_name: str | None = None,
             spec_version: int | None = None, create: bool = True) -> Store:
        """Open (or create) the store at ``path``.

        Parameters
        ----------
        spec_name, spec_version : optional
            When given, an existing store must have been written for the same spec
            name and spec format version; a new store records them.
        create : bool
            Create the file when missing (else StoreError).
        """
        path = Path(path)
        exists = path.exists()
        if not exists and not create:
            raise StoreError(f"{path}: no such results store")
        if exists and path.is_file() and path.stat().st_size > 0:
            with open(path, "rb") as fh:
                magic = fh.read(16)
            if magic != b"SQLite format 3\x00":
                raise StoreError(f"{path}: not a results store (not an SQLite file); "
                                 "nothing was changed")
        if not exists:
            path.parent.mkdir(parents=True, exist_ok=True)
        try:
            con = sqlite3.connect(path, timeout=30, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            if exists:
                ok = con.execute("PRAGMA quick_check").fetchone()[0]
                if ok != "ok":
                    con.close()
                    raise StoreError(f"{path}: corrupted results store ({ok}); nothing "
                                     "was changed")
                tables = {r[0] for r in con.execute(
                    "SELECT name FROM sqlite_master WHERE type='table'")}
                if tables and not {"meta", "cells"} <= tables:
                    con.close()
                    raise StoreError(f"{path}: an SQLite file but not a results store "
                                     f"(tables {sorted(tables)}); nothing was changed")
            con.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: corrupted or not a results store ({exc}); "
                             "nothing was changed") from None
        store = cls(path, con)
        meta = store.meta()
        if "schema_version" in meta and meta["schema_version"] != str(SCHEMA_VERSION):
            con.close()
            raise StoreError(f"{path}: schema_version: the store has layout version "
                             f"{meta['schema_version']}, this schedsearch writes "
                             f"{SCHEMA_VERSION}")
        if spec_version is not None and "spec_version" in meta \
                and meta["spec_version"] != str(spec_version):
            con.close()
            raise StoreError(f"{path}: spec_version: the store was written for spec format "
                             f"version {meta['spec_version']}, the spec has version "
                             f"{spec_version}; use another --out")
        if spec_name is not None and "spec_name" in meta and meta["spec_name"] != spec_name:
            con.close()
            raise StoreError(f"{path}: name: the store holds the results of spec "
                             f"{meta['spec_name']!r}, not {spec_name!r}; use another --out")
        with store.transaction():
            store._set_meta("schema_version", str(SCHEMA_VERSION), overwrite=False)
            if spec_version is not None:
                store._set_meta("spec_version", str(spec_version), overwrite=False)
            if spec_name is not None:
                store._set_meta("spec_name", spec_name, overwrite=False)
        return store

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ meta
    class _Tx:
        def __init__(self, con: sqlite3.Connection) -> None:
            self.con = con

        def __enter__(self) -> None:
            self.con.execute("BEGIN IMMEDIATE")

        def __exit__(self, et: Any, ev: Any, tb: Any) -> None:
            self.con.execute("ROLLBACK" if et is not None else "COMMIT")

    def transaction(self) -> Store._Tx:
        """A write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``)."""
        return Store._Tx(self.con)

    def meta(self) -> dict[str, str]:
        return dict(self.con.execute("SELECT key, value FROM meta"))

    def _set_meta(self, key: str, value: str, overwrite: bool = True) -> None:
        verb = "INSERT OR REPLACE" if overwrite else "INSERT OR IGNORE"
        self.con.execute(f"{verb} INTO meta (key, value) VALUES (?, ?)", (key, value))

    def set_meta(self, **items: str) -> None:
        with self.transaction():
            for k, v in items.items():
                self._set_meta(k, v)

    # ------------------------------------------------------------------ cells
    def statuses(self) -> dict[str, str]:
        """Cell key -> status of every stored cell."""
        return dict(self.con.execute("SELECT key, status FROM cells"))

    def put(self, key: str, cell: dict[str, Any], row: dict[str, Any],
            code_version: str) -> bool:
        """Commit one cell's result; returns False (and changes nothing) when the cell
        is already done."""
        values = {
            "key": key, "status": row["status"], "error": row.get("error"),
            "params": _dumps(cell), "workload": cell.get("workload"),
            "policy": cell.get("policy"), "label": cell.get("label"),
            "seed": cell.get("seed"), "metrics": _dumps(row.get("metrics")),
            "policy_config": _dumps(row.get("policy_config")),
            "trace_sha256": row.get("trace_sha256"),
            "workload_sha256": row.get("workload_sha256"),
            "cleaning": _dumps(row.get("cleaning")), "code_version": code_version,
            "wall_seconds": row.get("wall_seconds"), "sim_seconds": row.get("sim_seconds"),
            "load_seconds": row.get("load_seconds"), "worker": row.get("worker"),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        update = ", ".join(f"{c} = excluded.{c}" for c in values if c != "key")
        with self.transaction():
            cur = self.con.execute(
                f"INSERT INTO cells ({cols}) VALUES ({marks}) ON CONFLICT(key) DO UPDATE SET "
                f"{update}, attempts = cells.attempts + 1 WHERE cells.status != 'done'",
                tuple(values.values()))
        return cur.rowcount > 0

    def rows(self, status: str | None = "done") -> Iterator[dict[str, Any]]:
        """Stored rows as dictionaries (JSON columns decoded), ordered by key."""
        q = "SELECT * FROM cells"
        args: tuple[Any, ...] = ()
        if status is not None:
            q += " WHERE status = ?"
            args = (status,)
        cur = self.con.execute(q + " ORDER BY key", args)
        names = [d[0] for d in cur.description]
        for values in cur:
            r = dict(zip(names, values, strict=True))
            for c in JSON_COLUMNS:
                if r[c] is not None:
                    r[c] = json.loads(r[c])
            yield r

    def count(self) -> dict[str, int]:
        return dict(self.con.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"))
