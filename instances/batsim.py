"""Batsim's formats: the JSON workload (read and write) and the ``jobs.csv`` schedule output.

Batsim (Dutot et al., JSSPP 2016; https://batsim.readthedocs.io) reads a workload of jobs
and profiles and writes one CSV line per job. This module maps both to the project's
:class:`~instances.job.Workload` (K = 1, processors). It imports no simulator code: the
``jobs.csv`` writer takes start and end arrays.

Workload (JSON), as documented in Batsim's ``docs/input-workload.rst`` and
``doc/profiles.md``::

    {"nb_res": 4,
     "jobs": [{"id": "1", "subtime": 0, "res": 2, "walltime": 120, "profile": "p60"}],
     "profiles": {"p60": {"type": "delay", "delay": 60}}}

============  ==========================  ==================================================
 field        Batsim meaning              used by schedsearch as
============  ==========================  ==================================================
 nb_res       machine size                ``Workload.capacity[0]`` (unless ``procs`` given)
 id           job identifier (string)     ``Job.id``: an integer or a string of digits is
                                          kept; otherwise jobs are numbered 1..n in file
                                          order (the report says so and keeps the map);
                                          the writers write the id as the file had it. A
                                          malformed number (``"+-7"``, ``"1.5"``) is refused
 subtime      submit time (s, float)      ``Job.submit``
 res          resources requested (>= 1)  ``Job.demand[0]``; above the machine: see
                                          ``too_wide`` (default: an error naming ``res``)
 walltime     optional; killed past it    ``Job.requested``; missing, null or -1: no
                                          walltime, so the run time (>= 1 s) is used
                                          (counted as ``missing_walltime``)
 profile      name of a profile           the profile must be ``{"type": "delay",
                                          "delay": d}``: ``Job.runtime`` is ``d``. Another
                                          profile type used by a job is refused by name.
                                          The writers keep the name.
 user, group  not Batsim fields           ``Job.user``, ``Job.group`` when present
 log_wait     not a Batsim field          ``Job.wait`` (the log's wait, seconds) when
                                          present, else -1 (unknown)
============  ==========================  ==================================================

Times are whole seconds in schedsearch; a fractional ``subtime``, ``delay`` or ``walltime``
is rounded up (so a job is never shorter than its profile, and rounding keeps
``delay <= walltime`` and the submit order), counted as ``rounded_times``. Any other fault (a
missing field, a wrong type, a negative time, a duplicate id, an undefined profile) raises
:class:`BatsimError` naming the file, the job and the field.

Output ``jobs.csv`` (Batsim's ``docs/output-jobs.rst``): the columns of :data:`JOBS_COLUMNS`,
one line per job; ``allocated_resources`` is an interval set such as ``"0-3 8"``
(processors 0 to 3 and 8). Processor ranges are assigned by :func:`assign_intervals` so that
no two jobs hold one processor at any instant, in memory that does not grow with ``nb_res``.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from instances import files
from instances.atomic import write_atomic
from instances.files import DuplicateKeyError, loads_json
from instances.job import Job, Workload
from instances.swf import _cut, rule_lines

__all__ = [
    "JOBS_COLUMNS",
    "BatsimError",
    "BatsimReport",
    "assign_intervals",
    "assign_processors",
    "interval_string",
    "intervals_text",
    "is_batsim_workload",
    "read_batsim",
    "write_batsim_jobs",
    "write_batsim_workload",
]

#: Columns of Batsim's ``jobs.csv``, in order.
JOBS_COLUMNS: tuple[str, ...] = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time",
    "finish_time", "waiting_time", "turnaround_time", "stretch", "allocated_resources",
    "consumed_energy", "metadata",
)

RULES: dict[str, str] = {
    "too_wide": "dropped: res above the machine size",
    "too_wide_clipped": "clipped: res set to the machine size",
    "missing_walltime": "no walltime: requested time set to the run time (>= 1 s)",
    "perfect_estimates": "requested time set to max(run time, 1 s) (perfect estimates)",
    "rounded_times": "fractional subtime, delay or walltime rounded up to whole seconds",
    "zero_runtime": "kept unchanged: delay 0",
    "renumbered": "id is not an integer: jobs numbered 1..n in file order",
    "unsorted_submit": "sorted stably by submit time (listed after a later submit)",
}
_DROP_RULES = ("too_wide",)
_N_EXAMPLES = 5
MAX_INT = 2**53
_STATE_DONE = "COMPLETED_SUCCESSFULLY"
_STATE_KILLED = "COMPLETED_WALLTIME_REACHED"


class BatsimError(ValueError):
    """Malformed Batsim input; the message names the file, the job and the field."""


@dataclass(frozen=True)
class BatsimReport:
    """What :func:`read_batsim` did to the jobs of one file (the interface of
    :class:`instances.swf.CleaningReport`: ``source``, ``summary()``, ``to_dict()``).

    Parameters
    ----------
    source : str
        File read.
    jobs_read, jobs_kept : int
        Jobs in the file and in the returned workload.
    machine_procs : int
        Processors of the machine.
    machine_source : str
        ``"nb_res"``, ``"procs argument"`` or ``"largest job (procs='from-jobs')"``.
    counts : dict of str to int
        Jobs touched per rule (keys of :data:`RULES`).
    examples : dict of str to tuple
        Up to five job ids (as written in the file) per rule.
    id_map : dict of str to int
        Batsim id -> ``Job.id`` when the ids were renumbered; empty otherwise.
    options : dict
        Reader options used.
    ids : dict of int to str
        ``Job.id`` -> the id as written in the file, where the two differ (renumbered
        ids, or integers written otherwise, such as ``"007"``).
    profiles : dict of int to str
        ``Job.id`` -> the job's profile name (for the writers).
    """

    source: str
    jobs_read: int
    jobs_kept: int
    machine_procs: int
    machine_source: str
    counts: dict[str, int]
    examples: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    id_map: dict[str, int] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    ids: dict[int, str] = field(default_factory=dict, repr=False)
    profiles: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def dropped(self) -> int:
        """Jobs dropped by any rule."""
        return sum(self.counts.get(r, 0) for r in _DROP_RULES)

    def summary(self) -> str:
        """Readable multi-line text: totals, then one line per rule that touched a job."""
        lines = [f"{self.source}: {self.jobs_read} Batsim jobs, {self.jobs_kept} kept, "
                 f"{self.dropped} dropped; machine {self.machine_procs} processors "
                 f"({self.machine_source})"]
        return "\n".join(lines + rule_lines(RULES, self.counts, self.examples))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return {
            "source": self.source, "format": "batsim", "jobs_read": self.jobs_read,
            "jobs_kept": self.jobs_kept, "dropped": self.dropped,
            "machine_procs": self.machine_procs, "machine_source": self.machine_source,
            "counts": dict(self.counts),
            "examples": {k: list(v) for k, v in self.examples.items()},
            "renumbered_ids": len(self.id_map), "options": dict(self.options),
        }


# ----------------------------------------------------------------------------- reading

def is_batsim_workload(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` looks like a Batsim JSON workload: a ``.json`` name, or a file whose
    first non-blank character is ``{`` (an SWF file starts with ``;`` or a digit; gzip is
    never JSON)."""
    path = Path(path)
    if path.name.endswith(".json"):
        return True
    with open(path, "rb") as fh:
        head = fh.read(4096)
    if head[:3] == b"\xef\xbb\xbf":
        head = head[3:]
    return head.lstrip()[:1] == b"{"


