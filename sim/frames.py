"""Results as pandas data frames (pandas is the optional extra ``frames``).

- :func:`store_frame`: a sweep store (or a bench's ``runs.sqlite``), one row per cell with
  its parameters, metrics and provenance;
- :func:`bench_frame`: a bench run, the columns of ``runs.csv``;
- :func:`result_frame`: one or more solver :class:`~sim.result.Result`, one row each;
- :func:`schedule_frame`: a simulated :class:`~sim.batch.machine.Schedule`, one row per job.

Times are in seconds (integer in schedules, wall clock in results).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from sim.batch.machine import Schedule
    from sim.result import Result


def _pd() -> Any:
    from sim.extras import require

    return require("pandas", "data frames")


def store_frame(path: str | Path, status: str | None = "done") -> pd.DataFrame:
    """The cells of a results store: parameters, metrics, and ``key``, ``status``,
    ``error``, ``code_version``, ``trace_sha256``, ``wall_seconds``...; ``status=None``
    keeps failed cells too."""
    from sim.sweep.report import load_rows

    rows = load_rows(path, status=status)
    return _pd().DataFrame([{k: v for k, v in r.items() if k != "cleaning"} for r in rows])


def bench_frame(bench: Any) -> pd.DataFrame:
    """A bench run: a :class:`~sim.sweep.bench.BenchSummary`, its list of runs, or the
    output directory holding ``runs.csv``."""
    from sim.sweep.bench import COLUMNS

    pd = _pd()
    if isinstance(bench, (str, Path)):
        return pd.read_csv(Path(bench) / "runs.csv")
    runs = getattr(bench, "runs", bench)
    return pd.DataFrame([{c: r[c] for c in COLUMNS} for r in runs], columns=list(COLUMNS))


def result_frame(results: Result | Iterable[Result]) -> pd.DataFrame:
    """One row per result: ``solver``, ``status``, ``objective``, ``bound``, ``gap`` (the
    solver's own optimality gap), ``runtime`` [s], ``seed``, ``note``."""
    from sim.result import Result

    if isinstance(results, Result):
        results = [results]
    cols = ("solver", "status", "objective", "bound", "gap", "runtime", "seed", "note")
    return _pd().DataFrame([{"solver": r.solver, "status": r.status.value,
                             "objective": r.objective, "bound": r.bound, "gap": r.gap,
                             "runtime": r.runtime, "seed": r.seed, "note": r.note}
                            for r in results], columns=list(cols))


def schedule_frame(schedule: Schedule) -> pd.DataFrame:
    """One row per job of a simulated schedule, in the workload's order: ``id``,
    ``submit``, ``start``, ``end``, ``run``, ``wait``, ``response`` [s], ``slowdown``,
    ``bounded_slowdown``, ``procs``, ``killed``."""
    from sim.batch.metrics import job_metrics

    m = job_metrics(schedule)
    frame = {"id": [j.id for j in schedule.workload.jobs], **m,
             "killed": schedule.killed.astype(bool)}
    return _pd().DataFrame(frame)
