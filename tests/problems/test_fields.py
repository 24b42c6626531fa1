"""Shared field checks: one message shape for every problem family."""

import math

import pytest

from sim.problems import fields


def test_integer_accepts_integral_floats_and_refuses_bools_and_fractions():
    assert fields.integer(3.0, "n") == 3
    for bad in (True, 2.5, "3", None, math.inf):
        with pytest.raises(ValueError, match="field 'n' must be an integer"):
            fields.integer(bad, "n")
    with pytest.raises(ValueError, match=">= 1"):
        fields.integer(0, "n", minimum=1)
    with pytest.raises(ValueError, match="<="):
        fields.integer(2**64, "n")


def test_real_refuses_nan_inf_and_out_of_range():
    assert fields.real(1, "x") == 1.0
    assert fields.real("inf", "x", allow_inf=True) == math.inf
    for bad in (math.nan, math.inf, "1", False):
        with pytest.raises(ValueError, match="field 'x'"):
            fields.real(bad, "x")
    with pytest.raises(ValueError, match="out of range"):
        fields.real(10**400, "x")
    with pytest.raises(ValueError, match="<= 1"):
        fields.probability(1.5, "p")


def test_messages_name_the_source_and_cut_long_values():
    with pytest.raises(ValueError) as e:
        fields.text("x" * 10_000, "mode", choices=("a", "b"), source="p.json")
    msg = str(e.value)
    assert msg.startswith("p.json: field 'mode'") and len(msg) < 300


def test_record_and_family():
    with pytest.raises(ValueError, match="unknown key"):
        fields.record({"a": 1, "b": 2}, "job", required=("a",))
    with pytest.raises(ValueError, match="missing key 'a'"):
        fields.record({}, "job", required=("a",))
    with pytest.raises(ValueError, match="JSON object, got list"):
        fields.family([], "grouping", source="f.json")
    with pytest.raises(ValueError, match="f.json: field 'problem'"):
        fields.family({"problem": {"x": 1}}, "grouping", source="f.json")
    assert fields.sequence((1, 2), "v", length=2) == [1, 2]
    with pytest.raises(ValueError, match="2 entries"):
        fields.sequence([1], "v", length=2)
