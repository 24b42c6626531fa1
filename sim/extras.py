"""The optional packages, the extra that installs each, and the one-line message a missing
one gives (``pip install 'schedsearch[EXTRA]'``) instead of an internal error."""

from __future__ import annotations

import importlib
from types import ModuleType

#: top-level module -> the ``pyproject.toml`` extra that installs it
EXTRAS = {"matplotlib": "plots", "pandas": "frames", "dask": "dask", "distributed": "dask",
          "numba": "fast", "llvmlite": "fast", "gymnasium": "gym"}


class MissingExtra(ImportError):
    """An optional package is not installed; the message names the extra to install."""


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or MissingExtra naming ``purpose`` and the extra to install.

    Parameters
    ----------
    module : str
        A module of one of the packages of :data:`EXTRAS`.
    purpose : str
        What needs it, for the message ("plots", "data frames").
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        raise MissingExtra(f"{purpose}: {top} is not installed: "
                           f"pip install 'schedsearch[{EXTRAS[top]}]'", name=top) from exc


def missing_extra(exc: ImportError) -> str | None:
    """The one-line message for ``exc`` when it is a missing optional package, else None."""
    if isinstance(exc, MissingExtra):
        return str(exc)
    top = (exc.name or "").split(".")[0]
    if top in EXTRAS:
        return f"{top} is not installed: pip install 'schedsearch[{EXTRAS[top]}]'"
    return None
