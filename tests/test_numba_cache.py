"""A cached kernel that calls a kernel of another module is compiled again when that
module changes (numba alone keeps the old callee)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[1]

CALLEE = """
from numba import njit

@njit(cache=True)
def g(x):
    return x + {add}
"""

CALLER = """
import sys
from numba import njit
import callee

@njit(cache=True)
def f(x):
    return callee.g(x) * 10

from sim.numba_cache import refresh
refresh(__name__, [callee])
"""


def run(tmp: Path) -> int:
    env = {**os.environ, "PYTHONPATH": f"{tmp}{os.pathsep}{ROOT}"}
    env.pop("NUMBA_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", "import caller; print(caller.f(1))"],
                         cwd=tmp, env=env, capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def edit_callee(tmp: Path, add: int) -> None:
    path = tmp / "callee.py"
    path.write_text(textwrap.dedent(CALLEE.format(add=add)))
    t = time.time() + add  # a new stamp even within the file system's time resolution
    os.utime(path, (t, t))


def test_an_edited_callee_is_compiled_again_with_refresh(tmp_path):
    """(Without the ``refresh`` call the second run prints 20: numba 0.68 keeps the old
    callee.)"""
    (tmp_path / "caller.py").write_text(textwrap.dedent(CALLER))
    edit_callee(tmp_path, 1)
    assert run(tmp_path) == 20
    edit_callee(tmp_path, 2)
    # numba alone loads the caller's cached code with the old callee; refresh recompiles
    assert run(tmp_path) == 30
