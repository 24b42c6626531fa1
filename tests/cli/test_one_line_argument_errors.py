"""A misspelt or out-of-range option is one line on stderr and exit 2 on every command
line a user reaches: each ``schedsearch reproduce NAME`` (whose options the studies'
own parsers read) and ``schedsearch gym-eval`` (its own parser), not argparse's usage
block followed by the error."""

from __future__ import annotations

import pytest

from sim.cli import main
from sim.sweep.reproduce import REPRODUCTIONS


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "usage:" not in err[0] and "Traceback" not in err[0]
    return err[0]


@pytest.mark.parametrize("name", sorted(REPRODUCTIONS))
def test_a_reproduction_refuses_an_unknown_option_in_one_line(name, capsys):
    """... and names the command the user typed, not the study's module."""
    assert main(["reproduce", name, "--no-such-option", "1"]) == 2
    line = _one_error_line(capsys)
    assert "--no-such-option" in line and "python -m" not in line, line
    assert f"reproduce {name}" in line, line


@pytest.mark.parametrize("name", sorted(n for n in REPRODUCTIONS if " " in REPRODUCTIONS[n]))
def test_a_reproductions_help_leaves_out_what_its_name_stands_for(name, capsys):
    """``reproduce gine-fig4 --help`` runs the study's ``main(["fig4", "--help"])``: the
    figure is given by the name, so the usage does not ask the user for it."""
    assert main(["reproduce", name, "--help"]) == 0
    out = capsys.readouterr().out
    usage = out.split("\n\n")[0]
    assert usage.startswith(f"usage: schedsearch reproduce {name} [-h]"), usage
    assert "positional arguments" not in out and "figure" not in usage.split("]")[-1], out


@pytest.mark.parametrize("argv,option", [
    (["--windows", "0"], "--windows"), (["--seed", "-1"], "--seed"),
    (["--time-limit", "nan"], "--time-limit"), (["--bogus"], "--bogus"),
])
def test_gym_eval_refuses_a_bad_option_in_one_line_naming_it(argv, option, capsys):
    pytest.importorskip("gymnasium")
    assert main(["gym-eval", *argv]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("schedsearch gym-eval: error:") and option in line


@pytest.mark.parametrize("extra,needle", [
    (["--priorities", "fifth"], "--priorities"), (["--sf", "2"], "['sf']"),
])
def test_compare_refuses_before_it_reads_and_describes_the_trace(extra, needle, capsys):
    """``--procs from-jobs`` says the machine size it chose once the trace is read: an
    option refused for the policies compared is refused before, alone on stderr."""
    argv = ["compare", "NASA-iPSC", "--policies", "easy,sjbf", "--procs", "from-jobs",
            "--quiet", *extra]
    assert main(argv) == 2
    assert needle in _one_error_line(capsys)


@pytest.mark.parametrize("argv", [
    ["simulate", "NASA-iPSC", "--policy", "selective"],
    ["compare", "NASA-iPSC", "--policies", "easy,selective"],
    ["simulate", "NASA-iPSC", "--policy", "slack", "--order", "exhaustive"],
])
def test_a_policy_the_compiled_engine_does_not_run_is_refused_before_the_trace(argv, capsys):
    assert main([*argv, "--engine", "compiled", "--procs", "from-jobs", "--quiet"]) == 2
    assert "--engine compiled: the compiled engine does not support" in _one_error_line(capsys)


@pytest.mark.parametrize("argv, needle", [
    (["simulate", "lublin_256", "--policy", "easy", "--set", "select=bb", "--set",
      "select=ff"], "--set select: given more than once"),
    (["compare", "lublin_256", "--policies", "easy", "--set", "window=1", "--set",
      "window=2"], "--set window: given more than once"),
    (["generate", "kresource_epochs", "--n", "1", "--size", "n=3", "--size", "n=4",
      "--out", "{tmp}/g"], "--size n: given more than once"),
])
def test_a_key_repeated_in_key_value_options_is_refused(argv, needle, capsys, tmp_path):
    """``--set``/``--size`` given the same key twice: which value was meant is unknowable,
    so the run is refused instead of keeping the last one."""
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert needle in _one_error_line(capsys)
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("argv,option", [
    (["simulate", "NASA-iPSC", "--policy", "easy", "--policy", "fcfs"], "--policy"),
    (["solve", "p.json", "--solver", "cpsat", "--time-limit", "1", "--time-limit=2"],
     "--time-limit"),
    (["generate", "kresource_epochs", "--n", "2", "--n", "3", "--out", "x"], "--n"),
    (["report", "r.sqlite", "--keys", "--keys"], "--keys"),
    (["reproduce", "gine-fig4", "--quick", "--seeds", "2", "--seeds", "3"], "--seeds"),
])
def test_an_option_given_twice_is_refused_not_the_last_kept(argv, option, tmp_path,
                                                             monkeypatch, capsys):
    """argparse keeps the last of a repeated option silently; every parser of the project
    (sim.argparser.Parser) refuses it in one line, before anything is read or written."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert f"error: option {option} given twice" in _one_error_line(capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv,dest,values", [
    (["report", "r.sqlite", "--where", "a=1", "--where", "b=2"], "where", ["a=1", "b=2"]),
    (["simulate", "NASA-iPSC", "--policy", "easy", "--set", "a=1", "--set", "b=2"], "set",
     ["a=1", "b=2"]),
    (["generate", "kresource_epochs", "--n", "2", "--size", "n=9", "--size", "K=3", "--out",
      "x"], "size", ["n=9", "K=3"]),
])
def test_the_repeatable_options_still_collect_every_value(argv, dest, values):
    """The options documented as repeatable (action="append") keep working."""
    from sim.cli import build_parser

    assert getattr(build_parser(argv[0]).parse_args(argv), dest) == values
