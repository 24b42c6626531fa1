"""``schedsearch reproduce``: the Talby tables regenerated from their quick specs (the
full ones are slow), committed results untouched by a quick run, and the registry."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sim.cli import main
from sim.experiments.talby import tables as slack_tables
from sim.sweep import reproduce

RESULTS = Path(slack_tables.__file__).resolve().parent / "results"


def _digest(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*"))
            if p.is_file()}


@pytest.mark.parametrize("table", ["table1", "table2", "table3", "table4", "table5"])
def test_quick_tables_are_written_elsewhere_marked_partial_with_the_papers_numbers(
        tmp_path, capsys, table):
    committed = _digest(RESULTS)
    d = tmp_path / "rq"
    assert main(["reproduce", f"talby-{table}", "--quick", "--jobs", "1", "--quiet",
                 "--dir", str(d)]) == 0
    text = (d / f"talby-{table}-quick.md").read_text()
    assert "PARTIAL (quick configuration)" in text
    paper = {"table1": "2,401.44", "table2": "2,156", "table3": "2,226.17",
             "table4": "2,226.17", "table5": "2,120.0"}[table]
    assert paper in text
    assert (d / f"talby-{table}-quick.csv").exists()
    assert _digest(RESULTS) == committed
    capsys.readouterr()
    # a rerun resumes from the store: nothing is simulated again
    assert main(["reproduce", f"talby-{table}", "--quick", "--jobs", "1", "--quiet",
                 "--dir", str(d)]) == 0
    assert "0 run" in capsys.readouterr().err
    if table == "table1":  # the yearly cell is total wait / jobs over the month cells
        from sim.sweep.report import load_rows

        rows = [r for r in load_rows(d / "talby-table1-quick.sqlite")
                if r["label"] == "conservative-arrival"]
        pool = slack_tables.Pool(rows)
        assert len(rows) == 2
        assert pool.year() == pytest.approx(sum(r["avg_wait"] * r["jobs"] for r in rows)
                                            / sum(r["jobs"] for r in rows))
        assert f"**{pool.year():,.2f}**" in text


def test_the_registry_names_every_reproduction_and_refuses_unknown_ones(capsys):
    for name in ("talby-table1", "talby-table5", "memory_casestudy", "memory_fig2",
                 "memory_gap"):
        assert callable(reproduce.target(name)) and reproduce.describe(name)
    assert main(["reproduce"]) == 0
    assert "talby-table3" in capsys.readouterr().out
    with pytest.raises(ValueError, match="unknown reproduction 'nosuch'"):
        reproduce.run("nosuch")
    with pytest.raises(ValueError, match="takes no options"):
        reproduce.run("memory_fig2", ["--quick"])


@pytest.mark.timed
@pytest.mark.slow
def test_full_table1_matches_the_runner_month_by_month(tmp_path):
    """The full sweep behind Table 1 gives the runner's own by-month figures."""
    from sim.batch.runner import load_workload, run
    from sim.registry import policy_spec
    from sim.sweep.report import load_rows

    d = tmp_path / "full"
    assert slack_tables.table1_main(["--jobs", "2", "--quiet", "--dir", str(d),
                                     "--results", str(d)]) == 0
    assert "PARTIAL" not in (d / "slack_table1.md").read_text()
    rows = [r for r in load_rows(d / "talby-table1.sqlite")
            if r["label"] == "conservative-arrival"]
    ref = run(load_workload("KTH-SP2", procs=128), policy_spec("conservative"),
              by_month=True)
    assert {r["month"]: r["avg_wait"] for r in rows} == \
        {m["month"]: m["avg_wait"] for m in ref["months"]}
    assert slack_tables.Pool(rows).year() == pytest.approx(ref["avg_wait"])
