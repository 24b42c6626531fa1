"""Standard Workload Format (SWF) reader and writer, and cleaning rules.

The month split of a workload lives with the workload code in :mod:`instances.months`.
The line-by-line reader here (``_read_lines``) is the reference; :func:`read_swf` first
tries the vectorised fast path of :mod:`instances.swf_fast`, which gives the same workload
and cleaning report on regular input and steps aside (to this reader, and its error
messages) on anything else.

The SWF of the Parallel Workloads Archive (Feitelson, Tsafrir & Krakov, JPDC 74(10),
2014) has one job per line, 18 whitespace-separated numeric fields, ``-1`` for unknown,
and header lines starting with ``;`` of the form ``; Key: value``. The fields are

====  ======================  =================================================
 no.  name                    used by schedsearch as
====  ======================  =================================================
  1   job number              ``Job.id`` (unique; a duplicate is an error)
  2   submit time             ``Job.submit`` (seconds from the log start, >= 0)
  3   wait time               ``Job.wait`` (the log's wait, seconds; -1 unknown);
                              written from a simulated schedule
  4   run time                ``Job.runtime`` (seconds)
  5   allocated processors    ``Job.demand[0]``
  6   average CPU time        not read
  7   used memory             not read
  8   requested processors    ``Job.demand[0]`` when field 5 is -1 or 0
  9   requested time          ``Job.requested`` (seconds)
 10   requested memory        not read
 11   status                  not read; written from a simulated schedule
 12   user id                 ``Job.user``
 13   group id                ``Job.group``
 14-18 executable, queue, partition, preceding job, think time: not read
====  ======================  =================================================

Numbers: every field must parse as a finite number written in ASCII (``1_000`` and
non-ASCII digits are errors, as is any other non-number). The fields schedsearch uses (1,
2, 3, 4, 5, 8, 9, 12, 13) must be integral and at most ``2**53`` in absolute value (so
``1e300`` is an error); ``"123.0"`` is accepted as 123 and ``"123.5"`` is an error. The
other fields may hold any finite number (several logs store the average CPU time, field
6, as ``"142.00"``). Any violation raises :class:`SwfError` naming the file, the 1-based
line and the field. A UTF-8 byte-order mark at the start of the file is ignored.

Cleaning rules
--------------
Jobs that cannot be simulated are never silently dropped or altered. Every rule below
counts the jobs it touched in the :class:`CleaningReport` returned with the workload
(``Workload.cleaning``), with a few example job numbers. A dropped job is counted under
the first drop rule that matches, in this order:

``unknown_submit`` (drop)
    Submit time (field 2) unknown (-1).
``no_processors`` (drop)
    Neither field 5 nor field 8 is positive.
``bad_runtime`` (drop)
    Run time (field 4) negative or unknown (-1).
``too_wide`` (``too_wide="drop"``, the default)
    More processors than the machine. ``too_wide="clip"`` instead sets the processors to
    the machine size (counted as ``too_wide_clipped``); ``too_wide="error"`` raises.

Jobs that are kept may be changed or noted by these rules:

``procs_from_requested``
    Field 5 is -1 or 0, so the processors come from field 8 (counted for kept jobs).
``missing_request``
    Requested time (field 9) negative or unknown. With ``missing_request="actual"`` (the
    default) the actual run time is used as a perfect estimate, at least 1 s; with
    ``missing_request="error"`` the reader raises.
``zero_request``
    Requested time 0: set to 1 s (a job must request at least one second).
``perfect_estimates``
    With ``perfect_estimates=True`` every job's request becomes ``max(runtime, 1)``;
    the count is the jobs whose request changed. This option replaces the two rules
    above (a missing request is then not an error).
``zero_runtime`` (kept, unchanged)
    Run time 0. Such jobs are simulated (they occupy the machine for 0 s); the count is
    informational, because several logs hold many of them.
``unsorted_submit``
    Jobs are sorted stably by submit time; the count is the jobs submitted earlier than
    some job listed before them.

Errors, never cleaned: a wrong number of fields, a non-numeric or non-integral field, a
submit time below -1, a duplicate job number (all naming the file and line).

Header
------
A header line is ``;`` then any whitespace then ``Key: value``: the archive's logs write
keys left-aligned (``; MaxProcs: 128``) and right-aligned (``;        MaxProcs: 128``).
A key indented by two or more spaces is read as a key only when it is one of the SWF
definition's header keys (:data:`HEADER_KEYS`); any other indented text continues the
previous entry (``;       http://...``). A repeated key becomes a list.

Machine size: the ``procs`` argument (``procs="from-jobs"``: the widest job, said in the
report), else the header's ``MaxProcs``, else ``MaxNodes``. The value must be a positive
integer, optionally followed by a comment (``"70  (dual)"``, ``"338 (batch partition;
512 total)"``); a repeated key must repeat the same value. An invalid value (``0``,
``-1``, ``"1,024"``, two different values) or no such header at all is an error naming
the file (and header line) that asks for ``procs``: the machine size is never guessed.
The report says where the size came from (``machine_source``).
"""

