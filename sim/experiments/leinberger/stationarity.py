"""Stationarity of the committed Figures 2/3 calibrations.

``python -m sim.experiments.leinberger.stationarity [--limit N] [--s 0.15]``

For every calibrated unit of ``results/fig2.json`` (in file order, the first ``--limit``
only when given) FF-EASY is simulated again at the recorded rate and the queue over each
half of the arrival window is taken (:func:`sim.batch.calibrate.queue_halves`); the unit
passes when :func:`sim.batch.calibrate.is_stationary` holds at ``s``. Prints one row
per unit, then the count and the median second-half / first-half ratio. Writes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from heuristics.backfill import EASY
from instances.kresource import KResourceSpec, generate
from sim.batch.calibrate import is_stationary, queue_halves
from sim.batch.machine import simulate

FIG2 = Path(__file__).resolve().parent / "results" / "fig2.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, help="check the first N units only")
    ap.add_argument("--s", type=float, default=0.15, help="relative tolerance")
    a = ap.parse_args(argv)
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
