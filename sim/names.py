"""Hints for a name that is not known: the same name in another case, or close ones.

Names of policies, solvers and families are case-sensitive; a name that differs from a
known one only in case, or is close to some (``difflib``), gets a "did you mean" hint.
"""

from __future__ import annotations

from typing import Any


def did_you_mean(name: Any, known: Any, n: int = 3) -> str:
    """``"did you mean 'easy'? "`` for a name that differs from a known one only in case
    (names are case-sensitive) or is close to some (difflib); ``""`` otherwise."""
    import difflib

    text = str(name)[:200]
    known = sorted({str(k) for k in known})
    same = [k for k in known if k.lower() == text.lower() and k != text]
    if same:
        return f"did you mean {same[0]!r}? (names are case-sensitive); "
    by_lower = {k.lower(): k for k in known}
    near = difflib.get_close_matches(text.lower(), list(by_lower), n=n, cutoff=0.6)
    return f"did you mean {', '.join(repr(by_lower[k]) for k in near)}? " if near else ""
