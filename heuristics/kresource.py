"""Heuristics for the offline K-resource problems (Leinberger, Karypis & Kumar 1999).

Epoch packers (family ``kresource_epochs``, the paper's Figure 1 question): each epoch
starts on an empty machine with the remaining jobs in queue order.

- ``fcfs``: start queue heads while they fit; the first that does not fit ends the epoch.
- ``fcfs-ff``, ``fcfs-bl``, ``fcfs-bb``: the FCFS phase, then backfill: among the waiting
  jobs that fit, pick one by FF / BL / BB (:func:`pick`, the online rules) until none
  fits. In the epoch model every job ends at the shadow time, so the EASY and the
  conservative constraints admit every job that fits (spec 1.6): this is FCFS/X-EASY.
- ``unc-ff``, ``unc-bl``, ``unc-bb``: the unconstrained greedy variants (no FCFS phase; the
  rule picks among every fitting job). ``unc-bb`` takes ``fullness`` (``"mult"`` or
  ``"none"``).

Selection heuristics (family ``kresource_selection``): ``ff``, ``bl``, ``bb``, the greedy
loop of spec 1.2.2 steps 4-5 (pick, update ``F`` and, for a late job, ``E``; repeat).

Response heuristic (family ``kresource_response``): ``list`` schedules the jobs by a
serial schedule-generation scheme in release order (each job at its earliest feasible
start given the jobs placed before it): a feasible upper bound, FCFS-with-backfill-like.

Every function is ``solve(problem, *, time_limit=None, seed=0, ...) -> Result`` ending
in ``sim.result.build`` (status FEASIBLE; heuristics prove nothing).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from heuristics.selection import make_selection
from sim.problems import checker, scorer
from sim.problems.kresource import EpochProblem, ResponseProblem, SelectionProblem
from sim.result import Result, Status, build

__all__ = ["pack_epochs", "select_greedy", "serial_schedule", "EPOCH_RULES", "pick"]


class _Item:
    """A candidate as the selection rules see it (only its demand vector)."""

    __slots__ = ("demand",)

    def __init__(self, demand: tuple[int, ...]) -> None:
        self.demand = demand


def pick(select: str, free: Sequence[int], capacity: Sequence[int],
         demands: Sequence[Sequence[int]], fullness: str = "mult") -> int:
    """Index into ``demands`` (candidates in queue order, each fitting now) chosen by the
    online policies' rule ``select`` (FF, BL with w = 1 and FF fallback, BB with
    ``fullness``; ``heuristics.selection.make_selection``), never -1."""
    rule = make_selection(select, fullness=fullness)
    i = rule.pick([_Item(tuple(d)) for d in demands], free, capacity)
    return max(i, 0)

EPOCH_RULES = ("fcfs", "fcfs-ff", "fcfs-bl", "fcfs-bb", "unc-ff", "unc-bl", "unc-bb")


def pack_epochs(problem: EpochProblem, rule: str, fullness: str = "mult",
                stop: Callable[[], bool] | None = None) -> list[list[int]]:
    """Epochs (lists of job indices in start order) produced by ``rule``.

    ``stop`` (optional) is asked before each epoch and before each scan of the queue for
    a job to add (a scan reads every waiting job: 10^5 of them take a tenth of a second);
    once it says True the epoch being filled closes and the remaining jobs are packed by
    ``fcfs`` (linear time), so a caller short of time still gets a valid packing."""
    if rule not in EPOCH_RULES:
        raise ValueError(f"rule must be one of {EPOCH_RULES}, got {rule!r}")
    cap, dem, K = problem.capacity, problem.demands, problem.K
    queue = deque(range(problem.n))  # FCFS takes from its head: O(1) each
    out: list[list[int]] = []
    while queue:
        if stop is not None and rule != "fcfs" and stop():
            rule = "fcfs"
        free = list(cap)
        epoch: list[int] = []

        def fits(j: int, free: list[int] = free) -> bool:
            return all(dem[j][k] <= free[k] for k in range(K))

        def take(j: int, free: list[int] = free, epoch: list[int] = epoch) -> None:
            for k in range(K):
                free[k] -= dem[j][k]
            epoch.append(j)
            if queue[0] == j:
                queue.popleft()
            else:
                queue.remove(j)

        if not rule.startswith("unc"):
            while queue and fits(queue[0]):
                take(queue[0])
        if rule != "fcfs":
            select = rule.split("-")[1]
            while True:
                if stop is not None and epoch and stop():
                    break  # the epoch so far stands; the next ones go fcfs
                cands = [j for j in queue if fits(j)]
                if not cands:
                    break
                take(cands[pick(select, free, cap, [dem[j] for j in cands], fullness)])
        if not epoch:  # cannot happen: every job fits an empty machine
            raise RuntimeError(f"{rule}: no job fits an empty machine")
        out.append(epoch)
    return out


STOP_RESERVE = 0.25
"""Share of an epoch rule's time limit kept back from its clock (:func:`_epoch_solver`)."""
STOP_RESERVE_CAP = 0.5
"""Seconds: the most kept back."""


