"""A researcher's own study end to end, through the command line: own instances -> bench;
own policy -> sweep -> report; own agent -> gym-eval; Batsim in and out, read back."""

from __future__ import annotations

import csv
import json
import textwrap

import pytest

from sim.cli import main

pytestmark = pytest.mark.timed

MINE = textwrap.dedent('''
    import time

    import numpy as np

    from sim.batch.policy import BasePolicy
    from sim.problems import checker, scorer
    from sim.result import Status, build


    def one_per_epoch(problem, *, time_limit=None, seed=0):
        """Every job in its own epoch (a poor heuristic)."""
        t0 = time.perf_counter()
        return build(solver="one", status=Status.FEASIBLE,
                     solution=[[j] for j in range(len(problem.demands))],
                     check=checker(problem), objective=scorer(problem),
                     runtime=time.perf_counter() - t0, seed=seed)


    class Serial(BasePolicy):
        """One job at a time, in submit order."""
        name = "serial"

        def reset(self, machine):
            super().reset(machine)
            self.queue, self.busy = [], False

        def on_arrival(self, job, now):
            self.queue.append(job)

        def on_end(self, job, now):
            self.busy = False

        def schedule(self, now):
            if self.busy or not self.queue:
                return []
            self.busy = True
            return [self.queue.pop(0)]


    def smallest_first(obs, info):
        k = int(info["action_mask"].sum())
        return int(np.argmin(obs[:4 * k].reshape(k, 4)[:, 1]))
    smallest_first.env_options = {"backfill": "easy"}
''')


def test_a_study_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "study_mine.py").write_text(MINE)  # a name no other test module takes

    # own instances -> bench, with an own solver beside CP-SAT on a named ILP backend
    assert main(["generate", "kresource_epochs", "--n", "3", "--seed", "2", "--size", "n=7",
                 "--size", "K=2", "--out", "inst"]) == 0
    assert main(["bench", "inst", "--solvers", "cpsat,ilp,study_mine:one_per_epoch", "--backend",
                 "highs", "--time-limit", "10", "--out", "b", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| ilp[highs] | exact | 3 | OPTIMAL 3 |" in out and "study_mine:one_per_epoch" in out

    # own policy -> sweep -> report: n = 1 says so, load is named, saturation measured
    spec = {"version": 1, "name": "study", "metrics": ["avg_wait"], "seeds": [0, 1, 2],
            "workloads": [{"name": "l", "trace": "lublin_256", "max_jobs": 300,
                           "load": [1.0, 3.0]},
                          {"name": "lr", "trace": "lublin_256", "max_jobs": 300,
                           "replicate": {"method": "jitter", "amount": 0.2}}],
            "policies": [{"name": "easy"}, {"name": "study_mine:Serial"}]}
    (tmp_path / "s.json").write_text(json.dumps(spec))
    assert main(["sweep", "s.json", "--out", "s.sqlite", "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", "s.sqlite", "--baseline", "easy", "--where", "workload=l"]) == 0
    rep = capsys.readouterr().out
    assert "one run per cell (n = 1), so no interval" in rep and "±" not in rep
    assert "compresses the submit times" in rep and "| l | 3 |" in rep
    assert "cells saturate" in rep and "study_mine:Serial" in rep
    assert main(["report", "s.sqlite", "--baseline", "easy", "--where", "workload=lr"]) == 0
    rep = capsys.readouterr().out  # replicas of the log: intervals over n = 3, paired
    assert "over the runs (one per seed) of each cell, n = 3" in rep and "±" in rep
    assert "Paired difference to `easy`" in rep

    # own agent -> gym-eval against the proved optimum
    assert main(["gym-eval", "--windows", "2", "--length", "10", "--policies",
                 "easy,study_mine:smallest_first"]) == 0
    ev = capsys.readouterr().out
    assert "study_mine:smallest_first" in ev and "gap to the optimum" in ev and "OPTIMAL" in ev

    # Batsim in and out, read back
    assert main(["convert", "lublin_256", "l.json", "--quiet"]) == 0
    doc = json.loads((tmp_path / "l.json").read_text())
    doc["jobs"] = doc["jobs"][:200]
    for j in doc["jobs"]:
        j["id"] = f"w0!{j['id']}"
    (tmp_path / "mine.json").write_text(json.dumps(doc))
    assert main(["simulate", "mine.json", "--policy", "easy", "--quiet", "--out",
                 "jobs.csv"]) == 0
    with open(tmp_path / "jobs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["job_id"] for r in rows] == [j["id"] for j in doc["jobs"]]
    assert main(["convert", "mine.json", "back.json", "--quiet"]) == 0
    back = json.loads((tmp_path / "back.json").read_text())
    assert [(j["id"], j["subtime"], j["res"], j["profile"]) for j in back["jobs"]] == [
        (j["id"], j["subtime"], j["res"], j["profile"]) for j in doc["jobs"]]
    capsys.readouterr()
    assert main(["simulate", "mine.json", "--policy", "easy", "--quiet", "--out",
                 "x.json"]) == 2
    assert "holds no schedule" in capsys.readouterr().err
