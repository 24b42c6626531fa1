"""The vectorised SWF reader gives the reference's workload and report, or steps aside.

``instances.swf_fast.read_fast`` must return exactly what the line-by-line reference
``instances.swf._read_lines`` returns (every job field, header, machine size and source,
rule counts and examples, job-line count), or None, in which case ``read_swf`` runs the
reference, whose result or error message is then the only one the user sees.
"""

from __future__ import annotations

import gzip
import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

from instances import swf, swf_fast
from instances.bundled import list_traces, trace_path
from instances.swf_fast import _split_header, count_lines, parse_columns, read_fast

ROOT = Path(__file__).resolve().parents[2]
JOB1 = "1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 -1 -1 -1 -1"
JOB2 = "2 3600 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1"
OPTIONS = [dict(procs=procs, perfect_estimates=pe, missing_request=mr, too_wide=tw)
           for procs, pe, mr, tw in itertools.product(
               (None, "from-jobs", 3), (False, True), ("actual", "error"),
               ("drop", "clip", "error"))]


def _lines(path: Path) -> list[str]:
    lines = swf._read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _reference(path: Path, lines: list[str], **kw):
    try:
        return swf._read_lines(path, lines, **kw)
    except swf.SwfError as exc:
        return exc


def _same_columns(a, b) -> bool:
    """Whether two ``JobColumns`` hold equal columns (int64 both): then ``to_jobs`` gives
    equal jobs."""
    return all(np.array_equal(getattr(a, name), getattr(b, name))
               for name in ("id", "submit", "runtime", "requested", "demand", "user", "group",
                            "wait"))


def compare(path: Path, options=OPTIONS, refs: dict | None = None) -> int:
    """Check fast against reference under every option set; return how often fast ran.

    Parameters
    ----------
    path : the SWF file, plain or gzipped.
    options : the option sets to read it with.
    refs : reference results by option set, filled as they are computed and read back
        when present; shared only between files of the same lines (the reference
        reader's result depends on the lines and options alone, the path only names
        the file in error messages).
    """
    lines = _lines(path)
    text = swf._read_text(path)
    assert count_lines(text) == len(lines)
    data = swf._read_bytes(path)
    ran = 0
    for kw in options:
        fast = read_fast(path, text, **kw)
        jobs = None if fast is None else fast[0].to_jobs()
        if data.isascii():  # read_swf hands ASCII files over as bytes: the same answer
            again = read_fast(path, data, **kw)
            assert (again is None) == (fast is None)
            assert fast is None or (_same_columns(again[0], fast[0])
                                    and again[1:] == fast[1:])
        if fast is None:
            continue
        ran += 1
        key = tuple(sorted(kw.items()))
        ref = None if refs is None else refs.get(key)
        if ref is None:
            ref = _reference(path, lines, **kw)
            if refs is not None:
                refs[key] = ref
        assert not isinstance(ref, Exception), (path, kw, ref)
        assert (list(jobs), *fast[1:]) == ref, (path, kw)
        for j in jobs:  # Python ints, never NumPy scalars
            assert all(type(x) is int for x in (j.id, j.submit, j.runtime, j.requested,
                                                j.demand[0], j.user, j.group, j.wait))
    return ran


def job(**changes: str) -> str:
    """JOB2 with fields replaced (1-based field number -> token)."""
    parts = JOB2.split()
    for k, v in changes.items():
        parts[int(k[1:]) - 1] = v
    return " ".join(parts)


