"""A learned scheduler without a deep-learning library: random search over a linear
priority function, measured against EASY and the proved offline optimum.

The policy scores every selectable waiting job by ``theta . x`` over its four observation
features (wait, processors, estimate, fits now; ``sim.batch.env``) and picks the highest
(the oldest on ties), with EASY backfilling around the pick. ``theta = 0`` gives every
job the same score, so the search starts from EASY itself. Each round perturbs the best
``theta`` with Gaussian noise (step ``sigma``) and keeps the perturbation when it lowers
the mean average wait over the training windows (random-search hill climbing); the
search stops after ``candidates`` perturbations (the same seed gives the same ``theta``)
or after ``seconds`` of wall time.

The evaluation windows are those of ``gym-eval --windows W --length L --seed S`` (the
same flags here); the training windows are random windows of the trace less their jobs
(``sim.batch.env_eval.held_out``), so the policy is judged on jobs it never saw. The
learned policy, EASY, FCFS and the optimum are compared by ``sim.batch.env_eval.evaluate``
on the evaluation windows; ``--save theta.json`` writes ``theta`` for ``act``, a gym-eval
agent (``$SCHEDSEARCH_LINEAR_THETA`` names the file) that runs beside the other agents::

    python -m sim.batch.env_example --candidates 200 --save theta.json --no-eval
    SCHEDSEARCH_LINEAR_THETA=theta.json schedsearch gym-eval --windows 20 --length 32 \\
        --seed 0 --policies easy,fcfs,sim.batch.env_example:act

Run: ``python -m sim.batch.env_example [--seconds 60 | --candidates N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.argparser import Parser
from sim.batch.env import JOB_FEATURES, SchedulingEnv
from sim.batch.env_eval import (
    EnvPolicy,
    _at_least,
    _positive_seconds,
    evaluate,
    held_out,
    random_windows,
    run_policy,
    table,
)

THETA_ENV = "SCHEDSEARCH_LINEAR_THETA"


def scores(theta: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``theta . x`` of each selectable waiting job (the first ``mask.sum()`` rows of the
    observation vector ``obs``)."""
    k = int(mask.sum())
    return obs[:JOB_FEATURES * k].reshape(k, JOB_FEATURES) @ theta


def linear_policy(theta: np.ndarray, name: str = "linear") -> EnvPolicy:
    """Pick the selectable job with the highest ``theta . features`` (EASY backfilling)."""
    theta = np.asarray(theta, dtype=np.float32)

    def act(env: SchedulingEnv) -> int:
        return int(np.argmax(scores(theta, env.last_obs, env.last_info["action_mask"])))

    return EnvPolicy(name, act, "easy")


def mean_wait(policy: EnvPolicy, env: SchedulingEnv, windows: Sequence[tuple[int, int]]
              ) -> float:
    """Mean over ``windows`` of the policy's average wait (s)."""
    return float(np.mean([run_policy(policy, env, s, n)["avg_wait"] for s, n in windows]))


def train(env: SchedulingEnv, windows: Sequence[tuple[int, int]], *,
          seconds: float | None = 60.0, candidates: int | None = None, sigma: float = 1.0,
          seed: int = 0) -> tuple[np.ndarray, float, int]:
    """Random-search hill climbing from ``theta = 0`` (EASY) for ``candidates``
    perturbations or, when that is None, ``seconds`` of wall time (exactly one of the two
    is given); returns the best ``theta``, its training score (mean average wait, s) and
    the number of candidates tried."""
    if (seconds is None) == (candidates is None):
        raise ValueError("give one budget: seconds or candidates")
    rng = np.random.default_rng(seed)
    best = np.zeros(JOB_FEATURES)
    best_score = mean_wait(linear_policy(best), env, windows)
    tried = 0
    t_end = time.perf_counter() + (seconds or 0.0)
    while (tried < candidates if candidates is not None else time.perf_counter() < t_end):
        cand = best + sigma * rng.standard_normal(JOB_FEATURES)
        score = mean_wait(linear_policy(cand), env, windows)
        tried += 1
        if score < best_score:
            best, best_score = cand, score
    return best, best_score, tried


