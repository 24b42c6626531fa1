"""``ti_bench``'s tables and rule on made-up runs, and its refusal to write the committed
file from a partial run."""

from __future__ import annotations

import pytest

from sim.experiments.talby import ti_bench as tb


def _run(snap: str, solver: str, status: str, price: float, bound: float | None,
         bin_: str = "21-30", wall: float = 5.0) -> tb.Run:
    return tb.Run(snap, 25, bin_, solver, status, price, bound, 3, wall)


def _rows(ti_gap_bound: float) -> list[tb.Run]:
    """cpsat+ti proves one more at 21-30 and loses none; at 51-70 cpsat's median certified
    gap is 10% (bound 90 on price 100) and cpsat+ti's set by ``ti_gap_bound``."""
    return [
        _run("a", "cpsat", "OPTIMAL", 10.0, 10.0),
        _run("a", "cpsat+ti", "OPTIMAL", 10.0, 10.0, wall=2.0),
        _run("b", "cpsat", "FEASIBLE", 12.0, 8.0, wall=30.0),
        _run("b", "cpsat+ti", "OPTIMAL", 11.0, 11.0, wall=20.0),
        _run("c", "cpsat", "FEASIBLE", 5.0, 5.0, "31-50", 30.0),  # price proved only
        _run("c", "cpsat+ti", "FEASIBLE", 6.0, 4.0, "31-50", 30.0),
        _run("d", "cpsat", "FEASIBLE", 100.0, 90.0, "51-70", 30.0),
        _run("d", "cpsat+ti", "FEASIBLE", 100.0, ti_gap_bound, "51-70", 30.0),
    ]


def test_bin_table_counts_gaps_and_lone_proofs():
    rows = {(r[0], r[1]): r for r in tb.bin_rows(_rows(80.0), limit=30.0)}
    # cpsat at 21-30: 1 proved, price proved on a only; unproved b counts as the limit
    assert rows["21-30", "cpsat"][2:5] == [2, 1, 1]
    assert rows["21-30", "cpsat"][5] == "17.5"
    # b's certified gap uses cpsat+ti's bound 11 against cpsat's price 12
    assert rows["21-30", "cpsat"][6] == f"{(0 + 1 / 12) / 2:.2%}"
    assert rows["21-30", "cpsat+ti"][7] == "b" and rows["21-30", "cpsat"][7] == "-"
    assert rows["31-50", "cpsat"][3:5] == [0, 1]
    # the best bound at d is 90 (cpsat's): both prices 100, both gaps 10%
    assert rows["51-70", "cpsat+ti"][6] == rows["51-70", "cpsat"][6] == "10.00%"


def test_price_table_names_the_lower_price_on_open_snapshots_only():
    prices = {r[0]: r[3] for r in tb.price_rows(_rows(80.0))}
    assert "a" not in prices  # proved by both
    assert prices == {"b": "cpsat+ti", "c": "cpsat", "d": "tie"}


def test_rule_holds_and_fails_on_each_clause():
    assert tb.verdict(_rows(80.0))[0]
    # a snapshot cpsat proves and cpsat+ti does not: the rule fails
    lost = [*_rows(80.0)[:2], _run("e", "cpsat", "OPTIMAL", 1.0, 1.0),
            _run("e", "cpsat+ti", "FEASIBLE", 1.0, 0.0), *_rows(80.0)[2:]]
    holds, why = tb.verdict(lost)
    assert not holds and any("does not: e" in x for x in why)
    # equal counts everywhere: not strictly more
    even = [r for r in _rows(80.0) if r.snapshot != "b"]
    assert not tb.verdict(even)[0]
    # a worse median certified gap at 51-70 (a better bound from cpsat+ti makes cpsat's gap
    # smaller only if its price is lower: give cpsat+ti a higher price)
    worse = [*_rows(80.0)[:-1], _run("d", "cpsat+ti", "FEASIBLE", 120.0, 80.0, "51-70", 30.0)]
    assert not tb.verdict(worse)[0]


