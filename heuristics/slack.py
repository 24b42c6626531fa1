"""Slack-based insertion heuristics of Talby & Feitelson (IPPS'99) and the ``SlackPolicy``.

The paper inserts a new job j into the schedule of the waiting jobs as follows. For each
time slot ``ts`` of the profile, starting at ``now``: every waiting job scheduled at or
after ``ts`` is delayed by j's length, j is put alone at ``ts``, and the delayed jobs are
*compressed* one by one in some order. The candidate schedules are priced with the paper's
price, ``sim.problems.insertion.objective``; the cheapest feasible one is taken, ties going to
the one that moves the fewest jobs. The heuristics differ in the compress order:

``AST``  ascending scheduled start (``te``)
``AAT``  ascending arrival time
``DU``   descending ``n * t`` (processor-seconds)
``DC``   descending cost of a one-second delay (``cost(i, 1)`` of the price)
``DP``   descending priority p, then ascending arrival
``exhaustive``  the paper's exact search over compress orders: every order (k! of them
         for k delayed jobs) at every slot. It raises ValueError when a slot would need
         more than ``max_exhaustive`` jobs ordered (default 8, i.e. 40,320 orders), and
         obeys ``solve``'s ``time_limit`` (best candidate so far).

Every order breaks its own ties by ``(te, id)``, so the result is deterministic.

Details the paper leaves open, as implemented here:

- Time slots: ``now`` and every breakpoint of the profile of the running and waiting
  jobs after ``now`` (estimated ends of running jobs, starts and ends of waiting jobs).
  "Delay all waiting jobs from ``ts`` on" means by default the jobs scheduled to start
  at or after ``ts``; with ``delay_from="overlap"`` also those that are scheduled
  to start before ``ts`` but still run at ``ts``. A slot at which j does not fit next
  to the running jobs and the waiting jobs that are not delayed is skipped. The last
  breakpoint leaves the machine empty, so some candidate always exists.
- Compress (``compress="hold"``, the default, the paper's reading): the delayed jobs
  first sit at ``te + t_j`` ("delay all waiting jobs from ts ... by j.t"), and then
  "compress the schedule" in the chosen order: each job in turn gives up its delayed
  reservation and takes the earliest start ``>= now`` at which it fits next to
  everything else, the jobs not yet compressed still holding theirs. So a job is never
  delayed by more than ``t_j`` and may move earlier than its old start (a negative
  cost). This is conservative backfilling's compression, and it is why the paper can
  say that every order "improves conservative": the order only decides who gets a hole
  first, it cannot push a job behind the others.
  ``compress="list"`` (the other reading, kept as a named option) places
  the delayed jobs one by one into a profile that does not hold the others (list
  scheduling): the jobs compressed first take the earliest holes and may push the later
  ones far beyond ``te + t_j``, up to their slack. Under AST both readings gave the same
  schedule on every month of the KTH year; under DU, DC and DP "list" is 4-42 % worse
  than conservative (``python -m sim.experiments.talby.orders``).
  In either reading a candidate in which some job would be delayed by more than its
  slack is infeasible and dropped.
- ``remove`` (``problem.new is None``) uses the paper's dummy timeless job: the same
  search with a job of length 0 that occupies nothing, so every slot only re-compresses
  the jobs scheduled from ``ts`` on; the slot after the last breakpoint leaves the
  schedule unchanged (price 0), so a re-optimisation never makes the price worse than
  doing nothing.
- A job with no slack at all (``s0 = s = 0``: priority ``p = 1``, which only a job with
  ``UP = PP = 1`` and ``SP = 1`` reaches) has the factor ``(s0 / s)`` = 0/0 in its cost.
  ``zero_slack="move"`` (default) takes it as 1 (``sim.problems.insertion``), so the job
  may be moved earlier like any other. ``zero_slack="fixed"`` reads it as a simulator
  whose 0/0 is IEEE NaN and which compares prices with ``<``: a candidate that moves
  such a job has no price and is never chosen, so the job keeps its start (it cannot be
  delayed anyway). ``zero_slack="block"`` also prices the jobs that a slot delays and the
  compression returns to their start (``0 * NaN``): every slot that delays such a job is
  skipped. ``zero_slack="pull"`` freezes such a job at inserts only: a new job never
  moves it, but when the machine frees up (a remove, after an early end) it is pulled
  forward like any other. All three are measured readings of Talby & Feitelson's Table 4
  (``sim.experiments.talby.priority_readings``), not the paper's stated rule.
- Prices within a relative 1e-9 of each other are treated as equal (then fewest moved
  jobs, then the earliest slot, then the first order tried wins).
- The search is exact with respect to its candidate set: slots and partial compressions
  are pruned only with a valid lower bound (j's own term plus, for every job still to
  place, the cost of moving it all the way to ``now``, the least any placement can
  cost), and pruning is strict, so ties are still resolved as without pruning
  (``candidates`` enumerates every candidate without pruning, for checking).

Times are integer seconds.
"""

