"""The spec 1.7 checklist written under Figures 2 and 3 counts what the cells show."""

from __future__ import annotations

from sim.experiments.leinberger.figs import _trend_checks


def _row(K: int, dist: str, L: int, **gains: tuple[float, float]) -> dict:
    """One cell with (ART gain, WART gain) per policy label, in %."""
    pols = {lab: {"gain_art": (a, 0.0), "gain_wart": (w, 0.0)} for lab, (a, w) in gains.items()}
    return {"scaling": "G-b", "K": K, "dist": dist, "queue": L, "policies": pols,
            "calibration": [{"queue": L * 1.01}, {"queue": L * 1.2}]}


def test_checklist_counts_each_item() -> None:
    rows = []
    for K, bl in ((2, 10.0), (8, -5.0)):
        for dist, base in (("uniform", 20.0), ("exponential", 10.0)):
            for L, step in ((64, 0.0), (256, 5.0)):
                rows.append(_row(K, dist, L, **{
                    "BB-EASY": (base + step, 15.0), "BB-EASY-nofull": (-1.0, -2.0),
                    "BL-EASY": (bl, 0.0), "FF-CONS": (-3.0 if L == 64 else 1.0, 0.0)}))
    text = _trend_checks(rows, "gain_art")
    assert "calibration within 5% of the target queue: 8/16" in text
    assert "BB (balance x fullness) ART gain > 0: 8/8; max +25.0%" in text
    assert "in 10-30%: 8/8; ART >= WART: 6/8" in text
    assert "uniform - exponential in [+3, +20] points: 4/4 (K, queue) pairs; mean +10.0" in text
    assert "BB (balance x fullness) gain rises with the queue length (strictly): 4/4" in text
    assert "BB (balance alone) ART gain > 0: 0/8" in text
    assert "BL gain falls with K (strictly): 4/4 (dist, queue) series" in text
    assert "BL gain < 0 at K = 8: 4/4 cells, at the longest queue: 2/2" in text
    assert "FF-CONS gain < 0: 4/8" in text
    # item 9 holds only where BL and FF-CONS both lose: K = 8 with queue 64
    assert "BB > FF-EASY (0) > both BL and FF-CONS: 2/8 cells" in text


def _sweep_reference(p, starts):
    """The capacity check as a plain event sweep (ends before starts at one time, then by
    job), the first violation's message: the reference of the vectorised check."""
    ev = sorted([(s, 1, j) for j, s in enumerate(starts)]
                + [(s + p.duration[j], 0, j) for j, s in enumerate(starts)])
    use = [0] * p.K
    for t, kind, j in ev:
        for k in range(p.K):
            use[k] += (1 if kind else -1) * p.demands[j][k]
            if use[k] > p.capacity[k]:
                return [f"solution: resource {k} over capacity at t={t} "
                        f"({use[k]} > {p.capacity[k]})"]
    return []


def test_response_capacity_check_matches_the_plain_event_sweep() -> None:
    import random

    from sim.problems import kresource as kr

    r = random.Random(1)
    violations = 0
    for _ in range(2000):
        n, K = r.randint(1, 12), r.randint(1, 3)
        cap = tuple(r.randint(1, 6) for _ in range(K))
        p = kr.ResponseProblem(capacity=cap, release=tuple(r.randint(0, 5) for _ in range(n)),
                               duration=tuple(r.randint(1, 4) for _ in range(n)),
                               demands=tuple((r.randint(1, cap[0]),
                                              *(r.randint(0, c) for c in cap[1:]))
                                             for _ in range(n)))
        starts = [p.release[j] + r.randint(0, 6) for j in range(n)]
        want = _sweep_reference(p, starts)
        violations += bool(want)
        assert kr.check(p, starts) == want
    assert 300 < violations < 1700  # both kinds of answer are compared


def test_response_capacity_check_is_exact_beyond_int64() -> None:
    """Start times are the solution's, any integer: past int64 the sweep is in Python's
    integers, not wrapped or refused."""
    from sim.problems import kresource as kr

    p = kr.ResponseProblem(capacity=(1,), release=(0, 0, 0), duration=(1, 1, 1),
                           demands=((1,), (1,), (1,)))
    far = 2**70
    assert kr.check(p, [0, far, far + 1]) == []
    assert kr.check(p, [0, far, far]) == _sweep_reference(p, [0, far, far]) != []
