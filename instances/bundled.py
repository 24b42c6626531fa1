"""The traces vendored from the Parallel Workloads Archive (see ``traces/README.md``).

Files live in ``instances/traces/`` and are found relative to this package, so they
work from an installed copy too. Short names follow the archive's log names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from instances.job import Workload

__all__ = ["TRACES", "list_traces", "load_trace", "trace_header", "trace_path"]

TRACE_DIR = Path(__file__).resolve().parent / "traces"

#: Short name -> file name in ``instances/traces/``.
TRACES: dict[str, str] = {
    "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-BLUE": "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "NASA-iPSC": "NASA-iPSC-1993-3.1-cln.swf.gz",
    "lublin_256": "lublin_256.swf.gz",
}


def list_traces() -> list[str]:
    """Short names of the bundled traces, in the order of :data:`TRACES`."""
    return list(TRACES)


def trace_path(name: str) -> Path:
    """Path of a bundled trace.

    Parameters
    ----------
    name : str
        A short name (``"KTH-SP2"``, case-insensitive) or a full file name
        (``"KTH-SP2-1996-2.1-cln.swf.gz"``, with or without ``.gz`` / ``.swf.gz``).

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones).
    FileNotFoundError
        The trace is known but its file is missing from the installation.
    """
    key = str(name).strip()
    wanted = key.lower()
    for short, fname in TRACES.items():
        full = fname.lower()
        if wanted in (short.lower(), full, full.removesuffix(".gz"),
                      full.removesuffix(".swf.gz")):
            path = TRACE_DIR / fname
            if not path.is_file():
                raise FileNotFoundError(f"bundled trace {short} missing: {path}")
            return path
    from instances.swf import _cut

    raise ValueError(f"unknown bundled trace {_cut(str(name), 60)}; known: {', '.join(TRACES)}")


def load_trace(name: str, **options: Any) -> Workload:
    """Read a bundled trace with :func:`instances.swf.read_swf` (same keyword options)."""
    from instances.swf import read_swf

    return read_swf(trace_path(name), **options)


def trace_header(name: str) -> dict[str, str]:
    """The ``; Key: value`` lines of a bundled trace's SWF header (read from the file's
    first lines only): ``MaxRecords``, ``MaxProcs``, ``StartTime``, ``Computer``..."""
    import gzip

    out: dict[str, str] = {}
    with gzip.open(trace_path(name), "rt", errors="replace") as fh:
        for line in fh:
            if not line.startswith(";"):
                break
            key, sep, value = line[1:].partition(":")
            if sep and key.strip() and key.strip() not in out:
                out[key.strip()] = value.strip()
    return out
