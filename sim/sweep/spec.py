"""Sweep specifications: read a TOML or JSON file, check every key, expand the grid.

A spec describes workloads, policies with their options, machine sizes, overrun modes,
seeds and metrics; every list-valued grid entry multiplies the cells. Example (TOML)::

    version = 1                       # spec format version (required, must be 1)
    name = "demo"                     # the store remembers it
    metrics = ["avg_wait", "avg_bounded_slowdown", "utilization"]
    seeds = [0, 1, 2]                 # seeds of the synthetic workloads
    procs = [64, 128]                 # machine sizes; omit for the trace's own size
    overrun = ["kill"]                # "kill" and/or "run"
    wide = "error"                    # jobs wider than the machine: error, drop or clip
    time_limit = 600                  # seconds of wall clock per cell (optional)

    [[workloads]]
    name = "kth"
    trace = "KTH-SP2"                 # bundled name or path of an SWF file
    months = ["1996-10", "1996-11"]   # or "each"; omit for the whole trace
    load = [1.0, 1.2]                 # submit times divided by the factor
    priorities = "fifth"              # optional: "equal" or "fifth" (Talby & Feitelson)

    [[workloads]]
    name = "syn"
    synthetic = { n_jobs = 200, capacity = 64, load = [0.7, 0.9] }

    [[policies]]
    name = "conservative"

    [[policies]]
    name = "slack"
    options = { order = ["AST", "DP"], sf = [1.0, 3.0] }

A JSON spec has the same keys. Workload keys: ``name`` (required), exactly one of
``trace`` or ``synthetic`` (keyword arguments of ``instances.synthetic.random_workload``
except ``seed``; list values expand), and optionally ``months`` ("each" or a list of
``YYYY-MM`` labels: one cell per month, simulated from an empty machine) or ``weeks``
("each" or a list of ISO weeks ``YYYY-Www`` of the log's time zone, Monday to Monday:
one cell per week, from an empty machine; ``instances.weeks``), ``window``
(``[start, end)`` in seconds after the first submit), ``max_jobs`` (the first N jobs of
the selection), ``load`` (list expands), ``priorities`` ("equal"/"fifth") with
``priority_high`` (UP = PP of the high-priority jobs, default 1) and
``perfect_estimates``. A trace workload is deterministic, so its cells get seed 0, unless
it has ``replicate``: a method of ``instances.replicate`` (``"resample"``, Zakay &
Feitelson's user-based workload resampling, week by week: long-term users kept, for
each week as many temporary users as the log's week starts drawn from all temporary
users and moved by whole weeks; option ``long_term``: the span in weeks from which a
user is long-term, default 12; option ``users``: the number of temporary users drawn per
week multiplied, the load by the number of users, a number or a list expanding into
cells with a ``users`` parameter; ``"jitter"``, run times times a factor in ``[1 - amount, 1 +
amount]``; ``"estimates"``, Tsafrir-model requested times), as a string or a table
``{method = "jitter", amount = 0.1}``; each seed is then a replica of the log (after the
month or week selection, before ``window``, ``max_jobs`` and ``load``: ``load``
compresses the replica's submit times). Synthetic and replicated workloads get one cell
per seed (``seeds`` of the workload, else of the spec). ``feedback = true`` (a trace, plain
or replicated) simulates with user feedback (``instances.dependencies``, Zakay &
Feitelson): a job submitted at most 20 minutes after the log's end of an earlier job of
its user is submitted that think time after the earlier job's simulated end; refused with
``months``, ``weeks`` (a part from an empty machine cuts the sessions) and a ``load``
other than 1 (the compression would move the independent jobs only: change the load of a
resampled log by ``users``); two workloads, with and without it, compare the two.
Policy keys: ``name`` (registered), ``label`` (default: the name, followed by the
options that vary), ``options`` (keyword options of the policy factory, checked against
its signature; list values expand).

Values no cell could run are refused here, before any store exists: seeds outside
``[0, 2**63 - 1]`` (the store's INTEGER column), loads and time limits that are not
finite and positive (time limits at most ``MAX_TIME_LIMIT`` s), machine sizes and job
counts past ``2**53``, synthetic workloads of more than ``MAX_SYNTHETIC_JOBS`` jobs, and
trace files the cells cannot read (not a regular file, a K-resource ``.kswf`` workload,
or a first job line that is not 18 SWF numbers). The cells are counted from the lengths
of the lists before the grid is built; a spec of more than ``MAX_CELLS`` (1,000,000)
cells is refused, naming the lists that multiply. A spec nested more than ``MAX_DEPTH``
levels deep is refused as well.

Every error is a ``SpecError`` (a ValueError) whose message starts with the file and
the key, for example ``spec.toml: policies[1].options.sff: ...``; it is one line, echoes
user values cut short, and names the closest known names rather than all of them.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import itertools
import json
import math
import re
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from instances.files import DuplicateKeyError, loads_json, read_bytes

#: the spec format version this code reads
SPEC_VERSION = 1

TOP_KEYS = {"version", "name", "description", "metrics", "seeds", "procs", "overrun",
            "wide", "time_limit", "workloads", "policies"}
WORKLOAD_KEYS = {"name", "trace", "synthetic", "months", "weeks", "window", "max_jobs",
                 "load", "priorities", "priority_high", "perfect_estimates", "seeds",
                 "replicate", "feedback"}
POLICY_KEYS = {"name", "label", "options"}
WIDE_MODES = ("error", "drop", "clip")
OVERRUN_MODES = ("kill", "run")

#: every metric a cell records (see ``sim.sweep.cell.cell_metrics``), with its meaning
METRICS: dict[str, str] = {
    "jobs": "jobs simulated",
    "avg_wait": "mean wait (start - submit) [s]",
    "max_wait": "largest wait [s]",
    "total_wait": "sum of waits [s] (pool cells: total_wait / jobs)",
    "avg_response": "mean response (end - submit) [s]",
    "avg_slowdown": "mean slowdown (response / run)",
    "avg_bounded_slowdown": "mean bounded slowdown (response / max(run, 10 s))",
    "avg_weighted_response": "mean response weighted by processors x run [s]",
    "utilization": "processor-seconds used / (procs x makespan)",
    "makespan": "last end - first submit [s]",
    "killed": "jobs killed at their requested time",
    "avg_queue_length": "time-averaged number of waiting jobs",
    "max_queue_length": "largest number of waiting jobs",
    "offered_load": "work / (procs x span of submits): the load the cell offers",
    "backlog_growth": "slope of the queued work over the arrivals [s per s]; > 0: growing",
    "backlog_end_s": "queued work at the last submit [s of the whole machine]",
    "wait_p50": "median wait [s]",
    "wait_p90": "90th percentile of wait [s]",
    "wait_p99": "99th percentile of wait [s]",
    "bsld_p50": "median bounded slowdown",
    "bsld_p90": "90th percentile of bounded slowdown",
    "bsld_p99": "99th percentile of bounded slowdown",
    "jobs_high": "high-priority jobs (with priorities)",
    "avg_wait_high": "mean wait of the high-priority jobs [s]",
    "total_wait_high": "sum of the high-priority jobs' waits [s]",
    "jobs_low": "ordinary jobs (with priorities)",
    "avg_wait_low": "mean wait of the ordinary jobs [s]",
    "total_wait_low": "sum of the ordinary jobs' waits [s]",
}

_MONTH = re.compile(r"^\d{4}-\d{2}$")
_WEEK = re.compile(r"^\d{4}-W\d{2}$")

#: most cells one spec may expand to (counted before the grid is built)
#: largest spec file read (bytes); a spec is a page of text, a device or pipe is refused
MAX_SPEC_BYTES = 1 << 24

MAX_CELLS = 1_000_000
#: largest synthetic workload of one cell (jobs)
MAX_SYNTHETIC_JOBS = 1_000_000
#: largest per-cell time limit [s] (the interval timer's range stays far away)
MAX_TIME_LIMIT = 1e9
#: largest seed: SQLite's 64-bit INTEGER column of the store holds it
MAX_SEED = 2 ** 63 - 1
#: largest machine size or job count in a spec (exact in a float, as in SWF files)
MAX_INT = 2 ** 53
#: bytes of a trace read by the spec check to recognise an SWF file
_SNIFF_BYTES = 1 << 20


class SpecError(ValueError):
    """A bad sweep spec: the message names the file and the key."""


def _err(source: str, key: str, msg: str) -> SpecError:
    return SpecError(f"{source}: {key}: {msg}")


def _cut(text: str, limit: int = 120) -> str:
    """``text`` on one line, cut to ``limit`` characters (the cut marked ``...``)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters (the cut marked ``...``)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deeply, or an int of 5,000 digits
        text = f"<{type(value).__name__}>"
    return _cut(text, limit)