def _epoch_solver(rule: str) -> Any:
    def solve(problem: EpochProblem, *, time_limit: float | None = None, seed: int = 0,
              fullness: str = "mult") -> Result:
        t0 = time.perf_counter()
        # a quarter of the limit (at most 0.5 s) is kept for the scan under way when the
        # clock is asked (a scan of 10^5 waiting jobs and its pick take tenths of a
        # second) and for packing the rest by fcfs
        stop_at = None if time_limit is None else \
            time_limit - min(STOP_RESERVE_CAP, STOP_RESERVE * time_limit)
        late = None if stop_at is None else \
            (lambda: time.perf_counter() - t0 > stop_at)  # then the rest by fcfs
        sol = pack_epochs(problem, rule, fullness, stop=late)
        return build(solver=rule, status=Status.FEASIBLE, solution=sol, check=checker(problem),
                     objective=scorer(problem), runtime=time.perf_counter() - t0,
                     seed=seed, params={"fullness": fullness} if "bb" in rule else {})

    solve.__name__ = f"solve_{rule.replace('-', '_')}"
    solve.__doc__ = f"Epoch packing by rule {rule!r} (module docstring)."
    return solve


solve_fcfs = _epoch_solver("fcfs")
solve_fcfs_ff = _epoch_solver("fcfs-ff")
solve_fcfs_bl = _epoch_solver("fcfs-bl")
solve_fcfs_bb = _epoch_solver("fcfs-bb")
solve_unc_ff = _epoch_solver("unc-ff")
solve_unc_bl = _epoch_solver("unc-bl")
solve_unc_bb = _epoch_solver("unc-bb")


# ---------------------------------------------------------------------------- selection
def select_greedy(problem: SelectionProblem, select: str, fullness: str = "mult") -> list[int]:
    """Candidates started by the greedy FF / BL / BB backfill loop (spec 1.2.2)."""
    cap, K = problem.capacity, problem.K
    free, extra = list(problem.free), list(problem.extra)
    left = list(range(problem.n))
    chosen: list[int] = []
    while True:
        cands = [j for j in left
                 if all(problem.demands[j][k] <= free[k] for k in range(K))
                 and (not problem.late[j]
                      or all(problem.demands[j][k] <= extra[k] for k in range(K)))]
        if not cands:
            return chosen
        j = cands[pick(select, free, cap, [problem.demands[j] for j in cands], fullness)]
        for k in range(K):
            free[k] -= problem.demands[j][k]
            if problem.late[j]:
                extra[k] -= problem.demands[j][k]
        chosen.append(j)
        left.remove(j)


def _select_solver(select: str) -> Any:
    def solve(problem: SelectionProblem, *, time_limit: float | None = None, seed: int = 0,
              fullness: str = "mult") -> Result:
        t0 = time.perf_counter()
        sol = select_greedy(problem, select, fullness)
        return build(solver=select, status=Status.FEASIBLE, solution=sol, check=checker(problem),
                     objective=scorer(problem), runtime=time.perf_counter() - t0,
                     seed=seed, sense="max", params={"fullness": fullness})

    solve.__name__ = f"solve_select_{select}"
    return solve


solve_select_ff = _select_solver("ff")
solve_select_bl = _select_solver("bl")
solve_select_bb = _select_solver("bb")


# ---------------------------------------------------------------------------- response
def serial_schedule(problem: ResponseProblem, order: Sequence[int],
                    stop: Callable[[], bool] | None = None) -> list[int]:
    """Serial schedule-generation scheme: place jobs in ``order``, each at its earliest
    start (>= release) where it fits beside the jobs already placed. Times in the
    problem's integer time unit.

    ``stop`` (optional) is asked before each job; once it says True the remaining jobs
    run one after another after everything placed (each fits an empty machine), so a
    caller short of time still gets a feasible schedule."""
    K, cap = problem.K, problem.capacity
    placed: list[tuple[int, int, tuple[int, ...]]] = []  # (start, end, demand)
    starts = [0] * problem.n
    tail = None  # end of the serial tail once stopped
    for j in order:
        p, d = problem.duration[j], problem.demands[j]
        if tail is None and stop is not None and stop():
            tail = max((e for _, e, _ in placed), default=0)
        if tail is not None:
            starts[j] = max(tail, problem.release[j])
            tail = starts[j] + p
            continue
        cands = sorted({problem.release[j]} | {e for _, e, _ in placed
                                              if e > problem.release[j]})
        for t in cands:
            # usage only changes at starts inside [t, t + p): check t and those starts
            pts = [t] + [s for s, _, _ in placed if t < s < t + p]
            if all(all(sum(dd[k] for s, e, dd in placed if s <= x < e) + d[k] <= cap[k]
                       for k in range(K)) for x in pts):
                starts[j] = t
                placed.append((t, t + p, d))
                break
    return starts


def solve_list(problem: ResponseProblem, *, time_limit: float | None = None,
               seed: int = 0) -> Result:
    """Serial schedule in release order (ties: index); FEASIBLE upper bound. Past
    ``time_limit`` (seconds) the remaining jobs run one after another (``note``)."""
    t0 = time.perf_counter()
    order = sorted(range(problem.n), key=lambda j: (problem.release[j], j))
    hit: list[bool] = []

    def stop() -> bool:
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            hit.append(True)
        return bool(hit)

    sol = serial_schedule(problem, order, stop=stop)
    return build(solver="list", status=Status.FEASIBLE, solution=sol, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 note="stopped by the time limit: the rest serially" if hit else "")
