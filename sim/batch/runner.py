"""Scripted batch evaluation: load a trace, run policies, collect metrics.

The CLI is a thin layer over these functions, so a study is a few lines of Python::

    from sim.batch.runner import load_workload, run
    from sim.registry import policy_spec
    w = load_workload("KTH-SP2", procs=128)
    for name in ("fcfs", "easy", "conservative"):
        row = run(w, policy_spec(name), by_month=True)
        print(name, row["avg_wait"], [m["avg_wait"] for m in row["months"]])

A policy arrives here resolved (a :class:`sim.batch.policy.PolicySpec`, made once by
:func:`sim.registry.policy_spec` at the edge), never as a name. Times are integer seconds.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from instances.job import Workload
from sim.batch.machine import Schedule, simulate
from sim.batch.metrics import aggregate, job_metrics, summary
from sim.batch.policy import PolicySpec
from sim.batch.validate import validate

WIDE_MODES = ("error", "drop", "clip")


def load_workload(trace: str | os.PathLike[str], *, procs: int | None = None,
                  perfect_estimates: bool = False, wide: str = "error") -> Workload:
    """Read a trace: a path to an SWF file (plain or gzip), a K-resource ``.kswf``
    workload (plain or gzip; recognised by its ``; KResource:`` header, whatever the
    file's name), a Batsim JSON workload (a ``.json`` name or a file starting with ``{``;
    ``instances.batsim.read_batsim``) or a bundled trace name (``KTH-SP2``, ``SDSC-BLUE``,
    ...; see
    ``instances.bundled.list_traces``).

    Parameters
    ----------
    procs : int, optional
        Machine size (processors), overriding the log header. Refused for a K-resource
        workload (its machine is its ``; Capacities:`` header).
    perfect_estimates : bool
        Requested time := actual runtime for every job. Refused for a K-resource
        workload.
    wide : {"error", "drop", "clip"}
        A job wider than the machine stops the reading with an error naming the file,
        line and job (default), is dropped, or is clipped to the machine size; dropped
        and clipped jobs are counted in ``Workload.cleaning``. Only ``"error"`` for a
        K-resource workload (a requirement over a capacity is an error there).

    Raises
    ------
    ValueError
        Naming the file (and the option refused).
    """
    from instances.batsim import is_batsim_workload, read_batsim
    from instances.bundled import trace_path
    from instances.kresource import is_kswf, read_kswf
    from instances.swf import read_swf

    path = Path(trace)
    if not path.exists():
        try:
            path = trace_path(str(trace))
        except ValueError as exc:
            raise ValueError(f"{trace}: no such file, and {exc}") from None
    if wide not in WIDE_MODES:
        raise ValueError(f"wide must be one of {WIDE_MODES}, got {wide!r}")
    if not path.is_file():  # a directory, a device (/dev/zero), a pipe: never read
        raise ValueError(f"{path}: not a regular file (a trace must be one)")
    if str(path).endswith((".kswf", ".kswf.gz")) or is_kswf(path):
        refused = [name for name, given in (("--procs", procs is not None),
                                            ("--perfect-estimates", perfect_estimates),
                                            ("--wide", wide != "error")) if given]
        if refused:
            opts = (f"option {refused[0]} does not" if len(refused) == 1
                    else f"options {' and '.join(refused)} do not")
            raise ValueError(f"{path}: a K-resource workload (its machine is its "
                             f"'; Capacities:' header, its estimates are the file's): "
                             f"{opts} apply to it")
        return read_kswf(path)
    if is_batsim_workload(path):  # errors name the field and suggest --wide themselves
        return read_batsim(path, procs=procs, perfect_estimates=perfect_estimates,
                           too_wide=wide)
    try:
        w = read_swf(path, procs=procs, perfect_estimates=perfect_estimates, too_wide=wide)
    except ValueError as exc:
        if wide == "error" and "processors, machine has" in str(exc):
            raise ValueError(f"{exc}; choose wide='drop' or 'clip' (--wide) to go on") from None
        raise
    return w


def _progress_bar(total: int, enabled: bool) -> tuple[Callable[[int], None] | None, Any]:
    if not enabled or not sys.stderr.isatty():
        return None, None
    from tqdm import tqdm

    bar = tqdm(total=total, unit="job", delay=2.0, file=sys.stderr, leave=False)
    return bar.update, bar


#: the splits of :func:`run`: flag -> (row key of the parts, label key, what a part is)
SPLITS: dict[str, tuple[str, str, str]] = {"by_month": ("months", "month", "month"),
                                            "by_week": ("weeks", "week", "ISO week")}


def split_flag(by_month: bool = False, by_week: bool = False) -> str | None:
    """``"by_month"``, ``"by_week"`` or None (the whole log); ValueError for both."""
    if by_month and by_week:
        raise ValueError("by_month and by_week: give one split of the log, not both")
    return "by_month" if by_month else "by_week" if by_week else None


def split_parts(workload: Workload, by_month: bool = False, by_week: bool = False
                ) -> list[tuple[str | None, Workload]]:
    """The parts a run simulates, each from an empty machine: the calendar months
    (``instances.months.split_months``) with ``by_month``, the ISO weeks
    (``instances.weeks.split_weeks``) with ``by_week``, both in the log's time zone and
    labelled; else the whole ``workload`` labelled None. ValueError for both flags or a
    log without a calendar (``UnixStartTime``), naming the file."""
    flag = split_flag(by_month, by_week)
    if flag == "by_month":
        from instances.months import split_months

        return list(split_months(workload))
    if flag == "by_week":
        from instances.weeks import split_weeks

        return list(split_weeks(workload))
    return [(None, workload)]


def simulate_months(workload: Workload, policy: PolicySpec, *, overrun: str = "kill",
                    progress: Callable[[int], None] | None = None, engine: str = "python",
                    priorities: Mapping[int, tuple[float, float]] | None = None
                    ) -> list[tuple[str, Schedule]]:
    """Simulate each calendar month of ``workload`` (in the log's time zone) on its own,
    from an empty machine, with a fresh policy per month built from ``policy`` (a priority
    table is keyed by job id, so one table serves every month)."""
    return simulate_all(workload, policy, overrun=overrun, by_month=True, engine=engine,
                        priorities=priorities, progress=progress)


def simulate_all(workload: Workload, policy: PolicySpec, *, overrun: str = "kill",
                 by_month: bool = False, by_week: bool = False, engine: str = "python",
                 priorities: Mapping[int, tuple[float, float]] | None = None,
                 progress: Callable[[int], None] | None = None,
                 dependencies: Mapping[int, tuple[int, int]] | None = None
                 ) -> list[tuple[str | None, Schedule]]:
    """The schedules of one run of ``policy``, in this process: one per part of
    :func:`split_parts` (a calendar month with ``by_month``, an ISO week with
    ``by_week``), each from an empty machine with a fresh policy built from ``policy``
    (a priority table is keyed by job id, so one table serves every part), else one of
    the whole ``workload`` (labelled None). ``dependencies`` (user feedback, the whole
    workload only) goes to :func:`sim.batch.machine.simulate`."""
    if dependencies and (by_month or by_week):
        raise ValueError(feedback_split_error(split_flag(by_month, by_week)))
    return [(label, simulate(part, policy.build(priorities), overrun=overrun,
                             progress=progress, engine=engine, dependencies=dependencies))
            for label, part in split_parts(workload, by_month, by_week)]


def feedback_split_error(flag: str | None) -> str:
    """Why user feedback is refused with a split of the log (``"by_month"`` or
    ``"by_week"``)."""
    option = f"--{(flag or '').replace('_', '-')}"
    return (f"--feedback with {option}: each part is simulated from an empty machine, which "
            f"cuts the user sessions feedback follows; run the whole log")


def feedback_foreign_error(name: str) -> str:
    """Why user feedback is refused with the user's or plug-in policy ``name``."""
    return (f"--feedback: policy {name!r} runs in a worker process, which replays the log's "
            "submit times; feedback runs the project's own policies")


def feedback_table(workload: Workload, option: str = "--feedback"
                   ) -> dict[int, tuple[int, int]]:
    """The dependency table of user feedback on ``workload``
    (``instances.dependencies.dependencies``); ValueError naming ``option`` and the
    workload when no job depends on another (nothing for the option to act on)."""
    from instances.dependencies import dependencies

    table = dependencies(workload)
    if not table:
        src = workload.cleaning.source if workload.cleaning else workload.name
        known = int((workload.columns().wait >= 0).sum())
        raise ValueError(f"{option}: no job of {src} depends on an earlier job of its user "
                         f"({known} of {len(workload)} jobs have the log's wait, SWF field "
                         f"3, that gives a job's log end): nothing to act on")
    return table


#: what runs one simulation for :func:`run`: called like :func:`simulate_all` (keywords
#: ``overrun, by_month, by_week, engine, priorities, progress``), returns its labelled
#: schedules
Simulator = Callable[..., list[tuple[str | None, Schedule]]]


def _combined(schedules: Sequence[Schedule]) -> dict[str, Any]:
    """Aggregate over the jobs of several schedules (for example all months), under the
    first schedule's policy label."""
    ms = [job_metrics(s) for s in schedules]
    cat = {k: np.concatenate([m[k] for m in ms]) for k in ms[0]}
    row = {"policy": schedules[0].policy, **aggregate(cat, schedules[0].workload.procs)}
    row["killed"] = int(sum(int(s.killed.sum()) for s in schedules))
    row["sim_seconds"] = float(sum(s.sim_seconds for s in schedules))
    return row


#: schedule writers of ``run(out=...)`` by the end of the file name
OUT_FORMATS: dict[str, str] = {".swf": "swf", ".swf.gz": "swf", ".kswf": "kswf",
                               ".csv": "batsim-jobs"}


def out_format(out: str | os.PathLike[str], K: int = 1) -> str:
    """The format a schedule written to ``out`` takes, by the end of its name
    (``OUT_FORMATS``): ``"swf"``, ``"kswf"`` or ``"batsim-jobs"``. ValueError naming the
    file for any other name, and for SWF or ``jobs.csv`` of a K-resource workload (they
    hold processors only: write ``.kswf``)."""
    name = os.fspath(out).lower()
    fmt = next((f for ext, f in OUT_FORMATS.items() if name.endswith(ext)), None)
    if fmt is None:
        hint = (" (a Batsim JSON workload holds no schedule: `schedsearch convert` writes "
                "one)" if name.endswith(".json") else "")
        raise ValueError(f"--out {os.fspath(out)}: unknown format; a schedule is written as "
                         f"{', '.join(OUT_FORMATS)} (Batsim jobs.csv){hint}")
    if K > 1 and fmt != "kswf":
        raise ValueError(f"--out {os.fspath(out)}: a K-resource schedule (K = {K}) is "
                         f"written as .kswf; SWF and jobs.csv hold processors only")
    return fmt


def run(workload: Workload, policy: PolicySpec, *, overrun: str = "kill",
        by_month: bool = False, by_week: bool = False, check: bool = True,
        progress: bool = False, out: str | os.PathLike[str] | None = None,
        priorities: str | None = None, engine: str = "python",
        simulator: Simulator | None = None, feedback: bool = False) -> dict[str, Any]:
    """Simulate ``policy`` (resolved with its options by :func:`sim.registry.policy_spec`)
    on ``workload`` and return its metrics.

    Parameters
    ----------
    overrun : {"kill", "run"}
        Jobs past their requested time are killed (default) or run to completion.
    by_month : bool
        Simulate each calendar month from an empty machine; the result then has a
        ``months`` list (``month``, ``jobs``, ``avg_wait``, ...) and top-level metrics
        over all jobs of all months.
    by_week : bool
        Simulate each ISO week (Monday 00:00 to Monday 00:00 in the log's time zone,
        ``instances.weeks.split_weeks``) from an empty machine; the result then has a
        ``weeks`` list (``week``, ``jobs``, ``avg_wait``, ...) and top-level metrics over
        all jobs of all weeks. Refused with ``by_month``; both need the log's
        ``UnixStartTime``.
    check : bool
        Re-check every schedule with the independent validator (``validated`` in the
        result).
    progress : bool
        A progress bar on stderr for runs longer than two seconds (only on a terminal).
    out : path, optional
        Write the simulated schedule in the format its name ends with (``out_format``;
        another name is refused before simulating): ``.csv`` Batsim's ``jobs.csv``
        (``instances.batsim.write_batsim_jobs``, processor ids assigned; not with
        ``by_month`` or ``by_week``, whose parts are separate machines); ``.kswf``
        (``instances.kresource.write_kswf``, the only one for a K-resource workload; not
        with ``by_month`` or ``by_week``); ``.swf`` or ``.swf.gz`` SWF (wait, run and status fields
        filled).
    priorities : {"equal", "fifth"}, optional
        Priority scenario (``instances.priorities.priorities_of`` over the whole
        ``workload``, before any month split), given to the policy when it takes a
        priority table and ignored otherwise; ``policy_config`` records the scheme name.
    engine : {"python", "compiled", "auto"}
        The batch engine (``sim.batch.machine.ENGINES``): the Python reference, or the
        compiled one (FCFS, EASY, conservative and unconstrained with any selection, and the
        slack orders AST, AAT, DU, DC and DP with their search compiled; the same schedule;
        anything else refused by name); ``"auto"``: the compiled one where it runs the
        policy, the jobs pay for its load and its kernels are already cached, else Python
        (``sim.batch.engine.engine_choice``). ``engine`` in the result names the one run,
        ``engine_reason`` why ``auto`` chose it.
    simulator : callable, optional
        What runs the simulation (:data:`Simulator`; default :func:`simulate_all`, in this
        process): the command line gives a user's policy one that runs it in a worker
        process and rebuilds the schedules from its start and end times. The schedules
        it returns are validated and measured here either way.
    feedback : bool
        User feedback (Zakay & Feitelson): a job that depends on an earlier job of its
        user (``instances.dependencies``, from the log's wait and a think time of at most
        20 minutes) is submitted its think time after that job's end in this simulation.
        The Python engine runs it (``"compiled"`` refused, ``"auto"`` takes Python); refused
        with ``by_month`` or ``by_week`` (a part from an empty machine cuts the sessions),
        with a ``simulator`` (a user's policy's worker replays the log's times) and on a
        workload where no job depends on another. ``out`` then holds the realised
        workload (submit times as simulated); the result has ``feedback`` (``jobs``,
        ``dependent``, ``median_think``).

    Returns
    -------
    dict
        ``policy, jobs, avg_wait, avg_bounded_slowdown, utilization, makespan,
        sim_seconds``, the other ``sim.batch.metrics.summary`` fields, ``overrun``,
        ``procs``, ``validated``, ``engine``, ``months`` when ``by_month`` and ``weeks``
        when ``by_week``.
    """
    flag = split_flag(by_month, by_week)
    deps = None
    if feedback:
        if flag is not None:
            raise ValueError(feedback_split_error(flag))
        if simulator is not None:
            raise ValueError(feedback_foreign_error(policy.name))
        if engine == "compiled":
            from sim.batch.machine import FEEDBACK_COMPILED

            raise ValueError(FEEDBACK_COMPILED)
        deps = feedback_table(workload)
    fmt = None if out is None else out_format(out, workload.K)
    kswf_out = fmt == "kswf"
    if flag is not None and fmt in ("batsim-jobs", "kswf"):
        part = SPLITS[flag][2]
        what = "a Batsim jobs.csv" if fmt == "batsim-jobs" else "a K-resource schedule (.kswf)"
        raise ValueError(f"{out}: {what} is one machine; {flag} (--{flag.replace('_', '-')}) "
                         f"simulates each {part} on its own machine (write SWF, or drop it)")
    if flag is not None and simulator is not None:  # a log without a calendar is refused
        split_parts(workload, by_month, by_week)     # here, not in a user's policy's worker
    table = None
    if priorities is not None and policy.takes_priorities:
        from instances.priorities import priorities_of

        table = priorities_of(workload, priorities)
    update, bar = _progress_bar(len(workload), progress)
    try:
        if deps is not None:
            pairs = simulate_all(workload, policy, overrun=overrun, engine=engine,
                                 priorities=table, progress=update, dependencies=deps)
        else:
            pairs = (simulator or simulate_all)(workload, policy, overrun=overrun,
                                                by_month=by_month, by_week=by_week,
                                                engine=engine, priorities=table,
                                                progress=update)
    finally:
        if bar is not None:
            bar.close()
    if flag is not None and not pairs:
        src = workload.cleaning.source if workload.cleaning else workload.name
        raise ValueError(f"{src}: no jobs to simulate {flag.replace('_', ' ')}")
    schedules = [s for _, s in pairs]
    if flag is not None:
        parts, label_key, _ = SPLITS[flag]
        row = _combined(schedules)
        row[parts] = [{label_key: label, **summary(s)} for label, s in pairs]
    else:
        row = summary(schedules[0])
    if check:
        for s in schedules:
            validate(s)
    row["validated"] = bool(check)
    row["engine"] = "+".join(sorted({s.engine for s in schedules}))
    reasons = sorted({s.engine_reason for s in schedules if s.engine_reason})
    if reasons:
        row["engine_reason"] = "; ".join(reasons)
    row["policy_config"] = policy.config(priorities)  # the scheme, never the table
    if workload.cleaning is not None:
        row["cleaning"] = workload.cleaning.to_dict()
    row["overrun"] = overrun
    row["procs"] = workload.procs
    if deps is not None:
        from instances.dependencies import summary as dependency_summary

        row["feedback"] = dependency_summary(workload, deps)
        workload = schedules[0].workload  # the realised one: what --out writes
    if fmt == "batsim-jobs":
        from instances.batsim import write_batsim_jobs

        s = schedules[0]
        write_batsim_jobs(out, workload, s.start, s.end, killed=s.killed)
    elif out is not None and kswf_out:
        from instances.kresource import write_kswf

        s = schedules[0]
        write_kswf(out, workload, start=s.start, end=s.end, killed=s.killed)
    elif out is not None:
        from instances.swf import write_swf

        start = np.concatenate([s.start for s in schedules])
        end = np.concatenate([s.end for s in schedules])
        killed = np.concatenate([s.killed for s in schedules])
        if len(start) != len(workload):
            raise RuntimeError("the split lost jobs")  # a split keeps every job
        write_swf(out, workload, start=start, end=end, killed=killed)
    return row