def closest(name: Any, known: Iterable[str], what: str = "known") -> str:
    """A short hint for an unknown name: the closest known ones (difflib), never the
    whole list when it is long."""
    known = sorted(set(known))
    if len(known) <= 8:
        from sim.names import did_you_mean

        return f"{did_you_mean(name, known)}{what}: {', '.join(known)}"
    same = [k for k in known if k.lower() == str(name)[:200].lower() and k != name]
    if same:
        return f"closest: {same[0]} (names are case-sensitive; {len(known)} {what})"
    near = difflib.get_close_matches(str(name)[:200], known, n=3, cutoff=0.5)
    if near:
        return f"closest: {', '.join(near)} ({len(known)} {what})"
    return f"none close; {what} include {', '.join(known[:5])}, ... ({len(known)} in all)"


def read_spec(path: str | Path) -> dict[str, Any]:
    """Read a spec file (``.toml`` or ``.json``) into a dictionary (not yet checked).

    Raises SpecError naming the file (and line, for a syntax error).
    """
    path = Path(path)
    try:  # a device (/dev/zero) or a pipe would be read without end
        raw = read_bytes(path, limit=MAX_SPEC_BYTES, what="sweep spec")
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    if path.suffix.lower() == ".json":
        try:
            data = loads_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            line = getattr(exc, "lineno", "?")
            raise SpecError(f"{path}: line {line}: invalid JSON: {short(str(exc), 120)}"
                            ) from None
        except RecursionError:
            raise SpecError(f"{path}: invalid JSON: nested too deeply") from None
        except DuplicateKeyError as exc:
            raise SpecError(f"{path}: invalid JSON: {exc}") from None
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            raise SpecError(f"{path}: invalid JSON: {short(str(exc), 120)}") from None
    else:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise SpecError(f"{path}: invalid TOML: {short(str(exc), 120)}") from None
        except RecursionError:
            raise SpecError(f"{path}: invalid TOML: nested too deeply") from None
        except ValueError as exc:
            raise SpecError(f"{path}: invalid TOML: {short(str(exc), 120)}") from None
    if _depth(data) > MAX_DEPTH:
        raise SpecError(f"{path}: the spec is nested more than {MAX_DEPTH} levels deep")
    if not isinstance(data, dict):
        raise SpecError(f"{path}: the spec must be a table/object at the top level")
    return data


