"""Run a sweep: expand the spec, skip the cells the store holds, run the rest on one
process, a local process pool, or a Dask cluster, and commit the results as they come.

From Python::

    from sim.sweep import run_sweep
    summary = run_sweep("sweep.toml", "results.sqlite", jobs=2)

Whatever runs the cells (in-process, ``jobs`` pool workers, or ``dask`` workers), the
store ends up with the same rows: cells are deterministic and only this process writes.

Dask: ``dask="tcp://scheduler:8786"`` (or a ``distributed.Client``) sends every cell to
that cluster; the workers need schedsearch installed and the trace files at the same
paths (bundled traces always are). See the README for a dask-jobqueue example (Slurm,
PBS).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.sweep import spec as spec_mod
from sim.sweep.cell import run_cell
from sim.sweep.store import Store


@dataclass
class SweepSummary:
    """What a call to :func:`run_sweep` did."""

    store: Path
    cells: int
    skipped: int = 0
    ran: int = 0
    done: int = 0
    failed: int = 0
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)  # (label, error)

    def text(self) -> str:
        s = (f"{self.store}: {self.cells} cells in the spec, {self.skipped} already in the "
             f"store, {self.ran} run ({self.done} done, {self.failed} failed) in "
             f"{self.seconds:.1f} s")
        for label, err in self.errors[:5]:
            s += f"\n  failed: {label}: {err}"
        if len(self.errors) > 5:
            s += f"\n  ... {len(self.errors) - 5} more failures (see the store)"
        return s


_CODE_VERSION: str | None = None


def code_version() -> str:
    """The git commit of the source tree (``+dirty`` with uncommitted changes) when it
    is a git checkout, else the installed package version."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        root = Path(__file__).resolve().parents[2]
        version = None
        if (root / ".git").exists():
            try:
                head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                                      capture_output=True, text=True, timeout=10)
                dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                        "--untracked-files=no"],
                                       capture_output=True, text=True, timeout=10)
                if head.returncode == 0:
                    version = head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
            except (OSError, subprocess.SubprocessError):
                version = None
        if version is None:
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as pkg_version

            try:
                version = "schedsearch " + pkg_version("schedsearch")
            except PackageNotFoundError:
                version = "unknown"
        _CODE_VERSION = version
    return _CODE_VERSION


class _Progress:
    """tqdm bar with done / running / failed counts and the time left."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if enabled and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="cell", file=sys.stderr, dynamic_ncols=True,
                            bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} "
                                       "[{elapsed}<{remaining}{postfix}]")
        self.failed = 0

    def update(self, running: int, failed: bool) -> None:
        self.failed += bool(failed)
        if self.bar is not None:
            self.bar.set_postfix_str(f"running {running}, failed {self.failed}", refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _pending(store: Store, cells: list[dict[str, Any]], retry_failed: bool
             ) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    status = store.statuses()
    todo = []
    for c in cells:
        k = spec_mod.cell_key(c)
        st = status.get(k)
        if st is None or (st == "failed" and retry_failed):
            todo.append((k, c))
    return todo, len(cells) - len(todo)


def die_with_parent(interval: float = 0.5) -> None:
    """Make this worker process end when the process that started it is gone.

    A pool worker blocked on its task pipe never notices a parent killed by SIGKILL and
    would hold the store open forever; a daemon thread that polls the parent's pid ends
    it within ``interval`` seconds. Used as the pool's initializer.
    """
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def worker_count(jobs: int | None, cells: int) -> int:
    """Worker processes for ``cells`` cells: ``jobs`` (None = every core), never more
    than the cells to run nor than the machine's cores (``os.cpu_count()``), at least 1."""
    cores = os.cpu_count() or 1
    wanted = cores if jobs is None else jobs
    return max(1, min(wanted, cells, cores))


def _run_chunk(work: Callable[[dict[str, Any]], dict[str, Any]], cells: list[dict[str, Any]]
               ) -> tuple[list[dict[str, Any]], float]:
    """Run ``cells`` one after the other in a pool worker: their rows and the wall-clock
    seconds they took together (a module-level function, so that it pickles)."""
    t0 = time.perf_counter()
    rows = [work(c) for c in cells]
    return rows, time.perf_counter() - t0