from __future__ import annotations

import itertools
import time as _time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from heuristics import slack_fast
from sim.batch.slack_scheduler import SlackScheduler
from sim.problems import checker
from sim.problems.insertion import (
    InsertionProblem,
    InsertionSchedule,
    WaitingJob,
    current_schedule,
    job_cost,
    new_weight,
    objective,
)
from sim.profile import Profile
from sim.result import Result, Status, build

ORDERS = ("AST", "AAT", "DU", "DC", "DP")
EXHAUSTIVE = "exhaustive"
_REL_TIE = 1e-9
_STOP_EVERY = 64  # candidates between two calls of ``insert``'s ``stop``


def _order_key(name: str, problem: InsertionProblem) -> Callable[[WaitingJob], tuple]:
    """Sort key of the compress order ``name`` (ties broken by ``(te, id)``)."""
    if name == "AST":
        return lambda w: (w.te, w.id)
    if name == "AAT":
        return lambda w: (w.arrival, w.te, w.id)
    if name == "DU":
        return lambda w: (-w.n * w.t, w.te, w.id)
    if name == "DC":
        return lambda w: (-job_cost(problem, w, w.te + 1), w.te, w.id)
    if name == "DP":
        return lambda w: (-w.p, w.arrival, w.te, w.id)
    raise ValueError(f"order must be one of {ORDERS + (EXHAUSTIVE,)}, got {name!r}")


def _less(a: float, b: float) -> int:
    """-1 if a < b, 0 if equal within the relative tie tolerance, 1 if a > b."""
    if a == b or abs(a - b) <= _REL_TIE * max(1.0, abs(a), abs(b)):
        return 0
    return -1 if a < b else 1


@dataclass(frozen=True)
class Candidate:
    """One candidate schedule of the slot search.

    Parameters
    ----------
    ts : int
        Slot at which the new job is put (seconds).
    order : tuple of int
        Ids of the delayed jobs in the order they were compressed.
    schedule : InsertionSchedule
    price : float
        ``sim.problems.insertion.objective`` (the price) of ``schedule``.
    moved : int
        Waiting jobs whose start changed.
    stopped : bool
        The search was stopped (``insert``'s ``stop``) before trying every candidate.
    """

    ts: int
    order: tuple[int, ...]
    schedule: InsertionSchedule
    price: float
    moved: int
    stopped: bool = False


DELAY_FROM = ("start", "overlap")
COMPRESS = ("list", "hold")
ZERO_SLACK = ("move", "fixed", "block", "pull")


def _check_options(delay_from: str, compress: str, zero_slack: str = "move") -> None:
    if delay_from not in DELAY_FROM:
        raise ValueError(f"delay_from must be one of {DELAY_FROM}, got {delay_from!r}")
    if compress not in COMPRESS:
        raise ValueError(f"compress must be one of {COMPRESS}, got {compress!r}")
    if zero_slack not in ZERO_SLACK:
        raise ValueError(f"zero_slack must be one of {ZERO_SLACK}, got {zero_slack!r}")


def frozen_ids(problem: InsertionProblem, zero_slack: str) -> frozenset[int]:
    """Ids of the waiting jobs that keep their start under ``zero_slack`` (those with
    ``s0 = s = 0`` unless ``zero_slack="move"``, and with ``"pull"`` only when a new job
    is inserted; see the module docstring)."""
    if zero_slack == "move" or (zero_slack == "pull" and problem.new is None):
        return frozenset()
    return frozenset(w.id for w in problem.waiting if w.s0 == 0.0 and w.s == 0.0)


