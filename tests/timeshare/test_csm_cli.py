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
    (["--policies", "rr", "--mnol", "3"], "--mnol: no policy of --policies rr reads it"),
    (["--policies", "rr", "--p", "0.5"], "--p: no policy of --policies rr reads it"),
    (["--policies", "dyn", "--mnol", "3"], "--mnol: no policy of --policies dyn reads it"),
    (["--policies", "rr,dyn-top", "--mnod", "1", "--mnol", "3"],
     "--mnol, --mnod: no policy of --policies rr,dyn-top reads them"),
])
def test_csm_cli_bad_input(argv, field, capsys):
    assert main(["csm", "--jobs", "5", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and "Traceback" not in err


@pytest.mark.parametrize("mode", ["rr", "pred", "dyn", "csm"])
def test_each_policy_reads_the_options_it_is_said_to(mode):
    """``csm`` refuses an option no selected policy reads by the table
    heuristics.coscheduling.READS: a run under memory pressure (every branch of
    Algorithm 1 taken) reads exactly the options the table gives its mode."""
    from heuristics.coscheduling import READS, Coscheduling
    from sim.timeshare.csm import run_point
    from sim.timeshare.workload import CSMConfig

    class Recording(Coscheduling):
        def __getattribute__(self, name):
            if name in ("mnol", "mnod", "p") and object.__getattribute__(self, "_recording"):
                object.__getattribute__(self, "_read").add(name)
            return object.__getattribute__(self, name)

    pol = Recording(mode, quantum_us=100_000)
    pol._read, pol._recording = set(), True
    cfg = CSMConfig(n_nodes=4, n_jobs=40, mem_pages=4096, mest=1024, tc_scale=0.002,
                    mem_scale=0.05, small_sizes=(1, 2), large_sizes=(4,), mfreq_ms=50.0,
                    mem_load=1.5)
    run_point(cfg, pol, 1)
    assert pol._read == READS[mode]
