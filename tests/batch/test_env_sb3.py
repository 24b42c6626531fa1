"""The sb3-contrib training recipe: runs where its packages are installed, else says what
to install; its agent is judged by gym-eval against the proved optimum on jobs it never
trained on."""

import numpy as np
import pytest

pytest.importorskip("gymnasium")

from sim.batch import env_sb3  # noqa: E402

needs_sb3 = pytest.mark.skipif(bool(env_sb3.missing()),
                               reason="needs stable-baselines3 and sb3-contrib")


@pytest.mark.skipif(not env_sb3.missing(), reason="stable-baselines3 and sb3-contrib present")
def test_recipe_without_its_packages_names_them(capsys):
    assert env_sb3.main(["--steps", "64"]) == 2
    err = capsys.readouterr().err
    assert "pip install stable-baselines3 sb3-contrib" in err and "env_example" in err


def test_training_jobs_leave_out_every_job_of_gym_evals_windows():
    from sim.batch.env_eval import random_windows

    whole = env_sb3.training_jobs(windows=0)
    train = env_sb3.training_jobs(windows=20, length=32, seed=3)
    wins = random_windows(len(whole), 20, 32, 3)  # what gym-eval --seed 3 draws
    test_ids = {whole.jobs[i].id for s, n in wins for i in range(s, s + n)}
    train_ids = [j.id for j in train.jobs]
    assert not test_ids & set(train_ids)
    assert len(train_ids) + len(test_ids) == len(whole)
    assert [j.submit for j in train.jobs] == sorted(j.submit for j in train.jobs)


def test_recipe_refuses_bad_options_before_training(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        env_sb3.main(["--steps", "0"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        env_sb3.main(["--reward", "makespan"])


@needs_sb3
def test_recipe_refuses_a_model_path_it_cannot_save_to(tmp_path, capsys):
    assert env_sb3.main(["--steps", "64", "--model", str(tmp_path / "m.pt")]) == 2
    assert env_sb3.main(["--steps", "64", "--model", str(tmp_path / "no" / "m.zip")]) == 2
    assert "model" in capsys.readouterr().err and not list(tmp_path.iterdir())


@pytest.mark.timed
@needs_sb3
def test_recipe_trains_and_gym_eval_judges_the_agent(tmp_path, monkeypatch):
    from sim.batch.env import SchedulingEnv, _window_workload
    from sim.batch.env_agent import play, replay
    from sim.batch.env_eval import evaluate

    model = env_sb3.train(length=16, steps=256, windows=2, model_path=str(tmp_path / "m.zip"))
    again = env_sb3.train(length=16, steps=256, windows=2, model_path=str(tmp_path / "n.zip"))
    monkeypatch.setenv(env_sb3.MODEL_ENV, model)
    rows = evaluate(["easy", "sim.batch.env_sb3:act"], [(40, 12)], time_limit=20)
    by = {r["policy"]: r for r in rows}
    agent, opt = by["sim.batch.env_sb3:act"], by["optimum"]
    assert agent["status"] == "" and opt["status"] == "OPTIMAL"
    assert agent["gap_s"] == pytest.approx(agent["avg_wait"] - opt["avg_wait"])
    assert agent["gap_s"] >= -1e-9 and by["easy"]["gap_s"] >= -1e-9

    # in this process: every action is inside the mask, and the replay (validated) gives
    # the metrics gym-eval reported; the same seed trained the same model
    window = _window_workload(SchedulingEnv("lublin_256", window=1).workload, 40, 12)
    seen = []

    def watched(obs, info):
        a = env_sb3.act(obs, info)
        seen.append(bool(info["action_mask"][a]))
        return a

    monkeypatch.setattr(env_sb3, "_MODEL", None)
    actions = play(watched, window, env_sb3.act.env_options)
    assert seen and all(seen)
    assert replay(actions, window, env_sb3.act.env_options)["avg_wait"] == agent["avg_wait"]
    monkeypatch.setenv(env_sb3.MODEL_ENV, again)
    monkeypatch.setattr(env_sb3, "_MODEL", None)
    assert play(env_sb3.act, window, env_sb3.act.env_options) == actions
    monkeypatch.setattr(env_sb3, "_MODEL", None)
    from sb3_contrib import MaskablePPO

    a, b = (MaskablePPO.load(p).policy.state_dict() for p in (model, again))
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