#: deepest nesting of tables and lists a spec may have
MAX_DEPTH = 8


def _depth(x: Any, limit: int = MAX_DEPTH + 1) -> int:
    """Nesting depth of lists and tables, counted up to ``limit`` (no recursion)."""
    depth, level = 0, [x]
    while level and depth < limit:
        nxt = []
        for v in level:
            if isinstance(v, dict):
                nxt.extend(v.values())
            elif isinstance(v, list):
                nxt.extend(v)
        if not nxt:
            break
        depth += 1
        level = nxt
    return depth


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list) else [v]


def _check_keys(d: Any, allowed: set[str], source: str, where: str) -> None:
    if not isinstance(d, dict):
        raise _err(source, where, f"must be a table/object, got {type(d).__name__}")
    for k in d:
        if k not in allowed:
            raise _err(source, f"{where}.{_cut(str(k), 40)}" if where else _cut(str(k), 40),
                       f"unknown key; {closest(k, allowed, 'allowed')}")


def _num_list(v: Any, source: str, key: str, *, integer: bool = False,
              positive: bool = True, minimum: float | None = None,
              maximum: float | None = None) -> list[Any]:
    """The numbers of a value or list: finite, positive (or ``>= minimum``), at most
    ``maximum`` (default ``MAX_INT`` for integers)."""
    if integer and maximum is None:
        maximum = MAX_INT
    out = []
    for x in _as_list(v):
        ok = isinstance(x, int) if integer else isinstance(x, (int, float))
        if ok and not isinstance(x, bool):
            try:
                ok = math.isfinite(float(x))
            except OverflowError:
                ok = False
        if ok and not isinstance(x, bool):
            ok = not ((positive and x <= 0) or (minimum is not None and x < minimum)
                      or (maximum is not None and x > maximum))
        if isinstance(x, bool) or not ok:
            kind = "integer" if integer else "finite number"
            bounds = []
            if positive:
                bounds.append("> 0")
            if minimum is not None:
                bounds.append(f">= {_bound(minimum)}")
            if maximum is not None:
                bounds.append(f"<= {_bound(maximum)}")
            raise _err(source, key, f"expected a{'n' if integer else ''} {kind} "
                       f"{' and '.join(bounds)} or a list of them, got {short(x)}")
        out.append(x)
    if not out:
        raise _err(source, key, "empty list: the grid would have zero cells")
    return out


def _bound(x: float) -> str:
    names = {MAX_SEED: "2**63 - 1", MAX_INT: "2**53"}
    return names.get(x, f"{x:g}" if isinstance(x, float) else str(x))  # type: ignore[call-overload]


def _expand_dict(d: dict[str, Any]) -> list[dict[str, Any]]:
    """Cartesian product over the list-valued entries of ``d`` (keys sorted)."""
    keys = sorted(d)
    values = [_as_list(d[k]) for k in keys]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]


