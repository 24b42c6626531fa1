"""slack_bench refuses bad options before its long run, in one line with exit code 2."""

from __future__ import annotations

import time

import pytest

from sim.experiments.talby import insertion_bench as slack_bench


@pytest.mark.timed
@pytest.mark.parametrize("argv, word", [
    (["--out", "results/x.md"], "--out"),     # a path: the table is written into results/
    (["--out", ".."], "--out"),
    (["--before", "[1, 2]"], "--before"),     # not a JSON object
    (["--before", "{fine"], "--before"),      # not JSON
])
def test_bad_options_exit_2_at_once(argv, word, capsys):
    t = time.perf_counter()
    assert slack_bench.main(argv) == 2
    assert time.perf_counter() - t < 5          # refused before any snapshot is solved
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"slack_bench: {word}")
