"""``simulate --by-week`` and ``compare --by-week``: each ISO week of the log's time zone
from an empty machine, per-week rows, paired differences between policies on the same
weeks, the worker path of a user's policy, and the refusals (both splits, no calendar, a
one-machine output format)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from instances.bundled import trace_path
from instances.swf import read_swf
from instances.weeks import split_weeks
from sim.batch.runner import run, split_parts
from sim.cli import main
from sim.registry import policy_spec

ROOT = Path(__file__).resolve().parents[2]


def _head(name: str, n: int) -> tuple[list[str], list[str]]:
    lines = gzip.decompress(Path(trace_path(name)).read_bytes()).decode().splitlines()
    head = [ln for ln in lines if ln.lstrip().startswith(";")]
    jobs = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith(";")]
    return head, jobs[:n]


@pytest.fixture
def kth(tmp_path: Path) -> Path:
    """The first 1,500 jobs of KTH-SP2 (UnixStartTime, Europe/Stockholm): three ISO
    weeks, 1996-W40 .. 1996-W42 (836, 306 and 358 jobs)."""
    head, jobs = _head("KTH-SP2", 1500)
    path = tmp_path / "kth.swf"
    path.write_text("\n".join(head + jobs) + "\n")
    return path


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_simulate_by_week_gives_one_row_per_iso_week_each_from_an_empty_machine(kth, capsys):
    out = _json(capsys, ["simulate", str(kth), "--policy", "easy", "--by-week", "--json",
                         "--quiet"])
    w = read_swf(kth)
    weeks = split_weeks(w)
    assert [r["week"] for r in out["weeks"]] == [label for label, _ in weeks]
    assert len(weeks) >= 2 and "months" not in out
    assert sum(r["jobs"] for r in out["weeks"]) == out["jobs"] == len(w)
    for row, (_, part) in zip(out["weeks"], weeks, strict=True):
        alone = run(part, policy_spec("easy"))  # the week simulated on its own
        assert row["avg_wait"] == pytest.approx(alone["avg_wait"])
        assert row["jobs"] == alone["jobs"]
    weighted = sum(r["avg_wait"] * r["jobs"] for r in out["weeks"]) / out["jobs"]
    assert out["avg_wait"] == pytest.approx(weighted)
    assert main(["simulate", str(kth), "--policy", "easy", "--by-week", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "each ISO week from an empty machine" in text and weeks[0][0] in text


def test_compare_by_week_pairs_the_policies_week_by_week(kth, capsys):
    out = _json(capsys, ["compare", str(kth), "--policies", "fcfs,easy,conservative",
                         "--by-week", "--json", "--quiet"])
    rows = {r["policy"]: r for r in out["rows"]}
    paired = {(p["policy"], p["metric"]): p for p in out["paired"]}
    assert {p["baseline"] for p in out["paired"]} == {"fcfs"}
    assert set(paired) == {(p, m) for p in ("easy", "conservative")
                           for m in ("avg_wait", "avg_bounded_slowdown")}
    base = [r["avg_wait"] for r in rows["fcfs"]["weeks"]]
    diffs = [r["avg_wait"] - b for r, b in zip(rows["easy"]["weeks"], base, strict=True)]
    p = paired[("easy", "avg_wait")]
    assert p["n"] == len(diffs) >= 2 and p["mean"] == pytest.approx(sum(diffs) / len(diffs))
    assert p["half_width"] > 0
    assert (p["less"], p["same"], p["more"]) == (sum(d < 0 for d in diffs),
                                                 sum(d == 0 for d in diffs),
                                                 sum(d > 0 for d in diffs))
    assert main(["compare", str(kth), "--policies", "fcfs,easy", "--by-week", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert f"over the {len(diffs)} weeks" in text and "paired difference to fcfs" in text


def test_one_week_gets_no_interval(tmp_path, capsys):
    head, jobs = _head("KTH-SP2", 200)  # all in the log's first week
    path = tmp_path / "one.swf"
    path.write_text("\n".join(head + jobs) + "\n")
    out = _json(capsys, ["compare", str(path), "--policies", "fcfs,easy", "--by-week",
                         "--json", "--quiet"])
    assert len(out["rows"][0]["weeks"]) == 1
    assert all(p["n"] == 1 and p["half_width"] is None for p in out["paired"])
    assert main(["compare", str(path), "--policies", "fcfs,easy", "--by-week",
                 "--quiet"]) == 0
    assert "no interval from 1 week;" in capsys.readouterr().out


def test_by_week_writes_every_job_to_swf_and_is_deterministic(kth, tmp_path, capsys):
    a, b = tmp_path / "a.swf", tmp_path / "b.swf"
    for out in (a, b):
        assert main(["simulate", str(kth), "--policy", "conservative", "--by-week", "--out",
                     str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert a.read_bytes() == b.read_bytes()
    back = read_swf(a)
    assert len(back) == len(read_swf(kth))


@pytest.mark.parametrize("extra,words", [
    (["--by-month"], ["--by-month", "not allowed with", "--by-week"]),
    (["--out", "{tmp}/s.csv"], ["s.csv", "jobs.csv is one machine", "by_week"]),
])
def test_by_week_refusals_are_one_line_and_write_nothing(kth, tmp_path, capsys, extra, words):
    argv = ["simulate", str(kth), "--policy", "easy", "--by-week", "--quiet",
            *(x.format(tmp=tmp_path) for x in extra)]
    with pytest.raises(SystemExit) as exc:  # argparse's exit, or main's
        raise SystemExit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert all(w in err for w in words), err
    assert "Traceback" not in err and not (tmp_path / "s.csv").exists()


def test_a_log_without_a_calendar_is_refused_naming_the_file(capsys):
    assert main(["compare", "lublin_256", "--policies", "fcfs,easy", "--by-week",
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "lublin_256" in err and "cannot split by week: no integer UnixStartTime" in err


def test_the_api_refuses_both_splits(kth):
    w = read_swf(kth)
    with pytest.raises(ValueError, match="give one split"):
        run(w, policy_spec("easy"), by_month=True, by_week=True)
    assert [lab for lab, _ in split_parts(w, by_week=True)] == [
        lab for lab, _ in split_weeks(w)]


POLICY = '''
from sim.batch.policy import BasePolicy


class Mine(BasePolicy):
    """FCFS."""
    name = "mine"

    def reset(self, machine):
        super().reset(machine)
        self.free, self.queue = machine.capacity[0], []

    def on_arrival(self, job, now):
        self.queue.append(job)

    def on_end(self, job, now):
        self.free += job.procs

    def schedule(self, now):
        started = []
        while self.queue and self.queue[0].procs <= self.free:
            job = self.queue.pop(0)
            self.free -= job.procs
            started.append(job)
        return started
'''


def test_a_user_policy_by_week_runs_in_the_worker_and_matches_fcfs(kth, tmp_path):
    (tmp_path / "mine.py").write_text(POLICY)
    p = subprocess.run([sys.executable, "-m", "sim.cli", "compare", str(kth), "--policies",
                        "fcfs,mine:Mine", "--by-week", "--json", "--quiet",
                        "--policy-time-limit", "60"],
                       cwd=tmp_path, env={"PYTHONPATH": str(ROOT), "PATH": ""},
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-500:]
    rows = json.loads(p.stdout)["rows"]
    assert [r["week"] for r in rows[1]["weeks"]] == [r["week"] for r in rows[0]["weeks"]]
    assert [r["avg_wait"] for r in rows[1]["weeks"]] == [r["avg_wait"]
                                                         for r in rows[0]["weeks"]]


def test_compare_by_month_pairs_the_policies_month_by_month(kth, capsys):
    out = _json(capsys, ["compare", str(kth), "--policies", "fcfs,easy", "--by-month",
                         "--json", "--quiet"])
    fcfs, easy = out["rows"]
    p = next(x for x in out["paired"] if x["metric"] == "avg_bounded_slowdown")
    diffs = [e["avg_bounded_slowdown"] - f["avg_bounded_slowdown"]
             for e, f in zip(easy["months"], fcfs["months"], strict=True)]
    assert [m["month"] for m in easy["months"]] == ["1996-09", "1996-10"]
    assert p["n"] == 2 and p["mean"] == pytest.approx(sum(diffs) / 2)
    assert "weeks" not in easy
