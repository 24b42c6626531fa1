"""Fewer epochs by large neighbourhood search over a few epochs at a time (CP-SAT).

Bin elimination: of a packing into ``m`` epochs, one epoch (the *target*, the least
full) is to be emptied. A neighbourhood is the target and a few other epochs, chosen at
random with a preference for those whose free capacity could take the target's load
(:func:`_neighbourhood`); CP-SAT reassigns the neighbourhood's jobs among its epochs
(every epoch's capacity in every resource, in integers) so that the jobs left in the
target weigh strictly less (weight of a job: its summed normalised demand, scaled to
integers, at least 1), hinted with the current assignment; the first such assignment it
finds is taken, so the target's weight only falls. A target emptied is dropped:
``m - 1`` epochs, and the search goes on from the next least full epoch, down to
``lower``. After :data:`PATIENCE` neighbourhoods in a row without an improvement the
target is drawn among the few least full epochs. The search stops when the other epochs'
free capacity together cannot hold the target's load in some resource (no reassignment
can empty it).

This is the reduce-one-bin scheme of the bin-packing local searches (the emptiest bin's
items moved into the others by exchanges: Buljubasic & Vasquez 2016, consistent
neighbourhood search), with the exchanges done exactly by CP-SAT over a neighbourhood of
a few epochs, as large neighbourhood searches do (Shaw 1998).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from models.deadline import Deadline
from models.interrupt import run_cpsat
from models.kresource.common import relabel
from sim.problems.kresource import EpochProblem

__all__ = ["LnsOptions", "eliminate_epochs", "WEIGHT_SCALE"]

WEIGHT_SCALE = 10_000
"""Integer weight of a job filling one resource's capacity exactly (the objective's
weights ``round(WEIGHT_SCALE d_jk / C_k)`` summed over the resources, at least 1 so that
every job left in the target counts; they only guide the search, every fit is checked
on the integer demands)."""
SCORE_FLOOR = 1e-3
"""Score of an epoch with no free capacity for the target's load: it can still be drawn
into a neighbourhood (its jobs may move to free room for the target's)."""
PATIENCE = 5
"""Solves in a row without an improvement after which the target is drawn at random
among the :data:`CHOICES` least full epochs (until the next improvement)."""
CHOICES = 3
"""Least full epochs a target is drawn from after :data:`PATIENCE` misses."""
UNTIMED_SOLVES = 500
"""Most CP-SAT solves of a call without a time limit and without ``max_solves``."""
MIN_JOBS = 12
"""Fewest jobs a neighbourhood may hold (its job budget is drawn at random between
this and ``LnsOptions.most_jobs``, the target and one more epoch always in)."""


@dataclass(frozen=True)
class LnsOptions:
    """Options of :func:`eliminate_epochs`.

    Parameters
    ----------
    most_jobs : int
        Most jobs in one neighbourhood (its epochs are added while they fit under it).
    most_epochs : int
        Most epochs in one neighbourhood, the target included (at least 2).
    slice_seconds : float
        Wall-clock seconds of one CP-SAT solve, at most.
    slice_work : float or None
        CP-SAT's deterministic time of one solve (``max_deterministic_time``, its own work
        units); None: no such cap (the wall-clock slice alone).
    max_solves : int or None
        Most CP-SAT solves of one call; None: until the time runs out or ``lower`` is met
        (:data:`UNTIMED_SOLVES` without a time limit).
    """

    most_jobs: int = 40
    most_epochs: int = 12
    slice_seconds: float = 0.2
    slice_work: float | None = None
    max_solves: int | None = None

    def __post_init__(self) -> None:
        for name in ("most_jobs", "most_epochs"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 2:
                raise ValueError(f"{name} must be an integer >= 2, got {v!r}")
        if not self.slice_seconds > 0:
            raise ValueError(f"slice_seconds must be > 0, got {self.slice_seconds!r}")
        if self.slice_work is not None and not self.slice_work > 0:
            raise ValueError(f"slice_work must be > 0 or None, got {self.slice_work!r}")
        if self.max_solves is not None and (isinstance(self.max_solves, bool) or not
                                            isinstance(self.max_solves, int)
                                            or self.max_solves < 0):
            raise ValueError(f"max_solves must be an integer >= 0 or None, got "
                             f"{self.max_solves!r}")


def eliminate_epochs(problem: EpochProblem, epochs: Sequence[Sequence[int]], *,
                     lower: int, time_limit: float | None, seed: int = 0,
                     options: LnsOptions = LnsOptions()) -> tuple[list[list[int]], int]:
    """The smallest packing found from ``epochs`` (a packing of ``problem``) within
    ``time_limit`` seconds of wall clock (and ``options.max_solves`` CP-SAT solves),
    stopping at ``lower`` epochs; the input packing when none smaller is found. Returns
    the packing and the number of CP-SAT solves."""
    deadline = Deadline(time_limit)
    rng = random.Random(seed)
    cap, dem, K = problem.capacity, problem.demands, problem.K
    weight = [max(1, sum(round(WEIGHT_SCALE * d[k] / cap[k]) for k in range(K)))
              for d in dem]
    bins = [list(ep) for ep in epochs]
    free = [_room(ep, dem, cap) for ep in bins]
    most = options.max_solves
    if most is None and deadline.limit is None:
        most = UNTIMED_SOLVES
    solves = stall = 0
    while len(bins) > lower and not deadline.expired():
        if most is not None and solves >= most:
            break
        least = sorted(range(len(bins)), key=lambda e: (sum(weight[j] for j in bins[e]), e))
        target = least[0] if stall < PATIENCE else rng.choice(least[:CHOICES])
        if not bins[target]:
            _drop(bins, free, target)
            continue
        hood = _neighbourhood(target, bins, free, dem, cap, options, rng,
                              rng.randint(MIN_JOBS, max(MIN_JOBS, options.most_jobs)))
        if hood is None:
            break  # the other epochs cannot take the target's load in some resource
        left = deadline.solver_time()
        if left is not None and left <= 0:
            break
        limit = options.slice_seconds if left is None else min(options.slice_seconds, left)
        new = _reassign(problem, [bins[e] for e in hood], weight, limit,
                        options.slice_work, rng.randrange(2**31))
        solves += 1
        stall = stall + 1 if new is None else 0
        if new is not None:
            for e, ep in zip(hood, new, strict=True):
                bins[e] = ep
                free[e] = _room(ep, dem, cap)
            if not bins[target]:
                _drop(bins, free, target)
    return relabel(bins), solves


def _room(epoch: Sequence[int], dem: Sequence[Sequence[int]], cap: Sequence[int]
          ) -> list[int]:
    """Free capacity of ``epoch`` in each resource."""
    return [c - sum(dem[j][k] for j in epoch) for k, c in enumerate(cap)]


def _drop(bins: list[list[int]], free: list[list[int]], e: int) -> None:
    del bins[e]
    del free[e]


def _neighbourhood(target: int, bins: list[list[int]], free: list[list[int]],
                   dem: Sequence[Sequence[int]], cap: Sequence[int],
                   options: LnsOptions, rng: random.Random, most_jobs: int
                   ) -> list[int] | None:
    """The target and other epochs (at most ``options.most_epochs`` in all, their jobs
    at most ``options.most_jobs``), in random order weighted by how much of the
    target's load their free capacity could take; None when all the other epochs' free
    capacity cannot hold the target's load in some resource."""
    K = len(cap)
    load = [sum(dem[j][k] for j in bins[target]) for k in range(K)]
    others = [e for e in range(len(bins)) if e != target]
    if any(sum(free[e][k] for e in others) < load[k] for k in range(K)):
        return None
    score = {e: sum(min(free[e][k], load[k]) / cap[k] for k in range(K)) for e in others}
    # a random key per epoch, larger for a larger score (weighted sampling without
    # replacement: Efraimidis & Spirakis 2006)
    keyed = sorted(others, key=lambda e: -rng.random() ** (1.0 / (score[e] + SCORE_FLOOR)))
    hood, jobs = [target], len(bins[target])
    for e in keyed:
        if len(hood) >= options.most_epochs:
            break
        if len(hood) > 1 and jobs + len(bins[e]) > most_jobs:
            continue
        hood.append(e)
        jobs += len(bins[e])
    return hood if len(hood) > 1 else None


def _reassign(problem: EpochProblem, epochs: list[list[int]], weight: list[int],
              time_limit: float, work: float | None, seed: int) -> list[list[int]] | None:
    """The jobs of ``epochs`` reassigned among them (CP-SAT, one worker) with less weight
    left in ``epochs[0]``; None when CP-SAT finds no such assignment in ``time_limit``
    seconds (``work`` units of deterministic time)."""
    from ortools.sat.python import cp_model

    cap, dem, K = problem.capacity, problem.demands, problem.K
    jobs = [j for ep in epochs for j in ep]
    E = len(epochs)
    where = {j: e for e, ep in enumerate(epochs) for j in ep}
    m = cp_model.CpModel()
    x = {(j, e): m.new_bool_var("") for j in jobs for e in range(E)}
    for j in jobs:
        m.add_exactly_one(x[j, e] for e in range(E))
        for e in range(E):
            m.add_hint(x[j, e], where[j] == e)
    for e in range(E):
        for k in range(K):
            m.add(sum(dem[j][k] * x[j, e] for j in jobs) <= cap[k])
    left = sum(weight[j] * x[j, 0] for j in jobs)
    m.add(left <= sum(weight[j] for j in epochs[0]) - 1)
    m.minimize(left)
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = seed
    s.parameters.max_time_in_seconds = time_limit
    if work is not None:
        s.parameters.max_deterministic_time = work
    s.parameters.stop_after_first_solution = True  # any improvement: the next hood
    st = run_cpsat(s, m)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return [[j for j in jobs if s.value(x[j, e])] for e in range(E)]
