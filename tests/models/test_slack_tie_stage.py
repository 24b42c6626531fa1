"""The fewest-moved stage on its own clock: ``cpsat``'s ``price_time_limit`` bounds the
price stages only, the answer stays the definition's optimum (brute force agrees, tie
sets of several float prices included), and ``cpsat+ti`` gives CP-SAT's fewest-moved
stage the time left once CP-SAT proved the price instead of starting the MIP."""

from __future__ import annotations

import pytest

from models import slack_insertion as si
from models.slack_insertion import cpsat, tiportfolio
from sim.problems import insertion as ins
from sim.result import Result, Status


def four_jobs(seed: int) -> ins.InsertionProblem:
    """4 waiting jobs, as ``schedsearch generate slack_insertion --k 4`` makes them."""
    return ins.random_problem(seed, 4, capacity=6, max_t=4, max_slack=8.0)


def agrees(pb: ins.InsertionProblem, r: Result, ref: Result) -> None:
    """OPTIMAL, the price within the tie of brute force's, as few moved jobs, a bound
    never above the optimum."""
    assert r.status is Status.OPTIMAL, r.note
    assert ins.check(pb, r.solution) == []
    p = ref.objective
    assert abs(r.objective - p) <= ins.price_tolerance(p), (r.objective, p)
    assert ins.moved(pb, r.solution) == ins.moved(pb, ref.solution), r.solution
    assert r.bound <= p + ins.price_tolerance(p)



def _recorded(monkeypatch: pytest.MonkeyPatch, read) -> list:
    """What ``read`` takes from CP-SAT's parameters at each solve of ``cpsat``, in order."""
    seen: list = []
    real = cpsat.run_cpsat

    def recorded(solver, model, callback=None):
        seen.append(read(solver.parameters))
        return real(solver, model, callback)

    monkeypatch.setattr(cpsat, "run_cpsat", recorded)
    return seen

def test_price_time_limit_bounds_the_price_stages_only(monkeypatch: pytest.MonkeyPatch):
    """Stages 1 (and 2) get at most ``price_time_limit``; the fewest-moved stage gets
    the rest of ``time_limit``."""
    given = _recorded(monkeypatch, lambda p: p.max_time_in_seconds)
    pb = next(p for p in map(four_jobs, range(100))
              if ins.moved(p, si.solve_brute(p).solution) > 0)  # stage 3 runs
    r = si.solve_cpsat(pb, time_limit=30, price_time_limit=2)
    assert r.status is Status.OPTIMAL and len(given) >= 2, r.params
    assert all(t <= 2 for t in given[:-1]), given
    assert given[-1] > 20, given


def test_price_time_limit_beyond_the_limit_is_refused():
    pb = four_jobs(0)
    with pytest.raises(ValueError, match="price_time_limit"):
        si.solve_cpsat(pb, time_limit=1, price_time_limit=2)
    with pytest.raises(ValueError, match="price_time_limit"):
        si.solve_cpsat(pb, price_time_limit=-1)


@pytest.mark.parametrize("seed", range(16))
def test_a_price_share_keeps_the_optimum_of_brute_force(seed):
    """Random 4-job problems: the split clock changes no answer."""
    pb = four_jobs(seed)
    agrees(pb, si.solve_cpsat(pb, time_limit=20, price_time_limit=10), si.solve_brute(pb))


@pytest.mark.parametrize("seed", range(16))
def test_a_price_share_on_tie_sets_of_several_prices(seed):
    """Exact swap ties whose float prices differ in the last bits
    (``test_slack_exactness.tie_problem``): the tie set holds several prices, and the
    pick is the fewest-moved one of all of them."""
    from test_slack_exactness import tie_problem

    pb = tie_problem(seed)
    agrees(pb, si.solve_cpsat(pb, time_limit=20, price_time_limit=10), si.solve_brute(pb))


def _proved_price(pb: ins.InsertionProblem, tie_open: bool) -> Result:
    """CP-SAT's answer on ``pb`` (brute force's schedule, bound = its price) stopped in
    the fewest-moved stage (``tie_open``) or in the price stage."""
    ref = si.solve_brute(pb)
    params = {"stage3_status": "FEASIBLE"} if tie_open else {"stage1_status": "FEASIBLE"}
    bound = ref.objective if tie_open else ref.objective - 1.0
    return Result(solver="cpsat", status=Status.FEASIBLE, solution=ref.solution,
                  objective=ref.objective, bound=bound, runtime=0.0, seed=0, params=params,
                  note="stopped by the time limit")


