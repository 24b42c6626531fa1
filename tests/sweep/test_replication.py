"""Replication on logs as sweep options: seeds of a replicated trace, paired differences
between policies on the same replica, months as runs."""

from __future__ import annotations

import math

import pytest

from sim.sweep.report import mean_ci, pivot, report
from sim.sweep.spec import SpecError, expand
from sim.sweep.store import Store


def _spec(**w):
    return {"version": 1, "name": "r", "seeds": [0, 1, 2],
            "workloads": [{"name": "k", "trace": "lublin_256", "max_jobs": 50, **w}],
            "policies": [{"name": "easy"}]}


def test_a_replicated_trace_gets_one_cell_per_seed():
    cells = expand(_spec(replicate={"method": "jitter", "amount": 0.3}))
    assert sorted(c["seed"] for c in cells) == [0, 1, 2]
    assert all(c["replicate"] == {"method": "jitter", "amount": 0.3} for c in cells)
    assert [c["seed"] for c in expand(_spec(replicate="resample", seeds=[7]))] == [7]
    assert [c["seed"] for c in expand(_spec())] == [0]  # a plain trace: one run


@pytest.mark.parametrize("w,match", [
    ({"seeds": [1, 2]}, "seeds apply to synthetic workloads and to a trace with 'replicate'"),
    ({"replicate": "bootstrap"}, r"replicate\.method: unknown method"),
    ({"replicate": {"method": "resample", "amount": 0.1}}, "applies to 'jitter' only"),
    ({"replicate": {"method": "jitter", "amount": 2}}, r"amount: must be in \[0, 1\)"),
    ({"replicate": "resample", "priorities": "fifth"}, "renumbers the jobs"),
])
def test_bad_replication_is_refused_naming_the_key(w, match):
    with pytest.raises(SpecError, match=match):
        expand(_spec(**w))


def test_replicated_cells_differ_by_seed_and_run():
    from sim.sweep.cell import build_workload

    a, b = (build_workload(c)[0] for c in expand(_spec(replicate="jitter"))[:2])
    assert [j.runtime for j in a.jobs] != [j.runtime for j in b.jobs]
    assert [j.submit for j in a.jobs] == [j.submit for j in b.jobs]


def _store(path, values, over="seed"):
    with Store.open(path, spec_name="hand", spec_version=1) as st:
        st.set_meta(metrics='["avg_wait"]', labels='["base", "new"]')
        for label, runs in values.items():
            for i, v in enumerate(runs):
                cell = {"workload": "w", "policy": "fcfs", "label": label, "seed": 0,
                        "options": {}, "trace": "t"}
                cell[over] = i if over == "seed" else f"1996-{i + 1:02d}"
                st.put(f"{label}-{i}", cell, {"status": "done",
                                              "metrics": {"avg_wait": v, "jobs": 5}}, "t")


def test_paired_differences_are_the_hand_computed_ones(tmp_path):
    base, new = [10.0, 50.0, 90.0], [12.0, 53.0, 91.0]
    _store(tmp_path / "p.sqlite", {"base": base, "new": new})
    from sim.sweep.report import load_rows

    p = pivot(load_rows(tmp_path / "p.sqlite"), "avg_wait", baseline="base")
    d = mean_ci([2.0, 3.0, 1.0])
    assert p.paired((), "new") == pytest.approx(d)
    assert d[1] < mean_ci(new)[1] / 10  # the pairing removes the replicas' spread
    text = report(tmp_path / "p.sqlite", baseline="base")
    assert f"| all | 2.00 ± {d[1]:.2f} |" in text and "same seed" in text


def test_months_as_runs_with_over(tmp_path):
    _store(tmp_path / "m.sqlite", {"base": [10.0, 20.0], "new": [11.0, 23.0]}, over="month")
    with pytest.raises(ValueError, match="'month' varies inside a table cell"):
        report(tmp_path / "m.sqlite", rows_by=[], baseline="base")
    text = report(tmp_path / "m.sqlite", baseline="base", over=["month"])
    hw = 12.706204736174707 * math.sqrt(2.0 / 2)  # differences 1 and 3: s^2 = 2
    assert f"| all | 2.00 ± {hw:.2f} |" in text and "same seed, month" in text
    assert "one per seed, month" in text


