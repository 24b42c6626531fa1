"""The child process in which :func:`models.mip.solve` runs HiGHS or SCIP, and
:func:`models.cpsat_process.solve` runs CP-SAT.

Started once per process as ``python -I models/mip_worker.py --serve`` (isolated:
neither the project nor ``PYTHONPATH`` is on its path, so it imports only NumPy and
OR-Tools' ``model_builder_helper`` and ``cp_model_helper``; never ``highspy``), it is a
fork server
(:func:`serve`): each solve is one fork of it (:func:`child`), so no solve pays for
Python's start and OR-Tools' import. (``multiprocessing``'s own ``forkserver`` is not
used: it re-runs the parent's main script in the server.) A worker's ``DIR`` holds:

``job.json`` (written by the parent)
    ``backend`` ("highs" or "scip"), ``parameters`` (the solver-specific parameter
    string), ``deadline`` (``time.monotonic()`` seconds, shared by every process of the
    machine, at which the solver's time is up; null: no limit), ``reserve`` (seconds
    kept back from the solver's own limit for its set-up) and ``interrupt_at`` (when
    the worker asks the solver to stop, ``interrupt_solve``, keeping its answer:
    before the parent's kill; through OR-Tools 9.15's ``model_builder`` neither SCIP nor
    HiGHS heeds it, measured).
``model.pb`` (written by the parent)
    The model, a ``MPModelProto`` (``ModelBuilderHelper.write_model_to_proto_file``).
``model.txt`` (written by the parent; backend "cpsat")
    The model, a ``CpModelProto`` in text format (OR-Tools 9.15's Python API reads no
    binary one), solved by :func:`main_cpsat` with ``parameters`` (a ``SatParameters``
    in text format) whose ``max_time_in_seconds`` counts from ``sent``
    (``time.monotonic()`` when the parent wrote the job); each improving solution is
    written to :data:`INCUMBENT` as it is found, read by the parent when it kills the
    worker.
``interrupt`` (written by the parent on Ctrl-C)
    Asks the solver to stop now, keeping its answer (:data:`INTERRUPT`): SCIP through
    its own SIGINT handler (``misc/catchctrlc``), which the worker signals; HiGHS does
    not stop, and its incumbent is read from
    ``improving.sol``.

HiGHS writes ``improving.sol`` (:data:`IMPROVING`: each improving solution as it finds
it, appended, ``mip_improving_solution_file``), read by the parent when it kills an
interrupted worker (:func:`read_improving`). It writes ``values.npy`` (the solution,
when there is one) and then ``result.json``
(``status``: the name of OR-Tools' ``SolveStatus`` or ``"NO_TIME"`` when the deadline
passed before the solve; ``has_solution``, ``objective``, ``bound``, ``highspy``: whether
``highspy`` was imported; ``peak_mb``: its peak resident memory; ``cpu_s``: its CPU
time, s). The parent kills
it, with its process group, past the deadline plus a grace; a killed worker writes
nothing the parent reads. A worker dies with the fork server (Linux
``PR_SET_PDEATHSIG``), and the server ends with its parent, killing the workers it
started and removing their folders (:func:`serve`).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any


def _write_json(path: str, data: dict) -> None:
    _write_text(path, json.dumps(data))


def main(directory: str) -> int:
    """Solve the model in ``directory`` (module docstring); 0 on success."""
    import numpy as np
    from ortools.linear_solver.python import model_builder_helper as mbh

    with open(os.path.join(directory, "job.json")) as fh:
        job = json.load(fh)
    if job["backend"] == "cpsat":
        return main_cpsat(directory, job)
    model = mbh.ModelBuilderHelper()
    if not model.read_model_from_proto_file(os.path.join(directory, "model.pb")):
        raise RuntimeError("could not read model.pb")
    solver = mbh.ModelSolverHelper(job["backend"])
    if not solver.solver_is_supported():
        raise RuntimeError(f"the installed ortools has no {job['backend']!r} solver")
    parameters = job["parameters"]
    if job["backend"] == "highs":  # every incumbent on disk, for an interrupted run
        directory = os.path.abspath(directory)  # the paths below stay right after chdir
        os.chdir(directory)  # a relative name: no path in the option string
        parameters = ",".join(filter(None, [parameters, "mip_improving_solution_save=true",
                                            f"mip_improving_solution_file={IMPROVING}"]))
    if parameters:
        solver.set_solver_specific_parameters(parameters)
    out: dict = {"status": "NO_TIME", "has_solution": False, "objective": None,
                 "bound": None}
    if job["deadline"] is not None:
        left = float(job["deadline"]) - time.monotonic() - float(job["reserve"])
        if left < 0.01:
            out["highspy"] = "highspy" in sys.modules
            _write_json(os.path.join(directory, "result.json"), out)
            return 0
        solver.set_time_limit_in_seconds(left)
    timer = None
    if job.get("interrupt_at") is not None:  # a soft stop before the parent's kill
        import threading

        timer = threading.Timer(min(max(float(job["interrupt_at"]) - time.monotonic(), 0.0),
                                    threading.TIMEOUT_MAX), solver.interrupt_solve)
        timer.daemon = True
        timer.start()
    done = _watch_interrupt(directory, solver.interrupt_solve)
    solver.solve(model)
    done.set()
    if timer is not None:
        timer.cancel()
    status = solver.status()
    has = status in (mbh.SolveStatus.OPTIMAL, mbh.SolveStatus.FEASIBLE,
                     mbh.SolveStatus.CANCELLED_BY_USER) and solver.has_solution()
    out["status"] = status.name
    out["has_solution"] = bool(has)
    if has:
        np.save(os.path.join(directory, "values.npy"),
                np.asarray(solver.variable_values(), dtype=np.float64))
        out["objective"] = float(solver.objective_value())
        b = solver.best_objective_bound()
        try:
            b = float(b)
            out["bound"] = None if math.isnan(b) else b
        except (TypeError, ValueError):
            out["bound"] = None
    out["highspy"] = "highspy" in sys.modules
    out["peak_mb"] = _peak_mb()
    out["cpu_s"] = _cpu_s()
    _write_json(os.path.join(directory, "result.json"), out)
    return 0


def main_cpsat(directory: str, job: dict) -> int:
    """Solve the CP-SAT model in ``directory`` (module docstring: ``model.txt``,
    ``job.json``'s ``parameters`` and ``sent``), streaming each improving solution to
    :data:`INCUMBENT`; 0 on success."""
    import numpy as np
    from ortools.sat.python import cp_model_helper as cmh

    proto = cmh.CpModelProto()
    with open(os.path.join(directory, "model.txt")) as fh:
        if not proto.parse_text_format(fh.read()):
            raise RuntimeError("could not read model.txt")
    params = cmh.SatParameters()
    if not params.parse_text_format(job["parameters"]):
        raise RuntimeError("could not read the CP-SAT parameters")
    params.catch_sigint_signal = False  # the parent's Ctrl-C comes as INTERRUPT
    # the limit counts from the parent's sending: this process's start and the model's
    # reading are charged to it
    params.max_time_in_seconds = max(
        params.max_time_in_seconds - (time.monotonic() - float(job["sent"])), 0.0)
    incumbent = os.path.join(directory, INCUMBENT)

    class Stream(cmh.SolutionCallback):
        def OnSolutionCallback(self) -> None:  # noqa: N802 - CP-SAT's name
            row = np.asarray(self.Response().solution, dtype=np.float64)
            row = np.append(row, [self.ObjectiveValue(), self.BestObjectiveBound()])
            with open(incumbent + ".tmp", "wb") as fh:
                np.save(fh, row)
            os.replace(incumbent + ".tmp", incumbent)

    wrapper = cmh.SolveWrapper()
    wrapper.set_parameters(params)
    stream = Stream()
    wrapper.add_solution_callback(stream)
    done = _watch_interrupt(directory, wrapper.stop_search, signals=False)
    response = wrapper.solve(proto)
    done.set()
    wrapper.clear_solution_callback(stream)
    has = len(response.solution) > 0
    if has:
        np.save(os.path.join(directory, "values.npy"),
                np.asarray(response.solution, dtype=np.float64))
    _write_json(os.path.join(directory, "result.json"), {
        "status": response.status.name, "has_solution": has,
        "objective": float(response.objective_value) if has else None,
        "bound": float(response.best_objective_bound), "peak_mb": _peak_mb(),
        "cpu_s": _cpu_s()})
    return 0


INCUMBENT = "incumbent.npy"
"""CP-SAT's last improving solution in ``DIR``: its values by variable index, then its
objective and CP-SAT's bound when it was found (float64; replaced whole at each)."""


INTERRUPT = "interrupt"
"""The file whose appearance in ``DIR`` (the parent's Ctrl-C) asks the solver to stop,
keeping its answer."""


IMPROVING = "improving.sol"
"""HiGHS's file of improving solutions in ``DIR`` (module docstring)."""
SIGINTS = 3
"""At most this many SIGINTs (one each :data:`SIGINT_EVERY` seconds) an interrupted worker
sends itself: SCIP stops at the first it sees while solving and ends the process at
its fifth."""
SIGINT_EVERY = 0.5


def _watch_interrupt(directory: str, stop: Any, signals: bool = True) -> Any:
    """A daemon thread that asks the solver to stop once :data:`INTERRUPT` appears in
    ``directory``: ``stop()`` (``interrupt_solve``, CP-SAT's ``stop_search``; again every
    50 ms: a request before the solve starts is not kept) and, with ``signals``, SIGINT
    to this process (SCIP's handler while it solves; the process ignores it otherwise,
    as the fork server did); returns the event that ends it."""
    import signal
    import threading

    done = threading.Event()
    path = os.path.join(directory, INTERRUPT)

    def watch() -> None:
        sent, last = 0, -math.inf
        while not done.wait(0.05):
            if os.path.exists(path):
                stop()
                if signals and sent < SIGINTS and time.monotonic() - last >= SIGINT_EVERY:
                    sent, last = sent + 1, time.monotonic()
                    os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=watch, daemon=True).start()
    return done


