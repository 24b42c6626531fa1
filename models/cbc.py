"""CBC for the PuLP models, through PuLP's current (3.x, 4.0-ready) API.

PuLP 3.x deprecates ``PULP_CBC_CMD`` (the bundled CBC binary) in favour of ``COIN_CMD``
with a CBC it finds itself (``pip install pulp[cbc]``, or ``cbc`` on the PATH). We keep
the bundled binary working (``pulp>=2.8,<4`` in pyproject) by handing its path to
``COIN_CMD``, which is the API that stays in PuLP 4.0, and fall back to the CBC that
``COIN_CMD`` finds on its own when there is no bundled binary. Every call runs CBC with
one thread and no console output.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

__all__ = ["bound_from_log", "cbc_path", "command", "solve_guarded", "variable"]


def cbc_path() -> str | None:
    """Path of the CBC binary used: PuLP's bundled one if present, else None (then
    ``COIN_CMD`` looks for ``cbc`` itself)."""
    try:
        from pulp.apis import coin_api
    except ImportError:  # pragma: no cover - PuLP is a hard dependency
        return None
    path = getattr(coin_api, "pulp_cbc_path", None)
    if path and os.path.isfile(path):
        if not os.access(path, os.X_OK):
            try:
                os.chmod(path, os.stat(path).st_mode | 0o111)
            except OSError:
                return None
        return path
    return None


def command(*, time_limit: float | None = None, log_path: str | None = None) -> Any:
    """A ``pulp.COIN_CMD`` running CBC single-threaded and silently.

    Parameters
    ----------
    time_limit : float, optional
        CBC's wall-clock limit, seconds (``timeLimit``).
    log_path : str, optional
        File CBC writes its log to (its bound is read from there).

    Raises
    ------
    RuntimeError
        When no CBC binary is available (neither bundled nor installed).
    """
    import pulp

    kw: dict[str, Any] = {"msg": False, "threads": 1}
    if time_limit is not None:
        kw["timeLimit"] = time_limit
    if log_path is not None:
        kw["logPath"] = log_path
    path = cbc_path()
    solver = pulp.COIN_CMD(path=path, **kw) if path else pulp.COIN_CMD(**kw)
    if not solver.available():
        raise RuntimeError("no CBC binary found: install PuLP < 4 (bundles CBC) or "
                           "`pip install pulp[cbc]`")
    return solver


def variable(prob: Any, name: str, cat: str, low: float | None = None,
             up: float | None = None) -> Any:
    """A variable attached to ``prob`` (``prob.add_variable`` where PuLP has it)."""
    import pulp

    add = getattr(prob, "add_variable", None)
    if add is not None:
        return add(name, lowBound=low, upBound=up, cat=cat)
    return pulp.LpVariable(name, lowBound=low, upBound=up, cat=cat)  # PuLP < 3


def _cbc_children(path: str) -> list[int]:
    """Process ids of this process's children running the binary ``path`` (Linux
    ``/proc``; empty elsewhere)."""
    me = os.getpid()
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid == me and os.path.realpath(f"/proc/{name}/exe") == os.path.realpath(path):
                found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def solve_guarded(lp: Any, *, time_limit: float | None, grace: float = 0.5,
                  log_path: str | None = None) -> bool:
    """Solve ``lp`` with :func:`command` and kill CBC if it outlives its limit.

    CBC checks ``-sec`` only in its search: reading a large model, the root LP and its
    preprocessing can run seconds past it. A watchdog kills the CBC child process
    ``grace`` seconds after ``time_limit`` (seconds); the model then has no values.

    Returns
    -------
    bool
        True when CBC ended by itself (``lp.status`` / ``sol_status`` are set), False
        when it was killed (no solution read).
    """
    import shutil
    import tempfile

    import pulp

    solver = command(time_limit=time_limit, log_path=log_path)
    if time_limit is None:
        lp.solve(solver)
        return True
    path = shutil.which(solver.path) or solver.path
    tmp = tempfile.TemporaryDirectory(prefix="schedsearch_cbc_")
    solver.tmpDir = tmp.name  # a killed CBC leaves its model files: removed with it
    killed = threading.Event()
    stop = threading.Event()

    def watchdog() -> None:
        # PuLP writes the model before it starts CBC, and a large model can take longer
        # to write than the limit: keep looking for the CBC child until solve returns
        if stop.wait(float(time_limit) + grace):
            return
        while True:
            for pid in _cbc_children(path):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.set()
                except OSError:
                    pass
            if stop.wait(0.05):
                return

    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    try:
        lp.solve(solver)
    except pulp.PulpSolverError:
        if not killed.is_set():
            raise
    finally:
        stop.set()
        guard.join()
        tmp.cleanup()
    return not killed.is_set()


def bound_from_log(logfile: str) -> float | None:
    """CBC's best proved bound from its log file (``command(log_path=...)``): the last
    "best possible" value, else the root LP value; None when the log has neither."""
    import re

    try:
        with open(logfile) as fh:
            text = fh.read()
    except OSError:
        return None
    found = re.findall(r"best possible\s+(-?[0-9.eE+-]+)", text)
    if found:
        return float(found[-1])
    found = re.findall(r"Continuous objective value is\s+(-?[0-9.eE+-]+)", text)
    return float(found[-1]) if found else None
