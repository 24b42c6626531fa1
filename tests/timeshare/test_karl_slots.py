"""The per-seed placement runs of ``sim.experiments.karl.slots`` against the objective and
the exhaustive solver."""

from __future__ import annotations

import dataclasses
import statistics

from models.slots import solve_placement
from sim.experiments.karl.slots import placement_cell
from sim.problems import placement as pl


def test_per_seed_runs_average_to_the_objective_and_the_solver_optimum():
    prob = pl.PlacementProblem(g_us=1_000, v=0.5, n=4, i=3, k=2, n_slots=5, slot_us=2_000,
                               ctl_block_wakeup="immediate", seed=7)
    runs = placement_cell(prob)
    assert list(runs) == [",".join(map(str, c)) for c in pl.iter_placements(prob)]
    means = {c: statistics.fmean(x) for c, x in runs.items()}
    for c, m in means.items():
        assert len(runs[c]) == 3
        assert m == pl.objective(prob, tuple(map(int, c.split(","))))
    r = solve_placement(prob)
    best = min(means, key=lambda c: (means[c], tuple(map(int, c.split(",")))))
    assert r.status.value == "OPTIMAL"
    assert ",".join(map(str, r.solution)) == best
    # seed s alone is the objective of the problem with i = 1 and that seed
    one = dataclasses.replace(prob, i=1, seed=8)
    assert runs["0,2"][1] == pl.objective(one, (0, 2))
