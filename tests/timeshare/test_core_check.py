"""The independent checker accepts random runs and rejects corrupted logs; determinism."""

from __future__ import annotations

import random

import pytest

from sim.timeshare import Cluster, Compute, Policy, Recv, Send, WorkingSet
from sim.timeshare.check import CheckError, check


def _exchange(rounds, burst_us, spin_us):
    def prog(ctx):
        peers = ctx.cluster.jobs[ctx.task.job]
        me = ctx.task.rank
        for r in range(rounds):
            yield Compute(burst_us)
            partner = peers[me ^ 1] if (me ^ 1) < len(peers) else None
            if partner is not None:
                yield Send(partner, tag=r)
                yield Recv(src=partner, tag=r, spin_us=spin_us)
    return prog


def _local(us):
    def prog(ctx):
        yield Compute(us)
    return prog


def random_run(seed: int, policy: Policy | None = None, memory: bool = True) -> Cluster:
    rng = random.Random(seed)
    n = rng.randint(1, 3)
    cl = Cluster(n, policy or Policy(quantum_us=rng.choice([500, 2000]), quantum_dist="exp"),
                 latency_us=rng.choice([0, 100, 700]), mem_pages=40 if memory else None,
                 fault_latency_us=1500, seed=seed)
    job = 0
    for _ in range(rng.randint(2, 6)):
        at = rng.randint(0, 20_000)
        if rng.random() < 0.5:
            size = rng.randint(1, n)
            nodes = rng.sample(range(n), size)
            rounds, burst, spin = rng.randint(1, 4), rng.randint(100, 3000), rng.choice([0, 300])
            vm = rng.randint(5, 30)

            def go(c, t, nodes=nodes, j=job, rounds=rounds, burst=burst, spin=spin, vm=vm):
                kw = dict(vir_mem=vm, ws=WorkingSet(vm, 0.8, 0.1, 2000), resident=vm // 2) \
                    if memory else {}
                c.spawn_job(j, nodes, _exchange(rounds, burst, spin), work=rounds * burst,
                            **kw)
            cl.at(at, go)
            job += 1
        else:
            node, us, vm = rng.randrange(n), rng.randint(100, 8000), rng.randint(1, 20)

            def go(c, t, node=node, us=us, vm=vm):
                kw = dict(vir_mem=vm, ws=WorkingSet(vm, 0.5, 0.1, 0), resident=vm) \
                    if memory else {}
                c.spawn(node, _local(us), work=us, **kw)
            cl.at(at, go)
    return cl.run()


@pytest.mark.parametrize("seed", range(25))
def test_checker_accepts_random_runs(seed):
    cl = random_run(seed)
    counts = check(cl.log.records)
    assert counts["complete"] == 1
    assert all(t.finish is not None for t in cl.tasks)


def test_same_seed_same_log():
    assert random_run(7).log.records == random_run(7).log.records
    assert random_run(7).log.records != random_run(8).log.records


def _mutations(recs):
    """Yield (name, corrupted log)."""
    idx = {k: [i for i, r in enumerate(recs) if r[1] == k] for k in
           ("dispatch", "deliver", "recv", "ref", "finish", "arrive", "load", "off", "block")}

    def with_(i, rec):
        out = list(recs)
        out[i] = rec
        return out

    def without(i):
        return recs[:i] + recs[i + 1:]

    i = idx["dispatch"][1]
    yield "double dispatch", recs[:i + 1] + [recs[i]] + recs[i + 1:]
    i = idx["deliver"][0]
    r = recs[i]
    yield "late delivery", with_(i, (r[0] + 1,) + r[1:])
    yield "lost receive", without(idx["recv"][-1])
    i = idx["recv"][0]
    yield "double receive", recs[:i + 1] + [recs[i]] + recs[i + 1:]
    i = idx["ref"][0]
    r = recs[i]
    yield "wrong hit flag", with_(i, r[:5] + (1 - r[5],))
    yield "missing finish", without(idx["finish"][-1])
    i = idx["arrive"][0]
    r = recs[i]
    yield "wrong work", with_(i, r[:5] + (r[5] + 1,))
    i = [j for j in idx["load"] if recs[j][5] is not None][0]
    r = recs[i]
    yield "load without eviction overfills", with_(i, r[:5] + (None,))
    i = idx["block"][0]
    yield "run while blocked", recs[:i + 1] + [(recs[i][0], "dispatch", recs[i][2],
                                                recs[i][3], None, None)] + recs[i + 1:]


def test_checker_rejects_corrupted_logs():
    # find a run that exercises every record kind the mutations need, with full memory
    for seed in range(200):
        cl = random_run(seed)
        recs = cl.log.records
        ks = {r[1] for r in recs}
        if {"recv", "deliver", "block", "load"} <= ks and \
                any(r[1] == "load" and r[5] is not None for r in recs):
            break
    else:
        pytest.fail("no suitable run")
    check(recs)
    names = []
    for name, bad in _mutations(recs):
        with pytest.raises(CheckError):
            check(bad)
        names.append(name)
    assert len(names) == 9
