"""Karl's grid figures: their intervals, their one wake-up setting, their titles and the
committed results of their full configuration."""

from __future__ import annotations

import math
import random
import re

import pytest

from sim.experiments.karl import figs
from sim.timeshare.bsp import NetParams, measure_cell


def test_the_cv_interval_is_the_normal_one_on_normal_data() -> None:
    rng = random.Random(1)
    times = [round(rng.gauss(10_000, 1_000)) for _ in range(4000)]
    s = figs._summary(times)
    normal = figs.Z95 * s["cv"] * math.sqrt((0.5 + s["cv"] ** 2) / len(times))
    assert s["cv_half"] == pytest.approx(normal, rel=0.1)
    assert figs._summary([5, 5, 5])["cv_half"] == 0.0


def test_a_ratio_interval_uses_the_pairing_of_the_seeds() -> None:
    rng = random.Random(2)
    base = [rng.randrange(1_000, 2_000) for _ in range(100)]
    ctl = [5 * b + rng.randrange(0, 50) for b in base]    # strongly paired with base
    a, b = figs._summary(ctl), figs._summary(base)
    a["cov_us2"] = {"B": figs._covariance(ctl, base)}
    r, h = figs._ratio({(1, 0.0): a}, {(1, 0.0): b}, "B")
    ratio = a["mean_us"] / b["mean_us"]
    # the linearised per-seed residuals a_j - R b_j give the same variance
    res = [x - ratio * y for x, y in zip(ctl, base, strict=True)]
    direct = math.sqrt(sum(e * e for e in res) / (len(res) - 1) / len(res)) / b["mean_us"]
    t = a["mean_half_us"] * math.sqrt(a["i"]) / a["std_us"]
    assert h[(1, 0.0)] == pytest.approx(t * direct, rel=1e-6)
    a["cov_us2"]["B"] = 0.0     # read as independent: far wider
    assert figs._ratio({(1, 0.0): a}, {(1, 0.0): b}, "B")[1][(1, 0.0)] > 10 * h[(1, 0.0)]
    assert r[(1, 0.0)] == pytest.approx(ratio)


def test_a_group_runs_its_sets_on_the_same_seeds_under_the_figures_setting() -> None:
    group = figs.FigureGrid.groups()[(50, "complete")]
    (g, v), out = figs._group_job((group, figs.FIGURE_WAKEUP, 100, 0.5, 3, 2))
    assert (g, v) == (100, 0.5)
    none = (50, "complete", 0, "none")
    alone = measure_cell(*figs._cell_params(none, "immediate", 100, 0.5, 2, "central"),
                         NetParams(), i=3, seed=0)
    assert out[figs._set_key(none, figs.FIGURE_WAKEUP)]["mean_us"] == alone["mean_us"]
    sync = out[figs._set_key((50, "complete", 0, "sync"), figs.FIGURE_WAKEUP)]
    assert set(sync["cov_us2"]) == {figs._set_key(c, "-") for c in group if c[3] == "none"}
    assert figs.FIGURE_WAKEUP == figs.TICK_ON_RECEIVES


def test_replications_refuse_fewer_than_two_measurements() -> None:
    with pytest.raises(ValueError, match="'i'"):
        figs.Replications(i=1)
    assert figs.FULL_REPLICATIONS.of(1) == figs.FULL_REPLICATIONS.i_single


CODE_NAMES = re.compile(r"fig\d|AMB|ctl_block|tick-receive|_")


def test_figure_titles_use_the_papers_names() -> None:
    for fig in figs.FIGS:
        title = figs.figure_title(fig)
        assert not CODE_NAMES.search(title), title
        assert title.startswith("Karl, Figure ") or title.startswith("Karl, Section 4.4")


@pytest.mark.parametrize("fig", sorted(figs.FIGS))
def test_the_committed_figures_are_the_full_configuration_with_intervals(fig: str) -> None:
    text = (figs.FULL_DIR / f"{fig}.md").read_text()
    i = figs.FULL_REPLICATIONS.of(figs.FIGS[fig]["a"][0])
    assert f"i = {i} measurements" in text
    assert "only message receives wait for the node's next 10 ms tick" in text
    assert " ± " in text and "PARTIAL" not in text
    assert re.search(r"Produced at commit [0-9a-f]{7}, command", text)


def test_the_committed_targets_meet_2_to_4_under_the_figures_setting() -> None:
    rows = [line for line in (figs.FULL_DIR / "targets.md").read_text().splitlines()
            if line.startswith(f"| {figs.FIGURE_ROWS} |")]
    met = {line.split(" | ")[1].split()[0]: line.rstrip(" |").endswith("yes") for line in rows
           if not line.split(" | ")[1].split()[1].startswith("(")}
    assert met["2"] and met["3"] and met["4"]
