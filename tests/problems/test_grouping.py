"""The grouping problem, its heuristics and exact models (differential tests)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from heuristics import grouping as heur
from models import grouping as exact
from sim import registry
from sim.memory.model import MissRateCurve, steady_state
from sim.problems import ensure_feasible
from sim.problems.grouping import (
    GroupingProblem,
    GroupJob,
    check,
    from_dict,
    load,
    objective,
    random_problem,
    schedule_name,
)
from sim.result import Status

EXACT = ["exact-ilp", "exact-cpsat", "exhaustive"]
HEURISTICS = ["greedy", "footprint", "knee"]


def solver(name):
    return registry.solver("grouping", name)


def small(seed: int, slices=None) -> GroupingProblem:
    rng = np.random.default_rng(seed)
    J = int(rng.integers(3, 8))
    P = int(rng.integers(2, 5))
    return random_problem(J, P, seed=seed, memory=int(rng.integers(200, 1500)),
                          max_procs=int(rng.integers(1, P + 1)), slices=slices)


def curve(fp: int, knee: int) -> MissRateCurve:
    return MissRateCurve(tuple(np.interp(np.arange(fp + 1), [0, knee, fp], [1, 0.05, 0])))


@pytest.mark.parametrize("seed", range(24))
def test_exact_models_agree_and_heuristics_never_beat_them(seed):
    rng = np.random.default_rng(1000 + seed)
    p = small(seed)
    if seed % 2:  # fixed S, sometimes with room to spare
        p = random_problem(len(p.jobs), p.processors, seed=seed, memory=p.memory,
                           max_procs=max(j.procs for j in p.jobs),
                           slices=p.min_slices + int(rng.integers(0, 2)))
    res = {n: solver(n)(p) for n in EXACT}
    statuses = {r.status for r in res.values()}
    if statuses == {Status.INFEASIBLE}:  # fixed S too small for the packing
        for n in HEURISTICS:
            assert solver(n)(p).status is Status.INFEASIBLE
        return
    assert statuses == {Status.OPTIMAL}, res
    opt = res["exhaustive"].objective
    for n in EXACT:
        assert res[n].objective == pytest.approx(opt, rel=1e-7)
        assert res[n].bound == res[n].objective
        ensure_feasible(p, res[n].solution)
        assert objective(p, res[n].solution) == res[n].objective
    for n in HEURISTICS:
        r = solver(n)(p)
        if r.status is Status.INFEASIBLE:
            assert p.slices is not None  # only a fixed S can defeat the packing
            continue
        assert r.status is Status.FEASIBLE and r.bound is None
        ensure_feasible(p, r.solution)
        assert r.objective >= opt * (1 - 1e-9)


def test_cost_is_eq4_through_the_model():
    a, b = GroupJob("a", 1, curve(300, 60), 1000.0), GroupJob("b", 2, curve(500, 100), 3000.0)
    p = GroupingProblem(jobs=(a, b), processors=4, memory=400, latency=0.01, slice_length=2.0,
                        slices=2)
    st = steady_state([a.curve, b.curve], [1000.0, 3000.0], 400)
    together = 0.01 * 4000 * st.combined[0] + (4 - 3) * 2.0
    assert objective(p, [["a", "b"], []]) == pytest.approx(together + 4 * 2.0)
    alone = (0.01 * 1000 * float(steady_state([a.curve], [1.0], 400).combined[0]) + 3 * 2.0
             + 0.01 * 3000 * float(steady_state([b.curve], [1.0], 400).combined[0]) + 2 * 2.0)
    assert objective(p, [["b"], ["a"]]) == pytest.approx(alone)
    ev = p.evaluate([["a", "b"], []])
    assert ev["slice_miss_rates"][0] == pytest.approx(st.combined[0])


def test_feasibility_check():
    p = random_problem(4, 2, seed=3, max_procs=1)
    assert not check(p, [["J0", "J1"], ["J2", "J3"]])
    with pytest.raises(ValueError, match="'J2' is in 0 slices, must be in exactly 1"):
        ensure_feasible(p, [["J0", "J1"], ["J3"]])
    with pytest.raises(ValueError, match="'J1' is in 2 slices"):
        ensure_feasible(p, [["J0", "J1"], ["J2", "J3"], ["J1"]])
    with pytest.raises(ValueError, match="unknown job 'nobody'"):
        ensure_feasible(p, [["J0", "J1"], ["J2", "J3", "nobody"]])
    with pytest.raises(ValueError, match="slice 0 needs 3 processors > P = 2"):
        ensure_feasible(p, [["J0", "J1", "J2"], ["J3"]])
    q = random_problem(4, 2, seed=3, max_procs=1, slices=3)
    with pytest.raises(ValueError, match="S = 3"):
        ensure_feasible(q, [["J0"], ["J1"], ["J2"], ["J3"]])
    assert (objective(q, [["J0", "J1"], ["J2", "J3"], []])
            > objective(p, [["J0", "J1"], ["J2", "J3"]]))


def _good() -> dict:
    return GroupingProblem(jobs=(GroupJob("x", 1, curve(10, 3), 10.0),
                                 GroupJob("y", 2, curve(8, 2), 5.0)),
                           processors=2, memory=12, latency=0.1, slice_length=1.0,
                           slices=2).to_dict()


@pytest.mark.parametrize("path, value, message", [
    (("memory",), 0, "field 'memory' must be positive"),
    (("memory",), -5, "field 'memory' must be positive"),
    (("processors",), 0, "field 'processors'"),
    (("latency",), -1, "field 'latency'"),
    (("slice_length",), 0, "field 'slice_length'"),
    (("slices",), 0, "field 'slices'"),
    (("jobs", 1, "procs"), 3, r"job 'y': field 'procs' = 3 exceeds 'processors' P = 2"),
    (("jobs", 0, "refs"), 0, "job 'x': field 'refs'"),
    (("jobs", 0, "curve", "m"), [1.0, 0.5, 0.7], r"jobs\[0\]\.curve.*non-increasing"),
    (("jobs", 1, "curve", "m"), [1.0, 1.2], r"jobs\[1\]\.curve.*'m'\[1\] = 1.2 is not in"),
    (("jobs", 1, "name"), "x", "repeats the name 'x'"),
    (("jobs", 0, "curve", "m"), [1.0, True, 0.2], r"field 'm' holds True at \[1\], not a number"),
    (("jobs", 0, "curve", "m"), ["1.0", "0.5"], r"field 'm' holds '1.0' at \[0\], not a number"),
    (("jobs", 0, "curve"), {"points": [[0, 1.0], [True, 0.0]]},
     r"field 'points\[1\]' holds True at \[0\]"),
    (("jobs", 0, "curve", "name"), ["x"], r"jobs\[0\]\.curve: field 'name' must be a string"),
    (("jobs", 0, "curve", "bogus"), 1, r"jobs\[0\]\.curve: unknown field\(s\) \['bogus'\]"),
    (("jobs", 0, "curve", "points"), [[0, 1.0], [3, 0.0]],
     r"jobs\[0\]\.curve: give 'm' or 'points', not both"),
    (("model",), "eq3", "field 'model' must be one of"),
])
def test_bad_input_names_the_field(path, value, message):
    data = _good()
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(ValueError, match=message):
        from_dict(data, source="case.json")
    with pytest.raises(ValueError, match="case.json"):
        from_dict(data, source="case.json")


def test_an_integer_slice_length_beyond_int64_is_a_large_number():
    """A whole number of seconds past int64 (10**30) costs the slices as the float 1e30
    does, instead of overflowing NumPy's integer arithmetic in every solver."""
    big, as_float = _good(), _good()
    big["slice_length"], as_float["slice_length"] = 10**30, 1e30
    p, q = from_dict(big, source="big.json"), from_dict(as_float, source="float.json")
    for name in ("greedy", "exhaustive"):
        r = registry.solver("grouping", name)(p, time_limit=10)
        assert r.objective == registry.solver("grouping", name)(q, time_limit=10).objective
    assert p == q


