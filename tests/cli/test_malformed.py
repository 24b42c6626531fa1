"""A corpus of malformed inputs run through the command line.

Every case is generated here as a small file, run in-process through ``sim.cli.main``
(fast), and asserts the exit code, that stderr holds no traceback, and the message: one
line naming the file and the line or field. A few cases also run in a subprocess to prove
that no traceback reaches the terminal and that a closed pipe ends quietly.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sim.cli import main

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = ROOT / "instances" / "data" / "slack_snapshots" / "kth-1996-10-insert-2679234-k16.json"

JOB1 = "1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"
JOB2 = "2 3600 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1"
HEADER = "; MaxProcs: 8\n"


def job(**changes: str) -> str:
    """JOB2 with fields replaced (1-based field number -> token)."""
    parts = JOB2.split()
    for k, v in changes.items():
        parts[int(k[1:]) - 1] = v
    return " ".join(parts)


def swf(header: str = HEADER, *jobs: str) -> bytes:
    return (header + "".join(j + "\n" for j in (jobs or (JOB1, JOB2)))).encode("utf-8")


def grouping(**changes) -> dict:
    """A small valid grouping problem, with top-level fields replaced."""
    d = {"problem": "grouping", "processors": 2, "memory": 10, "latency": 1e-4,
         "slice_length": 0.1,
         "jobs": [{"name": n, "procs": 1, "refs": 1e5, "curve": {"m": [1, 0.5, 0.1]}}
                  for n in ("a", "b", "c")]}
    d.update(changes)
    return d


def with_curve(curve) -> dict:
    d = grouping()
    d["jobs"][0]["curve"] = curve
    return d


def insertion(**changes) -> dict:
    d = json.loads(SNAPSHOT.read_text())
    d.update(changes)
    return d


# (id, file name, file content (bytes, or JSON data), extra argv, exit code, message regex)
# The file's path replaces "{f}" in argv and in the message; trace commands run
# "simulate FILE --policy easy --quiet --json" unless argv starts with a command.
SWF_CASES = [
    ("right-aligned header", "r.swf", swf(";        MaxProcs: 140\n;   UnixStartTime: 0\n"),
     [], 0, None),
    ("trailing comment", "c.swf", swf(";        MaxNodes: 70  (dual)\n"), [], 0, None),
    ("no header", "n.swf", swf(""), [], 2,
     r"{f}: no machine size in the header .*--procs N .*--procs from-jobs"),
    ("no header, --procs from-jobs", "n.swf", swf(""), ["--procs", "from-jobs"], 0, None),
    ("MaxProcs 0", "z.swf", swf("; MaxProcs: 0\n"), [], 2,
     r"{f}:1: header MaxProcs is not a positive processor count \('0'\); give the machine "
     r"size with --procs N"),
    ("MaxProcs negative", "z.swf", swf("; MaxProcs: -5\n"), [], 2, r"{f}:1: header MaxProcs"),
    ("MaxProcs repeated, different", "z.swf", swf("; MaxProcs: 8\n;   MaxProcs: 16\n"), [], 2,
     r"{f}:1,2: header MaxProcs .*\['8', '16'\]"),
    ("MaxProcs 1,024", "z.swf", swf("; MaxProcs: 1,024\n"), [], 2, r"{f}:1: header MaxProcs"),
    ("unknown submit", "u.swf", swf(HEADER, JOB1, job(f2="-1")), [], 0, None),
    ("utf-8 BOM", "b.swf", b"\xef\xbb\xbf" + swf(), [], 0, None),
    ("1_000", "d.swf", swf(HEADER, JOB1, job(f4="1_000")), [], 2,
     r"{f}:3: field 4 \(run time\) is not a number: '1_000'"),
    ("non-ASCII digits", "d.swf", swf(HEADER, JOB1, job(f9="٢٠")), [], 2,
     r"{f}:3: field 9 \(requested time\) is not a number"),
    ("run time 1e300", "o.swf", swf(HEADER, JOB1, job(f4="1e300")), [], 2,
     r"{f}:3: field 4 \(run time\) is out of range"),
    ("request 1e300", "o.swf", swf(HEADER, JOB1, job(f9="1e300")), [], 2,
     r"{f}:3: field 9 \(requested time\) is out of range"),
    ("submit beyond 64 bits", "o.swf", swf(HEADER, JOB1, job(f2=str(2**64 + 1))), [], 2,
     r"{f}:3: field 2 \(submit time\) is out of range"),
    ("processors beyond 64 bits", "o.swf", swf(HEADER, JOB1, job(f5=str(2**70))), [], 2,
     r"{f}:3: field 5 \(allocated processors\) is out of range"),
    ("megabyte token", "o.swf", swf(HEADER, JOB1, job(f4="7" * 2_000_000 + "x")), [], 2,
     r"{f}:3: field 4 \(run time\) is not a number: '7777.*\.\.\.$"),
    ("17 fields", "f.swf", swf(HEADER, JOB1, " ".join(JOB2.split()[:-1])), [], 2,
     r"{f}:3: expected 18 fields, found 17"),
    ("corrupt gzip", "g.swf.gz", b"\x1f\x8b" + b"garbage" * 10, [], 2, r"{f}: corrupt gzip"),
    ("by month, header but no jobs", "e.swf",
     b"; MaxProcs: 8\n; UnixStartTime: 0\n", ["--by-month"], 2,
     r"{f}: no jobs to simulate by month"),
    ("by month, start time out of range", "t.swf",
     swf("; MaxProcs: 8\n; UnixStartTime: 99999999999999999\n"), ["--by-month"], 2,
     r"{f}: cannot split by month: UnixStartTime 99999999999999999 .* outside the dates"),
    ("by month, time zone out of range", "t.swf",
     swf("; MaxProcs: 8\n; UnixStartTime: 0\n; TimeZone: 999999\n"), ["--by-month"], 2,
     r"{f}: cannot split by month: header TimeZone = '999999' is not an offset"),
    ("by month, unknown time zone name", "t.swf",
     swf("; MaxProcs: 8\n; UnixStartTime: 0\n; TimeZoneString: Mars/Olympus\n"),
     ["--by-month"], 2, r"{f}: cannot split by month: header TimeZoneString = 'Mars/Olympus'"),
    ("by month, no start time", "t.swf", swf(), ["--by-month"], 2,
     r"{f}: cannot split by month: no integer UnixStartTime"),
    ("by week, header but no jobs", "e.swf",
     b"; MaxProcs: 8\n; UnixStartTime: 0\n", ["--by-week"], 2,
     r"{f}: no jobs to simulate by week"),
    ("by week, start time out of range", "t.swf",
     swf("; MaxProcs: 8\n; UnixStartTime: 99999999999999999\n"), ["--by-week"], 2,
     r"{f}: cannot split by week: UnixStartTime 99999999999999999 .* outside the dates"),
    ("by week, time zone out of range", "t.swf",
     swf("; MaxProcs: 8\n; UnixStartTime: 0\n; TimeZone: 999999\n"), ["--by-week"], 2,
     r"{f}: cannot split by week: header TimeZone = '999999' is not an offset"),
    ("by week, no start time", "t.swf", swf(), ["--by-week"], 2,
     r"{f}: cannot split by week: no integer UnixStartTime"),
    ("--out is the input", "i.swf", swf(), ["--out", "{f}"], 2,
     r"--out {f}: refusing to overwrite the input trace"),
    ("--out in a missing directory", "i.swf", swf(), ["--out", "{d}/no/such/dir/o.swf"], 2,
     r"--out .*o\.swf: directory .* does not exist"),
    ("--procs 0", "i.swf", swf(), ["--procs", "0"], 2,
     r"argument --procs: must be a positive integer or 'from-jobs', got '0'"),
    ("--procs text", "i.swf", swf(), ["--procs", "many"], 2, r"argument --procs: must be"),
    ("--time-limit nan", "i.swf", swf(), ["--time-limit", "nan"], 2,
     r"argument --time-limit: must be a finite number of seconds >= 0, got 'nan'"),
    ("--time-limit inf", "i.swf", swf(), ["--time-limit", "inf"], 2, r"argument --time-limit"),
    ("--time-limit negative", "i.swf", swf(), ["--time-limit", "-1"], 2,
     r"argument --time-limit"),
]

PROBLEM_CASES = [
    ("'problem' is a list", "p.json", grouping(problem=["grouping"]), [], 2,
     r"{f}: field 'problem' = \['grouping'\] is unknown"),
    ("'problem' is an object", "p.json", grouping(problem={"a": 1}), [], 2,
     r"{f}: field 'problem' = \{'a': 1\} is unknown"),
    ("'problem' of a megabyte", "p.json", grouping(problem="x" * 1_000_000), [], 2,
     r"{f}: field 'problem' = 'xxxx.*\.\.\. is unknown"),
    ("top level is a list", "p.json", [grouping()], [], 2,
     r"{f}: the problem must be a JSON object, got list"),
    ("curve is a number", "p.json", with_curve(5), [], 2,
     r"{f}: jobs\[0\]\.curve: expected an object"),
    ("curve 'm' is a number", "p.json", with_curve({"m": 5}), [], 2,
     r"{f}: jobs\[0\]\.curve: .*field 'm' must be a list"),
    ("curve points at x = 1e9", "p.json", with_curve({"points": [[0, 1], [1e9, 0.1]]}), [],
     2, r"{f}: jobs\[0\]\.curve: .*at most 4194304 blocks, got 1e\+09"),
    ("slices 1e30", "p.json", grouping(slices=10**30), [], 2,
     r"{f}: grouping problem: field 'slices' must be an integer in \[1, 3\]"),
    ("nested 100,000 deep", "p.json", b"[" * 100_000 + b"]" * 100_000, [], 2,
     r"{f}: JSON nested too deeply"),
    ("not UTF-8", "p.json", b'{"problem": "grouping", "name": "caf\xe9"}', [], 2,
     r"{f}: not UTF-8 text \(byte 36\)"),
    ("invalid JSON", "p.json", b'{"problem": "grouping",\n  oops}', [], 2,
     r"{f}: line 2: invalid JSON"),
    ("a key twice in one object", "p.json",
     b'{"problem": "grouping", "processors": 2, "processors": 4}', [], 2,
     r"{f}: invalid JSON: key 'processors' appears twice in one object"),
    ("integer of 5000 digits", "p.json", b'{"processors": ' + b"9" * 5000 + b"}", [], 2,
     r"{f}: invalid JSON: .*4300 digits"),
    ("no 'problem' field", "p.json", {"jobs": []}, [], 2, r"{f}: missing field 'problem'"),
    ("insertion field error names the file", "s.json", insertion(capacity=10**30),
     ["--solver", "AST"], 2, r"{f}: field 'capacity' must be <= 9007199254740992"),
    ("insertion waiting is a number", "s.json", insertion(waiting=5), ["--solver", "AST"], 2,
     r"{f}: field 'waiting' must be a list, got 5"),
    ("exact model on too many groups", "big.json",
     grouping(processors=64, jobs=[{"name": f"j{i}", "procs": 1, "refs": 1e5,
                                    "curve": {"m": [1, 0.5]}} for i in range(200)]),
     ["--solver", "exact-cpsat"], 2,
     r"{f}: grouping problem: more than 100000 feasible groups of its 200 jobs; the exact "
     r"models cannot hold them in memory: use a heuristic"),
    ("unknown solver", "p.json", grouping(), ["--solver", "nosuch"], 2,
     r"unknown solver 'nosuch' for problem 'grouping'"),
    ("seed beyond 64 bits", "p.json", grouping(), ["--seed", str(2**64)], 2,
     r"argument --seed: must be an integer in \[0, 2\*\*63 - 1\]"),
    ("negative seed", "p.json", grouping(), ["--seed", "-1"], 2, r"argument --seed"),
    ("--time-limit negative", "p.json", grouping(), ["--time-limit", "-0.5"], 2,
     r"argument --time-limit: must be a finite number of seconds >= 0"),
]


def _write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(json.dumps(content))
    return path


def _check(capsys, argv: list[str], code: int, message: str | None) -> tuple[str, str]:
    got = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    assert got == code, (argv, err)
    if code == 0:
        assert "error" not in err
    else:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err  # one line
        assert len(lines[0]) < 700  # never echoes megabytes
        assert re.match(r"schedsearch( \w+)?: error: ", lines[0]), lines[0]
        assert message is not None
        assert re.search(message, lines[0]), (message, lines[0])
    return out, err


def _fill(items: list[str], path: Path, tmp_path: Path) -> list[str]:
    return [a.replace("{f}", str(path)).replace("{d}", str(tmp_path)) for a in items]


@pytest.mark.parametrize("case", SWF_CASES, ids=[c[0] for c in SWF_CASES])
def test_trace_input(tmp_path, capsys, case):
    _, name, content, extra, code, message = case
    path = _write(tmp_path, name, content)
    before = path.read_bytes()
    argv = ["simulate", str(path), "--policy", "easy", "--quiet", "--json",
            *_fill(extra, path, tmp_path)]
    msg = None if message is None else message.replace("{f}", str(path).replace(".", r"\."))
    out, err = _check(capsys, argv, code, msg)
    assert path.read_bytes() == before  # the input is never written
    if code == 0:
        row = json.loads(out)
        assert row["jobs"] == row["cleaning"]["jobs_kept"] > 0
        if "from-jobs" in extra:
            assert row["procs"] == 4 and "machine size 4 processors" in err
        if name == "r.swf":
            assert row["procs"] == 140
        if name == "c.swf":
            assert row["procs"] == 70
        if name == "u.swf":
            assert row["cleaning"]["counts"]["unknown_submit"] == 1 and row["jobs"] == 1


@pytest.mark.parametrize("case", PROBLEM_CASES, ids=[c[0] for c in PROBLEM_CASES])
def test_problem_input(tmp_path, capsys, case):
    _, name, content, extra, code, message = case
    path = _write(tmp_path, name, content)
    if "--solver" not in extra:
        extra = ["--solver", "greedy", *extra]
    msg = message.replace("{f}", str(path).replace(".", r"\."))
    _check(capsys, ["solve", str(path), *extra], code, msg)


def test_valid_problem_still_solves(tmp_path, capsys):
    path = _write(tmp_path, "ok.json", grouping())
    out, _ = _check(capsys, ["solve", str(path), "--solver", "exact-cpsat", "--json",
                             "--time-limit", "5", "--seed", str(2**63 - 1)], 0, None)
    assert json.loads(out)["status"] == "OPTIMAL"


def test_out_refuses_the_input_through_another_path(tmp_path, capsys):
    path = _write(tmp_path, "i.swf", swf())
    other = tmp_path / "sub" / ".." / "i.swf"
    (tmp_path / "sub").mkdir()
    _check(capsys, ["simulate", str(path), "--policy", "easy", "--quiet", "--out", str(other)],
           2, r"refusing to overwrite the input trace")
    gz = _write(tmp_path, "i.swf.gz", gzip.compress(swf()))
    _check(capsys, ["simulate", str(gz), "--policy", "easy", "--quiet", "--out", str(gz)],
           2, r"refusing to overwrite the input trace")


# ---------------------------------------------------------------- real processes

def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, **kw)


def test_subprocess_errors_have_no_traceback(tmp_path):
    bad = _write(tmp_path, "o.swf", swf(HEADER, JOB1, job(f4="1e300")))
    deep = _write(tmp_path, "deep.json", b"[" * 100_000 + b"]" * 100_000)
    for args, what in ((["simulate", str(bad), "--policy", "easy"], "out of range"),
                       (["solve", str(deep), "--solver", "greedy"], "nested too deeply"),
                       (["solve", str(deep), "--solver", "greedy", "--seed", "1e3"],
                        "argument --seed")):
        p = _run(args)
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and what in p.stderr


def test_closed_pipe_ends_quietly():
    p = subprocess.Popen([sys.executable, "-m", "sim.cli", "traces"], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # like `| head` exiting before the first line
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    p.stderr.close()
    assert err == "" and p.returncode == 0
