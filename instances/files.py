"""Reading an input file with its size bounded before anything is allocated.

A path named like a workload or a problem file may be a device (``/dev/zero``), a pipe or
a gzip bomb; :func:`read_bytes` refuses those with the file named instead of reading
without end. :func:`loads_json` parses a user's JSON refusing a key written twice in one
object, which Python's parser would resolve silently to the last value.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import stat
import zlib
from pathlib import Path
from typing import Any

__all__ = ["MAX_BYTES", "DuplicateKeyError", "loads_json", "read_bytes", "is_gzip"]

MAX_BYTES = 1 << 30
"""Largest input accepted, after decompression (bytes; 1 GiB)."""

_GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with the gzip magic bytes (the suffix is not looked at)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == _GZIP_MAGIC
    except OSError:
        return False


def read_bytes(path: str | os.PathLike[str], *, limit: int = MAX_BYTES,
               what: str = "file") -> bytes:
    """The contents of a regular file, gunzipped when it starts with the gzip magic bytes.

    Parameters
    ----------
    path : path
    limit : int
        Largest size accepted, bytes, after decompression.
    what : str
        What the file should be, for the messages ("workload", "problem file").

    Raises
    ------
    ValueError
        Naming the file: missing, not a regular file (a device, a pipe, a directory),
        over ``limit`` bytes, or corrupt gzip data.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise ValueError(f"{p}: no such file") from None
    except OSError as exc:
        raise ValueError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{p}: not a regular file (a {what} must be one)")
    if st.st_size > limit:
        raise ValueError(f"{p}: {st.st_size} bytes, over the {limit} accepted for a {what}")
    try:
        with open(p, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ValueError(f"{p}: over the {limit} bytes accepted for a {what}")
    if data[:2] != _GZIP_MAGIC:
        return data
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            while chunk := gz.read(1 << 20):
                out += chunk
                if len(out) > limit:
                    raise ValueError(f"{p}: unpacks to over the {limit} bytes accepted for "
                                     f"a {what}")
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"{p}: corrupt gzip data: {exc}") from None
    return bytes(out)



class DuplicateKeyError(ValueError):
    """A JSON object that holds one key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """One JSON object as a dict; a repeated key raises :class:`DuplicateKeyError`."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"key {key!r} appears twice in one object")
            seen.add(key)
    return obj


def loads_json(text: str | bytes) -> Any:
    """``json.loads(text)`` refusing a key repeated in one object (which of the two values
    was meant is unknowable; Python's parser keeps the last silently).

    Raises
    ------
    DuplicateKeyError
        A ValueError naming the repeated key.
    json.JSONDecodeError, RecursionError, ValueError
        As ``json.loads``.
    """
    return json.loads(text, object_pairs_hook=_unique_keys)
