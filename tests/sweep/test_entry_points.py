"""Plugins of an installed package: a distribution that declares ``schedsearch.solvers``
and ``schedsearch.policies`` entry points (a ``NAME-VERSION.dist-info`` folder on the
path, as pip leaves it) is found by name in ``solve``, ``bench`` and ``simulate``; a
plugin that does not import is a one-line error naming it, not a traceback."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"

PLUGIN = textwrap.dedent('''
    """A user's package: one solver, one policy."""
    from heuristics.kresource import solve_fcfs_ff
    from sim.registry import policy_factory


    def greedy(problem, *, time_limit=None, seed=0):
        return solve_fcfs_ff(problem, time_limit=time_limit, seed=seed)


    def easy_again(**options):
        return policy_factory("easy")(**options)
''')

ENTRY_POINTS = textwrap.dedent('''
    [schedsearch.solvers]
    kresource_epochs/mygreedy = myplug:greedy
    kresource_epochs/broken = brokenplug:solve

    [schedsearch.policies]
    my-easy = myplug:easy_again
    broken-policy = brokenplug:Policy
''')

# four jobs on 8 processors (SWF: id submit wait run procs cpu mem req_procs req_time ...)
TRACE = "; MaxProcs: 8\n; UnixStartTime: 0\n" + "".join(
    f"{i} {10 * i} -1 100 {w} -1 -1 {w} 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
    for i, w in enumerate((4, 6, 2, 8), 1))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as pip would leave an installed distribution ``myplug`` in site-packages."""
    d = tmp_path_factory.mktemp("site")
    (d / "myplug.py").write_text(PLUGIN)
    (d / "brokenplug.py").write_text('raise ZeroDivisionError("the plugin is broken")\n')
    info = d / "myplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return d


def cli(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def refused(p: subprocess.CompletedProcess, *words: str) -> None:
    err = p.stderr.strip()
    assert p.returncode == 2, (p.returncode, p.stdout[-300:], err)
    assert "\n" not in err and "Traceback" not in err and len(err) < 500, err
    for w in words:
        assert w in err, (w, err)


def test_an_installed_solver_is_found_by_name_in_solve_and_bench(site, tmp_path):
    one = cli(site, tmp_path, "solve", str(FIG1), "--solver", "mygreedy")
    assert one.returncode == 0, one.stderr
    assert "status: FEASIBLE" in one.stdout and "objective: 3" in one.stdout, one.stdout
    both = cli(site, tmp_path, "solve", str(FIG1), "--solvers", "cpsat,mygreedy")
    assert both.returncode == 0, both.stderr
    assert "mygreedy" in both.stdout and "50.00%" in both.stdout, both.stdout  # 3 vs 2
    b = cli(site, tmp_path, "bench", str(FIG1), "--solvers", "mygreedy,cpsat", "--out", "out",
            "--quiet")
    assert b.returncode == 0, b.stderr
    with open(tmp_path / "out" / "runs.csv", newline="") as fh:
        rows = {r["solver"]: r for r in csv.DictReader(fh)}
    assert rows["mygreedy"]["status"] == "FEASIBLE"
    assert float(rows["mygreedy"]["objective"]) == 3
    assert float(rows["mygreedy"]["gap_to_best"]) == pytest.approx(0.5)


def test_an_installed_policy_is_found_by_name_in_simulate(site, tmp_path):
    (tmp_path / "t.swf").write_text(TRACE)
    mine = cli(site, tmp_path, "simulate", "t.swf", "--policy", "my-easy", "--json", "--quiet")
    easy = cli(site, tmp_path, "simulate", "t.swf", "--policy", "easy", "--json", "--quiet")
    assert mine.returncode == 0 and easy.returncode == 0, mine.stderr + easy.stderr
    a, b = json.loads(mine.stdout), json.loads(easy.stdout)
    assert a["jobs"] == 4 and a["policy_config"]["policy"] == "my-easy"
    metrics = ("avg_wait", "max_wait", "avg_bounded_slowdown", "utilization", "makespan")
    a, b = ({m: r[m] for m in metrics} for r in (a, b))
    assert a == b  # the plugin returns EASY itself


def test_a_broken_plugin_is_a_one_line_error_naming_it(site, tmp_path):
    why = "module 'brokenplug' does not import (ZeroDivisionError: the plugin is broken)"
    refused(cli(site, tmp_path, "solve", str(FIG1), "--solver", "broken"),
            "solver 'broken'", "kresource_epochs/broken", why)
    refused(cli(site, tmp_path, "solve", str(FIG1), "--solvers", "fcfs,broken"),
            "solver 'broken'", why)
    (tmp_path / "t.swf").write_text(TRACE)
    refused(cli(site, tmp_path, "simulate", "t.swf", "--policy", "broken-policy"),
            "policy 'broken-policy'", why)
    # bench refuses it before anything runs, and writes nothing
    refused(cli(site, tmp_path, "bench", str(FIG1), "--solvers", "fcfs,broken", "--out",
                "out"), "solver 'broken'", why)
    assert not (tmp_path / "out").exists()
