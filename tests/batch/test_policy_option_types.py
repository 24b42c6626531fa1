"""A policy option of the wrong type is refused at the edge, in one line naming it: a flag
(an option whose default is a bool) given anything but a bool (a string such as "abc"
read as true), and the exact policies' solver and limits given a value they cannot use
and the slack scheduler's numbers given a string (each was an internal TypeError, a
message naming no option, or silently accepted)."""

from __future__ import annotations

import pytest

from sim import registry
from sim.cli import main

FLAGS = sorted((name, k) for name in registry.POLICIES
               for k, v in registry.policy_spec(name).defaults if isinstance(v, bool))


def test_every_builtin_policy_has_flags_to_check():
    assert ("slack", "record") in FLAGS and ("conservative", "compiled") in FLAGS


@pytest.mark.parametrize("name,flag", FLAGS)
@pytest.mark.parametrize("value", ["abc", 1, None])
def test_a_flag_takes_only_true_or_false(name, flag, value):
    with pytest.raises(ValueError, match=f"'{flag}' must be true or false"):
        registry.policy_spec(name, **{flag: value})
    assert dict(registry.policy_spec(name, **{flag: True}).options)[flag] is True


@pytest.mark.parametrize("argv,needle", [
    (["--policy", "opt-easy", "--set", "solver=3"], "solver"),
    (["--policy", "slack-optimal", "--set", "solver=nan"], "solver"),
    (["--policy", "slack-optimal", "--set", "dtime=mult"], "dtime"),
    (["--policy", "opt-easy", "--set", "deterministic_limit=abc"], "deterministic_limit"),
    (["--policy", "opt-easy", "--set", "deterministic_limit=-5"], "deterministic_limit"),
    (["--policy", "slack", "--set", "record=abc"], "record"),
    (["--policy", "slack", "--set", "alpha_u=last2"], "alpha_u"),
    (["--policy", "slack", "--set", "sf=bb"], "sf"),
    (["--policy", "slack", "--set", "alpha_f=true"], "alpha_f"),
    (["--policy", "slack-optimal", "--set", "alpha_t=AST"], "alpha_t"),
])
def test_an_exact_policys_bad_option_is_one_line_naming_it(argv, needle, capsys):
    assert main(["simulate", "lublin_256", *argv, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "internal error" not in err[0], err
