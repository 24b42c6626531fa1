"""Why BL-EASY does not lose to FF-EASY at K = 8 here (spec 1.7 item 7).

    python -m sim.experiments.leinberger.bl                 # K = 2 and 8, L = 256, seed 1
    python -m sim.experiments.leinberger.bl --K 8 --jobs 10000 --queue 256 --seed 1

For one calibrated workload per K (the rate of the Figures 2/3 unit store when it holds
the unit, else a fresh calibration), runs FF-EASY, BL-EASY under every reading the
spec leaves open for BL (AMB-1.5 fallback ``ff``/``next``/``stop``, AMB-1.6 ties
``first``/``last``, AMB-1.3 ``bl_fullness`` ``none``/``largest``) and BB-EASY, and
prints per policy:

- the ART gain over FF-EASY (jobs between the first and last 10% by arrival);
- the time-averaged queue length and the mean utilisation of each resource over the
  arrival window (the throughput side: a policy that packs better keeps the queue
  shorter at the same arrival rate);
- how often the selection rule did not pick the first candidate in queue order (a
  "skip": what the paper blames for BL's loss, jobs passed over for later ones);
- the mean wait of the jobs FF-EASY would have started first at the skipped decisions.

and the first skipped decision of the BL run at the largest K in full (the machine's
utilisation vector, the least utilised resource, FF's candidate and BL's, and when each
started under FF-EASY and under BL-EASY): a schedule-level example. Times in seconds.
Writes ``bl.md`` to ``--out`` (default ``results/kresource-bl``, git-ignored).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from instances.atomic import write_atomic
from sim.argparser import Parser
from sim.experiments.common import markdown_table

VARIANTS = [("FF-EASY", {"select": "ff"}),
            ("BL-EASY (paper reading: fallback ff, ties first)", {"select": "bl"}),
            ("BL fallback next", {"select": "bl", "bl_fallback": "next"}),
            ("BL fallback stop", {"select": "bl", "bl_fallback": "stop"}),
            ("BL ties last", {"select": "bl", "ties": "last"}),
            ("BL fullness largest", {"select": "bl", "bl_fullness": "largest"}),
            ("BB-EASY (balance x fullness)", {"select": "bb"}),
            ("BB-EASY (balance only)", {"select": "bb", "fullness": "none"})]


def _rate(K: int, dist: str, scaling: str, L: int, jobs: int, seed: int,
          store: Path) -> tuple[float, str]:
    from instances.kresource import KResourceSpec
    from sim.batch.calibrate import calibrate
    from sim.experiments.leinberger.figs import unit_key

    f = store / f"{unit_key(scaling, K, dist, L, jobs, seed)}.json"
    if f.exists():
        c = json.loads(f.read_text())["calibration"]
        if "rate" in c:
            return c["rate"], f"unit store ({f})"
    cal = calibrate(KResourceSpec(K=K, dist=dist, scaling=scaling, jobs=jobs, seed=seed), L)
    return cal.rate, "calibrated here"


def _utilisation(w: Any, s: Any) -> np.ndarray:
    """Mean utilisation of each resource over the arrival window (fractions)."""
    t0, t1 = w.jobs[0].submit, w.jobs[-1].submit
    a = np.clip(s.start, t0, t1)
    b = np.clip(s.end, t0, t1)
    d = np.array([j.demand for j in w.jobs], float)
    cap = np.array(w.capacity, float)
    return ((b - a)[:, None] * d).sum(axis=0) / cap / (t1 - t0)


def _classes(w: Any, lo: int, hi: int) -> dict[str, np.ndarray]:
    """Masks over the measured jobs: short (runtime <= 600 s) or long, and small
    (largest requirement at most the median's) or large."""
    js = w.jobs[lo:hi]
    rt = np.array([j.runtime for j in js])
    big = np.array([max(j.demand) for j in js])
    med = float(np.median(big))
    return {"short small": (rt <= 600) & (big <= med), "short large": (rt <= 600) & (big > med),
            "long small": (rt > 600) & (big <= med), "long large": (rt > 600) & (big > med)}


def study(K: int, dist: str, scaling: str, L: int, jobs: int, seed: int,
          store: Path, rate: float | None = None) -> dict[str, Any]:
    from heuristics.backfill import EASY
    from instances.kresource import KResourceSpec, generate
    from sim.batch.calibrate import queue_average
    from sim.batch.machine import simulate
    from sim.batch.validate import validate

    if rate is None:
        rate, src = _rate(K, dist, scaling, L, jobs, seed, store)
    else:
        src = "--rate"
    w = generate(replace(KResourceSpec(K=K, dist=dist, scaling=scaling, jobs=jobs,
                                       seed=seed), rate=rate))
    submit = np.array([j.submit for j in w.jobs])
    n = len(w.jobs)
    lo, hi = n // 10, n - n // 10
    out: dict[str, Any] = {"K": K, "dist": dist, "scaling": scaling, "queue": L,
                           "jobs": jobs, "seed": seed, "rate": rate, "rate_from": src,
                           "policies": {}}
    base = None
    scheds = {}
    for label, opts in VARIANTS:
        pol = EASY(**opts)
        picks: list[tuple[int, tuple, list, int]] = []
        rule = pol.rule
        if not rule.first_fit:
            orig = rule.pick

            def pick(cands, free, cap, orig=orig, picks=picks):
                i = orig(cands, free, cap)
                picks.append((i, tuple(free), [c.id for c in cands], len(cands)))
                return i

            rule.pick = pick
        s = simulate(w, pol)
        validate(s)
        resp = (s.end - submit)[lo:hi]
        art = float(resp.mean())
        if base is None:
            base = art
        util = _utilisation(w, s)
        skips = [p for p in picks if p[0] > 0]
        wait = (s.start - submit)[lo:hi]
        classes = {}
        for cname, mask in _classes(w, lo, hi).items():
            classes[cname] = {"jobs": int(mask.sum()), "mean_wait": float(wait[mask].mean())}
        order = np.argsort(submit, kind="stable")
        st = s.start[order]
        # jobs started before some job that arrived earlier (backfilled past it)
        overtook = int((st[:-1] > np.minimum.accumulate(st[::-1])[::-1][1:]).sum())
        out["policies"][label] = {
            "classes": classes, "jobs_overtaken": overtook,
            "art": art, "gain_art": 100 * (base - art) / base,
            "queue": queue_average(s.start, submit),
            "util_mean": float(util.mean()), "util_min": float(util.min()),
            "util_max": float(util.max()),
            "picks": len(picks), "skips": len(skips),
            "stops": sum(p[0] < 0 for p in picks),
            "mean_skip_depth": float(np.mean([p[0] for p in skips])) if skips else 0.0}
        scheds[label] = (s, picks)
    # the first skip of the paper-reading BL run, in full
    bl = VARIANTS[1][0]
    s_bl, picks = scheds[bl]
    s_ff = scheds["FF-EASY"][0]
    index = {j.id: i for i, j in enumerate(w.jobs)}
    cap = w.capacity
    ex = next((p for p in picks if p[0] > 0), None)
    if ex is not None:
        i, free, ids, m = ex
        util = [round((cap[k] - free[k]) / cap[k], 3) for k in range(K)]
        low = int(np.argmin(util))
        ff_j, bl_j = w.jobs[index[ids[0]]], w.jobs[index[ids[i]]]
        t = int(s_bl.start[index[bl_j.id]])

        def desc(j: Any) -> dict[str, Any]:
            r = [round(x / c, 3) for x, c in zip(j.demand, cap, strict=True)]
            return {"id": j.id, "submit": j.submit, "runtime": j.runtime, "R": r,
                    "largest": int(np.argmax(r)),
                    "start_FF-EASY": int(s_ff.start[index[j.id]]),
                    "start_BL-EASY": int(s_bl.start[index[j.id]])}

        out["example"] = {"time": t, "utilisation": util, "least_used": low,
                          "candidates": m, "bl_pick_position": i,
                          "ff_choice": desc(ff_j), "bl_choice": desc(bl_j)}
    # the jobs BL passed over (FF's candidate at a skipped decision): their waits
    passed = {ids[0] for i, _, ids, _ in picks if i > 0}
    if passed:
        pidx = np.array([index[j] for j in passed])
        wait_ff = (s_ff.start - submit)[pidx]
        wait_bl = (s_bl.start - submit)[pidx]
        out["passed_over"] = {"jobs": len(passed), "mean_wait_FF": float(wait_ff.mean()),
                              "mean_wait_BL": float(wait_bl.mean())}
    return out


def _lines(res: list[dict[str, Any]], cmd: str, commit: str) -> list[str]:
    lines = ["# BL-EASY against FF-EASY: readings and mechanism", "",
             f"Command: `{cmd}` at commit {commit}. One seed per K: evidence for the "
             "mechanism, not a Figure 2 cell.", ""]
    for r in res:
        lines += [f"## K = {r['K']}, {r['dist']}, {r['scaling']}, FF-EASY queue {r['queue']}, "
                  f"{r['jobs']} jobs, seed {r['seed']} (rate {r['rate']:.5g}/s from "
                  f"{r['rate_from']})", "",
                  *markdown_table(
                      ["policy", "ART gain %", "queue (time avg)", "util mean", "util min",
                       "util max", "selections", "not first", "mean position", "stopped"],
                      [[lab, f"{v['gain_art']:+.1f}", f"{v['queue']:.1f}",
                        f"{v['util_mean']:.3f}", f"{v['util_min']:.3f}", f"{v['util_max']:.3f}",
                        v["picks"], v["skips"], f"{v['mean_skip_depth']:.1f}", v["stops"]]
                       for lab, v in r["policies"].items()])]
        cls = list(next(iter(r["policies"].values()))["classes"])
        lines += ["", "Mean wait (s) by job class (short: runtime <= 600 s; small: largest "
                  "requirement at most the median), and jobs overtaken (a later arrival "
                  "started before them):", "",
                  *markdown_table(
                      ["policy", *(f"{c} ({r['policies']['FF-EASY']['classes'][c]['jobs']})"
                                   for c in cls), "overtaken"],
                      [[lab, *(f"{v['classes'][c]['mean_wait']:.0f}" for c in cls),
                        v["jobs_overtaken"]] for lab, v in r["policies"].items()])]
        if "passed_over" in r:
            p = r["passed_over"]
            lines += ["", f"Jobs BL passed over (FF's pick at a decision where BL took a "
                      f"later job): {p['jobs']}; their mean wait {p['mean_wait_FF']:.0f} s "
                      f"under FF-EASY, {p['mean_wait_BL']:.0f} s under BL-EASY."]
        if "example" in r:
            e = r["example"]
            lines += ["", f"First decision where BL did not take FF's job: t = {e['time']} s, "
                      f"utilisation {e['utilisation']}, least used resource {e['least_used']}, "
                      f"{e['candidates']} candidates, BL took position {e['bl_pick_position']}.",
                      ""]
            for who in ("ff_choice", "bl_choice"):
                j = e[who]
                lines.append(f"- {who.replace('_', ' ')}: job {j['id']} (submitted "
                             f"{j['submit']} s, runtime {j['runtime']} s, R = {j['R']}, largest "
                             f"on resource {j['largest']}): starts at {j['start_FF-EASY']} s "
                             f"under FF-EASY, {j['start_BL-EASY']} s under BL-EASY")
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    from sim.experiments import common
    from sim.experiments.leinberger.figs import STORE_DIR

    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=str, default="2,8")
    ap.add_argument("--dist", default="uniform")
    ap.add_argument("--scaling", default="G-b")
    ap.add_argument("--queue", type=int, default=256)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", type=Path, default=STORE_DIR)
    ap.add_argument("--out", type=Path, default=Path("results") / "kresource-bl")
    ap.add_argument("--rate", type=float, help="arrival rate (jobs/s; one K only), "
                    "skipping the calibration")
    a = ap.parse_args(argv)
    if a.rate is not None:  # no calibration: the queue it targets and its store unread
        ap.refuse_unread(ap.options() - {"queue", "store"}, "--rate")
        if "," in a.K:
            ap.error(f"--rate: one K only (a rate is one workload's), got --K {a.K}")
    res = []
    for K in (int(x) for x in a.K.split(",")):
        res.append(study(K, a.dist, a.scaling, a.queue, a.jobs, a.seed, a.store, a.rate))
        print(f"K={K} done", file=sys.stderr, flush=True)
    lines = _lines(res, "python -m sim.experiments.leinberger.bl " + " ".join(sys.argv[1:]),
                   common.commit())
    a.out.mkdir(parents=True, exist_ok=True)
    write_atomic(a.out / "bl.md", "\n".join(lines) + "\n")
    write_atomic(a.out / "bl.json", json.dumps(res, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