# (id, file text, whether the fast path must read it with the default options)
CASES = [
    ("plain", f"; MaxProcs: 8\n{JOB1}\n{JOB2}\n", True),
    ("no final newline", f"; MaxProcs: 8\n{JOB1}\n{JOB2}", True),
    ("tabs, CRLF, blank lines", f"; MaxProcs: 8\r\n\r\n{JOB1.replace(' ', chr(9))}\r\n\n"
     f"  {JOB2}  \r\n\n", True),
    ("header indented, blank first", f"\n   ;  MaxProcs: 8\n;\n{JOB1}\n", True),
    ("integral floats in used fields", f"; MaxProcs: 8\n{JOB1}\n{job(f2='3600.0', f9='20.')}\n",
     True),
    ("fractions in unused fields", f"; MaxProcs: 8\n{JOB1}\n{job(f6='142.25', f18='.5')}\n",
     False),  # ".5" is outside the fast grammar
    ("fraction in an unused field", f"; MaxProcs: 8\n{JOB1}\n{job(f6='142.25')}\n", True),
    ("leading zeros, minus zero", f"; MaxProcs: 8\n{JOB1}\n{job(f4='0010', f12='-0')}\n", True),
    ("every cleaning rule", "; MaxProcs: 8\n" + "\n".join([
        JOB1, job(f1="3", f2="-1"), job(f1="4", f5="-1", f8="0"), job(f1="5", f4="-1"),
        job(f1="6", f5="9", f8="9"), job(f1="7", f5="0", f8="3"), job(f1="8", f4="0"),
        job(f1="9", f9="-1"), job(f1="10", f9="0"), job(f1="11", f2="10"),
        job(f1="12", f2="5")]) + "\n", True),
    ("unsorted, many examples", "; MaxProcs: 8\n" + "\n".join(
        job(f1=str(i), f2=str(1000 - i)) for i in range(1, 12)) + "\n", True),
    ("non-integral used field", f"; MaxProcs: 8\n{JOB1}\n{job(f4='10.5')}\n", False),
    ("log waits", f"; MaxProcs: 8\n{JOB1}\n{job(f3='125')}\n{job(f1='3', f3='7.0')}\n", True),
    ("non-integral wait", f"; MaxProcs: 8\n{JOB1}\n{job(f3='12.5')}\n", False),
    ("two points", f"; MaxProcs: 8\n{JOB1}\n{job(f6='1.2.3')}\n", False),
    ("inner minus", f"; MaxProcs: 8\n{JOB1}\n{job(f6='1-2')}\n", False),
    ("double minus", f"; MaxProcs: 8\n{JOB1}\n{job(f6='--1')}\n", False),
    ("lone minus", f"; MaxProcs: 8\n{JOB1}\n{job(f18='-')}\n", False),
    ("minus point", f"; MaxProcs: 8\n{JOB1}\n{job(f6='-.5')}\n", False),
    ("plus sign", f"; MaxProcs: 8\n{JOB1}\n{job(f4='+10')}\n", False),
    ("exponent", f"; MaxProcs: 8\n{JOB1}\n{job(f4='1e3')}\n", False),
    ("16 digits", f"; MaxProcs: 8\n{JOB1}\n{job(f2='9007199254740993')}\n", False),
    ("17 then 19 fields", f"; MaxProcs: 8\n{JOB1} -1\n{' '.join(JOB2.split()[1:])}\n", False),
    ("two jobs on one line", f"; MaxProcs: 8\n{JOB1} {JOB2}\n", False),
    ("17 fields", f"; MaxProcs: 8\n{JOB1}\n{' '.join(JOB2.split()[:-1])}\n", False),
    ("header after a job", f"; MaxProcs: 8\n{JOB1}\n; Note: x\n{JOB2}\n", False),
    ("submit below -1", f"; MaxProcs: 8\n{JOB1}\n{job(f2='-2')}\n", False),
    ("duplicate job", f"; MaxProcs: 8\n{JOB1}\n{job(f1='1')}\n", False),
    ("duplicate job, unknown submit", f"; MaxProcs: 8\n{JOB1}\n{job(f1='1', f2='-1')}\n",
     True),
    ("no machine size", f"{JOB1}\n{JOB2}\n", False),
    ("non-ASCII", f"; MaxProcs: 8\n{JOB1}\n{job(f9='٢٠')}\n", False),
    ("vertical tab", f"; MaxProcs: 8\n{JOB1}\n{JOB2.replace(' ', chr(11), 1)}\n", False),
    *[(f"token {t[:12]!r} in field {f}", f"; MaxProcs: 8\n{JOB1}\n{job(**{f'f{f}': t})}\n",
       False)
      for t, f in [("1_000", 4), ("١٠", 4), ("１０", 9), ("1e300", 2), ("1e300", 9),
                   ("18446744073709551617", 4), ("-18446744073709551617", 2),
                   ("1" * 400, 6), ("9" * 5000, 4), ("1" * 5000 + "x", 4), ("nan", 6),
                   ("inf", 4)]],
    ("only a header", "; MaxProcs: 8\n", False),
    ("empty", "", False),
]


@pytest.mark.parametrize("name, text, fast", CASES, ids=[c[0] for c in CASES])
def test_fast_path_matches_reference_or_steps_aside(tmp_path, name, text, fast):
    path = tmp_path / "t.swf"
    path.write_text(text, encoding="utf-8")
    ran = compare(path)
    default = read_fast(path, swf._read_text(path), procs=None, perfect_estimates=False,
                        missing_request="actual", too_wide="drop")
    assert (default is not None) == fast
    if fast:
        assert ran > 0
    # the whole reader: the same workload and report as the reference, or the same error
    gz = tmp_path / "t.swf.gz"
    gz.write_bytes(gzip.compress(text.encode("utf-8")))
    for p in (path, gz):
        ref = _reference(p, _lines(p), **OPTIONS[0])
        try:
            w = swf.read_swf(p)
        except swf.SwfError as exc:
            assert str(exc) == str(ref)
            continue
        assert list(w.jobs) == ref[0]
        assert (w.header, w.procs, w.cleaning.counts, w.cleaning.examples,
                w.cleaning.job_lines) == (ref[1], ref[3], ref[5], ref[6], ref[7])
        assert w.cleaning.lines_read == len(_lines(p))