class _Search:
    """The slot search for one problem (shared by every order)."""

    def __init__(self, problem: InsertionProblem, delay_from: str = "start",
                 compress: str = "hold", zero_slack: str = "move") -> None:
        _check_options(delay_from, compress, zero_slack)
        self.hold = compress == "hold"
        self.frozen = frozen_ids(problem, zero_slack)
        self.block = zero_slack == "block"
        self.pb = problem
        now = problem.now
        self.now = now
        cap = problem.capacity
        base = Profile((cap,), now)
        for r in problem.running:
            if r.end > now:
                base.reserve(now, r.end - now, (r.n,))
        self.base = base
        self.waiting = sorted(problem.waiting, key=lambda w: (w.te, w.id))
        new = problem.new
        self.jn = new.n if new is not None else 0
        self.jt = new.t if new is not None else 0
        # minimal cost per job: moved all the way to `now` (cost is monotone in the shift)
        # (a frozen job cannot move: 0)
        self.mincost = {w.id: 0.0 if w.id in self.frozen else job_cost(problem, w, now)
                        for w in self.waiting}
        self.jweight = new_weight(problem)
        pts = {now}
        for r in problem.running:
            pts.add(r.end)
        for w in self.waiting:
            pts.add(w.te)
            pts.add(w.te + w.t)
        self.slots = sorted(p for p in pts if p >= now)
        # a waiting job stays fixed at slot ts iff fix(w) < ts: it starts before ts
        # ("start"), or it also ends by ts ("overlap": te + t <= ts)
        if delay_from == "start":
            self.fix = lambda w: w.te
        else:
            self.fix = lambda w: w.te + w.t - 1
        self.by_fix = sorted(self.waiting, key=lambda w: (self.fix(w), w.te, w.id))

    def new_term(self, ts: int) -> float:
        """The new job's own term of the price at slot ``ts``."""
        if ts <= self.now or self.jweight == 0.0:
            return 0.0
        return self.jweight * float(ts - self.now) ** self.pb.alpha_t

    def slot_states(self) -> Iterator[tuple[int, Profile, list[WaitingJob]]]:
        """Yield ``(ts, profile with fixed jobs and j, delayed jobs)`` for every usable slot."""
        fixed = self.base.copy()
        k = 0
        W = self.by_fix
        fix = self.fix
        for ts in self.slots:
            while k < len(W) and fix(W[k]) < ts:
                fixed.reserve(W[k].te, W[k].t, (W[k].n,))
                k += 1
            if self.jt > 0:
                if not fixed.fits(ts, self.jt, (self.jn,)):
                    continue
            if self.block and any(w.id in self.frozen for w in W[k:]):
                continue
            if self.jt > 0:
                prof = fixed.copy()
                prof.reserve(ts, self.jt, (self.jn,))
            else:
                prof = fixed.copy()
            yield ts, prof, W[k:]

    def compress(
        self, prof: Profile, order: Sequence[WaitingJob], bound: float | None = None,
        base_price: float = 0.0, ts: int | None = None,
    ) -> tuple[dict[int, int], float] | None:
        """Place ``order`` one by one at their earliest start into ``prof`` (modified).

        With ``compress="list"`` the jobs not yet compressed are absent from ``prof``
        (list scheduling); with ``compress="hold"`` every delayed job scheduled at or
        after the slot ``ts`` first holds its delayed reservation ``te + t_j`` and
        releases it only when its turn comes, so it never starts later than ``te + t_j``
        (a job that starts before ``ts``, delayed only under ``delay_from="overlap"``,
        holds nothing: its shifted reservation could overlap j).

        Returns ``(starts, partial cost)`` or None when a slack bound is violated or the
        lower bound exceeds ``bound`` (strictly).
        """
        pb, now = self.pb, self.now
        rest = sum(self.mincost[w.id] for w in order)
        total = base_price
        starts: dict[int, int] = {}
        held: set[int] = set()
        if self.hold:
            if ts is None:
                raise ValueError("compress='hold' needs the slot ts")
            for w in order:
                if w.te >= ts:
                    prof.reserve(w.te + self.jt, w.t, (w.n,))
                    held.add(w.id)
        for w in order:
            if w.id in held:
                prof.release(w.te + self.jt, w.t, (w.n,))
            st = prof.earliest_start(w.t, (w.n,), w.te if w.id in self.frozen else now)
            d = st - w.te
            if d > w.s:
                return None
            prof.reserve(st, w.t, (w.n,))
            starts[w.id] = st
            rest -= self.mincost[w.id]
            if d != 0:
                total += job_cost(pb, w, st)
            if bound is not None and _less(total + rest, bound) > 0:
                return None
        return starts, total