def _seconds(value: Any, where: str, *, minimum: float = 0.0) -> tuple[int, bool]:
    """A JSON number of seconds as a whole number (rounded up) and whether it was rounded."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BatsimError(f"{where} must be a number of seconds, got {_cut(value)}")
    if not math.isfinite(value) or abs(value) > MAX_INT:
        raise BatsimError(f"{where} is out of range: {_cut(value)}")
    if value < minimum:
        raise BatsimError(f"{where} must be >= {minimum:g}, got {_cut(value)}")
    whole = math.ceil(value)
    return int(whole), whole != value


def _count(value: Any, where: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT:
        raise BatsimError(f"{where} must be a positive integer, got {_cut(value)}")
    return value


_SIGNED = re.compile(r"[+-]?[0-9]+")
_NUMERIC_LOOKING = re.compile(r"[\s+\-0-9.eE]+")


def _int_id(raw: Any) -> int | None:
    """An integral id (``7`` or ``"7"``, an optional sign and ASCII digits), else None."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if abs(raw) <= MAX_INT else None
    if isinstance(raw, str) and _SIGNED.fullmatch(raw.strip()):
        v = int(raw)
        return v if abs(v) <= MAX_INT else None
    return None


def _check_id(jid: Any, where: str) -> None:
    """Refuse a string id made of signs, digits and dots that is no integer (``"+-7"``,
    ``"1.5"``, ``"1e3"``): a malformed number, not a name."""
    if isinstance(jid, str) and _NUMERIC_LOOKING.fullmatch(jid) and not _SIGNED.fullmatch(
            jid.strip()):
        raise BatsimError(f"{where}: field 'id' {_cut(jid)} is a malformed number (an id is "
                          f"an integer or a name)")