#: the three largest logs (1.2-4 MB gzipped, 10-50 s each) run with ``-m slow``; the default
#: run reads KTH-SP2, NASA-iPSC and lublin_256 (every option) both ways
LARGE_TRACES = ("SDSC-SP2", "CTC-SP2", "SDSC-BLUE")


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in LARGE_TRACES else n
    for n in list_traces()])
def test_bundled_traces_read_fast_and_identical(tmp_path, name):
    gz = Path(trace_path(name))
    options = OPTIONS if name == "lublin_256" else OPTIONS[:1] + OPTIONS[-6:-5]
    refs: dict = {}
    assert compare(gz, options, refs) == len(options) or name == "lublin_256"
    plain = tmp_path / "t.swf"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    assert _lines(plain) == _lines(gz)  # so the gzipped file's reference results hold
    assert compare(plain, OPTIONS[:1], refs) == 1


def _malformed_corpus() -> list[tuple[str, bytes]]:
    """The SWF files of the command-line malformed-input corpus."""
    spec = importlib.util.spec_from_file_location(
        "malformed_corpus", ROOT / "tests" / "cli" / "test_malformed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(case[0], case[2]) for case in module.SWF_CASES
            if isinstance(case[2], bytes) and ".swf" in case[1]]


@pytest.mark.parametrize("name, data", _malformed_corpus())
def test_malformed_corpus(tmp_path, name, data):
    path = tmp_path / "t.swf"
    path.write_bytes(data)
    try:
        _lines(path)
    except swf.SwfError:
        return  # corrupt gzip: raised before any line is read, on both paths
    compare(path)


def _body(text: str) -> str:
    """The job lines of an SWF text (from its first job line), '' when it has none."""
    split = _split_header(text)
    return "" if split is None else text[split[1]:]


@pytest.mark.parametrize("chunk", [1, 5, 60, 97])
def test_pieces_of_lines_parse_as_the_whole_text(monkeypatch, chunk):
    """``parse_columns`` reads the job lines in pieces of about ``_CHUNK`` bytes, cut after
    a newline: any cut gives the whole text's verdict and columns."""
    lublin = swf._read_text(Path(trace_path("lublin_256")))
    bodies = [_body(text) for _, text, _ in CASES]
    bodies += [_body(lublin)[:20_000], _body(lublin)[:20_000] + "\n\n  \n" + JOB2 + "\n"]
    bodies += [b[:i] + "\n" + b[i:] for b in bodies[-2:] for i in (91, 5000, 9999)]
    bodies += [_body(data.decode("latin-1")) for _, data in _malformed_corpus()]
    whole = [parse_columns(b) for b in bodies]
    assert sum(w is not None for w in whole) >= 10 and sum(w is None for w in whole) >= 10
    monkeypatch.setattr(swf_fast, "_CHUNK", chunk)
    for body, ref in zip(bodies, whole, strict=True):
        for got in [parse_columns(body), parse_columns("; x\n" + body, 4),
                    parse_columns(("; x\n" + body).encode("utf-8"), 4)]:
            assert (got is None) == (ref is None), body[:200]
            assert ref is None or np.array_equal(got, ref)


def test_both_readers_read_the_log_wait(tmp_path):
    """SWF field 3 (the log's wait) becomes ``Job.wait`` on both paths, -1 kept as unknown;
    the bundled KTH-SP2 has a wait for every job, the same on both paths."""
    path = tmp_path / "t.swf"
    path.write_text(f"; MaxProcs: 8\n{JOB1}\n{job(f3='125')}\n{job(f1='3', f3='7.0')}\n")
    kw = OPTIONS[0]
    fast = read_fast(path, swf._read_text(path), **kw)
    ref = swf._read_lines(path, _lines(path), **kw)
    assert [j.wait for j in fast[0].to_jobs()] == [j.wait for j in ref[0]] == [-1, 125, 7]
    kth = Path(trace_path("KTH-SP2"))
    fast = read_fast(kth, swf._read_text(kth), **kw)[0]
    ref = swf._read_lines(kth, _lines(kth), **kw)[0]
    assert np.array_equal(fast.wait, [j.wait for j in ref])
    assert (fast.wait >= 0).all() and fast.wait.max() > 0
