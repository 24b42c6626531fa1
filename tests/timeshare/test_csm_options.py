"""Options of the time-sharing core and the CSM workload: ``fault_service``,
``refs_per_dispatch`` and ``msg_model``. Defaults give the logs of the code before the
options existed; each option changes a small scenario derived by hand; the message
frequency is bounded so that no configuration implies an unbounded number of events."""

from __future__ import annotations

import hashlib

import pytest

from heuristics.coscheduling import POLICY_NAMES, by_name
from sim.timeshare import Cluster, Compute, Policy
from sim.timeshare.check import CheckError, check
from sim.timeshare.csm import MSG_MODELS, message_program, run_point
from sim.timeshare.workload import CSMConfig

MS = 1000

#: SHA-256 (first 16 hex digits) of ``repr(log.records)`` of :func:`small_cfg` at seed 3,
#: MNOD 3, computed at commit d63e20e, before these options were added.
GOLDEN_LOG_SHA = {"rr": "8530bfa03c67f270", "pred": "1f93e2d5e580ded1",
                  "dyn": "ac58eda4bb32a367", "dyn-top": "60e8943d7bddb324",
                  "csm": "5edec8db280a428b", "csm-top": "1f016b8bb7e22d3a"}


def small_cfg(**kw):
    base = dict(n_nodes=4, n_jobs=24, mem_pages=4096, mest=1024, tc_scale=0.002,
                mem_scale=0.05, small_sizes=(1, 2), large_sizes=(4,), mfreq_ms=50.0,
                mem_load=1.5)
    base.update(kw)
    return CSMConfig(**base)


def log_sha(records):
    return hashlib.sha256(repr(records).encode()).hexdigest()[:16]


@pytest.mark.parametrize("policy", POLICY_NAMES)
def test_defaults_give_the_logs_of_before_the_options(policy):
    r = run_point(small_cfg(), by_name(policy, mnod=3), seed=3, log=True)
    assert log_sha(r.cluster.log.records) == GOLDEN_LOG_SHA[policy]
    explicit = small_cfg(msg_model="pairwise", fault_service="parallel", refs_per_dispatch=1)
    r2 = run_point(explicit, by_name(policy, mnod=3), seed=3, log=True)
    assert r2.cluster.log.records == r.cluster.log.records


def test_options_recorded_only_when_not_default():
    d = small_cfg().to_dict()
    assert not {"msg_model", "fault_service", "refs_per_dispatch"} & set(d)
    d = small_cfg(msg_model="probe", refs_per_dispatch=4).to_dict()
    assert d["msg_model"] == "probe" and d["refs_per_dispatch"] == 4
    assert "fault_service" not in d
    cl = Cluster(1, Policy(), mem_pages=4)
    assert set(cl.log.records[0][4]) == {"n_nodes", "mem_pages", "latency_us",
                                         "fault_latency_us"}
    cl = Cluster(1, Policy(), mem_pages=4, fault_service="fifo", refs_per_dispatch=2)
    assert cl.log.records[0][4]["fault_service"] == "fifo"
    assert cl.log.records[0][4]["refs_per_dispatch"] == 2


@pytest.mark.parametrize("kw, field", [({"fault_service": "disk"}, "fault_service"),
                                       ({"refs_per_dispatch": 0}, "refs_per_dispatch"),
                                       ({"msg_model": "gossip"}, "msg_model")])
def test_bad_option_is_a_one_line_error_naming_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        small_cfg(**kw)


def burst(us):
    def prog(ctx):
        yield Compute(us)
    return prog


def faulting_node(fault_service):
    """1 node, M = 4 pages, quantum 10 ms, fault 20 ms; A, B, C (1 page each, nothing
    resident, 1 ms of work) arrive at 0, D at 100 ms."""
    cl = Cluster(1, Policy(quantum_us=10 * MS), mem_pages=4, fault_latency_us=20 * MS,
                 fault_service=fault_service)
    for _ in range(3):
        cl.spawn(0, burst(1 * MS), vir_mem=1, work=1 * MS)
    cl.at(100 * MS, lambda c, t: c.spawn(0, burst(1 * MS), vir_mem=1, work=1 * MS))
    return cl.run()


