"""``engine="auto"``: the compiled engine only where it runs the policy, the jobs pay for its
per-process load (or the kernels are loaded already) and its kernels are already compiled on
this machine, else the Python engine; the same schedule either way, and the result says
which engine ran and why."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.compiled

from heuristics.backfill import EASY  # noqa: E402
from instances.synthetic import random_workload  # noqa: E402
from sim.batch import engine as engine_mod  # noqa: E402
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


def test_auto_runs_python_below_the_crossover_in_a_fresh_process(warm, monkeypatch):
    """Where this process has not loaded the kernels, the jobs must pay for the load."""
    w = random_workload(300, (64,), seed=3, load=0.9)
    monkeypatch.setattr(engine_mod, "_loaded", lambda kernels: False)
    choice = engine_mod.engine_choice(w, make_policy("easy"))
    assert choice.engine == "python"
    need = engine_mod.crossover(make_policy("easy"))
    assert need == math.ceil(engine_mod.MARGIN * engine_mod.CROSSOVER["easy"]) > 300
    assert f"300 jobs, below the {need} " in choice.reason
    s = simulate(w, make_policy("easy"), engine="auto")
    assert (s.engine, s.engine_reason) == ("python", choice.reason)
    monkeypatch.setitem(engine_mod.CROSSOVER, "easy", 200)
    assert engine_mod.engine_choice(w, make_policy("easy")) == \
        engine_mod.EngineChoice("compiled", "auto: 300 jobs >= 300")
    assert engine_mod.crossover(make_policy("slack", order="DP")) == \
        math.ceil(engine_mod.MARGIN * engine_mod.CROSSOVER["slack"])


def test_the_crossovers_are_measured_figures():
    assert set(engine_mod.CROSSOVER) == {"fcfs", "easy", "conservative", "unconstrained", "slack"}
    assert all(n > 100 for n in engine_mod.CROSSOVER.values())


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
    # 10,000 jobs of EASY do not pay for loading numba in a fresh process
    assert (out["auto"]["engine"], out["python"]["engine"]) == ("python", "python")
    assert "10000 jobs, below the" in out["auto"]["engine_reason"]
    assert "engine_reason" not in out["python"]
    assert out["auto"]["avg_wait"] == out["python"]["avg_wait"]
    p = subprocess.run([sys.executable, "-m", "sim.cli", "simulate", "lublin_256", "--policy",
                        "easy", "--quiet"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=300)
    first = p.stdout.splitlines()[0]
    assert p.returncode == 0 and "python engine (auto: 10000 jobs, below" in first, p.stdout
    p = subprocess.run([sys.executable, "-m", "sim.cli", "simulate", "lublin_256", "--policy",
                        "easy", "--quiet", "--engine", "compiled"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "compiled engine" in p.stdout.splitlines()[0], p.stdout


def test_compile_command_caches_the_kernels_and_says_so(warm, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "sim.cli", "compile"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines() == ["compiled engine's kernels cached: True",
                                             "colgen's pricing kernel cached: True"]
    assert p.stderr.count("compiling ") == 4


def test_a_refused_compiled_run_never_announces_a_compile(monkeypatch, capsys):
    """A policy the compiled engine does not run is refused before anything is said of
    compiling (the notice is for a run that will compile, not for one refused)."""
    w = random_workload(20, (64,), seed=3, load=0.9)
    monkeypatch.setattr(cache, "kernels_cached", lambda kernels: False)  # a cold machine
    with pytest.raises(ValueError, match="does not support"):
        simulate(w, make_policy("slack", order="exhaustive"), engine="compiled")
    assert "compiling" not in capsys.readouterr().err
    simulate(w, make_policy("easy"), engine="compiled")  # a run that compiles says so
    assert "compiling the compiled engine's kernels" in capsys.readouterr().err
