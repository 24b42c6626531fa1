"""The results store: one SQLite file, one row per cell.

Every row carries the cell's parameters (``params``, canonical JSON, plus the main ones
as columns for SQL), its status (``done`` or ``failed`` with ``error``), the metrics, the
full policy configuration, the trace file's SHA-256 and that of the jobs simulated, the
cleaning report, the code version, the seed, and the timings. Open it with any SQLite
client, for example::

    sqlite3 results.sqlite "select label, json_extract(metrics, '$.avg_wait') from cells"

Safety: the store runs in WAL mode and finished cells are committed by the one process
that writes (workers only compute), each in its own transaction or a few short ones
together (``put_many``, all or none), so a run killed with SIGKILL at any moment loses at
most the cells in flight and the batch not yet committed, and never corrupts the file.
A done row is never replaced; a failed row is replaced only by a rerun of that cell
(``--retry-failed``), and rows are never deleted.

A store remembers the spec's name and format version; opening it for another spec or
format version, or a file that is not a store (a directory or device, an empty file for
reading, an SQLite file without the store's tables and columns), raises ``StoreError``
(a ValueError) naming the file and the key, and changes nothing: an existing file is
checked through a read-only connection before anything is written, and the commands
that only read (``report``) never open it for writing.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

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


def _expected_columns() -> dict[str, list[str]]:
    """Column names of each table of the layout, read from ``_SCHEMA`` itself."""
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(_SCHEMA)
        return {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
                for t in ("meta", "cells")}
    finally:
        con.close()


#: the columns of every table of the layout
COLUMNS = _expected_columns()


def _check_path(path: Path, create: bool) -> bool:
    """Whether ``path`` exists; StoreError for a path that can only be refused (missing
    with ``create=False``, a directory or device, a file that is not SQLite)."""
    if not path.exists():
        if path.is_symlink():
            raise StoreError(f"{path}: a dangling symbolic link, not a results store")
        if not create:
            raise StoreError(f"{path}: no such results store")
        return False
    if not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file (a device, a pipe?)"
        raise StoreError(f"{path}: {kind}; a results store is a regular file path")
    if path.stat().st_size > 0:
        with open(path, "rb") as fh:
            magic = fh.read(16)
        if magic != b"SQLite format 3\x00":
            raise StoreError(f"{path}: not a results store (not an SQLite file); "
                             "nothing was changed")
    return True


def check_writable(path: Path) -> None:
    """Raise StoreError when ``path`` (a file or directory, existing or not) cannot be
    written: it, or the nearest folder that exists above it, is read-only. Nothing is
    created."""
    path = Path(path)
    probe = path
    while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not os.access(probe, os.W_OK | (os.X_OK if probe.is_dir() else 0)):
        what = "folder" if probe.is_dir() else "file"
        raise StoreError(f"{path}: read-only ({probe} is a {what} this user cannot write); "
                         "nothing was changed")


def _lock(path: Path) -> int:
    """An exclusive lock (``flock``) on the store file, held while it is open for
    writing; StoreError when another process holds it. Creates the file when missing."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise StoreError(f"{path}: cannot write the results store ({exc.strerror or exc}); "
                         "nothing was changed") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StoreError(f"{path}: another sweep or bench is writing this results store; "
                         "wait for it to end or give another --out") from None
    return fd


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing next to the file.

    ``mode=ro`` never changes the database, but on a WAL-mode file it creates the
    ``-wal`` and ``-shm`` files when they are missing. They are missing only when no
    writer has the store open (a writer keeps them until it closes), and the file then
    holds every committed cell: it is opened ``immutable`` (no locks, no side files).
    When they exist (a sweep is running, or one was killed), ``mode=ro`` reads through
    them.
    """
    side = any(Path(f"{path}{s}").exists() for s in ("-wal", "-shm"))
    uri = "file:" + quote(str(path.resolve()), safe="/") + "?mode=ro"
    if not side:
        uri += "&immutable=1"
    try:
        return sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: cannot open the results store ({exc}); nothing was "
                         "changed") from None


def _check_layout(path: Path, con: sqlite3.Connection, readonly: bool) -> dict[str, str]:
    """Check integrity, tables and columns; return the meta rows."""
    try:
        ok = con.execute("PRAGMA quick_check").fetchone()[0]
        if ok != "ok":
            raise StoreError(f"{path}: corrupted results store ({_cut(ok)}); nothing was "
                             "changed")
        tables = {r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables and not readonly:
            return {}  # an SQLite file without tables: it becomes the store
        if not {"meta", "cells"} <= tables:
            shown = sorted(tables)[:5]
            raise StoreError(f"{path}: an SQLite file but not a results store (tables "
                             f"{_short(shown)}{'...' if len(tables) > 5 else ''}); nothing "
                             "was changed")
        found = {t: [r[1] for r in con.execute(f"PRAGMA table_info({t})")]
                 for t in ("meta", "cells")}
        if found["meta"] != COLUMNS["meta"]:
            raise StoreError(f"{path}: table meta: columns {_short(found['meta'])}, a "
                             f"results store has {COLUMNS['meta']}; nothing was changed")
        meta = dict(con.execute("SELECT key, value FROM meta"))
        version = meta.get("schema_version")
        if version is not None and version != str(SCHEMA_VERSION):
            raise StoreError(f"{path}: schema_version: the store has layout version "
                             f"{_short(version)}, this schedsearch reads {SCHEMA_VERSION}; "
                             "nothing was changed")
        if found["cells"] != COLUMNS["cells"]:
            missing = [c for c in COLUMNS["cells"] if c not in found["cells"]]
            extra = [c for c in found["cells"] if c not in COLUMNS["cells"]]
            raise StoreError(f"{path}: table cells: not the columns of a results store "
                             f"(missing {_short(missing)}, unexpected {_short(extra)}); "
                             "nothing was changed")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: corrupted or not a results store ({_cut(str(exc))}); "
                         "nothing was changed") from None
    return meta


def _check_meta(path: Path, meta: dict[str, str], spec_name: str | None,
                spec_version: int | None) -> None:
    if spec_version is not None and "spec_version" in meta \
            and meta["spec_version"] != str(spec_version):
        raise StoreError(f"{path}: spec_version: the store was written for spec format "
                         f"version {_short(meta['spec_version'])}, the spec has version "
                         f"{spec_version}; use another --out")
    if spec_name is not None and "spec_name" in meta and meta["spec_name"] != spec_name:
        raise StoreError(f"{path}: name: the store holds the results of spec "
                         f"{_short(meta['spec_name'])}, not {_short(spec_name)}; use another "
                         "--out")


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters (the cut marked with ``...``)."""
    return _cut(repr(value), limit)


