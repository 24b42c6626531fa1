"""Column generation for minimum epochs stops at its time limit on large inputs: its first
stage, first fit over every order, costs jobs x epochs and looks at the clock inside."""

from __future__ import annotations

import random
import time

from models.deadline import Deadline
from models.kresource.colgen import ffd, solve_epochs
from sim.problems.kresource import EpochProblem, check
from sim.result import Status


def _large(n: int = 10_000, seed: int = 3) -> EpochProblem:
    rng = random.Random(seed)
    cap = (100, 100, 100)
    return EpochProblem(capacity=cap, demands=tuple(
        tuple(rng.randint(1, 40) for _ in cap) for _ in range(n)))


def test_colgen_on_ten_thousand_jobs_stops_at_its_limit() -> None:
    p = _large()
    t = time.perf_counter()
    r = solve_epochs(p, time_limit=1.0)
    assert time.perf_counter() - t < 1.0 + 1.5  # 17 s before the clock reached first fit
    assert r.status is Status.FEASIBLE and r.solution is not None
    assert check(p, r.solution) == []


def test_first_fit_cut_by_the_clock_still_packs_every_job() -> None:
    p = _large(3000)
    packings = ffd(p, Deadline(0.0))  # expired from the start: next fit after 256 jobs
    assert len(packings) == 1
    assert sorted(j for ep in packings[0] for j in ep) == list(range(p.n))
    assert check(p, packings[0]) == []