def _varying(d: dict[str, Any]) -> list[str]:
    return sorted(k for k, v in d.items() if isinstance(v, list) and len(v) > 1)


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _check_trace(trace: Any, source: str, key: str) -> str:
    from instances.bundled import trace_path

    if not isinstance(trace, str) or not trace or "\x00" in trace:
        raise _err(source, key, f"expected a bundled trace name or a path, got {short(trace)}")
    for p in (Path(trace), Path(source).parent / trace):
        if p.exists() or p.is_symlink():
            _sniff_trace(p, source, key)
            return str(p)
    try:
        trace_path(trace)
    except (ValueError, FileNotFoundError) as exc:
        raise _err(source, key, f"no such file, and {_cut(str(exc), 200)}") from None
    return trace


def _sniff_trace(p: Path, source: str, key: str) -> None:
    """Refuse a trace the cells cannot read: not a regular file, a K-resource ``.kswf``
    workload (cells read K = 1 SWF traces), or a first job line that is not SWF (18
    numbers). Reads at most ``_SNIFF_BYTES`` of the (decompressed) file."""
    from instances.swf import N_FIELDS, SwfError, _parse_slow

    name = p.name.lower()
    if not p.is_file():
        raise _err(source, key, f"{short(str(p))} is not a regular file")
    if name.endswith((".kswf", ".kswf.gz")):
        raise _err(source, key, f"{short(str(p))}: a K-resource .kswf workload; sweep cells "
                   "simulate K = 1 SWF traces (.swf, .swf.gz)")
    try:
        with open(p, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
            whole = len(head) < _SNIFF_BYTES
        if head[:2] == b"\x1f\x8b":
            with gzip.open(p, "rb") as gz:
                head = gz.read(_SNIFF_BYTES)
                whole = len(head) < _SNIFF_BYTES
    except (OSError, EOFError, zlib.error) as exc:
        raise _err(source, key, f"{short(str(p))}: cannot read: "
                   f"{short(getattr(exc, 'strerror', None) or str(exc))}") from None
    lines = head.decode("latin-1").split("\n")
    if not whole:
        lines = lines[:-1]  # the last line may be cut
    for lineno, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if parts[0].startswith(";"):
            if line.lstrip(" \t;").startswith("KResource:"):
                raise _err(source, key, f"{short(str(p))}: a K-resource .kswf workload; "
                           "sweep cells simulate K = 1 SWF traces")
            continue
        where = f"{short(str(p))} line {lineno}"
        if len(parts) != N_FIELDS:
            raise _err(source, key, f"{where}: not an SWF job line ({N_FIELDS} numbers, "
                       f"found {len(parts)} fields)")
        try:
            _parse_slow(parts, where)
        except SwfError as exc:
            raise _err(source, key, f"not an SWF trace: {_cut(str(exc), 160)}") from None
        return
    if whole:
        raise _err(source, key, f"{short(str(p))}: no job line (an SWF trace has lines of "
                   f"{N_FIELDS} numbers)")


def _policy_variants(i: int, p: Any, source: str) -> list[tuple[str, str, dict[str, Any]]]:
    from sim import registry

    where = f"policies[{i}]"
    _check_keys(p, POLICY_KEYS, source, where)
    name = p.get("name")
    from sim.plugins import is_reference

    if not isinstance(name, str):
        raise _err(source, f"{where}.name", f"expected a policy name (a string), got "
                   f"{short(name)}")
    if not is_reference(name) and name not in registry.POLICIES:
        raise _err(source, f"{where}.name", f"unknown policy {short(name)}; "
                   f"{closest(name, registry.POLICIES, 'policies')} or MODULE:FACTORY")
    try:
        bare = registry.policy_spec(name)  # resolved once; a MODULE:FACTORY must import
    except ValueError as exc:
        raise _err(source, f"{where}.name", str(exc)) from None
    options = p.get("options", {})
    _check_keys(options, set(options) if isinstance(options, dict) else set(), source,
                f"{where}.options")
    accepted = bare.accepted
    for k, v in options.items():
        if accepted is not None and k not in accepted:
            raise _err(source, f"{where}.options.{_cut(str(k), 40)}",
                       f"policy {name!r} does not take this option; "
                       f"{closest(k, accepted, 'options it takes')}")
        if isinstance(v, list) and not v:
            raise _err(source, f"{where}.options.{k}", "empty list: zero cells")
    label = p.get("label")
    if label is not None and not isinstance(label, str):
        raise _err(source, f"{where}.label", f"expected a string, got {short(label)}")
    vary = _varying(options)
    out = []
    for combo in _expand_dict(options):
        try:  # check option values by building the policy once (a foreign one in the
            # sandbox worker: its module is never imported here)
            registry.check_policy(bare.with_options(**combo))
        except (TypeError, ValueError, OverflowError) as exc:
            raise _err(source, f"{where}.options",
                       f"{short(combo)}: {_cut(str(exc))}") from None
        lab = label or name
        if vary:
            lab += "(" + ",".join(f"{k}={_fmt(combo[k])}" for k in vary) + ")"
        out.append((name, lab, combo))
    return out


def _workload_variants(i: int, w: Any, source: str, seeds: list[int]) -> list[dict[str, Any]]:
    import inspect

    from instances.priorities import SCHEMES
    from instances.synthetic import random_workload

    where = f"workloads[{i}]"
    _check_keys(w, WORKLOAD_KEYS, source, where)
    name = w.get("name")
    if not isinstance(name, str) or not name:
        raise _err(source, f"{where}.name", "required: a non-empty string")
    if ("trace" in w) == ("synthetic" in w):
        raise _err(source, where, "give exactly one of 'trace' or 'synthetic'")
    base: dict[str, Any] = {"workload": name}
    users: list[float | None] = [None]
    if "trace" in w:
        base["trace"] = _check_trace(w["trace"], source, f"{where}.trace")
        synth = [None]
        wseeds = [0]
        if "replicate" in w:
            base["replicate"], users = _replicate(w["replicate"], w, source,
                                                  f"{where}.replicate")
            wseeds = [int(x) for x in _num_list(w.get("seeds", seeds), source,
                                                f"{where}.seeds", integer=True,
                                                positive=False, minimum=0, maximum=MAX_SEED)]
        elif "seeds" in w:
            raise _err(source, f"{where}.seeds", "a trace is deterministic; seeds apply "
                       "to synthetic workloads and to a trace with 'replicate'")
    else:
        s = w["synthetic"]
        params = set(inspect.signature(random_workload).parameters) - {"seed", "name"}
        _check_keys(s, params, source, f"{where}.synthetic")
        if "n_jobs" not in s:
            raise _err(source, f"{where}.synthetic.n_jobs", "required")
        _num_list(s["n_jobs"], source, f"{where}.synthetic.n_jobs", integer=True,
                  maximum=MAX_SYNTHETIC_JOBS)
        for k, v in s.items():
            if isinstance(v, list) and not v:
                raise _err(source, f"{where}.synthetic.{k}", "empty list: zero cells")
        synth = _expand_dict(s)
        for combo in synth:
            try:
                random_workload(**{**combo, "n_jobs": 1}, seed=0)
            except (TypeError, ValueError, OverflowError) as exc:
                raise _err(source, f"{where}.synthetic",
                           f"{short(combo)}: {_cut(str(exc))}") from None
        wseeds = [int(x) for x in _num_list(w.get("seeds", seeds), source, f"{where}.seeds",
                                            integer=True, positive=False, minimum=0,
                                            maximum=MAX_SEED)]
    if "months" in w and "weeks" in w:
        raise _err(source, f"{where}.weeks", "give 'months' or 'weeks', not both")
    months = _parts(w, "months", base, source, where)
    weeks = _parts(w, "weeks", base, source, where)
    window = w.get("window")
    if window is not None and (not isinstance(window, list) or len(window) != 2
                               or not all(isinstance(x, int) and not isinstance(x, bool)
                                          for x in window) or window[0] >= window[1]):
        raise _err(source, f"{where}.window",
                   f"expected [start, end) seconds, got {short(window)}")
    max_jobs = w.get("max_jobs")
    if max_jobs is not None:
        _num_list(max_jobs, source, f"{where}.max_jobs", integer=True)
    loads = [float(x) for x in _num_list(w.get("load", 1.0), source, f"{where}.load")]
    pri = w.get("priorities")
    if pri is not None and pri not in SCHEMES:
        raise _err(source, f"{where}.priorities",
                   f"expected one of {SCHEMES}, got {short(pri)}")
    highs = [None]
    if pri is not None:
        highs = [float(x) for x in _num_list(w.get("priority_high", 1.0), source,
                                             f"{where}.priority_high", positive=False)]
        if any(not 0 <= h <= 1 for h in highs):
            raise _err(source, f"{where}.priority_high", "must be in [0, 1]")
    elif "priority_high" in w:
        raise _err(source, f"{where}.priority_high", "needs 'priorities'")
    pe = w.get("perfect_estimates", False)
    if not isinstance(pe, bool):
        raise _err(source, f"{where}.perfect_estimates",
                   f"expected true/false, got {short(pe)}")
    feedback = _feedback(w, loads, source, f"{where}.feedback")
    out = []
    for sy, month, week, load, user, high, seed in itertools.product(
            synth, months, weeks, loads, users, highs, wseeds):
        d = dict(base)
        if sy is not None:
            d["synthetic"] = sy
        if user is not None:  # a cell without it keeps its key
            d["users"] = user
        if "weeks" in w:
            d["week"] = week
        if feedback:  # a cell without it keeps its key
            d["feedback"] = True
        d.update({"month": month, "window": window, "max_jobs": max_jobs, "load": load,
                  "priorities": pri, "priority_high": high, "perfect_estimates": pe,
                  "seed": seed})
        out.append(d)
    return out


def _feedback(w: dict[str, Any], loads: list[float], source: str, key: str) -> bool:
    """The workload's ``feedback`` entry (default false), refused where it cannot act as
    the module docstring says."""
    value = w.get("feedback", False)
    if not isinstance(value, bool):
        raise _err(source, key, f"expected true/false, got {short(value)} (two workloads, "
                   "with and without feedback, compare the two)")
    if not value:
        return False
    if "synthetic" in w:
        raise _err(source, key, "needs a trace: the log's wait (SWF field 3) gives the "
                   "think times")
    for kind in ("months", "weeks"):
        if kind in w:
            raise _err(source, key, f"not with '{kind}': each part is simulated from an "
                       "empty machine, which cuts the user sessions feedback follows")
    if any(load != 1.0 for load in loads):
        raise _err(source, key, "not with a 'load' other than 1: compressing the submit "
                   "times would move the independent jobs only (a dependent job's submit "
                   "comes from the schedule); change the load of a resampled log by "
                   "replicate.users")
    return True


def _feedback_policies(spec: dict[str, Any], source: str) -> None:
    """Refuse a user's or plug-in policy beside a workload with ``feedback``: its cell
    is simulated in a worker process and checked here on the log's submit times, which
    feedback replaces by the realised ones (``simulate --feedback`` refuses it too)."""
    from sim import registry

    fed = [i for i, w in enumerate(spec["workloads"]) if w.get("feedback") is True]
    if not fed:
        return
    for i, p in enumerate(spec["policies"]):
        if registry.is_foreign("", p["name"]):
            raise _err(source, f"policies[{i}].name", f"{p['name']!r} runs in a worker "
                       f"process, which replays the log's submit times, and workloads[{fed[0]}] "
                       "has feedback = true: run that policy on workloads without feedback")


def _replicate(value: Any, w: dict[str, Any], source: str, key: str
               ) -> tuple[dict[str, Any], list[float | None]]:
    """The ``replicate`` entry of a trace workload as ``{"method": ..., "amount": ...}``
    and the values of its ``users`` option (``[None]`` without it): a list expands into
    cells, each with a top-level ``users`` parameter, as ``load`` does."""
    from instances.replicate import JITTER, LONG_TERM, MAX_USERS, METHODS

    spec = {"method": value} if isinstance(value, str) else value
    if not isinstance(spec, dict) or not isinstance(spec.get("method"), str):
        raise _err(source, key, f"expected a method name or {{method = ...}}, got "
                   f"{short(value)}")
    _check_keys(spec, {"method", "amount", "long_term", "users"}, source, key)
    method = spec["method"]
    if method not in METHODS:
        raise _err(source, f"{key}.method", f"unknown method {short(method)}; "
                   f"{closest(method, METHODS, 'methods')}")
    for option, owner in (("amount", "jitter"), ("long_term", "resample"),
                          ("users", "resample")):
        if option in spec and method != owner:
            raise _err(source, f"{key}.{option}", f"applies to {owner!r} only, not "
                       f"{method!r}")
    out: dict[str, Any] = {"method": method}
    if method == "resample":
        weeks = spec.get("long_term", LONG_TERM)
        if isinstance(weeks, bool) or not isinstance(weeks, int) or not 1 <= weeks <= 10**6:
            raise _err(source, f"{key}.long_term", "expected a whole number of weeks in "
                       f"[1, 1000000], got {short(weeks)}")
        out["long_term"] = weeks
    if method == "jitter":
        amount = spec.get("amount", JITTER)
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) \
                or not 0 <= amount < 1:
            raise _err(source, f"{key}.amount", f"must be in [0, 1), got {short(amount)}")
        out["amount"] = float(amount)
    if method == "resample" and w.get("priorities") is not None:
        raise _err(source, key, "'resample' renumbers the jobs, so the trace's priority "
                   "table cannot follow them: drop 'priorities' or use another method")
    users: list[float | None] = [None]
    if "users" in spec:
        users = [float(x) for x in _num_list(spec["users"], source, f"{key}.users",
                                             maximum=MAX_USERS)]
    return out, users


