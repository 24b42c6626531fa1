"""Every numba kernel is compiled once per argument types, never once per constant.

numba types a Python ``int`` or ``bool`` constant passed to a kernel as ``Literal[int](1)``
and compiles the kernel again for each such value (and for a counter that starts at a
constant, whose type settles only after type inference has called the kernel with the
constant's). Each such version costs the test run's first compile seconds of CPU
(``sim.experiments.engine.compile_bench``). numba's on-disk cache index lists every
version compiled: none may hold a literal argument.
"""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.compiled

from numba.core import types  # noqa: E402

#: the modules of the kernels the compiled engines run
KERNEL_MODULES = ("sim.batch.fast.kernel", "sim.batch.fast.slack_loop",
                  "heuristics.slack_kernel", "heuristics.compress_kernel",
                  "sim.timeshare.fast.kernel", "sim.timeshare.fast.mt")


def _cached_signatures(dispatcher) -> list[tuple]:
    """The argument types of every version of ``dispatcher`` in numba's cache index (the
    index of the current source: numba drops it when the source changes)."""
    try:
        index = dispatcher._cache._cache_file._load_index()
    except AttributeError:  # numba's private names moved
        pytest.skip("numba's cache index is not readable by this numba")
    return [key[0] for key in index]


def _compile_all() -> None:
    """The batch group and the CSM group of ``tests/conftest.py``, and conservative's
    compiled compression pass under the Python engine (loaded from the cache when
    compiled before)."""
    import numpy as np

    from heuristics.compress_kernel import compress
    from heuristics.coscheduling import by_name
    from sim.batch.fast import cache
    from sim.timeshare.fast.run import simulate
    from sim.timeshare.workload import CSMConfig

    cache.compile_kernels()
    simulate(CSMConfig(n_nodes=8, n_jobs=4, tc_scale=0.01, mem_scale=0.01,
                       large_sizes=(8,)), by_name("csm"), 1)
    # one job without a reservation placed now (0 s) on an empty machine of 2 processors
    times = np.zeros(16, np.int64)
    free = np.zeros((1, 16), np.int64)
    free[0, 0] = 2
    res = np.array([-1])
    assert compress(times, free, 1, 0, res, np.array([5]), np.array([[1]]), False,
                    np.array([2])) == 2
    assert res[0] == 0


def test_no_kernel_is_compiled_for_a_constant(csm_kernels):
    _compile_all()
    literal = []
    seen = 0
    for name in KERNEL_MODULES:
        module = importlib.import_module(name)
        for attr, value in sorted(vars(module).items()):
            if getattr(value, "py_func", None) is None or \
                    value.py_func.__module__ != name or not hasattr(value, "_cache"):
                continue
            for sig in _cached_signatures(value):
                seen += 1
                if any(isinstance(a, types.Literal) for a in sig):
                    literal.append(f"{name}.{attr}{sig}")
    assert seen > 50  # the compiled kernels were found in the index
    assert not literal, "compiled for a constant:\n" + "\n".join(literal)
