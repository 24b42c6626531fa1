"""Speed of the slack-based scheduler on the KTH-SP2 year, and its schedule checked unchanged.

``python -m sim.experiments.talby.speed [--repeat 3] [--orders AST] [--compress hold]
[--modes year] [--before REV] [--equality] [--no-reference]``

The KTH-SP2 year (128 processors, jobs killed at their request, equal
priorities, SF 3, AWT 2401 s) with the AST order must simulate in under 5 s with the same
schedule. This script runs, back to back in one run (the machine is shared: only a
comparison within one run means anything):

- ``reference``: ``SlackPolicy`` with the Profile-based slot search
  (``heuristics.slack.insert(..., fast=False)``, the search as it was before the fast
  path; the scheduler around it is today's);
- ``fast``: ``SlackPolicy`` as shipped (``heuristics.slack_fast``);
- with ``--before REV``: the whole simulator at git revision ``REV`` (exported with
  ``git archive`` to a temporary directory and run in a subprocess), the true "before".

Each is repeated ``--repeat`` times, alternating; the table gives the median and minimum
of the simulation's wall time (``Schedule.sim_seconds``) and of the process CPU time
(user + system, less sensitive to the other users of the machine), and the load average
before and after the run. Every run's start array is compared with the first variant's
and with main's (``tests/batch/data/slack_starts_main.json``: main's start arrays at the
commit named there, every order, both compress readings, the year and each month from an
empty machine). ``--equality`` then also simulates every order, compress reading and mode
once with the fast path and compares each start array with main's.

``--hash DIR`` instead prints the SHA-256 of every ``.npy`` start array in ``DIR``.

Writes ``sim/experiments/talby/results/slack_speed/slack_speed.md`` only for the full
configuration (``--before REV --equality``, the default case AST/hold/year, ``--repeat``
>= 3); otherwise ``results/slack_speed.md`` at the repository top, marked partial. Times
are seconds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments import common as provenance
from sim.experiments.common import PARTIAL_DIR, ROOT, markdown_table

FIXTURE = ROOT / "tests" / "batch" / "data" / "slack_starts_main.json"
RESULTS = Path(__file__).resolve().parent / "results" / "slack_speed"
PARTIAL = PARTIAL_DIR
ORDERS = ("AST", "AAT", "DU", "DC", "DP")
COMPRESS = ("hold", "list")
MODES = ("year", "month")

# one variant's run, also executed in a subprocess at another revision (--before)
CHILD = r"""
import json, sys, time
import numpy as np
from sim.batch.runner import load_workload
from sim.batch.machine import simulate
from instances.months import split_months
from heuristics.slack import SlackPolicy
order, compress, mode, variant = sys.argv[1:5]
w = load_workload("KTH-SP2", procs=128)
parts = [w] if mode == "year" else [m for _, m in split_months(w)]
opts = {"order": order, "compress": compress}
def policy():
    if variant == "reference":
        from heuristics.slack import Inserter
        from sim.batch.slack_scheduler import SlackScheduler
        return SlackScheduler(Inserter(order, compress=compress, fast=False),
                              name=f"slack-{order}")
    return SlackPolicy(**opts)
c0 = time.process_time()
sim = 0.0
starts, subs = [], []
for part in parts:
    s = simulate(part, policy())
    sim += s.sim_seconds
    starts.append(s.start)
    subs.append(np.array([j.submit for j in part.jobs], dtype=np.int64))
cpu = time.process_time() - c0
st = np.ascontiguousarray(np.concatenate(starts), dtype="<i8")
print(json.dumps({"sim": sim, "cpu": cpu, "sha256": __import__("hashlib").sha256(
    st.tobytes()).hexdigest(), "avg_wait": float(np.mean(st - np.concatenate(subs)))}))