def read_batsim(
    path: str | os.PathLike[str],
    *,
    procs: int | str | None = None,
    perfect_estimates: bool = False,
    too_wide: str = "error",
    name: str | None = None,
) -> Workload:
    """Read a Batsim JSON workload of delay jobs into a K = 1 workload.

    Parameters
    ----------
    path : str or path-like
        The JSON workload.
    procs : int or "from-jobs", optional
        Machine size (processors), overriding ``nb_res``; ``"from-jobs"`` takes the widest
        job.
    perfect_estimates : bool
        Set every requested time to ``max(runtime, 1)`` seconds.
    too_wide : {"error", "drop", "clip"}
        A job whose ``res`` exceeds the machine raises (default), is dropped or clipped.
    name : str, optional
        Workload name; default the file name without ``.json``.

    Returns
    -------
    Workload
        Jobs sorted by submit time (seconds), capacity ``(machine,)``, header
        ``{"nb_res": ..., "format": "batsim"}`` and a :class:`BatsimReport` in
        ``Workload.cleaning``.

    Raises
    ------
    BatsimError
        Malformed input, naming the file, the job and the field.
    """
    if procs is not None and procs != "from-jobs" and (
            isinstance(procs, bool) or not isinstance(procs, int) or not 1 <= procs <= MAX_INT):
        raise ValueError(f"procs must be a positive integer or 'from-jobs', got {procs!r}")
    if too_wide not in ("error", "drop", "clip"):
        raise ValueError(f"too_wide must be 'error', 'drop' or 'clip', got {too_wide!r}")
    path = Path(path)
    try:
        raw = files.read_bytes(path, what="workload")
    except ValueError as exc:  # missing, a device or a pipe, too large, corrupt gzip
        raise BatsimError(str(exc)) from None
    if raw[:3] == b"\xef\xbb\xbf":
        raw = raw[3:]
    try:
        doc = loads_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BatsimError(f"{path}: not a JSON document: {exc}") from None
    except DuplicateKeyError as exc:  # two profiles of one name, say
        raise BatsimError(f"{path}: {exc}") from None
    if not isinstance(doc, dict):
        raise BatsimError(f"{path}: a Batsim workload is a JSON object, got "
                          f"{type(doc).__name__}")
    for key in ("nb_res", "jobs", "profiles"):
        if key not in doc:
            raise BatsimError(f"{path}: missing field '{key}'")
    nb_res = _count(doc["nb_res"], f"{path}: field 'nb_res'")
    jobs_in, profiles = doc["jobs"], doc["profiles"]
    if not isinstance(jobs_in, list):
        raise BatsimError(f"{path}: field 'jobs' must be a list")
    if not isinstance(profiles, dict):
        raise BatsimError(f"{path}: field 'profiles' must be an object")

    counts = dict.fromkeys(RULES, 0)
    examples: dict[str, list[Any]] = {r: [] for r in RULES}

    def note(rule: str, jid: Any) -> None:
        counts[rule] += 1
        if len(examples[rule]) < _N_EXAMPLES:
            examples[rule].append(jid)

    # Pass 1: parse and check every job; delays come from the profiles.
    delays: dict[str, tuple[int, bool]] = {}
    parsed: list[tuple[Any, int, int, int, int | None, int, int, bool, int]] = []
    pnames: list[str] = []
    seen: dict[Any, int] = {}
    for i, jd in enumerate(jobs_in):
        where = f"{path}: jobs[{i}]"
        if not isinstance(jd, dict):
            raise BatsimError(f"{where} must be an object")
        for key in ("id", "subtime", "res", "profile"):
            if key not in jd:
                raise BatsimError(f"{where}: missing field '{key}'")
        jid = jd["id"]
        if isinstance(jid, bool) or not isinstance(jid, (int, str)) or jid == "":
            raise BatsimError(f"{where}: field 'id' must be a string or an integer, "
                              f"got {_cut(jid)}")
        _check_id(jid, where)
        where = f"{path}: job {jid!s}"
        key_id = str(jid)
        if key_id in seen:
            raise BatsimError(f"{where}: duplicate id (first at jobs[{seen[key_id]}])")
        seen[key_id] = i
        submit, r1 = _seconds(jd["subtime"], f"{where}: field 'subtime'")
        res = _count(jd["res"], f"{where}: field 'res'")
        wall = jd.get("walltime")
        if wall is None or (not isinstance(wall, bool) and isinstance(wall, (int, float))
                            and wall == -1):
            req, r2 = None, False
        else:
            req, r2 = _seconds(wall, f"{where}: field 'walltime'", minimum=1e-300)
        pname = jd["profile"]
        if not isinstance(pname, str):
            raise BatsimError(f"{where}: field 'profile' must be a string, got {_cut(pname)}")
        if pname not in delays:
            if pname not in profiles:
                raise BatsimError(f"{where}: field 'profile': profile {pname!r} is not "
                                  "defined in 'profiles'")
            prof = profiles[pname]
            pwhere = f"{path}: profiles[{pname!r}]"
            if not isinstance(prof, dict) or "type" not in prof:
                raise BatsimError(f"{pwhere}: missing field 'type'")
            if prof["type"] != "delay":
                raise BatsimError(f"{pwhere}: profile type {prof['type']!r} is not supported "
                                  f"(job {jid!s}); only 'delay' profiles give a run time")
            if "delay" not in prof:
                raise BatsimError(f"{pwhere}: missing field 'delay'")
            delays[pname] = _seconds(prof["delay"], f"{pwhere}: field 'delay'")
        run, r3 = delays[pname]
        user = jd.get("user", -1)
        group = jd.get("group", -1)
        wait = jd.get("log_wait", -1)
        for fname, v in (("user", user), ("group", group), ("log_wait", wait)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise BatsimError(f"{where}: field '{fname}' must be an integer, got {_cut(v)}")
        parsed.append((jid, submit, run, res, req, user, group, r1 or r2 or r3, wait))
        pnames.append(pname)

    # Machine size.
    if isinstance(procs, int):
        machine, source = procs, "procs argument"
    elif procs == "from-jobs":
        machine = max((p[3] for p in parsed), default=0)
        if machine < 1:
            raise BatsimError(f"{path}: procs='from-jobs' but the workload has no job")
        source = "largest job (procs='from-jobs')"
    else:
        machine, source = nb_res, "nb_res"

    # Ids: kept when every one is an integer, else numbered 1..n in file order.
    ints = [_int_id(p[0]) for p in parsed]
    renumber = any(v is None for v in ints) or len(set(ints)) != len(ints)
    id_map: dict[str, int] = {}
    if renumber:
        id_map = {str(p[0]): k for k, p in enumerate(parsed, 1)}

    # Pass 2: cleaning rules.
    jobs: list[Job] = []
    written: dict[int, str] = {}
    profile_of: dict[int, str] = {}
    for k, (jid, submit, run, res, req, user, group, rounded, wait) in enumerate(parsed):
        if res > machine:
            if too_wide == "error":
                raise BatsimError(f"{path}: job {jid!s}: field 'res' = {res} exceeds the "
                                  f"machine's {machine} processors ({source}); choose "
                                  "wide='drop' or 'clip' (--wide) to go on")
            if too_wide == "drop":
                note("too_wide", jid)
                continue
            res = machine
            note("too_wide_clipped", jid)
        if rounded:
            note("rounded_times", jid)
        if run == 0:
            note("zero_runtime", jid)
        if renumber:
            note("renumbered", jid)
        if perfect_estimates:
            r = max(run, 1)
            if r != req:
                note("perfect_estimates", jid)
        elif req is None:
            r = max(run, 1)
            note("missing_walltime", jid)
        else:
            r = req
        job_id = k + 1 if renumber else ints[k]
        assert job_id is not None
        if str(jid) != str(job_id):
            written[job_id] = str(jid)
        profile_of[job_id] = pnames[k]
        jobs.append(Job(job_id, submit, run, r, (res,), user, group, wait))

    latest = None
    for j in jobs:
        if latest is not None and j.submit < latest:
            note("unsorted_submit", j.id)
        elif latest is None or j.submit > latest:
            latest = j.submit
    if counts["unsorted_submit"]:
        jobs.sort(key=lambda j: j.submit)

    report = BatsimReport(
        source=str(path), jobs_read=len(parsed), jobs_kept=len(jobs), machine_procs=machine,
        machine_source=source, counts=counts,
        examples={r: tuple(ex) for r, ex in examples.items()}, id_map=id_map,
        options={"procs": procs, "perfect_estimates": perfect_estimates,
                 "too_wide": too_wide}, ids=written, profiles=profile_of)
    default = path.name[:-5] if path.name.endswith(".json") else path.name
    return Workload(tuple(jobs), (machine,), name if name is not None else default,
                    {"format": "batsim", "nb_res": nb_res}, report)


# ----------------------------------------------------------------------------- writing

def batsim_names(workload: Workload) -> tuple[dict[int, str], dict[int, str]]:
    """The Batsim ids (where they differ from ``str(Job.id)``) and profile names of the
    jobs of a workload read by :func:`read_batsim`, keyed by ``Job.id``; empty maps for
    any other workload."""
    rep = workload.cleaning
    if isinstance(rep, BatsimReport):
        return rep.ids, rep.profiles
    return {}, {}


def _profile_name(runtime: int) -> str:
    return f"delay_{runtime}"


def write_batsim_workload(path: str | os.PathLike[str], workload: Workload) -> None:
    """Write a K = 1 workload as a Batsim JSON workload of delay jobs.

    ``nb_res`` is the machine's processors; each job has ``id`` (the job number as a
    string, as Batsim documents ids), ``subtime``, ``res``, ``walltime`` (the requested
    time), ``profile`` (``"delay_<run time>"``, one delay profile per distinct run time),
    and ``user`` / ``group`` / ``log_wait`` (``Job.wait``) when known. A workload read from
    a Batsim file keeps its own ids and profile names (:func:`batsim_names`; a profile name
    then holds the run time of its jobs). :func:`read_batsim` of the file gives the same
    jobs. The bytes depend only on the workload (keys in a fixed order).
    """
    if workload.K != 1:
        raise ValueError(f"write_batsim_workload: Batsim delay workloads hold processors only, "
                         f"workload has K={workload.K}")
    ids, profile_of = batsim_names(workload)
    jobs_out = []
    delays: dict[str, int] = {}
    for j in workload.jobs:
        pname = profile_of.get(j.id, _profile_name(j.runtime))
        if delays.setdefault(pname, j.runtime) != j.runtime:  # a name of two run times
            pname = _profile_name(j.runtime)
            if delays.setdefault(pname, j.runtime) != j.runtime:
                raise ValueError(f"write_batsim_workload: profile name {pname!r} is taken "
                                 f"by another run time (job {j.id})")
        d: dict[str, Any] = {"id": ids.get(j.id, str(j.id)), "subtime": j.submit,
                             "res": j.demand[0], "walltime": j.requested, "profile": pname}
        if j.user >= 0:
            d["user"] = j.user
        if j.group >= 0:
            d["group"] = j.group
        if j.wait >= 0:
            d["log_wait"] = j.wait
        jobs_out.append(d)
    profiles = {p: {"type": "delay", "delay": delays[p]} for p in sorted(delays)}
    doc = {"nb_res": workload.procs,
           "description": f"{workload.name}: written by schedsearch "
                          "(instances.batsim.write_batsim_workload)",
           "jobs": jobs_out, "profiles": profiles}
    write_atomic(path, json.dumps(doc, indent=1) + "\n")


def interval_string(ids: Sequence[int] | np.ndarray) -> str:
    """Batsim's interval-set text of sorted processor ids: ``[0, 1, 2, 3, 8]`` -> ``"0-3 8"``."""
    ids = np.asarray(ids, dtype=np.int64)
    if ids.size == 0:
        return ""
    breaks = np.flatnonzero(np.diff(ids) != 1)
    starts = np.concatenate(([ids[0]], ids[breaks + 1]))
    ends = np.concatenate((ids[breaks], [ids[-1]]))
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(starts, ends, strict=True))


