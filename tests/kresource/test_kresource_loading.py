"""Loading a K-resource problem: the whole-array fast path accepts exactly what the
field-by-field path accepts, words the same errors, and the cycle collector paused while a
problem is built is running again afterwards, also after a refusal."""

from __future__ import annotations

import gc

import pytest

from sim import registry
from sim.problems import kresource


def _response(demands, **over):
    data = {"problem": "kresource_response", "capacity": [4, 4], "release": [0] * len(demands),
            "duration": [1] * len(demands), "demands": demands}
    data.update(over)
    return data


def test_plain_and_checked_rows_load_to_the_same_problem():
    plain = kresource.from_dict(_response([[1, 2], [4, 0], [0, 3]]))
    # integral floats and tuples take the checked path and are read as the same ints
    mixed = kresource.from_dict(_response([[1.0, 2], (4, 0), [0, 3.0]]))
    assert plain == mixed
    assert all(type(x) is int for row in mixed.demands for x in row)
    assert kresource._plain_demands([[1.0, 2]], (4, 4)) is None  # not plain: checked path


@pytest.mark.parametrize("rows, field, words", [
    ([[1, 2], [5, 0]], "demands[1][0]", "exceeds the capacity 4"),
    ([[1, 2], [0, 0]], "demands[1]", "needs no resource at all"),
    ([[1, 2], [-1, 1]], "demands[1][0]", "must be >= 0"),
    ([[1, 2], [True, 1]], "demands[1][0]", "must be an integer"),
    ([[1, 2], [1, 1, 1]], "demands[1]", ""),
    ([[1, 2], [2**70, 1]], "demands[1][0]", ""),
])
def test_a_bad_row_is_refused_naming_its_field(rows, field, words):
    with pytest.raises(ValueError) as err:
        kresource.from_dict(_response(rows), source="f.json")
    assert f"f.json: field '{field}'" in str(err.value) and words in str(err.value)
    assert "\n" not in str(err.value)


def test_release_and_duration_are_checked_by_field():
    with pytest.raises(ValueError, match=r"field 'duration\[1\]' must be >= 1"):
        kresource.from_dict(_response([[1, 1], [1, 1]], duration=[1, 0]))
    with pytest.raises(ValueError, match=r"field 'release\[0\]' must be an integer"):
        kresource.from_dict(_response([[1, 1]], release=["0"]))


def test_the_collector_runs_again_after_a_load_and_after_a_refusal():
    family = registry.problem_family("kresource_response")
    assert gc.isenabled()
    assert family.load(_response([[1, 1]]), source="f.json").n == 1
    assert gc.isenabled()
    with pytest.raises(ValueError, match="exceeds the capacity"):
        family.load(_response([[9, 9]]), source="f.json")
    assert gc.isenabled()