def _parts(w: dict[str, Any], kind: str, base: dict[str, Any], source: str, where: str
           ) -> list[str | None]:
    """The labels of the workload's ``months`` or ``weeks`` entry (``[None]`` without
    it), each checked against the trace."""
    if kind not in w:
        return [None]
    key, m = f"{where}.{kind}", w[kind]
    if "synthetic" in w:
        raise _err(source, key, f"{kind} need a trace with UnixStartTime")
    if m == "each":
        return list(_trace_parts(base["trace"], kind, source, key))
    parts = _as_list(m)
    if not parts:
        raise _err(source, key, "empty list: zero cells")
    known = _trace_parts(base["trace"], kind, source, key)
    pattern, form = (_MONTH, "YYYY-MM") if kind == "months" else (_WEEK, "YYYY-Www")
    for x in parts:
        if not isinstance(x, str) or not pattern.match(x):
            raise _err(source, key, f"expected {form}, got {short(x)}")
        if not known:
            raise _err(source, key, "the trace has no dated jobs")
        if x not in known:
            raise _err(source, key, f"{x} has no jobs in the trace; {kind}: "
                       f"{known[0]}..{known[-1]}")
    return parts


def _trace_parts(trace: str, kind: str, source: str, key: str) -> list[str]:
    from sim.sweep.cell import trace_months, trace_weeks

    try:
        return trace_months(trace) if kind == "months" else trace_weeks(trace)
    except (ValueError, OSError) as exc:
        raise _err(source, key, str(exc)) from None



