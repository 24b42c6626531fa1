"""A sweep cell's time limit stops a user's policy that the in-process alarm cannot: one
in a C loop, one that swallows every exception, one that crashes the interpreter. Each
is a failed cell with the reason; the other cells run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from sim.sweep.store import Store

STUCK = textwrap.dedent('''
    import ctypes, time
    from heuristics.backfill import FCFS


    class CLoop(FCFS):
        def schedule(self, now):
            sum(range(10 ** 13))  # one C call: no signal handler runs until it returns
            return super().schedule(now)


    class Swallower(FCFS):
        def schedule(self, now):
            while True:
                try:
                    time.sleep(0.01)
                except BaseException:
                    pass


    class Crasher(FCFS):
        def schedule(self, now):
            ctypes.string_at(0)
''')


@pytest.mark.timed
def test_a_cell_time_limit_stops_a_policy_the_alarm_cannot(tmp_path):
    (tmp_path / "stuck_policies.py").write_text(STUCK)
    spec = {"version": 1, "name": "stuck", "metrics": ["avg_wait"], "procs": [32],
            "time_limit": 1,
            "workloads": [{"name": "syn", "synthetic": {"n_jobs": 50, "capacity": 32}}],
            "policies": [{"name": "stuck_policies:CLoop"}, {"name": "easy"},
                         {"name": "stuck_policies:Swallower"},
                         {"name": "stuck_policies:Crasher"}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "sim.cli", "sweep", "spec.json", "--out",
                        "r.sqlite", "--jobs", "1", "--quiet"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=90)
    assert time.monotonic() - t0 < 60
    assert p.returncode == 1 and "4 run (1 done, 3 failed)" in p.stdout, p.stdout + p.stderr
    with Store.open(tmp_path / "r.sqlite", create=False) as st:
        rows = {r["policy"]: r for r in st.rows(None)}
    assert rows["easy"]["status"] == "done"
    assert "time limit exceeded" in rows["stuck_policies:CLoop"]["error"]
    assert "time limit exceeded" in rows["stuck_policies:Swallower"]["error"]
    assert "crashed (SIGSEGV)" in rows["stuck_policies:Crasher"]["error"]


TAMPERER = textwrap.dedent('''
    import sim.batch.validate
    import sim.sweep.cell
    from heuristics.backfill import FCFS

    # what a user's module can do in the process that runs it
    sim.sweep.cell.cell_metrics = lambda schedule, priorities=None: {"avg_wait": -1.0}
    sim.batch.validate.validate = lambda schedule, **kw: None


    class Tamperer(FCFS):
        """FCFS, whose module replaced the metrics and the validator of its process."""
''')


def test_a_user_policys_cell_is_validated_and_measured_outside_its_process(tmp_path):
    """The worker that ran a user's policy returns the schedule only: the validator and
    the metrics that a module replaced in its own process never judge its cell."""
    (tmp_path / "tamper_policy.py").write_text(TAMPERER)
    spec = {"version": 1, "name": "tamper", "metrics": ["avg_wait"], "procs": [32],
            "workloads": [{"name": "syn", "synthetic": {"n_jobs": 60, "capacity": 32}}],
            "policies": [{"name": "tamper_policy:Tamperer"}, {"name": "fcfs"}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    p = subprocess.run([sys.executable, "-m", "sim.cli", "sweep", "spec.json", "--out",
                        "r.sqlite", "--jobs", "1", "--quiet"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    with Store.open(tmp_path / "r.sqlite", create=False) as st:
        rows = {r["policy"]: r for r in st.rows(None)}
    mine, ours = rows["tamper_policy:Tamperer"], rows["fcfs"]
    assert mine["status"] == "done" and mine["metrics"]["avg_wait"] >= 0
    assert mine["metrics"] == ours["metrics"]
    assert mine["workload_sha256"] == ours["workload_sha256"]


CHATTY = textwrap.dedent('''
    from heuristics.backfill import FCFS


    class Chatty(FCFS):
        def schedule(self, now):
            print("chatty policy here", flush=True)
            return super().schedule(now)
''')


@pytest.mark.timed
def test_what_a_user_policy_prints_stays_out_of_the_json(tmp_path):
    """The policy's prints go to standard error: ``simulate --json`` stays one JSON
    document a script can read."""
    (tmp_path / "chatty_policy.py").write_text(CHATTY)
    p = subprocess.run([sys.executable, "-m", "sim.cli", "simulate", "lublin_256", "--policy",
                        "chatty_policy:Chatty", "--json", "--quiet"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["policy"]
    assert "chatty policy here" in p.stderr
