"""A user's policy in ``simulate`` and ``compare`` runs in a worker process
(:mod:`sim.sandbox`): one that loops, raises, exits or crashes is one line naming it
(exit 2), ``--policy-time-limit`` kills it, Ctrl-C and SIGTERM kill its worker, and a
well-behaved one gives the output of an in-process run. Every command runs in a
subprocess with a timeout, so a hang fails the test instead of the suite."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

POLICY = textwrap.dedent('''
    """A user's policy: FCFS that misbehaves on the first arrival as ``how`` says, and
    writes its process id to ``pid.txt`` first."""
    import ctypes
    import os

    from sim.batch.policy import BasePolicy


    class Mine(BasePolicy):
        name = "mine"

        def __init__(self, how="none"):
            self.how = how

        def reset(self, machine):
            super().reset(machine)
            self.free, self.queue = machine.capacity[0], []
            with open("pid.txt", "w") as f:
                f.write(str(os.getpid()))

        def on_arrival(self, job, now):
            if self.how == "loop":  # swallows whatever would stop it
                while True:
                    try:
                        pass
                    except BaseException:
                        pass
            elif self.how == "raise":
                raise RuntimeError("my policy broke\\non two lines")
            elif self.how == "exit":
                os._exit(3)
            elif self.how == "segfault":
                ctypes.string_at(0)
            self.queue.append(job)

        def on_end(self, job, now):
            self.free += job.procs

        def schedule(self, now):
            started = []
            while self.queue and self.queue[0].procs <= self.free:
                job = self.queue.pop(0)
                self.free -= job.procs
                started.append(job)
            return started
''')


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with the policy module and the first 300 jobs of lublin_256."""
    from instances.bundled import trace_path

    (tmp_path / "mine.py").write_text(POLICY)
    lines = gzip.decompress(Path(trace_path("lublin_256")).read_bytes()).decode().splitlines()
    head = [ln for ln in lines if ln.lstrip().startswith(";")]
    jobs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(";")]
    (tmp_path / "t.swf").write_text("\n".join(head + jobs[:300]) + "\n")
    return tmp_path


def start(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "sim.cli", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    p = start(*args, cwd=cwd)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError(f"schedsearch {' '.join(args)} still running after "
                             f"{timeout} s") from None
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def one_line_error(p: subprocess.CompletedProcess, *words: str) -> None:
    err = p.stderr.strip()
    assert p.returncode == 2, (p.returncode, err[-500:])
    assert "\n" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)


def gone(pid: int, within: float = 5.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < within:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(("how", "reason"), [
    ("raise", "raised RuntimeError: my policy broke on two lines"),
    ("exit", "its process exited with code 3"),
    ("segfault", "its process crashed (SIGSEGV)"),
])
def test_a_failing_user_policy_is_one_line_naming_it(work, how, reason):
    p = cli("simulate", "t.swf", "--policy", "mine:Mine", "--set", f"how={how}", "--quiet",
            cwd=work)
    one_line_error(p, "policy 'mine:Mine'", reason)


def test_a_looping_user_policy_is_killed_at_its_time_limit(work):
    t0 = time.monotonic()
    p = cli("compare", "t.swf", "--policies", "easy,mine:Mine", "--set", "how=loop",
            "--policy-time-limit", "2", "--quiet", cwd=work)
    one_line_error(p, "policy 'mine:Mine'", "time limit exceeded")
    assert time.monotonic() - t0 < 30
    assert gone(int((work / "pid.txt").read_text()))


def test_the_time_limit_is_refused_where_it_would_not_act(work):
    p = cli("compare", "t.swf", "--policies", "easy,fcfs", "--policy-time-limit", "2",
            cwd=work)
    one_line_error(p, "--policy-time-limit", "built in")
    assert p.stdout == ""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_kill_the_worker(work, sig):
    p = start("simulate", "t.swf", "--policy", "mine:Mine", "--set", "how=loop", "--quiet",
              cwd=work)
    pid_file = work / "pid.txt"
    try:
        t0 = time.monotonic()
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() - t0 < 30 and p.poll() is None, "the policy never started"
            time.sleep(0.1)
        worker = int(pid_file.read_text())
        assert worker != p.pid
        p.send_signal(sig)
        p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == (130 if sig == signal.SIGINT else 143)
    assert gone(worker)


def test_a_user_policy_gives_the_output_of_an_in_process_run(work, monkeypatch):
    from sim.batch.runner import load_workload, run
    from sim.registry import policy_spec

    p = start("simulate", "t.swf", "--policy", "mine:Mine", "--json", "--quiet",
              "--out", "cli.swf", cwd=work)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert int((work / "pid.txt").read_text()) != p.pid  # it ran in a worker process
    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    here = run(load_workload("t.swf"), policy_spec("mine:Mine"), out="here.swf")
    row = json.loads(out)
    for r in (row, here):
        r.pop("sim_seconds")
    assert row["policy"] == "mine" and row["validated"] is True
    assert {k: row[k] for k in here} == json.loads(json.dumps(here))
    assert (work / "cli.swf").read_bytes() == (work / "here.swf").read_bytes()


def _ended(pid: int) -> bool:
    """Whether process ``pid`` is gone or a zombie (a dead process that its parent, here
    perhaps a PID 1 that never reaps, has not waited for)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.timed
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_busy_worker_ends_when_its_parent_dies_unreaped(tmp_path):
    """A parent killed and not yet reaped by its own parent is a zombie, which still
    answers ``kill(pid, 0)``: its sandbox worker, busy in the user's endless loop (so
    it never reads the closed socket), ends anyway: it sees itself reparented."""
    (tmp_path / "spin.py").write_text(textwrap.dedent('''
        import os

        def spin(path):
            open(path, "w").write(str(os.getpid()))
            while True:
                pass
    '''))
    pid_file = tmp_path / "worker.pid"
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); from sim import sandbox; "
            f"sandbox.call('spin:spin', ({str(pid_file)!r},))")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    try:
        t0 = time.monotonic()
        while not (pid_file.exists() and pid_file.read_text()):
            assert time.monotonic() - t0 < 60 and p.poll() is None
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        os.kill(p.pid, signal.SIGKILL)  # not waited for yet: a zombie meanwhile
        t0 = time.monotonic()
        while not _ended(worker) and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        ended = _ended(worker)
        if not ended:
            os.kill(worker, signal.SIGKILL)
        assert ended
    finally:
        p.kill()
        p.wait()
