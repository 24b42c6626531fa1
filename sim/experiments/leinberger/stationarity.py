"""Stationarity of the committed Figures 2/3 calibrations, and the noise of the queue that
protocol S tests.

``python -m sim.experiments.leinberger.stationarity [--limit N] [--s 0.15]``

For every calibrated unit of ``results/fig2.json`` (in file order, the first ``--limit``
only when given) FF-EASY is simulated again at the recorded rate and the queue over each
half of the arrival window is taken (:func:`sim.batch.calibrate.queue_halves`); the unit
passes when :func:`sim.batch.calibrate.is_stationary` holds at ``s``. Prints one row
per unit, then the count and the median second-half / first-half ratio. Writes nothing.

``python -m sim.experiments.leinberger.stationarity --noise 16 [--noise-jobs 400000]``

How noisy is the time-averaged queue at the rates protocol S tried? ``--noise N`` units
of ``results/stationary/fig2.json`` are drawn (seeded; accepted ones at their rate,
refused ones at the rate their error names as closest) and FF-EASY is run on
``--noise-jobs`` jobs of the same cell and seed at that rate (compiled engine; a longer
job list than the unit's, so a different realisation of the same model). After a
warm-up of 10,000 jobs, windows of W = 30,000 / 60,000 / 120,000 jobs are slid in steps
of 5,000 jobs; per W it prints the fraction of windows whose two time halves are within
``s`` of each other (protocol S's condition ``|q2/q1 - 1| <= s``) and the coefficient of
variation of the window means, and per unit the long-run mean queue. Writes nothing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from heuristics.backfill import EASY
from instances.kresource import KResourceSpec, generate
from sim.argparser import Parser
from sim.batch.calibrate import is_stationary, queue_halves
from sim.batch.machine import simulate

FIG2 = Path(__file__).resolve().parent / "results" / "fig2.json"


S_FIG2 = Path(__file__).resolve().parent / "results" / "stationary" / "fig2.json"
WINDOWS = (30000, 60000, 120000)


def _area(start: np.ndarray, submit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Event times, queue after each event and the queue's integral up to each event."""
    t = np.concatenate([submit, start]).astype(float)
    d = np.concatenate([np.ones(len(submit)), -np.ones(len(start))])
    o = np.lexsort((-d, t))
    t, d = t[o], d[o]
    q = np.cumsum(d)
    return t, q, np.concatenate([[0.0], np.cumsum(q[:-1] * np.diff(t))])


def _mean(tqa: tuple, a: float, b: float) -> float:
    """Time-averaged queue over ``[a, b]`` (seconds)."""
    t, q, area = tqa

    def cum(x: float) -> float:
        i = int(np.searchsorted(t, x, side="right")) - 1
        return float(area[i] + q[i] * (x - t[i]))

    return (cum(b) - cum(a)) / (b - a)


def noise(units: int, jobs: int, s: float) -> None:
    """The ``--noise`` probe (module docstring); prints its table."""
    import re

    from sim.registry import policy_factory

    data = json.loads(S_FIG2.read_text())
    pool = []
    for r in data["rows"]:
        for c in r["calibration"]:
            if "rate" in c:
                pool.append((r, c["seed"], c["rate"], "accepted"))
            else:
                m = re.search(r"at rate ([0-9.e+-]+)/s", c["failed"])
                pool.append((r, c["seed"], float(m.group(1)), "refused"))
    pick = [pool[i] for i in np.random.default_rng(1).choice(len(pool), units, replace=False)]
    easy = policy_factory("easy")
    tot = {W: [0, 0] for W in WINDOWS}
    print(f"scaling K dist Q seed S-outcome rate | long-run mean | per W: pass fraction, "
          f"CV of window means ({jobs:,} jobs)")
    for r, seed, rate, outcome in pick:
        spec = KResourceSpec(K=r["K"], dist=r["dist"], scaling=r["scaling"], jobs=jobs,
                             seed=seed, rate=rate)
        w = generate(spec)
        sub = w.columns().submit.astype(float)
        tqa = _area(simulate(w, easy(), engine="compiled").start, sub)
        cells = []
        for W in WINDOWS:
            ok, means = [], []
            for a in range(10000, jobs - W, 5000):
                t0, t1 = sub[a], sub[a + W - 1]
                q1, q2 = _mean(tqa, t0, (t0 + t1) / 2), _mean(tqa, (t0 + t1) / 2, t1)
                ok.append(q1 > 0 and abs(q2 / q1 - 1) <= s)
                means.append((q1 + q2) / 2)
            tot[W][0] += sum(ok)
            tot[W][1] += len(ok)
            cells.append(f"W={W // 1000}k {np.mean(ok):.2f}, {np.std(means) / np.mean(means):.2f}")
        print(f"{r['scaling']} {r['K']} {r['dist']} {r['queue']} {seed} {outcome} {rate:.4g} | "
              f"{_mean(tqa, sub[10000], sub[-1]):.0f} | " + "; ".join(cells), flush=True)
    print("windows passing, all units: " + "; ".join(
        f"W={W // 1000}k {p / n:.3f} ({p}/{n})" for W, (p, n) in tot.items()))


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, help="check the first N units only")
    ap.add_argument("--s", type=float, default=0.15, help="relative tolerance")
    ap.add_argument("--noise", type=int, metavar="N",
                    help="the noise probe on N units of protocol S (module docstring)")
    ap.add_argument("--noise-jobs", type=int, default=400000)
    a = ap.parse_args(argv)
    if a.noise is not None:  # the probe runs its own units, not the first N of fig2.json
        ap.refuse_unread(ap.options() - {"limit"}, "--noise")
    elif "noise_jobs" in ap.given:
        ap.error("--noise-jobs: only with --noise N (the probe's jobs per unit)")
    if a.noise is not None:
        if not 1 <= a.noise <= 180 or a.noise_jobs < 10000 + 2 * max(WINDOWS):
            print(f"error: --noise must be in 1..180 and --noise-jobs at least "
                  f"{10000 + 2 * max(WINDOWS)}", file=sys.stderr)
            return 2
        noise(a.noise, a.noise_jobs, a.s)
        return 0
    data = json.loads(FIG2.read_text())
    jobs = data["config"]["jobs"]
    ratios, passed, n = [], 0, 0
    print("scaling K dist L seed | mean queue | first half | second half | stationary")
    for row in data["rows"]:
        for c in row["calibration"]:
            if "rate" not in c or (a.limit is not None and n >= a.limit):
                continue
            spec = KResourceSpec(K=row["K"], dist=row["dist"], scaling=row["scaling"],
                                 jobs=jobs, seed=c["seed"], rate=c["rate"])
            w = generate(spec)
            s = simulate(w, EASY())
            q1, q2 = queue_halves(s.start, np.array([j.submit for j in w.jobs]))
            ok = is_stationary(q1, q2, row["queue"], a.s)
            n += 1
            passed += ok
            if q1 > 0:
                ratios.append(q2 / q1)
            print(f"{row['scaling']} {row['K']} {row['dist']} {row['queue']} {c['seed']} | "
                  f"{c['queue']:.1f} | {q1:.1f} | {q2:.1f} | {ok}", flush=True)
    print(f"{passed} of {n} units stationary at s = {a.s}; median second/first half "
          f"{float(np.median(ratios)):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
