"""A user's policy or solver module is imported, and a policy's factory called, only in
the sandbox worker (:mod:`sim.sandbox`), never in the command's own process: a module that
sleeps for ever at import, raises, calls ``os._exit`` or allocates more memory than the
worker may have ends the command in one line naming the module (exit 2), within the
limit. Every command runs in a subprocess with a timeout, so a hang fails the test."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_foreign_policy import cli, one_line_error, start

#: each module first appends the id of the process importing it to ``imported.txt``
HEAD = "import os\nopen('imported.txt', 'a').write(f'{os.getpid()}\\n')\n"
MODULES = {
    "sleeper": HEAD + "import time\nwhile True:\n    time.sleep(1)\n",
    "raiser": HEAD + "raise RuntimeError('broken at import\\non two lines')\n",
    "exiter": HEAD + "os._exit(3)\n",
    "hog": HEAD + "hog = bytearray(1 << 50)\n",  # 1 PiB: beyond any worker's limit
    "fine": HEAD + (
        "from heuristics.backfill import EASY\n"
        "from heuristics.task_mapping import greedy\n"
        "def factory(**options):\n"
        "    open('factory.txt', 'a').write(f'{os.getpid()}\\n')\n"
        "    return EASY(**options)\n"
        "def solver(problem, *, time_limit=None, seed=0):\n"
        "    return greedy(problem, time_limit=time_limit, seed=seed)\n"),
}
REASONS = {
    "sleeper": "time limit exceeded",
    "raiser": "does not import (RuntimeError: broken at import)",
    "exiter": "its process exited with code 3",
    "hog": "does not import (MemoryError)",
}
PROBLEM = {"problem": "task_mapping", "n_nodes": 2, "mem_pages": 100,
           "jobs": [[40], [30, 20]], "base": [10, 10], "objective": "overload"}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with the modules, the first 100 jobs of lublin_256 and a problem file."""
    from instances.bundled import trace_path

    for name, text in MODULES.items():
        (tmp_path / f"{name}.py").write_text(text)
    lines = gzip.decompress(Path(trace_path("lublin_256")).read_bytes()).decode().splitlines()
    head = [ln for ln in lines if ln.lstrip().startswith(";")]
    jobs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(";")]
    (tmp_path / "t.swf").write_text("\n".join(head + jobs[:100]) + "\n")
    (tmp_path / "p.json").write_text(json.dumps(PROBLEM))
    return tmp_path


def pids(path: Path) -> list[int]:
    """The process ids a module wrote to ``path`` (none when it does not exist)."""
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def command(*args: str, cwd: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    """:func:`cli`, and the module was imported by another process than the command's
    (the worker), if at all."""
    p = start(*args, cwd=cwd)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise AssertionError(f"schedsearch {' '.join(args)} still running after "
                             f"{timeout} s") from None
    assert p.pid not in pids(cwd / "imported.txt"), "imported in the command's process"
    assert p.pid not in pids(cwd / "factory.txt"), "factory called in the command's process"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


@pytest.mark.parametrize("module", sorted(REASONS))
@pytest.mark.parametrize("command_name", ["simulate", "compare"])
def test_a_policy_module_that_misbehaves_at_import_is_one_line(work, module, command_name):
    which = (["--policy", f"{module}:factory"] if command_name == "simulate"
             else ["--policies", f"easy,{module}:factory"])
    t0 = time.monotonic()
    p = command(command_name, "t.swf", *which, "--policy-time-limit", "2", "--quiet",
                cwd=work)
    took = time.monotonic() - t0
    one_line_error(p, f"policy '{module}:factory'", f"'{module}'", REASONS[module])
    assert p.stdout == ""
    assert took < 2 + 8  # the limit, plus starting two interpreters on a loaded machine


@pytest.mark.parametrize("module", sorted(REASONS))
def test_a_solver_module_that_misbehaves_at_import_is_one_line(work, module):
    p = command("solve", "p.json", "--solver", f"{module}:solver", "--time-limit", "1",
                cwd=work)
    one_line_error(p, f"solver '{module}:solver'", f"'{module}'", REASONS[module])


def test_the_command_never_imports_the_policy_or_calls_its_factory(work):
    """The command's process id is the parent of the worker's; the module and the factory
    report the worker's id, so the command's own never shows in their files."""
    p = command("simulate", "t.swf", "--policy", "fine:factory", "--set", "select=bl",
                "--json", "--quiet", cwd=work, timeout=60)
    assert p.returncode == 0, p.stderr
    importers, builders = pids(work / "imported.txt"), pids(work / "factory.txt")
    assert set(importers) == set(builders) and len(set(importers)) == 1  # the worker
    row = json.loads(p.stdout)
    assert row["policy_config"]["select"] == "bl" and row["validated"] is True
    p = cli("simulate", "t.swf", "--policy", "fine:factory", "--set", "select=zz",
            "--quiet", cwd=work)
    one_line_error(p, "policy 'fine:factory'", "select must be one of")


def test_the_command_process_holds_no_foreign_module(work, monkeypatch):
    """In this process (the Python API goes the same way as the command line): resolving
    a foreign policy or probing a foreign solver leaves its module unimported here."""
    from sim import registry
    from sim.sweep.bench import probe_solver

    monkeypatch.chdir(work)
    monkeypatch.syspath_prepend(str(work))
    spec = registry.policy_spec("fine:factory", select="bb")
    assert registry.is_foreign_spec(spec) and dict(spec.options) == {"select": "bb"}
    assert spec.accepted is None and spec.takes_priorities is False  # it takes **options
    assert probe_solver(None, "fine:solver") == {"kind": None, "backends": []}
    assert "fine" not in sys.modules
    assert os.getpid() not in pids(work / "imported.txt")
    with pytest.raises(ValueError, match="policy 'fine:factory': .*unexpected keyword"):
        registry.policy_spec("fine:factory", nope=1)  # built in the worker, refused there


def test_a_module_of_the_same_name_in_another_folder_is_that_folders(tmp_path, monkeypatch):
    """The sandbox worker keeps what it imported: a caller that moved to another folder
    (or import path) gets a worker of its own, not the first folder's module."""
    from sim.registry import policy_spec

    for name, option in (("a", "first"), ("b", "second")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "samename.py").write_text(
            "from sim.registry import make_policy\n\n\n"
            f"def P({option}=1):\n    return make_policy('fcfs')\n")
    for name, option in (("a", "first"), ("b", "second")):
        monkeypatch.chdir(tmp_path / name)
        monkeypatch.syspath_prepend(str(tmp_path / name))
        assert dict(policy_spec("samename:P").defaults) == {option: 1}
