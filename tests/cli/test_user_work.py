"""The user's own work through the command line: schemas, solvers side by side, bench over
problem files, generated instance sets, users' own policies and solvers, and the bad input
each of them must refuse (exit 2, one line naming the file or the name)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"

SJF = textwrap.dedent('''
    """EASY backfilling that tries the backfill candidates shortest estimate first."""
    from sim.batch.policy import BasePolicy


    class SJFBackfill(BasePolicy):
        name = "sjf-backfill"

        def reset(self, machine):
            super().reset(machine)
            self.free, self.queue, self.running = machine.capacity[0], [], {}

        def on_arrival(self, job, now):
            self.queue.append(job)

        def on_end(self, job, now):
            self.free += job.procs
            del self.running[job.id]

        def schedule(self, now):
            started = []
            while self.queue and self.queue[0].procs <= self.free:
                started.append(self._start(self.queue.pop(0), now))
            if self.queue:
                head, free = self.queue[0], self.free
                for shadow, procs in sorted(self.running.values()):
                    free += procs
                    if free >= head.procs:
                        break
                extra = free - head.procs
                for job in sorted(self.queue[1:], key=lambda j: (j.requested, j.submit)):
                    ends_before = now + job.requested <= shadow
                    if job.procs <= self.free and (ends_before or job.procs <= extra):
                        extra -= 0 if ends_before else job.procs
                        self.queue.remove(job)
                        started.append(self._start(job, now))
            return started

        def _start(self, job, now):
            self.free -= job.procs
            self.running[job.id] = (now + job.requested, job.procs)
            return job


    class NotAPolicy:
        pass
''')


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def refused(p: subprocess.CompletedProcess, *words: str) -> None:
    err = p.stderr.strip()
    assert p.returncode == 2, (p.returncode, p.stdout[-300:], err)
    assert "\n" not in err and "Traceback" not in err and len(err) < 500, err
    for w in words:
        assert w in err, (w, err)


def test_schema_and_its_example_solve_with_every_solver(tmp_path):
    from sim import registry

    p = cli("schema", "kresource_selection", cwd=tmp_path)
    schema = json.loads(p.stdout)
    assert {"capacity", "free", "demands"} <= set(schema["properties"])
    ex = cli("schema", "kresource_selection", "--example", cwd=tmp_path)
    (tmp_path / "ex.json").write_text(ex.stdout)
    names = ",".join(sorted(registry.SOLVERS["kresource_selection"]))
    out = cli("solve", "ex.json", "--solvers", names, "--time-limit", "10", "--json",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    runs = json.loads(out.stdout)["runs"]
    assert {r["status"] for r in runs} <= {"OPTIMAL", "FEASIBLE"} and len(runs) == 6
    refused(cli("schema", "kresource_epoch", cwd=tmp_path), "kresource_epoch",
            "kresource_epochs")


def test_solve_side_by_side_prints_the_gap_to_the_optimum(tmp_path):
    p = cli("solve", str(FIG1), "--solvers", "cpsat,fcfs,fcfs-ff", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines()[1:4]}
    assert "gap to optimum" in p.stdout.splitlines()[0]
    assert lines["fcfs"][-2] == "100.00%" and lines["fcfs-ff"][-2] == "50.00%"
    assert "e-" not in p.stdout  # numbers are rounded for display
    one = cli("solve", str(FIG1), cwd=tmp_path)  # the family's default exact solver
    assert "status: OPTIMAL" in one.stdout and '"0", "2", "4"' in one.stdout
    refused(cli("solve", str(FIG1), "--solvers", "cpsat,nosuch", cwd=tmp_path), "nosuch",
            "fcfs-ff")


def test_generate_then_bench_two_commands(tmp_path):
    g = cli("generate", "kresource_epochs", "--n", "6", "--seed", "3", "--size", "n=7",
            "--out", "set", cwd=tmp_path)
    assert g.returncode == 0, g.stderr
    again = cli("generate", "kresource_epochs", "--n", "6", "--seed", "3", "--size", "n=7",
                "--out", "set2", cwd=tmp_path)
    assert again.returncode == 0
    for a, b in zip(sorted((tmp_path / "set").iterdir()), sorted((tmp_path / "set2").iterdir()),
                    strict=True):
        assert a.read_bytes() == b.read_bytes()  # same seed, same bytes
    b = cli("bench", "set", "--solvers", "cpsat,fcfs,fcfs-bb", "--time-limit", "10",
            "--out", "out", "--quiet", cwd=tmp_path)
    assert b.returncode == 0, b.stderr
    rows = (tmp_path / "out" / "runs.csv").read_text().splitlines()
    assert rows[0] == ("file,family,solver,kind,status,objective,bound,best_known,"
                       "best_proved,gap_to_best,seconds") and len(rows) == 19
    assert "| fcfs |" in (tmp_path / "out" / "report.md").read_text()
    refused(cli("generate", "kresource_epochs", "--n", "2", "--size", "n=-4", "--out", "x",
                cwd=tmp_path), "'n'")


def test_bench_refuses_a_directory_mixing_families_and_keeps_the_store(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "a.json").write_text(FIG1.read_text())
    (d / "b.json").write_text(json.dumps({"problem": "kresource_selection", "capacity": [4],
                                          "free": [4], "extra": [4], "demands": [[1]],
                                          "late": [False]}))
    ok = cli("bench", str(FIG1), "--solvers", "fcfs", "--out", "out", "--quiet", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    before = hashlib.sha256((tmp_path / "out" / "runs.sqlite").read_bytes()).hexdigest()
    refused(cli("bench", "mixed", "--solvers", "cpsat", "--out", "out", cwd=tmp_path),
            "mixed", "mixes problem families")
    refused(cli("bench", str(FIG1), "--solvers", "nomod_xyz:f", "--out", "out", cwd=tmp_path),
            "nomod_xyz")
    after = hashlib.sha256((tmp_path / "out" / "runs.sqlite").read_bytes()).hexdigest()
    assert before == after


def head_of_trace(name: str, n_jobs: int, path: Path) -> Path:
    """The header and first ``n_jobs`` job lines of a bundled trace, written to ``path``.

    Parameters
    ----------
    name : a bundled trace.
    n_jobs : how many job lines to keep.
    path : the plain SWF file to write.

    Returns
    -------
    Path
        ``path``.
    """
    import gzip

    from instances.bundled import trace_path

    lines = gzip.decompress(Path(trace_path(name)).read_bytes()).decode().splitlines()
    header = [ln for ln in lines if ln.lstrip().startswith(";")]
    jobs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(";")]
    path.write_text("\n".join(header + jobs[:n_jobs]) + "\n")
    return path


def test_a_user_policy_runs_in_simulate_compare_and_sweep(tmp_path):
    from instances.swf import read_swf

    (tmp_path / "sjf_backfill.py").write_text(SJF)
    # the user's policy is plain Python: the first 1,500 jobs of lublin_256 (its queue
    # builds up and backfills) keep the two simulations short
    trace = head_of_trace("lublin_256", 1500, tmp_path / "lublin_head.swf")
    s = cli("simulate", str(trace), "--policy", "sjf_backfill:SJFBackfill", "--json",
            cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    row = json.loads(s.stdout)
    assert row["policy"] == "sjf-backfill" and row["jobs"] == len(read_swf(trace).jobs)
    assert row["jobs"] > 1000
    c = cli("compare", str(trace), "--policies", "easy,sjf_backfill:SJFBackfill",
            cwd=tmp_path)
    assert c.returncode == 0 and "sjf-backfill" in c.stdout, c.stderr
    spec = {"version": 1, "name": "mine", "metrics": ["avg_wait"], "procs": [32],
            "workloads": [{"name": "syn", "synthetic": {"n_jobs": 100, "capacity": 32}}],
            "policies": [{"name": "easy"}, {"name": "sjf_backfill:SJFBackfill"}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    w = cli("sweep", "spec.json", "--out", "r.sqlite", "--jobs", "1", "--quiet",
            cwd=tmp_path)
    assert w.returncode == 0 and "2 run (2 done, 0 failed)" in w.stdout, w.stdout + w.stderr
    refused(cli("simulate", "lublin_256", "--policy", "sjf_backfill:NotAPolicy",
                cwd=tmp_path), "NotAPolicy", "not a policy")
    refused(cli("simulate", "lublin_256", "--policy", "nosuchmod:X", cwd=tmp_path),
            "nosuchmod")
    spec["policies"][1]["name"] = "nosuchmod:X"
    (tmp_path / "bad.json").write_text(json.dumps(spec))
    refused(cli("sweep", "bad.json", "--out", "r2.sqlite", cwd=tmp_path), "nosuchmod")


def test_version_and_traces(tmp_path):
    v = cli("--version", cwd=tmp_path)
    assert v.returncode == 0 and v.stdout.startswith("schedsearch ")
    t = cli("traces", cwd=tmp_path)
    kth = next(ln for ln in t.stdout.splitlines() if ln.startswith("KTH-SP2"))
    assert "28476" in kth and "Sep 1996 .. Aug 1997" in kth


@pytest.mark.parametrize("family", ["slack_insertion", "grouping", "kresource_epochs",
                                    "kresource_selection", "kresource_response",
                                    "task_mapping", "gang_schedule", "slot_assignment",
                                    "slot_placement"])
def test_every_family_generates_instances_its_default_solver_solves(family, tmp_path, capsys):
    """``schedsearch solve FILE`` without ``--solver`` runs ``DEFAULT_SOLVERS[family]``."""
    from sim import registry
    from sim.cli import main
    from sim.problems.generate import instance

    path = tmp_path / "p.json"
    path.write_text(json.dumps(instance(family, 7)))
    assert main(["solve", str(path), "--time-limit", "20", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["problem"] == family and d["solver"] == registry.default_solver(family)
    assert d["status"] in ("OPTIMAL", "FEASIBLE")


@pytest.mark.compiled
def test_engine_compiled_gives_the_python_engine_metrics_and_refuses_by_name(tmp_path):
    rows = {}
    for engine in ("python", "compiled"):
        p = cli("simulate", "lublin_256", "--policy", "easy", "--engine", engine, "--json",
                "--quiet", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        rows[engine] = json.loads(p.stdout)
    for k in ("avg_wait", "avg_bounded_slowdown", "makespan", "killed", "utilization"):
        assert rows["python"][k] == rows["compiled"][k]
    refused(cli("simulate", "lublin_256", "--policy", "slack", "--order", "exhaustive",
                "--engine", "compiled", "--quiet", cwd=tmp_path),
            "compiled engine does not support", "order 'exhaustive'")


@pytest.mark.parametrize("backend", ["cbc", "highs", "scip"])
def test_solve_with_each_mip_backend(tmp_path, backend):
    p = cli("solve", str(FIG1), "--solver", "ilp", "--backend", backend, "--json",
            cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["status"] == "OPTIMAL" and d["objective"] == 2


def test_backend_on_a_solver_without_one_is_refused(tmp_path):
    refused(cli("solve", str(FIG1), "--solver", "cpsat", "--backend", "highs", cwd=tmp_path),
            "--backend", "--solver ilp")
