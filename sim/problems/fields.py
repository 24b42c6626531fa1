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

Every family also *declares* its JSON fields once, as a :class:`Record` of :class:`Field`
(name, JSON type, meaning, unit, range, default, an example value); its JSON Schema
(:func:`json_schema`) and a small valid instance (:func:`example_of`) are generated from
that declaration (``sim.problems.schema`` / ``sim.problems.example``).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = [
    "MAX_ECHO",
    "EXACT_MAX",
    "exact",
    "largest",
    "names_source",
    "short",
    "where",
    "integer",
    "real",
    "probability",
    "text",
    "sequence",
    "record",
    "family",
    "REQUIRED",
    "COMPUTED",
    "Field",
    "Record",
    "json_schema",
    "example_of",
]

MAX_ECHO = 80
"""Longest ``repr`` of an offending value an error message shows (characters)."""

INT64_MAX = 2**63 - 1

EXACT_MAX = 10**12
"""Largest magnitude an integer of a problem, and every sum the exact models form from
them (a load, a capacity row's left-hand side, an objective value), may reach.

The exact models must represent their data exactly or refuse it. PuLP writes CBC's model
file with 13 significant digits (larger integers arrive rounded), a double holds integers
exactly up to 2^53 (CBC, HiGHS, SCIP solve in doubles) and CP-SAT works in int64 (up to
2^63 - 1, and some models scale by 1,000 before that). 10^12 is inside all three with room
to spare, so every family declares it as the ``maximum`` of its integer fields and checks
the sums it implies at construction (:func:`exact`): a problem that passes is solved
exactly by every exact solver, and one that does not is refused with the field named."""


def exact(total: float, what: str, *, source: str | None = None) -> None:
    """Refuse a derived sum over :data:`EXACT_MAX` (``what`` names the fields it comes
    from, e.g. ``"sum of weights * max_rows"``)."""
    if not total <= EXACT_MAX:
        raise ValueError(f"{source + ': ' if source else ''}{what} is {short(total, 40)}, "
                         f"over {EXACT_MAX:.0e}, the largest the exact models represent "
                         f"exactly; scale the data down")


def largest(problem: Any, value: float | None = None) -> tuple[str, float]:
    """The field path (``"jobs[1][0]"``, ``"jobs[2].mem[0]"``) and the absolute value of
    the first number in ``problem`` whose absolute value is ``value``, else of the
    largest number (a family's dataclass: every public field, into tuples, lists and
    nested dataclasses; booleans and text skipped); ``("", 0.0)`` without a number."""
    import dataclasses

    best: tuple[str, float] = ("", 0.0)
    hit: tuple[str, float] | None = None

    def walk(x: Any, path: str) -> None:
        nonlocal best, hit
        if isinstance(x, bool) or isinstance(x, str) or x is None:
            return
        if isinstance(x, (int, float)):
            v = abs(float(x)) if not isinstance(x, int) or abs(x) < 2**1023 else math.inf
            if hit is None and value is not None and v == value:
                hit = (path, v)
            if v > best[1] or not best[0]:
                best = (path, v)
        elif dataclasses.is_dataclass(x) and not isinstance(x, type):
            for f in dataclasses.fields(x):
                if not f.name.startswith("_"):
                    walk(getattr(x, f.name), f"{path}.{f.name}" if path else f.name)
        elif isinstance(x, (tuple, list)):
            for i, y in enumerate(x):
                walk(y, f"{path}[{i}]")

    walk(problem, "")
    return best if hit is None else hit


