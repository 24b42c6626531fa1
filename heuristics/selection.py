"""The job-selection rules of Leinberger, Karypis & Kumar: FF, BL and BB (with BB's
fullness modifier), which pick the job a backfilling policy starts among the candidates
that fit.

Job selection (Leinberger, Karypis & Kumar, "Job scheduling in the presence of multiple
resource requirements", TR 99-025; spec SPEC-001-002-004 section 1.2). Every policy takes
``select`` (``"ff"``, ``"bl"``, ``"bb"``) and the parameters below; the selection acts only
among backfill candidates, never in the FCFS phase (AMB-1.4 (a)). Utilisations and
requirements are fractions of each resource's capacity (AMB-1.1 (a)): ``U_k = (C_k -
free_k) / C_k``, ``R_Jk = demand_k / C_k``.

``ff`` (first fit)
    The earliest-arrived candidate.
``bl`` (backfill lowest, window ``w = window``)
    ``L_w`` = the ``w`` least utilised resources, ``G_w(J)`` = the ``w`` resources of J's
    largest requirements (ties in both: ``ties``, AMB-1.6); the first candidate in queue
    order with ``G_w(J) = L_w`` (as sets). ``w = 1`` is the paper's BL. When no candidate
    matches: ``bl_fallback`` (AMB-1.5): ``"ff"`` the first candidate (default),
    ``"next"`` try the next least utilised resource, and so on (``w = 1`` only),
    ``"stop"`` start nothing more at this decision. ``bl_fullness`` (AMB-1.3):
    ``"none"`` (default) or ``"largest"``: among the matching candidates the one with the
    least fullness ``1 - mean_k(U_k + R_Jk)`` (the largest), earliest first on ties.
``bb`` (backfill balanced)
    ``v = U + R_J``; ``bal = max(v) / mean(v)`` (in [1, K]); fullness
    ``full = 1 - mean(v)``; score ``bal * full`` with ``fullness="mult"`` (AMB-1.2 (a),
    default) or ``bal`` with ``fullness="none"``; the least score, the earliest on ties.

A rule is a small object with ``pick(candidates, free, capacity) -> index`` (-1: start
nothing more at this decision); :mod:`heuristics.backfill` hands it to every batch policy
and :mod:`heuristics.kresource` to the offline packers, so both use one definition.
Demands and free amounts are integer units of each resource.
"""

from __future__ import annotations

from collections.abc import Sequence

from instances.job import Job

__all__ = ["SELECTIONS", "BL_FALLBACKS", "BL_FULLNESS", "BB_FULLNESS", "TIES", "FirstFit",
           "BackfillLowest", "BackfillBalanced", "make_selection"]

SELECTIONS = ("ff", "bl", "bb")
BL_FALLBACKS = ("ff", "next", "stop")
BL_FULLNESS = ("none", "largest")
BB_FULLNESS = ("mult", "none")
TIES = ("first", "last")


class FirstFit:
    """FF selection: the first admissible job in queue (arrival) order."""

    name = "ff"
    first_fit = True

    def pick(self, candidates: Sequence[Job], free: Sequence[int],
             capacity: Sequence[int]) -> int:
        return 0


def _ranked(values: Sequence[float], ties: str, reverse: bool) -> list[int]:
    """Resource indices sorted by value (ascending, or descending when ``reverse``);
    equal values in index order (``ties="first"``) or reversed (``"last"``)."""
    idx = range(len(values))
    if ties == "first":
        return sorted(idx, key=lambda k: -values[k] if reverse else values[k])
    return sorted(idx, key=lambda k: (-values[k] if reverse else values[k], -k))


