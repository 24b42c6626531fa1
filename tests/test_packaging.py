"""A regular (non-editable) install carries every module the README's commands use.

Builds the wheel from a copy of the source tree, installs it into a fresh virtual
environment (dependencies are borrowed from the test environment through a ``.pth`` file,
so nothing is downloaded but the build backend), and runs the CLI and one experiment module
from the installed copy, away from the source tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("instances", "sim", "heuristics", "models")


def _run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, src / pkg, ignore=ignore)
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp),
                  str(src)], cwd=tmp)
    if built.returncode != 0:
        pytest.skip(f"cannot build the wheel here (no build backend?): {built.stderr[-300:]}")
    (wheel,) = tmp.glob("schedsearch-*.whl")
    env = tmp / "venv"
    venv.create(env)  # without pip: this pip installs into it (``--python``)
    py = env / "bin" / "python"
    done = _run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                 "--no-deps", "--no-index", str(wheel)], cwd=tmp)
    assert done.returncode == 0, done.stderr
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                cwd=tmp).stdout.strip()
    Path(site, "borrowed_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return env


def test_installed_wheel_has_every_package_and_the_bundled_data(installed: Path, tmp_path):
    py = str(installed / "bin" / "python")
    code = ("import importlib, pkgutil, sim, instances; "
            "mods = [m.name for m in pkgutil.walk_packages(sim.__path__, 'sim.')]; "
            "print(sim.__file__); print(len(mods)); "
            "from instances.bundled import list_traces; print(len(list_traces()))")
    out = _run([py, "-c", code], cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    where, n_modules, n_traces = out.stdout.split()
    assert str(installed) in where, "imported the source tree, not the installed wheel"
    assert int(n_modules) >= 10 and int(n_traces) >= 6
    for pkg in ("sim.experiments", "sim.batch", "sim.problems", "sim.memory",
                *(f"sim.experiments.{s}" for s in ("talby", "leinberger", "suh", "gine",
                                                    "karl", "engine"))):
        out = _run([py, "-c", f"import {pkg}"], cwd=tmp_path)
        assert out.returncode == 0, f"{pkg} missing from the wheel: {out.stderr[-300:]}"


def test_installed_wheel_runs_an_experiment_module(installed: Path, tmp_path):
    py = str(installed / "bin" / "python")
    site = _run([py, "-c", "import sim.experiments.suh as e; print(e.__path__[0])"],
                cwd=tmp_path).stdout.strip()
    committed = Path(site, "results", "memory_gap.md").read_text()
    out = _run([py, "-m", "sim.experiments.suh.gap", "--per-size", "1"], cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-500:]
    assert "| heuristic | J | mean gap |" in out.stdout and "ILP mean" in out.stdout
    # a smaller run never overwrites the committed results: it writes a partial table here
    assert Path(site, "results", "memory_gap.md").read_text() == committed
    assert "PARTIAL" in (tmp_path / "results" / "memory_gap" / "memory_gap.md").read_text()
    cli = installed / "bin" / "schedsearch"
    out = _run([str(cli), "traces"], cwd=tmp_path)
    assert out.returncode == 0 and "KTH-SP2" in out.stdout, out.stderr[-500:]
