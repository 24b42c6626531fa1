"""K-resource workloads: reproducible generation, the .kswf format, calibration and its
errors, OPT-EASY in the simulator with the independent validator."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from heuristics.backfill import EASY
from instances.kresource import (
    KResourceSpec,
    generate,
    read_kswf,
    write_kswf,
)
from models.kresource.policy import OptEASY
from sim.batch.calibrate import calibrate, queue_average
from sim.batch.machine import simulate
from sim.batch.validate import validate
from sim.cli import main
from sim.problems import objective


@pytest.mark.parametrize("K, dist, scaling", [(1, "uniform", "G-b"), (2, "exponential", "G-b"),
                                               (5, "uniform", "G-a"), (8, "exponential", "G-a")])
def test_generation_is_reproducible_and_round_trips_byte_for_byte(tmp_path, K, dist, scaling):
    spec = KResourceSpec(K=K, dist=dist, scaling=scaling, jobs=300, seed=4, rate=0.01)
    a, b = tmp_path / "a.kswf", tmp_path / "b.kswf"
    write_kswf(a, generate(spec))
    write_kswf(b, generate(spec))
    assert a.read_bytes() == b.read_bytes()
    w = read_kswf(a)
    assert w.K == K and w.jobs == generate(spec).jobs
    write_kswf(b, w)
    assert a.read_bytes() == b.read_bytes()
    cap = w.capacity[0]
    d = np.array([j.demand for j in w.jobs])
    assert (d >= 1).all() and (d <= cap).all()
    if scaling == "G-b":  # the largest requirement is the Feitelson size (in units)
        assert (d.max(axis=1) % spec.resolution == 0).all()


def test_rate_changes_only_arrivals():
    s = KResourceSpec(K=3, jobs=200, seed=2, rate=0.01)
    a, b = generate(s), generate(replace(s, rate=0.02))
    assert [(j.runtime, j.demand) for j in a.jobs] == [(j.runtime, j.demand) for j in b.jobs]
    assert a.jobs[-1].submit > b.jobs[-1].submit


def test_calibration_reaches_the_target_and_reports_what_it_did():
    spec = KResourceSpec(K=2, jobs=1500, seed=3)
    c = calibrate(spec, 32)
    assert abs(c.queue - 32) <= 0.05 * 32 and c.iterations == len(c.history) >= 2
    w = generate(replace(spec, rate=c.rate))
    s = simulate(w, EASY())
    submit = np.array([j.submit for j in w.jobs])
    assert queue_average(s.start, submit) == pytest.approx(c.queue)


def test_unreachable_calibration_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError, match="unreachable"):
        calibrate(KResourceSpec(K=2, jobs=100, seed=1), 1000)
    assert main(["generate", "kresource", "--K", "2", "--queue", "1000", "--jobs", "100",
                 "--out", str(tmp_path / "w.kswf")]) == 2
    assert "unreachable" in capsys.readouterr().err


@pytest.mark.parametrize("K", [0, 9])
def test_bad_K(K, tmp_path, capsys):
    with pytest.raises(ValueError, match="field 'K'"):
        KResourceSpec(K=K)
    assert main(["generate", "kresource", "--K", str(K), "--rate", "0.1", "--jobs", "10",
                 "--out", str(tmp_path / "w.kswf")]) == 2


@pytest.mark.parametrize("edit, needle", [
    (lambda ls: ls[:6] + [ls[6] + " 5"] + ls[7:], "19 fields, expected 18"),
    (lambda ls: ls[:6] + [" ".join(ls[6].split()[:7] + ["99999"] + ls[6].split()[8:])]
     + ls[7:], "exceeds the capacity"),
    (lambda ls: ls[:6] + [" ".join(ls[6].split()[:9] + ["-3"] + ls[6].split()[10:])]
     + ls[7:], "must be >= 0"),
    (lambda ls: ls[:6] + [" ".join(ls[6].split()[:9] + ["x"] + ls[6].split()[10:])]
     + ls[7:], "field 10 (requested memory) must be an integer, got 'x'"),
    (lambda ls: [x.replace("Capacities: 1024 1024", "Capacities: 1024 0") for x in ls],
     "capacity must be >= 1"),
])
def test_bad_kswf_names_file_and_line(tmp_path, capsys, edit, needle):
    f = tmp_path / "w.kswf"
    write_kswf(f, generate(KResourceSpec(K=2, jobs=5, seed=1)))
    lines = [x for x in f.read_text().splitlines() if not x.startswith("; KResourceSpec")]
    f.write_text("\n".join(edit(lines)) + "\n")
    with pytest.raises(ValueError) as exc:
        read_kswf(f)
    assert needle in str(exc.value) and str(f) in str(exc.value)
    assert main(["simulate", str(f), "--policy", "easy", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_opt_easy_is_valid_and_starts_at_least_easys_work_per_decision():
    spec = KResourceSpec(K=4, jobs=400, seed=5, rate=0.03)
    w = generate(spec)
    pol = OptEASY(record=True)
    s = simulate(w, pol)
    validate(s)
    assert pol.stats["solver_calls"] >= 1 and pol.stats["not_proved"] == 0
    from heuristics.kresource import select_greedy
    from models.kresource.cpsat import solve_selection
    for p in pol.decisions[:20]:
        opt = solve_selection(p).objective
        for sel in ("ff", "bl", "bb"):
            assert objective(p, select_greedy(p, sel)) <= opt


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(K=st.integers(1, 4), n=st.integers(1, 25), seed=st.integers(0, 10_000),
       rate=st.floats(0.005, 0.2))
def test_validator_accepts_every_opt_easy_schedule(K, n, seed, rate):
    w = generate(KResourceSpec(K=K, jobs=n, seed=seed, rate=rate, P=8, resolution=2,
                               m_short=20.0, m_long=200.0))
    s = simulate(w, OptEASY(time_limit=5.0))
    validate(s)  # capacity in every resource, run lengths, EASY's head reservations


def test_cli_generate_then_simulate_with_bb(tmp_path, capsys):
    import json

    f = tmp_path / "w.kswf"
    assert main(["generate", "kresource", "--K", "3", "--dist", "exponential", "--rate",
                 "0.05", "--jobs", "60", "--seed", "2", "--out", str(f)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["jobs"] == 60 and info["K"] == 3 and read_kswf(f).K == 3
    assert main(["simulate", str(f), "--policy", "easy", "--select", "bb", "--json",
                 "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs"] == 60 and out["validated"] is True


def test_simulate_out_writes_the_k_resource_schedule_read_back_and_validated(tmp_path, capsys):
    src, out = tmp_path / "w.kswf", tmp_path / "s.kswf"
    spec = KResourceSpec(K=3, jobs=300, seed=6, rate=0.02)
    write_kswf(src, generate(spec))
    assert main(["simulate", str(src), "--policy", "easy", "--out", str(out), "--quiet",
                 "--json"]) == 0
    row = __import__("json").loads(capsys.readouterr().out)
    back = read_kswf(out)  # the reader takes the schedule file back
    assert back.jobs == read_kswf(src).jobs
    rows = [ln.split() for ln in out.read_text().splitlines() if not ln.startswith(";")]
    wait = np.array([int(r[2]) for r in rows])
    status = [int(r[10]) for r in rows]
    assert (wait >= 0).all() and status == [1] * len(rows)
    assert wait.mean() == pytest.approx(row["avg_wait"])
    submit = np.array([j.submit for j in back.jobs])
    start = submit + wait
    end = start + np.array([int(r[3]) for r in rows])
    from sim.batch.machine import Schedule
    validate(Schedule(back, "easy", start, end, np.zeros(len(rows), bool)),
             check_promises=False)
    ref = simulate(read_kswf(src), EASY())
    assert (start == ref.start).all() and (end == ref.end).all()


def test_simulate_out_kswf_refuses_by_month_and_leaves_no_file(tmp_path, capsys):
    src, out = tmp_path / "w.kswf", tmp_path / "s.kswf"
    write_kswf(src, generate(KResourceSpec(K=2, jobs=20, seed=1, rate=0.01)))
    assert main(["simulate", str(src), "--policy", "easy", "--by-month", "--out", str(out),
                 "--quiet"]) == 2
    assert "by_month" in capsys.readouterr().err and not out.exists()


SJOBS, SSEED, SQ = 3000, 4, 4  # a spec whose FF-EASY queue can be made stationary at SQ


def test_stationary_calibration_passes_the_criterion_or_refuses(tmp_path, capsys):
    from sim.batch.calibrate import is_stationary, queue_halves

    spec = KResourceSpec(K=2, jobs=SJOBS, seed=SSEED)
    c = calibrate(spec, SQ, stationarity=0.15)
    assert c.stationary and c.stationarity == 0.15
    w = generate(replace(spec, rate=c.rate))
    s = simulate(w, EASY())
    submit = np.array([j.submit for j in w.jobs])
    q1, q2 = queue_halves(s.start, submit)
    assert (q1, q2) == pytest.approx((c.first_half, c.second_half))
    assert is_stationary(q1, q2, SQ, 0.15) and abs(c.queue / SQ - 1) <= 0.05
    f = tmp_path / "w.kswf"
    assert main(["generate", "kresource", "--K", "2", "--jobs", str(SJOBS), "--seed",
                 str(SSEED), "--queue", str(SQ), "--out", str(f)]) == 0
    info = __import__("json").loads(capsys.readouterr().out)
    assert info["stationary"] and info["rate"] == pytest.approx(c.rate)
    # a target the jobs cannot hold stationary: refused by name, nothing written
    # seed 1 at the same size: the queue of every rate tried drifts (halves 1.4 / 6.2)
    g = tmp_path / "x.kswf"
    assert main(["generate", "kresource", "--K", "2", "--jobs", str(SJOBS), "--seed", "1",
                 "--queue", str(SQ), "--out", str(g)]) == 2
    err = capsys.readouterr().err
    assert "no stationary queue of 4 jobs" in err and err.count("\n") == 1 and not g.exists()
    assert main(["generate", "kresource", "--K", "2", "--jobs", str(SJOBS), "--seed", "1",
                 "--queue", str(SQ), "--stationarity", "0", "--out", str(g)]) == 0
    assert not __import__("json").loads(capsys.readouterr().out)["stationary"]
