"""Recipe: train a masked PPO agent (sb3-contrib) on ``SchedulingEnv`` and judge it with
``gym-eval`` against EASY and the proved offline optimum.

Needs ``stable-baselines3`` and ``sb3-contrib`` (and their PyTorch), which the project
does not install (``pip install stable-baselines3 sb3-contrib``; PyPI's default
PyTorch wheel for Linux carries CUDA, PyTorch's CPU index a smaller one); without them
``main`` says what to install and returns 2. The project's own learned baseline needs
neither (``sim.batch.env_example``: random search over a linear priority, numpy only).

The recipe:

1. The training jobs: the trace less the jobs of the windows ``gym-eval`` evaluates on
   (``--windows W --length L --seed S``, the same flags as ``gym-eval``; ``--windows 0``
   trains on the whole trace), so that the agent is judged on jobs it never saw
   (``sim.batch.env_eval.held_out``).
2. ``SchedulingEnv(training jobs, window=L, backfill="easy", reward=REWARD, seed=S)``:
   the agent picks the next job, EASY backfills around it. The default reward
   ``"wait-step"`` sums to minus the window's average wait in hours, the quantity
   ``gym-eval``'s gap to the optimum measures (``"bsld-step"``: RLScheduler's bounded
   slowdown).
3. ``MaskablePPO("MlpPolicy", env, seed=S)`` with sb3-contrib's default
   hyperparameters: it reads the selectable jobs from ``env.action_masks()``, so no
   invalid action is ever sampled (plain PPO would need ``invalid_action="oldest"``).
   ``model.learn(total_timesteps=STEPS)`` (STEPS agent decisions); the model is saved to
   ``--model`` (a ``.zip``). PyTorch runs on ``--threads`` CPU threads (default 1); with
   the same seed, trace, steps and thread count, PyTorch's CPU kernels give the same
   model.
4. ``act`` below is a gym-eval agent (``act(obs, info) -> action``) that loads the model
   named by the environment variable ``SCHEDSEARCH_SB3_MODEL`` (one PyTorch thread) and
   predicts with the mask, deterministically (the most probable valid job)::

       python -m sim.batch.env_sb3 --steps 20000 --model ppo_easy.zip
       SCHEDSEARCH_SB3_MODEL=ppo_easy.zip schedsearch gym-eval --windows 20 \\
           --length 32 --seed 0 --policies easy,fcfs,sim.batch.env_sb3:act

   gym-eval runs it in a worker process, replays and validates its actions, and prints
   its gap to the optimum per window and in the summary.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from sim.argparser import Parser

MODEL_ENV = "SCHEDSEARCH_SB3_MODEL"
REQUIRED = ("stable_baselines3", "sb3_contrib")
REWARDS = ("wait-step", "bsld-step", "wait", "bsld")


def missing() -> list[str]:
    """The packages of the recipe that do not import here."""
    return [m for m in REQUIRED if importlib.util.find_spec(m) is None]


def training_jobs(trace: Any = "lublin_256", *, windows: int = 20, length: int = 32,
                  seed: int = 0, procs: int | None = None) -> Any:
    """The workload of ``trace`` less the jobs of the ``windows`` random windows that
    ``gym-eval --windows W --length L --seed S`` evaluates on (the whole workload when
    ``windows`` is 0)."""
    from sim.batch.env import SchedulingEnv
    from sim.batch.env_eval import held_out, random_windows

    workload = SchedulingEnv(trace, procs=procs, window=1).workload
    if windows == 0:
        return workload
    return held_out(workload, random_windows(len(workload), windows, length, seed), length)


def train(trace: Any = "lublin_256", *, length: int = 32, steps: int = 20_000,
          seed: int = 0, model_path: str = "ppo_easy.zip", reward: str = "wait-step",
          windows: int = 20, threads: int = 1) -> str:
    """Train ``MaskablePPO`` and save it.

    Parameters
    ----------
    trace : str, path or Workload
        As for ``SchedulingEnv``.
    length : int
        Jobs per training episode (and per held-out window).
    steps : int
        Agent decisions to train on (``total_timesteps``).
    seed : int
        Seed of PPO, of the episodes' windows and of the held-out windows.
    model_path : str
        Where the model is saved (a ``.zip``).
    reward : str
        The environment's reward (``REWARDS``).
    windows : int
        Held-out windows (``training_jobs``); 0 trains on the whole trace.
    threads : int
        PyTorch CPU threads.

    Returns
    -------
    str
        ``model_path``.
    """
    import torch
    from sb3_contrib import MaskablePPO

    from sim.batch.env import SchedulingEnv

    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
    if not model_path.endswith(".zip"):
        raise ValueError(f"model: the path must end in .zip (stable-baselines3 adds it "
                         f"otherwise), got {model_path!r}")
    if not os.path.isdir(os.path.dirname(os.path.abspath(model_path))):
        raise ValueError(f"model: no directory for {model_path!r}")
    torch.set_num_threads(threads)
    jobs = training_jobs(trace, windows=windows, length=length, seed=seed)
    env = SchedulingEnv(jobs, window=length, backfill="easy", reward=reward, seed=seed)
    model = MaskablePPO("MlpPolicy", env, seed=seed, verbose=0, device="cpu")
    model.learn(total_timesteps=steps)
    model.save(model_path)
    return model_path


_MODEL: Any = None


def act(obs: Any, info: dict[str, Any]) -> int:
    """The saved model's deterministic masked choice (model: ``$SCHEDSEARCH_SB3_MODEL``,
    loaded at the first call, one PyTorch thread)."""
    global _MODEL
    if _MODEL is None:
        import torch
        from sb3_contrib import MaskablePPO

        path = os.environ.get(MODEL_ENV)
        if not path:
            raise ValueError(f"set {MODEL_ENV} to the model's .zip")
        torch.set_num_threads(1)
        _MODEL = MaskablePPO.load(path, device="cpu")
    action, _ = _MODEL.predict(obs, action_masks=info["action_mask"].astype(bool),
                               deterministic=True)
    return int(action)


act.env_options = {"backfill": "easy"}  # type: ignore[attr-defined]


def main(argv: Sequence[str] | None = None) -> int:
    """Train and save, then print the gym-eval line; 2 with the packages to install when
    they are missing, or with a one-line error on bad input."""
    from sim.batch.env_eval import _at_least

    ap = Parser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default="lublin_256")
    ap.add_argument("--length", type=_at_least(1), default=32,
                    help="jobs per training episode and per held-out window")
    ap.add_argument("--windows", type=_at_least(0), default=20,
                    help="gym-eval's windows (--windows W --length L --seed S), held out of "
                         "training (0: train on the whole trace)")
    ap.add_argument("--steps", type=_at_least(1), default=20_000, help="decisions to train on")
    ap.add_argument("--seed", type=_at_least(0), default=0)
    ap.add_argument("--reward", choices=REWARDS, default="wait-step")
    ap.add_argument("--threads", type=_at_least(1), default=1, help="PyTorch CPU threads")
    ap.add_argument("--model", default="ppo_easy.zip", help="where to save the model")
    args = ap.parse_args(argv)
    lacking = missing()
    if lacking:
        print(f"env_sb3: error: the recipe needs {', '.join(lacking)}: pip install "
              f"stable-baselines3 sb3-contrib (the numpy baseline needs neither: "
              f"python -m sim.batch.env_example)", file=sys.stderr)
        return 2
    try:
        path = train(args.trace, length=args.length, steps=args.steps, seed=args.seed,
                     model_path=args.model, reward=args.reward, windows=args.windows,
                     threads=args.threads)
    except (ValueError, OSError) as exc:
        print(f"env_sb3: error: {exc}", file=sys.stderr)
        return 2
    line = ["schedsearch", "gym-eval", "--trace", args.trace, "--windows",
            str(args.windows or 20), "--length", str(args.length), "--seed", str(args.seed),
            "--policies", "easy,fcfs,sim.batch.env_sb3:act"]
    print(f"saved {path}; evaluate: {MODEL_ENV}={shlex.quote(path)} {shlex.join(line)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
