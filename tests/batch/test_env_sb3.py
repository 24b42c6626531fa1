"""The sb3-contrib training recipe: runs where its packages are installed, else says what
to install."""

import pytest

pytest.importorskip("gymnasium")

from sim.batch import env_sb3  # noqa: E402


@pytest.mark.skipif(not env_sb3.missing(), reason="stable-baselines3 and sb3-contrib present")
def test_recipe_without_its_packages_names_them(capsys):
    assert env_sb3.main(["--steps", "64"]) == 2
    err = capsys.readouterr().err
    assert "pip install stable-baselines3 sb3-contrib" in err and "env_example" in err


@pytest.mark.timed
@pytest.mark.skipif(bool(env_sb3.missing()), reason="needs stable-baselines3 and sb3-contrib")
def test_recipe_trains_and_gym_eval_judges_the_agent(tmp_path, monkeypatch):
    from sim.batch.env_eval import evaluate

    model = env_sb3.train(length=16, steps=256, model_path=str(tmp_path / "m.zip"))
    monkeypatch.setenv(env_sb3.MODEL_ENV, model)
    rows = evaluate(["easy", "sim.batch.env_sb3:act"], [(40, 12)], time_limit=20)
    agent = [r for r in rows if r["policy"] == "sim.batch.env_sb3:act"]
    assert agent and agent[0]["status"] == "" and agent[0]["gap_s"] >= -1e-9
