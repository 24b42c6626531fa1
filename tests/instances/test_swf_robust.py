"""SWF reader on the header layouts of the Parallel Workloads Archive and on hostile input:
every log is read right or refused with one line naming the file, the line and the
field."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from instances.bundled import list_traces, trace_path
from instances.months import split_months
from instances.swf import SwfError, read_swf

JOB = "1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"
JOB2 = "2 3600 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1"

# Left-aligned keys (the bundled logs), as written by the archive's conversions.
LEFT = """; Version: 2.2
; Computer: IBM SP2
; Information: http://www.pdc.kth.se/
;              http://www.cs.huji.ac.il/labs/parallel/workload/
; UnixStartTime: 843480031
; TimeZoneString: Europe/Stockholm
; MaxNodes: 100
; MaxProcs: 100
; Note: THIS IS A CLEANED VERSION OF THE LOG!
;       The filter used to produce it was
;         job<=14 (14 jobs removed)
"""

# Right-aligned keys (several archive logs align the colons).
RIGHT = """; Version: 2.2
;        Computer: Thinking Machines CM-5
;    Installation: Los Alamos National Lab (LANL)
;     Information: http://www.lanl.gov/
;                  http://www.cs.huji.ac.il/labs/parallel/workload/
;      Conversion: Dror Feitelson (feit@cs.huji.ac.il) 19 Dec 2011
;         MaxJobs: 2
;   UnixStartTime: 749458803
;        TimeZone: -25200
;  TimeZoneString: US/Mountain
;        MaxNodes: 140
;        MaxProcs: 140
;            Note: Scheduler is DJM
"""


def write(tmp_path: Path, header: str, *jobs: str, name: str = "log.swf") -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(j + "\n" for j in (jobs or (JOB, JOB2))))
    return path


def test_left_and_right_aligned_headers_give_the_same_fields(tmp_path):
    left = read_swf(write(tmp_path, LEFT, name="l.swf"))
    right = read_swf(write(tmp_path, RIGHT, name="r.swf"))
    assert left.procs == 100 and left.cleaning.machine_source == "MaxProcs header"
    assert right.procs == 140 and right.cleaning.machine_source == "MaxProcs header"
    h = right.header
    assert h["UnixStartTime"] == 749458803 and h["TimeZone"] == -25200
    assert h["TimeZoneString"] == "US/Mountain" and h["Computer"] == "Thinking Machines CM-5"
    # an indented URL is a continuation line, not a key "http"
    assert h["Information"] == ["http://www.lanl.gov/\n"
                                "http://www.cs.huji.ac.il/labs/parallel/workload/"]
    assert left.header["Information"] == right.header["Information"][:0] + [
        "http://www.pdc.kth.se/\nhttp://www.cs.huji.ac.il/labs/parallel/workload/"]
    assert "http" not in h and "http" not in left.header
    # the month split finds the start time of the right-aligned header
    assert [m for m, _ in split_months(right)] == ["1993-10"]


@pytest.mark.parametrize("line, procs", [
    (";        MaxNodes: 70  (dual)", 70),
    ("; MaxNodes: 338 (batch partition; 512 total)", 338),
    ("; MaxProcs: 128\n; MaxProcs: 128", 128),  # repeated with the same value
    ("; MaxProcs:\t64", 64),
    ("; MaxProcs: +64", 64),
    (";MaxProcs:32", 32),
])
def test_header_counts_with_comments_and_repeats(tmp_path, line, procs):
    w = read_swf(write(tmp_path, line + "\n"))
    assert w.procs == procs


@pytest.mark.parametrize("line, at, shown", [
    ("; MaxProcs: 0", ":1", "'0'"),
    ("; MaxProcs: -1", ":1", "'-1'"),
    ("; MaxProcs: 1,024", ":1", "'1,024'"),
    ("; MaxProcs: unknown", ":1", "'unknown'"),
    ("; MaxProcs: 128\n;  MaxProcs: 256", ":1,2", "['128', '256']"),
    ("; MaxProcs: ١٢٨", ":1", "'١٢٨'"),
    ("; MaxProcs: 99999999999999999999999", ":1", "'99999999999999999999999'"),
    ("; MaxNodes: 0", ":1", "'0'"),
])
def test_invalid_machine_size_in_header_asks_for_procs(tmp_path, line, at, shown):
    path = write(tmp_path, line + "\n")
    with pytest.raises(SwfError) as exc:
        read_swf(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}{at}: header Max")
    assert shown in msg and "--procs N" in msg and "\n" not in msg
    assert read_swf(path, procs=16).procs == 16  # an explicit size is always accepted


def test_no_header_needs_procs_or_from_jobs(tmp_path):
    path = write(tmp_path, "")
    with pytest.raises(SwfError, match=r"log\.swf: no machine size .*--procs N .*--procs "
                                       r"from-jobs to take the widest job \(4 processors\)"):
        read_swf(path)
    w = read_swf(path, procs="from-jobs")
    assert w.procs == 4 and "from-jobs" in w.cleaning.machine_source
    with pytest.raises(ValueError, match="procs must be a positive integer or 'from-jobs'"):
        read_swf(path, procs="from-job")


def test_utf8_bom_is_stripped(tmp_path):
    path = tmp_path / "bom.swf"
    path.write_bytes(b"\xef\xbb\xbf" + ("; MaxProcs: 8\n" + JOB + "\n").encode())
    w = read_swf(path)
    assert w.procs == 8 and len(w) == 1
    path.write_bytes(b"\xef\xbb\xbf" + (JOB + "\n").encode())  # BOM before a job line
    assert len(read_swf(path, procs=8)) == 1


@pytest.mark.parametrize("token, field, what", [
    ("1_000", 4, "is not a number: '1_000'"),
    ("١٠", 4, "is not a number: '١٠'"),
    ("１０", 9, "is not a number: '１０'"),
    ("1e300", 4, "is out of range"),
    ("1e300", 2, "is out of range"),
    ("1e300", 9, "is out of range"),
    ("18446744073709551617", 4, "is out of range"),
    ("-18446744073709551617", 2, "is out of range"),
    ("1" * 400, 6, "not finite"),
    ("9" * 5000, 4, "not finite"),
    ("1" * 5000 + "x", 4, "is not a number"),
])
def test_bad_numbers_name_the_line_and_field(tmp_path, token, field, what):
    parts = JOB2.split()
    parts[field - 1] = token
    path = write(tmp_path, "; MaxProcs: 8\n", JOB, " ".join(parts))
    with pytest.raises(SwfError) as exc:
        read_swf(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:3: field {field} (")
    assert what in msg
    assert len(msg) < 200 + len(str(path))  # a long value is cut


def test_every_field_unknown(tmp_path):
    unknown = " ".join(["-1"] * 18)
    w = read_swf(write(tmp_path, "; MaxProcs: 8\n", JOB, unknown, unknown))
    assert [j.id for j in w.jobs] == [1]
    assert w.cleaning.counts["unknown_submit"] == 2 and w.cleaning.dropped == 2
    # a -1 submit outranks the other drop rules; the other fields' -1 still clean as before
    parts = ["-1"] * 18
    parts[0], parts[1], parts[3], parts[4] = "5", "7", "30", "2"
    w = read_swf(write(tmp_path, "; MaxProcs: 8\n", JOB, " ".join(parts), name="b.swf"))
    assert [j.requested for j in w.jobs] == [20, 30]
    assert w.cleaning.counts["missing_request"] == 1


def test_month_split_errors_name_the_file(tmp_path):
    empty = read_swf(write(tmp_path, "; MaxProcs: 8\n; UnixStartTime: 0\n", "; no jobs"))
    assert split_months(empty) == []
    for header, what in [
        ("; UnixStartTime: 99999999999999999\n", "outside the dates"),
        ("; UnixStartTime: -99999999999999999\n", "outside the dates"),
        ("; UnixStartTime: 0\n; TimeZone: 99999999\n", "TimeZone = '99999999' is not"),
        ("; UnixStartTime: 0\n; TimeZoneString: Mars/Olympus\n", "not a time zone known"),
        ("; UnixStartTime: soon\n", "no integer UnixStartTime"),
        ("; UnixStartTime: 1\n; UnixStartTime: 2\n", "no integer UnixStartTime"),
    ]:
        path = write(tmp_path, "; MaxProcs: 8\n" + header, name="m.swf")
        with pytest.raises(ValueError, match=what) as exc:
            split_months(read_swf(path))
        assert str(exc.value).startswith(f"{path}: cannot split by month")


@pytest.mark.parametrize("name", list_traces())
def test_bundled_headers_give_their_machine_size(tmp_path, name):
    # the header layouts of the six bundled logs (the full reads are in test_swf.py)
    with gzip.open(trace_path(name), "rt", encoding="latin-1") as fh:
        header = "".join(line for line in fh if line.startswith(";"))
    w = read_swf(write(tmp_path, header, JOB))
    assert w.cleaning.machine_source in ("MaxProcs header", "MaxNodes header")
    key = "MaxProcs" if "MaxProcs" in w.header else "MaxNodes"
    assert w.procs == int(str(w.header[key]).split()[0])
    assert "http" not in w.header and isinstance(w.header.get("MaxJobs"), int)


def test_unknown_bundled_name_is_cut_in_the_message():
    with pytest.raises(ValueError, match=r"unknown bundled trace 'xxx.*\.\.\.; known: KTH-SP2"):
        trace_path("x" * 100_000)
    with pytest.raises(ValueError) as exc:
        trace_path("x" * 100_000)
    assert len(str(exc.value)) < 200