def _make_schedule(search: _Search, ts: int, starts: dict[int, int]) -> InsertionSchedule:
    full = {w.id: w.te for w in search.waiting}
    full.update(starts)
    return InsertionSchedule(new_start=ts if search.pb.new is not None else None, starts=full)


def _orders_for(search: _Search, order: str, delayed: list[WaitingJob],
                max_exhaustive: int) -> Iterator[Sequence[WaitingJob]]:
    if order == EXHAUSTIVE:
        if len(delayed) > max_exhaustive:
            raise ValueError(
                f"exhaustive search over compress orders needs {len(delayed)}! orders at "
                f"t={search.now}; limit max_exhaustive={max_exhaustive}")
        yield from itertools.permutations(delayed)
    else:
        yield sorted(delayed, key=_order_key(order, search.pb))


def candidates(problem: InsertionProblem, order: str = "AST", *,
               max_exhaustive: int = 8, delay_from: str = "start",
               compress: str = "hold", zero_slack: str = "move") -> Iterator[Candidate]:
    """Every feasible candidate of the slot search for ``order``, without pruning.

    For checking and analysis; ``insert`` returns the best of these.
    """
    search = _Search(problem, delay_from, compress, zero_slack)
    for ts, prof, delayed in search.slot_states():
        for seq in _orders_for(search, order, delayed, max_exhaustive):
            res = search.compress(prof.copy(), seq, ts=ts)
            if res is None:
                continue
            sched = _make_schedule(search, ts, res[0])
            moved = sum(1 for w in search.waiting if sched.starts[w.id] != w.te)
            yield Candidate(ts=ts, order=tuple(w.id for w in seq), schedule=sched,
                            price=objective(problem, sched), moved=moved)


def insert(problem: InsertionProblem, order: str = "AST", *,
           max_exhaustive: int = 8, delay_from: str = "start",
           stop: Callable[[], bool] | None = None, compress: str = "hold",
           fast: bool = True, zero_slack: str = "move", compiled: bool = False
           ) -> Candidate:
    """The cheapest candidate of the slot search (ties: fewest moved, earliest slot).

    Parameters
    ----------
    problem : InsertionProblem
    order : {"AST", "AAT", "DU", "DC", "DP", "exhaustive"}
    max_exhaustive : int
        Largest number of delayed jobs the exhaustive search orders at one slot.
    delay_from : {"start", "overlap"}
        Which waiting jobs a slot ``ts`` delays: those scheduled to start at or after
        ``ts`` (default), or also those that start before ``ts`` but still run at ``ts``.
    stop : callable, optional
        Asked every few candidates; when it returns True the search ends with the best
        candidate so far (or, if none yet, the current schedule), marked ``stopped``.
    compress : {"list", "hold"}
        How the delayed jobs are compressed in the chosen order (see the module
        docstring): re-placed one by one into a profile without them ("list"), or
        moved up one by one while the others still hold their delayed reservations
        ("hold", the paper's "compress the schedule").
    fast : bool
        Run the search on bare lists (``heuristics.slack_fast``, the default) or on
        checked :class:`sim.profile.Profile` objects (``False``, the reference path kept
        for differential tests and the before/after benchmark). Both return the same
        candidate.
    zero_slack : {"move", "fixed", "block", "pull"}
        How a waiting job with ``s0 = s = 0`` is treated (see the module docstring).
    compiled : bool
        Run the bare-list search compiled with numba (``heuristics.slack_kernel``; the
        same candidate; needs ``fast``, one of ``ORDERS``, ``zero_slack="move"`` and no
        ``stop``, ValueError otherwise).

    Returns
    -------
    Candidate
        Its ``price`` is recomputed by ``sim.problems.insertion.objective`` (the price).
    """
    key = None if order == EXHAUSTIVE else _order_key(order, problem)  # validates the name
    if compiled and not fast:
        raise ValueError("compiled=True runs the fast search; it needs fast=True")
    if fast:
        _check_options(delay_from, compress, zero_slack)
        if compiled:
            from heuristics import slack_kernel

            if zero_slack != "move":
                raise ValueError(f"the compiled slack search runs zero_slack='move' only, "
                                 f"got {zero_slack!r}")
            best, stopped = slack_kernel.search(problem, order, key,
                                                max_exhaustive=max_exhaustive,
                                                delay_from=delay_from,
                                                hold=compress == "hold", stop=stop)
        else:
            best, stopped = slack_fast.search(problem, order, key,
                                              max_exhaustive=max_exhaustive,
                                              delay_from=delay_from,
                                              hold=compress == "hold", stop=stop,
                                              frozen=frozen_ids(problem, zero_slack),
                                              block=zero_slack == "block")
        return _result(problem, best, stopped)
    search = _Search(problem, delay_from, compress, zero_slack)
    best: tuple[float, int, int, tuple[int, ...], dict[int, int]] | None = None
    tried = 0
    stopped = False
    for ts, prof, delayed in search.slot_states():
        if stopped:
            break
        term = search.new_term(ts)
        if best is not None:
            lb = term + sum(search.mincost[w.id] for w in delayed)
            if _less(lb, best[0]) > 0:
                # the bound only grows with ts (j's term grows, fewer jobs can move)
                break
        for seq in _orders_for(search, order, delayed, max_exhaustive):
            tried += 1
            if stop is not None and tried % _STOP_EVERY == 0 and stop():
                stopped = True
                break
            res = search.compress(prof.copy(), seq, None if best is None else best[0], term,
                                  ts)
            if res is None:
                continue
            starts, total = res
            moved = sum(1 for w in delayed if starts[w.id] != w.te)
            if best is not None:
                c = _less(total, best[0])
                if c > 0 or (c == 0 and moved >= best[1]):
                    continue
            best = (total, moved, ts, tuple(w.id for w in seq), starts)
    return _result(problem, best, stopped)


