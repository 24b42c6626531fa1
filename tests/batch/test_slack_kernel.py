"""The compiled slot search (``heuristics.slack_kernel``) against the Python one.

Decision by decision: ``slack_kernel.search`` returns exactly the best candidate of
``heuristics.slack_fast.search`` (price to the bit, moved count, slot, compress order and
starts) and ``slack_kernel.decide`` (the scheduler's array path) exactly its slot and
starts, for every compress order, both compress readings and both ``delay_from`` choices,
on random problems (seeded and drawn by hypothesis) and on the bundled KTH snapshots.
Whole simulations: ``engine="compiled"`` gives the Python engine's start array byte for
byte, with jobs killed at their request and run on, on windows of the bundled traces and
on random workloads. What the compiled search does not run is refused by name.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")
pytestmark = pytest.mark.compiled

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schedules import assert_same_schedule  # noqa: E402

from heuristics import slack_fast, slack_kernel  # noqa: E402
from heuristics.slack import (  # noqa: E402
    EXHAUSTIVE,
    ORDERS,
    Inserter,
    SlackPolicy,
    _order_key,
    insert,
)
from instances.bundled import load_trace  # noqa: E402
from instances.job import Workload  # noqa: E402
from instances.synthetic import random_workload  # noqa: E402
from sim.batch.machine import simulate  # noqa: E402
from sim.batch.slack_scheduler import SlackScheduler  # noqa: E402
from sim.problems.insertion import InsertionProblem, load, random_problem  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = sorted((ROOT / "instances" / "data" / "slack_snapshots").glob("*.json"))
ALPHAS = [{}, {"alpha_t": 0.5}, {"alpha_u": 0.0, "alpha_p": 0.3}, {"alpha_f": 0.0}]
OPTIONS = [(d, c) for d in ("start", "overlap") for c in ("hold", "list")]


def _problems(count: int, k: int, **kw):
    for seed in range(count):
        pb = random_problem(seed, k=k, new=seed % 3 != 0, **kw)
        yield pb.with_alphas(**ALPHAS[seed % len(ALPHAS)])


def _decide(pb: InsertionProblem, order: str, delay_from: str, compress: str):
    """``slack_kernel.decide`` on the problem's jobs, given in reverse (any order works)."""
    W = list(reversed(pb.waiting))
    JI = np.array([(w.id, w.n, w.t, w.arrival) for w in W], np.int64).reshape(-1, 4)
    TE = np.array([w.te for w in W], np.int64)
    X = np.array([(w.s, w.s0, w.p) for w in W], np.float64).reshape(-1, 3)
    R = np.array([(r.end, r.n) for r in pb.running], np.int64).reshape(-1, 2)
    new = None if pb.new is None else (pb.new.n, pb.new.t, pb.new.p)
    return slack_kernel.decide(pb.now, pb.capacity, R[:, 0].copy(), R[:, 1].copy(), JI, TE,
                               X, new, order=order,
                               alphas=(pb.alpha_u, pb.alpha_t, pb.alpha_p, pb.alpha_f),
                               p_floor=pb.p_floor, slack_floor=pb.slack_floor,
                               delay_from=delay_from, hold=compress == "hold")


def _same(pb: InsertionProblem, order: str, delay_from: str = "start",
          compress: str = "hold") -> None:
    key = _order_key(order, pb)
    opts = dict(max_exhaustive=8, delay_from=delay_from, hold=compress == "hold", stop=None)
    ref = slack_fast.search(pb, order, key, **opts)
    got = slack_kernel.search(pb, order, key, **opts)
    assert got == ref, (order, delay_from, compress, pb.to_dict())
    assert got[0] is not None
    # the scheduler's array path: the same slot and the same starts
    ts, ids, starts = _decide(pb, order, delay_from, compress)
    want = insert(pb, order, delay_from=delay_from, compress=compress)
    assert ts == want.ts  # the chosen slot: the new job's start, if any
    full = {w.id: w.te for w in pb.waiting}
    full.update(zip(ids, starts, strict=True))
    assert full == want.schedule.starts, (order, delay_from, compress, pb.to_dict())


@pytest.mark.parametrize("delay_from,compress", OPTIONS)
@pytest.mark.parametrize("order", ORDERS)
def test_kernel_equals_python_on_random_problems(order, delay_from, compress):
    # loose queues, tight ones (gap 0: many equal starts, price ties), small machines
    for pb in (*_problems(30, 6), *_problems(15, 9, gap=0, capacity=4),
               *_problems(8, 14, max_slack=30.0)):
        _same(pb, order, delay_from, compress)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(0, 12), capacity=st.integers(1, 12),
       gap=st.integers(0, 3), new=st.booleans(), inf_slack=st.sampled_from([0.0, 0.1, 0.5]),
       max_slack=st.sampled_from([0.0, 3.0, 10.0, 100.0]),
       alphas=st.tuples(*[st.sampled_from([0.0, 0.3, 0.5, 1.0])] * 4),
       order=st.sampled_from(ORDERS), option=st.sampled_from(OPTIONS))
