"""Spec values no cell can run are refused by the spec check, naming the file and key,
before any store exists; grids are counted before they are built; ``--jobs`` is capped
at the cells and the machine."""

from __future__ import annotations

import gzip
import math
import os
import time

import pytest
from helpers import tiny_spec, write_json

from sim.cli import main
from sim.sweep import SpecError, run_sweep
from sim.sweep.execute import worker_count
from sim.sweep.spec import MAX_CELLS, count_cells, expand

SWF_LINE = "1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"


def refused(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _trace_workload(trace: str, **extra) -> dict:
    return {"name": "t", "trace": trace, **extra}


def _synthetic(**params) -> dict:
    return {"name": "syn", "synthetic": {"n_jobs": 20, "capacity": 16, **params}}


BAD = [
    ("seed -1", {"seeds": [0, -1]}, "seeds", "-1"),
    ("seed 2^63", {"seeds": [2 ** 63]}, "seeds", "9223372036854775808"),
    ("seed 2^64", {"seeds": [2 ** 64]}, "seeds", "18446744073709551616"),
    ("seed 1.5", {"seeds": [1.5]}, "seeds", "1.5"),
    ("workload seed -1", {"workloads": [{**_synthetic(), "seeds": [-1]}]},
     "workloads[0].seeds", "-1"),
    ("n_jobs -5", {"workloads": [_synthetic(n_jobs=-5)]}, "workloads[0].synthetic.n_jobs",
     "-5"),
    ("n_jobs 0", {"workloads": [_synthetic(n_jobs=0)]}, "workloads[0].synthetic.n_jobs",
     "got 0"),
    ("n_jobs 10^12", {"workloads": [_synthetic(n_jobs=10 ** 12)]},
     "workloads[0].synthetic.n_jobs", "1000000000000"),
    ("synthetic load NaN", {"workloads": [_synthetic(load=math.nan)]},
     "workloads[0].synthetic", "load"),
    ("synthetic load inf", {"workloads": [_synthetic(load=[0.5, math.inf])]},
     "workloads[0].synthetic", "load"),
    ("synthetic load 0", {"workloads": [_synthetic(load=0)]}, "workloads[0].synthetic",
     "load"),
    ("time_limit NaN", {"time_limit": math.nan}, "time_limit", "nan"),
    ("time_limit inf", {"time_limit": math.inf}, "time_limit", "inf"),
    ("time_limit 0", {"time_limit": 0}, "time_limit", "got 0"),
    ("time_limit -1", {"time_limit": -1}, "time_limit", "-1"),
    ("time_limit 1e300", {"time_limit": 1e300}, "time_limit", "1e+300"),
    ("procs 0", {"procs": [0, 16]}, "procs", "got 0"),
    ("procs 10^30", {"procs": [10 ** 30]}, "procs", "1000000000000000000000000000000"),
]


@pytest.mark.parametrize("what, change, key, text", BAD, ids=[b[0] for b in BAD])
def test_a_value_no_cell_can_run_is_refused_naming_the_key(tmp_path, capsys, what, change,
                                                           key, text):
    spec = {**tiny_spec(seeds=(0,)), **change}
    path = write_json(tmp_path / "bad.json", spec)
    with pytest.raises(SpecError):
        expand(spec, str(path))
    err = refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])
    assert f"bad.json: {key}:" in err and text in err
    assert len(err) < 300
    assert not (tmp_path / "o.sqlite").exists()


