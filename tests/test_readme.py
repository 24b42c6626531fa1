"""The README cannot lie: every quick shell and Python block of ``README.md`` is run.

Conventions
-----------
- Fenced blocks tagged ``sh``, ``bash`` or ``console`` are shell blocks, run with
  ``bash -e -o pipefail``; blocks tagged ``python`` run in a subprocess with
  ``sys.executable``. Other tags (``text``, ``toml``, no tag) are not run.
- A block is *long* when the line right before its opening fence is the HTML comment
  ``<!-- long -->`` (invisible in the rendered README). Long blocks are not run here; keep
  every other block to a few seconds (small traces, ``--time-limit 5``, bundled problems).
- The set-up blocks (any shell block that creates the virtual environment with
  ``python3 -m venv``) are recognised and not run; instead the test checks that the two
  set-up commands stand in the README verbatim and that ``.ci/run`` runs the test command.
- Every block runs in its own temporary working directory, in which ``instances`` and
  ``sim`` are symbolic links to the repository's (the README's examples use paths relative
  to the repository root), so nothing is written into the repository. The interpreter's
  bin directory comes first on ``PATH`` (so ``schedsearch`` resolves), ``.venv/bin/`` in a
  command is mapped to that directory, and the repository root is on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent

SHELL_TAGS = ("sh", "bash", "console")
PYTHON_TAGS = ("python",)
LONG_MARK = "<!-- long -->"
SETUP_MARK = "python3 -m venv"
MAIN_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,plots]' && "
                ".venv/bin/schedsearch compare KTH-SP2 --procs 128")
TEST_COMMAND = ("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,plots]' && "
                ".venv/bin/python -m pytest -q -n 3 -m 'not slow'")
TIMEOUT_S = 120  # per block: a quick block takes a few seconds; this only stops a hang


@dataclass(frozen=True)
class Block:
    line: int   # 1-based line of the opening fence
    tag: str
    code: str
    long: bool


def blocks(text: str) -> list[Block]:
    """Every fenced block of ``text`` with its tag and whether it is marked long."""
    out: list[Block] = []
    lines = text.splitlines()
    i = 0
    fence = re.compile(r"^```(\S*)\s*$")
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        if j == len(lines):
            raise AssertionError(f"README.md:{start + 1}: unclosed code fence")
        prev = lines[start - 1].strip() if start > 0 else ""
        out.append(Block(start + 1, m.group(1).lower(), "\n".join(lines[start + 1:j]) + "\n",
                         prev == LONG_MARK))
        i = j + 1
    return out


ALL = blocks(README.read_text(encoding="utf-8"))
RUNNABLE = [b for b in ALL if b.tag in SHELL_TAGS + PYTHON_TAGS]
SETUP = [b for b in RUNNABLE if b.tag in SHELL_TAGS and SETUP_MARK in b.code]
QUICK = [b for b in RUNNABLE if not b.long and b not in SETUP]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env.setdefault("MPLBACKEND", "Agg")
    env.pop("PYTHONSTARTUP", None)
    return env


def _workdir(tmp_path: Path) -> Path:
    for name in ("instances", "sim"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    return tmp_path


def _shell(code: str) -> str:
    """The block as a script: ``.venv/bin/X`` becomes the interpreter's bin directory."""
    return re.sub(r"(?<![\w/.])\.venv/bin/", f"{BIN}/", code)


def test_readme_has_quick_blocks_of_both_kinds():
    tags = {b.tag for b in QUICK}
    assert tags & set(SHELL_TAGS) and tags & set(PYTHON_TAGS), tags
    assert len(QUICK) >= 8


def test_setup_commands_verbatim_and_ci_runs_the_test_command():
    text = README.read_text(encoding="utf-8")
    codes = [b.code.strip() for b in SETUP]
    assert MAIN_COMMAND in codes, "the main-job set-up command is missing from README.md"
    assert TEST_COMMAND in codes, "the test set-up command is missing from README.md"
    assert text.index(MAIN_COMMAND) < text.index("## What it is")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert TEST_COMMAND in ci.splitlines(), ".ci/run does not run the README's test command"


def test_ci_runs_the_sets_the_default_run_leaves_out():
    """The default run leaves out ``slow``, ``compiled`` and ``study``; the README's
    command (CI) overrides the selection with ``-m 'not slow'``, so it runs the other two."""
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.findall(r"^addopts = (.*)$", pyproject, re.M) == [
        '"-m \'not slow and not compiled and not study\'"']
    assert TEST_COMMAND.endswith("-m 'not slow'")


def test_readme_is_a_guide_not_a_notebook():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 600
    assert not re.search(r"(?i)\b(session|issue) [0-9]", text)


@pytest.mark.parametrize("block", QUICK, ids=[f"L{b.line}-{b.tag}" for b in QUICK])
def test_readme_block_runs(block: Block, tmp_path: Path):
    cwd = _workdir(tmp_path)
    if block.tag in SHELL_TAGS:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", _shell(block.code)]
    else:
        script = cwd / "block.py"
        script.write_text(block.code, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    assert proc.returncode == 0, (
        f"README.md:{block.line} ({block.tag}) exited {proc.returncode}\n--- stdout\n"
        f"{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}")
