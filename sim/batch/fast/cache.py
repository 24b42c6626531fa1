"""Whether the compiled engine's kernels are already compiled on this machine.

numba compiles a kernel at its first call (30-90 s of CPU for the batch engine) and keeps it
on disk (``cache=True``: in ``__pycache__`` beside the source, or under
``NUMBA_CACHE_DIR``). The ``auto`` engine (:func:`sim.batch.engine.engine_choice`) runs the
compiled engine only when every kernel the policy needs (its ``compiled_kernels()``) is in
that cache for the current source and this machine, so that no run pays a compile nobody
asked for; ``schedsearch compile`` (:func:`compile_kernels`, also ``python -m
sim.batch.fast.cache``) or any ``--engine compiled`` run fills it.

The check reads numba's own cache index the way numba does before it loads a kernel (the
index key holds the signature, the machine's code generator and a hash of the function's
bytecode). numba keeps that index behind private names; should they change, the check answers
"not cached" and ``auto`` runs the Python engine, which gives the same schedule.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sim.batch.policy import BATCH_KERNELS, SLACK_KERNELS, SLACK_SEARCH_KERNELS


def numba_installed() -> bool:
    """Whether numba can be imported (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def _index_file_exists(module: str, function: str) -> bool:
    """A cheap first look, before importing numba: is there any index file for the function
    in ``__pycache__`` beside its source? (True under ``NUMBA_CACHE_DIR``, where numba lays
    the files out by itself.)"""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return True
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return False
    src = Path(spec.origin)
    return any((src.parent / "__pycache__").glob(f"{src.stem}.{function}-*.nbi"))


def is_cached(dispatcher: Any) -> bool:
    """Whether numba's on-disk cache holds a compiled version of ``dispatcher`` that numba
    would load for the current source on this machine (False if the check cannot tell)."""
    try:
        cache = dispatcher._cache
        codegen = dispatcher.targetctx.codegen()
        index = cache._cache_file._load_index()
        return any(cache._index_key(key[0], codegen) == key for key in index)
    except Exception:  # numba's private names moved: say "not cached"
        return False


def kernels_cached(kernels: tuple[tuple[str, str], ...]) -> bool:
    """Whether every (module, function) kernel is compiled and cached (module docstring)."""
    if not numba_installed():
        return False
    if not all(_index_file_exists(m, f) for m, f in kernels):
        return False
    return all(is_cached(getattr(importlib.import_module(m), f)) for m, f in kernels)


def compile_kernels(progress: Callable[[str], None] | None = None) -> bool:
    """Compile and cache the batch engine's, the slack scheduler's and the slack search's
    kernels (one small run of each, 30-90 s of CPU each the first time; ``progress`` is
    told each group before it starts); whether they are cached now."""
    from heuristics.backfill import EASY
    from heuristics.slack import SlackPolicy
    from instances.job import Job, Workload
    from sim.batch.fast.run import simulate_compiled

    jobs = tuple(Job(id=i + 1, submit=i, runtime=5 + i, requested=10 + i,
                     demand=(1 + i % 2,)) for i in range(6))
    w = Workload(jobs=jobs, capacity=(2,), name="warm-up")
    for what, policy in (("the batch engine", EASY()),
                         ("the slack scheduler", SlackPolicy(order="AST")),
                         ("the slack search", SlackPolicy(order="AST", check=True))):
        if progress is not None:
            progress(what)
        simulate_compiled(w, policy)
    return kernels_cached(BATCH_KERNELS + SLACK_KERNELS + SLACK_SEARCH_KERNELS)


def main() -> int:
    """Compile and cache the kernels (:func:`compile_kernels`), then say whether they are
    cached."""
    ok = compile_kernels()
    print("compiled engine's kernels cached:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
