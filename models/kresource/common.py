"""Helpers shared by the K-resource backends (upper bounds and hints from heuristics)."""

from __future__ import annotations

from sim.problems.kresource import EpochProblem


def best_packing(problem: EpochProblem, time_limit: float | None = None,
                 ) -> list[list[int]]:
    """The fewest-epoch packing among the greedy rules (an upper bound and a hint),
    epochs relabelled by their smallest job (so job j sits in an epoch <= j). With a
    ``time_limit`` (seconds) only first fit runs once a tenth of it is spent, and once
    three tenths are spent it packs its remaining jobs FCFS (``pack_epochs``'s ``stop``)."""
    import time

    from heuristics.kresource import pack_epochs

    t0 = time.perf_counter()
    best = None
    stop = None if time_limit is None else (
        lambda: time.perf_counter() - t0 > 0.3 * time_limit)
    for rule, full in (("unc-ff", "mult"), ("unc-bb", "none"), ("unc-bb", "mult"),
                       ("unc-bl", "mult"), ("fcfs-ff", "mult")):
        if best is not None and time_limit is not None \
                and time.perf_counter() - t0 > 0.1 * time_limit:
            break
        sol = pack_epochs(problem, rule, full, stop=stop)
        if best is None or len(sol) < len(best):
            best = sol
    return sorted((sorted(e) for e in best), key=lambda e: e[0])


def epochs_variables(n: int, epochs: int) -> int:
    """Number of ``x[j,e]`` variables of the epochs model over ``n`` jobs and ``epochs``
    epochs (job ``j`` only in epochs ``e <= j``)."""
    full = min(n, epochs)
    return full * (full + 1) // 2 + (n - full) * epochs


def relabel(epochs: list[list[int]]) -> list[list[int]]:
    """Non-empty epochs, each sorted, ordered by their smallest job."""
    return sorted((sorted(e) for e in epochs if e), key=lambda e: e[0])


class OutOfTime(Exception):
    """The time limit ran out while a model was being built."""


def check_clock(t0: float, time_limit: float | None) -> None:
    """Raise :class:`OutOfTime` when ``time_limit`` seconds have passed since ``t0``
    (``time.perf_counter``); model builders call it every row or job, so a large
    instance cannot spend its whole limit (and more) in Python model building."""
    import time

    if time_limit is not None and time.perf_counter() - t0 > time_limit:
        raise OutOfTime


def remaining(t0: float, time_limit: float | None) -> float | None:
    """Seconds left of ``time_limit`` since ``t0`` (``time.perf_counter``), >= 0; None
    without a limit or one over ``models.deadline.MAX_SECONDS``."""
    import time

    from models.deadline import limit_of

    time_limit = limit_of(time_limit)
    if time_limit is None:
        return None
    return max(0.0, time_limit - (time.perf_counter() - t0))
