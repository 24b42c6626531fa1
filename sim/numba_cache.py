"""numba's on-disk cache kept honest across modules.

numba drops a cached kernel when the source file that defines it changes, but not when a
kernel it calls from *another* module changes: the caller's cached machine code keeps the
old callee, and nothing says so (numba's documentation, "Cache invalidation"; here an
edited ``heuristics/slack_kernel.py`` left ``sim.batch.fast.slack_loop`` running the old
search). So every module of cached kernels that calls kernels or constants of other
modules calls :func:`refresh` once its kernels are defined, naming those modules: a
fingerprint of their sources is kept beside numba's cache, and when it differs the
module's cache index is emptied, so numba compiles again at the next call (and the
``auto`` engine, :mod:`sim.batch.fast.cache`, reads "not cached" until then).

numba keeps a dispatcher's cache behind private names (``_cache``, ``_cache_path``,
``flush``); should they change, :func:`refresh` turns the module's caching off instead,
so a run compiles afresh rather than trusting a cache it cannot check.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["fingerprint", "refresh"]


def fingerprint(modules: Iterable[ModuleType]) -> str:
    """SHA-256 of the modules' source files (names and bytes), in the order given."""
    h = hashlib.sha256()
    for m in modules:
        path = Path(m.__file__ or "")
        h.update(m.__name__.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _cached_kernels(module: ModuleType) -> list[Any]:
    """The module's own numba dispatchers that cache to disk."""
    out = []
    for v in vars(module).values():
        cache = getattr(v, "_cache", None)
        py = getattr(v, "py_func", None)
        if cache is not None and py is not None and py.__module__ == module.__name__ \
                and type(cache).__name__ != "NullCache":
            out.append(v)
    return out


def refresh(module_name: str, deps: Iterable[ModuleType]) -> bool:
    """Empty the cache index of the cached kernels of ``module_name`` when the sources of
    the module and of ``deps`` changed since the index was written (module docstring).

    Parameters
    ----------
    module_name : str
        The calling module (``__name__``), already holding its kernels.
    deps : iterable of module
        The modules whose kernels or constants its kernels use.

    Returns
    -------
    bool
        Whether the index was emptied (or caching turned off).
    """
    module = sys.modules[module_name]
    kernels = _cached_kernels(module)
    if not kernels:
        return False
    fp = fingerprint([module, *deps])
    try:
        where = Path(kernels[0]._cache._cache_path)
        stem = Path(module.__file__ or module_name).stem
        stamp = where / f"{stem}.deps.py{sys.version_info[0]}{sys.version_info[1]}.sha256"
        if stamp.is_file() and stamp.read_text() == fp:
            return False
        if any(where.glob(f"{stem}.*.nbi")):  # else nothing is cached yet: just the stamp
            for k in kernels:
                k._cache.flush()
        where.mkdir(parents=True, exist_ok=True)
        stamp.write_text(fp)
    except Exception:  # numba's private names moved, or the cache is not writable
        from numba.core.caching import NullCache

        for k in kernels:
            k._cache = NullCache()
    return True