from __future__ import annotations

import gzip
import io
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from instances import files
from instances.atomic import write_atomic
from instances.job import Job, JobColumns, Workload
from instances.swf_fast import count_lines, read_fast
from instances.swf_rules import (  # noqa: F401  (the reader's rules, re-exported)
    _COUNT_RE,
    _DROP_RULES,
    _INT_RE,
    _KEY_RE,
    _LIST_KEYS,
    _N_EXAMPLES,
    HEADER_KEYS,
    MAX_INT,
    PROCS_FROM_JOBS,
    RULES,
    SwfError,
    _cut,
    _header_count,
    _machine_size,
    _parse_header,
)

__all__ = [
    "FIELD_NAMES",
    "HEADER_KEYS",
    "RULES",
    "CleaningReport",
    "SwfError",
    "read_swf",
    "write_swf",
]

N_FIELDS = 18

FIELD_NAMES: tuple[str, ...] = (
    "job number", "submit time", "wait time", "run time", "allocated processors",
    "average CPU time", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user id", "group id", "executable", "queue",
    "partition", "preceding job", "think time",
)

# 0-based indices of the fields that must be integral (the ones schedsearch uses).
_INT_FIELDS = frozenset({0, 1, 2, 3, 4, 7, 8, 11, 12})
# (job number, submit, run time, procs field 5, procs field 8, requested time, user, group,
# wait)
_USED = itemgetter(0, 1, 3, 4, 7, 8, 11, 12, 2)
_OTHER = itemgetter(*sorted(set(range(N_FIELDS)) - _INT_FIELDS))
_isfinite = math.isfinite

WRITER_NOTE = "written by schedsearch (instances.swf.write_swf)"


@dataclass(frozen=True)
class CleaningReport:
    """What the SWF reader did to the jobs of one file.

    Parameters
    ----------
    source : str
        File read.
    lines_read : int
        All lines of the file (header, job and blank lines).
    job_lines : int
        Lines holding a job record.
    jobs_kept : int
        Jobs in the returned workload.
    machine_procs : int
        Processors of the machine the workload was cleaned for.
    machine_source : str
        Where ``machine_procs`` came from: ``"procs argument"``, ``"MaxProcs header"``,
        ``"MaxNodes header"`` or ``"largest job (procs='from-jobs')"``.
    counts : dict of str to int
        Jobs touched per rule (keys of :data:`RULES`; rules that touched nothing are 0).
    examples : dict of str to tuple of int
        Up to five job numbers per rule, in file order.
    options : dict
        The reader options used (``procs``, ``perfect_estimates``, ``missing_request``,
        ``too_wide``).
    """

    source: str
    lines_read: int
    job_lines: int
    jobs_kept: int
    machine_procs: int
    machine_source: str
    counts: dict[str, int]
    examples: dict[str, tuple[int, ...]] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def dropped(self) -> int:
        """Jobs dropped by any rule."""
        return sum(self.counts.get(r, 0) for r in _DROP_RULES)

    def summary(self) -> str:
        """Readable multi-line text: totals, then one line per rule that touched a job."""
        lines = [
            f"{self.source}: {self.job_lines} job lines of {self.lines_read} lines, "
            f"{self.jobs_kept} jobs kept, {self.dropped} dropped; machine "
            f"{self.machine_procs} processors ({self.machine_source})",
        ]
        return "\n".join(lines + rule_lines(RULES, self.counts, self.examples))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return {
            "source": self.source,
            "lines_read": self.lines_read,
            "job_lines": self.job_lines,
            "jobs_kept": self.jobs_kept,
            "dropped": self.dropped,
            "machine_procs": self.machine_procs,
            "machine_source": self.machine_source,
            "counts": dict(self.counts),
            "examples": {k: list(v) for k, v in self.examples.items()},
            "options": dict(self.options),
        }


