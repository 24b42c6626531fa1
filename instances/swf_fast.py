"""Vectorised fast path of the SWF reader (:func:`instances.swf.read_swf`).

The line-by-line reader in :mod:`instances.swf` is the reference: it names the file, line
and field of every error and defines the cleaning rules. This module reads the same files
with NumPy, on the bytes of the job lines in pieces of whole lines of about 256 kB (so that
the temporary arrays stay in the processor's cache: a quarter of the time of one pass over
a year-long log), and gives the same workload and the same
:class:`~instances.swf.CleaningReport`, or ``None`` whenever the input is anything but
regular, so that the reference reads it again and says what it says (every error message
comes from the reference).

Regular input, accepted here:

- the header (lines whose first token starts with ``;``) and blank lines come before the
  first job line; after it, no ``;`` at all;
- the job lines hold only ASCII digits, ``-``, ``.``, space, tab, carriage return and the
  newline;
- every token is a number of the form ``-?D+(.D*)?`` (D a digit) of at most 15 characters,
  so that its integer part is exact in a 64-bit integer and far below ``2**53``;
- every non-blank line has exactly 18 tokens;
- the used fields (1, 2, 3, 4, 5, 8, 9, 12, 13) have no non-zero digit after the point;
- no submit time below -1, no duplicate job number among jobs with a known submit time,
  no job that the options refuse (``too_wide="error"``, ``missing_request="error"``), and
  a machine size that :func:`instances.swf_rules._machine_size` accepts.

A used number is parsed exactly: its integer part as ``sum d * 10**e`` over its digits,
its fraction only checked for non-zero digits. The unused fields are parsed only as far as
the grammar above: any such token is a finite number, which is all the reference asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from instances import swf_rules as rules
from instances.job import JobColumns, strictly_increasing

__all__ = ["count_lines", "read_fast"]

N_FIELDS = 18
_USED_COLS = (0, 1, 3, 4, 7, 8, 11, 12, 2)
_MAX_TOKEN = 15  # characters: 15 digits stay below 2**53 and in int64

# byte classes: 0 anything else, 1 digit, 2 '-', 3 '.', 4 blank, 5 newline
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[ord("0"): ord("9") + 1] = 1
_CLASS[ord("-")] = 2
_CLASS[ord(".")] = 3
for _ch in " \t\r":
    _CLASS[ord(_ch)] = 4
_CLASS[ord("\n")] = 5
_POW10 = 10 ** np.arange(_MAX_TOKEN, dtype=np.int64)
#: bytes of job lines parsed at once (then up to the end of the line)
_CHUNK = 1 << 18


def _split_header(text: str | bytes) -> tuple[list[tuple[int, str]], int] | None:
    """Header lines (1-based line number, text) before the first job line, and the offset
    of that line in ``text``; None when there is no job line. ``text`` is the decoded file,
    or its bytes when they are all ASCII (each line is then decoded on its own: the same
    header text and offset)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    header: list[tuple[int, str]] = []
    pos = 0
    lineno = 0
    while pos < len(text):
        lineno += 1
        nl = text.find(newline, pos)
        if nl < 0:
            nl = len(text)
        line = text[pos:nl]
        if isinstance(line, bytes):
            line = line.decode("ascii")
        parts = line.split()
        if parts:
            if parts[0][0] != ";":
                return header, pos
            header.append((lineno, line))
        pos = nl + 1
    return None


def count_lines(text: str | bytes) -> int:
    """Lines of ``text`` (or of its bytes) as the reference counts them (split at newlines,
    without the empty string after a final newline)."""
    newline = "\n" if isinstance(text, str) else b"\n"
    return text.count(newline) + (0 if text.endswith(newline) or not text else 1)


