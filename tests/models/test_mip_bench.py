"""The exact-solver benchmark (``sim.experiments.engine.mip_bench``): its figures on
hand-made runs, and one real run in a child process."""

from __future__ import annotations

import pytest

from sim.experiments.engine import mip_bench


def _row(inst, solver, status, obj, bound, call=1.0, limit=10.0, fam="kresource_epochs",
         killed=False):
    return {"family": fam, "solver": solver, "instance": inst, "limit": limit, "call": call,
            "status": status, "objective": obj, "bound": bound, "wall": call + 0.5,
            "cpu": call, "peak_mb": 50.0, "killed": killed}


def test_certified_gap_uses_the_best_bound_of_every_solver_and_the_pair_closes_it():
    rows = [_row("a", "cpsat", "FEASIBLE", 10.0, 8.0),
            _row("a", "scip", "FEASIBLE", 12.0, 10.0),
            _row("a", "cbc", "UNKNOWN", None, None, call=13.0, killed=True)]
    table = mip_bench.summarise(rows, {"a": "bin"}, {"a": None})
    by = {r[2]: r for r in table}
    assert by["cpsat"][7] == "20.00%"  # its own: (10 - 8) / 10
    assert by["cpsat"][8] == "0.00%"  # against SCIP's bound 10: certified optimal
    assert by["scip"][8] == "16.67%"  # (12 - 10) / 12
    assert by["cbc"][9] == "1 / 0" and by["cbc"][10] == "1 (+3.0)"
    pair = mip_bench.pairs(rows, {"a": "bin"}, {"a": None})[0]
    # alone, each certifies only its own gap: SCIP's 16.67% beats CP-SAT's 20%
    assert pair[3] == "scip" and pair[4] == 0 and pair[5] == "16.67%"
    assert pair[6] == "cpsat + scip" and pair[7] == 1 and pair[8] == "0.00%"


def test_maximisation_takes_the_smallest_upper_bound_and_the_largest_objective():
    fam = "kresource_selection"
    rows = [_row("a", "cpsat", "FEASIBLE", 90.0, 120.0, fam=fam),
            _row("a", "highs", "FEASIBLE", 100.0, 110.0, fam=fam)]
    assert mip_bench._best(fam, rows) == (100.0, 110.0)
    by = {r[2]: r for r in mip_bench.summarise(rows, {"a": "b"}, {"a": None})}
    assert by["highs"][8] == "9.09%" and by["cpsat"][8] == "18.18%"  # over the bound 110


def test_one_run_in_a_child_process_reports_status_memory_and_call_wall():
    path = mip_bench.LIBRARY / "kresource_epochs" / "figure1.json"
    row = mip_bench.run_one("kresource_epochs", "cpsat", path, 10.0)
    assert row["status"] == "OPTIMAL" and row["objective"] == row["bound"]
    assert 0 < row["call"] < row["wall"] and row["cpu"] > 0
    assert row["peak_mb"] > 10 and not row["killed"]


def test_a_slack_insertion_pair_proves_only_by_an_optimal_run_not_by_a_met_price():
    # a MIP that proved the price and stopped in the tie-break stage: FEASIBLE, bound = obj
    fam = "slack_insertion"
    rows = [_row("a", "cpsat", "FEASIBLE", -26552.9, -509914.0, fam=fam),
            _row("a", "scip", "FEASIBLE", -55723.8, -55723.8, fam=fam),
            _row("b", "cpsat", "OPTIMAL", -10.0, -10.0, fam=fam),
            _row("b", "scip", "FEASIBLE", -10.0, -12.0, fam=fam)]
    pair = mip_bench.pairs(rows, {"a": "bin", "b": "bin"}, {"a": None, "b": None})[0]
    assert pair[3] == "cpsat" and pair[4] == 1  # b only
    assert pair[7] == 1 and pair[8] == "0.00%"  # the price of a is certified, not proved


def test_the_time_indexed_insertion_solvers_run_only_when_named():
    fam = "slack_insertion"
    assert "cpsat+ti" not in mip_bench.solvers_for(fam, False, None)
    assert mip_bench.solvers_for(fam, False, ["cpsat", "cpsat+ti", "ti-scip"]) == \
        ["cpsat", "cpsat+ti", "ti-scip"]
    assert mip_bench.solvers_for("grouping", False, ["cpsat", "cpsat+ti"]) == ["cpsat"]
    assert mip_bench.solvers_for(fam, True, ["cpsat", "scip"]) == ["scip"]
    assert mip_bench._solver_name(fam, "ti-scip") == ("ti", {"backend": "scip"})
    assert mip_bench._solver_name(fam, "cpsat+ti") == ("cpsat+ti", {})


def test_snapshot_bins_are_read_or_refused_naming_the_part():
    assert mip_bench.parse_bins("21-30:10, 31-50:3") == {(21, 30): 10, (31, 50): 3}
    for bad in ("21-30", "21-30:0", "30-21:2", "a-b:1", "21-30:2,"):
        with pytest.raises(ValueError, match="snapshot bin"):
            mip_bench.parse_bins(bad)
    picked = mip_bench.snapshot_instances(mip_bench.parse_bins("21-30:4"))
    ks = [int(p.stem.rsplit("-k", 1)[1]) for _, _, p in picked]
    assert len(picked) == 4 and all(21 <= k <= 30 for k in ks)


@pytest.mark.parametrize("args", [["--limit", "0"], ["--snapshot-bins", "21-30"],
                                  ["--solvers", "tii"]])
def test_bad_options_are_refused_before_any_run(args, capsys):
    with pytest.raises(SystemExit) as e:
        mip_bench.main(["--sections", "snapshots", *args])
    assert e.value.code == 2 and capsys.readouterr().err.strip()