def test_kernel_equals_python_on_drawn_problems(seed, k, capacity, gap, new, inf_slack,
                                                max_slack, alphas, order, option):
    pb = random_problem(seed, k=k, capacity=capacity, gap=gap, new=new, inf_slack=inf_slack,
                        max_slack=max_slack)
    au, at, ap, af = alphas
    pb = pb.with_alphas(alpha_u=au, alpha_t=at, alpha_p=ap, alpha_f=af)
    _same(pb, order, *option)


def test_kernel_equals_python_on_kth_snapshots():
    """The insert and remove problems recorded on the KTH months (queues up to 65)."""
    assert len(SNAPSHOTS) > 200
    for f in SNAPSHOTS[::2]:
        pb = load(f)
        for order in ORDERS:
            _same(pb, order)
        _same(pb, "AST", compress="list")
        _same(pb, "DU", delay_from="overlap")


def test_sum_follows_the_interpreter():
    """The kernel's sums are CPython's ``sum`` of the running interpreter, bit for bit."""
    rng = np.random.default_rng(0)
    for size in (0, 1, 2, 5, 40):
        for scale in (1.0, 1e-8, 1e12):
            x = rng.normal(0, scale, size) * rng.choice([1.0, 1e6, 1e-6], size)
            idx = np.arange(size)
            want = sum(x.tolist())
            got = slack_kernel._pysum(x, idx, 0, size, slack_kernel._NEUMAIER)
            assert got == want and str(got) == str(float(want))


def test_power_is_the_interpreters():
    """``_pow`` gives the interpreter's ``x ** y`` bit for bit, ``x`` itself at y = 1.0."""
    rng = np.random.default_rng(1)
    xs = np.concatenate([rng.uniform(0, 1e7, 2000), rng.uniform(0, 1e-3, 500),
                         [0.0, 1.0, 5e-324, 1e150, 86400.0, 3.0]]).tolist()
    for y in (1.0, 0.5, 0.3, 0.0, 2.0):
        for x in xs:
            got = slack_kernel._pow(x, y)
            assert got == x ** y and str(got) == str(x ** y), (x, y)
            if y == 1.0:
                assert got == x


SORT_SIZES = (0, 1, 2, 5, 31, 32, 33, 63, 64, 65, 100, 257, 1000)


def _keys(rng: np.random.Generator, size: int, kind: str) -> np.ndarray:
    """Sort keys with many ties: small ints, or floats with -inf and both zeros."""
    if kind == "int":
        return rng.integers(-3, 4, size).astype(np.int64)
    x = rng.choice([-np.inf, -1.5, -0.0, 0.0, 0.25, 2.0, 7.0], size)
    return np.asarray(x, np.float64)


@pytest.mark.parametrize("kind", ["int", "float"])
def test_stable_sorts_equal_numpy_mergesort(kind):
    """The kernel's stable sorts give ``np.argsort(kind="mergesort")``'s order exactly,
    ties included, on both sides of the insertion runs' length (32)."""
    rng = np.random.default_rng(1)
    for size in SORT_SIZES:
        for _ in range(4):
            key = _keys(rng, size, kind)
            out = np.full(size + 3, -7, np.int64)
            slack_kernel._stable_order(key, size, out, np.empty(size, np.int64))
            assert (out[:size] == np.argsort(key, kind="mergesort")).all()
            assert (out[size:] == -7).all()
            # a subset of indices, in any order
            idx = rng.permutation(2 * size + 1)[:size].astype(np.int64)
            big = _keys(rng, 2 * size + 1, kind)
            want = idx[np.argsort(big[idx], kind="mergesort")]
            slack_kernel._order_by(big, idx, size, np.empty(size, np.int64))
            assert (idx == want).all()


def test_two_key_sort_and_value_sort():
    """``_order_by2`` sorts by ``(k1, k2[:, c])`` as ``np.lexsort``, stably;
    ``_sort_values`` as ``np.sort``."""
    rng = np.random.default_rng(2)
    for size in SORT_SIZES:
        k1 = rng.integers(0, 5, size).astype(np.int64)
        k2 = np.stack([rng.integers(0, 1000, size), rng.integers(0, 3, size)], 1)
        for c in (0, 1):
            idx = np.arange(size, dtype=np.int64)
            slack_kernel._order_by2(k1, k2, c, idx, size, np.empty(size, np.int64))
            assert (idx == np.lexsort((k2[:, c], k1))).all()
        x = rng.integers(-50, 50, size).astype(np.int64)
        got = x.copy()
        slack_kernel._sort_values(got, size, np.empty(size, np.int64))
        assert (got == np.sort(x)).all()


