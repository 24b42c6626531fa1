"""The Figures 2/3 speed-ups change no result: the calibration memo gives the same
rates, queue lengths, iterations and histories with fewer simulations, and the per-unit
store of ``kresource_figs fig2`` resumes a stopped run to the same tables."""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pytest

import sim.batch.calibrate as kr
from instances.kresource import KResourceSpec, generate
from models.kresource.policy import OptEASY, unique_optimum
from sim.batch.calibrate import calibrate
from sim.batch.machine import simulate
from sim.batch.validate import validate


def test_calibration_memo_gives_identical_calibrations_with_fewer_simulations(monkeypatch):
    spec = KResourceSpec(K=2, dist="uniform", jobs=1200, seed=3)
    targets = (16, 32, 64)
    plain = [calibrate(spec, L) for L in targets]
    calls = []
    real = kr._ff_easy_queue

    def counting(*a, **k):
        calls.append(a[0].rate)
        return real(*a, **k)

    monkeypatch.setattr(kr, "_ff_easy_queue", counting)
    memo: dict = {}
    shared = [calibrate(spec, L, memo=memo) for L in targets]
    assert [c.to_dict() for c in shared] == [c.to_dict() for c in plain]
    # every rate visited was simulated once, and the bisections shared some
    assert len(calls) == len(set(calls)) < sum(c.iterations for c in plain)


def _brute_optima(free, extra, demands, late, values):
    best, sets = -1, []
    for r in range(len(values) + 1):
        for sub in itertools.combinations(range(len(values)), r):
            K = len(free)
            if any(sum(demands[i][k] for i in sub) > free[k] for k in range(K)):
                continue
            if any(sum(demands[i][k] for i in sub if late[i]) > extra[k] for k in range(K)):
                continue
            v = sum(values[i] for i in sub)
            if v > best:
                best, sets = v, [list(sub)]
            elif v == best:
                sets.append(list(sub))
    return sets


@pytest.mark.parametrize("seed", range(40))
def test_unique_optimum_is_the_brute_force_optimum_exactly_when_unique(seed):
    rng = random.Random(seed)
    K = rng.choice([1, 2, 4, 8])
    m = rng.randint(0, 9)
    cap = 16
    free = [rng.randint(0, cap) for _ in range(K)]
    extra = [rng.randint(0, f) for f in free]
    demands = [[rng.randint(0, 6) for _ in range(K)] for _ in range(m)]
    late = [rng.random() < 0.5 for _ in range(m)]
    # the OPT-EASY objective: work then count, so equal-work sets tie only on count
    values = [sum(d) * (m + 1) + 1 for d in demands]
    sets = _brute_optima(free, extra, demands, late, values)
    got = unique_optimum(free, extra, demands, late, values)
    if len(sets) == 1:
        assert got == sets[0]
    else:
        assert got is None


@pytest.mark.parametrize("K, dist, rate", [(2, "uniform", 0.3), (4, "exponential", 0.08),
                                           (8, "uniform", 0.08)])
def test_opt_easy_enumeration_gives_the_same_schedule_as_the_solver(K, dist, rate):
    # no time limit: every solver call is proved, so the two must agree exactly
    w = generate(KResourceSpec(K=K, dist=dist, jobs=400, seed=5, rate=rate))
    fast = OptEASY(time_limit=None, deterministic_limit=None)
    slow = OptEASY(time_limit=None, deterministic_limit=None, enumerate_upto=0)
    a, b = simulate(w, fast), simulate(w, slow)
    validate(a)
    assert fast.stats["enumerated"] > 0 and slow.stats["enumerated"] == 0
    assert fast.stats["solver_calls"] < slow.stats["solver_calls"]
    assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)


def test_opt_easy_stopped_by_its_deterministic_limit_is_reproducible():
    # decisions cut short by CP-SAT's deterministic-time cap stop at the same point in
    # every run, whatever the load (the wall-clock cap, 30 s, is not reached)
    w = generate(KResourceSpec(K=8, dist="uniform", jobs=600, seed=2, rate=0.12))
    runs = []
    for _ in range(2):
        pol = OptEASY(deterministic_limit=1e-6, enumerate_upto=0)
        s = simulate(w, pol)
        validate(s)
        runs.append((s.start, dict(pol.stats)))
    assert runs[0][1]["not_proved"] > 0 and runs[0][1]["wall_stopped"] == 0
    assert runs[0][1] == runs[1][1] and np.array_equal(runs[0][0], runs[1][0])


def test_fig2_unit_store_resumes_without_recomputing_and_redoes_stale_results(
        tmp_path, monkeypatch):
    import sim.batch.machine as machine
    from sim.experiments.leinberger.figs import FULL, fig2

    cfg = dict(FULL, jobs=800, seeds=1, K=[2], dists=["uniform"], queues=[16],
               scalings=["G-b"], opt_easy=False)
    store, out = tmp_path / "store", tmp_path / "out"

    def figures(data):  # every number of the tables but the timings
        return [(r["calibration"][0]["rate"], sorted(
            (lab, v["art"], v["wart"], v["gain_art"][0], v["gain_wart"][0])
            for lab, v in r["policies"].items())) for r in data["rows"]]

    first = fig2(out, True, cfg, store=store, workers=1)
    files = sorted(store.glob("*.json"))
    assert len(files) == 1 and first["complete"]
    unit = json.loads(files[0].read_text())
    assert set(unit["policies"]) == {"FF-EASY", "BL-EASY", "BB-EASY", "BB-EASY-nofull",
                                     "FF-CONS"}

    def boom(*a, **k):
        raise AssertionError("a finished unit was simulated again")

    monkeypatch.setattr(machine, "simulate", boom)
    again = fig2(out, True, cfg, store=store, workers=1)
    assert figures(again) == figures(first)
    monkeypatch.undo()
    # a result recorded under other policy parameters is recomputed (and, the policy
    # being deterministic, comes out the same)
    unit["policies"]["BL-EASY"]["params"]["window"] = 2
    unit["policies"]["BL-EASY"]["art"] = -1.0
    files[0].write_text(json.dumps(unit))
    redone = fig2(out, True, cfg, store=store, workers=1)
    assert figures(redone) == figures(first)
    assert json.loads(files[0].read_text())["policies"]["BL-EASY"]["params"]["window"] == 1
