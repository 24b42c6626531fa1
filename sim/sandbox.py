"""Code the project does not control (a user's solver or policy, an installed plug-in),
run in a worker process that a time limit or a kill can stop.

:func:`call` sends ``MODULE:FUNCTION`` and its arguments (pickled) to a worker process
and waits for the answer at most ``seconds``. A worker that runs past that deadline is
killed with its whole process group (a solver's own child processes too); one that dies
(a segfault, ``os._exit``) is noticed at once; an exception or ``sys.exit`` inside the
function comes back as its text. Each of these raises :class:`ForeignError` (a
ValueError) with one line saying what happened; the caller records it as a failed run
and goes on.

The worker is started once per process (``python -m sim.sandbox``, about half a second)
and reused by later calls until it is killed or dies, so its imports and the caches of
the code it runs (a trace read once, say) serve every call. It ends with the process
that started it. What the foreign code prints goes to standard error, never into the
caller's output. Its data segment (``RLIMIT_DATA``: the heap and private mappings) is
limited to :data:`MEMORY_SHARE` of the machine's physical memory, so foreign code that
allocates more gets a ``MemoryError`` (an answer like any exception) instead of taking
the machine's memory. Times are wall-clock seconds.
"""

from __future__ import annotations

import atexit
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

#: seconds a worker gets past its time limit before it is killed: this plus
#: :data:`GRACE_SHARE` of the limit (a solver stops at its limit, then returns its answer)
GRACE_SECONDS = 2.0

#: share of the time limit added to :data:`GRACE_SECONDS`
GRACE_SHARE = 0.1

#: share of the machine's physical memory the worker's data segment may take
MEMORY_SHARE = 0.5

_IN_WORKER = False  # set in the worker process by ``python -m sim.sandbox``


class ForeignError(ValueError):
    """The foreign function raised, exited, crashed, or ran past its deadline."""


def in_worker() -> bool:
    """Whether this process is a sandbox worker (where foreign code is imported and run
    directly: it is the process a limit or a kill stops)."""
    return _IN_WORKER


def memory_limit() -> int | None:
    """Bytes of data segment a worker may use: :data:`MEMORY_SHARE` of the physical
    memory (None where the system does not say)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return int(total * MEMORY_SHARE) if total > 0 else None


def _limit_memory() -> None:
    """Cap this process's data segment at :func:`memory_limit` (where the system can)."""
    limit = memory_limit()
    try:
        import resource

        hard = resource.getrlimit(resource.RLIMIT_DATA)[1]
        if limit is not None and (hard == resource.RLIM_INFINITY or limit < hard):
            resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ImportError, ValueError, OSError, AttributeError):
        pass


def deadline(time_limit: float | None) -> float | None:
    """Seconds a call with ``time_limit`` may take before its worker is killed (None:
    no limit): the limit plus the grace (:data:`GRACE_SECONDS`, :data:`GRACE_SHARE`)."""
    if time_limit is None:
        return None
    return float(time_limit) + GRACE_SECONDS + GRACE_SHARE * float(time_limit)


class Worker:
    """One worker process serving :func:`call` requests over a socket pair, for callers
    with one import path and current folder (``where``): the modules it imported stay
    imported, so a caller elsewhere gets a worker of its own (:func:`_worker`)."""

    def __init__(self) -> None:
        self.where = _where()
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sim.sandbox", str(theirs.fileno()), str(os.getpid())],
            pass_fds=[theirs.fileno()], start_new_session=True, env=env,
            stdin=subprocess.DEVNULL)
        theirs.close()
        self.conn = Connection(ours.detach())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill the worker and every process of its group, and reap it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.conn.close()

    def died(self) -> str:
        """How the worker ended (after it closed its end)."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"crashed ({name})"
        return f"exited with code {code}"


_WORKER: Worker | None = None
_LOCK = threading.Lock()


def _where() -> tuple[tuple[str, ...], str]:
    """The caller's import path and current folder: where a worker finds its modules."""
    return tuple(sys.path), os.getcwd()


def _worker() -> Worker:
    """The worker for this call: the running one, unless it died or the caller's import
    path or folder changed since it started (its imported modules may then be another
    folder's of the same name)."""
    global _WORKER
    if _WORKER is not None and _WORKER.alive() and _WORKER.where != _where():
        _discard()
    if _WORKER is None or not _WORKER.alive():
        _WORKER = Worker()
    return _WORKER


def _discard() -> None:
    global _WORKER
    if _WORKER is not None:
        _WORKER.kill()
        _WORKER = None


atexit.register(_discard)