def _kth(**w):
    return {"version": 1, "name": "wk", "workloads": [{"name": "k", "trace": "KTH-SP2", **w}],
            "policies": [{"name": "easy"}, {"name": "fcfs"}]}


def test_weeks_make_one_cell_per_iso_week_of_the_log():
    from sim.sweep.cell import build_workload
    from sim.sweep.spec import check_spec, count_cells

    cells = expand(_kth(weeks=["1996-W40", "1996-W42"]))
    assert [(c["week"], c["policy"]) for c in cells] == [
        ("1996-W40", "easy"), ("1996-W40", "fcfs"), ("1996-W42", "easy"), ("1996-W42", "fcfs")]
    w = build_workload(cells[0])[0]
    assert len(w) == 836  # Monday 1996-09-30 00:00 to 1996-10-07 00:00, Stockholm time
    from sim.sweep.plots import _gantt_title

    assert "on k 1996-W40, 100 processors" in _gantt_title(cells[0], 0, 1, 0, 1, 1, 100, False)
    assert "week" not in expand(_kth())[0]  # cells without a split keep their keys
    each = _kth(weeks="each")
    assert len(expand(each)) == count_cells(check_spec(each)) == 2 * 48


def test_resample_options_in_the_spec():
    cells = expand(_spec(replicate={"method": "resample", "long_term": 4}))
    assert cells[0]["replicate"] == {"method": "resample", "long_term": 4}
    assert expand(_spec(replicate="resample"))[0]["replicate"] == {"method": "resample",
                                                                   "long_term": 12}


@pytest.mark.parametrize("spec,match", [
    (_kth(weeks=["1996-40"]), r"workloads\[0\]\.weeks: expected YYYY-Www"),
    (_kth(weeks=["1998-W01"]), r"weeks: 1998-W01 has no jobs in the trace; weeks: "
                               "1996-W40..1997-W35"),
    (_kth(weeks="each", months="each"), "give 'months' or 'weeks', not both"),
    (_kth(weeks=[]), "weeks: empty list"),
    (_spec(weeks="each"), r"weeks: .*no integer UnixStartTime"),
    (_spec(replicate={"method": "jitter", "long_term": 3}), "applies to 'resample' only"),
    (_spec(replicate={"method": "resample", "long_term": 0}), r"long_term: expected a whole"),
    (_spec(replicate={"method": "resample", "long_term": 2.5}), r"long_term: expected a whole"),
])
def test_bad_weeks_and_resample_options_are_refused(spec, match):
    with pytest.raises(SpecError, match=match):
        expand(spec)


def _week_store(path, values):
    with Store.open(path, spec_name="hand", spec_version=1) as st:
        st.set_meta(metrics='["avg_wait"]', labels='["easy", "sjf"]')
        for label, runs in values.items():
            for i, v in enumerate(runs):
                cell = {"workload": "w", "policy": "fcfs", "label": label, "seed": 0,
                        "options": {}, "trace": "t", "week": f"1996-W{40 + i}"}
                st.put(f"{label}-{i}", cell, {"status": "done",
                                              "metrics": {"avg_wait": v, "jobs": 5}}, "t")


