"""Batsim formats: the JSON workload reader and writer, jobs.csv, processor assignment."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from instances.batsim import (
    JOBS_COLUMNS,
    BatsimError,
    assign_processors,
    interval_string,
    is_batsim_workload,
    read_batsim,
    write_batsim_jobs,
    write_batsim_workload,
)
from instances.bundled import load_trace
from instances.job import Job, Workload
from sim.batch.machine import simulate
from sim.batch.runner import load_workload, run
from sim.registry import make_policy, policy_spec


def _doc(**over):
    doc = {
        "nb_res": 8,
        "jobs": [
            {"id": "1", "subtime": 0, "res": 4, "walltime": 100, "profile": "d60"},
            {"id": "2", "subtime": 5, "res": 8, "walltime": 50, "profile": "d80"},
            {"id": 3, "subtime": 7, "res": 2, "profile": "d60"},
        ],
        "profiles": {"d60": {"type": "delay", "delay": 60},
                     "d80": {"type": "delay", "delay": 80},
                     "unused": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}},
    }
    doc.update(over)
    return doc


def _write(tmp_path: Path, doc, name="w.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def _intervals(text: str) -> list[int]:
    ids: list[int] = []
    for part in text.split():
        a, _, b = part.partition("-")
        ids.extend(range(int(a), int(b or a) + 1))
    return ids


def test_read_delay_workload(tmp_path):
    w = read_batsim(_write(tmp_path, _doc()))
    assert w.procs == 8 and w.name == "w"
    assert [(j.id, j.submit, j.runtime, j.requested, j.procs) for j in w.jobs] == [
        (1, 0, 60, 100, 4), (2, 5, 80, 50, 8), (3, 7, 60, 60, 2)]
    rep = w.cleaning
    assert rep.counts["missing_walltime"] == 1 and rep.examples["missing_walltime"] == (3,)
    assert rep.machine_source == "nb_res" and "missing_walltime: 1 jobs" in rep.summary()
    assert rep.to_dict()["format"] == "batsim"


def test_string_ids_are_renumbered_and_mapped(tmp_path):
    doc = _doc()
    doc["jobs"][0]["id"] = "w0!a"
    w = read_batsim(_write(tmp_path, doc))
    assert [j.id for j in w.jobs] == [1, 2, 3]
    assert w.cleaning.id_map == {"w0!a": 1, "2": 2, "3": 3}
    assert w.cleaning.counts["renumbered"] == 3


def test_fractional_times_round_up(tmp_path):
    doc = _doc()
    doc["jobs"][0]["subtime"] = 0.5
    doc["profiles"]["d60"]["delay"] = 59.2
    w = read_batsim(_write(tmp_path, doc))
    assert w.jobs[0].submit == 1 and w.jobs[0].runtime == 60
    assert w.cleaning.counts["rounded_times"] == 2  # jobs 1 and 3 (profile d60)


@pytest.mark.parametrize("drop, field", [
    ("nb_res", "'nb_res'"), ("jobs", "'jobs'"), ("profiles", "'profiles'")])
def test_missing_top_level_field(tmp_path, drop, field):
    doc = _doc()
    del doc[drop]
    with pytest.raises(BatsimError, match=f"missing field {field}"):
        read_batsim(_write(tmp_path, doc))


@pytest.mark.parametrize("drop", ["id", "subtime", "res", "profile"])
def test_missing_job_field(tmp_path, drop):
    doc = _doc()
    del doc["jobs"][1][drop]
    with pytest.raises(BatsimError, match=rf"jobs\[1\]: missing field '{drop}'"):
        read_batsim(_write(tmp_path, doc))


def test_bad_input_names_the_field(tmp_path):
    doc = _doc()
    doc["jobs"][1]["res"] = 9
    with pytest.raises(BatsimError, match="job 2: field 'res' = 9 exceeds the machine's 8"):
        read_batsim(_write(tmp_path, doc))
    w = read_batsim(_write(tmp_path, doc), too_wide="clip")
    assert w.jobs[1].procs == 8 and w.cleaning.counts["too_wide_clipped"] == 1
    assert len(read_batsim(_write(tmp_path, doc), too_wide="drop")) == 2

    doc = _doc()
    doc["jobs"][0]["profile"] = "unused"
    with pytest.raises(BatsimError, match="profile type 'parallel_homogeneous' is not supported"):
        read_batsim(_write(tmp_path, doc))
    doc["jobs"][0]["profile"] = "nowhere"
    with pytest.raises(BatsimError, match="profile 'nowhere' is not defined"):
        read_batsim(_write(tmp_path, doc))
    doc = _doc()
    del doc["profiles"]["d80"]["delay"]
    with pytest.raises(BatsimError, match="missing field 'delay'"):
        read_batsim(_write(tmp_path, doc))
    doc = _doc()
    doc["jobs"][2]["id"] = "1"
    with pytest.raises(BatsimError, match="duplicate id"):
        read_batsim(_write(tmp_path, doc))
    for bad in (-1, "10", None, True):
        doc = _doc()
        doc["jobs"][0]["subtime"] = bad
        with pytest.raises(BatsimError, match="field 'subtime'"):
            read_batsim(_write(tmp_path, doc))
    doc = _doc()
    doc["jobs"][0]["res"] = 0
    with pytest.raises(BatsimError, match="field 'res' must be a positive integer"):
        read_batsim(_write(tmp_path, doc))
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(BatsimError, match="JSON object"):
        read_batsim(tmp_path / "x.json")


def test_a_profile_defined_twice_is_refused(tmp_path):
    """Two profiles of one name in the JSON object: which run time the jobs have is
    unknowable, so the file is refused, not read with the last one."""
    text = json.dumps(_doc())
    text = text.replace('"profiles": {', '"profiles": {"d80": {"type": "delay", '
                        '"delay": 1}, ', 1)
    path = tmp_path / "w.json"
    path.write_text(text)
    with pytest.raises(BatsimError, match=r"w\.json: key 'd80' appears twice in one object"):
        read_batsim(path)


def test_load_workload_recognises_batsim_by_content(tmp_path):
    p = _write(tmp_path, _doc(), name="workload.txt")
    assert is_batsim_workload(p)
    w = load_workload(str(p))
    assert len(w) == 3 and w.cleaning.to_dict()["format"] == "batsim"
    with pytest.raises(ValueError, match="field 'res'"):
        load_workload(str(p), procs=4)
    assert not is_batsim_workload(Path(__file__).parents[2] / "instances" / "traces"
                                  / "lublin_256.swf.gz")


def _easy_starts(w: Workload) -> np.ndarray:
    return simulate(w, make_policy("easy")).start


@pytest.mark.parametrize("trace, n", [("lublin_256", None), ("KTH-SP2", 3000)])
def test_swf_to_batsim_round_trip_same_schedule(tmp_path, trace, n):
    w = load_trace(trace)
    if n is not None:
        w = Workload(w.jobs[:n], w.capacity, w.name, w.header)
    p = tmp_path / "w.json"
    write_batsim_workload(p, w)
    back = read_batsim(p)
    assert back.jobs == w.jobs and back.capacity == w.capacity
    assert np.array_equal(_easy_starts(back), _easy_starts(w))
    write_batsim_workload(tmp_path / "again.json", back)  # the bytes depend on the jobs only
    back2 = read_batsim(tmp_path / "again.json")
    assert back2.jobs == w.jobs


def _check_exclusive(rows: list[dict[str, str]]) -> None:
    """No processor held by two jobs at one instant: per processor, intervals disjoint."""
    per_proc: dict[int, list[tuple[int, int]]] = {}
    for r in rows:
        s, e = int(r["starting_time"]), int(r["finish_time"])
        ids = _intervals(r["allocated_resources"])
        assert len(ids) == int(r["requested_number_of_resources"]) == len(set(ids))
        for q in ids:
            per_proc.setdefault(q, []).append((s, e))
    for q, iv in per_proc.items():
        iv = sorted(x for x in iv if x[0] < x[1])
        for (_, e0), (s1, _) in zip(iv, iv[1:], strict=False):
            assert e0 <= s1, f"processor {q} shared"


def test_jobs_csv_columns_and_exclusive_processors(tmp_path):
    w = load_trace("lublin_256")
    s = simulate(w, make_policy("easy"))
    out = tmp_path / "jobs.csv"
    write_batsim_jobs(out, w, s.start, s.end, killed=s.killed)
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0].keys()) == JOBS_COLUMNS
    assert len(rows) == len(w)
    for r, j, st, en, k in zip(rows, w.jobs, s.start, s.end, s.killed, strict=True):
        assert int(r["job_id"]) == j.id and int(r["starting_time"]) == st
        assert int(r["finish_time"]) == en and int(r["execution_time"]) == en - st
        assert int(r["waiting_time"]) == st - j.submit
        assert int(r["turnaround_time"]) == en - j.submit
        assert r["success"] == ("0" if k else "1")
        assert r["final_state"] == ("COMPLETED_WALLTIME_REACHED" if k
                                    else "COMPLETED_SUCCESSFULLY")
        assert int(r["consumed_energy"]) == -1
    _check_exclusive(rows)
    maxid = max(max(_intervals(r["allocated_resources"])) for r in rows)
    assert maxid < w.procs


def test_assign_processors_edges():
    # back-to-back jobs reuse processors; a zero-length job holds nothing
    alloc = assign_processors([2, 2, 4, 1], [0, 0, 10, 10], [10, 10, 20, 10], 4)
    assert [interval_string(a) for a in alloc] == ["0-1", "2-3", "0-3", "0"]
    with pytest.raises(ValueError, match="needs 3 processors at time 5, only 2 of 4 free"):
        assign_processors([2, 3], [0, 5], [10, 6], 4)
    assert interval_string([0, 1, 2, 3, 8]) == "0-3 8"
    assert interval_string([5]) == "5" and interval_string([]) == ""


def test_assign_processors_random_schedules():
    rng = np.random.default_rng(7)
    for _ in range(30):  # random feasible schedules: EASY on random small workloads
        from instances.synthetic import random_workload

        w = random_workload(60, (16,), seed=int(rng.integers(1 << 30)), load=0.9)
        s = simulate(w, make_policy("easy"))
        alloc = assign_processors([j.procs for j in w.jobs], s.start, s.end, 16)
        rows = [{"starting_time": a, "finish_time": b, "allocated_resources": interval_string(x),
                 "requested_number_of_resources": j.procs}
                for a, b, x, j in zip(s.start, s.end, alloc, w.jobs, strict=True)]
        _check_exclusive(rows)


def test_run_out_csv(tmp_path):
    w = load_trace("lublin_256")
    out = tmp_path / "sched.csv"
    row = run(w, policy_spec("easy"), out=out)
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(w) and row["validated"]
    waits = np.array([int(r["waiting_time"]) for r in rows])
    assert waits.mean() == pytest.approx(row["avg_wait"])
    with pytest.raises(ValueError, match="jobs.csv is one machine"):
        run(w, policy_spec("easy"), out=out, by_month=True)


def test_evalys_reads_jobs_csv(tmp_path):
    evalys = pytest.importorskip("evalys.jobset")
    w = load_trace("lublin_256")
    s = simulate(w, make_policy("easy"))
    out = tmp_path / "jobs.csv"
    write_batsim_jobs(out, w, s.start, s.end, killed=s.killed)
    js = evalys.JobSet.from_csv(str(out))
    assert len(js.df) == len(w)
    assert js.res_bounds[1] <= w.procs - 1
    assert js.utilisation.max() <= w.procs


def test_writers_refuse_k_above_one(tmp_path):
    w = Workload((Job(1, 0, 5, 5, (1, 1)),), (2, 2))
    with pytest.raises(ValueError, match="K=2"):
        write_batsim_workload(tmp_path / "w.json", w)
    with pytest.raises(ValueError, match="K=2"):
        write_batsim_jobs(tmp_path / "j.csv", w, [0], [5])


@pytest.mark.parametrize("bad", ["+-7", "--7", "1.5", "1e3", " + "])
def test_an_id_that_is_a_malformed_number_is_refused_naming_the_file(tmp_path, bad):
    doc = _doc()
    doc["jobs"][1]["id"] = bad
    path = _write(tmp_path, doc)
    with pytest.raises(BatsimError, match=r"w\.json: jobs\[1\]: field 'id' .* malformed number"):
        read_batsim(path)


def test_jobs_csv_keeps_the_workloads_own_ids_and_profile_names(tmp_path):
    doc = _doc()
    doc["jobs"][0]["id"] = "w0!a"
    doc["jobs"][1]["id"] = "007"
    w = read_batsim(_write(tmp_path, doc))
    assert [j.id for j in w.jobs] == [1, 2, 3]  # renumbered inside, as the report says
    s = simulate(w, make_policy("easy"))
    write_batsim_jobs(tmp_path / "jobs.csv", w, s.start, s.end, killed=s.killed)
    with open(tmp_path / "jobs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["job_id"], r["profile"]) for r in rows] == [
        ("w0!a", "d60"), ("007", "d80"), ("3", "d60")]
    write_batsim_workload(tmp_path / "again.json", w)
    again = json.loads((tmp_path / "again.json").read_text())
    assert [(j["id"], j["profile"]) for j in again["jobs"]] == [
        ("w0!a", "d60"), ("007", "d80"), ("3", "d60")]
    assert again["profiles"] == {"d60": {"type": "delay", "delay": 60},
                                 "d80": {"type": "delay", "delay": 80}}


def test_jobs_csv_of_a_huge_machine_takes_no_memory_per_processor(tmp_path):
    import tracemalloc

    nb = 10**9
    jobs = tuple(Job(i + 1, i, 100, 100, (nb // 2 + i,)) for i in range(200))
    w = Workload(jobs, (nb,), "huge")
    start = np.arange(200, dtype=np.int64) * 100
    tracemalloc.start()
    write_batsim_jobs(tmp_path / "jobs.csv", w, start, start + 100)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50 * 2**20  # a boolean per processor would be 1 GB
    with open(tmp_path / "jobs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["allocated_resources"] == f"0-{nb // 2 - 1}"
    assert rows[1]["allocated_resources"] == f"0-{nb // 2}"


def test_swf_to_batsim_and_back_gives_the_same_jobs(tmp_path):
    w = load_trace("lublin_256")
    write_batsim_workload(tmp_path / "l.json", w)
    back = read_batsim(tmp_path / "l.json")
    assert back.jobs == w.jobs and back.capacity == w.capacity
    assert back.cleaning.counts == dict.fromkeys(back.cleaning.counts, 0)


def test_assign_intervals_match_the_processor_ids():
    from instances.batsim import assign_intervals, intervals_text

    rng = np.random.default_rng(3)
    from instances.synthetic import random_workload

    for _ in range(10):
        w = random_workload(80, (16,), seed=int(rng.integers(1 << 30)), load=0.9)
        s = simulate(w, make_policy("easy"))
        procs = [j.procs for j in w.jobs]
        ranges = assign_intervals(procs, s.start, s.end, 16)
        ids = assign_processors(procs, s.start, s.end, 16)
        assert [intervals_text(r) for r in ranges] == [interval_string(x) for x in ids]
        assert all(len(x) == p for x, p in zip(ids, procs, strict=True))
