"""Every MIP backend answers exactly or refuses: on random small instances at growing
data magnitudes, a backend's result agrees with brute force (no false optimum, no bound
beyond the optimum) or the model is refused with one line naming the problem's field and
the backend (``models.mip.MAX_MAGNITUDE``). The default run sweeps task mapping (the
family that fails first) and refuses the reported false-optimum instance; the whole
sweep over every family is marked ``slow``."""

from __future__ import annotations

import json
import math
import random

import pytest

from models import mip
from sim.experiments.engine import mip_range
from sim.memory.model import MissRateCurve
from sim.problems import grouping as gp
from sim.problems import task_mapping as tm

FALSE_OPTIMUM = {"problem": "task_mapping", "n_nodes": 3, "mem_pages": 10000000000,
                 "jobs": [[4146325908], [1216176258, 7708542174], [1464097213]],
                 "base": [4331299058, 5972752256, 2280719094], "objective": "overload"}
"""SCIP (OR-Tools 9.15) said OPTIMAL 119078164 with bound 119078163; the optimum is 0."""


def _exact_or_refused(family: str, backend: str, exponent: int, instances: int) -> int:
    """Solve ``instances`` instances of magnitude ``10^exponent``; every answer agrees
    with brute force or is refused naming the backend. Returns the answers checked."""
    ilp, brute = mip_range.solvers(family)
    if backend not in mip_range.BACKENDS_OF.get(family, mip.BACKENDS) or \
            exponent > mip_range.LARGEST.get(family, exponent):
        return 0
    rng = random.Random(f"test-{family}-{exponent}")
    checked = 0
    for _ in range(instances):
        p = mip_range.GENERATORS[family](rng, 10 ** exponent)
        try:
            r = ilp(p, backend=backend)
        except ValueError as exc:
            assert "\n" not in str(exc)
            assert "field '" in str(exc)
            if mip_range.family_of(family) == "grouping":
                assert f"the {mip.NAMES[backend]} backend proves only" in str(exc)
            elif family == "slack_insertion:ti":
                assert f"MIP on {mip.NAMES[backend]} is exact only" in str(exc)
            else:
                assert f"the {mip.NAMES[backend]} backend is exact only" in str(exc)
                assert f"at most {mip.MAX_MAGNITUDE[backend]:.0e}" in str(exc)
            continue
        why = mip_range.verdict(mip_range.family_of(family), brute(p), r)
        assert not why, (backend, exponent, why, p, r.status, r.objective, r.bound)
        checked += 1
    return checked


@pytest.mark.parametrize("backend", mip.BACKENDS)
def test_the_false_optimum_instance_is_refused_naming_field_and_backend(backend, tmp_path,
                                                                        capsys):
    from sim.cli import main

    path = tmp_path / "tm.json"
    path.write_text(json.dumps(FALSE_OPTIMUM))
    code = main(["solve", str(path), "--solver", "ilp", "--backend", backend])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert str(path) in err and "field 'mem_pages'" in err
    assert f"the {mip.NAMES[backend]} backend" in err


def test_cpsat_still_proves_the_false_optimum_instance():
    from models.task_mapping import solve_cpsat

    r = solve_cpsat(tm.from_dict(FALSE_OPTIMUM))
    assert r.status.value == "OPTIMAL" and r.objective == 0


@pytest.mark.parametrize("backend", mip.BACKENDS)
def test_task_mapping_at_growing_magnitudes_is_exact_or_refused(backend):
    checked = sum(_exact_or_refused("task_mapping", backend, d, 4) for d in (5, 7, 8, 10))
    assert checked >= 4  # the magnitudes inside the range were solved, not refused


