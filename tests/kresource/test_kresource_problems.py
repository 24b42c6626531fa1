"""K-resource problems (Leinberger, Karypis & Kumar 1999): Figure 1, BB scores,
differential CP-SAT / CBC / brute force, heuristics never beat a proved optimum,
honest statuses under tiny limits, bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from heuristics.kresource import EPOCH_RULES, pack_epochs, select_greedy
from models.kresource import brute, cpsat, ilp, portfolio
from sim.cli import main
from sim.problems import objective
from sim.problems.kresource import (
    EpochProblem,
    ResponseProblem,
    SelectionProblem,
    from_dict,
    load,
)
from sim.result import Status

ROOT = Path(__file__).resolve().parents[2]
FIG1 = ROOT / "instances" / "data" / "kresource" / "figure1.json"


@pytest.fixture(scope="module")
def fig1() -> EpochProblem:
    return load(FIG1)


def _pm(p: EpochProblem, epochs) -> list[str]:
    return [f"{u[0]:02d}/{u[1]:02d}" for u in (p.usage(e) for e in epochs)]


def test_figure1_epoch_counts_and_the_papers_table(fig1):
    fcfs = pack_epochs(fig1, "fcfs")
    ff = pack_epochs(fig1, "fcfs-ff")
    assert fcfs == [[0, 1], [2], [3, 4], [5]]
    assert _pm(fig1, fcfs) == ["12/06", "07/16", "12/32", "01/10"]
    assert [sorted(e) for e in ff] == [[0, 1, 4, 5], [2], [3]]
    assert _pm(fig1, ff) == ["14/28", "07/16", "11/20"]
    for solve in (cpsat.solve_epochs, ilp.solve_epochs, brute.solve_epochs):
        r = solve(fig1)
        assert r.status is Status.OPTIMAL and r.objective == 2
        assert r.solution == [[0, 2, 4], [1, 3, 5]]
    assert cpsat.solve_epochs(fig1, greedy_bound=False).solution == [[0, 2, 4], [1, 3, 5]]
    assert brute.optimal_partitions(fig1, 2) == [[[0, 2, 4], [1, 3, 5]]]  # unique
    assert _pm(fig1, [[0, 2, 4], [1, 3, 5]]) == ["16/32", "16/32"]


def test_figure1_selection_variants_of_spec_1_6(fig1):
    assert len(pack_epochs(fig1, "fcfs-bb")) == 3
    assert len(pack_epochs(fig1, "fcfs-bl")) == 3
    assert pack_epochs(fig1, "unc-bl") == [[0, 2, 4], [1, 5, 3]]
    assert pack_epochs(fig1, "unc-bb", "none") == [[3, 5, 1], [2, 0, 4]]
    assert pack_epochs(fig1, "unc-bb", "mult") == [[3, 4], [2, 0, 5], [1]]


def test_bb_scores_at_the_first_backfill_decision_of_figure1():
    from heuristics.kresource import _Item, pick
    from heuristics.selection import BackfillBalanced

    bb = BackfillBalanced()
    cands = [_Item((1, 12)), _Item((1, 10))]
    s = bb.scores(cands, (4, 26), (16, 32))  # jobs 0 and 1 running: 12 CPUs, 6 GB
    assert s == pytest.approx([0.369318, 0.425595], abs=1e-6)
    assert pick("bb", (4, 26), (16, 32), [(1, 12), (1, 10)]) == 0
    assert bb.scores([_Item((1, 10))], (3, 14), (16, 32)) == pytest.approx([0.125])


def _rand_epochs(rng: random.Random, n: int, K: int) -> EpochProblem:
    cap = tuple(rng.randint(8, 20) for _ in range(K))
    return EpochProblem(cap, tuple(tuple(rng.randint(0 if k else 1, c) if rng.random() < 0.3
                                         else rng.randint(1, max(1, c // 3))
                                         for k, c in enumerate(cap)) for _ in range(n)))


def test_epochs_cpsat_ilp_brute_agree_and_no_heuristic_beats_them():
    rng = random.Random(3)
    for _ in range(12):
        p = _rand_epochs(rng, rng.randint(4, 9), rng.randint(1, 4))
        opt = brute.solve_epochs(p)
        assert opt.status is Status.OPTIMAL
        for r in (cpsat.solve_epochs(p, greedy_bound=False), ilp.solve_epochs(p)):
            assert r.status is Status.OPTIMAL and r.objective == opt.objective
        for rule in EPOCH_RULES:
            assert len(pack_epochs(p, rule)) >= opt.objective


def _rand_selection(rng: random.Random, n: int, K: int) -> SelectionProblem:
    cap = tuple([rng.randint(10, 30)] * K)
    free = tuple(rng.randint(0, c) for c in cap)
    extra = tuple(rng.randint(0, f) for f in free)
    dem = tuple(tuple(rng.randint(1, max(1, c // 3)) for c in cap) for _ in range(n))
    return SelectionProblem(cap, free, extra, dem, tuple(rng.random() < 0.5 for _ in range(n)))


def test_selection_cpsat_ilp_brute_agree_and_greedy_never_better():
    rng = random.Random(5)
    for _ in range(15):
        p = _rand_selection(rng, rng.randint(1, 10), rng.randint(1, 4))
        opt = brute.solve_selection(p)
        for r in (cpsat.solve_selection(p), ilp.solve_selection(p)):
            assert r.status is Status.OPTIMAL and r.objective == opt.objective
        for sel in ("ff", "bl", "bb"):
            assert objective(p, select_greedy(p, sel)) <= opt.objective


def _rand_response(rng: random.Random, n: int, K: int) -> ResponseProblem:
    cap = tuple(rng.randint(4, 8) for _ in range(K))
    return ResponseProblem(cap, tuple(rng.randint(0, 6) for _ in range(n)),
                           tuple(rng.randint(1, 4) for _ in range(n)),
                           tuple(tuple(rng.randint(1, c) for c in cap) for _ in range(n)),
                           tuple(rng.randint(1, 3) for _ in range(n)))


def test_response_cpsat_ilp_brute_agree():
    rng = random.Random(7)
    for _ in range(6):
        p = _rand_response(rng, rng.randint(2, 6), rng.randint(1, 3))
        opt = brute.solve_response(p)
        for r in (cpsat.solve_response(p), ilp.solve_response(p), portfolio.solve_response(p)):
            assert r.status is Status.OPTIMAL and r.objective == opt.objective
        from heuristics.kresource import solve_list
        assert solve_list(p).objective >= opt.objective


def test_never_optimal_after_a_tiny_time_limit_on_hard_instances():
    rng = random.Random(11)
    p = _rand_response(rng, 40, 3)
    p = ResponseProblem(p.capacity, p.release, tuple(d * 7 for d in p.duration), p.demands,
                        p.weights)
    r = cpsat.solve_response(p, time_limit=0.01)
    assert r.status is not Status.OPTIMAL
    assert r.bound is None or r.bound <= r.objective
    r = brute.solve_response(_rand_response(rng, 8, 2), time_limit=0.001)
    assert r.status is Status.FEASIBLE


@pytest.mark.parametrize("data, needle", [
    ({"capacity": [16, 32], "demands": [[17, 1]]}, "demands[0][0]' = 17 exceeds"),
    ({"capacity": [16, 32], "demands": [[1, 2, 3]]}, "demands[0]' must have 2 entries"),
    ({"capacity": [16, 32], "demands": [[1, -2]]}, "demands[0][1]' must be >= 0"),
    ({"capacity": [16, 32], "demands": [[1, "x"]]}, "demands[0][1]' must be an integer"),
    ({"capacity": [], "demands": [[1]]}, "capacity' must have at least 1"),
    ({"capacity": [16, 0], "demands": [[1, 0]]}, "capacity[1]' must be >= 1"),
])
def test_bad_problem_input_names_the_file_and_field(tmp_path, capsys, data, needle):
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({"problem": "kresource_epochs", **data}))
    with pytest.raises(ValueError, match=None) as exc:
        from_dict(json.loads(f.read_text()), str(f))
    assert needle in str(exc.value) and str(f) in str(exc.value)
    assert main(["solve", str(f), "--solver", "cpsat"]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_solve_figure1(capsys):
    assert main(["solve", str(FIG1), "--solver", "ilp", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OPTIMAL" and out["objective"] == 2
