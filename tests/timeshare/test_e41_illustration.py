"""E-4.1, the paper's Fig. 2 illustration, as far as its numbers go (spec 3.7 target 5).

Paper: 3 nodes, J1 and J2 with one task per node (intensive message passing) and one
local task L per node, memory over M, m_1 < m_2; no other parameter is given. (a) without
memory control L finishes at 300, J1 at 450, J2 at 500 units; (b) with priority to the
task of lowest fault rate J1 finishes at 350, L unchanged, J2 earlier than 500.

The instance is :data:`sim.experiments.gine.illustration.INSTANCE` (chosen; its
docstring). What our node model reproduces, and is asserted here: J1 finishes much
earlier under CSM than without control (the paper: 450 -> 350, -22%). What it does not,
and is asserted as measured so that a change shows up: J2 is not earlier (within 2%), and
L is not unchanged: CSM's priority to the jobs delays it. The committed
``results/fig2.md`` is what the command writes (its T5 verdict reads it).
"""

from __future__ import annotations

import json
from pathlib import Path

from sim.experiments.gine import illustration as ill


def test_fig2_memory_control_brings_j1_forward():
    rr, pred, csm = (ill.finishing_times(p) for p in ("rr", "pred", "csm"))
    # paper (a): L first, then J1, then J2, without memory control
    for run in (rr, pred):
        assert run["L"] < run["J1"] <= run["J2"]
    # paper (b): J1 much earlier with control (paper -22%); ours at least 15% earlier
    assert csm["J1"] <= 0.85 * min(rr["J1"], pred["J1"])
    # not reproduced (paper: J2 earlier, L unchanged): J2 within 2%, L delayed
    assert abs(csm["J2"] - pred["J2"]) <= 0.02 * pred["J2"]
    assert csm["L"] > pred["L"] > rr["L"]


def _tables(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("Produced at")]


def test_the_command_writes_the_committed_results_and_only_into_out(tmp_path: Path) -> None:
    out = tmp_path / "o"
    assert ill.main(["--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["fig2.json", "fig2.md", "o"]
    text = (out / "fig2.md").read_text()
    assert "with `python -m sim.experiments.gine.illustration --out" in text
    committed = ill.FULL_DIR / "fig2.md"
    assert _tables(committed.read_text()) == _tables(text)
    data = json.loads((out / "fig2.json").read_text())
    stored = json.loads((ill.FULL_DIR / "fig2.json").read_text())
    assert data["finish_s"] == stored["finish_s"] and data["instance"] == stored["instance"]
    assert stored["command"] == "python -m sim.experiments.gine.illustration"
    (tmp_path / "f").write_text("x")
    assert ill.main(["--out", str(tmp_path / "f")]) == 2
    assert (tmp_path / "f").read_text() == "x"


def test_reproduce_gine_fig2_runs_the_illustration_and_t5_names_it(tmp_path: Path) -> None:
    import tomllib

    from sim.sweep import reproduce

    out = tmp_path / "o"
    assert reproduce.run("gine-fig2", ["--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["fig2.json", "fig2.md"]
    assert _tables((ill.FULL_DIR / "fig2.md").read_text()) == \
        _tables((out / "fig2.md").read_text())
    targets = tomllib.loads((ill.FULL_DIR.parent / "targets.toml").read_text())["target"]
    t5 = next(t for t in targets if t["id"] == "T5")
    assert t5["reproduction"] == "gine-fig2" and t5["ours"]["file"] == "results/fig2.md"