def test_the_portfolio_skips_the_mip_once_cpsat_proved_the_price(monkeypatch):
    """Price proved, fewest moved open: CP-SAT had the whole limit for its fewest-moved
    stage (its price stages the share) and the MIP is not run. Price open: the MIP runs
    on the time left."""
    pb = four_jobs(3)
    calls: list[dict] = []
    mip_runs: list[int] = []

    def fake_cpsat(problem, **kwargs):
        calls.append(kwargs)
        return _proved_price(problem, tie_open)

    real_stages = tiportfolio.solve_stages

    def fake_stages(problem, **kwargs):
        mip_runs.append(1)
        return real_stages(problem, **kwargs)

    monkeypatch.setattr(tiportfolio, "solve_cpsat", fake_cpsat)
    monkeypatch.setattr(tiportfolio, "solve_stages", fake_stages)
    tie_open = True
    r = tiportfolio.solve_cpsat_ti(pb, time_limit=20)
    assert not mip_runs and len(calls) == 1
    assert calls[0]["time_limit"] > 19 and calls[0]["price_time_limit"] <= 10.0
    assert r.status is Status.FEASIBLE and "price proved by CP-SAT" in r.note
    assert r.bound == pytest.approx(r.objective)
    tie_open = False
    r = tiportfolio.solve_cpsat_ti(pb, time_limit=20)
    assert mip_runs == [1]



def test_tie_linearization_is_the_fewest_moved_stages_only(monkeypatch: pytest.MonkeyPatch):
    """The price stages keep level 2 (their energy cuts); the fewest-moved stage runs at
    ``tie_linearization`` (default 0), or at the price stages' level with None."""
    levels = _recorded(monkeypatch, lambda p: p.linearization_level)
    pb = next(p for p in map(four_jobs, range(100))
              if ins.moved(p, si.solve_brute(p).solution) > 0)  # stage 3 runs
    for option, last in (({}, 0), ({"tie_linearization": 1}, 1),
                         ({"tie_linearization": None}, 2)):
        levels.clear()
        r = si.solve_cpsat(pb, time_limit=20, **option)
        assert r.status is Status.OPTIMAL and r.params["stage3_status"] == "OPTIMAL", r.params
        assert len(levels) >= 2 and levels[:-1] == [2] * (len(levels) - 1), levels
        assert levels[-1] == last, (option, levels)


@pytest.mark.parametrize("bad", [3, -1, "0", 0.5, 1.0, True])
def test_a_bad_tie_linearization_is_refused(bad):
    with pytest.raises(ValueError, match="tie_linearization"):
        si.solve_cpsat(four_jobs(0), tie_linearization=bad)


@pytest.mark.parametrize("level", [0, 1, None])
@pytest.mark.parametrize("seed", range(12))
def test_every_tie_linearization_keeps_the_optimum_of_brute_force(seed, level):
    """Random 4-job problems and exact swap ties of several float prices: the
    fewest-moved stage at every linearization level returns brute force's optimum."""
    from test_slack_exactness import tie_problem

    for pb in (four_jobs(seed), tie_problem(seed)):
        agrees(pb, si.solve_cpsat(pb, time_limit=20, tie_linearization=level),
               si.solve_brute(pb))


@pytest.mark.slow  # about 18 s of one core; the tie stage's exactness is tested above
def test_a_snapshot_of_many_price_ties_is_proved_in_deterministic_time():
    """``kth-1997-04-insert-17706650-k21``: weights ``2 n`` make many exact price ties,
    and 16 of 21 jobs must move. With at most 12 deterministic units per stage (about
    1.4 for the price, 9 for the fewest-moved stage; reproducible on any load) the
    fewest-moved stage proves the count; with its linear relaxation at level 2
    (``tie_linearization=None``) it stops at 17 moved jobs within the same units."""
    from test_slack_exactness import SNAPSHOTS

    pb = ins.load(SNAPSHOTS / "kth-1997-04-insert-17706650-k21.json")
    r = si.solve_cpsat(pb, time_limit=300, sat_params={"max_deterministic_time": 12.0})
    assert r.status is Status.OPTIMAL, (r.note, r.params)
    assert r.params["stage3_status"] == "OPTIMAL", r.params
    assert ins.moved(pb, r.solution) == 16
    assert r.bound <= r.objective <= r.bound + ins.price_tolerance(r.bound)
