"""Set-up shared by every test directory: which tests must not share a core.

The README's test command runs the tests on three pytest-xdist workers (``-n 3``) on a
2-core machine: about a quarter of a worker's wall time is spent waiting (on a limit, a
child process starting, a lock below), and the third worker fills it. A test that times
itself against a limit, or starts worker processes of its own, would lose more of its
core if another such test ran beside it. Such tests (those marked ``timed``, and every
test under ``tests/limits/`` not marked ``untimed``) take a lock shared by the workers for
their whole run: no two of them ever overlap, and the other workers run single-process
tests beside them (a timed test so gets about two thirds of a core; its bounds hold on a
loaded machine). Without xdist the tests run one at a time anyway.

The tests that run numba's kernels (the compiled engines against their Python references)
are marked ``compiled`` and a study's quick runs end to end ``study``: the default run
leaves both out (compiling the kernels alone costs about 100 s of CPU in a fresh clone),
the README's test command (CI) runs them. numba compiles its kernels at their first call
and caches them on disk; two workers that reach a kernel before it is cached both compile
it. In a whole run on xdist that selects ``compiled`` tests, each group of kernels is
compiled by one worker under a lock of its own, the workers starting from different
groups, and the other worker loads it from the cache (:func:`_kernels_compiled_once`).
The time-sharing cluster's kernels serve one test file only
(``tests/timeshare/test_csm_compiled.py``): a worker that did not compile them does not
wait for them at the start; that file's tests wait (:func:`csm_kernels`).
"""

from __future__ import annotations

import importlib.util
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # not POSIX: timed tests may overlap
    fcntl = None

TESTS = Path(__file__).resolve().parent
LIMITS = TESTS / "limits"
#: the ``quick`` set (``pytest -m quick``, under a minute on 2 cores, no numba compile): the
#: edit-test loop's files, one or two per layer: layers and import circles, the policy
#: golden scenarios, metrics, the SWF reader, the problem definitions, the memory model, the
#: sweep cell's policy records, the CLI's parser
QUICK = ("test_layers.py", "test_result.py", "batch/test_golden.py", "batch/test_metrics.py",
         "instances/test_swf.py", "instances/test_job_checks.py", "problems/test_fields.py",
         "problems/test_insertion.py", "memory/test_memory_model.py",
         "sweep/test_cell_priorities.py", "cli/test_parser_families.py")
#: a run of at least this many tests is a whole run: its workers compile numba's kernels
#: first, one group each (a run of a few files compiles only what it calls)
WHOLE_RUN = 1000


def pytest_configure(config: pytest.Config) -> None:
    # A run started in the background by a non-interactive shell (``cmd &``, nohup)
    # inherits SIGINT ignored, and so would every process the tests start: the Ctrl-C
    # tests would test nothing a user at a terminal meets. Take SIGINT back (a handled
    # signal is reset to its default in a child at exec).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    missing = [name for name in QUICK if not (TESTS / name).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py QUICK names missing files: {missing}")
    config.addinivalue_line(
        "markers", "untimed: under tests/limits/ but neither times itself nor starts worker "
        "processes: runs beside timed tests (tests/conftest.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of the :data:`QUICK` files ``quick``."""
    quick = {TESTS / name for name in QUICK}
    for item in items:
        if Path(item.path).resolve() in quick:
            item.add_marker(pytest.mark.quick)


def _timed(item: pytest.Item) -> bool:
    if item.get_closest_marker("timed") is not None:
        return True
    return item.get_closest_marker("untimed") is None and \
        LIMITS in Path(item.path).resolve().parents


@pytest.fixture(autouse=True)
def _one_timed_test_at_a_time(request: pytest.FixtureRequest,
                              tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hold the workers' lock around a timed test (set-up, call, tear-down)."""
    if fcntl is None or "PYTEST_XDIST_WORKER" not in os.environ or not _timed(request.node):
        yield
        return
    # the workers' temporary directories share this parent
    lock = tmp_path_factory.getbasetemp().parent / "timed.lock"
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _compile_batch() -> None:
    """The batch engine's, the slack scheduler's and the slack search's kernels, and the
    vector-packing pricer's (``colgen``)."""
    from models.kresource.knapsack import compile_kernel
    from sim.batch.fast import cache

    cache.compile_kernels()
    compile_kernel()


def _compile_csm() -> None:
    """The time-sharing cluster's kernels (one small point of the compiled CSM engine)."""
    from heuristics.coscheduling import by_name
    from sim.timeshare.fast.run import simulate
    from sim.timeshare.workload import CSMConfig

    simulate(CSMConfig(n_nodes=8, n_jobs=4, tc_scale=0.01, mem_scale=0.01,
                       large_sizes=(8,)), by_name("csm"), 1)


@pytest.fixture(scope="session", autouse=True)
def _kernels_compiled_once(request: pytest.FixtureRequest,
                           tmp_path_factory: pytest.TempPathFactory) -> None:
    """In a whole run on xdist that selects ``compiled`` tests, compile each group of numba
    kernels under its own lock, worker ``gw<i>`` starting from group ``i``: the first to
    take a group's lock compiles it, the others find it in numba's cache."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    items = request.session.items
    if (fcntl is None or not worker.startswith("gw") or len(items) < WHOLE_RUN
            or importlib.util.find_spec("numba") is None
            or not any(i.get_closest_marker("compiled") for i in items)):
        return
    groups = [("batch", _compile_batch), ("csm", _compile_csm)]
    first = int(worker[2:]) % len(groups)
    for i, (name, compile_group) in enumerate(groups[first:] + groups[:first]):
        if name == "csm" and i > 0:  # its one test file waits for it (csm_kernels)
            continue
        _compile_under_lock(tmp_path_factory, name, compile_group)


def _compile_under_lock(tmp_path_factory: pytest.TempPathFactory, name: str,
                        compile_group: Callable[[], None]) -> None:
    """Compile a group of kernels holding the workers' lock for that group: the first
    worker compiles, a later one waits for it and loads the group from numba's cache."""
    lock = tmp_path_factory.getbasetemp().parent / f"compile-{name}.lock"
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            compile_group()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def csm_kernels(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The time-sharing cluster's kernels, compiled by one worker only: on xdist a test
    that runs them waits here while another worker compiles them (the worker that
    compiled the batch kernels starts its tests instead of waiting at the start)."""
    if fcntl is not None and "PYTEST_XDIST_WORKER" in os.environ:
        _compile_under_lock(tmp_path_factory, "csm", _compile_csm)