def test_missing_fields_and_bad_file(tmp_path):
    data = _good()
    del data["memory"]
    with pytest.raises(ValueError, match="missing field 'memory'"):
        from_dict(data)
    f = tmp_path / "bad.json"
    f.write_text('{"problem": "grouping",\n "jobs": [}')
    with pytest.raises(ValueError, match=r"bad.json: line 2"):
        load(f)


def test_json_round_trip_and_registry_loader(tmp_path):
    p = small(5, slices=3)
    text = json.dumps(p.to_dict())
    f = tmp_path / "p.json"
    f.write_text(text)
    q = load(f)
    assert q == p
    family, r = registry.load_problem(json.loads(text))
    assert family == "grouping" and r == p
    sol = [[n] for n in p.names[:2]] + [p.names[2:]] if not check(p,
        [[n] for n in p.names[:2]] + [p.names[2:]]) else None
    if sol is not None:
        assert objective(q, sol) == objective(p, sol)
    # curves given as knots
    d = _good()
    d["jobs"][0]["curve"] = {"points": [[0, 1.0], [4, 0.2], [10, 0.0]]}
    assert from_dict(d).jobs[0].curve.m[2] == pytest.approx(0.6)


def test_determinism_and_names():
    p = small(7)
    for n in EXACT + HEURISTICS:
        a, b = solver(n)(p, seed=3), solver(n)(p, seed=3)
        assert (a.status, a.objective, a.solution) == (b.status, b.objective, b.solution)
        assert a.to_dict()["solution"] == a.solution
    sol = [["J1", "J0"], ["J2"]]
    q = random_problem(3, 4, seed=1, max_procs=1, slices=2)
    assert schedule_name(q, sol) == "AB,C"