def rule_lines(rules: dict[str, str], counts: dict[str, int],
               examples: dict[str, tuple[Any, ...]]) -> list[str]:
    """The lines of a cleaning report after its totals: one per rule of ``rules`` (name ->
    text) that touched a job, with example job ids, or one line saying none did."""
    lines = []
    for rule, text in rules.items():
        n = counts.get(rule, 0)
        if n:
            ex = ", ".join(str(i) for i in examples.get(rule, ()))
            lines.append(f"  {rule}: {n} jobs - {text} (e.g. jobs {ex})")
    return lines or ["  no cleaning rule touched any job"]


# ----------------------------------------------------------------------------- reading

def _read_bytes(path: Path) -> bytes:
    """File contents (:func:`instances.files.read_bytes`: a regular file of at most 1 GiB,
    gzip detected by its magic bytes), a UTF-8 BOM dropped."""
    try:
        data = files.read_bytes(path, what="workload")
    except ValueError as exc:  # missing, a device or a pipe, too large, corrupt gzip
        raise SwfError(str(exc)) from None
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data


def _decode(data: bytes) -> str:
    """UTF-8 text, else Latin-1 (every byte a character)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _read_text(path: Path) -> str:
    """File contents as text; gzip detected by its magic bytes; a UTF-8 BOM dropped."""
    return _decode(_read_bytes(path))


def _parse_slow(parts: list[str], where: str) -> list[int | float]:
    """Field-by-field parse of a job line that is not all plain integers."""
    values: list[int | float] = []
    for i, tok in enumerate(parts):
        name = f"{where}: field {i + 1} ({FIELD_NAMES[i]})"
        # Python's int()/float() also take "1_000" and non-ASCII digits: not SWF numbers
        if not tok.isascii() or "_" in tok:
            raise SwfError(f"{name} is not a number: {_cut(tok)}")
        v: int | float | None = _number(tok)
        if v is None:
            raise SwfError(f"{name} is not a number: {_cut(tok)}")
        if isinstance(v, float):
            if not math.isfinite(v):
                raise SwfError(f"{name} is not finite: {_cut(tok)}")
            if i in _INT_FIELDS:
                if not v.is_integer():
                    raise SwfError(f"{name} must be an integer, got {_cut(tok)}")
                if abs(v) > MAX_INT:
                    raise SwfError(f"{name} is out of range (above 2**53 in absolute "
                                   f"value): {_cut(tok)}")
                v = int(v)
        if isinstance(v, int) and abs(v) > MAX_INT:
            if i in _INT_FIELDS:
                raise SwfError(f"{name} is out of range (above 2**53 in absolute value): "
                               f"{_cut(tok)}")
            try:  # an unused field: any finite number
                v = float(v)
            except OverflowError:
                raise SwfError(f"{name} is not finite: {_cut(tok)}") from None
        values.append(v)
    return values


def _number(tok: str) -> int | float | None:
    """``int(tok)``, else ``float(tok)``, else None."""
    try:
        return int(tok)
    except ValueError:
        pass
    try:
        return float(tok)
    except ValueError:
        return None


def _default_name(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".swf"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _read_lines(path: Path, lines: list[str], *, procs: int | str | None,
                perfect_estimates: bool, missing_request: str, too_wide: str
                ) -> tuple[list[Job], dict[str, Any], dict[str, list[int]], int, str,
                           dict[str, int], dict[str, tuple[int, ...]], int]:
    """The reference reader: parse and clean the SWF ``lines`` of ``path`` line by line.

    Returns the jobs (sorted by submit time), the header and its header lines, the machine
    size and its source, the jobs touched and up to five examples per rule, and the number
    of job lines. :func:`instances.swf_fast.read_fast` returns the same for regular input.
    """
    # Pass 1: parse every line. Records are
    # (lineno, id, submit, runtime, procs5, procs8, requested, user, group, wait).
    header_lines: list[tuple[int, str]] = []
    records: list[tuple[int, ...]] = []
    for lineno, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if parts[0][0] == ";":
            header_lines.append((lineno, line))
            continue
        if len(parts) != N_FIELDS:
            raise SwfError(f"{path}:{lineno}: expected {N_FIELDS} fields, found {len(parts)}")
        # Fast path: the used fields are plain integers and the others finite numbers.
        # Anything else (e.g. "123.0" in a used field, or an error) takes the slow path,
        # which accepts integral floats and names the offending field.
        try:
            if not line.isascii() or "_" in line:
                raise ValueError
            used = tuple(map(int, _USED(parts)))
            if max(used) > MAX_INT or min(used) < -MAX_INT:
                raise ValueError
            if not all(map(_isfinite, map(float, _OTHER(parts)))):
                raise ValueError
        except (ValueError, OverflowError):
            used = _USED(_parse_slow(parts, f"{path}:{lineno}"))
        if used[1] < -1:
            raise SwfError(f"{path}:{lineno}: field 2 (submit time) is negative: {used[1]}")
        records.append((lineno, *used))
    # duplicate job numbers among the jobs that can be kept (unknown submit: dropped)
    known = [r for r in records if r[2] >= 0]
    if len({r[1] for r in known}) != len(known):
        first_line: dict[int, int] = {}
        for lineno, jid, *_ in known:
            if jid in first_line:
                raise SwfError(f"{path}:{lineno}: duplicate job number {jid} "
                               f"(first on line {first_line[jid]})")
            first_line[jid] = lineno

    header, header_at = _parse_header(header_lines)
    widest = max((p5 if p5 > 0 else p8 for _, _, _, _, p5, p8, *_ in records), default=0)
    machine, source = _machine_size(path, header, header_at, widest, procs)

    # Pass 2: cleaning rules.
    counts = dict.fromkeys(RULES, 0)
    examples: dict[str, list[int]] = {r: [] for r in RULES}

    def note(rule: str, jid: int) -> None:
        counts[rule] += 1
        ex = examples[rule]
        if len(ex) < _N_EXAMPLES:
            ex.append(jid)

    jobs: list[Job] = []
    for lineno, jid, submit, run, p5, p8, req, user, group, wait in records:
        if submit < 0:
            note("unknown_submit", jid)
            continue
        if p5 > 0:
            p = p5
        elif p8 > 0:
            p = p8
        else:
            note("no_processors", jid)
            continue
        if run < 0:
            note("bad_runtime", jid)
            continue
        if p > machine:
            if too_wide == "drop":
                note("too_wide", jid)
                continue
            if too_wide == "error":
                raise SwfError(f"{path}:{lineno}: job {jid} uses {p} processors, "
                               f"machine has {machine} ({source})")
            p = machine
            note("too_wide_clipped", jid)
        if p5 <= 0:
            note("procs_from_requested", jid)
        if run == 0:
            note("zero_runtime", jid)
        if perfect_estimates:
            r = run if run > 1 else 1
            if r != req:
                note("perfect_estimates", jid)
        elif req < 0:
            if missing_request == "error":
                raise SwfError(f"{path}:{lineno}: job {jid} has no requested time "
                               f"(field 9 = {req}) and missing_request='error'")
            r = run if run > 1 else 1
            note("missing_request", jid)
        elif req == 0:
            r = 1
            note("zero_request", jid)
        else:
            r = req
        jobs.append(Job(jid, submit, run, r, (p,), user, group, wait))

    # Stable sort by submit time, counting the jobs listed after a later submit.
    latest = None
    for j in jobs:
        if latest is not None and j.submit < latest:
            note("unsorted_submit", j.id)
        elif latest is None or j.submit > latest:
            latest = j.submit
    if counts["unsorted_submit"]:
        jobs.sort(key=lambda j: j.submit)
    return (jobs, header, header_at, machine, source, counts,
            {r: tuple(ex) for r, ex in examples.items()}, len(records))



def read_swf(
    path: str | os.PathLike[str],
    *,
    procs: int | str | None = None,
    perfect_estimates: bool = False,
    missing_request: str = "actual",
    too_wide: str = "drop",
    name: str | None = None,
) -> Workload:
    """Read an SWF file (plain or gzip) into a K = 1 (processors) workload.

    Parameters
    ----------
    path : str or path-like
        The SWF file; gzip is detected by its magic bytes, not the suffix.
    procs : int or "from-jobs", optional
        Machine size in processors, overriding the header (the slack-backfilling paper
        simulates KTH with 128 where the header says 100); ``"from-jobs"`` takes the
        widest job. Required when the header has no valid ``MaxProcs``/``MaxNodes``.
    perfect_estimates : bool
        Set every requested time to ``max(runtime, 1)`` seconds.
    missing_request : {"actual", "error"}
        Policy for an unknown requested time (field 9 < 0): use the actual run time,
        at least 1 s, or raise :class:`SwfError`.
    too_wide : {"drop", "clip", "error"}
        Policy for a job with more processors than the machine.
    name : str, optional
        Workload name; default the file name without ``.swf`` / ``.gz``.

    Returns
    -------
    Workload
        Jobs sorted by submit time (seconds, as in the file, not rebased), capacity
        ``(machine_procs,)``, the parsed header, and the :class:`CleaningReport` in
        ``Workload.cleaning``. See the module docstring for the rules.

    Raises
    ------
    SwfError
        Malformed input, naming the file and the 1-based line (and field).
    ValueError
        Bad options.
    """
    if procs is not None and procs != PROCS_FROM_JOBS and (
            isinstance(procs, bool) or not isinstance(procs, int) or not 1 <= procs <= MAX_INT):
        raise ValueError(f"procs must be a positive integer or 'from-jobs', got {procs!r}")
    if missing_request not in ("actual", "error"):
        raise ValueError(f"missing_request must be 'actual' or 'error', got {missing_request!r}")
    if too_wide not in ("drop", "clip", "error"):
        raise ValueError(f"too_wide must be 'drop', 'clip' or 'error', got {too_wide!r}")
    path = Path(path)
    data = _read_bytes(path)
    text = data if data.isascii() else _decode(data)  # ASCII bytes read as their own text
    options = {"perfect_estimates": perfect_estimates, "missing_request": missing_request,
               "too_wide": too_wide}
    got = read_fast(path, text, procs=procs, **options)
    lines_read = count_lines(text)
    if got is None:  # irregular input: the reference reads it (and names any error)
        if isinstance(text, bytes):
            text = text.decode("ascii")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        got = _read_lines(path, lines, procs=procs, **options)
    jobs, header, header_at, machine, source, counts, examples, job_lines = got

    report = CleaningReport(
        source=str(path),
        lines_read=lines_read,
        job_lines=job_lines,
        jobs_kept=len(jobs),
        machine_procs=machine,
        machine_source=source,
        counts=counts,
        examples=examples,
        options={"procs": procs, "perfect_estimates": perfect_estimates,
                 "missing_request": missing_request, "too_wide": too_wide},
    )
    jobs = jobs if isinstance(jobs, JobColumns) else tuple(jobs)
    return Workload(jobs, (machine,), name if name is not None else _default_name(path),
                    header, report)


# ----------------------------------------------------------------------------- writing

def _header_text(header: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in header.items():
        for item in (value if isinstance(value, list) else [value]):
            first, *rest = str(item).split("\n")
            out.append(f"; {key}: {first}".rstrip())
            out.extend(f";       {r}" for r in rest)
    return out


def _int_array(values: Sequence[Any], n: int, what: str) -> list[int]:
    seq = list(values)
    if len(seq) != n:
        raise ValueError(f"write_swf: {what} has {len(seq)} entries, workload has {n} jobs")
    out = []
    for i, x in enumerate(seq):
        xi = int(x)
        if xi != x:
            raise ValueError(f"write_swf: {what}[{i}] = {x!r} is not an integer number of seconds")
        out.append(xi)
    return out


def write_swf(
    path: str | os.PathLike[str],
    workload: Workload,
    *,
    start: Sequence[int] | None = None,
    end: Sequence[int] | None = None,
    killed: Sequence[bool] | None = None,
) -> None:
    """Write a K = 1 workload (optionally with a simulated schedule) as SWF.

    Parameters
    ----------
    path : str or path-like
        Output file; gzip-compressed (with a fixed timestamp, so the bytes are
        deterministic) when the name ends with ``.gz``.
    workload : Workload
        Must have K = 1 (processors only); otherwise ValueError, since SWF has no
        field for other resources that would round-trip.
    start, end : sequence of int, optional
        Start and end times in seconds, aligned with ``workload.jobs``; give both or
        neither. With them, field 3 (wait) is ``start - submit``, field 4 (run time) is
        ``end - start`` and field 11 (status) is 0 for a killed job, else 1. Without
        them, field 3 is the log's wait (``Job.wait``), field 11 is -1 and field 4 is
        the job's actual run time.
    killed : sequence of bool, optional
        Which jobs were killed; default ``end - start < runtime``.

    Notes
    -----
    The header is written from ``workload.header`` with ``MaxProcs`` set to the
    workload's capacity and a ``Note`` saying schedsearch wrote it. Fields 5 and 8 both
    hold the processors, 9 the requested time, 12 and 13 user and group; the other
    fields are -1. ``read_swf`` of the result gives the same jobs (id, submit,
    runtime, requested, demand, user, group, and the log's wait when no schedule is
    written).
    """
    if workload.K != 1:
        raise ValueError(f"write_swf: SWF holds processors only, workload has K={workload.K}")
    jobs = workload.jobs
    n = len(jobs)
    if (start is None) != (end is None):
        raise ValueError("write_swf: give both start and end, or neither")
    if killed is not None and start is None:
        raise ValueError("write_swf: killed needs start and end")

    header = dict(workload.header)
    old = header.get("MaxProcs")
    header["MaxProcs"] = workload.procs
    notes = list(header.get("Note", []))
    notes.append(WRITER_NOTE)
    if old is not None and old != workload.procs:
        notes.append(f"MaxProcs set to the workload's {workload.procs} processors "
                     f"(the source header said {old})")
    if start is not None:
        notes.append("fields 3 (wait), 4 (run time) and 11 (status: 1 done, 0 killed) "
                     "are the simulated schedule")
    header["Note"] = notes
    header.setdefault("Version", "2.2")
    header.setdefault("MaxJobs", n)
    header.setdefault("MaxRecords", n)

    out = _header_text(header)
    if start is None:
        for j in jobs:
            out.append(f"{j.id} {j.submit} {j.wait} {j.runtime} {j.demand[0]} -1 -1 "
                       f"{j.demand[0]} {j.requested} -1 -1 {j.user} {j.group} -1 -1 -1 -1 -1")
    else:
        s = _int_array(start, n, "start")
        e = _int_array(end, n, "end")
        k = None if killed is None else [bool(x) for x in killed]
        if k is not None and len(k) != n:
            raise ValueError(f"write_swf: killed has {len(k)} entries, workload has {n} jobs")
        for i, j in enumerate(jobs):
            if s[i] < j.submit:
                raise ValueError(f"write_swf: job {j.id} starts at {s[i]} before its submit "
                                 f"{j.submit}")
            if e[i] < s[i]:
                raise ValueError(f"write_swf: job {j.id} ends at {e[i]} before its start {s[i]}")
            run = e[i] - s[i]
            was_killed = k[i] if k is not None else run < j.runtime
            out.append(f"{j.id} {j.submit} {s[i] - j.submit} {run} {j.demand[0]} -1 -1 "
                       f"{j.demand[0]} {j.requested} -1 {0 if was_killed else 1} {j.user} "
                       f"{j.group} -1 -1 -1 -1 -1")
    data = ("\n".join(out) + "\n").encode("utf-8")
    path = Path(path)
    if path.name.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
    write_atomic(path, data)