def parse_columns(text: str | bytes, start: int = 0) -> np.ndarray | None:
    """The used fields of the job lines ``text[start:]`` as an ``(n, 9)`` int64 array.

    Columns: job number, submit, run time, processors (field 5), processors (field 8),
    requested time, user, group, wait (field 3). None when the lines are not regular
    (module docstring). Only the used tokens are converted; the others are only checked
    against the grammar. Bytes are read in place (a byte outside ASCII is irregular), text
    is encoded first.
    """
    if isinstance(text, str):
        body = text[start:]
        if not body.isascii():
            return None
        data, start = body.encode("ascii"), 0
    else:
        data = text
    parts = []
    lo = start
    while lo < len(data):  # pieces of whole lines, small enough to stay in the CPU's cache
        nl = data.find(b"\n", lo + _CHUNK)
        hi = len(data) if nl < 0 else nl + 1
        part = _parse_lines(np.frombuffer(data, np.uint8, hi - lo, lo))
        if part is None:
            return None
        parts.append(part)
        lo = hi
    if not parts or not sum(len(x) for x in parts):
        return None
    return np.concatenate(parts)


def _parse_lines(b: np.ndarray) -> np.ndarray | None:
    """:func:`parse_columns` on the bytes ``b`` of whole lines (the last one may lack its
    newline); an ``(n, 9)`` int64 array, or None when they are not regular."""
    c = _CLASS[b]
    if not c.all():  # a byte of class 0
        return None
    blank = c >= 4
    word = ~blank
    starts = word.copy()
    starts[1:] &= blank[:-1]
    ends = word.copy()
    ends[:-1] &= blank[1:]
    sp = np.flatnonzero(starts)
    ep = np.flatnonzero(ends)
    n_tok = sp.size
    if n_tok == 0:
        return np.zeros((0, len(_USED_COLS)), np.int64)
    if n_tok % N_FIELDS or int((ep - sp).max()) >= _MAX_TOKEN:
        return None
    # 18 tokens per non-blank line: each record's first and last tokens on one line, the
    # next record on a later line
    nl = np.flatnonzero(c == 5)
    first_line = np.searchsorted(nl, sp[::N_FIELDS])
    last_line = np.searchsorted(nl, ep[N_FIELDS - 1::N_FIELDS])
    if (first_line != last_line).any() or (first_line[1:] <= last_line[:-1]).any():
        return None
    # '-' only first in its token and followed by a digit
    mp = np.flatnonzero(c == 2)
    if mp.size and (not starts[mp].all() or mp[-1] + 1 >= b.size or not (c[mp + 1] == 1).all()):
        return None
    # '.' after a digit, at most one per token
    dp = np.flatnonzero(c == 3)
    int_end = ep.copy()  # last byte of each token's integer part
    if dp.size:
        if dp[0] == 0 or not (c[dp - 1] == 1).all():
            return None
        dtok = np.searchsorted(sp, dp, side="right") - 1
        if dtok.size > 1 and not (np.diff(dtok) > 0).all():
            return None
        int_end[dtok] = dp - 1
        # a used field with a non-zero digit after the point is not an integer: the
        # reference names it
        used_dot = np.isin(dtok % N_FIELDS, _USED_COLS)
        pos, last = dp[used_dot] + 1, ep[dtok[used_dot]]
        while pos.size:
            inside = pos <= last
            pos, last = pos[inside], last[inside]
            if (b[pos] != ord("0")).any():
                return None
            pos = pos + 1
    # the used tokens' integer parts, grouped by their number of digits
    used = (np.arange(N_FIELDS * (n_tok // N_FIELDS)).reshape(-1, N_FIELDS)[:, _USED_COLS]
            .ravel())
    neg = b[sp[used]] == ord("-")
    first_digit = sp[used] + neg
    n_digits = int_end[used] - first_digit + 1
    value = np.empty(used.size, dtype=np.int64)
    for k in np.flatnonzero(np.bincount(n_digits)):
        sel = np.flatnonzero(n_digits == k)
        digits = b[first_digit[sel, None] + np.arange(k)].astype(np.int64) - ord("0")
        value[sel] = digits @ _POW10[k - 1::-1]
    value[neg] *= -1
    return value.reshape(-1, len(_USED_COLS))


def _first(ids: np.ndarray, mask: np.ndarray, limit: int) -> tuple[int, ...]:
    return tuple(ids[np.flatnonzero(mask)[:limit]].tolist())


def read_fast(path: Path, text: str | bytes, *, procs: int | str | None,
              perfect_estimates: bool, missing_request: str, too_wide: str
              ) -> tuple[JobColumns, dict[str, Any], dict[str, list[int]], int, str,
                         dict[str, int], dict[str, tuple[int, ...]], int] | None:
    """Jobs (as columns: the reference's ``Job`` objects are ``jobs.to_jobs()``), header,
    header lines, machine size and source, rule counts and examples, and job-line count of
    the SWF ``text`` of ``path`` (or its bytes, when they are all ASCII); None when the
    reference must read it.

    Same arguments and rules as :func:`instances.swf.read_swf` (which calls this first).
    """

    split = _split_header(text)
    if split is None:
        return None
    header_lines, first = split
    cols = parse_columns(text, first)
    if cols is None:
        return None
    jid, submit, run, p5, p8, req, user, group, wait = cols.T
    n = jid.size
    if (submit < -1).any():
        return None
    known = jid[submit >= 0]
    if not strictly_increasing(known) and np.unique(known).size != known.size:
        return None  # a duplicate job number (increasing numbers are all distinct)
    header, header_at = rules._parse_header(header_lines)
    widest = int(np.where(p5 > 0, p5, p8).max())
    try:
        machine, source = rules._machine_size(path, header, header_at, widest, procs)
    except rules.SwfError:
        return None

    counts = dict.fromkeys(rules.RULES, 0)
    masks: dict[str, np.ndarray] = {}
    keep = submit >= 0
    masks["unknown_submit"] = ~keep
    p = np.where(p5 > 0, p5, p8)
    masks["no_processors"] = keep & (p <= 0)
    keep &= ~masks["no_processors"]
    masks["bad_runtime"] = keep & (run < 0)
    keep &= ~masks["bad_runtime"]
    wide = keep & (p > machine)
    if wide.any():
        if too_wide == "error":
            return None
        if too_wide == "drop":
            masks["too_wide"] = wide
            keep &= ~wide
        else:
            masks["too_wide_clipped"] = wide
            p = np.where(wide, machine, p)
    masks["procs_from_requested"] = keep & (p5 <= 0)
    masks["zero_runtime"] = keep & (run == 0)
    at_least_run = np.maximum(run, 1)
    if perfect_estimates:
        r = at_least_run
        masks["perfect_estimates"] = keep & (r != req)
    else:
        missing = keep & (req < 0)
        if missing_request == "error" and missing.any():
            return None
        masks["missing_request"] = missing
        masks["zero_request"] = keep & (req == 0)
        r = np.where(missing, at_least_run, np.where(req == 0, 1, req))
    examples: dict[str, tuple[int, ...]] = {rule: () for rule in rules.RULES}
    for rule, mask in masks.items():
        counts[rule] = int(np.count_nonzero(mask))
        examples[rule] = _first(jid, mask, rules._N_EXAMPLES)

    kept = np.flatnonzero(keep)
    s = submit[kept]
    if s.size > 1:
        late = np.r_[False, s[1:] < np.maximum.accumulate(s)[:-1]]
        if late.any():
            counts["unsorted_submit"] = int(np.count_nonzero(late))
            examples["unsorted_submit"] = _first(jid[kept], late, rules._N_EXAMPLES)
            kept = kept[np.argsort(s, kind="stable")]
    jobs = JobColumns(jid[kept], submit[kept], run[kept], r[kept], p[kept][:, None], user[kept],
                      group[kept], wait[kept])
    return jobs, header, header_at, machine, source, counts, examples, n
