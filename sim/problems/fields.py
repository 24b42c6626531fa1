"""Shared field checks for every problem family (one contract, one set of messages).

Every problem family validates its JSON and its dataclass fields with these helpers, so a
bad value gets the same kind of one-line ``ValueError`` everywhere: the source (file name),
the field path and the offending value, cut to a readable length (an error message never
echoes megabytes of input).

Typical use in a family's ``from_dict``::

    obj = fields.record(data, "jobs[3]", required=("id", "n"), optional=("w",), source=src)
    n = fields.integer(obj["n"], "jobs[3].n", minimum=1, source=src)

Numbers are checked strictly: booleans are not numbers, NaN is never accepted, infinity
only where a field allows it, and integral floats (``3.0``) are accepted as integers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MAX_ECHO",
    "short",
    "where",
    "integer",
    "real",
    "probability",
    "text",
    "sequence",
    "record",
    "family",
]

MAX_ECHO = 80
"""Longest ``repr`` of an offending value an error message shows (characters)."""

INT64_MAX = 2**63 - 1


def short(value: Any, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to ``limit`` characters (the cut is marked with ``...``)."""
    try:
        text_ = repr(value)
    except Exception:  # a hostile __repr__ never turns into a traceback
        text_ = f"<{type(value).__name__}>"
    if len(text_) > limit:
        return text_[: limit - 3] + "..."
    return text_


def where(source: str | None, field: str) -> str:
    """Prefix of an error message: ``"file.json: field 'jobs[3].n'"``."""
    return f"{source}: field '{field}'" if source else f"field '{field}'"


def integer(value: Any, field: str, *, minimum: int | None = None,
            maximum: int | None = INT64_MAX, source: str | None = None) -> int:
    """Check an integer field (integral floats accepted) within ``[minimum, maximum]``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where(source, field)} must be an integer, got {short(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{where(source, field)} must be >= {minimum}, got {short(value)}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{where(source, field)} must be <= {maximum}, got {short(value)}")
    return value


def real(value: Any, field: str, *, minimum: float | None = None,
         maximum: float | None = None, allow_inf: bool = False,
         source: str | None = None) -> float:
    """Check a real field: finite (``+inf`` only with ``allow_inf``), within bounds."""
    if isinstance(value, str) and allow_inf and value.strip().lower() in ("inf", "infinity"):
        value = math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{where(source, field)} must be a number, got {short(value)}")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{where(source, field)} is out of range, got {short(value)}") from None
    if math.isnan(value):
        raise ValueError(f"{where(source, field)} must be a number, got nan")
    if math.isinf(value) and not (allow_inf and value > 0):
        raise ValueError(f"{where(source, field)} must be finite, got {short(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{where(source, field)} must be >= {minimum}, got {short(value)}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{where(source, field)} must be <= {maximum}, got {short(value)}")
    return value


def probability(value: Any, field: str, *, source: str | None = None) -> float:
    """Check a real field in ``[0, 1]``."""
    return real(value, field, minimum=0.0, maximum=1.0, source=source)


def text(value: Any, field: str, *, choices: Iterable[str] | None = None,
         source: str | None = None) -> str:
    """Check a string field, optionally one of ``choices``."""
    if not isinstance(value, str):
        raise ValueError(f"{where(source, field)} must be a string, got {short(value)}")
    if choices is not None:
        allowed = sorted(choices)
        if value not in allowed:
            raise ValueError(f"{where(source, field)} must be one of {allowed}, "
                             f"got {short(value)}")
    return value


def sequence(value: Any, field: str, *, length: int | None = None, min_length: int = 0,
             source: str | None = None) -> list[Any]:
    """Check a list field (a JSON array), optionally of an exact or minimum length."""
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{where(source, field)} must be a list, got {short(value)}")
    if length is not None and len(value) != length:
        raise ValueError(f"{where(source, field)} must have {length} entries, got {len(value)}")
    if len(value) < min_length:
        raise ValueError(f"{where(source, field)} must have at least {min_length} entries, "
                         f"got {len(value)}")
    return list(value)


def record(value: Any, field: str, *, required: Iterable[str] = (),
           optional: Iterable[str] = (), source: str | None = None) -> Mapping[str, Any]:
    """Check a JSON object: every ``required`` key present, no key outside
    ``required`` and ``optional`` (a misspelt key is an error, not silently ignored)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{where(source, field)} must be an object, got {short(value)}")
    required = tuple(required)
    known = set(required) | set(optional)
    unknown = sorted(str(k) for k in value if k not in known)
    if unknown:
        raise ValueError(f"{where(source, field)}: unknown key(s) {short(unknown)}; "
                         f"known: {sorted(known)}")
    for key in required:
        if key not in value:
            raise ValueError(f"{where(source, field)}: missing key '{key}'")
    return value


def family(data: Any, expected: str, *, source: str | None = None) -> Mapping[str, Any]:
    """Check the top of a problem JSON: an object whose ``"problem"`` is ``expected``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{source or '<json>'}: the problem must be a JSON object, "
                         f"got {type(data).__name__}")
    got = data.get("problem")
    if got != expected:
        raise ValueError(f"{where(source, 'problem')} must be {expected!r}, got {short(got)}")
    return data
