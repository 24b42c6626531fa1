"""``engine="auto"``: the compiled engine only where it runs the policy and its kernels are
already compiled on this machine, else the Python engine; the same schedule either way, and
the result says which engine ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

from heuristics.backfill import EASY  # noqa: E402
from instances.synthetic import random_workload  # noqa: E402
from sim.batch.fast import cache  # noqa: E402
from sim.batch.machine import choose_engine, simulate  # noqa: E402
from sim.batch.runner import run  # noqa: E402
from sim.registry import make_policy, policy_spec  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def warm() -> None:
    """Compile (or load) the kernels once, as ``python -m sim.batch.fast.cache`` does."""
    assert cache.main() == 0


def test_auto_runs_the_compiled_engine_once_its_kernels_are_cached(warm):
    w = random_workload(300, (64,), seed=3, load=0.9)
    for name, opts in (("easy", {}), ("conservative", {}), ("slack", {"order": "AST"})):
        assert choose_engine(w, make_policy(name, **opts)) == "compiled"
        auto = simulate(w, make_policy(name, **opts), engine="auto")
        py = simulate(w, make_policy(name, **opts), engine="python")
        assert (auto.engine, py.engine) == ("compiled", "python")
        assert auto.start.tobytes() == py.start.tobytes()


def test_auto_runs_python_where_the_compiled_engine_does_not_run_the_policy(warm):
    w = random_workload(50, (16,), seed=1, load=0.9)

    class MyEASY(EASY):  # a user's subclass: the compiled engine runs EASY itself only
        pass

    assert choose_engine(w, MyEASY()) == "python"
    assert choose_engine(w, make_policy("slack", order="exhaustive")) == "python"
    assert simulate(w, MyEASY(), engine="auto").engine == "python"
    row = run(w, policy_spec("opt-easy"), engine="auto")
    assert row["engine"] == "python"


def test_auto_never_compiles_on_its_own(tmp_path):
    """With an empty numba cache, auto runs Python and leaves the cache empty."""
    code = ("from instances.synthetic import random_workload\n"
            "from sim.batch.machine import simulate\n"
            "from sim.registry import make_policy\n"
            "w = random_workload(40, (16,), seed=2, load=0.9)\n"
            "print(simulate(w, make_policy('easy'), engine='auto').engine)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(tmp_path)}
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "python"
    assert not any(tmp_path.rglob("*.nbi"))


def test_a_broken_cache_check_says_not_cached():
    assert cache.is_cached(object()) is False


def test_the_cli_says_which_engine_ran(warm, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = {}
    for engine in ("auto", "python"):
        p = subprocess.run([sys.executable, "-m", "sim.cli", "simulate", "lublin_256",
                            "--policy", "easy", "--engine", engine, "--json", "--quiet"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        out[engine] = json.loads(p.stdout)
    assert (out["auto"]["engine"], out["python"]["engine"]) == ("compiled", "python")
    assert out["auto"]["avg_wait"] == out["python"]["avg_wait"]
    p = subprocess.run([sys.executable, "-m", "sim.cli", "simulate", "lublin_256", "--policy",
                        "easy", "--quiet"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0 and "compiled engine" in p.stdout.splitlines()[0], p.stdout
