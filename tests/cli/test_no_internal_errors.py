"""Inputs and set-ups that are the user's to fix end in one line naming the cause (exit 2),
never in ``internal error ... please report it``: a missing optional package names the
extra to install, a user's policy that breaks the machine's rules is named with the job,
gym-eval refuses its bad numbers by name, the Tsafrir model takes any workload."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main
from tests.sweep.helpers import tiny_spec, write_json

ROOT = Path(__file__).resolve().parents[2]
SHORT = ("; MaxProcs: 8\n" + "".join(f"{i} {i * 10} -1 {30 + i} 2 -1 -1 2 {40 + i} -1 1 1 1 "
                                     "-1 -1 -1 -1 -1\n" for i in range(1, 50)))
BLOCK = ("import sys; sys.modules[sys.argv[1]] = None; from sim.cli import main; "
         "raise SystemExit(main(sys.argv[2:]))")


def _without(module: str, *argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """The command line run with ``module`` impossible to import."""
    return subprocess.run([sys.executable, "-c", BLOCK, module, *argv], capture_output=True,
                          text=True, cwd=cwd, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def _one_line_error(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("schedsearch: error: "), r.stderr
    assert "internal error" not in r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


def test_report_plot_without_matplotlib_names_the_extra(tmp_path):
    spec = write_json(tmp_path / "s.json", tiny_spec(n_jobs=20, seeds=(0,)))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "st.sqlite"), "--quiet"]) == 0
    r = _without("matplotlib", "report", str(tmp_path / "st.sqlite"), "--plot", "procs",
                 "--out", str(tmp_path / "rep"))
    _one_line_error(r, "pip install 'schedsearch[plots]'")


@pytest.mark.parametrize(("module", "argv", "extra"), [
    ("numba", ["simulate", "{trace}", "--policy", "easy", "--engine", "compiled", "--quiet"],
     "fast"),
    ("gymnasium", ["gym-eval", "--windows", "1"], "gym"),
])
def test_other_missing_extras_are_named(tmp_path, module, argv, extra):
    trace = tmp_path / "short.swf"
    trace.write_text(SHORT)
    r = _without(module, *[a.format(trace=trace) for a in argv])
    _one_line_error(r, f"pip install 'schedsearch[{extra}]'")


def test_a_policy_that_overcommits_is_named_with_the_job(tmp_path, capsys, monkeypatch):
    (tmp_path / "overpol.py").write_text(
        "from sim.batch.policy import BasePolicy\n"
        "class Over(BasePolicy):\n"
        "    name = 'over'\n"
        "    def reset(self, machine): self.q = []\n"
        "    def on_arrival(self, job, now): self.q.append(job)\n"
        "    def on_end(self, job, now): pass\n"
        "    def schedule(self, now):\n"
        "        out, self.q = self.q, []\n"
        "        return out\n"
        "def make(): return Over()\n")
    trace = tmp_path / "short.swf"
    trace.write_text(SHORT)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["simulate", str(trace), "--policy", "overpol:make", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and len(err.strip().splitlines()) == 1
    assert "bug in that policy" in err and "over: job 15 started at 150" in err


@pytest.mark.parametrize(("argv", "name"), [
    (["--time-limit", "0"], "--time-limit"), (["--time-limit", "-1"], "--time-limit"),
    (["--time-limit", "nan"], "--time-limit"), (["--windows", "-1"], "--windows"),
    (["--windows", "0"], "--windows"), (["--windows", "10000000000"], "--windows"),
    (["--seed", "-1"], "--seed"), (["--length", "0"], "--length"),
    (["--procs", "0"], "--procs"),
])
def test_gym_eval_refuses_bad_numbers_by_name(capsys, argv, name):
    pytest.importorskip("gymnasium")
    assert main(["gym-eval", *argv]) == 2
    err = capsys.readouterr().err
    assert f"argument {name}:" in err and "internal error" not in err


def test_gym_eval_optimum_stopped_at_once_is_unproved_and_no_gap_is_negative(capsys):
    """A solver stopped before any proof gives its fallback schedule (FEASIBLE); the gaps
    are then to the best schedule of the window, never below it."""
    pytest.importorskip("gymnasium")
    assert main(["gym-eval", "--windows", "1", "--time-limit", "1e-9"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("policy "))
    rows = {ln.split()[0]: ln.split() for ln in lines[head + 1:] if ln.strip()
            and not ln.startswith("wall")}
    assert rows["optimum"][-2] == "0"  # proved in 0 windows
    gaps = [float(r[4]) for r in rows.values()]
    assert min(gaps) == 0.0 and all(g >= 0 for g in gaps)


@pytest.mark.parametrize("command", ["tsafrir", "lublin"])
def test_tsafrir_estimates_for_short_jobs(tmp_path, capsys, command):
    """Every job under an hour: the model's maximal estimate is raised to the smallest
    one whose 20 most popular estimates it can fill."""
    from instances.swf import read_swf
    from instances.tsafrir import _head_times, smallest_max_estimate

    m = smallest_max_estimate()
    assert len(_head_times(m)) == 20 and len(_head_times(m - 1)) < 20 and m == 5701
    trace = tmp_path / "short.swf"
    trace.write_text(SHORT)
    out = tmp_path / "est.swf"
    argv = (["generate", "tsafrir", str(trace), "--out", str(out)] if command == "tsafrir"
            else ["generate", "lublin", "--jobs", "30", "--procs", "8", "--tsafrir", "1",
                  "--out", str(out)])
    assert main(argv) == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out)["out"] == str(out)
    w = read_swf(out)
    assert all(j.runtime <= j.requested <= max(m, max(x.runtime for x in w.jobs))
               for j in w.jobs)


def test_tsafrir_explicit_maximum_too_small_is_refused():
    from instances.job import Job, Workload
    from instances.tsafrir import add_estimates

    w = Workload((Job(1, 0, 10, 10, (1,)),), (4,))
    with pytest.raises(ValueError, match=r"max_estimate 4000 s: .* give at least 5701 s"):
        add_estimates(w, 0, max_estimate=4000)


def test_a_policy_the_compiled_engine_does_not_run_is_named_without_numba_too(tmp_path):
    """The compiled engine's refusal of a policy it does not implement is decided without
    numba: installing numba would not make the run possible, so the error says why."""
    trace = tmp_path / "short.swf"
    trace.write_text(SHORT)
    r = _without("numba", "simulate", str(trace), "--policy", "easy++", "--engine",
                 "compiled", "--quiet")
    _one_line_error(r, "the compiled engine does not support", "easy++")
    assert "numba" not in r.stderr


def test_the_engine_bench_without_numba_is_a_one_line_refusal(tmp_path):
    """The bench module imports without numba (every experiment module does) and its
    command refuses in one line naming the extra, before it writes anything."""
    code = ("import sys; sys.modules['numba'] = None; "
            "from sim.experiments.engine.engine_bench import main; raise SystemExit(main([]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300,
                       env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "pip install 'schedsearch[fast]'" in r.stderr
    assert list(tmp_path.iterdir()) == []
