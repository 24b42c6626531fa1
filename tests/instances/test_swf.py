"""SWF reader/writer, cleaning report, month split and bundled traces."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from strategies import workloads

from instances.bundled import TRACE_DIR, list_traces, load_trace, trace_path
from instances.job import Job, Workload
from instances.months import split_months
from instances.swf import CleaningReport, SwfError, read_swf, write_swf

HEADER = "; Version: 2.2\n; MaxProcs: 8\n; UnixStartTime: 0\n; TimeZoneString: UTC\n"


def rec(jid: int, submit: int = 0, run: int = 10, procs: int = 1, req: int = 20, *,
        req_procs: int = -1, user: int = 1, group: int = 1, avg_cpu: str = "-1") -> str:
    """One SWF job line (18 fields)."""
    return (f"{jid} {submit} -1 {run} {procs} {avg_cpu} -1 {req_procs} {req} -1 1 {user} "
            f"{group} -1 -1 -1 -1 -1")


def swf(tmp_path: Path, *lines: str, header: str = HEADER, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text(header + "".join(line + "\n" for line in lines))
    return path


# ------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("drop", [1, -1])
def test_wrong_field_count_names_file_and_line(tmp_path, drop):
    fields = rec(2).split()
    bad = " ".join(fields[:-1] if drop == 1 else fields + ["7"])
    path = swf(tmp_path, rec(1), bad)
    with pytest.raises(SwfError, match=rf"t\.swf:6: expected 18 fields, found {18 - drop}"):
        read_swf(path)


def test_non_numeric_field_names_line_and_field(tmp_path):
    line = rec(2).split()
    line[3] = "ten"
    path = swf(tmp_path, rec(1), " ".join(line))
    with pytest.raises(SwfError, match=r"t\.swf:6: field 4 \(run time\) is not a number: 'ten'"):
        read_swf(path)


def test_non_numeric_unused_field_is_an_error(tmp_path):
    path = swf(tmp_path, rec(1, avg_cpu="x"))
    with pytest.raises(SwfError, match=r":5: field 6 \(average CPU time\)"):
        read_swf(path)


@pytest.mark.parametrize("token", ["nan", "inf"])
def test_non_finite_field_is_an_error(tmp_path, token):
    path = swf(tmp_path, rec(1, avg_cpu=token))
    with pytest.raises(SwfError, match=r":5: field 6 .* not finite"):
        read_swf(path)


def test_integral_floats_accepted_fractional_used_field_rejected(tmp_path):
    line = rec(1, avg_cpu="3.75").split()
    line[3] = "10.0"
    w = read_swf(swf(tmp_path, " ".join(line)))
    assert w.jobs[0].runtime == 10 and isinstance(w.jobs[0].runtime, int)
    line[3] = "10.5"
    with pytest.raises(SwfError, match=r":5: field 4 \(run time\) must be an integer"):
        read_swf(swf(tmp_path, " ".join(line), name="u.swf"))


def test_negative_submit_is_an_error_unknown_submit_is_dropped_and_counted(tmp_path):
    path = swf(tmp_path, rec(1), rec(2, submit=-2))
    with pytest.raises(SwfError, match=r"t\.swf:6: field 2 \(submit time\) is negative: -2"):
        read_swf(path)
    w = read_swf(swf(tmp_path, rec(1), rec(2, submit=-1), rec(3, submit=4), name="u.swf"))
    assert [j.id for j in w.jobs] == [1, 3]
    assert w.cleaning.counts["unknown_submit"] == 1 and w.cleaning.dropped == 1
    assert w.cleaning.examples["unknown_submit"] == (2,)
    assert "unknown_submit: 1 jobs" in w.cleaning.summary()


def test_duplicate_job_number_is_an_error(tmp_path):
    path = swf(tmp_path, rec(1), rec(2), rec(1, submit=5))
    with pytest.raises(SwfError, match=r"t\.swf:7: duplicate job number 1 \(first on line 5\)"):
        read_swf(path)


def test_bad_options_raise_value_error(tmp_path):
    path = swf(tmp_path, rec(1))
    with pytest.raises(ValueError, match="procs"):
        read_swf(path, procs=0)
    with pytest.raises(ValueError, match="missing_request"):
        read_swf(path, missing_request="guess")
    with pytest.raises(ValueError, match="too_wide"):
        read_swf(path, too_wide="shrink")


# ------------------------------------------------------------------- cleaning rules

def test_clean_file_reports_nothing(tmp_path):
    w = read_swf(swf(tmp_path, rec(1), rec(2, submit=3)))
    rep = w.cleaning
    assert isinstance(rep, CleaningReport)
    assert rep.job_lines == rep.jobs_kept == 2 and rep.dropped == 0
    assert not any(rep.counts.values())
    assert "no cleaning rule touched any job" in rep.summary()


def test_drop_rules_count_each_job_once(tmp_path):
    w = read_swf(swf(
        tmp_path,
        rec(1),
        rec(2, procs=-1),             # no processors (field 8 also -1)
        rec(3, procs=0, req_procs=0),  # no processors
        rec(4, run=-1),                # unknown runtime
        rec(5, procs=-1, run=-1),      # no processors wins (first rule)
        rec(6, procs=9),               # too wide for 8
        rec(7, procs=-1, req_procs=4),  # processors from field 8
    ))
    rep = w.cleaning
    assert [j.id for j in w.jobs] == [1, 7]
    assert w.jobs[1].demand == (4,)
    assert rep.counts["no_processors"] == 3 and rep.examples["no_processors"] == (2, 3, 5)
    assert rep.counts["bad_runtime"] == 1 and rep.examples["bad_runtime"] == (4,)
    assert rep.counts["too_wide"] == 1 and rep.examples["too_wide"] == (6,)
    assert rep.counts["procs_from_requested"] == 1
    assert rep.dropped == 5 and rep.jobs_kept == 2 and rep.job_lines == 7
    text = rep.summary()
    assert "no_processors: 3 jobs" in text and "too_wide: 1 jobs" in text


def test_too_wide_clip_and_error(tmp_path):
    path = swf(tmp_path, rec(1), rec(2, procs=12))
    w = read_swf(path, too_wide="clip")
    assert w.jobs[1].demand == (8,)
    assert w.cleaning.counts["too_wide_clipped"] == 1 and w.cleaning.counts["too_wide"] == 0
    with pytest.raises(SwfError, match=r"t\.swf:6: job 2 uses 12 processors, machine has 8"):
        read_swf(path, too_wide="error")


def test_missing_and_zero_request(tmp_path):
    path = swf(tmp_path, rec(1, run=30, req=-1), rec(2, run=0, req=-1), rec(3, run=5, req=0),
               rec(4, run=5, req=3))
    w = read_swf(path)
    assert [j.requested for j in w.jobs] == [30, 1, 1, 3]
    assert [j.runtime for j in w.jobs] == [30, 0, 5, 5]
    c = w.cleaning.counts
    assert c["missing_request"] == 2 and c["zero_request"] == 1 and c["zero_runtime"] == 1
    with pytest.raises(SwfError, match=r"t\.swf:5: job 1 has no requested time"):
        read_swf(path, missing_request="error")


def test_perfect_estimates(tmp_path):
    path = swf(tmp_path, rec(1, run=30, req=-1), rec(2, run=0, req=50), rec(3, run=5, req=5),
               rec(4, run=9, req=3))
    w = read_swf(path, perfect_estimates=True, missing_request="error")
    assert [j.requested for j in w.jobs] == [30, 1, 5, 9]
    c = w.cleaning.counts
    assert c["perfect_estimates"] == 3 and c["missing_request"] == 0
    assert w.cleaning.examples["perfect_estimates"] == (1, 2, 4)


def test_unsorted_submits_sorted_stably_and_counted(tmp_path):
    path = swf(tmp_path, rec(1, submit=10), rec(2, submit=5), rec(3, submit=10),
               rec(4, submit=5), rec(5, submit=20))
    w = read_swf(path)
    assert [j.id for j in w.jobs] == [2, 4, 1, 3, 5]
    assert w.cleaning.counts["unsorted_submit"] == 2
    assert w.cleaning.examples["unsorted_submit"] == (2, 4)


def test_report_to_dict_is_json(tmp_path):
    w = read_swf(swf(tmp_path, rec(1), rec(2, run=-1)))
    d = json.loads(json.dumps(w.cleaning.to_dict()))
    assert d["dropped"] == 1 and d["counts"]["bad_runtime"] == 1
    assert d["examples"]["bad_runtime"] == [2]


# ---------------------------------------------------------------- machine and header

def test_machine_size_sources(tmp_path):
    jobs = (rec(1, procs=3), rec(2, procs=6))
    w = read_swf(swf(tmp_path, *jobs))
    assert w.capacity == (8,) and w.cleaning.machine_source == "MaxProcs header"
    w = read_swf(swf(tmp_path, *jobs), procs=128)
    assert w.capacity == (128,) and w.cleaning.machine_source == "procs argument"
    w = read_swf(swf(tmp_path, *jobs, header="; MaxNodes: 7 (batch partition; 9 total)\n"))
    assert w.capacity == (7,) and w.cleaning.machine_source == "MaxNodes header"
    assert w.header["MaxNodes"] == "7 (batch partition; 9 total)"
    with pytest.raises(SwfError, match=r"t\.swf: no machine size in the header .*--procs N"
                       r".*--procs from-jobs to take the widest job \(6 processors\)"):
        read_swf(swf(tmp_path, *jobs, header=""))
    w = read_swf(swf(tmp_path, *jobs, header=""), procs="from-jobs")
    assert w.capacity == (6,) and w.cleaning.machine_source == "largest job (procs='from-jobs')"
    assert "largest job (procs='from-jobs')" in w.cleaning.summary()


def test_header_parsing(tmp_path):
    header = (
        "; Version: 2.2\n"
        "; Computer: IBM SP2\n"
        "; Copyright: first line\n"
        ";   second line\n"
        "; UnixStartTime: 843480031\n"
        "; TimeZone: 3600\n"
        "; TimeZoneString: Europe/Stockholm\n"
        "; MaxProcs: 100\n"
        "; Note: uses the EASY scheduler\n"
        ";\n"
        "; Note: THIS IS A CLEANED VERSION\n"
        ";       job<=14 (14 jobs removed)\n"
        "; Queue:  1 DSI\n"
        "; Queue:  2 astro\n"
    )
    w = read_swf(swf(tmp_path, rec(1), header=header))
    h = w.header
    assert h["UnixStartTime"] == 843480031 and h["TimeZone"] == 3600 and h["MaxProcs"] == 100
    assert h["Version"] == "2.2" and h["Computer"] == "IBM SP2"
    assert h["TimeZoneString"] == "Europe/Stockholm"
    assert h["Copyright"] == "first line\nsecond line"
    assert h["Note"] == ["uses the EASY scheduler",
                         "THIS IS A CLEANED VERSION\njob<=14 (14 jobs removed)"]
    assert h["Queue"] == ["1 DSI", "2 astro"]


def test_gzip_detected_by_magic_bytes(tmp_path):
    plain = swf(tmp_path, rec(1), rec(2, submit=4, procs=3))
    raw = plain.read_bytes()
    gz = tmp_path / "t.swf.gz"
    gz.write_bytes(gzip.compress(raw))
    disguised = tmp_path / "disguised.swf"
    disguised.write_bytes(gzip.compress(raw))
    ws = [read_swf(p) for p in (plain, gz, disguised)]
    assert ws[0].jobs == ws[1].jobs == ws[2].jobs
    assert ws[0].header == ws[1].header == ws[2].header
    assert ws[1].name == "t" and ws[2].name == "disguised"


def test_blank_lines_ignored_line_numbers_kept(tmp_path):
    path = tmp_path / "b.swf"
    path.write_text("; MaxProcs: 4\n\n" + rec(1) + "\n\n" + rec(2)[:-3] + "\n")
    with pytest.raises(SwfError, match=r"b\.swf:5: expected 18 fields, found 17"):
        read_swf(path)


# ------------------------------------------------------------------------ writing

@settings(max_examples=40, deadline=None)
@given(w=workloads(max_jobs=10, max_procs=8, K=1))
def test_write_read_round_trip(tmp_path_factory, w):
    d = tmp_path_factory.mktemp("rt")
    for name in ("w.swf", "w.swf.gz"):
        write_swf(d / name, w)
        back = read_swf(d / name)
        assert back.jobs == w.jobs
        assert back.capacity == w.capacity
        assert back.cleaning.dropped == 0
        assert not any(v for k, v in back.cleaning.counts.items() if k != "zero_runtime")


def test_round_trip_keeps_header_and_notes_writer(tmp_path):
    src = load_trace("KTH-SP2", procs=128)
    small = Workload(src.jobs[:50], src.capacity, "kth50", src.header)
    write_swf(tmp_path / "k.swf", small)
    back = read_swf(tmp_path / "k.swf")
    assert back.jobs == small.jobs
    assert back.capacity == (128,) and back.cleaning.machine_source == "MaxProcs header"
    for key in ("UnixStartTime", "TimeZoneString", "Installation", "Acknowledge", "Computer"):
        assert back.header[key] == src.header[key]
    assert back.header["Note"][:len(src.header["Note"])] == src.header["Note"]
    assert any("written by schedsearch" in n for n in back.header["Note"])
    assert any("source header said 100" in n for n in back.header["Note"])


def test_write_schedule_fields(tmp_path):
    jobs = (Job(1, 0, 10, 20, (2,)), Job(2, 5, 30, 15, (4,), 3, 1), Job(3, 5, 0, 1, (1,)))
    w = Workload(jobs, (4,), "s")
    start, end = [0, 10, 7], [10, 25, 7]
    write_swf(tmp_path / "s.swf", w, start=start, end=end)
    rows = [line.split() for line in (tmp_path / "s.swf").read_text().splitlines()
            if not line.startswith(";")]
    assert [r[2] for r in rows] == ["0", "5", "2"]    # wait = start - submit
    assert [r[3] for r in rows] == ["10", "15", "0"]  # run = end - start
    assert [r[10] for r in rows] == ["1", "0", "1"]   # job 2 killed at its request
    assert rows[1][11:13] == ["3", "1"]
    write_swf(tmp_path / "k.swf", w, start=start, end=end, killed=[False, False, True])
    rows = [line.split() for line in (tmp_path / "k.swf").read_text().splitlines()
            if not line.startswith(";")]
    assert [r[10] for r in rows] == ["1", "1", "0"]


def test_write_rejects_bad_input(tmp_path):
    w = Workload((Job(1, 5, 10, 20, (2,)),), (4,))
    with pytest.raises(ValueError, match="before its submit"):
        write_swf(tmp_path / "x.swf", w, start=[4], end=[14])
    with pytest.raises(ValueError, match="before its start"):
        write_swf(tmp_path / "x.swf", w, start=[6], end=[5])
    with pytest.raises(ValueError, match="both start and end"):
        write_swf(tmp_path / "x.swf", w, start=[6])
    with pytest.raises(ValueError, match="entries"):
        write_swf(tmp_path / "x.swf", w, start=[6, 7], end=[8, 9])
    w2 = Workload((Job(1, 5, 10, 20, (2, 1)),), (4, 4))
    with pytest.raises(ValueError, match="K=2"):
        write_swf(tmp_path / "x.swf", w2)


def test_gzip_output_is_deterministic(tmp_path):
    w = Workload((Job(1, 5, 10, 20, (2,)),), (4,))
    write_swf(tmp_path / "a.swf.gz", w)
    write_swf(tmp_path / "b.swf.gz", w)
    assert (tmp_path / "a.swf.gz").read_bytes() == (tmp_path / "b.swf.gz").read_bytes()
    assert (tmp_path / "a.swf.gz").read_bytes()[:2] == b"\x1f\x8b"


# ------------------------------------------------------------------------- months

def test_split_months_uses_zone_name_with_dst(tmp_path):
    # 1997-04-30 22:30 UTC is 1997-05-01 00:30 in Stockholm (CEST, UTC+2), but still
    # April 30 23:30 with the fixed TimeZone offset of +3600 s.
    t0 = int(datetime(1997, 4, 1, tzinfo=ZoneInfo("UTC")).timestamp())
    late = int(datetime(1997, 4, 30, 22, 30, tzinfo=ZoneInfo("UTC")).timestamp()) - t0
    lines = (rec(1, submit=0), rec(2, submit=late), rec(3, submit=late + 86400 * 40))
    zoned = read_swf(swf(tmp_path, *lines, header=(
        f"; MaxProcs: 8\n; UnixStartTime: {t0}\n; TimeZone: 3600\n"
        "; TimeZoneString: Europe/Stockholm\n")))
    months = split_months(zoned)
    assert [(m, [j.id for j in x.jobs]) for m, x in months] == [
        ("1997-04", [1]), ("1997-05", [2]), ("1997-06", [3])]
    fixed = read_swf(swf(tmp_path, *lines, name="f.swf", header=(
        f"; MaxProcs: 8\n; UnixStartTime: {t0}\n; TimeZone: 3600\n")))
    assert [(m, [j.id for j in x.jobs]) for m, x in split_months(fixed)] == [
        ("1997-04", [1, 2]), ("1997-06", [3])]  # empty May left out
    m = months[1][1]
    assert m.capacity == zoned.capacity and m.header == zoned.header
    assert m.jobs[0].submit == late  # absolute, not rebased
    assert m.name == "t 1997-05"


def test_split_months_needs_unix_start_time(tmp_path):
    w = read_swf(swf(tmp_path, rec(1), header="; MaxProcs: 8\n"))
    with pytest.raises(ValueError, match="UnixStartTime"):
        split_months(w)


# ------------------------------------------------------------------ bundled traces

def _job_fields(path: Path) -> list[list[str]]:
    """Independent minimal parse: the split job lines of a gzip SWF file."""
    with gzip.open(path, "rt") as f:
        return [line.split() for line in f if line.strip() and not line.startswith(";")]


def test_bundled_names_and_checksums():
    assert list_traces() == ["KTH-SP2", "SDSC-SP2", "CTC-SP2", "SDSC-BLUE", "NASA-iPSC",
                             "lublin_256"]
    assert trace_path("KTH-SP2") == trace_path("kth-sp2") == trace_path(
        "KTH-SP2-1996-2.1-cln.swf.gz") == trace_path("KTH-SP2-1996-2.1-cln.swf")
    assert trace_path("KTH-SP2").parent == TRACE_DIR
    with pytest.raises(ValueError, match="unknown bundled trace 'LANL'"):
        trace_path("LANL")
    readme = (TRACE_DIR / "README.md").read_text()
    sums = dict((f, h) for h, f in re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, re.M))
    assert sorted(sums) == sorted(trace_path(n).name for n in list_traces())
    for name in list_traces():
        path = trace_path(name)
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sums[path.name]


def test_sdsc_sp2_cleaning_counts():
    path = trace_path("SDSC-SP2")
    w = read_swf(path)
    rep = w.cleaning
    rows = _job_fields(path)
    assert rep.job_lines == len(rows) == w.header["MaxRecords"]
    # Independent counts from the raw fields (field 4 run time, field 5/8 processors).
    no_procs = {int(r[0]) for r in rows if int(r[4]) <= 0 and int(r[7]) <= 0}
    bad_run = {int(r[0]) for r in rows if int(r[3]) < 0} - no_procs
    assert rep.counts["no_processors"] == len(no_procs)
    assert rep.counts["bad_runtime"] == len(bad_run) > 5000
    assert rep.counts["missing_request"] == sum(
        1 for r in rows if int(r[8]) < 0 and int(r[3]) >= 0)
    assert rep.jobs_kept == len(w) == rep.job_lines - rep.dropped
    kept = {j.id for j in w.jobs}
    assert not kept & (no_procs | bad_run)
    assert all(j.runtime >= 0 and 1 <= j.procs <= 128 for j in w.jobs)


def test_kth_months_and_procs_override():
    path = trace_path("KTH-SP2")
    w = read_swf(path, procs=128)
    assert w.capacity == (128,)
    assert w.cleaning.job_lines == len(_job_fields(path)) == w.header["MaxRecords"] == 28476
    assert len(w) == w.cleaning.jobs_kept == 28476 - w.cleaning.dropped
    months = split_months(w)
    labels = [m for m, _ in months]
    assert labels == ["1996-09", "1996-10", "1996-11", "1996-12"] + [
        f"1997-{i:02d}" for i in range(1, 9)]
    assert sum(len(x) for _, x in months) == len(w)
    tz = ZoneInfo("Europe/Stockholm")
    t0 = w.header["UnixStartTime"]
    for label, mw in months:
        for j in (mw.jobs[0], mw.jobs[-1]):
            assert datetime.fromtimestamp(t0 + j.submit, tz).strftime("%Y-%m") == label
        assert mw.capacity == (128,)
    perfect = read_swf(path, perfect_estimates=True)
    assert all(j.requested == max(j.runtime, 1) for j in perfect.jobs)
    assert perfect.cleaning.counts["perfect_estimates"] == sum(
        1 for a, b in zip(w.jobs, perfect.jobs, strict=True) if a.requested != b.requested)


@pytest.mark.parametrize("name", [
    "CTC-SP2", "NASA-iPSC", "lublin_256",
    pytest.param("SDSC-BLUE", marks=pytest.mark.slow),
])
def test_every_bundled_trace_reads_and_accounts_for_every_job(name):
    path = trace_path(name)
    w = read_swf(path)
    rep = w.cleaning
    # MaxRecords of the cleaned CTC and NASA logs still counts the uncleaned log.
    assert rep.job_lines == len(_job_fields(path)) <= w.header["MaxRecords"]
    assert len(w) == rep.jobs_kept == rep.job_lines - rep.dropped
    assert all(1 <= j.procs <= w.procs and j.requested >= 1 for j in w.jobs)
