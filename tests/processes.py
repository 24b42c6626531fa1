"""Process checks shared by the tests of the solver guards (Linux ``/proc``)."""

from __future__ import annotations

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