def _cpu_s() -> float:
    """This process's CPU time so far, s (user + system, every thread)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _peak_mb() -> float:
    """This process's peak resident memory, MB (``ru_maxrss``, KB on Linux)."""
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except (ImportError, OSError):  # pragma: no cover - not POSIX
        return 0.0


def _die_with_parent(parent: int) -> None:
    """Receive SIGKILL when the fork server ``parent`` ends (Linux
    ``prctl(PR_SET_PDEATHSIG)``); end at once if it already has."""
    import signal

    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent:
        os._exit(3)


def child(directory: str, deadline: float | None = None, parent: int | None = None) -> None:
    """The worker's body: dies with the fork server ``parent`` (whose end follows its
    own parent's), leads a new session (so that the parent can kill its whole process
    group), ends itself ``SELF_KILL`` seconds past ``deadline`` (``time.monotonic``; a
    guard for a worker whose parent died), runs :func:`main`, and writes an error to
    ``error.txt``."""
    if parent is not None:
        _die_with_parent(parent)
    _quiet_stdout()  # the server's answers to its parent: no solver's message among them
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:
            pass
    if deadline is not None:
        import threading

        def end() -> None:  # waits in steps: a thread's timeout stops at TIMEOUT_MAX
            while time.monotonic() < deadline + SELF_KILL:
                time.sleep(min(deadline + SELF_KILL - time.monotonic(), 3600.0))
            os._exit(3)

        threading.Thread(target=end, daemon=True).start()
    try:
        main(directory)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        _write_text(os.path.join(directory, "error.txt"), f"{type(exc).__name__}: {exc}")
        raise


