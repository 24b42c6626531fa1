"""A learned scheduler without a deep-learning library: random search over a linear
priority function, measured against EASY and the proved offline optimum.

The policy scores every selectable waiting job by ``theta . x`` over its four observation
features (wait, processors, estimate, fits now; ``sim.batch.env``) and picks the highest
(the oldest on ties), with EASY backfilling around the pick. ``theta = 0`` gives every
job the same score, so the search starts from EASY itself. Each round perturbs the best
``theta`` with Gaussian noise (step ``sigma``) and keeps the perturbation when it lowers
the mean average wait over the training windows (random-search hill climbing); the
search stops after ``seconds`` of wall time. The learned policy, EASY, FCFS and the
optimum are then compared by ``sim.batch.env_eval.evaluate`` on separate test windows.

Run: ``python -m sim.batch.env_example [--seconds 60]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.batch.env import JOB_FEATURES, SchedulingEnv
from sim.batch.env_eval import EnvPolicy, evaluate, random_windows, run_policy, table


def linear_policy(theta: np.ndarray, name: str = "linear") -> EnvPolicy:
    """Pick the selectable job with the highest ``theta . features`` (EASY backfilling)."""
    theta = np.asarray(theta, dtype=np.float32)

    def act(env: SchedulingEnv) -> int:
        k = int(env.last_info["action_mask"].sum())
        rows = env.last_obs[:JOB_FEATURES * k].reshape(k, JOB_FEATURES)
        return int(np.argmax(rows @ theta))

    return EnvPolicy(name, act, "easy")


def mean_wait(policy: EnvPolicy, env: SchedulingEnv, windows: Sequence[tuple[int, int]]
              ) -> float:
    """Mean over ``windows`` of the policy's average wait (s)."""
    return float(np.mean([run_policy(policy, env, s, n)["avg_wait"] for s, n in windows]))


def train(env: SchedulingEnv, windows: Sequence[tuple[int, int]], *, seconds: float = 60.0,
          sigma: float = 1.0, seed: int = 0) -> tuple[np.ndarray, float, int]:
    """Random-search hill climbing from ``theta = 0`` (EASY); returns the best ``theta``,
    its training score (mean average wait, s) and the number of candidates tried."""
    rng = np.random.default_rng(seed)
    best = np.zeros(JOB_FEATURES)
    best_score = mean_wait(linear_policy(best), env, windows)
    tried = 0
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end:
        cand = best + sigma * rng.standard_normal(JOB_FEATURES)
        score = mean_wait(linear_policy(cand), env, windows)
        tried += 1
        if score < best_score:
            best, best_score = cand, score
    return best, best_score, tried


def example(seconds: float = 60.0, *, trace: str = "lublin_256", length: int = 32,
            train_windows: int = 16, test_windows: int = 10, seed: int = 0,
            time_limit: float = 10.0) -> dict[str, Any]:
    """Train for ``seconds`` on ``train_windows`` random windows of ``length`` jobs and
    evaluate the learned policy, EASY, FCFS and the optimum on ``test_windows`` other
    random windows. Returns ``theta``, ``train_score``, ``easy_train_score``, ``tried``
    and the evaluation ``rows`` (``sim.batch.env_eval.evaluate``)."""
    env = SchedulingEnv(trace, window=length, backfill="easy", reward="wait")
    wins = random_windows(len(env.workload), train_windows + test_windows, length, seed)
    train_w, test_w = wins[:train_windows], wins[train_windows:]
    easy_train = mean_wait(linear_policy(np.zeros(JOB_FEATURES)), env, train_w)
    theta, score, tried = train(env, train_w, seconds=seconds, seed=seed)
    rows = evaluate([linear_policy(theta, "learned"), "easy", "fcfs"], test_w,
                    trace=env.workload, time_limit=time_limit)
    return {"theta": theta, "train_score": score, "easy_train_score": easy_train,
            "tried": tried, "rows": rows}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--trace", default="lublin_256")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = example(args.seconds, trace=args.trace, seed=args.seed)
    print(f"theta (wait, procs, estimate, fits) = {np.round(out['theta'], 3).tolist()}; "
          f"{out['tried']} candidates; training mean wait {out['train_score']:.1f} s "
          f"(EASY {out['easy_train_score']:.1f} s)")
    print(table(out["rows"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