def test_a_kresource_model_beyond_the_range_is_refused_on_cbc():
    """The K-resource ILPs run CBC through their own path (``models.cbc.solve_guarded``):
    refused there too."""
    from models.kresource import ilp
    from sim.problems.kresource import EpochProblem

    big = int(mip.MAX_MAGNITUDE["cbc"]) * 10
    p = EpochProblem((big, big), ((big // 3 + 1, 5), (big // 2, 7), (3, big // 4)))
    with pytest.raises(ValueError, match=r"field 'capacity\[0\]' = .*the CBC backend"):
        ilp.solve_epochs(p, backend="cbc")


@pytest.mark.slow
@pytest.mark.parametrize("backend", mip.BACKENDS)
@pytest.mark.parametrize("family", mip_range.FAMILIES)
def test_every_family_at_every_magnitude_is_exact_or_refused(family, backend):
    for d in range(2, 12):
        _exact_or_refused(family, backend, d, 6)


def _finite_numbers(x):
    if isinstance(x, dict):
        x = list(x.values())
    if isinstance(x, (list, tuple)):
        return [v for y in x for v in _finite_numbers(y)]
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return [abs(x)] if ok else []


@pytest.mark.parametrize("seed", [0, 1])
def test_a_model_number_built_past_the_range_from_data_within_it_is_refused(seed):
    """The insertion ILP's tie-break row holds the schedule's price, products of several
    fields: past HiGHS's range while every number of the problem is 100 times inside it.
    The refusal names the row and says the number is the model's, never a field that
    does not hold it (an infinite slack is no number of the model)."""

    from models.slack_insertion.ilp import solve_ilp

    p = mip_range.slack_insertion(random.Random(seed), 10**6)
    assert max(_finite_numbers(p.to_dict())) * 10 <= mip.MAX_MAGNITUDE["highs"]
    with pytest.raises(ValueError) as info:
        solve_ilp(p, time_limit=20, backend="highs")
    msg = str(info.value)
    assert "the HiGHS backend" in msg and "in row price_tie" in msg, msg
    assert "a number the model computes from the problem's fields" in msg, msg
    assert "= inf" not in msg, msg


def _wide(big: float) -> gp.GroupingProblem:
    """Two jobs of ``big`` references per slice whose slice together thrashes, and two
    cheap jobs whose pairing with them decides the optimum (2.6 processor-seconds): the
    largest slice cost is about ``big`` (latency 1 s)."""
    def curve(fp: int) -> MissRateCurve:
        return MissRateCurve(tuple([1.0 - x / fp for x in range(fp)] + [0.0]))

    return gp.GroupingProblem((gp.GroupJob("A", 1, curve(10), big),
                               gp.GroupJob("B", 1, curve(10), big),
                               gp.GroupJob("c", 1, curve(10), 1.0),
                               gp.GroupJob("d", 2, curve(10), 1.0)), 3, 12, 1.0, 1.0)


@pytest.mark.parametrize("backend", mip.BACKENDS)
def test_a_grouping_cost_spread_beyond_the_range_is_refused_naming_field_and_backend(
        backend, tmp_path, capsys):
    """CBC and HiGHS proved 7.0 optimal where exhaustive search finds 2.6 (the cheap
    jobs' costs, 1e-15 of the largest, are below their tolerances); SCIP failed the same
    way a decade later."""
    from sim.cli import main

    path = tmp_path / "wide.json"
    path.write_text(json.dumps(gp.to_dict(_wide(1e15))))
    before = path.read_bytes()
    code = main(["solve", str(path), "--solver", "exact-ilp", "--backend", backend])
    out, err = capsys.readouterr()
    assert code == 2 and "OPTIMAL" not in out
    assert len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "field 'jobs[0].refs'" in err, err
    assert f"the {mip.NAMES[backend]} backend proves only" in err, err
    assert path.read_bytes() == before


@pytest.mark.parametrize("backend", mip.BACKENDS)
def test_grouping_at_the_edge_of_the_range_agrees_with_exhaustive_search(backend):
    """Just inside each backend's cost spread the ILP answers as exhaustive search does,
    and just past it, where the backends' answers are no longer checked, it refuses."""
    from models.grouping import SPREAD_LIMIT, solve_exhaustive, solve_ilp

    inside = _wide(SPREAD_LIMIT[backend] / 2)
    ref = solve_exhaustive(inside)
    r = solve_ilp(inside, backend=backend)
    assert r.status.value == "OPTIMAL" and not mip_range.verdict("grouping", ref, r)
    assert abs(r.objective - ref.objective) <= 1e-9 * ref.objective
    with pytest.raises(ValueError, match="proves only"):
        solve_ilp(_wide(SPREAD_LIMIT[backend] * 4), backend=backend)


@pytest.mark.parametrize("entry", ["grouping", "grouping:wide", "slot_assignment",
                                   "slack_insertion:ti"])
def test_the_other_mips_at_growing_magnitudes_are_exact_or_refused(entry):
    backend = mip_range.BACKENDS_OF.get(entry, ("highs",))[0]
    checked = sum(_exact_or_refused(entry, backend, d, 2) for d in (2, 3, 7, 11))
    assert checked >= 2


def test_a_grouping_spread_from_the_slice_length_names_that_field():
    """Two jobs that fill the machine together at no miss cost nothing (the optimum is 0),
    while either alone leaves a processor idle for a slice of 1e9 s: on costs of that
    scale the backends' tolerances are about 1e-3 processor-seconds, and a proof of 0
    must be within 1e-6 (``sim.result.build``), so every backend refuses, naming the
    slice length."""
    from models.grouping import solve_exhaustive, solve_ilp

    fits = MissRateCurve((1.0, 0.0))
    p = gp.GroupingProblem((gp.GroupJob("a", 1, fits, 5.0), gp.GroupJob("b", 1, fits, 7.0)),
                           2, 8, 1.0, 1e9)
    assert solve_exhaustive(p).objective == 0.0
    for backend in mip.BACKENDS:
        with pytest.raises(ValueError, match=r"^field 'slice_length' = 1000000000: .* the "
                                             f"{mip.NAMES[backend]} backend proves only"):
            solve_ilp(p, backend=backend)
