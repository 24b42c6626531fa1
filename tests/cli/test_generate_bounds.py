"""Generators refuse up front what the project's own readers would refuse afterwards:
``generate lublin`` takes at most ``MAX_JOBS`` jobs and ``2**53`` processors (the SWF
reader's bound), and integer options are plain decimals (no ``1_000``, no ``1e12``)."""

from __future__ import annotations

import pytest

from instances import lublin
from sim.cli import main


@pytest.mark.parametrize(("option", "value"), [
    ("--jobs", str(10**12)), ("--jobs", "1e12"), ("--jobs", "1_000"), ("--jobs", "0"),
    ("--procs", str(2**63)), ("--procs", str(2**53 + 1)), ("--procs", "6_4"),
    ("--procs", "7"),
])
def test_lublin_refuses_out_of_range_sizes_by_name(tmp_path, capsys, option, value):
    args = {"--jobs": "10", "--procs": "64", option: value}
    out = tmp_path / "w.swf"
    argv = ["generate", "lublin", *[x for kv in args.items() for x in kv], "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: must be an integer in [" in err
    assert not out.exists()


def test_the_largest_machine_accepted_is_read_back(tmp_path, capsys):
    out = tmp_path / "w.swf"
    assert main(["generate", "lublin", "--jobs", "10", "--procs", str(2**53),
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["simulate", str(out), "--policy", "fcfs", "--quiet"]) == 0
    assert f"{2**53} processors" in capsys.readouterr().out


def test_the_model_itself_refuses_beyond_its_limits():
    with pytest.raises(ValueError, match=r"procs must be an integer in \[8, 2\*\*53\]"):
        lublin.sample(5, 2**63, 0)
    with pytest.raises(ValueError, match="n_jobs must be an integer in"):
        lublin.sample(lublin.MAX_JOBS + 1, 64, 0)


@pytest.mark.parametrize("argv", [
    ["generate", "kresource", "--K", "1_0", "--rate", "1"],
    ["generate", "kresource", "--K", "2", "--jobs", "1_000", "--rate", "1"],
    ["generate", "grouping", "--n", "1_0"],
])
def test_generators_refuse_underscored_integers(tmp_path, capsys, argv):
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert "must be an integer in [" in capsys.readouterr().err