class BackfillLowest:
    """BL selection (backfill lowest with window ``w``); see the module docstring.

    Parameters
    ----------
    window : int
        ``w``, the number of least utilised resources matched (>= 0; 0 is first fit).
    fallback : {"ff", "next", "stop"}
        AMB-1.5: what happens when no candidate matches.
    fullness : {"none", "largest"}
        AMB-1.3: how the fullness modifier applies to BL.
    ties : {"first", "last"}
        AMB-1.6: equal utilisations or requirements rank the lower (``"first"``) or the
        higher resource index first.
    """

    name = "bl"
    first_fit = False

    def __init__(self, window: int = 1, fallback: str = "ff", fullness: str = "none",
                 ties: str = "first") -> None:
        self.window = window
        self.fallback = fallback
        self.fullness = fullness
        self.ties = ties

    def _match_sets(self, cands: Sequence[Job], capacity: Sequence[int]):
        w, ties = self.window, self.ties
        for job in cands:
            r = [d / c for d, c in zip(job.demand, capacity, strict=True)]
            yield frozenset(_ranked(r, ties, reverse=True)[:w])

    def pick(self, candidates: Sequence[Job], free: Sequence[int],
             capacity: Sequence[int]) -> int:
        K = len(capacity)
        util = [(capacity[k] - free[k]) / capacity[k] for k in range(K)]
        order = _ranked(util, self.ties, reverse=False)
        sets = list(self._match_sets(candidates, capacity))
        targets = [frozenset(order[:self.window])]
        if self.fallback == "next":  # window 1: the next least utilised resource, ...
            targets = [frozenset((k,)) for k in order]
        for target in targets:
            match = [i for i, g in enumerate(sets) if g == target]
            if match:
                if self.fullness == "largest":
                    return max(match, key=lambda i: (sum(
                        (capacity[k] - free[k] + candidates[i].demand[k]) / capacity[k]
                        for k in range(K)), -i))
                return match[0]
        return -1 if self.fallback == "stop" else 0


class BackfillBalanced:
    """BB selection (backfill balanced); see the module docstring.

    Parameters
    ----------
    fullness : {"mult", "none"}
        AMB-1.2: score ``bal * (1 - mean(v))`` or ``bal`` alone.
    """

    name = "bb"
    first_fit = False

    def __init__(self, fullness: str = "mult") -> None:
        self.fullness = fullness

    def scores(self, candidates: Sequence[Job], free: Sequence[int],
               capacity: Sequence[int]) -> list[float]:
        """The BB score of each candidate (lower is better)."""
        K = len(capacity)
        used = [(capacity[k] - free[k]) for k in range(K)]
        inv = [1.0 / c for c in capacity]
        mult = self.fullness == "mult"
        out = []
        for job in candidates:
            d = job.demand
            v = [(used[k] + d[k]) * inv[k] for k in range(K)]
            mean = sum(v) / K
            bal = max(v) / mean
            out.append(bal * (1.0 - mean) if mult else bal)
        return out

    def pick(self, candidates: Sequence[Job], free: Sequence[int],
             capacity: Sequence[int]) -> int:
        sc = self.scores(candidates, free, capacity)
        best = min(sc)
        return sc.index(best)  # the earliest on ties


def make_selection(select: str = "ff", *, window: int = 1, fullness: str = "mult",
                   bl_fallback: str = "ff", bl_fullness: str = "none",
                   ties: str = "first") -> FirstFit | BackfillLowest | BackfillBalanced:
    """The selection rule named ``select`` with its parameters (ValueError naming the
    option on a bad value, or on a value other than its default of a parameter the rule
    does not use: BL's with FF or BB, BB's with FF or BL)."""
    if select not in SELECTIONS:
        raise ValueError(f"select must be one of {SELECTIONS}, got {select!r}")
    if isinstance(window, bool) or not isinstance(window, int) or window < 0:
        raise ValueError(f"window must be an integer >= 0, got {window!r}")
    for nm, v, ok in (("fullness", fullness, BB_FULLNESS), ("bl_fallback", bl_fallback,
                      BL_FALLBACKS), ("bl_fullness", bl_fullness, BL_FULLNESS),
                      ("ties", ties, TIES)):
        if v not in ok:
            raise ValueError(f"{nm} must be one of {ok}, got {v!r}")
    if select == "bl" and bl_fallback == "next" and window != 1:
        raise ValueError(f"bl_fallback='next' needs window=1, got window={window}")
    unused = [f"{nm}={v!r}" for nm, v, default, rule in (
        ("window", window, 1, "bl"), ("fullness", fullness, "mult", "bb"),
        ("bl_fallback", bl_fallback, "ff", "bl"), ("bl_fullness", bl_fullness, "none", "bl"),
        ("ties", ties, "first", "bl")) if v != default and select != rule]
    if unused:  # an option the rule never reads would be recorded as if it had acted
        raise ValueError(f"select={select!r} does not use {', '.join(unused)} (window, "
                         f"bl_fallback, bl_fullness and ties are BL's, fullness is BB's)")
    if select == "ff":
        return FirstFit()
    if select == "bl":
        return BackfillLowest(window, bl_fallback, bl_fullness, ties)
    return BackfillBalanced(fullness)
