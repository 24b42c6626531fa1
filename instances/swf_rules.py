"""The rules of the SWF reader shared by the reference (:mod:`instances.swf`) and its
vectorised fast path (:mod:`instances.swf_fast`): the cleaning rules, the error type, the
header parser and the machine-size rule. Both readers import them from here, so neither
imports the other's rules back."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

RULES: dict[str, str] = {
    "unknown_submit": "dropped: unknown submit time (field 2 = -1)",
    "no_processors": "dropped: no processors (fields 5 and 8 both <= 0)",
    "bad_runtime": "dropped: negative or unknown run time (field 4)",
    "too_wide": "dropped: more processors than the machine",
    "too_wide_clipped": "clipped: processors set to the machine size",
    "procs_from_requested": "processors taken from field 8 (field 5 is -1 or 0)",
    "missing_request": "requested time unknown: set to the actual run time (>= 1 s)",
    "zero_request": "requested time 0: set to 1 s",
    "perfect_estimates": "requested time set to max(run time, 1 s) (perfect estimates)",
    "zero_runtime": "kept unchanged: run time 0",
    "unsorted_submit": "sorted stably by submit time (listed after a later submit)",
}
_DROP_RULES = ("unknown_submit", "no_processors", "bad_runtime", "too_wide")
_N_EXAMPLES = 5

# Header keys that may repeat; their values are always lists of strings.
_LIST_KEYS = frozenset({"Note", "Information", "Queue", "Partition", "Comment"})
#: Header keys of the SWF definition (version 2.2); recognised at any indentation.
HEADER_KEYS = frozenset({
    "Version", "Computer", "Installation", "Acknowledge", "Information", "Conversion",
    "MaxJobs", "MaxRecords", "Preemption", "UnixStartTime", "TimeZone", "TimeZoneString",
    "StartTime", "EndTime", "MaxNodes", "MaxProcs", "MaxRuntime", "MaxMemory",
    "AllowOveruse", "MaxQueues", "Queues", "Queue", "MaxPartitions", "Partitions",
    "Partition", "Note",
})
# "Key:" then the value, but not "://" (so "http://..." is not a key)
_KEY_RE = re.compile(r"^(\s*)([A-Za-z][A-Za-z0-9_]*)\s*:(?!//)\s*(.*)$")
_INT_RE = re.compile(r"^[+-]?[0-9]+$")
# a count in the header: digits, optionally followed by whitespace and a comment
_COUNT_RE = re.compile(r"^([+-]?[0-9]+)(?:\s+\S.*)?$")
# largest magnitude of a used (integral) field: exact in a float64, no int64 overflow in sums
MAX_INT = 2**53
PROCS_FROM_JOBS = "from-jobs"

class SwfError(ValueError):
    """Malformed SWF input; the message names the file and the 1-based line."""


def _cut(tok: str, limit: int = 40) -> str:
    """``repr`` of a token, cut to ``limit`` characters (an error never echoes megabytes)."""
    text = repr(tok)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parse_header(lines: list[tuple[int, str]]) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Parse ``;`` header lines into a dict (ints where the value is an integer).

    ``;`` then any whitespace then ``Key: value`` starts an entry when the key is
    indented by at most one space or is one of :data:`HEADER_KEYS` (right-aligned
    layouts); any other line continues the previous entry, joined with a newline (unless
    that entry is a bare integer, which a comment never extends: then the text goes to
    ``Comment``). Keys
    in ``Note``, ``Information``, ``Queue``, ``Partition`` are lists; another key that
    repeats becomes a list too. Text without any key goes to ``Comment``.

    Returns the header and, per key, the 1-based lines it was given on.
    """
    header: dict[str, Any] = {}
    where: dict[str, list[int]] = {}
    last: str | None = None
    for lineno, raw in lines:
        body = raw.lstrip()[1:]  # drop the ';'
        text = body.strip()
        if not text:
            last = None
            continue
        m = _KEY_RE.match(body)
        if m is not None and (len(m.group(1)) <= 1 or m.group(2) in HEADER_KEYS):
            key, value = m.group(2), (m.group(3) or "").strip()
            where.setdefault(key, []).append(lineno)
            if key in _LIST_KEYS:
                header.setdefault(key, []).append(value)
            elif key in header:
                old = header[key]
                header[key] = (old if isinstance(old, list) else [old]) + [value]
            else:
                header[key] = value
            last = key
        elif last is not None and not (isinstance(header[last], str)
                                       and _INT_RE.match(header[last])):
            old = header[last]
            if isinstance(old, list):
                old[-1] = f"{old[-1]}\n{text}" if old[-1] else text
            else:
                header[last] = f"{old}\n{text}" if old else text
        else:
            header.setdefault("Comment", []).append(text)
            last = "Comment"
    for key, value in header.items():
        if isinstance(value, str) and _INT_RE.match(value) and value.isascii():
            header[key] = int(value)
    return header, where


def _header_count(value: Any) -> int | None:
    """A positive count from a header value (``"338 (batch partition)"`` -> 338), or None.

    A repeated key (a list) must repeat the same count."""
    if isinstance(value, list):
        counts = {_header_count(v) for v in value}
        return counts.pop() if len(counts) == 1 else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value <= MAX_INT else None
    if isinstance(value, str) and value.isascii():
        m = _COUNT_RE.match(value.strip())
        if m and 0 < int(m.group(1)) <= MAX_INT:
            return int(m.group(1))
    return None


def _machine_size(path: Path, header: dict[str, Any], lines: dict[str, list[int]],
                  widest: int, procs: int | str | None) -> tuple[int, str]:
    """Machine size and where it came from (see the module docstring); ``widest`` is the
    largest processor count of any job line (field 5, else 8; 0 without job lines)."""
    if isinstance(procs, int):
        return procs, "procs argument"
    if procs == PROCS_FROM_JOBS:
        if widest < 1:
            raise SwfError(f"{path}: procs='from-jobs' but no job has processors; "
                           "give the machine size (--procs N)")
        return widest, "largest job (procs='from-jobs')"
    for key in ("MaxProcs", "MaxNodes"):
        if key in header:
            n = _header_count(header[key])
            if n is None:
                at = ",".join(str(i) for i in lines.get(key, []))
                raise SwfError(
                    f"{path}:{at}: header {key} is not a positive processor count "
                    f"({_cut(str(header[key]))}); give the machine size with --procs N "
                    "(procs=N)")
            return n, f"{key} header"
    hint = f" ({widest} processors)" if widest > 0 else ""
    raise SwfError(f"{path}: no machine size in the header (no MaxProcs or MaxNodes); give "
                   f"it with --procs N (procs=N), or --procs from-jobs to take the widest "
                   f"job{hint}")
