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

def month_timezone(header: dict[str, Any]) -> tzinfo:
    """The log's own time zone from its header.

    ``zoneinfo.ZoneInfo(TimeZoneString)`` (daylight saving time included) when the
    header has a ``TimeZoneString`` that zoneinfo knows; else the fixed offset
    ``TimeZone`` (seconds to add to UTC); else UTC.
    """
    name = header.get("TimeZoneString")
    if isinstance(name, str) and name:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    offset = header.get("TimeZone")
    if isinstance(offset, int):
        return timezone(timedelta(seconds=offset))
    return timezone.utc


def split_months(workload: Workload) -> list[tuple[str, Workload]]:
    """Split a workload into calendar months of the log's own time zone.

    The month of a job is that of its submit time ``UnixStartTime + submit`` in
    :func:`month_timezone` (``TimeZoneString`` via zoneinfo when present, else the fixed
    ``TimeZone`` offset, else UTC). Each month is a Workload with the same capacity and
    header, the jobs of that month with their absolute submit times (not rebased), the
    name ``"<name> <YYYY-MM>"`` and no cleaning report (the whole file's report stays on
    the input workload). Months without jobs are left out. Simulating each month from an
    empty machine follows Talby & Feitelson (KTH: Sept 1996 ... Aug 1997).

    Returns
    -------
    list of (str, Workload)
        ``("1996-09", workload)`` pairs in calendar order; the sizes sum to
        ``len(workload)``.

    Raises
    ------
    ValueError
        When the header has no integer ``UnixStartTime``.
    """
    t0 = workload.header.get("UnixStartTime")
    if isinstance(t0, bool) or not isinstance(t0, int):
        raise ValueError(f"split_months: workload {workload.name!r} has no integer "
                         f"UnixStartTime in its header (got {t0!r})")
    if not workload.jobs:
        return []
    tz = month_timezone(workload.header)
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
    groups: list[list[Job]] = [[] for _ in labels]
    for j in workload.jobs:
        groups[bisect_right(bounds, j.submit) - 1].append(j)
    return [
        (label, Workload(tuple(g), workload.capacity, f"{workload.name} {label}".strip(),
                         dict(workload.header), None))
        for label, g in zip(labels, groups, strict=True) if g
    ]
