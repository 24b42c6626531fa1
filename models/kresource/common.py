"""Helpers shared by the K-resource backends (upper bounds and hints from heuristics)."""

from __future__ import annotations

from sim.problems.kresource import EpochProblem


def best_packing(problem: EpochProblem) -> list[list[int]]:
    """The fewest-epoch packing among the greedy rules (an upper bound and a hint),
    epochs relabelled by their smallest job (so job j sits in an epoch <= j)."""
    from heuristics.kresource import pack_epochs

    best = None
    for rule, full in (("unc-ff", "mult"), ("unc-bb", "none"), ("unc-bb", "mult"),
                       ("unc-bl", "mult"), ("fcfs-ff", "mult")):
        sol = pack_epochs(problem, rule, full)
        if best is None or len(sol) < len(best):
            best = sol
    return sorted((sorted(e) for e in best), key=lambda e: e[0])


def relabel(epochs: list[list[int]]) -> list[list[int]]:
    """Non-empty epochs, each sorted, ordered by their smallest job."""
    return sorted((sorted(e) for e in epochs if e), key=lambda e: e[0])
