"""The verdicts of the studies follow from their targets' rules and the committed results;
the reports' verdict tables and the README's reproductions table say what the code computes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.experiments import verdicts as v


def test_every_study_table_and_the_readme_agree_with_the_computed_verdicts() -> None:
    stale = [str(p) for p, text in v.expected_files().items() if p.read_text() != text]
    assert not stale, ("run `python -m sim.experiments.verdicts --write`; these disagree with "
                       f"the verdicts computed from results/: {stale}")


def test_an_edited_verdict_word_in_a_report_table_is_caught(tmp_path: Path) -> None:
    report = v.EXPERIMENTS / "talby" / "REPORT.md"
    text = report.read_text()
    table = text.split(v.BEGIN, 1)[1].split(v.END, 1)[0]
    assert "**trend only**" in table
    edited = text.replace("**trend only**", "**reproduced**", 1)
    outcomes = v.study_outcomes("talby")
    assert v.replace_between(edited, v.report_table(outcomes), "talby") != edited
    assert v.replace_between(text, v.report_table(outcomes), "talby") == text


def test_every_target_names_its_rule_and_where_our_value_is() -> None:
    for study in v.STUDIES:
        for t in v.load_targets(study):
            assert t["why"].strip(), (study, t["id"])
            assert "ours" in t or "missing" in t, (study, t["id"])
            out = v.evaluate(study, t)
            assert out.verdict in v.VERDICTS, (study, t["id"])


def val(x: float, half: float | None = None, label: str = "") -> v.Value:
    return v.Value(label, str(x), x, half)


def test_relative_rule_reproduced_trend_and_not() -> None:
    t = {"points": 5.0, "paper_value": [10.0, 20.0]}
    assert v.rule_relative(t, [val(12), val(18)], None)[0] == v.REPRODUCED
    assert v.rule_relative(t, [val(12), val(30)], None)[0] == v.TREND
    assert v.rule_relative(t, [val(12), val(-3)], None)[0] == v.NOT
    assert v.rule_relative({**t, "signed": False}, [val(12), val(30)], None)[0] == v.NOT
    assert v.rule_relative({"tolerance": 0.1, "paper_value": 100.0}, [val(109)],
                           None)[0] == v.REPRODUCED


def test_range_rule_with_a_trend_band() -> None:
    t = {"low": 10.0, "high": 30.0, "trend_low": 0.0}
    assert v.rule_range(t, [val(12), val(25)], None)[0] == v.REPRODUCED
    assert v.rule_range(t, [val(2), val(25)], None)[0] == v.TREND
    assert v.rule_range(t, [val(-2), val(25)], None)[0] == v.NOT
    assert v.rule_range({"high": 0.0, "need": 1}, [val(-1), val(3)], None)[0] == v.REPRODUCED


def test_range_rule_with_list_bounds_names_each_cells_own_range() -> None:
    t = {"low": [-100.0, -100.0, -5.0], "high": [-10.0, -1.0, 5.0],
         "trend_low": [-100.0, -100.0, -15.0], "trend_high": [0.0, 0.0, 15.0]}
    cells = [val(-20.1, label="J1"), val(0.3, label="J2"), val(51.0, label="L")]
    verdict, detail = v.rule_range(t, cells, None)
    assert verdict == v.NOT
    assert detail == ("1/3 in their ranges (J1 -20.1 in [-100, -10]; J2 0.3 not in "
                      "[-100, -1]; L 51 not in [-5, 5]); 1/3 in their ranges (J1 -20.1 "
                      "in [-100, 0]; J2 0.3 not in [-100, 0]; L 51 not in [-15, 15])")
    assert v.rule_range({"low": [20.0, 40.0]}, [val(19, label="a"), val(46, label="b")],
                        None)[1] == "1/2 in their ranges (a 19 not in >= 20; b 46 in >= 40)"
    with pytest.raises(v.TargetError, match="bound list"):
        v.rule_range({"low": [1.0, 2.0]}, cells, None)


def test_ci_sign_rule_needs_intervals_clear_of_zero() -> None:
    t = {"sign": 1}
    assert v.rule_ci_sign(t, [val(5, 2), val(9, 1)], None)[0] == v.REPRODUCED
    assert v.rule_ci_sign(t, [val(5, 6), val(9, 1)], None)[0] == v.TREND
    assert v.rule_ci_sign(t, [val(-5, 6), val(9, 1)], None)[0] == v.NOT
    assert v.rule_ci_sign({"sign": -1}, [val(-5, 2)], None)[0] == v.REPRODUCED
    with pytest.raises(v.TargetError):
        v.rule_ci_sign(t, [val(5)], None)


def test_cell_tests_rule_names_the_cells_against_the_paper() -> None:
    t = {"sign": -1}
    assert v.RULES["cell_tests"] is v.rule_cell_tests
    assert v.rule_cell_tests(t, [val(-5, 2), val(-9, 1)], None)[0] == v.REPRODUCED
    # one seed (no interval) or an interval spanning 0: not distinguishable, the trend
    verdict, detail = v.rule_cell_tests(t, [val(-5, 2), val(-9), val(-1, 3)], None)
    assert verdict == v.TREND
    assert "not distinguishable in 2/3 (1 with one seed)" in detail
    # a cell whose interval is clear of 0 on the other side is named, and decides
    verdict, detail = v.rule_cell_tests(t, [val(-5, 2), val(5.1, 0.4, label="K2 exp 64")],
                                        None)
    assert verdict == v.NOT
    assert "against it in 1/2 (K2 exp 64)" in detail
    # "generally": need cells on the paper's side, the others may be anything
    assert v.rule_cell_tests({"sign": 1, "need": 2}, [val(5, 1), val(6, 1), val(-7, 1)],
                             None)[0] == v.REPRODUCED
    assert v.rule_cell_tests({"sign": 1, "need": 2}, [val(5, 6), val(6, 7), val(-7, 9)],
                             None)[0] == v.TREND


def test_cell_band_rule_tests_each_interval_against_the_papers_range() -> None:
    t = {"low": 10.0, "high": 30.0, "trend_low": 0.0}
    assert v.RULES["cell_band"] is v.rule_cell_band
    assert v.rule_cell_band(t, [val(15, 4), val(25, 5)], None)[0] == v.REPRODUCED
    # an interval overlapping an end, or one seed: neither; every mean above 0, none
    # below it: the direction
    verdict, detail = v.rule_cell_band(t, [val(15, 4), val(8, 3), val(4)], None)
    assert verdict == v.TREND
    assert "inside [10, 30] in 1/3, outside it in 0/3, overlapping an end in 1/3" in detail
    assert "one seed in 1/3" in detail
    # an interval wholly below the band is named; below 0 it contradicts the direction
    verdict, detail = v.rule_cell_band(t, [val(15, 4), val(3, 2, label="K8 uni 64")], None)
    assert verdict == v.TREND and "outside it in 1/2 (K8 uni 64)" in detail
    verdict, detail = v.rule_cell_band(t, [val(15, 4), val(-5, 2)], None)
    assert verdict == v.NOT and "interval below 0 in 1/2" in detail
    assert v.rule_cell_band(t, [val(15, 4), val(-1, 5)], None)[0] == v.NOT  # a mean <= 0
    assert v.rule_cell_band({**t, "need": 1}, [val(15, 4), val(-5, 2)], None)[0] \
        == v.REPRODUCED


def test_sign_test_rule() -> None:
    ours = [val(x) for x in (5, 6, 7, 8, 9, 10)]
    other = [val(0)] * 6
    assert v.rule_sign_test({"sign": 1, "low": 3, "high": 20}, ours, other)[0] == v.REPRODUCED
    assert v.rule_sign_test({"sign": 1, "low": 10}, ours, other)[0] == v.TREND
    mixed = [val(x) for x in (5, -6, 7, -8, 9, 10)]
    assert v.rule_sign_test({"sign": 1}, mixed, other)[0] == v.NOT  # 4/6: p = 0.34
    assert v._sign_p(9, 9) == pytest.approx(1 / 512)


def test_paired_rule_uses_the_interval_of_the_differences() -> None:
    a = [val(x) for x in (10, 11, 12, 13, 14)]
    b = [val(x) for x in (9, 10, 11, 12, 13)]
    assert v.rule_paired({"sign": 1}, a, b)[0] == v.REPRODUCED  # +1 exactly, half-width 0
    noisy = [val(x) for x in (5, 15, 8, 16, 9)]
    assert v.rule_paired({"sign": 1}, noisy, b)[0] == v.NOT


def test_ranking_rule() -> None:
    vals = [val(1, label="A"), val(2, label="B"), val(3, label="C"), val(4, label="D")]
    assert v.rule_ranking({"order": ["A", "B", "C", "D"]}, vals, None)[0] == v.REPRODUCED
    assert v.rule_ranking({"order": ["A", "C", "B", "D"]}, vals, None)[0] == v.TREND
    assert v.rule_ranking({"order": ["D", "C", "B", "A"]}, vals, None)[0] == v.NOT
    assert v.rule_ranking({"order": ["D", "C", "B", "A"], "descending": True}, vals,
                          None)[0] == v.REPRODUCED


def test_monotone_and_check_and_names_rules() -> None:
    up = [val(x) for x in (1, 2, 3, 1, 3, 2)]
    assert v.rule_monotone({"length": 3, "direction": "rising"}, up, None)[0] == v.NOT
    t = {"length": 3, "direction": "rising", "trend_need": 1}
    assert v.rule_monotone(t, up, None)[0] == v.TREND
    assert v.rule_check({}, [v.Value("a", "yes", None), v.Value("b", "NO", None)],
                        None)[0] == v.NOT
    assert v.rule_check({}, [v.Value("a", "yes", None)], None)[0] == v.REPRODUCED


def test_a_check_names_each_missed_cell_distinctly() -> None:
    vals = [v.Value("tick 3 barrier n>=50 spin", "NO", None),
            v.Value("tick 3 barrier n>=50 blocking", "NO", None),
            v.Value("tick 4 complete blocking with server", "yes", None)]
    verdict, detail = v.rule_check({}, vals, None)
    assert verdict == v.NOT
    assert detail == ("met in 1/3 (not: tick 3 barrier n>=50 spin; "
                      "tick 3 barrier n>=50 blocking)")
    short = [v.Value("tick 2 sync", "NO", None), v.Value("tick 3 barrier", "NO", None)]
    assert v.rule_check({}, short, None)[1] == "met in 0/2 (not: tick 2; tick 3)"
    t = {"pattern": "[A-F]{3},[A-F]{3}"}
    ours = [v.Value("w", "0.7 ADE,BCF (-2%)", 0.7), v.Value("b", "0.3 ABC,DEF", 0.3)]
    paper = [v.Value("w", "0.7 ADE,BCF", 0.7), v.Value("b", "0.3 ADF,BCE", 0.3)]
    assert v.rule_names(t, ours, paper)[0] == v.NOT
    assert v.rule_names({**t, "need": 1}, ours, paper)[0] == v.REPRODUCED


def test_markdown_locators(tmp_path: Path) -> None:
    text = ("# T\n\n| k | x | paper | x |\n|---|---|---|---|\n"
            "| a | **1,200.5** | 3 | +2.0 +- 0.5 |\n| b | 17.0% | 4 / 5 | -1 |\n")
    p = tmp_path / "t.md"
    p.write_text(text)
    assert [c.mean for c in v.read_md(p, {"column": "x"})] == [1200.5, 17.0]
    cell = v.read_md(p, {"column": "x#2", "where": {"k": "a"}})[0]
    assert (cell.mean, cell.half) == (2.0, 0.5)
    assert v.read_md(p, {"column": "paper", "where": {"k": "b"}, "part": 1})[0].mean == 5
    change = v.read_md(p, {"column": "paper", "where": {"k": "b"}, "change_from": {"k": "a"}})
    assert change[0].mean == pytest.approx(100 / 3)
    with pytest.raises(v.TargetError):
        v.read_md(p, {"column": "missing"})


def test_a_target_without_its_results_file_is_not_computed() -> None:
    t = {"id": "x", "rule": "range", "high": 1.0, "ours": {"file": "results/nope.md",
                                                          "column": "a"}}
    assert v.evaluate("talby", t).verdict == v.NOT_COMPUTED
    assert v.evaluate("talby", {"id": "y", "rule": "range"}).verdict == v.NOT_COMPUTED


def test_the_command_checks_and_refuses_a_broken_target_file(tmp_path: Path, capsys,
                                                              monkeypatch) -> None:
    assert v.main(["--check"]) == 0
    study = tmp_path / "talby"
    study.mkdir()
    (study / "targets.toml").write_text('[[target]]\nid = "a"\n')
    monkeypatch.setattr(v, "EXPERIMENTS", tmp_path)
    monkeypatch.setattr(v, "STUDIES", ("talby",))
    assert v.main([]) == 2
    assert "lacks" in capsys.readouterr().err


def test_halves_locator_gives_the_worst_ratio_of_a_cells_pairs(tmp_path: Path) -> None:
    p = tmp_path / "c.md"
    p.write_text("| k | halves |\n|---|---|\n| a | 10/20, 30/15, 5/40 |\n")
    (cell,) = v.read_md(p, {"column": "halves", "halves": True})
    assert cell.mean == 8.0
    out = v.RULES["calibration"]({}, [cell] * 4, None)
    assert out[0] == v.CALIBRATION and "4 cells, 8 to 8" in out[1]


def test_every_target_says_when_its_rule_was_written_and_the_tables_show_it() -> None:
    for study in v.STUDIES:
        outcomes = v.study_outcomes(study)
        assert all(o.target["rule_written"] in v.RULE_WRITTEN for o in outcomes), study
        table = "\n".join(v.report_table(outcomes))
        after = sum(o.target["rule_written"] == v.AFTER for o in outcomes)
        assert table.count("(written after results)") == after, study
        if after == len(outcomes):
            assert f"All {after} rules below were written after the results" in table


def test_a_target_without_or_with_a_wrong_rule_written_is_refused(tmp_path: Path,
                                                                  monkeypatch) -> None:
    study = tmp_path / "talby"
    study.mkdir()
    base = ('[[target]]\nid = "a"\nreproduction = "r"\nclaim = "c"\nwhere = "w"\n'
            'paper = "p"\nrule = "range"\nwhy = "y"\n')
    monkeypatch.setattr(v, "EXPERIMENTS", tmp_path)
    (study / "targets.toml").write_text(base)
    with pytest.raises(v.TargetError, match="rule_written"):
        v.load_targets("talby")
    (study / "targets.toml").write_text(base + 'rule_written = "whenever"\n')
    with pytest.raises(v.TargetError, match="rule_written must be one of"):
        v.load_targets("talby")
    (study / "targets.toml").write_text(base + 'rule_written = "before results"\n')
    (t,) = v.load_targets("talby")
    assert v._written_sentence([v.Outcome(t, v.NOT_COMPUTED, "")]).startswith("All 1 rules "
                                                                              "were written before")