def _quiet_stdout() -> None:
    """Point this process's standard output (file descriptor 1, shared with the fork
    server's pipe to its parent) at ``/dev/null``: SCIP prints on SIGINT."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # pragma: no cover
        return
    os.dup2(null, 1)
    os.close(null)
    sys.stdout = open(1, "w", closefd=False)


def read_improving(directory: str, n: int) -> tuple[float, list[float]] | None:
    """The last complete solution of ``n`` values in HiGHS's :data:`IMPROVING` file in
    ``directory`` as ``(objective, values)``; None when there is none (a block cut off
    by a kill, its last line without its newline, is skipped)."""
    try:
        with open(os.path.join(directory, IMPROVING)) as fh:
            text = fh.read()
    except OSError:
        return None
    found = None
    for block in text.split("Objective ")[1:]:
        lines = block.split("\n")
        try:
            objective = float(lines[0])
            if lines[1].split() != ["#", "Columns", str(n)] or len(lines) <= 2 + n:
                continue
            values = [float(line.rsplit(None, 1)[1]) for line in lines[2:2 + n]]
        except (ValueError, IndexError):
            continue
        if len(values) == n and all(math.isfinite(v) for v in values) and \
                math.isfinite(objective):
            found = (objective, values)
    return found


SELF_KILL = 5.0
"""Seconds past its deadline after which a worker ends itself (its parent kills it
sooner; this only bounds a worker whose parent died)."""


def _write_text(path: str, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed into place)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def serve() -> None:
    """The fork server: with NumPy and OR-Tools imported once, read one request per line
    on stdin (``DIR`` or ``DIR DEADLINE``), fork a worker (:func:`child`) for it, and
    answer its process id on stdout. Ends at the end of stdin (its parent ended, even
    by SIGKILL) or when its parent is gone (polled every :data:`PARENT_POLL` seconds),
    killing the workers it started and removing their folders (a parent killed by
    SIGKILL leaves both behind). Workers are reaped by the kernel (``SIGCHLD``
    ignored)."""
    import signal
    import threading

    import numpy  # noqa: F401  (imported once here, inherited by every worker)
    from ortools.linear_solver.python import model_builder_helper  # noqa: F401
    from ortools.sat.python import cp_model_helper  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C is the parent's
    me, parent = os.getpid(), os.getppid()
    started: dict[int, str] = {}
    lock = threading.Lock()

    def end() -> None:
        with lock:
            for pid, directory in started.items():
                if _running(pid):
                    _kill_worker(pid)
                _remove(directory)
            os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        end()

    threading.Thread(target=watch, daemon=True).start()
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        directory = words[0]
        deadline = float(words[1]) if len(words) > 1 else None
        with lock:
            pid = os.fork()
            if pid == 0:  # the worker
                code = 0
                try:
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    child(directory, deadline, me)
                except BaseException:  # noqa: BLE001 - written to error.txt by child
                    code = 1
                finally:
                    os._exit(code)
            started[pid] = directory
            for old in [p for p in started if p != pid and not _running(p)]:
                del started[old]
        out.write(f"{pid}\n")
        out.flush()
    end()


PARENT_POLL = 0.2
"""Seconds between two looks of the fork server at its parent."""


def _running(pid: int) -> bool:
    """Whether ``pid`` is still a child of this process (a worker that ended is reaped
    at once, SIGCHLD being ignored, and its pid may be anyone's later)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[1]) == os.getpid()
    except FileNotFoundError:
        return False
    except (OSError, ValueError, IndexError):  # pragma: no cover - no /proc
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True


def _kill_worker(pid: int) -> None:
    """SIGKILL the worker ``pid`` with its process group (it leads one once started)."""
    import signal

    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            continue


def _remove(directory: str) -> None:
    """Remove a worker's folder (its parent's, gone with it)."""
    import shutil

    shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        sys.exit(main(sys.argv[1]))
