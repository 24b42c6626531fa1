"""Formats both ways: `convert` between SWF, .kswf and Batsim JSON; `simulate --out` by the
name's end, refusing the others."""

from __future__ import annotations

import csv
import json

import pytest

from instances.batsim import read_batsim
from instances.bundled import load_trace
from instances.kresource import KResourceSpec, generate, read_kswf, write_kswf
from instances.swf import read_swf
from sim.cli import main


def test_swf_to_batsim_to_swf_keeps_the_jobs(tmp_path, capsys):
    js, sw = tmp_path / "l.json", tmp_path / "l.swf"
    assert main(["convert", "lublin_256", str(js), "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "batsim"
    w = load_trace("lublin_256")
    assert read_batsim(js).jobs == w.jobs
    assert main(["convert", str(js), str(sw), "--quiet"]) == 0
    assert read_swf(sw).jobs == w.jobs


def test_convert_kswf_and_refusals(tmp_path, capsys):
    src = tmp_path / "w.kswf"
    write_kswf(src, generate(KResourceSpec(K=2, jobs=30, seed=1, rate=0.01)))
    assert main(["convert", str(src), str(tmp_path / "c.kswf"), "--quiet"]) == 0
    assert read_kswf(tmp_path / "c.kswf").jobs == read_kswf(src).jobs
    capsys.readouterr()
    for out, msg in ((tmp_path / "c.json", "K = 2"), (tmp_path / "c.txt", "unknown output"),
                     (src, "refusing to overwrite")):
        before = src.read_bytes()
        assert main(["convert", str(src), str(out), "--quiet"]) == 2
        assert msg in capsys.readouterr().err
        assert src.read_bytes() == before and (out == src or not out.exists())


@pytest.mark.parametrize("name,msg", [("s.json", "holds no schedule"), ("s.txt", "unknown"),
                                      ("s", "unknown")])
def test_simulate_out_refuses_unknown_formats_before_running(tmp_path, capsys, name, msg):
    out = tmp_path / name
    assert main(["simulate", "lublin_256", "--policy", "fcfs", "--quiet", "--out",
                 str(out)]) == 2
    assert msg in capsys.readouterr().err and not out.exists()


def test_simulate_out_batsim_in_jobs_csv_out(tmp_path, capsys):
    doc = {"nb_res": 8, "jobs": [
        {"id": "w0!x", "subtime": 0, "res": 4, "walltime": 100, "profile": "short"},
        {"id": "w0!y", "subtime": 5, "res": 8, "walltime": 50, "profile": "long"}],
        "profiles": {"short": {"type": "delay", "delay": 60},
                     "long": {"type": "delay", "delay": 40}}}
    src = tmp_path / "w.json"
    src.write_text(json.dumps(doc))
    assert main(["simulate", str(src), "--policy", "easy", "--quiet", "--out",
                 str(tmp_path / "jobs.csv")]) == 0
    with open(tmp_path / "jobs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["job_id"], r["profile"], r["starting_time"]) for r in rows] == [
        ("w0!x", "short", "0"), ("w0!y", "long", "60")]


def test_k_resource_schedule_only_as_kswf(tmp_path, capsys):
    src = tmp_path / "w.kswf"
    write_kswf(src, generate(KResourceSpec(K=2, jobs=20, seed=1, rate=0.01)))
    assert main(["simulate", str(src), "--policy", "easy", "--quiet", "--out",
                 str(tmp_path / "s.swf")]) == 2
    assert "written as .kswf" in capsys.readouterr().err
    assert not (tmp_path / "s.swf").exists()
