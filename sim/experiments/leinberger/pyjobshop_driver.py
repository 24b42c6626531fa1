"""Standalone driver run by ``kresource_pyjobshop`` in a separate virtual environment
that has PyJobShop (never imported by schedsearch). Reads a JSON list of
``kresource_response`` problems on stdin, solves each with PyJobShop's OR-Tools backend
(one worker, total flow time = sum of end - release, weights per job), and prints one
JSON list of ``{"status", "objective", "lower_bound", "runtime", "starts"}``.
"""

import json
import sys

from pyjobshop import Model


def solve(problem: dict, time_limit: float) -> dict:
    m = Model()
    res = [m.add_renewable(capacity=c) for c in problem["capacity"]]
    tasks = []
    for r, d, dem, w in zip(problem["release"], problem["duration"], problem["demands"],
                            problem["weights"], strict=True):
        job = m.add_job(weight=w, release_date=r)
        t = m.add_task(job=job)
        m.add_mode(t, res, duration=d, demands=list(dem))
        tasks.append(t)
    m.set_objective(weight_total_flow_time=1)
    out = m.solve(time_limit=time_limit, display=False, num_workers=1)
    return {"status": str(out.status.name), "objective": out.objective,
            "lower_bound": out.lower_bound, "runtime": out.runtime,
            "starts": [t.start for t in out.best.tasks]}


if __name__ == "__main__":
    args = json.load(sys.stdin)
    print(json.dumps([solve(p, args["time_limit"]) for p in args["problems"]]))
