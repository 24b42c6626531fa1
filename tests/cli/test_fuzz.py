"""Random SWF files and problem JSON through the command line: exit 0 or 2, never a
traceback or an internal error."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim.cli import main

TOKENS = st.one_of(
    st.integers(-3, 40).map(str),
    st.sampled_from(["-1", "0", "1e300", "1.5", "7.0", "nan", "inf", "1_000", "٣", "x",
                     str(2**64), str(-(2**70)), "9" * 30, "+5", "0x10", "1e-5", "-0"]),
)
HEADERS = st.lists(st.sampled_from([
    "; MaxProcs: 8", ";        MaxProcs: 16", "; MaxNodes: 70  (dual)", "; MaxProcs: 0",
    "; MaxProcs: x", "; UnixStartTime: 0", ";   UnixStartTime: 843480031",
    "; UnixStartTime: 99999999999999999", "; TimeZone: 3600", "; TimeZone: 999999",
    "; TimeZoneString: Europe/Stockholm", "; TimeZoneString: Nowhere/Else", ";",
    "; Note: a note", ";       continued", "; MaxProcs: 8", "; Queue: 1 batch",
]), max_size=6)
LINES = st.lists(st.lists(TOKENS, min_size=17, max_size=19).map(" ".join), max_size=6)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(header=HEADERS, lines=LINES, split=st.sampled_from([None, "--by-month", "--by-week"]),
       procs=st.sampled_from([None, "8", "from-jobs"]))
def test_random_swf_never_crashes(tmp_path, capsys, header, lines, split, procs):
    path = tmp_path / "fuzz.swf"
    path.write_text("".join(h + "\n" for h in header) + "".join(x + "\n" for x in lines))
    argv = ["simulate", str(path), "--policy", "conservative", "--quiet", "--json"]
    argv += [split] if split else []
    argv += ["--procs", procs] if procs else []
    code = main(argv)
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and str(path) in err


JSONS = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)),
    lambda kids: st.one_of(st.lists(kids, max_size=4),
                           st.dictionaries(st.sampled_from(
                               ["problem", "jobs", "name", "procs", "refs", "curve", "m",
                                "points", "processors", "memory", "latency", "slice_length",
                                "slices", "now", "capacity", "running", "waiting", "new"]),
                               kids, max_size=5)),
    max_leaves=12)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=JSONS, family=st.sampled_from(["grouping", "slack_insertion", None]))
def test_random_problem_json_never_crashes(tmp_path, capsys, data, family):
    if family is not None and isinstance(data, dict):
        data = {**data, "problem": family}
    path = tmp_path / "fuzz.json"
    path.write_text(json.dumps(data))
    solver = "greedy" if family != "slack_insertion" else "AST"
    code = main(["solve", str(path), "--solver", solver, "--time-limit", "1"])
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and str(path) in err
