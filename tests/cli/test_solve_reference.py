"""The reference column of ``solve --solvers``: the tightest bound, not the weakest."""

from __future__ import annotations

from sim.cli.solve import side_by_side
from sim.registry import problem_family


def _row(solver: str, objective: float, bound: float | None) -> dict:
    return {"solver": solver, "status": "FEASIBLE", "objective": objective, "bound": bound}


def test_minimisation_gap_uses_the_largest_lower_bound() -> None:
    rows = [_row("a", 10, 2), _row("b", 12, 8)]
    label, key = side_by_side(rows, problem_family("kresource_epochs"))
    assert label == "gap to best bound"
    assert rows[0][key] == (10 - 8) / 8  # 25%, not (10 - 2) / 2


def test_maximisation_gap_uses_the_smallest_upper_bound() -> None:
    family = next(f for f in map(problem_family, ("kresource_selection", "grouping",
                                                  "slot_assignment")) if f.sense == "max")
    rows = [_row("a", 10, 20), _row("b", 9, 12)]
    _, key = side_by_side(rows, family)
    assert rows[0][key] == (12 - 10) / 12


def test_solve_with_several_solvers_reads_the_file_once(monkeypatch, capsys) -> None:
    """``solve FILE --solvers A,B`` solves what it read and printed the family of: one
    read of the file, not one for the family and another for the solvers."""
    from instances import files
    from sim.cli import main
    from tests.sweep.test_bench_inputs import FIG1  # a bundled K-resource problem

    reads = []
    real = files.read_bytes

    def counted(path, *args, **kwargs):
        reads.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files, "read_bytes", counted)
    assert main(["solve", str(FIG1), "--solvers", "fcfs,fcfs-ff"]) == 0
    assert "kresource_epochs in" in capsys.readouterr().out
    assert reads.count(str(FIG1)) == 1, reads