Intervals = tuple[tuple[int, int], ...]
"""Processor ids as sorted, disjoint, inclusive ranges ``((first, last), ...)``."""


def intervals_text(ranges: Intervals) -> str:
    """Batsim's interval-set text of ranges: ``((0, 3), (8, 8))`` -> ``"0-3 8"``."""
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


class _FreeRanges:
    """The free processors of a machine as sorted disjoint ranges: memory and time per
    operation grow with the number of ranges (at most the running jobs plus one), never
    with the machine's size."""

    def __init__(self, capacity: int) -> None:
        self.first = [0]
        self.last = [capacity - 1]
        self.count = capacity

    def take(self, p: int) -> Intervals:
        """The ``p`` lowest-numbered free processors (the caller checked ``p <= count``)."""
        out = []
        while p > 0:
            a, b = self.first[0], self.last[0]
            if b - a + 1 <= p:
                out.append((a, b))
                del self.first[0], self.last[0]
                p -= b - a + 1
                self.count -= b - a + 1
            else:
                out.append((a, a + p - 1))
                self.first[0] = a + p
                self.count -= p
                p = 0
        return tuple(out)

    def give(self, ranges: Intervals) -> None:
        """Free ``ranges`` again, merging with adjacent free ranges."""
        first, last = self.first, self.last
        for a, b in ranges:
            k = bisect.bisect_left(first, a)
            if k > 0 and last[k - 1] == a - 1:  # joins the range below
                k -= 1
                last[k] = b
            else:
                first.insert(k, a)
                last.insert(k, b)
            if k + 1 < len(first) and first[k + 1] == last[k] + 1:  # and the one above
                last[k] = last[k + 1]
                del first[k + 1], last[k + 1]
            self.count += b - a + 1