def _result(problem: InsertionProblem,
            best: tuple[float, int, int, tuple[int, ...], dict[int, int]] | None,
            stopped: bool) -> Candidate:
    """The candidate of ``best`` (price recomputed), or the current schedule if stopped
    before any candidate."""
    if best is None and stopped:  # stopped before any candidate: nobody moves
        sched = current_schedule(problem)
        return Candidate(ts=sched.new_start if sched.new_start is not None else problem.now,
                         order=(), schedule=sched, price=objective(problem, sched), moved=0,
                         stopped=True)
    if best is None:  # cannot happen: the last slot leaves the machine empty
        raise RuntimeError(f"no feasible insertion found at t={problem.now}")
    _, moved, ts, seq, starts = best
    full = {w.id: w.te for w in problem.waiting}
    full.update(starts)
    sched = InsertionSchedule(new_start=ts if problem.new is not None else None, starts=full)
    return Candidate(ts=ts, order=seq, schedule=sched, price=objective(problem, sched),
                     moved=moved, stopped=stopped)


class Inserter:
    """Callable ``InsertionProblem -> InsertionSchedule`` for ``SlackScheduler``.

    Parameters
    ----------
    order : {"AST", "AAT", "DU", "DC", "DP", "exhaustive"}
    max_exhaustive, delay_from, compress, fast, zero_slack, compiled
        See ``insert``; ``compiled`` is refused (ValueError) for the exhaustive order,
        without ``fast`` and with a ``zero_slack`` other than ``"move"``.

    Attributes
    ----------
    placement : str
        ``"breakpoint"``: the new job is placed at a slot, ``now`` or a breakpoint of the
        current schedule, so never after its latest end (the slack bound's term,
        ``sim.batch.policy.SLACK_BOUND``).
    """

    placement = "breakpoint"

    def __init__(self, order: str = "AST", *, max_exhaustive: int = 8,
                 delay_from: str = "start", compress: str = "hold", fast: bool = True,
                 zero_slack: str = "move", compiled: bool = False) -> None:
        if order not in ORDERS + (EXHAUSTIVE,):
            raise ValueError(f"order must be one of {ORDERS + (EXHAUSTIVE,)}, got {order!r}")
        _check_options(delay_from, compress, zero_slack)
        self.zero_slack = zero_slack
        if compiled:
            if not fast:
                raise ValueError("compiled=True runs the fast search; it needs fast=True")
            if order not in ORDERS:
                raise ValueError(f"the compiled slack search does not support order "
                                 f"{order!r}; it runs {ORDERS}")
            if zero_slack != "move":
                raise ValueError(f"the compiled slack search runs zero_slack='move' only, "
                                 f"got {zero_slack!r}")
        self.order = order
        self.max_exhaustive = int(max_exhaustive)
        self.delay_from = delay_from
        self.compress = compress
        self.fast = bool(fast)
        self.compiled = bool(compiled)

    def with_compiled(self, compiled: bool = True) -> Inserter:
        """This inserter with the compiled search switched on (or off)."""
        return Inserter(self.order, max_exhaustive=self.max_exhaustive,
                        delay_from=self.delay_from, compress=self.compress, fast=self.fast,
                        zero_slack=self.zero_slack, compiled=compiled)

    def decide(self, now: int, capacity: int, run_end: Any, run_n: Any, JI: Any, TE: Any,
               X: Any,
               new: tuple[int, int, float] | None, *, alphas: tuple[float, float, float, float],
               p_floor: float, slack_floor: float) -> tuple[int, list[int], list[int]]:
        """The compiled search on the scheduler's arrays (``heuristics.slack_kernel.decide``:
        the decision of ``__call__`` without building the ``InsertionProblem``); only for a
        compiled inserter (ValueError otherwise)."""
        if not self.compiled:
            raise ValueError("Inserter.decide runs the compiled search; make the inserter "
                             "with compiled=True")
        from heuristics import slack_kernel

        return slack_kernel.decide(now, capacity, run_end, run_n, JI, TE, X, new,
                                   order=self.order,
                                   alphas=alphas, p_floor=p_floor, slack_floor=slack_floor,
                                   delay_from=self.delay_from, hold=self.compress == "hold")

    def __call__(self, problem: InsertionProblem) -> InsertionSchedule:
        return insert(problem, self.order, max_exhaustive=self.max_exhaustive,
                      delay_from=self.delay_from, compress=self.compress,
                      fast=self.fast, zero_slack=self.zero_slack,
                      compiled=self.compiled).schedule

    def __repr__(self) -> str:
        return f"Inserter({self.order!r}{', compiled=True' if self.compiled else ''})"


