"""Huge but finite numbers in a problem file never give an infinite objective, a numpy
overflow warning or a traceback: every solver of every family either refuses the problem
with a ValueError (one line in the CLI, exit 2) or returns a finite objective."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from test_options import CASES, _small

from sim import registry

pytestmark = pytest.mark.untimed  # tests/conftest.py: no clock, runs beside timed tests


def _scaled(data: Any, factor: float, int_factor: int) -> Any:
    """``data`` with every float leaf times ``factor`` and every int leaf times
    ``int_factor`` (booleans and strings untouched)."""
    if isinstance(data, dict):
        return {k: v if k == "problem" else _scaled(v, factor, int_factor)
                for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_scaled(v, factor, int_factor) for v in data]
    if isinstance(data, bool) or not isinstance(data, int | float):
        return data
    if isinstance(data, int):
        return data * int_factor
    return data * factor


def _as_dict(problem: Any) -> dict[str, Any]:
    return problem.to_dict()


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Paths to every dictionary entry whose value holds numbers (one path per field)."""
    out = []
    if isinstance(data, dict):
        for k, v in data.items():
            if k == "problem":
                continue
            if isinstance(v, dict) or (isinstance(v, list) and v and isinstance(v[0], dict)):
                items = v.items() if isinstance(v, dict) else enumerate(v)
                for k2, v2 in items:
                    out += _paths(v2, (*prefix, k, k2)) if isinstance(v2, dict) else (
                        [(*prefix, k, k2)] if _has_number(v2) else [])
            elif _has_number(v):
                out.append((*prefix, k))
    return out


def _has_number(v: Any) -> bool:
    if isinstance(v, list | tuple):
        return any(_has_number(x) for x in v)
    return isinstance(v, int | float) and not isinstance(v, bool)


def _with(data: Any, path: tuple, factor: float, int_factor: int) -> Any:
    if not path:
        return _scaled(data, factor, int_factor)
    if isinstance(data, dict):
        return {k: _with(v, path[1:], factor, int_factor) if k == path[0] else v
                for k, v in data.items()}
    return [_with(v, path[1:], factor, int_factor) if i == path[0] else v
            for i, v in enumerate(data)]


@pytest.mark.parametrize(("factor", "int_factor"), [(1e300, 1), (1.0, 2**50)])
@pytest.mark.parametrize(("family", "name"), CASES)
def test_huge_numbers_are_refused_or_finite(family: str, name: str, factor: float,
                                            int_factor: int) -> None:
    problem = _small(family)
    if problem is None:
        pytest.skip(f"no small instance of family {family!r} in this test")
    base = _as_dict(problem)
    for path in _paths(base):
        data = _with(base, path, factor, int_factor)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            try:
                _, big = registry.load_problem(data)
                result = registry.solver(family, name)(big, time_limit=1.0, seed=0)
            except ValueError as exc:
                assert "\n" not in str(exc).strip(), (path, exc)
                continue
        if result.objective is not None:
            assert math.isfinite(result.objective), (path, result)
        if result.bound is not None:
            assert not math.isnan(result.bound), (path, result)
