"""The readings of Talby & Feitelson's Tables 3-4 (``sim.experiments.talby.priority_readings``)
and the scheduler option behind two of them (``priority_in``)."""

from __future__ import annotations

import pytest

from heuristics.slack import SlackPolicy
from instances.job import Job, Workload
from sim.batch.machine import simulate
from sim.experiments.talby import priority_readings as pr


def _views(priority_in: str) -> dict[int, tuple[float, float]]:
    """(p, s0) of job 2 as the inserter sees it at the remove of t = 10 in the example."""
    jobs = tuple(Job(id=i, submit=s, runtime=r, requested=q, demand=(n,))
                 for i, s, n, q, r, _ in pr.EXAMPLE_JOBS)
    prio = {i: (h, h) for i, *_, h in pr.EXAMPLE_JOBS}
    pol = SlackPolicy(sf=3.0, awt=10.0, priorities=prio, priority_in=priority_in, record=True)
    simulate(Workload(jobs=jobs, capacity=(4,)), pol, overrun="kill")
    rm = next(p for p in pol.snapshots if p.new is None and p.now == 10)
    return {w.id: (w.p, w.s0) for w in rm.waiting}


def test_priority_in_moves_up_and_pp_between_price_and_slack():
    # job 2: UP = PP = 1, planned wait 99 s >= 2 AWT, so SP = 1 and p = (1 + 1 + 1) / 3
    assert _views("both")[2] == (1.0, 0.0)
    assert _views("price")[2] == (1.0, pytest.approx((1 - 1 / 3) * 30))  # s0 from SP alone
    assert _views("slack")[2] == (pytest.approx(1 / 3), 0.0)  # the price sees SP / 3
    with pytest.raises(ValueError, match="priority_in must be one of"):
        SlackPolicy(priority_in="none")


def test_the_example_shows_the_zero_slack_mechanism():
    rows, starts = pr.example()
    assert starts["default"] == {1: 0, 2: 10, 3: 60}
    assert starts["zero-fixed"] == {1: 0, 2: 100, 3: 150}
    assert starts["zero-pull"] == starts["default"]  # the remove at 10 pulls job 2 forward
    assert len(rows) == 3


def test_table3_is_consistent_but_for_november():
    rows = pr.table3_consistency()
    off = [r[0] for r in rows if r[5] != "+0.0%"]
    assert off == ["1996-11"]
    nov = next(r for r in rows if r[0] == "1996-11")
    assert nov[6] == "4,882.1"  # the lo-pri value the other two cells imply (printed 1,882.3)
