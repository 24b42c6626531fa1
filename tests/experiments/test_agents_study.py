"""The learned-agents study's summary: gaps and paired differences to EASY computed per
window, failed windows left out and counted, no interval from one window."""

from sim.experiments.agents.study import FULL, QUICK, commands, summary_rows


def _row(start, policy, wait, gap, status=""):
    return {"start": start, "length": 8, "policy": policy, "status": status,
            "avg_wait": wait, "gap_s": gap}


def test_summary_pairs_each_policy_with_easy_on_the_same_window():
    rows = [_row(0, "optimum", 10.0, 0.0, "OPTIMAL"), _row(0, "easy", 30.0, 20.0),
            _row(0, "agent", 20.0, 10.0),
            _row(5, "optimum", 0.0, 0.0, "OPTIMAL"), _row(5, "easy", 4.0, 4.0),
            _row(5, "agent", 4.0, 4.0),
            _row(9, "optimum", 1.0, 0.0, "OPTIMAL"), _row(9, "easy", 1.0, 0.0),
            {**_row(9, "agent", None, None, "failed"), "error": "timeout"}]
    by = {r[0]: r for r in summary_rows(rows)}
    assert set(by) == {"easy", "agent"}
    assert by["agent"][1] == "2 / 3"  # the failed window is counted, not averaged
    assert by["agent"][2].startswith("7.0 ± ")  # gaps 10 and 4
    assert by["agent"][3] == "0"
    assert by["agent"][4].startswith("-5.0 ± ")  # 20 - 30 and 4 - 4
    assert by["agent"][5] == "1 / 1 / 0"
    assert by["easy"][3] == "1" and by["easy"][4] == "-"


def test_one_window_gives_no_interval():
    rows = [_row(0, "optimum", 1.0, 0.0, "OPTIMAL"), _row(0, "easy", 3.0, 2.0)]
    assert summary_rows(rows)[0][2] == "2.0 (n = 1)"


def test_the_three_commands_share_trace_windows_length_and_seed(tmp_path):
    for c in (FULL, QUICK):
        cmds = commands(c, tmp_path)
        flags = [a[a.index("--trace"):a.index("--trace") + 8] for a in cmds.values()]
        assert flags[0] == flags[1] == flags[2]
        assert "sim.batch.env_sb3:act" in cmds["gym-eval"][-2]
        assert "sim.batch.env_example:act" in cmds["gym-eval"][-2]
