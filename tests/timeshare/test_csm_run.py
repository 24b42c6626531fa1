"""CSM workload, calibration, metrics and checked runs of every policy."""

from __future__ import annotations

import dataclasses
import math

import pytest

from heuristics.coscheduling import POLICY_NAMES, by_name
from sim.timeshare.check import check
from sim.timeshare.csm import map_uniform_memory, run_point
from sim.timeshare.metrics import correlation, mean_ci, mean_pg_fault, slowdown
from sim.timeshare.workload import (
    CSMConfig,
    calibrate_mit,
    expected_tasks_per_node,
    generate,
    load_readings,
)


def small_cfg(**kw):
    base = dict(n_nodes=4, n_jobs=24, mem_pages=4096, mest=1024, tc_scale=0.002,
                mem_scale=0.05, small_sizes=(1, 2), large_sizes=(4,), mfreq_ms=50.0)
    base.update(kw)
    return CSMConfig(**base)


@pytest.mark.parametrize("policy", POLICY_NAMES)
@pytest.mark.parametrize("load", [0.7, 1.5])
def test_every_policy_run_passes_the_checker(policy, load):
    cfg = small_cfg(mem_load=load)
    r = run_point(cfg, by_name(policy, mnod=3 if load > 1 else 2), seed=3, log=True)
    counts = check(r.cluster.log.records)
    assert counts["complete"] == 1 and counts["messages"] > 0 and counts["faults"] > 0
    assert all(t["finish"] is not None for t in r.tasks)


def test_same_seed_same_log_and_metrics():
    cfg = small_cfg()
    a = run_point(cfg, by_name("csm"), seed=5, log=True)
    b = run_point(cfg, by_name("csm"), seed=5, log=True)
    assert a.cluster.log.records == b.cluster.log.records
    assert a.metrics == b.metrics


def test_calibration_matches_the_eq5_reading():
    # mix b at 0.7: local and small (sizes 1, 2, 4: mean 7/3 tasks) with the same mean
    # tc, so tasks per node = 0.7 M / (task-weighted mean vir_mem); local mean
    # (1 + mest) / 2, small 1.5 mest
    cfg = CSMConfig(mem_load=0.7, pdt=0.5, class_mix="b")
    w_local, w_small = 0.5, 0.5 * 7 / 3
    mean_vir = (w_local * 8193 / 2 + w_small * 1.5 * 8192) / (w_local + w_small)
    assert expected_tasks_per_node(cfg) == pytest.approx(0.7 * 32768 / mean_vir, rel=1e-9)
    # the generated stream has the calibrated mean inter-arrival time
    arr = generate(cfg, seed=1)
    mit = calibrate_mit(cfg)
    emp = arr[-1].time_us / len(arr) / 1e6
    assert emp == pytest.approx(mit, rel=0.1)


def test_load_readings_closed_forms():
    m = 8192
    local, small, large = (1 + m) / 2, 1.5 * m, 3.0 * m
    b = load_readings(CSMConfig(mem_load=0.7, pdt=0.5, class_mix="b"))
    # the demand reading is eq. 5's count at the eq. 5 mit
    assert b["demand"] == pytest.approx(
        expected_tasks_per_node(CSMConfig(mem_load=0.7, pdt=0.5, class_mix="b")))
    # mix b, one vir_mem per job: 0.7 M / (local / 2 + small / 2)
    assert b["job"] == pytest.approx(0.7 * 32768 / (0.5 * local + 0.5 * small))
    assert b["job-one-stream"] == b["job"]
    a = load_readings(CSMConfig(mem_load=1.0, pdt=0.5, class_mix="a"))
    # mix a: 32 local tasks per distributed job; sizes 7/3 (small) and 56/3 (large)
    n_l, n_s, n_b = 32.0, 0.5 * 7 / 3, 0.5 * 56 / 3
    assert a["task"] == pytest.approx(
        32768 * (n_l + n_s + n_b) / (n_l * local + n_s * small + n_b * large))
    # tc weights: local 300 s, small 300 s, large 3600 s per task
    w_l, w_s, w_b = n_l * 300, n_s * 300, n_b * 3600
    assert a["demand"] == pytest.approx(
        32768 * (w_l + w_s + w_b) / (w_l * local + w_s * small + w_b * large))
    assert a["job-one-stream"] == pytest.approx(
        32768 / (0.5 * local + 0.25 * small + 0.25 * large))
    # the memory-heavy large tasks make mix a hold fewer tasks per node at load 1.0
    # than mix b at 0.7 under the spec's reading
    assert a["demand"] < b["demand"]


