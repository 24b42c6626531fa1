"""The sweep's ``feedback`` workload key: user feedback on a trace (plain or resampled),
refused where it cannot act, deterministic end to end."""

from __future__ import annotations

import pytest

from sim.sweep.cell import build_workload, run_cell_here
from sim.sweep.spec import SpecError, expand


def _spec(**w):
    return {"version": 1, "name": "f", "seeds": [0, 1],
            "workloads": [{"name": "k", "trace": "KTH-SP2", "max_jobs": 1500, **w}],
            "policies": [{"name": "easy"}]}


def test_feedback_cells_and_keys():
    cells = expand(_spec(feedback=True))
    assert [c["feedback"] for c in cells] == [True]
    assert "feedback" not in expand(_spec())[0]  # cells without it keep their keys
    cells = expand(_spec(feedback=True, replicate="resample"))
    assert [(c["seed"], c["feedback"]) for c in cells] == [(0, True), (1, True)]


@pytest.mark.parametrize("w, match", [
    ({"feedback": "yes"}, r"workloads\[0\]\.feedback: expected true/false"),
    ({"feedback": [False, True]}, r"workloads\[0\]\.feedback: expected true/false"),
    ({"feedback": True, "load": [1.0, 1.2]}, r"workloads\[0\]\.feedback: not with a 'load'"),
    ({"feedback": True, "months": ["1996-10"]}, r"feedback: not with 'months'"),
    ({"feedback": True, "weeks": ["1996-W40"]}, r"feedback: not with 'weeks'"),
])
def test_feedback_refusals_name_the_key(w, match):
    with pytest.raises(SpecError, match=match):
        expand(_spec(**w))


def test_a_users_policy_beside_a_feedback_workload_is_refused(tmp_path, monkeypatch):
    """Its cell runs in a worker process and is checked here on the log's submit times,
    which feedback replaces (the CLI's --feedback refuses it too)."""
    (tmp_path / "fb_policy.py").write_text("from heuristics.backfill import FCFS\n\n\n"
                                           "class Mine(FCFS):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = {**_spec(feedback=True), "policies": [{"name": "easy"},
                                                 {"name": "fb_policy:Mine"}]}
    with pytest.raises(SpecError, match=r"policies\[1\]\.name: 'fb_policy:Mine' runs in "
                       r"a worker process.*workloads\[0\] has feedback = true"):
        expand(spec)
    assert len(expand({**spec, "workloads": [{"name": "k", "trace": "KTH-SP2",
                                              "max_jobs": 100}]})) == 2


def test_feedback_on_a_synthetic_workload_is_refused():
    spec = {"version": 1, "name": "s", "workloads": [
        {"name": "s", "synthetic": {"n_jobs": 10}, "feedback": True}],
        "policies": [{"name": "easy"}]}
    with pytest.raises(SpecError, match="feedback: needs a trace"):
        expand(spec)


def test_a_feedback_cell_simulates_with_feedback_and_its_checksum_says_so():
    plain, fb = expand(_spec())[0], expand(_spec(feedback=True))[0]
    a, b = run_cell_here(plain), run_cell_here(fb)
    assert a["status"] == b["status"] == "done", (a["error"], b["error"])
    assert a["metrics"]["avg_wait"] != b["metrics"]["avg_wait"]
    assert a["workload_sha256"] != b["workload_sha256"]
    assert run_cell_here(fb)["metrics"] == b["metrics"]  # deterministic
    assert build_workload(fb)[0].jobs == build_workload(plain)[0].jobs


def test_a_trace_without_waits_fails_its_cell_naming_the_option():
    spec = _spec(feedback=True)
    spec["workloads"][0]["trace"] = "lublin_256"
    row = run_cell_here(expand(spec)[0])
    assert row["status"] == "failed" and "the workload's feedback" in row["error"]
    assert "nothing to act on" in row["error"]


def test_a_resampled_feedback_sweep_is_deterministic_end_to_end(tmp_path, capsys):
    from sim.cli import main
    from tests.sweep.helpers import snapshot, write_json

    spec = write_json(tmp_path / "f.json", _spec(feedback=True, replicate="resample"))
    for store in ("a.sqlite", "b.sqlite"):
        assert main(["sweep", str(spec), "--out", str(tmp_path / store), "--jobs", "1",
                     "--quiet"]) == 0
    snap = snapshot(tmp_path / "a.sqlite")
    assert snap == snapshot(tmp_path / "b.sqlite")
    assert [v[0] for v in snap.values()] == ["done", "done"]
    assert len({v[3] for v in snap.values()}) == 2  # two replicas, two results
    capsys.readouterr()
    assert main(["report", str(tmp_path / "a.sqlite")]) == 0
    assert "User feedback (Zakay & Feitelson) in k:" in capsys.readouterr().out