def test_fifo_fault_server_queues_the_faults_of_one_node():
    # Parallel: A, B, C fault at 0 and all wake at 20 ms; they run 20-21, 21-22, 22-23.
    # FIFO: one server, faults served 0-20, 20-40, 40-60 ms; each runs 1 ms after its
    # wake. D faults at 100 ms on an idle server: served 100-120 under both.
    par, fifo = faulting_node("parallel"), faulting_node("fifo")
    wakes = [r[0] for r in par.log.records if r[1] == "wake"]
    assert wakes == [20 * MS] * 3 + [120 * MS]
    assert [t.finish for t in par.tasks] == [21 * MS, 22 * MS, 23 * MS, 121 * MS]
    assert [r[0] for r in fifo.log.records if r[1] == "wake"] == \
        [20 * MS, 40 * MS, 60 * MS, 120 * MS]
    assert [t.finish for t in fifo.tasks] == [21 * MS, 41 * MS, 61 * MS, 121 * MS]
    assert check(par.log.records)["faults"] == check(fifo.log.records)["faults"] == 4


def test_checker_replays_the_fault_service_named_in_the_config():
    for run, other in ((faulting_node("fifo"), "parallel"),
                       (faulting_node("parallel"), "fifo")):
        recs = list(run.log.records)
        cfg = dict(recs[0][4], fault_service=other)
        recs[0] = recs[0][:4] + (cfg, None)
        with pytest.raises(CheckError, match="fault served"):
            check(recs)


def one_page_task(refs):
    """One task of 1 page (nothing resident) needing 25 ms, quantum 10 ms, fault 20 ms."""
    cl = Cluster(1, Policy(quantum_us=10 * MS), mem_pages=4, fault_latency_us=20 * MS,
                 refs_per_dispatch=refs)
    cl.spawn(0, burst(25 * MS), vir_mem=1, work=25 * MS)
    return cl.run()


def test_refs_per_dispatch_golden():
    # Dispatch at 0: the first reference misses (fault, wake at 20 ms). Then dispatches
    # at 20, 30 and 40 ms (quanta 20-30, 30-40, 40-45) each make k hits on the one page.
    for k in (1, 3):
        cl = one_page_task(k)
        refs = [(r[0], r[5]) for r in cl.log.records if r[1] == "ref"]
        assert refs == [(0, 0)] + [(t * MS, 1) for t in (20, 30, 40) for _ in range(k)]
        assert cl.tasks[0].finish == 45 * MS and cl.tasks[0].faults == 1
        check(cl.log.records)


def test_refs_per_dispatch_stop_at_the_first_miss():
    r = run_point(small_cfg(refs_per_dispatch=4), by_name("csm", mnod=3), seed=3, log=True)
    assert check(r.cluster.log.records)["complete"] == 1
    per_dispatch: list[list[int]] = []
    for rec in r.cluster.log.records:
        if rec[1] == "dispatch":
            per_dispatch.append([])
        elif rec[1] == "ref":
            per_dispatch[-1].append(rec[5])
    with_refs = [d for d in per_dispatch if d]
    assert all(d == [1, 1, 1, 1] or (d[-1] == 0 and all(d[:-1])) for d in with_refs)
    assert any(d[-1] == 0 and len(d) > 1 for d in with_refs)  # a miss after hits


def job_sends(model, n=4, rounds=2, bursts=None):
    cl = Cluster(n, Policy(quantum_us=10 * MS), latency_us=100)
    cl.spawn_job(0, range(n), message_program(model, 2 * MS, rounds, bursts=bursts),
                 work=2 * MS)
    cl.run()
    assert check(cl.log.records)["complete"] == 1
    return cl, [(cl.tasks[r[3]].rank, cl.tasks[r[5]].rank) for r in cl.log.records
                if r[1] == "send"]


