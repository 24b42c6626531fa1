"""Names: policy names are case-sensitive (trace names are not), and a misspelt policy or
family gets the closest names; a problem file of another family says which one it is."""

from __future__ import annotations

import json

import pytest

from sim import registry
from sim.cli import main
from sim.names import did_you_mean
from sim.problems import example
from sim.registry import family_like


def test_policy_names_are_case_sensitive_with_a_hint(capsys):
    with pytest.raises(ValueError, match=r"did you mean 'easy'\? \(names are case-sensitive\)"):
        registry.policy_factory("EASY")
    assert main(["compare", "lublin_256", "--policies", "Conservative,fcfs", "--quiet"]) == 2
    assert "did you mean 'conservative'?" in capsys.readouterr().err
    assert main(["simulate", "lublin_256", "--policy", "esay", "--quiet"]) == 2
    assert "did you mean 'easy'" in capsys.readouterr().err  # the closest first
    assert did_you_mean("zzz", ["easy", "fcfs"]) == ""


@pytest.mark.parametrize("family,other", [("kresource_epochs", "kresource_selection"),
                                          ("kresource_epochs", "grouping"),
                                          ("task_mapping", "slot_assignment")])
def test_a_file_of_another_family_says_which(tmp_path, capsys, family, other):
    data = example(family)
    assert family_like(data, exclude=other) == family
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**data, "problem": other}))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"the fields are those of a '{family}' problem" in err and str(path) in err
    path.write_text(json.dumps({k: v for k, v in data.items() if k != "problem"}))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err
    assert "missing field 'problem'" in err
    assert f"the fields are those of a '{family}' problem" in err


def test_a_misspelt_family_gets_a_hint(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({**example("task_mapping"), "problem": "task-mapping"}))
    assert main(["solve", str(path)]) == 2
    assert "did you mean 'task_mapping'?" in capsys.readouterr().err
