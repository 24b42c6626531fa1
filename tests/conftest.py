"""Set-up shared by every test directory: which tests must not share a core.

The README's test command runs the tests on two pytest-xdist workers (``-n 2``), one core
each. A test that times itself against a limit, or starts worker processes of its own,
would lose part of its core now and then if another such test ran beside it. Such tests
(those marked ``timed``, and every test under ``tests/limits/`` not marked ``untimed``)
take a lock shared by the workers for their whole run: no two of them ever overlap, and
the other worker runs single-process tests beside them. Without xdist the tests run one
at a time anyway.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # not POSIX: timed tests may overlap
    fcntl = None

LIMITS = Path(__file__).resolve().parent / "limits"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "untimed: under tests/limits/ but neither times itself nor starts worker "
        "processes: runs beside timed tests (tests/conftest.py)")


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