def check_spec(data: dict[str, Any], source: str = "<spec>") -> dict[str, Any]:
    """Check every key of a parsed spec; return it with defaults filled in."""
    _check_keys(data, TOP_KEYS, source, "")
    version = data.get("version")
    if version != SPEC_VERSION:
        raise _err(source, "version", f"spec format version {version!r} is not supported; "
                   f"this schedsearch reads version {SPEC_VERSION}")
    name = data.get("name", Path(source).stem)
    if not isinstance(name, str) or not name:
        raise _err(source, "name", f"expected a non-empty string, got {short(name)}")
    metrics = _as_list(data.get("metrics", ["avg_wait", "avg_bounded_slowdown",
                                            "utilization"]))
    for m in metrics:
        if not isinstance(m, str) or m not in METRICS:
            raise _err(source, "metrics", f"unknown metric {short(m)}; "
                       f"{closest(m, METRICS, 'metrics')}")
    if not metrics:
        raise _err(source, "metrics", "empty list")
    seeds = [int(s) for s in _num_list(data.get("seeds", [0]), source, "seeds",
                                       integer=True, positive=False, minimum=0,
                                       maximum=MAX_SEED)]
    procs = (_num_list(data["procs"], source, "procs", integer=True)
             if "procs" in data else [None])
    overrun = _as_list(data.get("overrun", "kill"))
    for o in overrun:
        if o not in OVERRUN_MODES:
            raise _err(source, "overrun", f"expected one of {OVERRUN_MODES}, got {short(o)}")
    if not overrun:
        raise _err(source, "overrun", "empty list: zero cells")
    wide = data.get("wide", "error")
    if wide not in WIDE_MODES:
        raise _err(source, "wide", f"expected one of {WIDE_MODES}, got {short(wide)}")
    tl = data.get("time_limit")
    if tl is not None:
        if isinstance(tl, list):
            raise _err(source, "time_limit", "one number of seconds, not a list")
        _num_list(tl, source, "time_limit", maximum=MAX_TIME_LIMIT)
    for key in ("workloads", "policies"):
        v = data.get(key)
        if not isinstance(v, list) or not v:
            raise _err(source, key, f"required: a non-empty list ([[{key}]] tables)")
    return {**data, "name": name, "metrics": metrics, "seeds": seeds, "procs": procs,
            "overrun": overrun, "wide": wide, "time_limit": tl}