def short(value: Any, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to ``limit`` characters (the cut is marked with ``...``)."""
    try:
        text_ = repr(value)
    except Exception:  # a hostile __repr__ never turns into a traceback
        text_ = f"<{type(value).__name__}>"
    if len(text_) > limit:
        return text_[: limit - 3] + "..."
    return text_


def names_source(from_dict: Callable[..., T]) -> Callable[..., T]:
    """Decorate a family's ``from_dict(data, source)``: a ValueError raised inside it (by
    a problem's constructor, whose checks know the field but not the file) is prefixed
    with ``source`` when its message does not name it already."""

    @functools.wraps(from_dict)
    def wrapper(data: Any, source: str = "<json>") -> T:
        try:
            return from_dict(data, source)
        except ValueError as exc:
            msg = str(exc)
            if source and not msg.startswith(source):
                raise ValueError(f"{source}: {msg}") from None
            raise

    return wrapper


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


def integers(values: Sequence[Any], field: str, *, minimum: int | None = None,
             maximum: int | None = INT64_MAX,
             source: str | None = None) -> tuple[int, ...]:
    """:func:`integer` of every entry of a list, ``field[i]`` named for the first bad one;
    a list of plain ints within the bounds is passed in one sweep (10^6 entries: a
    tenth of a second rather than seconds)."""
    lo = -INT64_MAX - 1 if minimum is None else minimum
    hi = INT64_MAX if maximum is None else maximum
    if all(type(v) is int and lo <= v <= hi for v in values):
        return tuple(values)
    return tuple(integer(v, f"{field}[{i}]", minimum=minimum, maximum=maximum, source=source)
                 for i, v in enumerate(values))


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


# ---------------------------------------------------------------------------- declarations
class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()
"""The ``default`` of a field that must be given."""


class _Computed:
    def __repr__(self) -> str:
        return "COMPUTED"


COMPUTED: Any = _Computed()
"""The ``default`` of an optional field whose default depends on the other fields (said
in its meaning; the schema gives no ``default``)."""

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Record:
    """The fields of one JSON object (a problem file, or an item of one of its lists).

    Parameters
    ----------
    meaning : str
        What one such object is.
    fields : tuple of Field
    closed : bool
        True when the loader rejects a key that is not declared (``additionalProperties``
        false in the schema).
    """

    meaning: str
    fields: tuple[Field, ...]
    closed: bool = True


@dataclass(frozen=True)
class Field:
    """One declared field of a problem's JSON.

    Parameters
    ----------
    name : str
    type : {"integer", "number", "string", "boolean", "array", "object"}
        JSON type of the value.
    meaning : str
        What the value is (the schema's ``description``).
    unit : str
        Unit of a number, or of each number of an array ("" when it has none).
    minimum, maximum : float or None
        Inclusive range of a number, or of each number of an array.
    default : Any
        Value the loader takes when the field is absent; :data:`REQUIRED` when it must be
        given, :data:`COMPUTED` when it depends on the other fields.
    choices : tuple
        The allowed values (``enum``), if restricted.
    items : Field, Record or None
        Type of each entry of an array (a Field for nested arrays or numbers, a Record for
        objects), or the fields of an object.
    nullable : bool
        ``null`` is allowed too.
    scalar : bool
        For an array: one number for every entry is allowed too.
    example : Any
        The value of the family's example instance (None: left out of it).
    """

    name: str
    type: str
    meaning: str
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    default: Any = REQUIRED
    choices: tuple[Any, ...] = ()
    items: Field | Record | None = None
    nullable: bool = False
    scalar: bool = False
    example: Any = None

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


def _range(f: Field) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if f.minimum is not None:
        out["minimum"] = f.minimum
    if f.maximum is not None:
        out["maximum"] = f.maximum
    if f.unit:
        out["unit"] = f.unit
    return out


def _value_schema(f: Field | Record) -> dict[str, Any]:
    if isinstance(f, Record):
        return _object_schema(f)
    out: dict[str, Any] = {"type": [f.type, "null"] if f.nullable else f.type}
    if f.type == "object" and isinstance(f.items, Record):
        out.update({k: v for k, v in _object_schema(f.items).items() if k != "type"})
    if f.meaning:
        out["description"] = f.meaning
    if f.type == "array":
        if f.items is not None:
            out["items"] = _value_schema(f.items)
            if isinstance(f.items, Field) and f.items.type in ("integer", "number"):
                out["items"].update(_range(f))
        if f.scalar:
            item_type = f.items.type if isinstance(f.items, Field) else "number"
            out = {"description": out.pop("description", ""),
                   "anyOf": [out, {"type": item_type, **_range(f)}]}
        elif f.unit:
            out["unit"] = f.unit
    else:
        out.update(_range(f))
    if f.choices:
        out["enum"] = list(f.choices)
    if not f.required and f.default is not COMPUTED:
        out["default"] = copy.deepcopy(f.default)
    return out


def _object_schema(rec: Record, family: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    if family is not None:
        props["problem"] = {"const": family, "description": "The problem family."}
        required.append("problem")
    for f in rec.fields:
        props[f.name] = _value_schema(f)
        if f.required:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "description": rec.meaning,
                           "properties": props, "required": required}
    if rec.closed:
        out["additionalProperties"] = False
    return out


def json_schema(rec: Record, family: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a problem file of ``family`` declared by ``rec``:
    per field its ``type``, ``description``, ``unit`` (a keyword of this project),
    ``minimum``/``maximum``, ``enum`` and ``default``."""
    return {"$schema": JSON_SCHEMA_DIALECT, "$id": f"schedsearch:{family}", "title": family,
            **_object_schema(rec, family)}


def example_of(rec: Record, family: str) -> dict[str, Any]:
    """The example problem of ``family``: ``"problem"`` and every declared field's
    ``example`` (fields without one are left to their default)."""
    out: dict[str, Any] = {"problem": family}
    for f in rec.fields:
        if f.example is not None:
            out[f.name] = copy.deepcopy(f.example)
        elif f.required:
            raise ValueError(f"{family}: required field {f.name!r} declares no example")
    return out
