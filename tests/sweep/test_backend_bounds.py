"""bench never lets a MIP backend's proof stand without checking it against the best
solution any member of the bench found: a backend's false optimum on grouping (a cost
spread beyond the backend's range, its refusal lifted here) is an error in the report,
and the best known value is the better solution, proved by the member whose proof no
solution contradicts."""

from __future__ import annotations

import json
import math

import pytest

from models import grouping
from sim.memory.model import MissRateCurve
from sim.problems import grouping as gp
from sim.sweep.bench import bench


def _wide() -> gp.GroupingProblem:
    """CBC and HiGHS prove 7.0 optimal; exhaustive search finds 2.6."""
    def curve(fp: int) -> MissRateCurve:
        return MissRateCurve(tuple([1.0 - x / fp for x in range(fp)] + [0.0]))

    return gp.GroupingProblem((gp.GroupJob("A", 1, curve(10), 1e15),
                               gp.GroupJob("B", 1, curve(10), 1e15),
                               gp.GroupJob("c", 1, curve(10), 1.0),
                               gp.GroupJob("d", 2, curve(10), 1.0)), 3, 12, 1.0, 1.0)


@pytest.mark.parametrize("backend", ["cbc", "highs"])
def test_a_backends_false_optimum_on_grouping_is_an_error_in_the_bench(
        backend, tmp_path, monkeypatch):
    monkeypatch.setitem(grouping.SPREAD_LIMIT, backend, math.inf)
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(gp.to_dict(_wide())))
    s = bench([path], tmp_path / "out", solvers=["exact-ilp", "exhaustive"],
              backend=backend, time_limit=30, plots=False)
    by = {r["solver"]: r for r in s.runs}
    ilp = by[f"exact-ilp[{backend}]"]
    assert ilp["status"] == "OPTIMAL" and ilp["objective"] == pytest.approx(7.0)
    assert all(r["best_known"] == pytest.approx(2.6) for r in s.runs)
    assert by["exhaustive"]["best_proved"] is True
    assert ilp["gap_to_best"] > 1.0  # counted 169% worse, never the best known
    assert any("contradiction" in i and f"exact-ilp[{backend}] proved 7.0 optimal" in i
               for i in s.issues), s.issues


def test_the_refusal_is_a_failed_run_in_the_bench(tmp_path):
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(gp.to_dict(_wide())))
    s = bench([path], tmp_path / "out", solvers=["exact-ilp", "exhaustive"],
              backend="cbc", time_limit=30, plots=False)
    by = {r["solver"]: r for r in s.runs}
    assert by["exact-ilp[cbc]"]["status"] == "FAILED"
    assert "the CBC backend proves only" in by["exact-ilp[cbc]"]["error"]
    assert by["exhaustive"]["best_known"] == pytest.approx(2.6) and not s.issues
