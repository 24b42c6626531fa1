"""The compiled CSM engine (sim.timeshare.fast) against the Python engine.

The first test in a fresh clone compiles the numba kernel (about 45 s CPU, cached on
disk afterwards); every later run loads it from the cache.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

pytest.importorskip("numba")

from heuristics.coscheduling import POLICY_NAMES, by_name  # noqa: E402
from sim.timeshare.check import check  # noqa: E402
from sim.timeshare.csm import run_point  # noqa: E402
from sim.timeshare.fast import mt  # noqa: E402
from sim.timeshare.policy import Policy  # noqa: E402
from sim.timeshare.workload import CSMConfig, generate  # noqa: E402

pytestmark = [pytest.mark.compiled,
              pytest.mark.usefixtures("csm_kernels")]  # compiled once (tests/conftest.py)

# memory load 1.5 on 8 nodes: nodes run out of memory (CSM mode), jobs exchange
# messages, pages fault and are evicted; small enough for ~0.5 s per Python run
SMALL = CSMConfig(n_nodes=8, n_jobs=60, tc_scale=0.01, mem_scale=0.01, mem_load=1.5,
                  large_sizes=(8,))


def _same(cfg: CSMConfig, pol: str, seed: int, **opts) -> list:
    py = run_point(cfg, by_name(pol, **opts), seed, log=True)
    co = run_point(cfg, by_name(pol, **opts), seed, log=True, engine="compiled")
    assert co.cluster.log.records == py.cluster.log.records
    assert co.events == py.events
    assert co.tasks == py.tasks
    assert co.metrics == py.metrics
    return co.cluster.log.records


# the message, fault and reference options the compiled engine runs
# (sim.timeshare.fast.run.CONFIG_SUPPORTED),
# alone and combined, on the SMALL point: (options, policy, seed)
OPTION_CASES = [
    ({"refs_per_dispatch": 3}, "csm", 1),
    ({"refs_per_dispatch": 2}, "pred", 2),
    ({"fault_service": "fifo"}, "csm", 1),
    ({"fault_service": "fifo"}, "rr", 2),
    ({"fault_service": "fifo", "refs_per_dispatch": 2}, "csm-top", 3),
    ({"msg_model": "ring"}, "csm", 1),
    ({"msg_model": "ring"}, "pred", 2),
    ({"msg_model": "exchange"}, "csm", 1),
    ({"msg_model": "exchange", "fault_service": "fifo", "refs_per_dispatch": 2}, "csm-top", 3),
    ({"msg_model": "async"}, "csm", 1),
    ({"msg_model": "async"}, "rr", 2),
    ({"msg_model": "probe"}, "csm", 1),
    ({"msg_model": "probe"}, "dyn", 2),
    ({"msg_model": "probe", "fault_service": "fifo", "refs_per_dispatch": 2}, "csm-top", 3),
]


def _case_id(case: tuple) -> str:
    opts, pol, seed = case
    return "-".join(f"{k}={v}" for k, v in opts.items()) + f"-{pol}-s{seed}"


@pytest.mark.parametrize("case", OPTION_CASES, ids=_case_id)
def test_message_and_fault_options_give_the_python_engines_log(case):
    opts, pol, seed = case
    cfg = dataclasses.replace(SMALL, **opts)
    recs = _same(cfg, pol, seed)
    # the option is in the config record (as the Python engine writes it) and the
    # independent checker (which replays the FIFO fault server) accepts the run
    for k, v in opts.items():
        if k != "msg_model":
            assert recs[0][4][k] == v
    counts = check(recs)
    assert counts["complete"] == 1 and counts["faults"] > 0 and counts["messages"] > 0
    # the option changes the run: the comparison exercises the new kernel path
    default = run_point(SMALL, by_name(pol), seed, log=True, engine="compiled")
    assert [r for r in default.cluster.log.records if r[1] != "config"] != \
        [r for r in recs if r[1] != "config"]


def test_random_streams_are_cpythons():
    for seed in (0, 7, 2**40 + 3):
        r = random.Random(seed)
        words, g = mt.state_of(r)
        state = np.zeros((1, 625), np.int64)
        state[0] = words
        gn = np.array([g])
        for i in range(700):   # crosses a state regeneration (624 words)
            n = 1 + (i * 7919) % 70000
            assert mt.randbelow(state, 0, n) == r.randrange(n)
            assert mt.expovariate(state, 0, 1 / 12.5) == r.expovariate(1 / 12.5)
            assert mt.gauss(state, gn, 0, 3.0 * i, 0.7) == r.gauss(3.0 * i, 0.7)
            assert mt.randbelow(state, 0, 1) == r.randrange(1)


def test_six_policies_give_the_python_engines_log():
    logs = {pol: _same(SMALL, pol, 1) for pol in POLICY_NAMES}
    # the config tells the policies apart, so the comparison exercises each of them
    assert len({hash(tuple(map(repr, r))) for r in logs.values()}) >= 4
    kinds = {r[1] for r in logs["csm"]}
    assert {"load", "send", "recv", "deliver", "finish"} <= kinds
    assert any(r[1] == "ref" and r[5] == 0 for r in logs["csm"])      # faults
    assert any(r[1] == "load" and r[5] is not None for r in logs["csm"])  # evictions


def test_policy_options_and_literal_formula_match():
    import dataclasses

    lit = dataclasses.replace(SMALL, pgfault_formula="literal")
    _same(lit, "csm-top", 1, local_by="class", de_reset="dispatch", mnol=1, mnod=3)
    _same(SMALL, "pred", 2, quantum_dist="fixed", p=0.6)


def test_checker_accepts_the_compiled_log_and_runs_repeat():
    a = run_point(SMALL, by_name("csm"), 2, log=True, engine="compiled")
    b = run_point(SMALL, by_name("csm"), 2, log=True, engine="compiled")
    counts = check(a.cluster.log.records)
    assert counts["complete"] == 1 and counts["faults"] > 0 and counts["messages"] > 0
    assert a.cluster.log.records == b.cluster.log.records
    assert a.metrics == b.metrics


def test_unsupported_options_are_refused_by_name():
    with pytest.raises(ValueError, match="setup"):
        run_point(SMALL, by_name("csm"), 0, setup=lambda cl: None, engine="compiled")
    with pytest.raises(ValueError, match="Policy"):
        run_point(SMALL, Policy(), 0, engine="compiled")
    with pytest.raises(ValueError, match="engine"):
        run_point(SMALL, by_name("csm"), 0, engine="fortran")
    odd = CSMConfig(n_nodes=8, n_jobs=5, tc_scale=0.01, mem_scale=0.01,
                    small_sizes=(1, 3), large_sizes=(8,))
    with pytest.raises(ValueError, match="small_sizes"):
        run_point(odd, by_name("csm"), 0, engine="compiled")
    # options of the Python engine that the kernel does not run are named
    from types import SimpleNamespace

    from sim.timeshare.fast.run import unsupported

    assert unsupported(by_name("csm"), cfg=SimpleNamespace(msg_model="broadcast")) == \
        "msg_model='broadcast'"
    assert unsupported(by_name("csm"), cfg=SimpleNamespace(fault_service="lifo")) == \
        "fault_service='lifo'"
    assert unsupported(by_name("csm"), touch="ws") == "touch='ws'"
    for model in ("ring", "exchange", "async", "probe"):
        assert unsupported(by_name("csm"), cfg=SimpleNamespace(msg_model=model)) is None
    assert unsupported(by_name("csm"), cfg=SimpleNamespace(refs_per_dispatch=1)) is None
    assert unsupported(by_name("csm"), cfg=SimpleNamespace(refs_per_dispatch=4)) is None
    assert unsupported(by_name("csm"), cfg=SimpleNamespace(fault_service="fifo")) is None
    assert unsupported(by_name("csm"), cfg=SMALL) is None


@pytest.mark.slow
def test_32_nodes_all_policies_match():
    cfg = CSMConfig(n_nodes=32, n_jobs=300, tc_scale=0.01, mem_scale=0.01, mem_load=1.0)
    for pol in POLICY_NAMES:
        _same(cfg, pol, 4)


@pytest.mark.slow
def test_32_nodes_message_models_and_fault_options_match():
    base = CSMConfig(n_nodes=32, n_jobs=300, tc_scale=0.01, mem_scale=0.01, mem_load=1.0)
    for opts in ({"msg_model": m} for m in ("exchange", "ring", "async", "probe")):
        _same(dataclasses.replace(base, **opts), "csm", 4)
    _same(dataclasses.replace(base, fault_service="fifo", refs_per_dispatch=2), "pred", 4)


@pytest.mark.parametrize("pol", ["csm", "rr"])
def test_mixed_stream_and_simultaneous_arrivals_match(pol):
    """The compiled engine keeps one arrival in its event heap at a time; the order of
    events must stay the Python engine's, also when arrivals share a microsecond (mit
    1 µs) and under the one mixed stream with local tasks not counted."""
    mixed = dataclasses.replace(SMALL, class_mix="c", count_locals=False, n_jobs=30)
    same_us = dataclasses.replace(SMALL, n_jobs=40, mit_s=1e-6)
    arr = [a.time_us for a in generate(same_us, 3)]
    assert len(set(arr)) < len(arr) - 10    # many arrivals share their microsecond
    _same(mixed, pol, 2)
    _same(same_us, pol, 3)
