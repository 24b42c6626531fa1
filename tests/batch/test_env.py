"""The Gymnasium environment: action 0 is FCFS/EASY exactly, the gym API, masks, rewards,
determinism, bad input, the evaluation against the optimum and the numpy example."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from heuristics.backfill import EASY, FCFS  # noqa: E402
from sim.batch.env import REWARDS, SchedulingEnv, _window_workload  # noqa: E402
from sim.batch.machine import simulate  # noqa: E402
from sim.batch.metrics import summary  # noqa: E402
from sim.batch.validate import validate  # noqa: E402

WINDOWS = {"lublin_256": [(0, 300), (6000, 256)], "KTH-SP2": [(100, 300), (20000, 256)],
           "SDSC-SP2": [(500, 300), (40000, 256)]}


@functools.cache
def _env(trace: str, backfill: str | None, **kw) -> SchedulingEnv:
    return SchedulingEnv(trace, backfill=backfill, **kw)


def _episode(env: SchedulingEnv, start: int, length: int, choose=lambda env, info: 0):
    obs, info = env.reset(options={"start": start, "length": length})
    done, rewards, steps = False, [], 0
    while not done:
        obs, r, done, trunc, info = env.step(choose(env, info))
        assert trunc is False
        rewards.append(r)
        steps += 1
    return info, rewards, steps


def _same_metrics(a: dict, b: dict) -> None:
    keys = [k for k in a if k not in ("policy", "sim_seconds")]
    assert keys == [k for k in b if k not in ("policy", "sim_seconds")]
    for k in keys:
        if isinstance(a[k], float):
            assert round(a[k], 2) == round(b[k], 2), k
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("trace", sorted(WINDOWS))
@pytest.mark.parametrize("backfill,policy", [(None, FCFS), ("easy", EASY)])
def test_action_zero_is_fcfs_and_easy(trace, backfill, policy):
    env = _env(trace, backfill)
    for start, length in WINDOWS[trace]:
        info, _, steps = _episode(env, start, length)
        ref = simulate(_window_workload(env.workload, start, length), policy())
        s = info["schedule"]
        np.testing.assert_array_equal(s.start, ref.start)
        np.testing.assert_array_equal(s.end, ref.end)
        _same_metrics(info["metrics"], summary(ref))
        assert steps <= length
        if backfill is None:
            assert steps == length  # every job is a pick
        assert s.guarantees == ref.guarantees  # EASY's head reservation, recomputed
        validate(s)


def test_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SchedulingEnv("lublin_256", seed=0), skip_render_check=True)
        check_env(SchedulingEnv("lublin_256", seed=3, backfill="easy", obs_jobs=8,
                                reward="wait-step"), skip_render_check=True)


def _random_run(seed: int, backfill: str | None, reward: str = "bsld"):
    env = SchedulingEnv("KTH-SP2", window=200, backfill=backfill, reward=reward, seed=seed)
    env.action_space.seed(seed)
    obs, info = env.reset()
    trail = [obs.copy()]
    done = False
    while not done:
        a = env.action_space.sample()
        assert info["action_mask"][a] == 1
        obs, r, done, _, info = env.step(a)
        assert obs in env.observation_space
        trail.append(obs.copy())
        trail.append(np.float32(r))
    return trail, info


@pytest.mark.parametrize("backfill", [None, "easy"])
def test_seeded_random_episodes_are_reproducible_and_valid(backfill):
    a, info_a = _random_run(7, backfill)
    b, info_b = _random_run(7, backfill)
    c, _ = _random_run(8, backfill)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert len(a) != len(c) or not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    np.testing.assert_array_equal(info_a["schedule"].start, info_b["schedule"].start)
    validate(info_a["schedule"])  # also done by the env (check=True)
    if backfill == "easy":  # the picks' shadow times are promises; the head was the
        # agent's choice, which the schedule does not show: no guarantee to recompute
        assert info_a["schedule"].promises
        assert info_a["schedule"].guarantees == frozenset()


def test_sjf_picks_differ_from_fcfs_and_validate():
    env = _env("SDSC-SP2", "easy")

    def sjf(env, info):
        return int(np.argmin(env.waiting()["requested"]))

    info, _, _ = _episode(env, 3000, 300, sjf)
    fcfs, _, _ = _episode(env, 3000, 300)
    assert not np.array_equal(info["schedule"].start, fcfs["schedule"].start)
    validate(info["schedule"])


@pytest.mark.parametrize("kind", ["bsld", "wait"])
def test_shaped_reward_sums_to_the_terminal_reward(kind):
    end = SchedulingEnv("lublin_256", reward=kind, backfill="easy")
    step = SchedulingEnv("lublin_256", reward=f"{kind}-step", backfill="easy")
    info, r_end, _ = _episode(end, 2000, 256)
    _, r_step, _ = _episode(step, 2000, 256)
    assert all(r == 0.0 for r in r_end[:-1])
    m = info["metrics"]
    expect = m["avg_bounded_slowdown"] if kind == "bsld" else m["avg_wait"] / 3600
    assert r_end[-1] == pytest.approx(-expect)
    assert sum(r_step) == pytest.approx(-expect, rel=1e-9)
    assert sum(r < 0 for r in r_step) > 1


def test_observation_layout_and_mask():
    env = SchedulingEnv("lublin_256", obs_jobs=4)
    obs, info = env.reset(options={"start": 100, "length": 50})
    assert obs.shape == (4 * 4 + 4,) and obs.dtype == np.float32
    for _ in range(10):
        obs, _, done, _, info = env.step(0)
    w = env.waiting()
    k = len(w["procs"])
    assert info["action_mask"].tolist() == [1] * k + [0] * (4 - k)
    rows = obs[:16].reshape(4, 4)
    np.testing.assert_allclose(rows[:k, 0], w["wait"] / (w["wait"] + 3600), rtol=1e-6)
    np.testing.assert_allclose(rows[:k, 1], w["procs"] / env.P, rtol=1e-6)
    np.testing.assert_allclose(rows[:k, 2], w["requested"] / (w["requested"] + 3600),
                               rtol=1e-6)
    assert (rows[k:] == 0).all()
    assert obs[16] == pytest.approx(env._free / env.P)


def test_invalid_actions_raise_naming_the_action():
    env = SchedulingEnv("lublin_256", obs_jobs=8)
    _, info = env.reset(options={"start": 0, "length": 20})
    k = int(info["action_mask"].sum())
    for bad in (k, -1, 8, 100):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    with pytest.raises(ValueError, match="action"):
        env.step(0.5)
    env.step(np.int64(0))  # numpy integers are actions


@pytest.mark.parametrize("kwargs,field", [
    ({"window": 10_001}, "window"), ({"window": 0}, "window"), ({"obs_jobs": 0}, "obs_jobs"),
    ({"reward": "makespan"}, "reward"), ({"backfill": "conservative"}, "backfill"),
])
def test_bad_construction_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        SchedulingEnv("lublin_256", **kwargs)


def test_bad_reset_options_name_the_field():
    env = SchedulingEnv("lublin_256")
    with pytest.raises(ValueError, match="length"):
        env.reset(options={"start": 0, "length": 10_001})
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"start": 9_990, "length": 20})
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"begin": 0})
    assert set(REWARDS) == {"bsld", "wait", "bsld-step", "wait-step"}


@pytest.mark.parametrize("vec", ["SyncVectorEnv", "AsyncVectorEnv"])
def test_vector_envs(vec):
    fns = [functools.partial(SchedulingEnv, "lublin_256", window=32, backfill=b, seed=i)
           for i, b in enumerate((None, "easy"))]
    venv = getattr(gym.vector, vec)(fns)
    try:
        obs, info = venv.reset(seed=5)
        assert obs.shape == (2, 4 * 64 + 4)
        ends = 0
        for _ in range(80):
            obs, r, term, trunc, info = venv.step(np.zeros(2, dtype=np.int64))
            ends += int(term.sum())
        assert ends >= 2  # episodes of 32 jobs end and are reset automatically
        assert info["action_mask"].shape == (2, 64)
    finally:
        venv.close()


def test_evaluate_against_the_optimum():
    from sim.batch.env_eval import evaluate, table

    rows = evaluate(["fcfs", "sjf", "easy", "sjf-easy", "slack"], [(40, 12), (5000, 12)],
                    time_limit=20)
    opt = [r for r in rows if r["policy"] == "optimum"]
    assert len(opt) == 2 and all(r["status"] == "OPTIMAL" for r in opt)
    for r in rows:
        assert r["gap_s"] >= -1e-9  # no online schedule beats the offline optimum
    assert "optimum" in table(rows)
    with pytest.raises(ValueError, match="policies"):
        evaluate(["lifo"], [(0, 8)])


def test_gym_eval_main_exit_codes(capsys):
    from sim.batch.env_eval import main

    assert main(["--windows", "2", "--length", "8", "--policies", "fcfs,easy"]) == 0
    assert "optimum" in capsys.readouterr().out
    assert main(["--length", "20000"]) == 2
    assert "length" in capsys.readouterr().err


def test_example_quick_variant():
    from sim.batch.env_example import example

    out = example(2.0, length=16, train_windows=4, test_windows=2, time_limit=10)
    assert out["tried"] >= 1
    assert out["train_score"] <= out["easy_train_score"]  # starts from EASY, keeps the best
    names = {r["policy"] for r in out["rows"]}
    assert names == {"optimum", "learned", "easy", "fcfs"}


@pytest.mark.parametrize("kwargs", [{}, {"window": 32, "backfill": "easy", "mask_obs": True},
                                    {"obs_jobs": 8, "invalid_action": "oldest"}])
def test_registered_env_passes_check_env_without_a_warning(kwargs):
    from gymnasium.utils.env_checker import check_env

    env = gym.make("sim.batch.env:schedsearch/Batch-v0", **kwargs)
    assert env.spec.id == "schedsearch/Batch-v0"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
        check_env(SchedulingEnv("lublin_256", window=16, **{k: v for k, v in kwargs.items()
                                                             if k != "window"}))
    assert [str(w.message) for w in caught] == []


def test_action_masks_and_mask_in_a_dict_observation():
    env = SchedulingEnv("lublin_256", obs_jobs=8, mask_obs=True)
    obs, info = env.reset(options={"start": 0, "length": 20})
    assert set(obs) == {"observation", "action_mask"} and obs in env.observation_space
    masks = env.action_masks()
    assert masks.dtype == bool and masks.tolist() == info["action_mask"].astype(bool).tolist()
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
    done = False
    while not done:
        obs, _, done, _, info = env.step(int(np.flatnonzero(env.action_masks())[-1]))
        assert obs in env.observation_space
        np.testing.assert_array_equal(obs["action_mask"], env.action_masks().astype(np.int8))


def test_invalid_action_oldest_maps_to_zero_and_counts():
    plain = SchedulingEnv("lublin_256", obs_jobs=8)
    mapped = SchedulingEnv("lublin_256", obs_jobs=8, invalid_action="oldest")
    _, info = mapped.reset(options={"start": 0, "length": 20})
    plain.reset(options={"start": 0, "length": 20})
    steps = invalid = 0
    done = False
    while not done:
        bad = 8 if steps % 2 else 100  # never selectable
        _, _, done, _, info = mapped.step(bad)
        plain.step(0)
        steps += 1
        invalid += 1
        assert info["invalid_action"] and info["invalid_actions"] == invalid
    np.testing.assert_array_equal(info["schedule"].start, plain._finish()["schedule"].start)
    _, info = mapped.reset(options={"start": 0, "length": 20})
    assert info["invalid_actions"] == 0
    _, _, _, _, info = mapped.step(0)
    assert not info["invalid_action"] and info["invalid_actions"] == 0
    with pytest.raises(ValueError, match="invalid_action"):
        SchedulingEnv("lublin_256", invalid_action="clip")