def assign_intervals(procs: Sequence[int], start: Sequence[int], end: Sequence[int],
                     capacity: int) -> list[Intervals]:
    """Processor ranges for each job of a schedule, no processor held by two jobs at once.

    Jobs hold their processors over ``[start, end)``. Events are taken in time order, the
    ends at a time before the starts at that time; the starts at one time go zero-length
    jobs first, then by index. Each starting job takes the lowest-numbered free processors
    (so a job usually gets one contiguous range). A job with ``start == end`` gets free
    processors at its start and gives them back at once. Memory and time do not grow with
    ``capacity`` (the free processors are kept as ranges).

    Parameters
    ----------
    procs, start, end : sequences of int
        Processors requested, start and end time (seconds) of each job.
    capacity : int
        Processors of the machine (ids ``0 .. capacity - 1``).

    Returns
    -------
    list of Intervals
        Each job's processors as sorted inclusive ranges.

    Raises
    ------
    ValueError
        The schedule uses more than ``capacity`` processors at some instant, or a job ends
        before it starts.
    """
    p = np.asarray(procs, dtype=np.int64)
    s = np.asarray(start, dtype=np.int64)
    e = np.asarray(end, dtype=np.int64)
    n = len(p)
    if len(s) != n or len(e) != n:
        raise ValueError("assign_processors: procs, start and end differ in length")
    if n and (e < s).any():
        i = int(np.flatnonzero(e < s)[0])
        raise ValueError(f"assign_processors: job index {i} ends at {e[i]} before its start "
                         f"{s[i]}")
    free = _FreeRanges(int(capacity))
    out: list[Intervals] = [()] * n
    by_start = np.lexsort((np.arange(n), s < e, s)).tolist()  # by time, zero-length first
    by_end = np.argsort(e, kind="stable").tolist()
    sl, el, pl = s.tolist(), e.tolist(), p.tolist()
    k_end = 0
    for i in by_start:
        t = sl[i]
        while k_end < n and el[by_end[k_end]] <= t:  # release every job ended by t
            j = by_end[k_end]
            if sl[j] < el[j]:  # started before t (s < e <= t), so it holds processors
                free.give(out[j])
            k_end += 1
        if pl[i] > free.count:
            raise ValueError(f"assign_processors: job index {i} needs {pl[i]} processors at "
                             f"time {t}, only {free.count} of {capacity} free")
        out[i] = free.take(pl[i])
        if sl[i] == el[i]:
            free.give(out[i])
    return out