def SlackPolicy(
    *,
    order: str = "AST",
    sf: float = 3.0,
    awt: float = 2401.0,
    alpha_u: float = 1.0,
    alpha_t: float = 1.0,
    alpha_p: float = 1.0,
    alpha_f: float = 1.0,
    reset_slack: bool = True,
    max_exhaustive: int = 8,
    delay_from: str = "start",
    compress: str = "hold",
    zero_slack: str = "move",
    priorities: Mapping[int, tuple[float, float]] | None = None,
    default_priority: float = 0.0,
    p_floor: float = 0.01,
    slack_floor: float = 1.0,
    priority_in: str = "both",
    record: bool = False,
    check: bool = False,
) -> SlackScheduler:
    """The slack-based priority scheduler with a compress-order inserter.

    Parameters
    ----------
    order : {"AST", "AAT", "DU", "DC", "DP", "exhaustive"}
        Compress order (see the module docstring).
    sf : float
        Slack factor SF.
    awt : float
        Average wait time AWT, seconds (the paper uses 2401 s for KTH).
    alpha_u, alpha_t, alpha_p, alpha_f : float
        Price exponents in [0, 1].
    reset_slack, priorities, default_priority, p_floor, slack_floor, priority_in, record, check
        See ``sim.batch.slack_scheduler.SlackScheduler``; ``priorities`` is the table
        job id -> (UP, PP) of ``instances.priorities.priorities_of``.
    max_exhaustive : int
        Queue limit of the exhaustive order search.
    delay_from : {"start", "overlap"}
        Which waiting jobs a slot delays (see ``insert``).
    compress : {"list", "hold"}
        How the delayed jobs are compressed (see ``insert``).
    zero_slack : {"move", "fixed", "block", "pull"}
        How a waiting job with no slack at all is treated (see ``insert``).

    Returns
    -------
    SlackScheduler
        Named ``"slack-<order>"``.
    """
    return SlackScheduler(
        Inserter(order, max_exhaustive=max_exhaustive, delay_from=delay_from,
                 compress=compress, zero_slack=zero_slack), sf=sf, awt=awt,
        alpha_u=alpha_u, alpha_t=alpha_t, alpha_p=alpha_p, alpha_f=alpha_f, reset_slack=reset_slack,
        priorities=priorities, default_priority=default_priority, p_floor=p_floor,
        slack_floor=slack_floor, priority_in=priority_in, record=record, check=check,
        name=f"slack-{order}")


