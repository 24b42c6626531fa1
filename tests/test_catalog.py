"""`schedsearch solvers`: every registered solver and policy has one line saying what it is;
`unc` says its own name; `bench --backend` runs the ILP on the backend named."""

from __future__ import annotations

import json

import pytest

from sim import registry
from sim.catalog import POLICY_NOTES, SOLVER_NOTES
from sim.cli import main


def test_every_builtin_name_has_one_line_and_no_line_is_stale():
    builtin = {f: {n for n in names if (f, n) not in registry.PLUGINS}
               for f, names in registry.SOLVERS.items()}
    assert {f: set(v) for f, v in SOLVER_NOTES.items()} == builtin
    assert set(POLICY_NOTES) == {n for n in registry.POLICIES if ("", n) not in registry.PLUGINS}
    for f, names in SOLVER_NOTES.items():
        for n, line in names.items():
            kind = "exact" if registry.SOLVERS[f][n].startswith("models.") else "heuristic"
            assert line.startswith(f"{kind}:"), (f, n)  # as bench classifies it
            assert "\n" not in line


def test_solvers_command_lists_a_family_and_the_policies(capsys):
    assert main(["solvers", "kresource_epochs"]) == 0
    out = capsys.readouterr().out
    assert f"default {registry.DEFAULT_SOLVERS['kresource_epochs']}" in out
    assert "  unc " in out and "alias of cpsat" in out
    assert main(["solvers", "policies", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["policies"]) == set(registry.POLICIES)
    assert main(["solvers", "kresource_epoch"]) == 2
    assert "did you mean 'kresource_epochs'" in capsys.readouterr().err


def test_an_unknown_family_is_told_what_solvers_takes_counted_honestly(capsys):
    """The families are the problem families with solvers, and 'policies' beside them:
    the message counts the families alone, names every one, and names 'policies' as what
    it is."""
    assert main(["solvers", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    families = sorted(registry.SOLVERS)
    assert f"one of the {len(families)} problem families ({', '.join(families)}) or " \
        "'policies'" in err[0], err[0]
    assert "in all" not in err[0]


def test_unc_results_say_unc():
    from sim.problems import example
    from sim.problems.kresource import from_dict

    problem = from_dict(example("kresource_epochs"))
    res = registry.solver("kresource_epochs", "unc")(problem, time_limit=10)
    ref = registry.solver("kresource_epochs", "cpsat")(problem, time_limit=10)
    assert res.solver == "unc" and res.params["model"] == "cpsat"
    assert res.objective == ref.objective and res.status == ref.status


@pytest.mark.timed
def test_bench_backend_runs_the_ilp_on_it(tmp_path, capsys):
    assert main(["generate", "kresource_epochs", "--n", "2", "--seed", "1", "--size", "n=6",
                 "--size", "K=2", "--out", str(tmp_path / "ep")]) == 0
    assert main(["bench", str(tmp_path / "ep"), "--solvers", "cpsat,ilp", "--backend", "scip",
                 "--time-limit", "10", "--out", str(tmp_path / "b"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| ilp[scip] | exact | 2 | OPTIMAL 2 |" in out
    assert main(["bench", str(tmp_path / "ep"), "--solvers", "cpsat", "--backend", "scip",
                 "--out", str(tmp_path / "c"), "--quiet"]) == 2
    assert "no solver among --solvers is a family's ILP" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
