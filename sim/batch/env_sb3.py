"""Recipe: train a masked PPO agent (sb3-contrib) on ``SchedulingEnv`` and judge it with
``gym-eval`` against EASY and the proved offline optimum.

Needs ``stable-baselines3`` and ``sb3-contrib`` (and their PyTorch), which the project
does not install; without them ``main`` says what to install and returns 2. The
project's own learned baseline needs neither (``sim.batch.env_example``: random search
over a linear priority, numpy only).

The recipe:

1. ``SchedulingEnv(trace, window=LENGTH, backfill="easy", reward="bsld-step")``: the
   agent picks the next job, EASY backfills around it; the shaped reward sums to minus
   the window's average bounded slowdown.
2. ``MaskablePPO("MlpPolicy", env)``: sb3-contrib's PPO reads the selectable jobs from
   ``env.action_masks()``, so no invalid action is ever sampled (plain PPO would need
   ``invalid_action="oldest"``). ``model.learn(total_timesteps=STEPS)``; the model is
   saved to ``--model`` (a ``.zip``).
3. ``act`` below is a gym-eval agent (``act(obs, info) -> action``) that loads the model
   named by the environment variable ``SCHEDSEARCH_SB3_MODEL`` and predicts with the
   mask, deterministically::

       python -m sim.batch.env_sb3 --steps 20000 --model ppo_easy.zip
       SCHEDSEARCH_SB3_MODEL=ppo_easy.zip schedsearch gym-eval --windows 10 \\
           --length 32 --policies easy,fcfs,sim.batch.env_sb3:act

   gym-eval runs it in a worker process, replays and validates its actions, and prints
   its gap to the optimum per window and in the summary.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

MODEL_ENV = "SCHEDSEARCH_SB3_MODEL"
REQUIRED = ("stable_baselines3", "sb3_contrib")


def missing() -> list[str]:
    """The packages of the recipe that do not import here."""
    return [m for m in REQUIRED if importlib.util.find_spec(m) is None]


def train(trace: str = "lublin_256", *, length: int = 32, steps: int = 20_000,
          seed: int = 0, model_path: str = "ppo_easy.zip") -> str:
    """Train ``MaskablePPO`` for ``steps`` decisions on random windows of ``length`` jobs
    of ``trace`` (EASY backfilling, shaped bounded-slowdown reward); save the model to
    ``model_path`` and return it."""
    from sb3_contrib import MaskablePPO

    from sim.batch.env import SchedulingEnv

    env = SchedulingEnv(trace, window=length, backfill="easy", reward="bsld-step", seed=seed)
    model = MaskablePPO("MlpPolicy", env, seed=seed, verbose=0)
    model.learn(total_timesteps=steps)
    model.save(model_path)
    return model_path


_MODEL: Any = None


def act(obs: Any, info: dict[str, Any]) -> int:
    """The saved model's deterministic masked choice (model: ``$SCHEDSEARCH_SB3_MODEL``)."""
    global _MODEL
    if _MODEL is None:
        from sb3_contrib import MaskablePPO

        path = os.environ.get(MODEL_ENV)
        if not path:
            raise ValueError(f"set {MODEL_ENV} to the model's .zip")
        _MODEL = MaskablePPO.load(path)
    action, _ = _MODEL.predict(obs, action_masks=info["action_mask"].astype(bool),
                               deterministic=True)
    return int(action)


act.env_options = {"backfill": "easy"}  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    """Train and save; 2 with the packages to install when they are missing."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default="lublin_256")
    ap.add_argument("--length", type=int, default=32, help="jobs per training window")
    ap.add_argument("--steps", type=int, default=20_000, help="decisions to train on")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="ppo_easy.zip", help="where to save the model")
    args = ap.parse_args(argv)
    lacking = missing()
    if lacking:
        print(f"env_sb3: error: the recipe needs {', '.join(lacking)}: pip install "
              f"stable-baselines3 sb3-contrib (the numpy baseline needs neither: "
              f"python -m sim.batch.env_example)", file=sys.stderr)
        return 2
    path = train(args.trace, length=args.length, steps=args.steps, seed=args.seed,
                 model_path=args.model)
    print(f"saved {path}; evaluate: {MODEL_ENV}={path} schedsearch gym-eval "
          f"--policies easy,fcfs,sim.batch.env_sb3:act")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
