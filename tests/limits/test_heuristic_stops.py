"""Heuristics look at the clock inside their long loops, not only between them."""

from __future__ import annotations

import pytest

from sim.result import Status

pytestmark = pytest.mark.untimed  # counts calls, times nothing


def test_epoch_packing_asks_to_stop_before_each_scan_of_the_queue() -> None:
    from heuristics.kresource import pack_epochs
    from sim.problems.kresource import EpochProblem

    # jobs of 1 unit: an unconstrained epoch takes 10 of them, one scan of the queue each
    p = EpochProblem(capacity=(10,), demands=tuple((1,) for _ in range(30)))
    asked = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 1  # the epoch's first job, then stop

    epochs = pack_epochs(p, "unc-ff", stop=stop)
    assert len(epochs[0]) == 1  # closed at once, not after its 10 jobs
    assert sorted(j for e in epochs for j in e) == list(range(30))


def test_greedy_costs_its_candidates_in_chunks_with_the_same_answer(monkeypatch) -> None:
    import heuristics.grouping as hg
    from sim.problems import grouping

    p = grouping.random_problem(12, 8, max_procs=4, seed=3)
    whole = hg.greedy(p)
    monkeypatch.setattr(hg, "CHUNK_CELLS", len(p.jobs))  # one candidate per call
    assert hg.greedy(p).solution == whole.solution


def test_integer_lists_pass_in_one_sweep_and_name_the_bad_entry() -> None:
    import time

    from sim.problems import fields

    big = list(range(10**6))
    t = time.perf_counter()
    assert fields.integers(big, "base", minimum=0) == tuple(big)
    assert time.perf_counter() - t < 1.0
    assert fields.integers([1, 2.0], "base", minimum=0) == (1, 2)
    with pytest.raises(ValueError, match=r"field 'base\[2\]' must be >= 0"):
        fields.integers([1, 2, -1], "base", minimum=0)


@pytest.mark.timed
def test_grouping_heuristics_on_10000_jobs_stop_at_the_limit() -> None:
    import time

    from heuristics.grouping import footprint_balancing, greedy, knee
    from sim.problems import grouping
    from sim.result import Status

    # costing one schedule of 10^4 jobs by eq. 4 takes about 4 s of CPU: too late within
    # 1 s, the heuristics say UNKNOWN instead of costing it past the limit
    p = grouping.random_problem(10_000, 64, max_procs=8, memory=100, seed=1)
    for solve in (footprint_balancing, knee, greedy):
        t = time.perf_counter()
        r = solve(p, time_limit=1.0)
        assert time.perf_counter() - t < 3.0, solve.__name__
        assert r.status in (Status.FEASIBLE, Status.UNKNOWN)


@pytest.mark.parametrize("k", [100, 300])
def test_slack_search_reads_the_clock_within_a_candidate(monkeypatch, k: int) -> None:
    """The compress-order search asks ``stop`` every few steps of list work (slots, jobs
    added to a profile, jobs compressed), not only every 64 candidates: one candidate over
    10^4 delayed jobs took 10 s of CPU between two looks. Counted in the profile searches
    (``bisect_right``, a few per step) between two calls of ``stop``, not in seconds."""
    from heuristics import slack_fast
    from heuristics.slack import insert
    from sim.problems import insertion as ins

    calls = [0]
    bisect = slack_fast.bisect_right

    def counted(*args, **kwargs):
        calls[0] += 1
        return bisect(*args, **kwargs)

    monkeypatch.setattr(slack_fast, "bisect_right", counted)
    pb = ins.random_problem(1, k, capacity=128, max_t=3600, max_slack=7200)
    marks = [0]
    insert(pb, "AST", stop=lambda: marks.append(calls[0]) is None and False)  # never stops
    gaps = [b - a for a, b in zip(marks, marks[1:], strict=False)]
    assert calls[0] > 2000  # enough work to see the clock's period
    assert max(gaps) <= 512  # 64 steps of a few searches each (3,350 at 64 candidates)


@pytest.mark.timed  # real limits (the outcome does not hinge on the machine's speed)
@pytest.mark.parametrize("name", ["greedy", "footprint_balancing", "knee"])
def test_grouping_heuristics_keep_back_the_verifications_costing(monkeypatch,
                                                                 name: str) -> None:
    """A schedule is costed by eq. 4 twice after the search: in the solver's result and
    again where every answer is verified (3.4 s of CPU each at 10^4 jobs), so the search
    keeps back two costings: with 0.6 s per costing and a 1 s limit no schedule is
    returned (one costing would fit, two do not)."""
    from heuristics import grouping as hg
    from sim.problems import grouping

    pb = grouping.random_problem(12, 8, max_procs=4, memory=100, seed=1)
    monkeypatch.setattr(hg, "scoring_seconds", lambda problem, slices: 0.6)
    r = getattr(hg, name)(pb, time_limit=1.0)
    assert r.status is Status.UNKNOWN and "twice" in r.note
    assert getattr(hg, name)(pb, time_limit=10.0).status is Status.FEASIBLE
