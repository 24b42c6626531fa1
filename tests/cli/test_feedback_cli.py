"""``simulate --feedback`` and ``compare --feedback``: user feedback from the command line,
the realised schedule written by ``--out``, and the refusals (one line, exit 2, no file
written or changed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from instances.swf import read_swf
from sim.cli import main


def _line(jid: int, submit: int, wait: int, run: int, user: int) -> str:
    return f"{jid} {submit} {wait} {run} 1 -1 -1 1 {run} -1 1 {user} 1 -1 -1 -1 -1 -1"


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    """One processor: B's job of 500 s and A's a1 (100 s, log wait 0) at 0, A's a2 at 150,
    50 s after a1's log end."""
    path = tmp_path / "golden.swf"
    path.write_text("; MaxProcs: 1\n" + "\n".join(
        [_line(1, 0, 0, 500, 2), _line(2, 0, 0, 100, 1), _line(3, 150, 0, 10, 1)]) + "\n")
    return path


def _refused(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exc:  # argparse's exit, or main's
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_simulate_feedback_golden_and_out_holds_the_realised_submits(golden, tmp_path, capsys):
    out = tmp_path / "s.swf"
    assert main(["simulate", str(golden), "--policy", "fcfs", "--feedback", "--quiet",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "user feedback: 1 of 3 jobs" in text and "python engine" in text
    back = read_swf(out)
    assert [(j.id, j.submit, j.wait) for j in back.jobs] == [(1, 0, 0), (2, 0, 500),
                                                            (3, 650, 0)]
    assert "user feedback" in " ".join(back.header["Note"])
    first = out.read_bytes()
    assert main(["simulate", str(golden), "--policy", "fcfs", "--feedback", "--quiet",
                 "--out", str(out)]) == 0
    assert out.read_bytes() == first  # the same inputs, the same bytes


def test_batsim_jobs_csv_out_holds_the_realised_submits(golden, tmp_path, capsys):
    import csv

    out = tmp_path / "jobs.csv"
    assert main(["simulate", str(golden), "--policy", "easy", "--feedback", "--quiet",
                 "--out", str(out)]) == 0
    rows = {r["job_id"]: r for r in csv.DictReader(out.open())}
    assert (rows["3"]["submission_time"], rows["3"]["starting_time"],
            rows["3"]["waiting_time"]) == ("650", "650", "0")
    assert (rows["2"]["submission_time"], rows["2"]["waiting_time"]) == ("0", "500")


def test_simulate_feedback_json_reports_the_table(golden, capsys):
    assert main(["simulate", str(golden), "--policy", "easy", "--feedback", "--json",
                 "--quiet"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["feedback"] == {"jobs": 3, "dependent": 1, "median_think": 50.0}
    assert row["avg_wait"] == pytest.approx(500 / 3) and row["engine"] == "python"
    assert main(["simulate", str(golden), "--policy", "easy", "--json", "--quiet"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert "feedback" not in row and row["avg_wait"] == pytest.approx(950 / 3)


def test_compare_feedback(golden, capsys):
    assert main(["compare", str(golden), "--policies", "fcfs,easy", "--feedback", "--json",
                 "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["avg_wait"] for r in rows] == pytest.approx([500 / 3, 500 / 3])


@pytest.mark.parametrize("extra, words", [
    (["--engine", "compiled"], ["--engine compiled", "--feedback", "Python engine"]),
    (["--by-month"], ["--feedback with --by-month", "empty machine"]),
    (["--by-week"], ["--feedback with --by-week", "empty machine"]),
])
def test_refusals_are_one_line_and_leave_out_unchanged(golden, tmp_path, capsys, extra,
                                                       words):
    out = tmp_path / "s.swf"
    out.write_bytes(b"keep me\n")
    head = "; UnixStartTime: 844120800\n; TimeZoneString: Europe/Stockholm\n"
    golden.write_text(head + golden.read_text())
    err = _refused(capsys, ["simulate", str(golden), "--policy", "easy", "--feedback",
                            "--quiet", "--out", str(out), *extra])
    assert all(w in err for w in words), err
    assert out.read_bytes() == b"keep me\n"


def test_a_log_without_waits_is_refused_naming_it(capsys):
    err = _refused(capsys, ["simulate", "lublin_256", "--policy", "easy", "--feedback",
                            "--quiet"])
    assert "lublin_256" in err and "nothing to act on" in err and "0 of 10000" in err


def test_a_user_policy_is_refused(golden, tmp_path, capsys, monkeypatch):
    (tmp_path / "mine.py").write_text("from sim.registry import make_policy\n\n\n"
                                      "def Mine():\n    return make_policy('fcfs')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    err = _refused(capsys, ["simulate", str(golden), "--policy", "mine:Mine", "--feedback",
                            "--quiet"])
    assert "--feedback" in err and "worker process" in err
    err = _refused(capsys, ["compare", str(golden), "--policies", "fcfs,mine:Mine",
                            "--feedback", "--quiet"])
    assert "'mine:Mine' runs in a worker process" in err