def _trace_cases(tmp_path):
    (tmp_path / "w.kswf").write_text("; KResource: 2\n; Capacities: 8 8\n" + SWF_LINE)
    (tmp_path / "w.swf.gz").write_bytes(gzip.compress(
        b"; KResource: 2\n; Capacities: 8 8\n" + SWF_LINE.encode()))
    (tmp_path / "words.swf").write_text("; a header\nroot:x:0:0:root:/root:/bin/sh\n")
    (tmp_path / "short.swf").write_text("1 0 0 100 4\n")
    (tmp_path / "empty.swf").write_text("; only a header\n")
    (tmp_path / "adir.swf").mkdir()
    (tmp_path / "dangling.swf").symlink_to(tmp_path / "nowhere")
    return [
        ("w.kswf", "K-resource"),
        ("w.swf.gz", "K-resource"),
        ("words.swf", "not an SWF job line"),
        ("short.swf", "not an SWF job line"),
        ("empty.swf", "no job line"),
        ("adir.swf", "not a regular file"),
        ("dangling.swf", "not a regular file"),
        ("../../etc/passwd-no-such", "no such file"),
        ("/etc/passwd", "not an SWF"),
        ("/dev/zero", "not a regular file"),
    ]


def test_a_trace_the_cells_cannot_read_is_refused_by_the_spec_check(tmp_path, capsys):
    for trace, text in _trace_cases(tmp_path):
        if trace.startswith("/") and not os.path.exists(trace):
            continue
        spec = tiny_spec(seeds=(0,), workloads=[_trace_workload(trace)])
        path = write_json(tmp_path / "bad.json", spec)
        err = refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])
        assert "bad.json: workloads[0].trace:" in err and text in err, (trace, err)
        assert not (tmp_path / "o.sqlite").exists()


def test_a_readable_swf_trace_passes_the_spec_check(tmp_path):
    (tmp_path / "ok.swf").write_text("; MaxProcs: 8\n" + SWF_LINE)
    spec = tiny_spec(seeds=(0,), workloads=[_trace_workload("ok.swf")])
    assert len(expand(spec, str(tmp_path / "spec.json"))) == 2 * 4


@pytest.mark.timed
def test_a_huge_grid_is_counted_not_built(tmp_path, capsys):
    spec = tiny_spec(seeds=tuple(range(1000)), procs=list(range(1, 1001)),
                     workloads=[_synthetic(load=[0.1 + i / 1000 for i in range(1000)])])
    path = write_json(tmp_path / "big.json", spec)
    t0 = time.perf_counter()
    err = refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite")])
    assert time.perf_counter() - t0 < 20
    assert "big.json: workloads:" in err and f"{MAX_CELLS:,}" in err
    assert "seeds (1000)" in err and "procs (1000)" in err \
        and "workloads[0].synthetic.load (1000)" in err
    assert len(err) < 400
    assert not (tmp_path / "o.sqlite").exists()


def test_the_count_matches_the_expansion():
    spec = tiny_spec(overrun=["kill", "run"])
    from sim.sweep.spec import check_spec

    assert count_cells(check_spec(spec)) == len(expand(spec)) == 3 * 2 * 2 * 4 * 2


def test_worker_count_is_capped_by_the_cells_and_the_machine():
    cores = os.cpu_count() or 1
    assert worker_count(24, 4) == min(4, cores)
    assert worker_count(100_000, 10 ** 6) == cores
    assert worker_count(None, 1) == 1
    assert worker_count(3, 0) == 1


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_is_refused(tmp_path, capsys, jobs):
    path = write_json(tmp_path / "tiny.json", tiny_spec(seeds=(0,)))
    err = refused(capsys, ["sweep", str(path), "--out", str(tmp_path / "o.sqlite"),
                           "--jobs", jobs])
    assert f"--jobs {jobs}" in err
    assert not (tmp_path / "o.sqlite").exists()


def test_many_jobs_for_few_cells_start_few_workers(tmp_path, monkeypatch):
    import concurrent.futures

    started = []
    real = concurrent.futures.ProcessPoolExecutor

    def pool(*args, **kwargs):
        started.append(kwargs.get("max_workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    spec = tiny_spec(seeds=(0,), procs=[16], policies=[{"name": "fcfs"}, {"name": "easy"}])
    s = run_sweep(spec, tmp_path / "o.sqlite", jobs=100_000)
    assert (s.done, s.failed) == (4, 0)
    assert all(n <= min(4, os.cpu_count() or 1) for n in started)
