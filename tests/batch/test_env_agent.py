"""Users' agents in gym-eval: run in a worker, replayed and validated, failures named."""

import textwrap

import pytest

pytest.importorskip("gymnasium")

from sim.batch.env_agent import AgentFailure, AgentRunner, resolve_agent  # noqa: E402
from sim.batch.env_eval import evaluate, main, table, window_table  # noqa: E402

AGENTS = textwrap.dedent('''
    import os
    import time
    import numpy as np

    def sjf(obs, info):
        k = int(info["action_mask"].sum())
        return int(np.argmin(obs[:4 * k].reshape(k, 4)[:, 2]))
    sjf.env_options = {"backfill": "easy"}

    def oldest(obs, info):
        return 0
    oldest.env_options = {"backfill": "easy"}

    def bad(obs, info):
        return 99

    def slow(obs, info):
        time.sleep(60)
        return 0

    def dies(obs, info):
        os._exit(3)

    def masked(obs, info):
        return int(obs["action_mask"].sum()) - 1
    masked.env_options = {"mask_obs": True}

    def typo(obs, info):
        return 0
    typo.env_options = {"backfil": "easy"}

    def chatty(obs, info):
        print("chatty agent here", flush=True)
        return 0
''')

pytestmark = pytest.mark.timed


@pytest.fixture
def agents(tmp_path, monkeypatch):
    (tmp_path / "study_agents.py").write_text(AGENTS)
    (tmp_path / "slow_import.py").write_text("import time\ntime.sleep(60)\n")
    (tmp_path / "raises_at_import.py").write_text("1 / 0\n")
    (tmp_path / "where_agent.py").write_text(textwrap.dedent('''
        import os
        import pathlib
        pathlib.Path("imported_in").write_text(str(os.getpid()))

        def act(obs, info):
            return 0
    '''))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_agent_beside_builtins_against_the_optimum(agents):
    rows = evaluate(["easy", "study_agents:oldest", "study_agents:sjf",
                     "study_agents:masked"], [(40, 12), (300, 12)], time_limit=20)
    by = {(r["start"], r["policy"]): r for r in rows}
    for start in (40, 300):
        assert by[start, "optimum"]["status"] == "OPTIMAL"
        # the agent that always picks the oldest job with EASY backfilling is EASY
        assert by[start, "study_agents:oldest"]["avg_wait"] == by[start, "easy"]["avg_wait"]
        for name in ("study_agents:sjf", "study_agents:masked"):
            assert by[start, name]["status"] == "" and by[start, name]["gap_s"] >= -1e-9
    assert "study_agents:sjf" in table(rows) and "OPTIMAL" in window_table(rows)


@pytest.mark.parametrize("agent,reason", [
    ("bad", "invalid action 99 at step 0"), ("slow", "time limit of 2 s"),
    ("dies", "exit code 3"),
])
def test_a_failing_agent_is_a_failed_window_naming_it(agents, agent, reason):
    rows = evaluate(["fcfs", f"study_agents:{agent}"], [(40, 8), (300, 8)], solver=None,
                    agent_time_limit=2)
    failed = [r for r in rows if r["status"] == "failed"]
    assert len(failed) == 2
    for r in failed:
        assert f"study_agents:{agent}" in r["error"] and reason in r["error"]
        assert r["avg_wait"] is None
    assert all(r["avg_wait"] is not None for r in rows if r["policy"] == "fcfs")
    assert table(rows).splitlines()[-1].split()[-1] == "2"


def test_bad_agent_references_are_one_line_errors(agents, capsys):
    with pytest.raises(ValueError, match="MODULE:NAME"):
        resolve_agent("study_agents:1x")
    for ref, field in (("nomodule:act", "does not import"), ("study_agents:nope", "nope"),
                       ("study_agents:typo", "backfil"), ("slow_import:act", "did not load"),
                       ("raises_at_import:act", "ZeroDivisionError")):
        with pytest.raises(ValueError, match=field):
            evaluate(["fcfs", ref], [(40, 8)], solver=None, agent_time_limit=3)
    assert main(["--windows", "1", "--length", "8", "--policies", "esay"]) == 2
    assert "did you mean 'easy'?" in capsys.readouterr().err
    from sim.cli import main as cli

    for bad in ("nan", "0", "-1"):
        assert cli(["gym-eval", "--agent-time-limit", bad]) == 2
        assert "argument --agent-time-limit:" in capsys.readouterr().err


def test_what_an_agent_prints_stays_out_of_the_output(agents, capfd):
    """The agent's prints go to standard error, never into gym-eval's output (its
    ``--json`` rows)."""
    rows = evaluate(["study_agents:chatty"], [(40, 8)], solver=None)
    assert rows[0]["avg_wait"] is not None
    out, err = capfd.readouterr()
    assert "chatty agent here" not in out and "chatty agent here" in err


@pytest.mark.parametrize("argv, message", [
    (["--solver", "none", "--time-limit", "5"], "--time-limit: no optimum is solved"),
    (["--policies", "fcfs,easy", "--agent-time-limit", "5"],
     "--agent-time-limit: --policies names no agent"),
])
def test_a_limit_that_cannot_act_is_refused(capsys, argv, message):
    """A time limit for an optimum that is not solved, or for agents that are not run, is
    refused instead of being printed as if it had bounded something."""
    from sim.cli import main as cli

    assert cli(["gym-eval", "--windows", "1", "--length", "4", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_agent_is_imported_only_in_the_worker(agents):
    import os

    rows = evaluate(["where_agent:act"], [(40, 8)], solver=None)
    assert rows[0]["avg_wait"] is not None
    assert int((agents / "imported_in").read_text()) != os.getpid()


def test_replayed_actions_not_the_workers_figures(agents):
    from sim.batch.env import SchedulingEnv, _window_workload

    w = SchedulingEnv("lublin_256", window=1).workload
    with AgentRunner(resolve_agent("study_agents:sjf"), time_limit=30) as r:
        m = r.run(_window_workload(w, 40, 12))
    assert m["jobs"] == 12
    from sim.batch.env_agent import replay

    with pytest.raises(AgentFailure, match="do not make the episode"):
        replay([0], _window_workload(w, 40, 12), {})


def test_gym_eval_prints_the_gap_per_window(agents, capsys):
    assert main(["--windows", "2", "--length", "8", "--policies",
                 "easy,study_agents:sjf,study_agents:bad"]) == 0
    out = capsys.readouterr().out
    assert "gap to the optimum" in out and "failed window" in out
    assert "study_agents:bad': returned invalid action 99" in out


@pytest.mark.parametrize("limit", [1e10, 1e308])
def test_an_agent_under_a_huge_time_limit_runs(agents, limit):
    """``--agent-time-limit`` accepts any finite number of seconds; waiting for the agent's
    answer must not overflow the operating system's poll timeout (it did at 1e10 s)."""
    rows = evaluate(["study_agents:sjf"], [(40, 8)], solver=None, agent_time_limit=limit)
    assert rows[0]["avg_wait"] is not None
