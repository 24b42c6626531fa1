"""Both learned agents of the project, trained by their documented recipes, judged by one
``gym-eval`` run beside EASY, SJF-EASY, FCFS and the proved offline optimum.

The study runs the three documented commands, each in its own process:

1. ``python -m sim.batch.env_sb3`` (MaskablePPO, sb3-contrib) with ``--steps``;
2. ``python -m sim.batch.env_example --candidates C --save theta.json --no-eval`` (random
   search over a linear priority, numpy only);
3. ``schedsearch gym-eval --json`` with both agents (``sim.batch.env_sb3:act``,
   ``sim.batch.env_example:act``) beside ``easy,sjf-easy,fcfs``,

all three with the same ``--trace --windows --length --seed``: both recipes leave the jobs
of gym-eval's windows out of their training (``sim.batch.env_eval.held_out``). It writes
``agents.md`` (provenance, versions, the commands and their CPU time, the tables gym-eval
prints, per policy the gap to the optimum with its Student-t interval over the windows
and the paired difference to EASY) and ``agents.json`` (gym-eval's rows), the saved
models beside them.

Run: ``python -m sim.experiments.agents.study`` (the full configuration, written to
``results/``; about 20 CPU minutes); any other option values (``--quick``: a few seconds
of training, 3 windows) write to the repository's ``results/agents/``, marked PARTIAL.
Needs stable-baselines3 and sb3-contrib (``python -m sim.batch.env_sb3`` says what to
install).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, markdown_text, mean_ci, write_atomic

RESULTS = Path(__file__).resolve().parent / "results"
PACKAGES = ("torch", "stable-baselines3", "sb3-contrib", "gymnasium", "numpy", "ortools")
SB3 = "sim.batch.env_sb3:act"
LINEAR = "sim.batch.env_example:act"
BASELINES = ("easy", "sjf-easy", "fcfs")


@dataclass(frozen=True)
class Config:
    """One run of the study: the evaluation (``trace, windows, length, seed``, the optimum's
    ``time_limit`` in s) and the two trainings (``steps`` PPO decisions; ``candidates``
    perturbations over ``train_windows`` windows)."""

    trace: str = "lublin_256"
    windows: int = 20
    length: int = 32
    seed: int = 0
    time_limit: float = 60.0
    steps: int = 600_000
    candidates: int = 300
    train_windows: int = 16


FULL = Config()
QUICK = Config(windows=3, steps=2048, candidates=3, train_windows=4, time_limit=10.0)


def commands(c: Config, out: Path) -> dict[str, list[str]]:
    """The three commands of the study (argv lists; gym-eval's through its module)."""
    common = ["--trace", c.trace, "--windows", str(c.windows), "--length", str(c.length),
              "--seed", str(c.seed)]
    py = sys.executable
    return {
        "sb3": [py, "-m", "sim.batch.env_sb3", *common, "--steps", str(c.steps),
                "--model", str(out / "ppo_easy.zip")],
        "linear": [py, "-m", "sim.batch.env_example", *common, "--candidates",
                   str(c.candidates), "--train-windows", str(c.train_windows), "--save",
                   str(out / "theta.json"), "--no-eval"],
        "gym-eval": [py, "-m", "sim.batch.env_eval", *common, "--time-limit",
                     f"{c.time_limit:g}", "--policies", ",".join([*BASELINES, SB3, LINEAR]),
                     "--json"],
    }


def run(argv: list[str], env: dict[str, str]) -> tuple[str, float, float]:
    """Run ``argv``; its stdout, CPU seconds (the process and its children) and wall
    seconds. A failing command raises RuntimeError with its stderr's last line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"{shlex.join(argv[1:4])} exited {proc.returncode}: {last}")
    return proc.stdout, cpu, wall


def versions() -> str:
    """``name X.Y`` of Python and each of ``PACKAGES``."""
    out = [f"Python {platform.python_version()}"]
    for p in PACKAGES:
        try:
            out.append(f"{p} {version(p)}")
        except PackageNotFoundError:
            out.append(f"{p} (not installed)")
    return ", ".join(out)


def _mean(m: float, half: float, n: int, sign: str = "") -> str:
    """``m ± half``; with fewer than two values no interval (``m (n = 1)``, ``-`` for
    none)."""
    if n == 0:
        return "-"
    return f"{m:{sign}.1f} ± {half:.1f}" if n > 1 else f"{m:{sign}.1f} (n = 1)"


def summary_rows(rows: Sequence[dict[str, Any]]) -> list[list[str]]:
    """Per policy: windows finished, mean gap to the reference (s) with its 95% t
    half-width over the windows, the windows at the reference, and the mean paired
    difference of average wait to EASY's on the same windows (s, 95% t) with the windows
    where the policy waited less / the same / more than EASY. No interval is shown from
    fewer than two windows."""
    by: dict[str, dict[tuple[int, int], dict[str, Any]]] = {}
    for r in rows:
        by.setdefault(r["policy"], {})[(r["start"], r["length"])] = r
    easy = by["easy"]
    out = []
    for name, block in by.items():
        if name == "optimum":
            continue
        done = [r for r in block.values() if r["status"] != "failed"]
        gap, gap_h = mean_ci([r["gap_s"] for r in done])
        diffs = [r["avg_wait"] - easy[w]["avg_wait"] for w, r in block.items()
                 if r["status"] != "failed"]
        d, d_h = mean_ci(diffs)
        less = sum(x < -0.005 for x in diffs)
        more = sum(x > 0.005 for x in diffs)
        out.append([name, f"{len(done)} / {len(block)}", _mean(gap, gap_h, len(done)),
                    str(sum(abs(r["gap_s"]) < 0.005 for r in done)),
                    "-" if name == "easy" else _mean(d, d_h, len(diffs), "+"),
                    "-" if name == "easy" else f"{less} / {len(diffs) - less - more} / {more}"])
    return out


def report(c: Config, full: bool, cmds: dict[str, list[str]], times: dict[str, tuple],
           rows: list[dict[str, Any]], theta: dict[str, Any], wall: float) -> str:
    """The text of ``agents.md``."""
    from sim.batch.env_eval import table, window_table

    opt = [r for r in rows if r["policy"] == "optimum"]
    proved = sum(r["status"] == "OPTIMAL" for r in opt)
    top = f"{provenance.ROOT}/"
    shown = {k: shlex.join(["python", *(a.replace(top, "") for a in v[1:])])
             for k, v in cmds.items()}
    lines = [
        "# Learned agents against EASY and the proved offline optimum",
        "",
        *([] if full else ["**PARTIAL run** (not the committed configuration: "
                           f"{asdict(FULL)}).", ""]),
        f"Generated at {provenance.stamp()}; {versions()}; {platform.machine()}; "
        f"study wall time {wall:.0f} s; load average at the end (1/5/15 min) "
        f"{provenance.load_average()}.",
        "",
        f"Configuration: {asdict(c)}. Each command ran in its own process; CPU time is "
        "the process's and its children's (user + system).",
        "",
        markdown_text(["step", "command", "CPU [s]", "wall [s]"],
                      [[k, f"`{shown[k]}`", f"{times[k][0]:.0f}", f"{times[k][1]:.0f}"]
                       for k in cmds], "llrr"),
        "`python -m sim.batch.env_eval` is `schedsearch gym-eval`. It ran with "
        "`SCHEDSEARCH_SB3_MODEL=models/ppo_easy.zip` and "
        "`SCHEDSEARCH_LINEAR_THETA=models/theta.json` (in `models/` beside this file). The "
        "linear "
        f"policy's theta (wait, procs, estimate, fits) = "
        f"{[round(x, 4) for x in theta['theta']]}, training mean wait "
        f"{theta['train_mean_wait_s']:.1f} s against EASY's "
        f"{theta['easy_train_mean_wait_s']:.1f} s on its {theta['train_windows']} training "
        "windows.",
        "",
        f"## What gym-eval printed ({proved} of {len(opt)} optima proved)",
        "",
        "```",
        window_table(rows),
        table(rows),
        "```",
        "",
        f"## Gap to the optimum and paired difference to EASY (n = {len(opt)} windows)",
        "",
        "Mean ± the half-width of the 95% Student-t interval over the n windows (each "
        "window one observation; the windows are random windows of one trace, so the "
        "interval is over windows of this trace, not over traces). `gap` is the policy's "
        "average wait less the optimum's (s; the window's best schedule where the optimum is "
        "not proved); `vs EASY` is the policy's average wait less EASY's on the same window "
        "(s), and `less / same / more` counts the windows where it waited less than, as much "
        "as (within 0.005 s), or more than EASY.",
        "",
        markdown_text(["policy", "windows", "gap [s]", "= optimum", "vs EASY [s]",
                       "less / same / more"], summary_rows(rows), "lrrrrr"),
    ]
    return "\n".join(lines)


def study(c: Config, out: Path) -> tuple[str, list[dict[str, Any]]]:
    """Run the three commands with ``c``, writing the models to ``out/models``; the
    report's text and gym-eval's rows."""
    t = time.perf_counter()
    models = out / "models"
    models.mkdir(parents=True, exist_ok=True)
    cmds = commands(c, models)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               SCHEDSEARCH_SB3_MODEL=str(models / "ppo_easy.zip"),
               SCHEDSEARCH_LINEAR_THETA=str(models / "theta.json"))
    times: dict[str, tuple[float, float]] = {}
    stdout = ""
    for key, argv in cmds.items():
        print(f"running {key}: {shlex.join(argv[1:])}", flush=True)
        stdout, cpu, wall = run(argv, env)
        times[key] = (cpu, wall)
    rows = json.loads(stdout)["rows"]
    theta = json.loads((models / "theta.json").read_text())
    write_atomic(models / "README.md", f"# The study's trained agents\n\nWritten at "
                 f"{provenance.stamp()} (steps `sb3` and `linear` of `../agents.md`): "
                 "`ppo_easy.zip` (MaskablePPO, `sim.batch.env_sb3:act` reads it from "
                 "`$SCHEDSEARCH_SB3_MODEL`) and `theta.json` (the linear priority, "
                 "`sim.batch.env_example:act` reads it from `$SCHEDSEARCH_LINEAR_THETA`).\n")
    return report(c, c == FULL, cmds, times, rows, theta, time.perf_counter() - t), rows


def main(argv: Sequence[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a small PARTIAL configuration")
    for f, v in asdict(FULL).items():
        ap.add_argument(f"--{f.replace('_', '-')}", type=type(v), default=None)
    args = ap.parse_args(argv)
    base = QUICK if args.quick else FULL
    c = replace(base, **{f: getattr(args, f) for f in asdict(FULL)
                         if getattr(args, f) is not None})
    full = c == FULL
    out = RESULTS if full else PARTIAL_DIR / "agents"
    try:
        text, rows = study(c, out)
    except RuntimeError as exc:
        print(f"agents: error: {exc}", file=sys.stderr)
        return 2
    write_atomic(out / "agents.md", text)
    write_atomic(out / "agents.json", json.dumps({"rows": rows}, indent=1) + "\n")
    print(text)
    print(f"written to {out / 'agents.md'}" + ("" if full else " (PARTIAL run)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
