"""Numbers read from text are plain decimals within the readers' bounds: a ``.kswf`` file
with a huge or underscored number, or a ``--set``/``--size`` value Python's ``int()`` and
``float()`` would stretch to a number (``1_000``, non-ASCII digits), is refused in one line
naming the file and line or the option; options that do not apply to a ``.kswf`` workload
are refused by name."""

from __future__ import annotations

import pytest

from sim.cli import main

KSWF = """; KResource: 2
; Capacities: 16 16
1 0 -1 50 8 -1 3 8 50 3 -1 -1 -1 -1 -1 -1 -1 -1
2 5 -1 80 7 -1 8 7 90 8 -1 -1 -1 -1 -1 -1 -1 -1
"""


def _run(tmp_path, capsys, text: str, *extra: str) -> tuple[int, str]:
    path = tmp_path / "w.kswf"
    path.write_text(text)
    code = main(["simulate", str(path), "--policy", "easy", "--quiet", *extra])
    return code, capsys.readouterr().err


def test_the_good_file_runs(tmp_path, capsys):
    assert _run(tmp_path, capsys, KSWF)[0] == 0


@pytest.mark.parametrize(("old", "new", "line", "message"), [
    ("; Capacities: 16 16", f"; Capacities: 16 {2**63}", 2, "Capacities is out of range"),
    ("; Capacities: 16 16", "; Capacities: 1_6 16", 2, "Capacities must be an integer"),
    ("; KResource: 2", "; KResource: 0_2", 1, "KResource must be an integer"),
    ("2 5 -1 80", "2 5 -1 1e30", 4, "field 4 (run time) must be an integer"),
    ("2 5 -1 80", f"2 5 -1 {2**63}", 4, "field 4 (run time) is out of range"),
    ("2 5 -1 80", "2 5 -1 8_0", 4, "field 4 (run time) must be an integer"),
    ("2 5 -1 80", f"2 {2**53 + 1} -1 80", 4, "field 2 (submit time) is out of range"),
    ("2 5 -1 80", "2 5 -1 " + "9" * 5000, 4, "field 4 (run time) is out of range"),
])
def test_kswf_numbers_are_plain_and_bounded(tmp_path, capsys, old, new, line, message):
    code, err = _run(tmp_path, capsys, KSWF.replace(old, new))
    assert code == 2, err
    assert f"w.kswf:{line}: {message}" in err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err


def test_kswf_header_json_of_5000_digits_names_the_line(tmp_path, capsys):
    code, err = _run(tmp_path, capsys,
                     KSWF.replace("; Capacities: 16 16",
                                  "; Capacities: 16 16\n; ClippedJobs: " + "7" * 5000))
    assert code == 2 and "w.kswf:3: ClippedJobs is not valid JSON" in err


def test_priorities_that_do_not_apply_are_refused_by_name(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, KSWF, "--priorities", "fifth")
    assert code == 2 and "--priorities: policy 'easy' takes no priorities" in err


def test_priorities_for_policies_without_them_are_refused(tmp_path, capsys):
    path = tmp_path / "w.kswf"
    path.write_text(KSWF)
    assert main(["compare", str(path), "--policies", "easy,fcfs", "--priorities", "fifth",
                 "--quiet"]) == 2
    assert "--priorities: no policy among" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["1_0", "١٠", "1_0.5"])
def test_set_values_python_would_stretch_are_refused(tmp_path, capsys, value):
    code, err = _run(tmp_path, capsys, KSWF, "--set", f"window={value}")
    assert code == 2 and f"--set value {value!r}: not a plain decimal number" in err


def test_size_values_python_would_stretch_are_refused(tmp_path, capsys):
    assert main(["generate", "grouping", "--n", "1", "--size", "jobs=1_0",
                 "--out", str(tmp_path / "g")]) == 2
    assert "--size jobs: expected a number, got '1_0'" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize("family,key", [("grouping", "memory"), ("task_mapping", "n_jobs"),
                                        ("gang_schedule", "n_jobs")])
@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_an_integer_size_that_is_not_finite_is_refused_by_name(tmp_path, capsys, family, key,
                                                                value):
    assert main(["generate", family, "--n", "1", "--size", f"{key}={value}",
                 "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"size parameter {key!r} must be an integer" in err[0], err
    assert not (tmp_path / "g").exists()


@pytest.mark.parametrize(("argv", "option"), [
    (["csm", "--nodes", "1_0"], "--nodes"),
    (["simulate", "KTH-SP2", "--policy", "slack", "--sf", "1_0"], "--sf"),
    (["simulate", "KTH-SP2", "--policy", "easy", "--window", "٣"], "--window"),
    (["generate", "kresource", "--K", "2", "--rate", "1_0", "--out", "x.kswf"], "--rate"),
])
def test_numeric_options_python_would_stretch_are_refused_by_name(capsys, argv, option):
    assert main(argv) == 2
    assert f"argument {option}: must be a " in capsys.readouterr().err
