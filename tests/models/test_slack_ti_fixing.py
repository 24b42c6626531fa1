"""LP reduced-cost fixing in the time-indexed insertion MIP (``fixing`` of
:func:`models.slack_insertion.timeindexed.solve_stages` and of ``cpsat+ti``): the fixed
candidate sets keep a schedule of the optimum, with the LP's duals and with perturbed
ones (the Lagrangian recomputation makes any multipliers valid), and the fixed MIP agrees
with brute force and with the unfixed MIP."""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pytest

from models import slack_insertion as si
from models.deadline import Deadline
from models.slack_insertion import bounds, tiportfolio
from models.slack_insertion import timeindexed as ti
from models.slack_insertion.domains import left_shift
from sim.problems import insertion as ins
from sim.result import Result, Status


def small(seed: int) -> ins.InsertionProblem:
    """Random problems of 2-4 waiting jobs, crowded enough that the capacity rows bind;
    every third with ``alpha_t = 0.5`` (the MIP and the LP take any alphas)."""
    pb = ins.random_problem(seed, 2 + seed % 3, capacity=3 + seed % 2, max_t=4,
                            max_slack=6, new=seed % 4 != 0)
    return replace(pb, alpha_t=0.5) if seed % 3 == 2 else pb


@functools.cache
def optimum(seed: int) -> Result:
    """Brute force's result on ``small(seed)``, once per worker."""
    return si.solve_brute(small(seed))


def starts(pb: ins.InsertionProblem, sch: ins.InsertionSchedule) -> dict[int, int]:
    """Every job's start (s), the new job's under its id."""
    out = dict(sch.starts)
    if pb.new is not None:
        out[pb.new.id] = sch.new_start
    return out


def fixed_sets(pb: ins.InsertionProblem, inc: ins.InsertionSchedule):
    """The MIP's candidate data from ``inc`` with the fixing of the LP bound from ``inc``."""
    lp = bounds.insertion_bound(pb, incumbent=inc)
    return ti._data(pb, inc, Deadline(None), 200_000, lp)


def assert_keeps_the_optimum(seed: int) -> int:
    """The fixed sets, from the current schedule and from the optimum, hold every start of
    the optimum shifted left (which lies in the unfixed sets, :mod:`domains`); returns
    the candidates dropped by the fixing."""
    pb, opt = small(seed), optimum(seed)
    assert opt.status is Status.OPTIMAL
    target = starts(pb, left_shift(pb, opt.solution))
    dropped = 0
    for inc in (ins.current_schedule(pb), opt.solution):
        data = fixed_sets(pb, inc)
        for jid, tau in target.items():
            assert tau in data.cand[jid], (seed, jid, tau, data.cand[jid])
        dropped += data.fixed
    return dropped


def test_fixing_keeps_the_optimum_and_drops_starts():
    assert sum(assert_keeps_the_optimum(seed) for seed in range(30)) >= 15


def test_fixing_with_perturbed_duals_keeps_the_optimum(monkeypatch):
    """The multipliers scaled at random by 0-3 and some raised by up to the largest cost
    per processor: the certificate is recomputed from them, so the fixing stays valid
    (only weaker). Not vacuous: starts are still dropped."""
    real = bounds._LP.duals
    rng = np.random.default_rng(7)

    def perturbed(self, solved):
        u = real(self, solved)
        top = float(np.abs(self.cost).max(initial=1.0))
        noise = rng.exponential(top, len(u)) * (rng.random(len(u)) < 0.3)
        return u * rng.uniform(0.0, 3.0, len(u)) + noise

    monkeypatch.setattr(bounds._LP, "duals", perturbed)
    assert sum(assert_keeps_the_optimum(seed) for seed in range(30)) >= 5


def solved(pb: ins.InsertionProblem, backend: str, fixing: bool) -> ti.TiOutcome:
    """Both stages from the current schedule, fixed by the LP from it or not."""
    cur = ins.current_schedule(pb)
    lp = bounds.insertion_bound(pb, incumbent=cur) if fixing else None
    return ti.solve_stages(pb, deadline=Deadline(20), backend=backend, fixing=lp,
                           hint=fixing)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_the_fixed_mip_agrees_with_brute_force_and_the_unfixed_mip(seed, backend):
    pb, opt = small(seed), optimum(seed)
    fixed, plain = solved(pb, backend, True), solved(pb, backend, False)
    p = opt.objective
    for out in (fixed, plain):
        assert out.schedule is not None and ins.check(pb, out.schedule) == []
        assert abs(ins.objective(pb, out.schedule) - p) <= ins.price_tolerance(p)
        assert out.bound is None or out.bound <= p
        if out.price_proved and out.moved_proved:
            assert ins.moved(pb, out.schedule) == ins.moved(pb, opt.solution)
    assert fixed.params["variables"] <= plain.params["variables"]


@pytest.mark.parametrize("backend", ["highs", "scip"])
def test_the_portfolio_proves_through_the_fixed_mip(backend, monkeypatch):
    """CP-SAT (replaced by the current schedule, unproved) leaves the proof to the LP and
    the fixed MIP, which give the definition's optimum."""
    def weak_cpsat(problem, **kwargs):
        cur = ins.current_schedule(problem)
        return Result(solver="cpsat", status=Status.FEASIBLE, solution=cur,
                      objective=ins.objective(problem, cur), bound=None, runtime=0.0,
                      seed=0, note="stopped by the time limit")

    monkeypatch.setattr(tiportfolio, "solve_cpsat", weak_cpsat)
    dropped = 0
    # alpha_t = 1, as CP-SAT needs, and prices far enough from 0 that the safe bound's
    # margin fits in the tie width (on smaller ones the MIP proves nothing, fixed or not)
    for seed in (3, 33, 37, 39):
        pb, opt = small(seed), optimum(seed)
        r = tiportfolio.solve_cpsat_ti(pb, time_limit=20, backend=backend, fixing=True)
        assert r.status is Status.OPTIMAL and "time-indexed MIP" in r.note, r.note
        assert abs(r.objective - opt.objective) <= ins.price_tolerance(opt.objective)
        assert r.bound <= opt.objective
        assert ins.moved(pb, r.solution) == ins.moved(pb, opt.solution)
        dropped += r.params["fixed_starts"]
    assert dropped > 0
