"""A policy resolved once: ``sim.registry.policy_spec`` at the edge, ``PolicySpec`` below."""

from __future__ import annotations

import dataclasses

import pytest

from heuristics.backfill import EASY
from instances.synthetic import random_workload
from sim import registry
from sim.batch.machine import simulate
from sim.batch.metrics import summary
from sim.batch.policy import PolicySpec
from sim.batch.runner import run


def test_a_spec_holds_the_factory_the_options_and_what_the_policy_takes():
    spec = registry.policy_spec("slack", order="DP", sf=5)
    assert isinstance(spec, PolicySpec) and spec.name == "slack"
    assert dict(spec.options) == {"order": "DP", "sf": 5}
    assert spec.takes_priorities and "order" in spec.accepted
    assert not registry.policy_spec("easy").takes_priorities
    assert registry.policy_spec("easy").factory is EASY
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "easy"


def test_a_misspelt_option_fails_at_the_edge_naming_it():
    with pytest.raises(ValueError, match=r"policy 'easy' does not take option\(s\) \['slect'\]"):
        registry.policy_spec("easy", slect="bb")
    with pytest.raises(ValueError, match="does not take"):
        registry.policy_spec("easy").with_options(order="DP")
    with pytest.raises(ValueError, match="unknown policy 'eazy'"):
        registry.policy_spec("eazy")


def test_config_records_defaults_options_and_the_priority_scheme_never_the_table():
    cfg = registry.policy_spec("conservative", compression="none").config("fifth")
    assert cfg["policy"] == "conservative" and cfg["compression"] == "none"
    assert cfg["select"] == "ff" and "priorities" not in cfg  # conservative takes none
    slack = registry.policy_spec("slack").config("fifth")
    assert slack["priorities"] == "fifth" and slack["order"] == "AST"
    assert registry.policy_config("slack", order="DP") == \
        {**registry.policy_spec("slack").config(None), "order": "DP", "priorities": None}


def test_build_gives_a_fresh_policy_and_a_table_only_to_a_policy_taking_one():
    spec = registry.policy_spec("slack")
    a, b = spec.build(), spec.build()
    assert a is not b
    table = {1: (1.0, 0.0)}
    assert spec.build(table).priorities == table
    assert isinstance(registry.policy_spec("easy").build(table), EASY)


def test_build_refuses_an_object_that_is_not_a_policy():
    def factory():
        return object()

    spec = PolicySpec("mine", factory, accepted=frozenset())
    with pytest.raises(ValueError, match="'mine': object is not a policy .* lacks name"):
        spec.build()


def test_the_runner_takes_the_spec_and_gives_the_schedule_of_its_policy():
    w = random_workload(60, (16,), seed=4, load=0.9)
    row = run(w, registry.policy_spec("easy", select="bb"))
    s = simulate(w, EASY(select="bb"))
    assert row["policy"] == "easy-bb" and row["policy_config"]["select"] == "bb"
    assert row["avg_wait"] == summary(s)["avg_wait"]
