"""The numpy baseline (random search over a linear priority): a reproducible budget,
training jobs apart from the evaluation windows, and its saved theta as a gym-eval agent."""

import json

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from sim.batch import env_example  # noqa: E402


def test_a_candidate_budget_gives_the_same_theta_and_trains_apart_from_the_windows():
    kw = {"candidates": 3, "length": 16, "train_windows": 3, "test_windows": 4, "seed": 2,
          "evaluation": False}
    a, b = env_example.example(None, **kw), env_example.example(None, **kw)
    assert a["tried"] == b["tried"] == 3 and a["rows"] == []
    np.testing.assert_array_equal(a["theta"], b["theta"])
    from sim.batch.env_eval import random_windows

    assert a["windows"] == random_windows(10_000, 4, 16, 2)  # gym-eval's, for lublin_256
    with pytest.raises(ValueError, match="one budget"):
        env_example.example(1.0, **kw)


def test_saved_theta_runs_in_gym_eval_as_the_policy_it_trained(tmp_path, monkeypatch, capsys):
    from sim.batch.env import SchedulingEnv
    from sim.batch.env_eval import evaluate, run_policy

    path = tmp_path / "theta.json"
    assert env_example.main(["--candidates", "4", "--length", "12", "--windows", "2",
                             "--train-windows", "2", "--save", str(path), "--no-eval"]) == 0
    out = capsys.readouterr().out
    assert "SCHEDSEARCH_LINEAR_THETA=" in out and "--windows 2 --length 12 --seed 0" in out
    theta = json.loads(path.read_text())["theta"]
    monkeypatch.setenv(env_example.THETA_ENV, str(path))
    rows = evaluate(["sim.batch.env_example:act"], [(100, 12)], time_limit=20)
    agent = [r for r in rows if r["policy"] == "sim.batch.env_example:act"][0]
    env = SchedulingEnv("lublin_256", window=12, backfill="easy")
    direct = run_policy(env_example.linear_policy(np.array(theta)), env, 100, 12)
    assert agent["status"] == "" and agent["avg_wait"] == direct["avg_wait"]


def test_bad_options_are_refused_and_write_nothing(tmp_path, capsys):
    with pytest.raises(SystemExit):
        env_example.main(["--seconds", "1", "--candidates", "2"])
    with pytest.raises(SystemExit):
        env_example.main(["--seconds", "-1"])
    assert env_example.main(["--candidates", "1", "--windows", "1", "--length", "10000",
                             "--save", str(tmp_path / "t.json"), "--no-eval"]) == 2
    assert "windows" in capsys.readouterr().err and not list(tmp_path.iterdir())