def assign_processors(procs: Sequence[int], start: Sequence[int], end: Sequence[int],
                      capacity: int) -> list[np.ndarray]:
    """:func:`assign_intervals` as arrays of processor ids per job (sorted int64; memory
    proportional to each job's processors: use the ranges for wide jobs)."""
    return [np.concatenate([np.arange(a, b + 1, dtype=np.int64) for a, b in r])
            if r else np.empty(0, dtype=np.int64)
            for r in assign_intervals(procs, start, end, capacity)]


def write_batsim_jobs(
    path: str | os.PathLike[str],
    workload: Workload,
    start: Sequence[int],
    end: Sequence[int],
    *,
    killed: Sequence[bool] | None = None,
    workload_name: str | None = None,
) -> list[Intervals]:
    """Write a simulated schedule as Batsim's ``jobs.csv`` (columns :data:`JOBS_COLUMNS`).

    Parameters
    ----------
    path : str or path-like
        Output CSV file.
    workload : Workload
        K = 1 workload the schedule is for.
    start, end : sequences of int
        Start and end times (seconds), aligned with ``workload.jobs``.
    killed : sequence of bool, optional
        Jobs killed at their requested time; default ``end - start < runtime``.
    workload_name : str, optional
        The ``workload_name`` column; default the workload's name (or ``"w0"``).

    Returns
    -------
    list of Intervals
        The processors given to each job (see :func:`assign_intervals`).

    Notes
    -----
    ``job_id`` and ``profile`` are the workload's own when it was read from a Batsim file
    (:func:`batsim_names`), else the job number and ``"delay_<run time>"`` as
    :func:`write_batsim_workload` names them;
    ``success`` is 1 and ``final_state`` ``COMPLETED_SUCCESSFULLY`` for a job that ran to
    its end, 0 and ``COMPLETED_WALLTIME_REACHED`` for a killed one; ``execution_time`` is
    ``end - start``, ``waiting_time`` ``start - submit``, ``turnaround_time``
    ``end - submit``, ``stretch`` ``turnaround_time / execution_time`` (``inf`` for a job
    of zero length); ``consumed_energy`` is -1 (no energy model, as Batsim writes it
    without one) and ``metadata`` empty.
    """
    if workload.K != 1:
        raise ValueError(f"write_batsim_jobs: jobs.csv holds processors only, workload has "
                         f"K={workload.K}")
    n = len(workload)
    s = np.asarray(start, dtype=np.int64)
    e = np.asarray(end, dtype=np.int64)
    if len(s) != n or len(e) != n:
        raise ValueError(f"write_batsim_jobs: start/end have {len(s)}/{len(e)} entries, "
                         f"workload has {n} jobs")
    runtime = np.fromiter((j.runtime for j in workload.jobs), dtype=np.int64, count=n)
    submit = np.fromiter((j.submit for j in workload.jobs), dtype=np.int64, count=n)
    procs = np.fromiter((j.demand[0] for j in workload.jobs), dtype=np.int64, count=n)
    if n and (s < submit).any():
        i = int(np.flatnonzero(s < submit)[0])
        raise ValueError(f"write_batsim_jobs: job {workload.jobs[i].id} starts at {s[i]} "
                         f"before its submit {submit[i]}")
    k = (e - s < runtime) if killed is None else np.asarray(killed, dtype=bool)
    if len(k) != n:
        raise ValueError(f"write_batsim_jobs: killed has {len(k)} entries, workload has {n}")
    alloc = assign_intervals(procs, s, e, workload.procs)
    wname = workload_name if workload_name is not None else (workload.name or "w0")
    ids, profile_of = batsim_names(workload)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(JOBS_COLUMNS)
    for i, j in enumerate(workload.jobs):
        run = int(e[i] - s[i])
        turnaround = int(e[i] - submit[i])
        stretch = repr(turnaround / run) if run > 0 else "inf"
        w.writerow((ids.get(j.id, j.id), wname, profile_of.get(j.id, _profile_name(j.runtime)),
                    j.submit, j.demand[0], j.requested,
                    0 if k[i] else 1, _STATE_KILLED if k[i] else _STATE_DONE, int(s[i]), run,
                    int(e[i]), int(s[i] - submit[i]), turnaround, stretch,
                    intervals_text(alloc[i]), -1, ""))
    write_atomic(path, buf.getvalue())
    return alloc