def test_report_has_rule_verdict_and_tables():
    text = tb.report(_rows(80.0), 30.0, ["# title"])
    assert tb.rule("cpsat+ti") in text and "Verdict: the rule holds." in text
    assert "| 51-70 | cpsat+ti | 1 | 0 | 0 | 30.0 | 10.00% | - |" in text


def test_partial_run_never_writes_the_committed_file(capsys):
    with pytest.raises(SystemExit) as e:
        tb.main(["--sample", "1", "--out", str(tb.RESULTS)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "written only by the full configuration" in err and "Traceback" not in err
    assert not tb.is_full(30.0, 0, "21-30,31-50", "cpsat,cpsat+ti,cpsat+ti+fix", "")
    assert not tb.is_full(30.0, 0, "21-30,31-50,51-70", "cpsat,cpsat+ti", "")


def test_partial_run_is_marked_partial(tmp_path, monkeypatch):
    monkeypatch.setattr(tb, "run", lambda s, name, pb, b, limit: _run(name, s, "OPTIMAL",
                                                                      1.0, 1.0, b))
    out = tmp_path / "t.md"
    assert tb.main(["--sample", "1", "--bins", "21-30", "--out", str(out)]) == 0
    text = out.read_text()
    assert "partial run, not the committed configuration" in text.splitlines()[0]
    assert "Verdict on this partial run (the rule decides on the full configuration" in text
    assert text.count("| 21-30 |") == 1 + len(tb.CHALLENGERS)  # one row per solver


def test_full_configuration_runs_both_challengers():
    assert tb.is_full(**{k.replace("sample", "sample_"): v for k, v in tb.FULL.items()})
    assert set(tb.FULL["solvers"].split(",")) == {tb.BASE, *tb.CHALLENGERS}


def test_each_challenger_gets_its_rule_and_verdict():
    fix = [tb.Run(r.snapshot, r.k, r.bin, "cpsat+ti+fix", r.status, r.price, r.bound,
                  r.moved, r.wall) for r in _rows(80.0) if r.solver == "cpsat+ti"]
    fix[1] = tb.Run("b", 25, "21-30", "cpsat+ti+fix", "FEASIBLE", 11.0, 9.0, 3, 30.0)
    text = tb.report(_rows(80.0) + fix, 30.0, ["# title"])
    assert tb.rule("cpsat+ti") in text and tb.rule("cpsat+ti+fix") in text
    # cpsat+ti proves b, which cpsat leaves open; the fixed variant proves no more than cpsat
    ti, fixed = text.split("## The rule for `cpsat+ti+fix`")
    assert "Verdict: the rule holds." in ti
    assert "Verdict: the rule does not hold." in fixed
    assert "proved 21-30: cpsat 1, cpsat+ti+fix 1" in fixed


def test_a_variant_runs_its_registered_solver_with_its_options(monkeypatch):
    from sim import registry
    from sim.problems import insertion as ins
    from sim.result import Result, Status

    seen = {}

    def fake(pb, **kw):
        seen.update(kw)
        return Result("cpsat+ti", Status.FEASIBLE, 1.0, None, 0.0,
                      ins.current_schedule(pb))

    monkeypatch.setattr(registry, "solver", lambda fam, name: fake if name == "cpsat+ti"
                        else pytest.fail(f"resolved {name}"))
    pb = ins.load(sorted(tb.SNAPSHOTS.glob("*.json"))[0])
    r = tb.run("cpsat+ti+fix", "x.json", pb, "21-30", 5.0)
    assert seen == {"time_limit": 5.0, "fixing": True, "backend": "scip"}
    assert r.solver == "cpsat+ti+fix"


@pytest.mark.parametrize("solvers, message", [
    ("cpsat,nosuch", "unknown solver 'nosuch'"),
    ("cpsat,cpsat", "a solver named twice"),
])
def test_bad_solver_lists_are_refused(solvers, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        tb.main(["--solvers", solvers, "--out", str(tmp_path / "x.md")])
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "x.md").exists()
