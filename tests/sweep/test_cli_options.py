"""CLI fixes: --set, --wide, full policy configuration and checksum in every run's JSON,
quiet broken pipes, help that lists names and never runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from instances.swf import write_swf
from instances.synthetic import random_workload
from sim.cli import main, parse_set

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def small_swf(tmp_path: Path) -> Path:
    path = tmp_path / "small.swf"
    write_swf(path, random_workload(120, (32,), seed=3, load=0.9))
    return path


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_set_passes_generic_options_and_the_old_flags_stay_aliases(small_swf, capsys):
    assert parse_set(["sf=3", "order=DP", "x=true", "y=none", "alpha-u=0.5"]) == \
        {"sf": 3, "order": "DP", "x": True, "y": "none", "alpha_u": 0.5}
    a = _json(capsys, ["simulate", str(small_swf), "--policy", "slack", "--set", "sf=5",
                       "--set", "order=DP", "--json", "--quiet"])
    b = _json(capsys, ["simulate", str(small_swf), "--policy", "slack", "--sf", "5",
                       "--order", "DP", "--json", "--quiet"])
    assert a["policy_config"] == b["policy_config"]
    assert a["policy_config"]["sf"] == 5 and a["policy_config"]["order"] == "DP"
    assert a["avg_wait"] == b["avg_wait"]
    c = _json(capsys, ["simulate", str(small_swf), "--policy", "conservative", "--set",
                       "compression=none", "--json", "--quiet"])
    assert c["policy_config"]["policy"] == "conservative"
    assert c["policy_config"]["compression"] == "none"
    assert c["policy_config"]["select"] == "ff"  # every default recorded too
    assert main(["simulate", str(small_swf), "--policy", "easy", "--set", "sf=3"]) == 2
    assert "does not take option(s) ['sf']" in capsys.readouterr().err
    assert main(["simulate", str(small_swf), "--policy", "slack", "--set", "sf"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err


def test_every_run_records_its_policy_configuration_and_trace_checksum(small_swf, capsys):
    import hashlib

    out = _json(capsys, ["simulate", str(small_swf), "--policy", "slack", "--json"])
    assert out["trace_sha256"] == hashlib.sha256(small_swf.read_bytes()).hexdigest()
    cfg = out["policy_config"]
    for k in ("order", "sf", "awt", "alpha_u", "alpha_t", "alpha_p", "alpha_f",
              "delay_from"):
        assert k in cfg
    cmp = _json(capsys, ["compare", str(small_swf), "--policies", "easy,slack", "--json"])
    assert all(r["trace_sha256"] == out["trace_sha256"] and "policy_config" in r
               for r in cmp["rows"])


def test_wide_jobs_are_an_error_unless_dropped_or_clipped(small_swf, capsys):
    assert main(["simulate", str(small_swf), "--procs", "16", "--policy", "easy"]) == 2
    err = capsys.readouterr().err
    assert "small.swf:" in err and "machine has 16" in err and "--wide" in err
    wide = {}
    for mode in ("drop", "clip"):
        out = _json(capsys, ["simulate", str(small_swf), "--procs", "16", "--policy", "easy",
                             "--wide", mode, "--json", "--quiet"])
        wide[mode] = out
    dropped = wide["drop"]["cleaning"]["counts"]["too_wide"]
    assert dropped > 0 and wide["drop"]["jobs"] == 120 - dropped
    assert wide["clip"]["cleaning"]["counts"]["too_wide_clipped"] == dropped
    assert wide["clip"]["jobs"] == 120


def test_wide_jobs_in_a_sweep_land_in_the_cleaning_report_of_every_row(small_swf, tmp_path):
    from sim.sweep import Store, run_sweep

    spec = {"version": 1, "name": "w", "procs": [16], "wide": "drop",
            "workloads": [{"name": "s", "trace": str(small_swf)}],
            "policies": [{"name": "fcfs"}, {"name": "easy"}]}
    run_sweep(spec, tmp_path / "w.sqlite")
    with Store.open(tmp_path / "w.sqlite", create=False) as st:
        rows = list(st.rows())
    assert len(rows) == 2
    assert all(r["cleaning"]["counts"]["too_wide"] > 0 for r in rows)
    assert all(r["metrics"]["jobs"] == r["cleaning"]["jobs_kept"] for r in rows)


def test_a_closed_pipe_ends_quietly():
    """``schedsearch ... | head``: the reader has gone before we write."""
    code = ("import os, sys; r, w = os.pipe(); os.close(r); os.dup2(w, 1); "
            "from sim.cli import main; sys.exit(main(['traces']))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.stderr == "" and p.returncode == 0


def test_help_lists_names_and_defaults_and_never_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv, names in ((["simulate", "--help"], ["conservative", "slack-optimal", "AST",
                                                  "DP", "default: kill", "--wide"]),
                        (["solve", "--help"], ["exact-cpsat", "cpsat", "brute"]),
                        (["reproduce", "--help"], ["talby-table1", "memory_fig2"])):
        assert main(argv) == 0  # --help exits 0 (main returns the code)
        out = " ".join(capsys.readouterr().out.split())
        for n in names:
            assert n in out, (argv, n)
    for name in ("talby-table1", "memory_fig2", "memory_gap"):
        assert main(["reproduce", name, "--help"]) == 0
        assert "usage" in capsys.readouterr().out.lower() or name == "memory_fig2"
    assert list(tmp_path.iterdir()) == []  # no store, no table: nothing ran


def test_every_paper_figure_is_a_reproduce_name_and_help_never_runs(tmp_path, capsys,
                                                                     monkeypatch):
    from sim.sweep.reproduce import REPRODUCTIONS, target

    monkeypatch.chdir(tmp_path)
    for prefix in ("talby-table", "leinberger-fig", "gine-fig", "karl-fig", "memory_"):
        assert any(n.startswith(prefix) for n in REPRODUCTIONS), prefix
    for name in REPRODUCTIONS:
        assert callable(target(name)), name  # every entry imports
    for name in ("leinberger-fig1", "gine-fig4", "karl-fig3"):
        assert main(["reproduce", name, "--help"]) == 0
        assert "usage" in capsys.readouterr().out.lower()
    assert list(tmp_path.iterdir()) == []  # --help wrote nothing


def test_leinberger_fig1_refuses_the_other_figures_options(tmp_path, capsys):
    """Figure 1 is the paper's fixed six-job instance: --K, --jobs or --seeds cannot act
    on it, so they are refused (they were accepted and the same figure written)."""
    out = tmp_path / "fig1"
    assert main(["reproduce", "leinberger-fig1", "--out", str(out), "--K", "7",
                 "--jobs", "3"]) == 2
    assert "fig1 does not read --K, --jobs (it takes --out)" in capsys.readouterr().err
    assert not out.exists()
    assert main(["reproduce", "leinberger-fig1", "--out", str(out)]) == 0
    assert (out / "fig1.json").exists()
