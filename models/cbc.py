"""CBC for the PuLP models, through PuLP's current (3.x, 4.0-ready) API.

PuLP 3.x deprecates ``PULP_CBC_CMD`` (the bundled CBC binary) in favour of ``COIN_CMD``
with a CBC it finds itself (``pip install pulp[cbc]``, or ``cbc`` on the PATH). We keep
the bundled binary working (``pulp>=2.8,<4`` in pyproject) by handing its path to
``COIN_CMD``, which is the API that stays in PuLP 4.0, and fall back to the CBC that
``COIN_CMD`` finds on its own when there is no bundled binary. Every call runs CBC
serially (no ``-threads`` option) and without console output: the bundled CBC 2.10.3
given ``-threads 1`` starts its one worker thread through a race that, on a loaded
machine, leaves the search waiting for it until the time limit (measured: 27 of 400
solves of a 4-variable knapsack "stopped on time limit" after 10 s, the log reading
"Thread 0 used 0 times, waiting to start 10.000147").
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from typing import Any

__all__ = ["bound_from_log", "cbc_path", "command", "die_with_parent", "kill_group",
           "log_file", "run_dir", "solve_guarded", "sweep_stale", "variable"]


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

    kw: dict[str, Any] = {"msg": False}
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


# ------------------------------------------------------ children that die with this process
def _prctl() -> Any:
    """libc's ``prctl`` (Linux), resolved once in the parent: the child between fork and
    exec only calls it."""
    global _PRCTL
    if _PRCTL is None:
        _PRCTL = False
        if os.uname().sysname == "Linux":
            try:
                import ctypes

                _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                pass
    return _PRCTL


_PRCTL: Any = None
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Any:
    """A ``preexec_fn`` making the started program receive SIGKILL when the thread that
    started it ends (Linux ``prctl(PR_SET_PDEATHSIG)``: also when this process is killed
    by SIGKILL), or ending it at once if this process is already gone; None elsewhere.
    The starting thread must outlive the program (it waits for it)."""
    prctl = _prctl()
    if not prctl:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)

    return arm


TEMP_PREFIXES = ("schedsearch_cbc_", "schedsearch_mip_")
"""Prefixes of the per-run temporary folders (``PREFIX<pid>_...``, :func:`run_dir`)."""


def run_dir(prefix: str) -> Any:
    """A ``tempfile.TemporaryDirectory`` named ``PREFIX<this pid>_...`` for one solve's
    files (removed when the solve ends, also by Ctrl-C or SIGTERM); the folders of
    processes killed by SIGKILL are removed by the next run (:func:`sweep_stale`)."""
    import tempfile

    sweep_stale()
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}_")


def log_file(prefix: str) -> str:
    """A new empty temporary file ``schedsearch_cbc_<this pid>_PREFIX....log`` for CBC's
    log (the caller removes it; :func:`sweep_stale` removes those of a process killed by
    SIGKILL)."""
    import tempfile

    sweep_stale()
    fd, path = tempfile.mkstemp(suffix=".log", prefix=f"schedsearch_cbc_{os.getpid()}_{prefix}")
    os.close(fd)
    return path


_SWEPT = False


def sweep_stale() -> int:
    """Remove (once per process) the temporary folders and log files of
    :data:`TEMP_PREFIXES` whose process is gone (killed by SIGKILL before it could
    remove them); the number removed."""
    global _SWEPT
    if _SWEPT:
        return 0
    _SWEPT = True
    import shutil
    import tempfile

    removed = 0
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    for name in names:
        prefix = next((p for p in TEMP_PREFIXES if name.startswith(p)), None)
        if prefix is None:
            continue
        pid = name[len(prefix):].split("_", 1)[0]
        if not pid.isdigit() or _exists(int(pid)):
            continue
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                continue
        removed += 1
    return removed


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


# --------------------------------------------------------------- CBC in its own session
_started: dict[int, list[Any]] = {}  # solving thread id -> CBC processes it started
_started_lock = threading.Lock()


class _SessionSubprocess:
    """Stands in for ``subprocess`` inside ``pulp.apis.coin_api``: a ``Popen`` there from
    a thread inside :func:`solve_guarded` starts its program in a new session (so its
    process group can be killed whole; :func:`solve_guarded` also ends it if the call
    is interrupted, since a terminal's Ctrl-C no longer reaches it), dies with the
    thread that started it (:func:`die_with_parent`: this process killed by SIGKILL
    takes CBC with it) and is recorded for the watchdog. Everything else is the real
    ``subprocess`` module, unchanged."""

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    @staticmethod
    def Popen(*args: Any, **kwargs: Any) -> subprocess.Popen:  # noqa: N802 (the module API)
        with _started_lock:
            mine = _started.get(threading.get_ident())
        if mine is None:
            return subprocess.Popen(*args, **kwargs)
        if os.name == "posix":
            kwargs.setdefault("start_new_session", True)
            arm = die_with_parent()
            if arm is not None and kwargs.get("preexec_fn") is None:
                kwargs["preexec_fn"] = arm
        proc = subprocess.Popen(*args, **kwargs)
        with _started_lock:
            mine.append(proc)
        return proc


def _guarded_solver_class() -> type:
    """``pulp.COIN_CMD`` whose ``-sec`` is read from a deadline when PuLP builds CBC's
    command line, i.e. after it wrote the MPS file (the writing is charged to the
    limit); installs :class:`_SessionSubprocess` in ``pulp.apis.coin_api`` once."""
    global _GUARDED
    if _GUARDED is not None:
        return _GUARDED
    import pulp
    from pulp.apis import coin_api

    if not isinstance(getattr(coin_api, "subprocess", None), _SessionSubprocess):
        coin_api.subprocess = _SessionSubprocess()

    class GuardedCBC(pulp.COIN_CMD):
        """COIN_CMD with ``timeLimit`` = seconds left until ``deadline_at``
        (``time.perf_counter`` value; None = the fixed limit given)."""

        deadline_at: float | None = None
        _fixed_limit: float | None = None

        @property
        def timeLimit(self) -> float | None:  # noqa: N802 (PuLP's attribute name)
            if self.deadline_at is None:
                return self._fixed_limit
            return round(max(self.deadline_at - time.perf_counter(), 0.01), 2)

        @timeLimit.setter
        def timeLimit(self, value: float | None) -> None:  # noqa: N802
            self._fixed_limit = value

    _GUARDED = GuardedCBC
    return GuardedCBC


_GUARDED: type | None = None


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs and is not a zombie (Linux ``/proc``; else: it exists)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far, every thread (``utime + stime`` of
    Linux ``/proc/PID/stat``); 0 when gone or without ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def kill_group(pid: int) -> bool:
    """SIGKILL ``pid`` with its whole process group when it leads one (a process started
    in its own session), else alone; True when a signal was sent."""
    try:
        if os.name == "posix" and os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        return False
    return True


def _kill(procs: list[Any], path: str) -> bool:
    """SIGKILL each running process of ``procs`` with its whole process group (CBC runs
    in its own session); without a recorded process, this process's children running
    ``path``. True when a signal was sent."""
    sent = False
    for proc in procs:
        if proc.returncode is not None or not _alive(proc.pid):
            continue
        sent = kill_group(proc.pid) or sent
    if not procs:
        for pid in _cbc_children(path):
            try:
                os.kill(pid, signal.SIGKILL)
                sent = True
            except OSError:
                pass
    return sent


STOPPED_ATTR = "_schedsearch_cbc_stopped"
"""Attribute :func:`solve_guarded` sets on the model: why CBC was killed
(``"killed"`` past its limit, ``"interrupted"`` by Ctrl-C; empty when it ended)."""


def solve_guarded(lp: Any, *, time_limit: float | None, grace: float = 0.5,
                  log_path: str | None = None) -> bool:
    """Solve ``lp`` with CBC (as :func:`command`) and kill CBC if it outlives its limit.

    The limit runs from this call: CBC's own ``-sec`` is what is left of it once PuLP
    has written the MPS file (a large model takes seconds to write). CBC checks ``-sec``
    only in its search: reading a large model, the root LP and its preprocessing can
    run far past it (measured: 50 s on an 18 s limit). CBC is started in its own
    session, and a watchdog kills its whole process group ``grace`` seconds after
    ``time_limit`` (seconds); the model then has no values. With or without a limit,
    CBC dies with this process (:func:`die_with_parent`), an interrupted call
    (Ctrl-C, SIGTERM turned into an exception by the CLI) kills it before returning,
    and its files are in a folder of :func:`run_dir` removed when the call ends. The
    first Ctrl-C in the main thread asks CBC to stop (SIGINT to it: it writes its best
    solution, read as a run stopped with a solution; ``models.interrupt``), killing it
    ``models.interrupt.GRACE`` seconds later if it has not (CBC heeds the signal only
    between nodes: stopped in its root processing it leaves no solution, and the
    family answers with its own fallback, measured on an 8-node task mapping); a second
    Ctrl-C, or one before CBC started, raises KeyboardInterrupt.

    Returns
    -------
    bool
        True when CBC ended by itself (``lp.status`` / ``sol_status`` are set), False
        when it was killed (no solution read).
    """
    import shutil

    import pulp

    from models.deadline import limit_of

    time_limit = limit_of(time_limit)
    start = time.perf_counter()
    kw: dict[str, Any] = {"msg": False}
    if time_limit is not None:
        kw["timeLimit"] = float(time_limit)
    if log_path is not None:
        kw["logPath"] = log_path
    cls = _guarded_solver_class()
    cbc = cbc_path()
    solver = cls(path=cbc, **kw) if cbc else cls(**kw)
    if not solver.available():
        raise RuntimeError("no CBC binary found: install PuLP < 4 (bundles CBC) or "
                           "`pip install pulp[cbc]`")
    if time_limit is not None:
        solver.deadline_at = start + float(time_limit)
    path = shutil.which(solver.path) or solver.path
    tmp = run_dir("schedsearch_cbc_")
    solver.tmpDir = tmp.name  # a killed CBC leaves its model files: removed with it
    procs: list[Any] = []
    killed = threading.Event()
    stop = threading.Event()

    def watchdog() -> None:
        # PuLP writes the model before it starts CBC, and a large model can take longer
        # to write than the limit: keep looking for CBC until solve returns
        if time_limit is None or \
                stop.wait(max(start + float(time_limit) + grace - time.perf_counter(), 0.0)):
            return
        while True:
            with _started_lock:
                mine = list(procs)
            if _kill(mine, path):
                killed.set()
            if stop.wait(0.05):
                return

    def ask() -> bool:  # Ctrl-C: CBC stops and writes its best solution
        from models.interrupt import GRACE

        with _started_lock:
            mine = [p for p in procs if p.returncode is None and _alive(p.pid)]
        for proc in mine:
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except OSError:
                pass

        def overdue() -> None:  # one that does not stop is killed (no answer)
            if not stop.wait(GRACE) and _kill(mine, path):
                killed.set()

        threading.Thread(target=overdue, daemon=True).start()
        return bool(mine)

    from models.interrupt import CtrlC

    me = threading.get_ident()
    setattr(lp, STOPPED_ATTR, "")
    with _started_lock:
        _started[me] = procs
    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    try:
        with CtrlC(ask) as ctrl:
            lp.solve(solver)
    except pulp.PulpSolverError:
        if not killed.is_set():
            raise
        setattr(lp, STOPPED_ATTR, "interrupted" if ctrl.asked.is_set() else "killed")
        return False
    finally:
        stop.set()
        guard.join()
        with _started_lock:
            _started.pop(me, None)
        for proc in procs:  # nothing of CBC's group outlives the call
            _kill([proc], path)
        tmp.cleanup()
    return True


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
