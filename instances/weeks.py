"""Week split of a workload: ISO weeks (Monday 00:00 to Monday 00:00) of the log's own
time zone, and the week grid that user resampling (:mod:`instances.replicate`) moves
sessions on.

The week of a job is that of its submit time ``UnixStartTime + submit`` (seconds) in
:func:`instances.months.month_timezone` (daylight saving time included: a week across
a change is 167 or 169 hours). Labels are ISO year and week, ``"1996-W40"``. A log
without ``UnixStartTime`` has no calendar; :func:`week_starts` then counts weeks of
604,800 s from its first submit, while :func:`split_weeks` refuses it (a label needs a
date), as the month split does.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import date, datetime, timedelta

from instances.job import Job, Workload
from instances.months import month_timezone

__all__ = ["WEEK", "calendar_weeks", "split_weeks", "week_of", "week_starts"]

#: seconds in a week without a daylight-saving change
WEEK = 7 * 86_400


def _source(workload: Workload) -> str:
    return workload.cleaning.source if workload.cleaning is not None else repr(workload.name)


def calendar_weeks(workload: Workload) -> tuple[list[str], list[int]]:
    """The ISO weeks from the first job's week to the last job's week.

    Returns
    -------
    (labels, starts)
        ``labels[k]`` (``"YYYY-Www"``) of week ``k``; ``starts`` has one entry more:
        ``starts[k]`` is the start of week ``k`` (local Monday 00:00) and ``starts[-1]``
        the end of the last week, in seconds relative to ``UnixStartTime`` (the
        workload's submit-time axis). Both are empty for a workload without jobs.

    Raises
    ------
    ValueError
        No integer ``UnixStartTime`` in the header, an unknown or invalid time zone, or
        dates outside the years 1-9999; the message names the file (or workload).
    """
    source = _source(workload)
    t0 = workload.header.get("UnixStartTime")
    if isinstance(t0, bool) or not isinstance(t0, int):
        raise ValueError(f"{source}: cannot split by week: no integer UnixStartTime in the "
                         f"header (got {str(t0)[:40]})")
    if not workload.jobs:
        return [], []
    try:
        tz = month_timezone(workload.header)
    except ValueError as exc:
        raise ValueError(f"{source}: cannot split by week: {exc}") from None
    try:
        first = datetime.fromtimestamp(t0 + workload.jobs[0].submit, tz).date()
        last = datetime.fromtimestamp(t0 + workload.jobs[-1].submit, tz).date()
        monday = first - timedelta(days=first.weekday())
        labels, starts = [], []
        while monday <= last:
            iso = monday.isocalendar()
            labels.append(f"{iso[0]:04d}-W{iso[1]:02d}")
            starts.append(_midnight(monday, tz) - t0)
            monday += timedelta(days=7)
        starts.append(_midnight(monday, tz) - t0)
    except (OverflowError, ValueError, OSError):
        raise ValueError(
            f"{source}: cannot split by week: UnixStartTime {t0} + submit times "
            f"{workload.jobs[0].submit}..{workload.jobs[-1].submit} s is outside the "
            "dates Python can represent (years 1-9999)") from None
    return labels, starts


def _midnight(day: date, tz) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())


def week_starts(workload: Workload) -> list[int]:
    """Bounds of the weeks that hold the workload's jobs, ``N + 1`` for ``N`` weeks
    (seconds on the submit-time axis): the calendar weeks of :func:`calendar_weeks` when
    the header has a ``UnixStartTime``, else weeks of :data:`WEEK` seconds from the first
    submit. Empty for a workload without jobs."""
    if not workload.jobs:
        return []
    if "UnixStartTime" in workload.header:
        return calendar_weeks(workload)[1]
    s0, s1 = workload.jobs[0].submit, workload.jobs[-1].submit
    return [s0 + k * WEEK for k in range((s1 - s0) // WEEK + 2)]


def week_of(submit: int, starts: list[int]) -> int:
    """Index of the week in ``starts`` (from :func:`week_starts`) holding ``submit``."""
    return bisect_right(starts, submit) - 1


def split_weeks(workload: Workload) -> list[tuple[str, Workload]]:
    """Split a workload into the ISO weeks of the log's own time zone.

    Each week is a Workload with the same capacity and header, the jobs submitted in
    that week with their absolute submit times (not rebased), the name
    ``"<name> <YYYY-Www>"`` and no cleaning report. Weeks without jobs are left out.

    Returns
    -------
    list of (str, Workload)
        ``("1996-W40", workload)`` pairs in calendar order; the sizes sum to
        ``len(workload)``.

    Raises
    ------
    ValueError
        As :func:`calendar_weeks`.
    """
    labels, starts = calendar_weeks(workload)
    groups: list[list[Job]] = [[] for _ in labels]
    for j in workload.jobs:
        groups[week_of(j.submit, starts)].append(j)
    return [
        (label, Workload(tuple(g), workload.capacity, f"{workload.name} {label}".strip(),
                         dict(workload.header), None))
        for label, g in zip(labels, groups, strict=True) if g
    ]
