"""Users' own policies and solvers, without editing the project.

Two ways in:

- a reference ``MODULE:NAME`` wherever a policy or solver name is taken (``--policy
  mysched:SJFBackfill``, ``--solvers mysolvers:greedy``); ``MODULE`` is imported from
  the current directory or ``PYTHONPATH``;
- an entry point of an installed package, in the group ``schedsearch.policies``
  (``name = "module:Factory"``) or ``schedsearch.solvers`` (``"family/name" =
  "module:function"``); such names are then used like the built-in ones.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

POLICY_GROUP = "schedsearch.policies"
SOLVER_GROUP = "schedsearch.solvers"


def is_reference(name: str) -> bool:
    """``MODULE:NAME`` rather than a registered name."""
    return ":" in name


def load_reference(ref: str, *, what: str = "object") -> Callable[..., Any]:
    """Import ``MODULE:NAME`` and return the attribute.

    Raises
    ------
    ValueError
        One line naming the reference: a malformed reference, a module that does not
        import (with the exception's own message), a missing attribute, or one that is
        not callable.
    """
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr or not all(
            p.isidentifier() for p in [*module.split("."), *attr.split(".")]):
        raise ValueError(f"{what} {ref!r}: expected MODULE:NAME (for example "
                         f"mymodule:MyPolicy)")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)  # the current directory, as `python -m` would have it
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # a user's module may raise anything while importing
        first = str(exc).splitlines()[0] if str(exc).strip() else ""
        raise ValueError(f"{what} {ref!r}: module {module!r} does not import "
                         f"({type(exc).__name__}{': ' + first if first else ''})") from None
    obj: Any = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{what} {ref!r}: module {module!r} has no attribute {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{what} {ref!r}: {attr!r} is a {type(obj).__name__}, not callable")
    return obj


def entry_point_names(group: str) -> list[tuple[str, str, str]]:
    """``(name, "module:function", distribution)`` of every entry point of ``group``."""
    out = []
    for ep in entry_points(group=group):
        dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
        out.append((ep.name, ep.value, dist))
    return out


def describe_reference(ref: str, what: str = "object") -> dict[str, Any]:
    """Run in the sandbox worker (:mod:`sim.sandbox`) for a caller that must not import
    ``ref`` itself: load it (:func:`load_reference`) and answer in plain data, ``kind``
    (its ``kind`` attribute when it is a string, else None) and ``backends`` (its
    ``backends`` attribute when it is a list of strings, else empty), or ``error`` (one
    line)."""
    try:
        obj = load_reference(ref, what=what)
    except ValueError as exc:
        return {"error": str(exc)}
    kind = getattr(obj, "kind", None)
    backends = getattr(obj, "backends", ())
    if not isinstance(backends, (tuple, list)) or not all(isinstance(b, str) for b in backends):
        backends = ()
    return {"kind": kind if isinstance(kind, str) else None, "backends": list(backends)}