def expand(data: dict[str, Any], source: str = "<spec>") -> list[dict[str, Any]]:
    """Check ``data`` and return the list of cells (flat parameter dictionaries) in a
    fixed order. Raises SpecError when the grid has zero cells."""
    spec = check_spec(data, source)
    count_cells(spec, source)
    workloads = [v for i, w in enumerate(spec["workloads"])
                 for v in _workload_variants(i, w, source, spec["seeds"])]
    policies = [v for i, p in enumerate(spec["policies"])
                for v in _policy_variants(i, p, source)]
    _feedback_policies(spec, source)
    labels = [lab for _, lab, _ in policies]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise _err(source, "policies", f"two policy variants share the label(s) {dup}; "
                   "give each a distinct 'label'")
    cells = []
    for w, procs, overrun, (pname, label, opts) in itertools.product(
            workloads, spec["procs"], spec["overrun"], policies):
        cell = {**w, "procs": procs, "wide": spec["wide"], "overrun": overrun,
                "policy": pname, "label": label, "options": opts,
                "time_limit": spec["time_limit"]}
        cells.append(cell)
    if not cells:
        raise _err(source, "workloads", "the grid expands to zero cells")
    keys = [cell_key(c) for c in cells]
    if len(set(keys)) != len(keys):
        raise _err(source, "workloads", "two cells have identical parameters (duplicate "
                   "workload or policy entries)")
    return cells