def test_generator_respects_the_class_ranges():
    cfg = CSMConfig(pdt=0.5, n_jobs=400)
    m = cfg.mest
    for a in generate(cfg, seed=2):
        lo, hi = {"local": (1, m), "small": (m, 2 * m), "large": (2 * m, 4 * m)}[a.kind]
        assert all(lo <= v <= hi for v in a.vir_mem)
        assert len(a.tc_us) == len(a.vir_mem) == (1 if a.kind == "local" else len(a.tc_us))
        assert len(a.vir_mem) in {"local": (1,), "small": (1, 2, 4),
                                  "large": (8, 16, 32)}[a.kind]


def test_uniform_memory_mapping_largest_task_to_least_loaded():
    from sim.timeshare import Cluster, Policy
    cl = Cluster(4, Policy(), mem_pages=100)
    for k, d in enumerate((30, 10, 20, 10)):
        cl.nodes[k].mem_demand = d
    # least loaded: node 1 (10), node 3 (10), node 2 (20)
    assert map_uniform_memory(cl, [5, 9, 7]) == [2, 1, 3]


def _rec(tid, node, job, kind, arrival, finish, tc, faults=0):
    return dict(tid=tid, node=node, job=job, kind=kind, arrival=arrival, finish=finish,
                tc=tc, faults=faults)


def test_metrics_by_hand():
    tasks = [_rec(0, 0, 1, "small", 0, 30, 10, 2), _rec(1, 1, 1, "small", 0, 40, 10, 4),
             _rec(2, 0, None, "local", 5, 25, 10, 1)]
    # eq. 8: node 0 (2 + 1) / 2 = 1.5, node 1 4 / 1 = 4 -> 2.75
    assert mean_pg_fault(tasks, 2) == pytest.approx(2.75)
    # eq. 9: 100 - |40 - 30| / 10 * 100 = 0
    assert correlation(tasks) == pytest.approx(0.0)
    # two more jobs for the readings of eq. 9: job 2 (tc 100, tr 50 and 60), job 3
    # (tc 10, both tr 20)
    more = tasks + [_rec(3, 0, 2, "large", 0, 50, 100), _rec(4, 1, 2, "large", 0, 60, 100),
                    _rec(5, 0, 3, "small", 0, 20, 10), _rec(6, 1, 3, "small", 0, 20, 10)]
    # printed formula: 100 - 100 (10/10 + 10/100 + 0/10) / 3
    assert correlation(more) == pytest.approx(100 - 100 * 1.1 / 3)
    # ratio of sums: 100 - 100 (10 + 10 + 0) / (10 + 100 + 10)
    assert correlation(more, "sum") == pytest.approx(100 - 100 * 20 / 120)
    # per job over the slowest response: 100 - 100 (10/40 + 10/60 + 0/20) / 3
    assert correlation(more, "tr") == pytest.approx(100 - 100 * (0.25 + 1 / 6) / 3)
    with pytest.raises(ValueError, match="reading"):
        correlation(more, "mean")
    # eq. 10: small job tr 40 / tc 10; local 20 / 10
    assert slowdown(tasks, "small") == pytest.approx(4.0)
    assert slowdown(tasks, "local") == pytest.approx(2.0)
    assert math.isnan(slowdown(tasks, "large"))
    m, h = mean_ci([1.0, 2.0, 3.0])
    assert m == 2.0 and h == pytest.approx(4.303 * 1.0 / math.sqrt(3), rel=1e-4)


@pytest.mark.parametrize("kw,field", [
    (dict(mem_pages=0), "mem_pages"), (dict(mem_pages=-5), "mem_pages"),
    (dict(large_sizes=(64,)), "large_sizes"), (dict(mest=10_000), "mest"),
    (dict(pdt=1.5), "pdt"), (dict(mem_load=0), "mem_load"), (dict(class_mix="d"), "class_mix"),
])
def test_bad_config_names_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        CSMConfig(**kw)


