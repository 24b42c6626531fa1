"""Every numeric option of ``csm``, ``bsp`` and ``generate kresource`` given hostile values
(NaN, infinities, negative, zero, a 5,000-digit number) through the command line: exit 0
(a value the command can run, bounded in time) or exit 2 with one line naming the option
or its field, never a traceback, and nothing written.

The options are read from the parser itself, so a new option joins the corpus."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from sim.cli import build_parser, main

#: The smallest valid run of each command, to which one hostile option is added.
BASE = {
    "csm": ["--jobs", "4", "--nodes", "4", "--policies", "rr", "--scale", "0.001"],
    "bsp": ["--g-us", "100", "--n", "2", "--i", "1"],
    "generate kresource": ["--jobs", "5", "--K", "2", "--rate", "0.01", "--out", "{out}"],
}
VALUES = ["nan", "inf", "-inf", "-1", "0", "9" * 5000]


def _numeric_options(command: str) -> list[str]:
    sub = build_parser()
    for word in command.split():
        action = next(a for a in sub._actions if isinstance(a, argparse._SubParsersAction))
        sub = action.choices[word]
    out = []
    for a in sub._actions:
        if a.option_strings and a.type in (int, float) or \
                getattr(a.type, "__name__", "") in ("seconds_arg", "seed_arg"):
            out.append(a.option_strings[-1])
    return out


CASES = [pytest.param(cmd, opt, val, id=f"{cmd.replace(' ', '-')}{opt}={val[:8]}")
         for cmd in BASE for opt in _numeric_options(cmd) for val in VALUES
         if opt not in BASE[cmd] or val in ("nan", "-1")]


@pytest.mark.parametrize(("command", "option", "value"), CASES)
def test_hostile_numeric_option(command: str, option: str, value: str, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "w.kswf"
    base = [a.replace("{out}", str(out)) for a in BASE[command]]
    if option in base:
        i = base.index(option)
        base = base[:i] + base[i + 2:]
    code = main([*command.split(), *base, option, value])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code in (0, 2), err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and len(lines[0]) <= 500, err
        name = option.lstrip("-")
        fields = {name, name.replace("-", "_"), *name.split("-")}
        assert any(f in lines[0] for f in fields), lines[0]
        assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["w.kswf"])


def test_an_unknown_choice_names_the_closest_not_every_one(capsys) -> None:
    assert main(["reproduce", "talby-tabel3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and len(err) < 300, err
    assert "closest: talby-table3" in err and "karl-fig9m" not in err


def test_a_failed_write_names_the_output_file(tmp_path, capsys) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    code = main(["generate", "kresource", "--K", "2", "--jobs", "5", "--rate", "0.01",
                 "--out", "/dev/full"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "/dev/full: No space left on device" in err, err
