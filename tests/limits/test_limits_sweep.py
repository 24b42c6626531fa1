"""The limits benchmark's size sweep reaches every solver of every family."""

from __future__ import annotations

import pytest

from sim import registry

pytestmark = pytest.mark.untimed  # builds no instance, times nothing


def test_the_sweep_covers_every_registered_family() -> None:
    from sim.experiments.engine.limits_bench import sweep_sizes

    sizes = sweep_sizes()
    assert set(registry.SOLVERS) <= set(sizes)
    assert all(len(sizes[f]) >= 3 for f in registry.SOLVERS)


def test_the_sweep_reaches_the_documented_maxima() -> None:
    from sim.experiments.engine.limits_bench import sweep_sizes
    from sim.problems import kresource, placement, slots

    labels = {f: " ".join(label for label, _ in v) for f, v in sweep_sizes().items()}
    assert f"{slots.MAX_APPS} apps (max), 10^6 slots (max)" in labels["slot_assignment"]
    assert f"n_slots={placement.MAX_SLOTS}" in labels["slot_placement"]
    for kind in ("epochs", "selection", "response"):
        assert f"{kresource.MAX_JOBS} jobs" in labels[f"kresource_{kind}"]