"""




def start_hash(starts: np.ndarray) -> str:
    """SHA-256 of a start array as little-endian int64 (seconds)."""
    return hashlib.sha256(np.ascontiguousarray(starts, dtype="<i8").tobytes()).hexdigest()


def _run(order: str, compress: str, mode: str, variant: str, path: Path | None) -> dict:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    done = subprocess.run([sys.executable, "-c", CHILD, order, compress, mode, variant],
                          capture_output=True, text=True, env=env, cwd=path or ROOT)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"speed: the {variant} run of {order}/{compress}/{mode}"
                         f"{'' if path is None else ' at ' + str(path)} failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _export(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _hash_dir(path: Path) -> int:
    for f in sorted(path.glob("*.npy")):
        a = np.load(f)
        print(f"{f.stem}: sha256 {start_hash(a)} ({len(a)} jobs)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--orders", default="AST", help="comma-separated compress orders")
    ap.add_argument("--compress", default="hold", help="comma-separated: hold, list")
    ap.add_argument("--modes", default="year", help="comma-separated: year, month")
    ap.add_argument("--before", metavar="REV", help="also run the simulator at git REV")
    ap.add_argument("--equality", action="store_true",
                    help="compare every start array with main's (the fixture)")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the in-process reference search (faster)")
    ap.add_argument("--hash", metavar="DIR", type=Path,
                    help="print the SHA-256 of the .npy start arrays in DIR and stop")
    args = ap.parse_args(argv)
    if args.hash is not None:  # prints the hashes and stops: no other option acts
        ap.refuse_unread({"hash"}, "--hash")
        return _hash_dir(args.hash)
    orders = [o for o in args.orders.split(",") if o]
    compress = [c for c in args.compress.split(",") if c]
    modes = [m for m in args.modes.split(",") if m]
    for o in orders:
        if o not in ORDERS:
            raise SystemExit(f"--orders: unknown order {o!r} (choose from {ORDERS})")
    for c in compress:
        if c not in COMPRESS:
            raise SystemExit(f"--compress: unknown reading {c!r} (choose from {COMPRESS})")
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"--modes: unknown mode {m!r} (choose from {MODES})")
    fixture = json.loads(FIXTURE.read_text())
    full = (args.before is not None and args.equality and args.repeat >= 3
            and (orders, compress, modes) == (["AST"], ["hold"], ["year"])
            and not args.no_reference)
    commit = provenance.commit()
    load = os.getloadavg()
    print(f"commit {commit}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        variants: list[tuple[str, str, Path | None]] = []
        if args.before is not None:
            _export(args.before, Path(tmp))
            variants.append((f"before ({args.before})", "fast", Path(tmp)))
        if not args.no_reference:
            variants.append(("reference search", "reference", None))
        variants.append(("fast (this commit)", "fast", None))
        for order in orders:
            for comp in compress:
                for mode in modes:
                    runs: dict[str, list[dict]] = {v[0]: [] for v in variants}
                    for _ in range(args.repeat):
                        for label, variant, path in variants:
                            runs[label].append(_run(order, comp, mode, variant, path))
                    first = runs[variants[0][0]][0]["sha256"]
                    key = f"{order}-{comp}-{mode}"
                    for label, _, _ in variants:
                        rs = runs[label]
                        same = all(r["sha256"] == first for r in rs)
                        main_eq = all(r["sha256"] == fixture["starts"][key]["sha256"]
                                      for r in rs)
                        row = {
                            "case": key, "variant": label,
                            "sim_median": statistics.median(r["sim"] for r in rs),
                            "sim_min": min(r["sim"] for r in rs),
                            "cpu_median": statistics.median(r["cpu"] for r in rs),
                            "cpu_min": min(r["cpu"] for r in rs),
                            "avg_wait": rs[0]["avg_wait"], "same": same, "main": main_eq,
                        }
                        rows.append(row)
                        print(f"{key:16s} {label:22s} sim median {row['sim_median']:6.2f} s "
                              f"(min {row['sim_min']:.2f})  cpu median "
                              f"{row['cpu_median']:6.2f} s (min {row['cpu_min']:.2f})  "
                              f"avg wait {row['avg_wait']:.2f} s  same starts "
                              f"{'yes' if same else 'NO'}  = main's "
                              f"{'yes' if main_eq else 'NO'}", flush=True)
        eq_rows = []
        if args.equality:
            for order in ORDERS:
                for comp in COMPRESS:
                    for mode in MODES:
                        key = f"{order}-{comp}-{mode}"
                        r = _run(order, comp, mode, "fast", None)
                        want = fixture["starts"][key]
                        eq_rows.append({"case": key, "avg_wait": r["avg_wait"],
                                        "main_wait": want["avg_wait"],
                                        "main": r["sha256"] == want["sha256"],
                                        "cpu": r["cpu"], "sim": r["sim"]})
                        print(f"{key:16s} fast: avg wait {r['avg_wait']:.2f} s (main "
                              f"{want['avg_wait']:.2f} s), starts = main's "
                              f"{'yes' if eq_rows[-1]['main'] else 'NO'}, sim "
                              f"{r['sim']:.2f} s, cpu {r['cpu']:.2f} s", flush=True)
    load_after = os.getloadavg()
    cmd = "python -m sim.experiments.talby.speed " + shlex.join(sys.argv[1:] if argv is None
                                                                 else argv)
    lines = [
        "# Slack-based scheduler speed",
        "",
        f"`{cmd.strip()}` at commit {commit}; Python {sys.version.split()[0]}; load average "
        f"{load[0]:.2f} before and {load_after[0]:.2f} after the run (2 cores, shared). "
        "KTH-SP2, 128 processors, jobs killed at their request, equal priorities, SF 3, "
        "AWT 2401 s; `year` is the whole log on one machine, `month` each calendar month "
        "from an empty machine (times summed). Each variant runs in its own process, "
        f"{args.repeat} times, alternating with the others. sim = wall seconds of "
        "`simulate` (Schedule.sim_seconds); cpu = process CPU seconds (user + system) of "
        "the simulations." + ("" if full else " PARTIAL RUN: not the committed "
                              "configuration."),
        "",
        *markdown_table(
            ["case", "variant", "sim median [s]", "sim min [s]", "cpu median [s]",
             "cpu min [s]", "avg wait [s]", "same starts in every run", "starts = main's"],
            [[r["case"], r["variant"], f"{r['sim_median']:.2f}", f"{r['sim_min']:.2f}",
              f"{r['cpu_median']:.2f}", f"{r['cpu_min']:.2f}", f"{r['avg_wait']:.2f}",
              "yes" if r["same"] else "NO", "yes" if r["main"] else "NO"] for r in rows],
            align="llrrrrrll"),
    ]
    if eq_rows:
        lines += ["", "Every order, compress reading and mode, fast path, one run each "
                  "(`--equality`):", "",
                  *markdown_table(
                      ["case", "avg wait [s]", "main's avg wait [s]", "starts = main's (SHA-256)",
                       "sim [s]", "cpu [s]"],
                      [[r["case"], f"{r['avg_wait']:.2f}", f"{r['main_wait']:.2f}",
                        "yes" if r["main"] else "NO", f"{r['sim']:.2f}", f"{r['cpu']:.2f}"]
                       for r in eq_rows],
                      align="lrrlrr")]
    lines += ["", f"main's start arrays: `{FIXTURE.relative_to(ROOT)}` "
              f"({fixture['produced_by']})."]
    out = RESULTS if full else PARTIAL
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "slack_speed.md", "\n".join(lines) + "\n")
    print(f"wrote {out / 'slack_speed.md'}")
    bad = [r for r in rows if not r["same"] or not r["main"]]
    bad += [r for r in eq_rows if not r["main"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