def _cut(text: str, limit: int = 80) -> str:
    """``text`` on one line, cut to ``limit`` characters (the cut marked with ``...``)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Store:
    """A results store (see the module docstring). Use :meth:`open`."""

    def __init__(self, path: Path, con: sqlite3.Connection, lock: int | None = None) -> None:
        self.path = path
        self.con = con
        self._lock = lock
        self._staged: dict[str, str] = {}

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, path: str | Path, *, spec_name: str | None = None,
             spec_version: int | None = None, create: bool = True,
             readonly: bool | None = None) -> Store:
        """Open (or create) the store at ``path``.

        An existing file is checked through a read-only connection first (SQLite
        header, integrity, the tables and their columns, the layout and spec versions),
        so a refused file keeps every byte and gets no ``-wal``/``-shm``/``-journal``
        file beside it.

        Parameters
        ----------
        spec_name, spec_version : optional
            When given, an existing store must have been written for the same spec
            name and spec format version; a new store records them.
        create : bool
            Create the file when missing (else StoreError).
        readonly : bool, optional
            Open read-only (``mode=ro``: no journal mode change, no table created, no
            meta row written); default ``not create``. A read-only open refuses an empty
            file or an SQLite file without the store's tables.
        """
        path = Path(path)
        if readonly is None:
            readonly = not create
        if readonly and create:
            raise ValueError("Store.open: readonly=True needs create=False")
        exists = _check_path(path, create)
        con = None
        if exists and path.stat().st_size > 0:
            con = _connect_readonly(path)
            try:
                meta = _check_layout(path, con, readonly)
                _check_meta(path, meta, spec_name, spec_version)
            except BaseException:
                con.close()
                raise
            if readonly:
                return cls(path, con)
            con.close()
        elif readonly:
            raise StoreError(f"{path}: an empty file, not a results store; nothing was changed")
        check_writable(path)
        if exists:
            check_writable(path.parent)  # the -wal and -shm files go beside it
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        lock = _lock(path)
        try:
            con = sqlite3.connect(path, timeout=30, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            os.close(lock)
            raise StoreError(f"{path}: cannot write the results store ({exc})") from None
        store = cls(path, con, lock)
        with store.transaction():
            store._set_meta("schema_version", str(SCHEMA_VERSION), overwrite=False)
            if spec_version is not None:
                store._set_meta("spec_version", str(spec_version), overwrite=False)
            if spec_name is not None:
                store._set_meta("spec_name", spec_name, overwrite=False)
        return store

    def close(self) -> None:
        self.con.close()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

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

    def stage_meta(self, **items: str) -> None:
        """Meta rows written in the transaction of the next :meth:`put` (so a failed put
        leaves the meta as it was), or by :meth:`flush_meta`."""
        self._staged.update(items)

    def flush_meta(self) -> None:
        """Write the staged meta rows now (when no cell was put); rows that hold these
        values already are not written again, so a run that stores nothing leaves the
        file's bytes as they were."""
        stored = self.meta()
        changed = {k: v for k, v in self._staged.items() if stored.get(k) != v}
        if changed:
            self.set_meta(**changed)
        self._staged = {}

    # ------------------------------------------------------------------ checks
    @staticmethod
    def check_cell(cell: dict[str, Any], source: str = "<spec>") -> None:
        """Raise StoreError naming the parameter when a cell could not be stored (a seed
        outside SQLite's 64-bit INTEGER, parameters that are not JSON)."""
        seed = cell.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or not -(2 ** 63) <= seed < 2 ** 63):
            raise StoreError(f"{source}: seed: {_short(seed)} does not fit the store's "
                             "64-bit INTEGER column")
        try:
            _dumps(cell)
        except (TypeError, ValueError, RecursionError) as exc:
            raise StoreError(f"{source}: cell parameters are not storable as JSON "
                             f"({_cut(str(exc))})") from None

    # ------------------------------------------------------------------ cells
    def statuses(self) -> dict[str, str]:
        """Cell key -> status of every stored cell."""
        return dict(self.con.execute("SELECT key, status FROM cells"))

    def put(self, key: str, cell: dict[str, Any], row: dict[str, Any],
            code_version: str) -> bool:
        """Commit one cell's result; returns False (and changes nothing) when the cell
        is already done."""
        return self.put_many([(key, cell, row)], code_version) == 1

    def put_many(self, results: list[tuple[str, dict[str, Any], dict[str, Any]]],
                 code_version: str) -> int:
        """Commit several cells' results (key, cell, row) in one transaction: all of them
        or, when the process dies first, none. A cell already done is left as it is.
        Returns the number of rows written."""
        if not results:
            return 0
        finished = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        records = [self._values(key, cell, row, code_version, finished)
                   for key, cell, row in results]
        cols = ", ".join(records[0])
        marks = ", ".join("?" for _ in records[0])
        update = ", ".join(f"{c} = excluded.{c}" for c in records[0] if c != "key")
        sql = (f"INSERT INTO cells ({cols}) VALUES ({marks}) ON CONFLICT(key) DO UPDATE SET "
               f"{update}, attempts = cells.attempts + 1 WHERE cells.status != 'done'")
        written = 0
        with self.transaction():
            for k, v in self._staged.items():
                self._set_meta(k, v)
            for values in records:
                written += self.con.execute(sql, tuple(values.values())).rowcount
        self._staged = {}
        return written

    @staticmethod
    def _values(key: str, cell: dict[str, Any], row: dict[str, Any], code_version: str,
                finished: str) -> dict[str, Any]:
        """The column values of one stored cell."""
        return {
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
            "finished_at": finished,
        }

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
                    try:
                        r[c] = json.loads(r[c])
                    except (TypeError, ValueError, RecursionError) as exc:
                        raise StoreError(f"{self.path}: cell {_short(r['key'])}: column {c}: "
                                         f"invalid JSON ({_cut(str(exc))})") from None
            yield r

    def count(self) -> dict[str, int]:
        return dict(self.con.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"))
