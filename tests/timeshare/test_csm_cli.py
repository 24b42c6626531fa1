"""``schedsearch csm``: a checked run, and bad input as a one-line error with exit code 2."""

from __future__ import annotations

import json

import pytest

from sim.cli import main


def test_csm_cli_runs_and_checks(capsys):
    assert main(["csm", "--nodes", "4", "--jobs", "20", "--policies", "pred,csm",
                 "--check", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["policy"] for r in out["rows"]] == ["pred", "csm"]
    assert all(r["checked"]["complete"] == 1 for r in out["rows"])


@pytest.mark.parametrize("argv,field", [
    (["--mem-pages", "0"], "mem_pages"), (["--mem-pages", "-3"], "mem_pages"),
    (["--mnol", "-1"], "mnol"), (["--mnod", "-2"], "mnod"), (["--p", "1.5"], "p"),
    (["--pdt", "-0.1"], "pdt"), (["--nodes", "4", "--mem-load", "0"], "mem_load"),
    # an option no policy of the run reads is refused, not recorded as if it had acted
    (["--policies", "rr", "--mnol", "3"], "--mnol: round robin (rr) does not use it"),
    (["--policies", "rr", "--p", "0.5"], "--p: round robin (rr) does not use it"),
])
def test_csm_cli_bad_input(argv, field, capsys):
    assert main(["csm", "--jobs", "5", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and "Traceback" not in err