def _n(v: Any) -> int:
    return max(1, len(v)) if isinstance(v, list) else 1


def _big(n: int) -> str:
    """A count for a message: ``"1,000,000"`` or ``"about 10^400"``."""
    return f"{n:,}" if n < 10 ** 12 else f"about 10^{len(str(n)) - 1}"


def count_cells(spec: dict[str, Any], source: str = "<spec>") -> int:
    """The number of cells a checked spec expands to, counted from the lengths of its
    lists without building the grid; SpecError past ``MAX_CELLS`` naming the keys that
    multiply (an empty list counts as one here and is refused later)."""
    factors: list[tuple[str, int]] = []
    n_work = 0
    for i, w in enumerate(spec["workloads"]):
        if not isinstance(w, dict):
            return 0  # refused with its key by the workload check
        where = f"workloads[{i}]"
        parts = []
        syn = w.get("synthetic")
        if isinstance(syn, dict):
            parts += [(f"{where}.synthetic.{k}", _n(v)) for k, v in sorted(syn.items())]
            parts.append((f"{where}.seeds" if "seeds" in w else "seeds",
                          _n(w.get("seeds", spec["seeds"]))))
        for kind in ("months", "weeks"):
            split = w.get(kind)
            if split == "each" and "trace" in w and syn is None:
                trace = _check_trace(w["trace"], source, f"{where}.trace")
                parts.append((f"{where}.{kind}", max(1, len(_trace_parts(
                    trace, kind, source, f"{where}.{kind}")))))
            else:
                parts.append((f"{where}.{kind}", _n(split)))
        parts += [(f"{where}.{k}", _n(w.get(k))) for k in ("load", "priority_high")]
        rep = w.get("replicate")
        if isinstance(rep, dict):
            parts.append((f"{where}.replicate.users", _n(rep.get("users"))))
        n_work += math.prod(n for _, n in parts)
        factors += [p for p in parts if p[1] > 1]
    n_pol = 0
    for i, p in enumerate(spec["policies"]):
        opts = p.get("options") if isinstance(p, dict) else None
        parts = [(f"policies[{i}].options.{k}", _n(v)) for k, v in sorted(opts.items())] \
            if isinstance(opts, dict) else []
        n_pol += math.prod(n for _, n in parts)
        factors += [q for q in parts if q[1] > 1]
    grid = [("procs", _n(spec["procs"])), ("overrun", _n(spec["overrun"]))]
    factors += [g for g in grid if g[1] > 1]
    total = n_work * n_pol * math.prod(n for _, n in grid)
    if total > MAX_CELLS:
        big = sorted(factors, key=lambda f: -f[1])[:6]
        keys = ", ".join(f"{k} ({n})" for k, n in big)
        raise _err(source, "workloads", f"the grid has {_big(total)} cells, more than "
                   f"{MAX_CELLS:,} (MAX_CELLS); the lists that multiply: {keys}")
    return total


def load(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read, check and expand a spec file: ``(spec, cells)``."""
    data = read_spec(path)
    cells = expand(data, str(path))
    return check_spec(data, str(path)), cells


def cell_key(cell: dict[str, Any]) -> str:
    """A stable identifier of a cell: SHA-256 (first 20 hex digits) of its parameters
    as canonical JSON."""
    text = json.dumps(cell, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def flat_params(cell: dict[str, Any]) -> dict[str, Any]:
    """One level of parameters for tables: policy options and synthetic parameters are
    lifted to the top (``sf``, ``order``, ``syn.n_jobs``...)."""
    out = {k: v for k, v in cell.items() if k not in ("options", "synthetic")}
    for k, v in (cell.get("options") or {}).items():
        out[k] = v
    for k, v in (cell.get("synthetic") or {}).items():
        out[f"syn.{k}"] = v
    return out


def varying_params(cells: Iterable[dict[str, Any]]) -> list[str]:
    """Parameter names (as in :func:`flat_params`) that take more than one value."""
    seen: dict[str, set[str]] = {}
    for c in cells:
        for k, v in flat_params(c).items():
            seen.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
    return [k for k, vals in seen.items() if len(vals) > 1]