class _ChunkSizer:
    """How many cells the next pool task takes: one until a cell's cost is known, then
    as many as fill ``batch_seconds`` of work, never more than the cells left divided
    by twice the workers, so the last tasks stay small and every worker ends about
    together. ``batch_seconds`` = 0: always one."""

    def __init__(self, batch_seconds: float, jobs: int) -> None:
        self.batch_seconds = batch_seconds
        self.jobs = jobs
        self.cells = 0
        self.seconds = 0.0

    def add(self, cells: int, seconds: float) -> None:
        self.cells += cells
        self.seconds += seconds

    def size(self, left: int) -> int:
        if self.batch_seconds <= 0 or not self.cells:
            return 1
        per_cell = max(self.seconds / self.cells, 1e-6)
        return max(1, min(int(self.batch_seconds / per_cell), left // (2 * self.jobs)))


def run_cells(store: Store, todo: list[tuple[str, dict[str, Any]]], *, jobs: int = 1,
              dask: Any = None, progress: bool = False,
              on_row: Callable[[str, dict[str, Any], dict[str, Any]], None] | None = None,
              work: Callable[[dict[str, Any]], dict[str, Any]] = run_cell,
              batch_seconds: float = 0.0) -> tuple[int, int, list[tuple[str, str]]]:
    """Run ``todo`` (key, cell) pairs and commit every result to ``store`` as it comes
    (``on_row`` is called with each row once it is committed).

    ``work`` turns a cell into its row (a module-level function, so that it pickles to
    pool and Dask workers): a policy on a trace by default, or a solver on a problem
    file (``sim.sweep.bench.run_bench_cell``).

    ``batch_seconds`` > 0 is for many short cells (a bench's runs take milliseconds): a
    pool task then runs several cells, about ``batch_seconds`` of work (``_ChunkSizer``),
    and the cells finished within about ``batch_seconds`` are committed in one
    transaction, so neither the pool's messages nor the store's commits cost a cell
    more than its own run. A killed run loses at most that much finished work besides
    the cells in flight. With 0 (the default), one cell per task, each result committed
    as soon as it arrives (results that arrive together, in one transaction).

    Returns ``(done, failed, errors)``."""
    version = code_version()
    jobs = worker_count(jobs, len(todo))
    bar = _Progress(len(todo), progress)
    done = failed = 0
    errors: list[tuple[str, str]] = []
    pending: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    last_commit = time.perf_counter()
    writing = False  # a commit that raised is not tried again on the way out

    def commit() -> None:
        nonlocal last_commit, writing
        writing = True
        store.put_many(pending, version)
        writing = False
        for key, cell, row in pending:
            if on_row is not None:
                on_row(key, cell, row)
        pending.clear()
        last_commit = time.perf_counter()

    def record(key: str, cell: dict[str, Any], row: dict[str, Any], running: int) -> None:
        nonlocal done, failed
        pending.append((key, cell, row))
        ok = row["status"] == "done"
        done += ok
        failed += not ok
        if not ok:
            errors.append((cell.get("label", "?"), row.get("error") or "?"))
        bar.update(running, not ok)

    def maybe_commit() -> None:
        if time.perf_counter() - last_commit >= batch_seconds:
            commit()

    def record_now(*args: Any) -> None:
        record(*args)
        commit()

    try:
        if dask is not None:
            _run_dask(todo, dask, record_now, work)
        elif jobs <= 1 or len(todo) <= 1:
            for i, (key, cell) in enumerate(todo):
                record(key, cell, work(cell), min(1, len(todo) - i - 1))
                maybe_commit()
        else:
            _run_pool(todo, jobs, work, batch_seconds, record, maybe_commit)
    finally:
        try:
            if pending and not writing:  # the last batch, also of an interrupted run
                commit()
        finally:
            bar.close()
    return done, failed, errors


def _run_pool(todo: list[tuple[str, dict[str, Any]]], jobs: int,
              work: Callable[[dict[str, Any]], dict[str, Any]], batch_seconds: float,
              record: Callable[..., None], maybe_commit: Callable[[], None]) -> None:
    """Run ``todo`` on ``jobs`` pool workers, ``2 * jobs`` tasks in flight (each worker
    has its next task waiting), chunks sized by :class:`_ChunkSizer`."""
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    queue = deque(todo)
    sizer = _ChunkSizer(batch_seconds, jobs)
    with ProcessPoolExecutor(max_workers=jobs, initializer=die_with_parent) as pool:
        flight: dict[Any, list[tuple[str, dict[str, Any]]]] = {}

        def fill() -> None:
            while queue and len(flight) < 2 * jobs:
                chunk = [queue.popleft() for _ in range(min(sizer.size(len(queue)),
                                                            len(queue)))]
                flight[pool.submit(_run_chunk, work, [c for _, c in chunk])] = chunk

        fill()
        while flight:
            finished, _ = wait(flight, return_when=FIRST_COMPLETED)
            for f in finished:
                chunk = flight.pop(f)
                rows, seconds = f.result()
                sizer.add(len(chunk), seconds)
                running = min(jobs, len(flight))
                for (key, cell), row in zip(chunk, rows, strict=True):
                    record(key, cell, row, running)
            fill()
            maybe_commit()


def _run_dask(todo: list[tuple[str, dict[str, Any]]], address: Any,
              record: Callable[..., None], work: Callable[..., dict[str, Any]] = run_cell
              ) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ValueError("--dask needs the 'distributed' package: pip install "
                         "'schedsearch[dask]'") from None
    own = not isinstance(address, Client)
    client = Client(address) if own else address
    try:
        run_id = uuid.uuid4().hex[:8]  # a retry in the same client must not reuse results
        futures = {client.submit(work, cell, key=f"cell-{key}-{run_id}", pure=False):
                   (key, cell) for key, cell in todo}
        remaining = len(futures)
        for f in as_completed(list(futures)):
            key, cell = futures[f]
            remaining -= 1
            record(key, cell, f.result(), remaining)
    finally:
        if own:
            client.close()


def run_sweep(spec: str | Path | dict[str, Any], out: str | Path, *, jobs: int | None = 1,
              dask: Any = None, retry_failed: bool = False, progress: bool = False,
              source: str | None = None) -> SweepSummary:
    """Run every cell of ``spec`` that ``out`` does not hold yet.

    Parameters
    ----------
    spec : path or dict
        A spec file (TOML or JSON) or an already parsed spec dictionary.
    out : path
        The SQLite results store (created when missing).
    jobs : int or None
        Worker processes of the local pool; None = every core; 1 = in this process;
        capped at the cells to run and at ``os.cpu_count()`` (ValueError below 1).
    dask : str or distributed.Client, optional
        Run on this Dask scheduler instead of the local pool.
    retry_failed : bool
        Rerun the cells stored as failed (otherwise they are skipped like done ones).
    progress : bool
        A progress bar on stderr.
    source : str, optional
        Name of the spec in error messages when ``spec`` is a dictionary.

    Raises
    ------
    SpecError, StoreError (ValueErrors)
        A bad spec, or a store of another spec / version / not a store; nothing run.
    """
    t0 = time.perf_counter()
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"--jobs {jobs!r}: expected a positive number of worker processes")
    if isinstance(spec, dict):
        src = source or "<spec>"
        checked = spec_mod.check_spec(spec, src)
        cells = spec_mod.expand(spec, src)
    else:
        src = str(spec)
        checked, cells = spec_mod.load(spec)
    for c in cells:  # every cell storable before anything is written
        Store.check_cell(c, src)
    store = Store.open(out, spec_name=checked["name"], spec_version=checked["version"])
    try:
        import json

        # written with the first stored cell: a run that stores nothing changes no meta
        store.stage_meta(metrics=json.dumps(checked["metrics"]),
                         labels=json.dumps(list(dict.fromkeys(c["label"] for c in cells))))
        todo, skipped = _pending(store, cells, retry_failed)
        n_jobs = worker_count(jobs, len(todo))
        done, failed, errors = run_cells(store, todo, jobs=n_jobs, dask=dask,
                                         progress=progress)
        store.flush_meta()
    finally:
        store.close()
    return SweepSummary(Path(out), len(cells), skipped, len(todo), done, failed,
                        time.perf_counter() - t0, errors)