# ---------------------------------------------------------------------- offline solvers
def solve(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
          order: str = "AST", max_exhaustive: int = 8, delay_from: str = "start",
          compress: str = "hold") -> Result:
    """Solve one insertion problem with the compress-order heuristic ``order``.

    Parameters
    ----------
    problem : InsertionProblem
    time_limit : float, optional
        Seconds; the search checks the clock every few candidates and, when the limit
        is reached, returns its best candidate so far (or the current schedule), said
        in ``Result.note``.
    seed : int
        Ignored (deterministic); recorded in the result.
    order : {"AST", "AAT", "DU", "DC", "DP", "exhaustive"}
    max_exhaustive : int
        The exhaustive search refuses (ValueError) a slot with more delayed jobs than
        this before enumerating its orders.
    delay_from : {"start", "overlap"}
    compress : {"list", "hold"}

    Returns
    -------
    Result
        Status FEASIBLE with the price recomputed by ``sim.problems.insertion.objective``,
        an :class:`InsertionSchedule` as ``solution`` and no bound (even the exhaustive
        search covers compress orders only, not every start time, so it proves nothing
        about the true optimum).
    """
    t0 = _time.perf_counter()
    if time_limit is not None and not 0 <= float(time_limit) < float("inf"):
        raise ValueError(f"time_limit must be a finite number >= 0 seconds, got {time_limit!r}")
    end = None if time_limit is None else t0 + float(time_limit)
    stop = None if end is None else (lambda: _time.perf_counter() >= end)
    cand = insert(problem, order, max_exhaustive=max_exhaustive, delay_from=delay_from,
                  stop=stop, compress=compress)
    params: dict[str, Any] = {"order": order, "delay_from": delay_from,
                              "compress": compress, "time_limit": time_limit}
    if order == EXHAUSTIVE:
        params["max_exhaustive"] = max_exhaustive
    note = "stopped by the time limit: best candidate so far" if cand.stopped else ""
    return build(solver=order, status=Status.FEASIBLE, solution=cand.schedule,
                 check=checker(problem), objective=lambda s: objective(problem, s),
                 bound=None, runtime=_time.perf_counter() - t0, seed=seed, params=params,
                 note=note)


def solve_ast(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
              delay_from: str = "start", compress: str = "hold") -> Result:
    """``solve`` with the AST order."""
    return solve(problem, time_limit=time_limit, seed=seed, order="AST", delay_from=delay_from,
                 compress=compress)


def solve_aat(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
              delay_from: str = "start", compress: str = "hold") -> Result:
    """``solve`` with the AAT order."""
    return solve(problem, time_limit=time_limit, seed=seed, order="AAT", delay_from=delay_from,
                 compress=compress)


def solve_du(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
             delay_from: str = "start", compress: str = "hold") -> Result:
    """``solve`` with the DU order."""
    return solve(problem, time_limit=time_limit, seed=seed, order="DU", delay_from=delay_from,
                 compress=compress)


def solve_dc(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
             delay_from: str = "start", compress: str = "hold") -> Result:
    """``solve`` with the DC order."""
    return solve(problem, time_limit=time_limit, seed=seed, order="DC", delay_from=delay_from,
                 compress=compress)


def solve_dp(problem: InsertionProblem, *, time_limit: float | None = None, seed: int = 0,
             delay_from: str = "start", compress: str = "hold") -> Result:
    """``solve`` with the DP order."""
    return solve(problem, time_limit=time_limit, seed=seed, order="DP", delay_from=delay_from,
                 compress=compress)


def solve_exhaustive(problem: InsertionProblem, *, time_limit: float | None = None,
                     seed: int = 0, max_exhaustive: int = 8,
                     delay_from: str = "start", compress: str = "hold") -> Result:
    """``solve`` with the paper's exhaustive search over compress orders."""
    return solve(problem, time_limit=time_limit, seed=seed, order=EXHAUSTIVE,
                 max_exhaustive=max_exhaustive, delay_from=delay_from, compress=compress)