def test_week_split_paired_differences_by_hand(tmp_path):
    """Three weeks, two policies: differences 4, -1, 6; mean 3, s^2 = 13, t_{0.975, 2} =
    4.302652729911275, half-width t * sqrt(13 / 3)."""
    _week_store(tmp_path / "w.sqlite", {"easy": [100.0, 20.0, 50.0],
                                        "sjf": [104.0, 19.0, 56.0]})
    out = tmp_path / "rep"
    text = report(tmp_path / "w.sqlite", baseline="easy", over=["week"], out_dir=out)
    hw = 4.302652729911275 * math.sqrt(13 / 3)
    assert f"| all | 3.00 ± {hw:.2f} |" in text and "same seed, week" in text
    assert "Pairs per cell (n): 3." in text and "one per seed, week" in text
    lines = (out / "avg_wait_paired.csv").read_text().splitlines()
    assert lines == ["label,seed,week,metric,value,baseline,difference",
                     "sjf,0,1996-W40,avg_wait,104.0,100.0,4.0",
                     "sjf,0,1996-W41,avg_wait,19.0,20.0,-1.0",
                     "sjf,0,1996-W42,avg_wait,56.0,50.0,6.0"]
    # one week: the difference is there (CSV), an interval is not
    _week_store(tmp_path / "one.sqlite", {"easy": [100.0], "sjf": [104.0]})
    text = report(tmp_path / "one.sqlite", baseline="easy", over=["week"], out_dir=out)
    assert (out / "avg_wait_paired.csv").read_text().splitlines()[1:] == [
        "sjf,0,1996-W40,avg_wait,104.0,100.0,4.0"]
    assert "±" not in text and "Paired difference" not in text
    assert "one run per cell (n = 1), so no interval" in text


def test_resample_users_expands_into_cells_and_acts_on_the_workload():
    from sim.sweep.cell import build_workload
    from sim.sweep.spec import check_spec, count_cells

    spec = _spec(replicate={"method": "resample", "users": [1.0, 2.0]}, seeds=[0])
    del spec["workloads"][0]["max_jobs"]  # the whole replica
    cells = expand(spec)
    assert [c["users"] for c in cells] == [1.0, 2.0]
    assert all(c["replicate"] == {"method": "resample", "long_term": 12} for c in cells)
    assert count_cells(check_spec(spec)) == 2
    one, two = (build_workload(c)[0] for c in cells)
    assert 1.8 < len(two) / len(one) < 2.2  # lublin_256: every job a temporary user
    assert "users" not in expand(_spec(replicate="resample"))[0]  # keys kept without it


@pytest.mark.parametrize("rep,match", [
    ({"method": "resample", "users": 0}, r"replicate\.users: expected a finite number > 0"),
    ({"method": "resample", "users": [1.0, "x"]}, r"replicate\.users: expected a finite"),
    ({"method": "resample", "users": 1000}, r"replicate\.users: .*<= 100"),
    ({"method": "resample", "users": []}, r"replicate\.users: empty list"),
    ({"method": "jitter", "users": 1.2}, r"replicate\.users: applies to 'resample' only"),
])
def test_bad_users_are_refused_naming_the_key(rep, match):
    with pytest.raises(SpecError, match=match):
        expand(_spec(replicate=rep))


def test_the_report_gives_the_offered_load_per_users_value():
    from sim.sweep.report import load_note

    rows = [{"workload": "k", "load": 1.0, "users": u, "offered_load": v}
            for u, v in ((1.0, 0.5), (1.0, 0.7), (2.0, 1.1))]
    note = load_note(rows)
    assert "`users` multiplies the temporary users" in note
    assert "| workload | load (submit times / factor) | users | offered load |" in note
    assert "| k | 1 | 1 | 0.600 |" in note and "| k | 1 | 2 | 1.100 |" in note
    assert "users" not in load_note([{"workload": "k", "load": 1.0, "offered_load": 0.5}])


def test_a_users_sweep_end_to_end_is_deterministic_and_reports_the_offered_load(tmp_path,
                                                                                 capsys):
    from sim.cli import main
    from tests.sweep.helpers import snapshot, write_json

    spec = write_json(tmp_path / "u.json", {
        "version": 1, "name": "u", "seeds": [3],
        "workloads": [{"name": "l", "trace": "lublin_256", "max_jobs": 300,
                       "replicate": {"method": "resample", "users": [1.0, 1.5]}}],
        "policies": [{"name": "easy"}]})
    for store in ("a.sqlite", "b.sqlite"):
        assert main(["sweep", str(spec), "--out", str(tmp_path / store), "--jobs", "1",
                     "--quiet"]) == 0
    assert snapshot(tmp_path / "a.sqlite") == snapshot(tmp_path / "b.sqlite")
    capsys.readouterr()
    assert main(["report", str(tmp_path / "a.sqlite")]) == 0
    text = capsys.readouterr().out
    assert "| l | 1 | 1 |" in text and "| l | 1 | 1.5 |" in text