def test_greedy_grows_slices_only_when_it_pays():
    # two jobs that thrash together and idle processors cheap: greedy opens a 2nd slice
    a = GroupJob("a", 1, curve(900, 800), 1e6)
    b = GroupJob("b", 1, curve(900, 800), 1e6)
    p = GroupingProblem(jobs=(a, b), processors=2, memory=1000, latency=1e-3, slice_length=1.0)
    r = heur.greedy(p)
    assert sorted(map(len, r.solution)) == [1, 1]
    assert r.objective == pytest.approx(exact.solve_ilp(p).objective)
    # expensive idle processors: one slice
    p2 = GroupingProblem(jobs=(a, b), processors=2, memory=1000, latency=1e-9, slice_length=1.0)
    assert heur.greedy(p2).solution == [["a", "b"]]


def test_enumeration_and_partition_count():
    p = random_problem(6, 3, seed=2, max_procs=1)
    members = exact.enumerate_groups(p)
    assert members.shape[0] == 6 + 15 + 20  # every subset of at most 3 single-processor jobs
    r = exact.solve_exhaustive(p)
    assert r.params["partitions"] == exact.count_partitions(p)


def test_time_limited_exact_runs_are_honest():
    p = random_problem(9, 4, seed=11, max_procs=2)
    r = exact.solve_exhaustive(p, time_limit=0.0)  # stopped at once: nothing to claim
    assert r.status is Status.UNKNOWN and r.solution is None and r.bound is None
    r = exact.solve_exhaustive(p, time_limit=0.05)
    assert r.status in (Status.FEASIBLE, Status.OPTIMAL, Status.UNKNOWN)
    if r.status is Status.FEASIBLE:
        assert r.params["partitions"] < exact.count_partitions(p)
    big = random_problem(16, 4, seed=0, max_procs=1, memory=2000)
    opt = exact.solve_cpsat(big).objective
    for r in (exact.solve_cpsat(big, time_limit=0.01), exact.solve_ilp(big, time_limit=1)):
        assert r.status in (Status.OPTIMAL, Status.FEASIBLE, Status.UNKNOWN)
        if r.status is Status.FEASIBLE:
            assert r.bound is None or r.bound <= opt * (1 + 1e-9)
            assert r.objective >= opt * (1 - 1e-9)
        if r.status is Status.OPTIMAL:
            assert r.objective == pytest.approx(opt, rel=1e-9)


def test_bundled_case_study_instances():
    from pathlib import Path

    import instances
    from instances.refstreams import CASESTUDY

    data = Path(instances.__file__).parent / "data" / "grouping"
    for mb in (8, 16, 32, 64, 128, 256):
        p = load(data / f"casestudy_{mb}mb.json")
        assert "synthetic" in p.source and "NOT from SPEC" in p.source
        assert (len(p.jobs), p.processors, p.slices, p.memory) == (6, 3, 2, mb * 256)
        # Table 1 footprints in 4 KB pages
        assert [j.curve.size for j in p.jobs] == [round(v["mb"] * 256)
                                                  for v in CASESTUDY.values()]
        if mb in (8, 256):
            opt = exact.solve_exhaustive(p)
            assert opt.status is Status.OPTIMAL and opt.params["partitions"] == 10
            assert heur.greedy(p).objective >= opt.objective * (1 - 1e-12)
    # 256 MB holds all footprints (199.2 MB): every schedule costs the same
    p = load(data / "casestudy_256mb.json")
    names = p.names
    costs = {round(objective(p, [[names[0], a, b], [n for n in names[1:] if n not in (a, b)]]),
                   9) for i, a in enumerate(names[1:]) for b in names[i + 2:]}
    assert len(costs) == 1


def test_curve_knee_finds_the_knee():
    from instances.refstreams import knee_curve

    for fp, kn in ((1000, 100), (500, 400), (300, 30)):
        c = MissRateCurve(tuple(knee_curve(fp, kn, at_knee=0.05)))
        assert heur.curve_knee(c) == kn
    assert heur.curve_knee(MissRateCurve((0.5, 0.5, 0.5))) == 0


def test_ilp_resolves_near_ties():
    # two schedules 1.2e-7 apart (relative): unscaled CBC stopped at the worse one
    p = random_problem(8, 4, seed=8005, max_procs=3)
    ilp, cp, ex = exact.solve_ilp(p), exact.solve_cpsat(p), exact.solve_exhaustive(p)
    assert ilp.objective == pytest.approx(ex.objective, rel=1e-10)
    assert cp.objective == pytest.approx(ex.objective, rel=1e-10)