def call(target: str, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None, *,
         seconds: float | None = None, what: str = "function") -> Any:
    """``target(*args, **kwargs)`` in the worker process; its return value.

    Parameters
    ----------
    target : str
        ``MODULE:FUNCTION``, imported in the worker (``sim.plugins.load_reference``).
    seconds : float, optional
        Wall-clock seconds before the worker is killed (None: no limit).
    what : str
        What ``target`` is, for the messages (``"solver 'mymod:fast'"``).

    Raises
    ------
    ForeignError
        One line: the function raised (its exception type and message) or called
        ``sys.exit``, the worker crashed or ended, the deadline passed, or the value does
        not pickle.
    """
    with _LOCK:
        worker = _worker()
        t0 = time.monotonic()
        try:
            worker.conn.send((list(sys.path), os.getcwd(), target, args, kwargs or {}))
        except (OSError, pickle.PicklingError, TypeError, AttributeError) as exc:
            _discard()
            raise ForeignError(f"{what}: its arguments could not be sent to the worker "
                               f"process ({type(exc).__name__}: {exc})") from None
        try:
            ready = wait(worker.conn, seconds)
        except KeyboardInterrupt:
            _discard()
            raise
        if not ready:
            _discard()
            raise ForeignError(f"{what}: time limit exceeded (killed after "
                               f"{time.monotonic() - t0:.1f} s)")
        try:
            kind, value = worker.conn.recv()
        except (EOFError, OSError):
            how = worker.died()
            _discard()
            raise ForeignError(f"{what}: its process {how}") from None
        except Exception as exc:  # a value the parent cannot unpickle
            _discard()
            raise ForeignError(f"{what}: its answer could not be read ({type(exc).__name__}: "
                               f"{exc})") from None
    if kind == "ok":
        return value
    raise ForeignError(f"{what}: {value}")


#: longest single wait on the worker's answer (seconds): the operating system's poll takes
#: a bounded timeout, and a limit of 1e10 s or more would overflow it
POLL_CHUNK = 86_400.0


def wait(conn: Connection, seconds: float | None) -> bool:
    """Whether ``conn`` has an answer within ``seconds`` (None: wait for ever), waiting in
    chunks of at most :data:`POLL_CHUNK` so that any finite limit is a valid timeout."""
    if seconds is None:
        return conn.poll(None)
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if conn.poll(min(max(left, 0.0), POLL_CHUNK)):
            return True
        if left <= POLL_CHUNK:
            return False


# --------------------------------------------------------------------------- worker side
def stdout_to_stderr() -> None:
    """Send this process's standard output (file descriptor 1, so ``print`` and a C
    library's writes alike) to its standard error: foreign code that prints must not
    write into the command's own output (a ``--json`` document, a table)."""
    sys.stdout.flush()
    os.dup2(2, 1)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _watch_parent(parent: int, interval: float = 0.5) -> None:
    """End this worker once the process that started it is gone: reparented (a parent
    that died but was not yet reaped by its own parent still answers ``kill(pid, 0)``
    as a zombie, so the pid alone would keep this worker running for ever) or no
    longer there."""
    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(interval)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _answer(conn: Connection, target: str, args: tuple[Any, ...],
            kwargs: dict[str, Any], cache: dict[str, Any]) -> None:
    from sim.plugins import load_reference

    try:
        fn = cache.get(target) or cache.setdefault(target, load_reference(target))
        reply: tuple[str, Any] = ("ok", fn(*args, **kwargs))
    except SystemExit as exc:
        reply = ("error", f"called sys.exit({exc.code!r})")
    except BaseException as exc:  # whatever the foreign code raises is its answer
        reply = ("error", f"raised {_one_line(exc)}")
    try:
        data = pickle.dumps(reply)
    except Exception as exc:
        data = pickle.dumps(("error", f"returned a value that does not pickle "
                                      f"({_one_line(exc)})"))
    conn.send_bytes(data)


def _serve(fd: int, parent: int) -> None:
    conn = Connection(fd)
    _watch_parent(parent)
    cache: dict[str, Any] = {}
    while True:
        try:
            path, cwd, target, args, kwargs = conn.recv()
        except EOFError:
            return
        sys.path[:] = path  # the caller's: its current folder and PYTHONPATH
        os.chdir(cwd)
        _answer(conn, target, args, kwargs, cache)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills the group
    from sim import sandbox as _module  # this file runs as __main__: flag the module

    _module._IN_WORKER = True
    _module.stdout_to_stderr()
    _module._limit_memory()
    _module._serve(int(sys.argv[1]), int(sys.argv[2]))
