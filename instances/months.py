"""Month split of a workload: calendar months of the log's own time zone.

Simulating each month of a log from an empty machine follows Talby & Feitelson (KTH:
Sept 1996 ... Aug 1997). The split reads the header fields ``UnixStartTime``,
``TimeZoneString`` and ``TimeZone`` that the SWF reader (:mod:`instances.swf`) keeps in
``Workload.header``.
"""

from __future__ import annotations

from bisect import bisect_right
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

from instances.job import Job, Workload

__all__ = ["month_timezone", "split_months"]

def _label(header: dict[str, Any], key: str) -> str:
    from instances.swf import _cut

    return f"header {key} = {_cut(str(header.get(key)))}"


def month_timezone(header: dict[str, Any]) -> tzinfo:
    """The log's own time zone from its header.

    ``zoneinfo.ZoneInfo(TimeZoneString)`` (daylight saving time included) when the
    header has a ``TimeZoneString``; else the fixed offset ``TimeZone`` (seconds to add
    to UTC, strictly within one day); else UTC.

    Raises
    ------
    ValueError
        A ``TimeZoneString`` that zoneinfo does not know (never a silent fall-back that
        would move jobs across months: install ``tzdata``, a dependency of schedsearch),
        or a ``TimeZone`` that is not an integer within one day.
    """
    name = header.get("TimeZoneString")
    if name is not None and name != "":
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
        try:
            if not isinstance(name, str):
                raise ValueError
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(f"{_label(header, 'TimeZoneString')} is not a time zone "
                             "known to zoneinfo (is the tzdata package installed?)") from None
    offset = header.get("TimeZone")
    if offset is not None:
        if isinstance(offset, bool) or not isinstance(offset, int) or \
                not -86400 < offset < 86400:
            raise ValueError(f"{_label(header, 'TimeZone')} is not an offset in seconds "
                             "strictly within one day")
        return timezone(timedelta(seconds=offset))
    return timezone.utc


def split_months(workload: Workload) -> list[tuple[str, Workload]]:
    """Split a workload into calendar months of the log's own time zone.

    The month of a job is that of its submit time ``UnixStartTime + submit`` (seconds)
    in :func:`month_timezone` (``TimeZoneString`` via zoneinfo when present, else the
    fixed ``TimeZone`` offset, else UTC). Each month is a Workload with the same capacity
    and header, the jobs of that month with their absolute submit times (not rebased),
    the name ``"<name> <YYYY-MM>"`` and no cleaning report (the whole file's report
    stays on the input workload). Months without jobs are left out. Simulating each
    month from an empty machine follows Talby & Feitelson (KTH: Sept 1996 ... Aug 1997).

    Returns
    -------
    list of (str, Workload)
        ``("1996-09", workload)`` pairs in calendar order; the sizes sum to
        ``len(workload)``; empty for a workload without jobs.

    Raises
    ------
    ValueError
        When the header has no integer ``UnixStartTime``, an unknown or invalid time
        zone, or a submit time whose date is outside the years 1-9999. The message names
        the file the workload was read from (or the workload).
    """
    source = workload.cleaning.source if workload.cleaning is not None else \
        repr(workload.name)
    header = workload.header
    t0 = header.get("UnixStartTime")
    if isinstance(t0, bool) or not isinstance(t0, int):
        raise ValueError(f"{source}: cannot split by month: no integer UnixStartTime in the "
                         f"header (got {_label(header, 'UnixStartTime').split(' = ')[1]})")
    if not workload.jobs:
        return []
    try:
        tz = month_timezone(header)
    except ValueError as exc:
        raise ValueError(f"{source}: cannot split by month: {exc}") from None
    try:
        first = datetime.fromtimestamp(t0 + workload.jobs[0].submit, tz)
        last = datetime.fromtimestamp(t0 + workload.jobs[-1].submit, tz)
        # Month starts (local midnight on the 1st) as submit times relative to t0.
        labels: list[str] = []
        bounds: list[int] = []
        y, m = first.year, first.month
        while (y, m) <= (last.year, last.month):
            labels.append(f"{y:04d}-{m:02d}")
            bounds.append(int(datetime(y, m, 1, tzinfo=tz).timestamp()) - t0)
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    except (OverflowError, ValueError, OSError):
        raise ValueError(
            f"{source}: cannot split by month: UnixStartTime {t0} + submit times "
            f"{workload.jobs[0].submit}..{workload.jobs[-1].submit} s is outside the "
            "dates Python can represent (years 1-9999)") from None
    groups: list[list[Job]] = [[] for _ in labels]
    for j in workload.jobs:
        groups[bisect_right(bounds, j.submit) - 1].append(j)
    return [
        (label, Workload(tuple(g), workload.capacity, f"{workload.name} {label}".strip(),
                         dict(workload.header), None))
        for label, g in zip(labels, groups, strict=True) if g
    ]