def test_message_models_send_to_their_correspondents():
    xor = {(0, 1), (1, 0), (2, 3), (3, 2), (0, 2), (2, 0), (1, 3), (3, 1)}
    want = {"pairwise": (xor, 8), "async": (xor, 8), "probe": (xor, 8),
            "ring": ({(0, 1), (1, 2), (2, 3), (3, 0)}, 8),
            "exchange": ({(r, (r + d) % 4) for r in range(4) for d in (1, 3)}, 16)}
    assert set(want) == set(MSG_MODELS)
    for model, (pairs, count) in want.items():
        _, sends = job_sends(model)
        assert set(sends) == pairs and len(sends) == count, model


def two_rank_job(model):
    """2 nodes, latency 0.1 ms, quantum 10 ms; a local task of 5 ms on node 1 (first
    in its RQ), then a job of two ranks with two bursts of 1 ms each."""
    cl = Cluster(2, Policy(quantum_us=10 * MS), latency_us=100)
    cl.spawn(1, burst(5 * MS), work=5 * MS)
    cl.spawn_job(0, [0, 1], message_program(model, 2 * MS, 2, bursts=[MS, MS]),
                 work=2 * MS)
    cl.run()
    check(cl.log.records)
    sends = [r[0] for r in cl.log.records if r[1] == "send" and r[3] == 1]
    return [cl.tasks[1].finish, cl.tasks[2].finish], sends


def test_blocking_and_probing_receives_golden():
    # Rank 0 (node 0) runs 0-1 ms; rank 1 waits for the local task and runs 5-6 ms.
    # pairwise: rank 0 blocks at 1 ms until rank 1's message (sent 6, delivered 6.1 ms),
    #   runs its 2nd burst 6.1-7.1 and ends at 7.1 (rank 1's 2nd message, sent at 7,
    #   arrived at 7.1); rank 1 ends when rank 0's 2nd message arrives, 7.2 ms.
    # probe / async: rank 0 does not wait after burst 1 (probe: RMQ empty; async: no
    #   round -1 message) and sends both messages at 1 and 2 ms; rank 1 finds them
    #   in its RMQ, never blocks and ends at 7 ms; rank 0 waits at 2 ms and ends when
    #   rank 1's last message arrives, 7.1 ms.
    assert two_rank_job("pairwise") == ([7100, 7200], [1000, 7100])
    assert two_rank_job("probe") == ([7100, 7000], [1000, 2000])
    assert two_rank_job("async") == ([7100, 7000], [1000, 2000])


@pytest.mark.parametrize("model", list(MSG_MODELS))
def test_every_message_model_passes_the_checker_with_fifo_faults(model):
    cfg = small_cfg(msg_model=model, fault_service="fifo", refs_per_dispatch=2)
    r = run_point(cfg, by_name("csm", mnod=3), seed=3, log=True)
    counts = check(r.cluster.log.records)
    assert counts["complete"] == 1 and counts["messages"] > 0 and counts["faults"] > 0


def test_cli_takes_the_options_and_rejects_bad_ones(capsys):
    import json

    from sim.cli import main

    assert main(["csm", "--nodes", "4", "--jobs", "20", "--policies", "csm", "--check",
                 "--json", "--msg-model", "probe", "--fault-service", "fifo",
                 "--refs-per-dispatch", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["msg_model"] == "probe"
    assert out["config"]["fault_service"] == "fifo"
    assert out["config"]["refs_per_dispatch"] == 2
    assert out["rows"][0]["checked"]["complete"] == 1
    assert main(["csm", "--jobs", "5", "--msg-model", "gossip"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "msg_model" in err and "Traceback" not in err


@pytest.mark.parametrize(("kw", "match"), [
    ({"mfreq_ms": 1e-9}, "mfreq_ms must be >= 0.01 ms"),
    ({"n_jobs": 1000, "tc_scale": 1.0, "mfreq_ms": 0.01},
     r"mfreq_ms gives about 3.6e\+11 message rounds"),
])
def test_message_frequency_that_implies_unbounded_work_is_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        small_cfg(**kw)


def test_the_papers_finest_message_frequency_is_accepted():
    cfg = CSMConfig(n_jobs=1000, mfreq_ms=10.0)  # the paper's sizes, 3.6e8 rounds
    assert cfg.mfreq_ms == 10.0
