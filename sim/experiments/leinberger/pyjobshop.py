"""Peer comparison: our offline minimum-response-time models against
PyJobShop on the same instances. PyJobShop is never a dependency: it runs in a separate
virtual environment whose interpreter is given with ``--python``::

    python3 -m venv .venv-pyjobshop && .venv-pyjobshop/bin/pip install pyjobshop
    python -m sim.experiments.leinberger.pyjobshop --python .venv-pyjobshop/bin/python

Instances: ``kresource_figs.response_instance(30, 4, seed)`` for seeds 1..5 (unit
weights) and the same with weights ``sum_k r_k`` (integer units). Each PyJobShop
schedule is re-checked and its objective recomputed by ``ResponseProblem``. Seconds of
wall clock; both run one worker.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from sim.argparser import Parser
from sim.experiments.common import markdown_row, markdown_table


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="interpreter of a venv with pyjobshop")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=60.0)
    a = ap.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)
    from models.kresource.cpsat import solve_response as ours_cpsat
    from models.kresource.portfolio import solve_response as ours_portfolio
    from sim.experiments.leinberger.figs import response_instance
    from sim.problems.kresource import objective

    probs = []
    for seed in range(1, a.seeds + 1):
        p = response_instance(30, 4, seed)
        probs.append(("unit", seed, p))
        probs.append(("weighted", seed, replace(p, weights=tuple(sum(d) for d in p.demands))))
    driver = Path(__file__).with_name("pyjobshop_driver.py")
    payload = json.dumps({"time_limit": a.time_limit,
                          "problems": [p.to_dict() for _, _, p in probs]})
    out = subprocess.run([a.python, str(driver)], input=payload, capture_output=True,
                         text=True, check=True)
    theirs = json.loads(out.stdout)
    print("\n".join(markdown_table(["instance", "ours cpsat", "[s]", "ours portfolio", "[s]",
                                    "PyJobShop", "[s]", "agree"], [])))
    for (kind, seed, p), t in zip(probs, theirs, strict=True):
        oc = ours_cpsat(p, time_limit=a.time_limit)
        op = ours_portfolio(p, time_limit=a.time_limit)
        obj = objective(p, [int(s) for s in t["starts"]])  # re-checked, recomputed
        proved = t["status"] == "OPTIMAL"
        agree = (op.status.value == "OPTIMAL" and proved and obj == op.objective)
        print(markdown_row([f"{kind} s{seed}", f"{oc.objective:.0f} {oc.status.value}",
                            f"{oc.runtime:.2f}", f"{op.objective:.0f} {op.status.value}",
                            f"{op.runtime:.2f}", f"{obj:.0f} {t['status']}",
                            f"{t['runtime']:.2f}", agree]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
