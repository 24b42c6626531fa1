"""Process helpers shared by the tests: whether a process is gone (Linux ``/proc``), and
the output of code run in a fresh interpreter (what it imports, free of the test run's
imports)."""

from __future__ import annotations

import subprocess
import sys
import time


def gone(pid: int, within: float = 2.0) -> bool:
    """Whether process ``pid`` ends (or is a zombie) within ``within`` seconds."""
    end = time.perf_counter() + within
    while time.perf_counter() < end:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def fresh_python(code: str, timeout: float = 120) -> str:
    """The standard output of ``code`` run by ``python -c`` in a new interpreter (raises
    ``CalledProcessError`` when it fails)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, check=True).stdout
