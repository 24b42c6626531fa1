"""The K-resource generator makes what was asked or refuses the parameter by name (through
the command line: exit 2, one line naming the field, no output file written)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from instances.kresource import MAX_JOBS, MAX_SPAN, KResourceSpec, generate

pytestmark = pytest.mark.untimed  # tests/conftest.py: no clock, runs beside timed tests


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True,
                          text=True, timeout=60, env=env)


@pytest.mark.parametrize(("option", "value", "field"), [
    ("--rate", "1e-300", "rate"), ("--rate", "1e-19", "rate"), ("--rate", "1e9", "rate"),
    ("--seed", "-1", "seed"), ("--jobs", str(10**12), "jobs"), ("--jobs", "0", "jobs")])
def test_out_of_range_parameters_are_refused(tmp_path: Path, option: str, value: str,
                                             field: str) -> None:
    out = tmp_path / "w.kswf"
    base = {"--K": "2", "--jobs": "5", option: value}  # the tested option replaces its base
    r = _cli("generate", "kresource", *(a for kv in base.items() for a in kv),
             "--out", str(out))
    assert r.returncode == 2, r
    assert "Traceback" not in r.stderr and "Warning" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    # named as the generator's field or as the option that sets it
    assert f"field '{field}'" in r.stderr or f"argument --{field}:" in r.stderr, r.stderr
    assert not out.exists()


@pytest.mark.parametrize("kw", [{"m_long": 1e300}, {"alpha": 1e300}, {"P": 10**12},
                                {"resolution": 2**40}, {"estimate_factor": 1e30},
                                {"jobs": MAX_JOBS + 1}])
def test_spec_bounds(kw: dict) -> None:
    with pytest.raises(ValueError, match=f"field '{next(iter(kw))}'"):
        KResourceSpec(**kw)


def test_the_slowest_rate_accepted_gives_distinct_submit_times() -> None:
    spec = KResourceSpec(K=2, jobs=50, rate=50 / MAX_SPAN, seed=2)
    submit = [j.submit for j in generate(spec).jobs]
    assert submit == sorted(submit) and len(set(submit)) == len(submit)
    assert 0 < submit[-1] < 10 * MAX_SPAN