def test_events_and_running_profile():
    """``_events`` adds up the processors at each distinct time, ascending; ``_running``
    builds the running jobs' profile (ends by now ignored, equal ends merged)."""
    rng = np.random.default_rng(3)
    for size in SORT_SIZES:
        et = rng.integers(0, max(size // 3, 1), size).astype(np.int64)
        ed = rng.integers(-5, 6, size).astype(np.int64)
        evt = np.empty(size, np.int64)
        evd = np.empty(size, np.int64)
        k = slack_kernel._events(et, ed, size, evt, evd, np.empty(size, np.int64),
                                 np.empty(size, np.int64))
        times = np.unique(et)
        assert k == len(times) and (evt[:k] == times).all()
        assert evd[:k].tolist() == [int(ed[et == t].sum()) for t in times]
        now = 10
        ends = rng.integers(5, 10 + max(size // 4, 1), size).astype(np.int64)
        ns = rng.integers(1, 4, size).astype(np.int64)
        T = np.empty(size + 1, np.int64)
        F = np.empty(size + 1, np.int64)
        L = slack_kernel._running(now, 100, ends, ns, T, F, np.empty(size, np.int64),
                                  np.empty(size, np.int64))
        live = ends > now
        later = np.unique(ends[live])
        assert T[:L].tolist() == [now, *later.tolist()]
        want = [100 - int(ns[live].sum())]
        for e in later:
            want.append(want[-1] + int(ns[live & (ends == e)].sum()))
        assert F[:L].tolist() == want


@functools.cache
def _bundled(trace: str) -> Workload:
    return load_trace(trace)


@functools.cache
def _window(trace: str, first: int, count: int) -> Workload:
    return _bundled(trace).rows(first, first + count, name=f"{trace}[{first}:+{count}]")


WORKLOADS = {
    "kth": lambda: _window("KTH-SP2", 1000, 400),
    "lublin-a": lambda: _window("lublin_256", 0, 400),
    "lublin-b": lambda: _window("lublin_256", 5000, 400),
    "random": lambda: random_workload(300, (32,), seed=3, load=0.95),
}


def _assert_same_run(w: Workload, overrun: str, **options) -> None:
    py = simulate(w, SlackPolicy(**options), overrun=overrun)
    policy = SlackPolicy(**options)
    co = simulate(w, policy, overrun=overrun, engine="compiled")
    assert_same_schedule(co, py, (w.name, overrun, options))
    assert policy.inserter.compiled is False  # restored after the run


@pytest.mark.parametrize("overrun", ["kill", "run"])
@pytest.mark.parametrize("name", sorted(WORKLOADS))
@pytest.mark.parametrize("order", ORDERS)
def test_compiled_engine_gives_the_python_schedule(order, name, overrun):
    _assert_same_run(WORKLOADS[name](), overrun, order=order)


@pytest.mark.parametrize("options", [{"order": "AST", "compress": "list"},
                                     {"order": "DU", "delay_from": "overlap"},
                                     {"order": "DP", "sf": 1.0, "default_priority": 0.5,
                                      "alpha_t": 0.5}])
def test_compiled_engine_with_options(options):
    _assert_same_run(WORKLOADS["lublin-a"](), "run", **options)


def test_recorded_and_checked_runs_take_the_problem_path():
    """``record`` and ``check`` need the ``InsertionProblem``: the compiled inserter then
    runs on it (``insert(compiled=True)``), with the same schedule and snapshots."""
    w = WORKLOADS["kth"]()
    ref = SlackScheduler(Inserter("AST"), record=True, name="slack-AST")
    s_ref = simulate(w, ref)
    got = SlackScheduler(Inserter("AST", compiled=True), record=True, check=True,
                         name="slack-AST")
    s_got = simulate(w, got)
    assert s_got.start.tobytes() == s_ref.start.tobytes()
    assert got.snapshots == ref.snapshots and got.n_insert == ref.n_insert
    assert got.n_remove == ref.n_remove


def test_refused_by_name():
    pb = random_problem(1, k=4)
    with pytest.raises(ValueError, match="order 'exhaustive'"):
        Inserter(EXHAUSTIVE, compiled=True)
    with pytest.raises(ValueError, match="needs fast=True"):
        Inserter("AST", fast=False, compiled=True)
    with pytest.raises(ValueError, match="stop callback"):
        insert(pb, "AST", compiled=True, stop=lambda: False)
    with pytest.raises(ValueError, match="needs fast=True"):
        insert(pb, "AST", compiled=True, fast=False)
    with pytest.raises(ValueError, match="compiled=True"):
        Inserter("AST").decide(0, 4, np.zeros(0, np.int64), np.zeros(0, np.int64),
                               np.zeros((0, 4), np.int64), np.zeros(0, np.int64),
                               np.zeros((0, 3)), None,
                               alphas=(1.0, 1.0, 1.0, 1.0), p_floor=0.01, slack_floor=1.0)
    w = WORKLOADS["random"]()
    with pytest.raises(ValueError, match="Profile-based reference search"):
        simulate(w, SlackScheduler(Inserter("AST", fast=False)), engine="compiled")
    with pytest.raises(ValueError, match="inserter function"):
        simulate(w, SlackScheduler(lambda pb: None), engine="compiled")

