"""The limits benchmark's size sweep reaches every solver of every family."""

from __future__ import annotations

import pytest

from sim import registry

pytestmark = pytest.mark.untimed  # builds no instance, times nothing


def test_the_sweep_covers_every_registered_family() -> None:
    from sim.experiments.engine.limits_bench import sweep_sizes

    sizes = sweep_sizes()
    assert set(registry.SOLVERS) <= set(sizes)
    assert all(len(sizes[f]) >= 3 for f in registry.SOLVERS)


def test_the_sweep_reaches_the_documented_maxima() -> None:
    from sim.experiments.engine.limits_bench import sweep_sizes
    from sim.problems import kresource, placement, slots

    labels = {f: " ".join(label for label, _ in v) for f, v in sweep_sizes().items()}
    assert f"{slots.MAX_APPS} apps (max), 10^6 slots (max)" in labels["slot_assignment"]
    assert f"n_slots={placement.MAX_SLOTS}" in labels["slot_placement"]
    for kind in ("epochs", "selection", "response"):
        assert f"{kresource.MAX_JOBS} jobs" in labels[f"kresource_{kind}"]


def test_the_sweep_runs_the_largest_size_again_at_the_long_limit(monkeypatch, tmp_path) -> None:
    """``--long``: each solver that used its limit on a family's largest size runs there
    again at the long limit; the smaller sizes and the solvers that finished at once or
    refused do not."""
    import subprocess

    from sim.experiments.engine import limits_bench as lb

    monkeypatch.setattr(lb, "sweep_sizes", lambda: {
        "gang_schedule": [("small", dict), ("large", dict)]})
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0))
    monkeypatch.setattr(lb.Path, "unlink", lambda self: None)
    ran = []

    def run_one(path, solver, limit, kill_after, kill_mb):
        ran.append((solver, limit))
        busy = solver in ("cpsat", "ilp")  # these use their limit, the others do not
        return {"solver": solver, "limit": limit, "wall": limit if busy else 0.3,
                "peak_mb": 100.0, "cpu": limit if busy else 0.3, "exit": 0, "killed": "",
                "status": "FEASIBLE", "runtime": limit if busy else 0.01,
                "objective": 1.0, "bound": None, "message": ""}

    monkeypatch.setattr(lb, "run_one", run_one)
    lines, fails = lb.run_sweep(2.0, None, None, 30.0, 2048.0, tmp_path, long=10.0)
    solvers = list(registry.SOLVERS["gang_schedule"])
    assert ran == [(s, 2.0) for s in solvers] + [
        x for s in solvers for x in [(s, 2.0)] + ([(s, 10.0)] if s in ("cpsat", "ilp") else [])]
    assert fails == 0 and sum("| large | cpsat | 10 |" in line for line in lines) == 1


def test_a_run_counts_the_workers_its_child_never_waits_for(monkeypatch, tmp_path) -> None:
    """The HiGHS, SCIP and CP-SAT workers are children of a fork server that ignores
    SIGCHLD (the kernel reaps them, and their CPU time and memory reach nobody's
    ``ru_maxrss`` or ``ru_utime``): they are counted all the same. Here the "solver"
    starts such a server, whose worker burns a second of CPU holding 200 MB (the solver
    answers once the worker has had that second, however loaded the machine)."""
    import sys

    from sim.experiments.engine import limits_bench as lb

    fake = tmp_path / "solver.py"
    done = tmp_path / "worker-done"
    fake.write_text(f"""#!{sys.executable}
import os, signal, time
def wait_done():
    end = time.monotonic() + 60
    while not os.path.exists({str(done)!r}) and time.monotonic() < end:
        time.sleep(0.05)
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the server: its children unwaited
if os.fork() == 0:
    if os.fork() == 0:  # the worker
        x = b"1" * (200 * 2**20)
        t = time.process_time()
        while time.process_time() - t < 1.0:
            pass
        open({str(done)!r}, "w").close()
        time.sleep(0.5)  # seen by the sampler after its second of CPU
    else:
        wait_done()
        time.sleep(0.5)
    os._exit(0)
wait_done()
time.sleep(1.0)
print('{{"status": "FEASIBLE", "runtime": 1.0, "objective": 0, "bound": null}}')
""")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    row = lb.run_one(tmp_path / "p.json", "x", 10.0, 10.0, 4000.0)
    assert row["status"] == "FEASIBLE", row
    assert row["cpu"] >= 0.8, row
    assert row["peak_mb"] >= 200.0, row