def test_static_diagnosis_policy_counts_without_changing_the_run():
    from sim.experiments.gine.static import _Counting, simulate

    cfg = small_cfg(mem_load=1.5)
    plain = run_point(cfg, by_name("csm"), seed=4, log=True)
    counting = _Counting("csm")
    counted = run_point(cfg, counting, seed=4, log=True)
    assert counted.cluster.log.records == plain.cluster.log.records
    # every insertion of a distributed task into a non-empty queue took one path
    assert sum(counting.paths.values()) > 0
    assert set(counting.paths) <= {"pred", "line5", "csm"}
    # the line-5 ablation changes the static run and routes no insertion through line 5
    a = simulate("csm", 0, 0.01, n_nodes=2)
    b = simulate("csm", 0, 0.01, n_nodes=2, line5=False)
    assert a["paths"].get("line5", 0) > 0 and b["paths"].get("line5", 0) == 0
    assert set(a["finish"]) == set(b["finish"]) == {"J1", "J2", "L1", "L2"}


def test_one_mixed_stream_class_mix_c():
    from sim.timeshare.workload import generate

    cfg = CSMConfig(mem_load=1.0, pdt=0.25, class_mix="c", n_jobs=2000, count_locals=False,
                    mit_s=1.0)
    arr = generate(cfg, 3)
    kinds = [a.kind for a in arr]
    dist = [k for k in kinds if k != "local"]
    assert len(dist) == 2000  # count_locals=False: distributed jobs counted only
    assert kinds.count("local") / len(kinds) == pytest.approx(0.5, abs=0.03)
    assert dist.count("large") / len(dist) == pytest.approx(0.25, abs=0.03)
    # its job reading is the one-stream reading of the spec's mix a
    c = load_readings(dataclasses.replace(cfg, mit_s=None))
    a = load_readings(CSMConfig(mem_load=1.0, pdt=0.25, class_mix="a"))
    assert c["job"] == c["job-one-stream"] == pytest.approx(a["job-one-stream"])


def test_class_mix_t_is_one_stream_with_a_third_local():
    from sim.timeshare.workload import class_rates

    rates = class_rates(CSMConfig(class_mix="t", pdt=0.5))
    assert rates == pytest.approx({"local": 1 / 3, "small": 1 / 3, "large": 1 / 3})
    rates = class_rates(CSMConfig(class_mix="t", pdt=0.25))
    assert rates == pytest.approx({"local": 1 / 3, "small": 0.5, "large": 1 / 6})
    arr = generate(CSMConfig(class_mix="t", pdt=0.5, n_jobs=3000), seed=2)
    share = {k: sum(a.kind == k for a in arr) / len(arr) for k in ("local", "small", "large")}
    assert share == pytest.approx({"local": 1 / 3, "small": 1 / 3, "large": 1 / 3}, abs=0.03)
    with pytest.raises(ValueError, match="class_mix"):
        CSMConfig(class_mix="d")


def test_occupancy_counts_chosen_kinds_over_the_whole_horizon():
    from sim.timeshare.metrics import occupancy

    tasks = [{"kind": "local", "arrival": 0, "finish": 10, "vir_mem": 4},
             {"kind": "large", "arrival": 5, "finish": 20, "vir_mem": 8},
             {"kind": "small", "arrival": 10, "finish": 12, "vir_mem": 2}]
    # horizon = last arrival (10) of any task; 2 nodes, M = 4 pages
    every = occupancy(tasks, 2, 4)
    assert every["tasks_per_node"] == pytest.approx((10 + 5 + 0) / 20)
    dist = occupancy(tasks, 2, 4, kinds=("small", "large"))
    assert dist["tasks_per_node"] == pytest.approx(5 / 20)
    assert dist["mem_load_measured"] == pytest.approx(5 * 8 / (20 * 4))


def test_calibrate_measured_matches_another_metric(monkeypatch):
    import sim.timeshare.csm as csm

    class Fake:
        def __init__(self, mit):
            self.metrics = {"mem_load_measured": 1.0}
            self.value = 3.0 / mit  # falls as mit grows

    monkeypatch.setattr(csm, "run_point", lambda c, pol, s, engine: Fake(c.mit_s))
    cfg = CSMConfig(mem_load=1.0, pdt=0.5)
    want = calibrate_mit(cfg) / 3  # two halvings from eq. 5's mit bracket it
    mit, meas, trace = csm.calibrate_measured(cfg, lambda: None, seeds=(1,), iters=12,
                                              tol=0.01, metric=lambda r: r.value,
                                              target=3.0 / want)
    assert meas == pytest.approx(3.0 / want, rel=0.01)
    assert mit == pytest.approx(want, rel=0.01)
    assert all(v == pytest.approx(3.0 / m) for m, v in trace)
