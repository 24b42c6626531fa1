"""The ``zero_slack`` readings of the slack search (a waiting job with ``s0 = s = 0``).

``heuristics.slack`` documents them: ``move`` (default) moves such a job like any other,
``fixed`` never moves it, ``block`` also skips every slot that delays it, ``pull`` keeps
it at inserts and moves it at removes (the machine freed up). Both search
paths must agree on every reading, and the readings must do what they say.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from heuristics.slack import ORDERS, ZERO_SLACK, candidates, frozen_ids, insert
from sim.problems.insertion import InsertionProblem, best, check, objective, random_problem


def _zeroed(seed: int, k: int, **kw) -> InsertionProblem | None:
    """A random problem in which every third waiting job has no slack at all."""
    pb = random_problem(seed, k=k, new=seed % 3 != 0, **kw)
    waiting = tuple(replace(w, s=0.0, s0=0.0) if i % 3 == 1 else w
                    for i, w in enumerate(sorted(pb.waiting, key=lambda w: (w.te, w.id))))
    return replace(pb, waiting=waiting)


def _problems() -> list[InsertionProblem]:
    out = [_zeroed(s, 6) for s in range(30)]
    out += [_zeroed(s, 9, gap=0, capacity=4) for s in range(15)]
    return [pb for pb in out if frozen_ids(pb, "fixed")]


@pytest.mark.parametrize("zero_slack", ZERO_SLACK)
@pytest.mark.parametrize("compress", ["hold", "list"])
@pytest.mark.parametrize("delay_from", ["start", "overlap"])
def test_fast_equals_reference(zero_slack, compress, delay_from):
    for pb in _problems():
        for order in ORDERS:
            opts = {"delay_from": delay_from, "compress": compress, "zero_slack": zero_slack}
            ref = insert(pb, order, fast=False, **opts)
            fast = insert(pb, order, **opts)
            assert fast == ref, (order, opts, pb.to_dict())
            assert check(pb, fast.schedule) == []
            assert fast.price == objective(pb, fast.schedule)


@pytest.mark.parametrize("zero_slack", ["fixed", "block"])
def test_frozen_jobs_keep_their_start(zero_slack):
    moved_under_move = 0
    for pb in _problems():
        frozen = frozen_ids(pb, zero_slack)
        te = {w.id: w.te for w in pb.waiting}
        for order in ORDERS:
            got = insert(pb, order, zero_slack=zero_slack)
            assert all(got.schedule.starts[i] == te[i] for i in frozen)
            if zero_slack == "block" and pb.new is not None:
                # no slot that delays a frozen job: the new job comes after all of them
                assert got.schedule.new_start > max(te[i] for i in frozen)
            free = insert(pb, order)
            moved_under_move += any(free.schedule.starts[i] != te[i] for i in frozen)
    assert moved_under_move > 0  # the default does move such jobs, so the test can fail


def test_fixed_is_the_best_candidate_of_its_own_set():
    """The pruned search returns the definition's best of the unpruned candidates."""
    for pb in _problems():
        for order in ORDERS:
            cands = [c.schedule for c in candidates(pb, order, zero_slack="fixed")]
            chosen = insert(pb, order, zero_slack="fixed")
            ref = best(pb, cands)
            assert chosen.price == pytest.approx(objective(pb, ref), rel=1e-9, abs=1e-9)


def test_move_is_the_default_and_unknown_readings_are_refused():
    for pb in _problems()[:10]:
        assert insert(pb, "AST") == insert(pb, "AST", zero_slack="move")
    with pytest.raises(ValueError, match="zero_slack must be one of"):
        insert(_problems()[0], "AST", zero_slack="nan")


def test_the_compiled_search_refuses_a_zero_slack_reading_it_does_not_run() -> None:
    from heuristics.slack import Inserter

    with pytest.raises(ValueError, match="zero_slack='move' only"):
        Inserter("AST", compiled=True, zero_slack="fixed")
    assert Inserter("AST", zero_slack="block").with_compiled(False).zero_slack == "block"


def test_pull_is_fixed_at_inserts_and_move_at_removes():
    pulled = 0
    for pb in _problems():
        te = {w.id: w.te for w in pb.waiting}
        for order in ORDERS:
            got = insert(pb, order, zero_slack="pull")
            if pb.new is not None:
                assert got == insert(pb, order, zero_slack="fixed")
            else:
                assert got == insert(pb, order, zero_slack="move")
                pulled += any(got.schedule.starts[i] < te[i] for i in frozen_ids(pb, "fixed"))
    assert pulled > 0  # some remove pulls a zero-slack job forward, so the test can fail