def test_every_registered_solver_through_the_registry_like_the_cli():
    from pathlib import Path

    import instances

    path = Path(instances.__file__).parent / "data" / "grouping" / "casestudy_16mb.json"
    family, p = registry.load_problem(json.loads(path.read_text()), source=str(path))
    assert family == "grouping" and sorted(registry.SOLVERS["grouping"]) == sorted(
        EXACT + HEURISTICS)
    best = None
    for name in EXACT + HEURISTICS:
        out = json.loads(json.dumps(solver(name)(p, time_limit=30).to_dict()))
        assert out["solver"] == name
        assert sorted(n for g in out["solution"] for n in g) == sorted(p.names)
        assert out["objective"] == pytest.approx(objective(p, out["solution"]))
        if name in EXACT:
            assert out["status"] == "OPTIMAL"
            best = out["objective"] if best is None else best
            assert out["objective"] == pytest.approx(best)
        else:
            assert out["status"] == "FEASIBLE" and out["bound"] is None
            assert out["objective"] >= best * (1 - 1e-12)


def _loop_curve(length: int) -> MissRateCurve:
    return MissRateCurve(tuple([1.0] * length + [0.0]))


@pytest.mark.parametrize("seed", range(4))
def test_fluctuation_model_costs_slices_and_exact_models_still_agree(seed):
    import dataclasses

    p = dataclasses.replace(small(seed), model="fluctuations")
    # the slice cost is eq. 4 through steady_state(..., fluctuations=True)
    g = p.names[:2]
    jobs = [j for j in p.jobs if j.name in g]
    st = steady_state([j.curve for j in jobs], [j.refs for j in jobs], float(p.memory),
                      fluctuations=True)
    used = sum(j.procs for j in jobs)
    want = (p.latency * st.combined[0] * sum(j.refs for j in jobs)
            + (p.processors - used) * p.slice_length)
    assert p.slice_cost(g) == pytest.approx(want)
    res = {n: solver(n)(p) for n in EXACT}
    assert {r.status for r in res.values()} == {Status.OPTIMAL}
    opt = res["exhaustive"].objective
    for n in EXACT:
        assert res[n].objective == pytest.approx(opt, rel=1e-7)
    assert solver("greedy")(p).objective >= opt * (1 - 1e-9)
    assert from_dict(json.loads(json.dumps(p.to_dict()))) == p


def test_fluctuation_model_differs_only_near_a_loop_cliff():
    a = GroupJob("a", 1, _loop_curve(300), 1000.0)
    b = GroupJob("b", 1, curve(900, 200), 1000.0)

    def costs(memory: int) -> tuple[float, float]:
        out = []
        for model in ("eq2", "fluctuations"):
            p = GroupingProblem(jobs=(a, b), processors=2, memory=memory, latency=1.0,
                                slice_length=1.0, model=model)
            out.append(p.slice_cost(["a", "b"]))
        return out[0], out[1]

    # where the loop's reuse depth crosses the memory, eq. 2 jumps and the extension
    # smooths the jump; far from it the two agree
    near = [costs(m) for m in range(440, 511, 5)]
    assert max(abs(f - e) / e for e, f in near) > 0.05
    for m in (700, 1000):
        e, f = costs(m)
        assert f == pytest.approx(e, rel=1e-6)
    alone = [GroupingProblem(jobs=(a,), processors=1, memory=400, latency=1.0,
                             slice_length=1.0, model=mo).slice_cost(["a"])
             for mo in ("eq2", "fluctuations")]
    assert alone[0] == pytest.approx(alone[1], abs=1e-9)


def test_problem_keeps_no_cache_and_slice_costs_memo_agrees():
    import dataclasses

    from sim.problems.grouping import SliceCosts

    p = small(3)
    assert not any(f.name.startswith("_") for f in dataclasses.fields(p))
    memo = SliceCosts(p)
    groups = [list(p.names[:2]), [p.names[-1]], []]
    assert memo.many(groups) == p.slice_costs(groups)
    assert memo(groups[0]) == p.slice_cost(groups[0])


def test_cpsat_under_a_limit_beyond_max_seconds_runs_without_one(monkeypatch):
    """A limit over ``models.deadline.MAX_SECONDS`` is no limit: CP-SAT must not get a
    short one instead (it got 0.01 s, and stopped without a solution on a loaded
    machine)."""
    seen = []
    real = exact.run_cpsat

    def spy(solver, model, *args):
        seen.append(solver.parameters.max_time_in_seconds)
        return real(solver, model, *args)

    monkeypatch.setattr(exact, "run_cpsat", spy)
    from sim.problems import example

    problem = from_dict(example("grouping"))
    r = exact.solve_cpsat(problem, time_limit=1e12, seed=0)
    assert r.status is Status.OPTIMAL
    assert seen and seen[0] > 1e6
    r = exact.solve_cpsat(problem, time_limit=30, seed=0)
    assert 0 < seen[1] <= 30