def example(seconds: float | None = 60.0, *, candidates: int | None = None,
            trace: str = "lublin_256", length: int = 32, train_windows: int = 16,
            test_windows: int = 10, seed: int = 0, time_limit: float = 10.0,
            evaluation: bool = True) -> dict[str, Any]:
    """Train on ``train_windows`` random windows of ``length`` jobs drawn from the trace
    less the ``test_windows`` evaluation windows (``gym-eval``'s for that seed), then
    evaluate the learned policy, EASY, FCFS and the optimum on the evaluation windows
    (unless ``evaluation`` is False). Returns ``theta``, ``train_score``,
    ``easy_train_score``, ``tried``, the evaluation ``windows`` and ``rows``
    (``sim.batch.env_eval.evaluate``; empty without the evaluation)."""
    whole = SchedulingEnv(trace, window=1).workload
    test_w = random_windows(len(whole), test_windows, length, seed)
    env = SchedulingEnv(held_out(whole, test_w, length), window=length, backfill="easy",
                        reward="wait")
    train_w = random_windows(len(env.workload), train_windows, length, seed)
    easy_train = mean_wait(linear_policy(np.zeros(JOB_FEATURES)), env, train_w)
    theta, score, tried = train(env, train_w, seconds=seconds, candidates=candidates,
                                seed=seed)
    rows = evaluate([linear_policy(theta, "learned"), "easy", "fcfs"], test_w,
                    trace=whole, time_limit=time_limit) if evaluation else []
    return {"theta": theta, "train_score": score, "easy_train_score": easy_train,
            "tried": tried, "windows": test_w, "rows": rows}


_THETA: np.ndarray | None = None


def act(obs: Any, info: dict[str, Any]) -> int:
    """A gym-eval agent: the saved ``theta``'s pick (file: ``$SCHEDSEARCH_LINEAR_THETA``,
    written by ``--save``; read at the first call)."""
    global _THETA
    if _THETA is None:
        path = os.environ.get(THETA_ENV)
        if not path:
            raise ValueError(f"set {THETA_ENV} to the .json written by --save")
        with open(path, encoding="utf-8") as f:
            _THETA = np.asarray(json.load(f)["theta"], dtype=np.float32)
    return int(np.argmax(scores(_THETA, obs, info["action_mask"])))


act.env_options = {"backfill": "easy"}  # type: ignore[attr-defined]


def _save(path: str, out: dict[str, Any], args: argparse.Namespace) -> None:
    from instances.atomic import write_atomic

    data = {"theta": [float(x) for x in out["theta"]], "trace": args.trace,
            "length": args.length, "windows": args.windows, "seed": args.seed,
            "train_windows": args.train_windows, "candidates": out["tried"],
            "train_mean_wait_s": out["train_score"],
            "easy_train_mean_wait_s": out["easy_train_score"]}
    write_atomic(path, json.dumps(data, indent=1) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Train, save (``--save``) and evaluate (unless ``--no-eval``); 2 with a one-line
    error on bad input."""
    ap = Parser(description=__doc__.split("\n")[0])
    budget = ap.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=_positive_seconds, help="wall-time budget (default 60)")
    budget.add_argument("--candidates", type=_at_least(1),
                        help="perturbations to try (reproducible: same seed, same theta)")
    ap.add_argument("--trace", default="lublin_256")
    ap.add_argument("--length", type=_at_least(1), default=32, help="jobs per window")
    ap.add_argument("--windows", type=_at_least(1), default=20,
                    help="gym-eval's windows (--windows W --length L --seed S): held out "
                         "of training, evaluated on")
    ap.add_argument("--train-windows", type=_at_least(1), default=16)
    ap.add_argument("--seed", type=_at_least(0), default=0)
    ap.add_argument("--time-limit", type=_positive_seconds, default=10.0, help="s per optimum")
    ap.add_argument("--save", metavar="JSON", help="write theta for the gym-eval agent act")
    ap.add_argument("--no-eval", action="store_true", help="train (and save) only")
    args = ap.parse_args(argv)
    seconds = 60.0 if args.seconds is None and args.candidates is None else args.seconds
    try:
        out = example(seconds, candidates=args.candidates, trace=args.trace,
                      length=args.length, train_windows=args.train_windows,
                      test_windows=args.windows, seed=args.seed, time_limit=args.time_limit,
                      evaluation=not args.no_eval)
        if args.save:
            _save(args.save, out, args)
    except (ValueError, OSError) as exc:
        print(f"env_example: error: {exc}", file=sys.stderr)
        return 2
    print(f"theta (wait, procs, estimate, fits) = {np.round(out['theta'], 3).tolist()}; "
          f"{out['tried']} candidates; training mean wait {out['train_score']:.1f} s "
          f"(EASY {out['easy_train_score']:.1f} s)")
    if args.save:
        line = ["schedsearch", "gym-eval", "--trace", args.trace, "--windows",
                str(args.windows), "--length", str(args.length), "--seed", str(args.seed),
                "--policies", "easy,fcfs,sim.batch.env_example:act"]
        print(f"saved {args.save}; evaluate: {THETA_ENV}={shlex.quote(args.save)} "
              f"{shlex.join(line)}")
    if out["rows"]:
        print(table(out["rows"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
