"""Property tests of the batch simulator and the backfilling policies on random workloads.

Workloads come from ``strategies.workloads``: small integer times (seconds), so ends,
kills and arrivals coincide often; K = 1 and K = 2; both overrun modes. Besides the
validator, the policies' guarantees are re-derived here independently of the policy
code: FCFS's start times from the machine's actual occupation, EASY's shadow times
from the running jobs' estimated ends.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import workloads

from heuristics.backfill import EASY, FCFS, Conservative
from instances.job import Job, Workload
from sim import registry
from sim.batch.machine import Schedule, simulate
from sim.batch.policy import BasePolicy
from sim.batch.validate import ValidationError, validate

BACKFILL = {"fcfs": FCFS, "easy": EASY, "conservative": Conservative}
MODES = ("kill", "run")
SETTINGS = settings(max_examples=100, deadline=None, report_multiple_bugs=False,
                    suppress_health_check=[HealthCheck.too_slow])

def policy_modes(policies) -> list:
    """(policy, overrun) pairs."""
    return [pytest.param(p, m) for p in policies for m in MODES]


# Registered policies too slow for a property test (a CP-SAT solve at every arrival).
TOO_SLOW = {"slack-optimal"}


def _probe(name: str, K: int) -> bool:
    """Whether registry policy ``name`` constructs without arguments and runs on K
    resources (policies may support K = 1 only and say so with ValueError)."""
    try:
        pol = registry.make_policy(name)
    except TypeError:
        return False
    w = Workload((Job(1, 0, 1, 2, (1,) * K), Job(2, 0, 1, 1, (1,) * K)), (2,) * K)
    try:
        simulate(w, pol)
    except ValueError:
        return False
    return True


REGISTERED = [(name, K) for name in registry.POLICIES if name not in TOO_SLOW
              for K in (1, 2) if _probe(name, K)]


def perfect(w: Workload) -> Workload:
    """The same workload with runtime >= 1 and requested == runtime (perfect estimates,
    so no job ends early and none is killed)."""
    jobs = tuple(dataclasses.replace(j, runtime=max(j.runtime, 1), requested=max(j.runtime, 1))
                 for j in w.jobs)
    return Workload(jobs, w.capacity, w.name)


def no_zero_runtime(w: Workload) -> Workload:
    """The same workload with every runtime of 0 s raised to 1 s (one decision per
    instant: no job ends at the second it starts)."""
    jobs = tuple(dataclasses.replace(j, runtime=max(j.runtime, 1)) for j in w.jobs)
    return Workload(jobs, w.capacity, w.name)


def arrays(w: Workload) -> tuple[np.ndarray, ...]:
    submit = np.array([j.submit for j in w.jobs], dtype=np.int64)
    requested = np.array([j.requested for j in w.jobs], dtype=np.int64)
    demand = np.array([j.demand for j in w.jobs], dtype=np.int64).reshape(len(w.jobs), w.K)
    return submit, requested, demand


# ---------------------------------------------------------------- validator accepts all
@pytest.mark.parametrize("K", [1, 2])
@pytest.mark.parametrize(("policy", "overrun"), policy_modes(sorted(BACKFILL)))
@SETTINGS
@given(data=st.data())
def test_validator_accepts_backfill_schedules(policy, K, overrun, data):
    w = data.draw(workloads(max_jobs=12, max_procs=8, K=K))
    s = simulate(w, BACKFILL[policy](), overrun=overrun)
    validate(s)
    assert s.policy == policy
    assert (s.start >= 0).all() and len(s.start) == len(w.jobs)


@pytest.mark.parametrize(("policy", "K", "overrun"), [
    pytest.param(p, k, m, id=f"{p}-K{k}-{m}")
    for p, k in REGISTERED for m in MODES])
@settings(max_examples=30, deadline=None, report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_validator_accepts_registered_policies(policy, K, overrun, data):
    w = data.draw(workloads(max_jobs=10, max_procs=8, K=K))
    validate(simulate(w, registry.make_policy(policy), overrun=overrun))


def test_registry_probe_covers_the_backfill_policies():
    names = {p for p, _ in REGISTERED}
    assert {"fcfs", "easy", "conservative"} <= names


# ---------------------------------------------------------------- every job starts once
class _Counting(BasePolicy):
    """Wraps a policy and counts the jobs each ``schedule`` call returns."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.count: dict[int, int] = {}

    def reset(self, machine):
        self.count = {}
        self.inner.reset(machine)

    def on_arrival(self, job, now):
        self.inner.on_arrival(job, now)

    def on_end(self, job, now):
        self.inner.on_end(job, now)

    def on_overrun(self, job, now):
        self.inner.on_overrun(job, now)

    def schedule(self, now):
        out = list(self.inner.schedule(now))
        for j in out:
            self.count[j.id] = self.count.get(j.id, 0) + 1
        return out

    def next_wakeup(self, now):
        return self.inner.next_wakeup(now)

    def promises(self):
        return self.inner.promises()


@pytest.mark.parametrize(("policy", "overrun"), policy_modes(sorted(BACKFILL)))
@settings(max_examples=60, deadline=None, report_multiple_bugs=False)
@given(w=workloads(max_jobs=12, max_procs=8, K=None))
def test_every_job_starts_exactly_once(policy, overrun, w):
    pol = _Counting(BACKFILL[policy]())
    s = simulate(w, pol, overrun=overrun)
    assert pol.count == {j.id: 1 for j in w.jobs}
    assert all(s.start[i] >= j.submit for i, j in enumerate(w.jobs))


# ---------------------------------------------------------------- FCFS
def fcfs_reference(w: Workload, overrun: str) -> np.ndarray:
    """FCFS starts re-derived from the definition: job i starts at the first instant
    >= max(submit_i, start_{i-1}) at which it fits beside the jobs still running (their
    actual run lengths); once every earlier job has started, occupation only falls."""
    kill = overrun == "kill"
    n = len(w.jobs)
    start = np.zeros(n, np.int64)
    end = np.zeros(n, np.int64)
    for i, job in enumerate(w.jobs):
        t0 = max(job.submit, int(start[i - 1]) if i else job.submit)
        candidates = sorted({t0} | {int(e) for e in end[:i] if e > t0})
        for t in candidates:
            used = [sum(w.jobs[j].demand[k] for j in range(i) if start[j] <= t < end[j])
                    for k in range(w.K)]
            if all(used[k] + job.demand[k] <= w.capacity[k] for k in range(w.K)):
                break
        start[i] = t
        end[i] = t + job.run_length(kill)
    return start


@pytest.mark.parametrize("overrun", MODES)
@SETTINGS
@given(w=workloads(max_jobs=12, max_procs=8, K=None))
def test_fcfs_starts_in_submit_order_as_defined(overrun, w):
    s = simulate(w, FCFS(), overrun=overrun)
    assert (np.diff(s.start) >= 0).all()
    np.testing.assert_array_equal(s.start, fcfs_reference(w, overrun))


# ---------------------------------------------------------------- EASY
def easy_shadows(s: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Re-derive, from the schedule alone, when each job became the head of the EASY
    queue (``t_h``: its arrival, or the start of the last job submitted before it) and
    the head's shadow time then: the earliest instant from which it fits beside the
    jobs running at ``t_h`` as long as they run to their estimated ends (start +
    requested). Valid with one decision per instant (no zero-runtime job) and jobs
    killed at their request."""
    w = s.workload
    submit, requested, demand = arrays(w)
    cap = np.array(w.capacity, dtype=np.int64)
    n = len(w.jobs)
    head = np.zeros(n, np.int64)
    shadow = np.zeros(n, np.int64)
    for h in range(n):
        t = int(max(submit[h], s.start[:h].max() if h else submit[h]))
        head[h] = t
        idx = np.arange(n)
        running = (idx != h) & (s.end > t) & (
            (s.start < t) | ((s.start == t) & (idx < h)))
        est = s.start + requested
        for T in sorted({t} | {int(e) for e in est[running] if e > t}):
            still = running & (est > T)
            if (demand[still].sum(axis=0) + demand[h] <= cap).all():
                shadow[h] = T
                break
        else:  # pragma: no cover - the machine empties once every estimate has passed
            raise AssertionError("no shadow time")
    return head, shadow


@pytest.mark.parametrize("K", [1, 2])
@SETTINGS
@given(data=st.data())
def test_easy_never_delays_the_head_reservation(K, data):
    w = no_zero_runtime(data.draw(workloads(max_jobs=12, max_procs=8, K=K)))
    s = simulate(w, EASY(), overrun="kill")
    validate(s)
    head, shadow = easy_shadows(s)
    for h, job in enumerate(w.jobs):
        assert s.start[h] <= shadow[h], f"job {job.id} starts after its shadow"
        # promised exactly when it did not start the moment it became the head
        if s.start[h] > head[h]:
            assert s.promises.get(job.id) == shadow[h], f"job {job.id}"
        else:
            assert job.id not in s.promises


@pytest.mark.parametrize("policy", ["easy", "conservative"])
@pytest.mark.parametrize("K", [1, 2])
@SETTINGS
@given(data=st.data())
def test_perfect_estimates_keep_every_promise_exactly(policy, K, data):
    # no job ends early, so nothing can start before its reservation either
    w = perfect(data.draw(workloads(max_jobs=12, max_procs=8, K=K)))
    s = simulate(w, BACKFILL[policy](), overrun="kill")
    for i, job in enumerate(w.jobs):
        if job.id in s.promises:
            assert s.start[i] == s.promises[job.id], f"job {job.id}"


# ---------------------------------------------------------------- conservative
@pytest.mark.parametrize("K", [1, 2])
@SETTINGS
@given(data=st.data())
def test_conservative_never_starts_after_its_first_promise(K, data):
    w = data.draw(workloads(max_jobs=12, max_procs=8, K=K))
    s = simulate(w, Conservative(), overrun="kill")
    validate(s)
    assert set(s.promises) == {j.id for j in w.jobs}  # a reservation at every arrival
    for i, job in enumerate(w.jobs):
        assert job.submit <= s.start[i] <= s.promises[job.id], f"job {job.id}"


def conservative_reference(w: Workload) -> np.ndarray:
    """Conservative starts re-derived for perfect estimates (no early end, so no
    compression and every job starts at its reservation): job j's reservation is the
    earliest t >= submit_j at which it fits for its requested time beside the
    intervals [start_i, start_i + requested_i) of every job i that arrived before it."""
    submit, requested, demand = arrays(w)
    cap = np.array(w.capacity, dtype=np.int64)
    n = len(w.jobs)
    start = np.zeros(n, np.int64)
    for j in range(n):
        end = start[:j] + requested[:j]
        for t in sorted({int(submit[j])} | {int(e) for e in end if e > submit[j]}):
            over = (start[:j] < t + requested[j]) & (end > t)  # overlaps [t, t + req)
            # usage only rises at a start: its maximum over the window is at t or at
            # a start inside the window
            inst = [t] + [int(x) for x in start[:j][over] if x > t]
            if all((demand[:j][(start[:j] <= u) & (end > u)].sum(axis=0) + demand[j]
                    <= cap).all() for u in inst):
                start[j] = t
                break
    return start


@pytest.mark.parametrize("K", [1, 2])
@SETTINGS
@given(data=st.data())
def test_conservative_reservations_as_defined(K, data):
    w = perfect(data.draw(workloads(max_jobs=12, max_procs=8, K=K)))
    s = simulate(w, Conservative(), overrun="kill")
    np.testing.assert_array_equal(s.start, conservative_reference(w))


def single_overrun(w: Workload) -> Workload:
    """The same workload with at most one job (the first such) running past its
    request: every later job's requested time is raised to its runtime."""
    jobs, seen = [], False
    for j in w.jobs:
        if j.runtime > j.requested:
            if seen:
                j = dataclasses.replace(j, requested=j.runtime)
            seen = True
        jobs.append(j)
    return Workload(tuple(jobs), w.capacity, w.name)


@pytest.mark.parametrize("K", [1, 2])
@SETTINGS
@given(data=st.data())
def test_conservative_run_single_overrun(K, data):
    # overrun="run" without the known bug's trigger (two jobs overrunning at once)
    w = single_overrun(data.draw(workloads(max_jobs=12, max_procs=8, K=K)))
    s = simulate(w, Conservative(), overrun="run")
    validate(s)
    assert set(s.promises) == {j.id for j in w.jobs}


# ---------------------------------------------------------------- determinism
@pytest.mark.parametrize(("policy", "overrun"), policy_modes(sorted(BACKFILL)))
@settings(max_examples=40, deadline=None, report_multiple_bugs=False)
@given(w=workloads(max_jobs=12, max_procs=8, K=None))
def test_determinism(policy, overrun, w):
    reused = BACKFILL[policy]()
    runs = [simulate(w, BACKFILL[policy](), overrun=overrun),
            simulate(w, reused, overrun=overrun),
            simulate(w, reused, overrun=overrun)]  # reset() must forget the first run
    for s in runs[1:]:
        for name in ("start", "end", "killed"):
            assert getattr(s, name).tobytes() == getattr(runs[0], name).tobytes()
        assert s.promises == runs[0].promises


# ---------------------------------------------------------------- validator rejects
def _base() -> Schedule:
    """A valid EASY schedule on 4 processors (kill mode) with a promise and a kill."""
    w = Workload((
        Job(1, 0, 10, 10, (3,)),   # 0-10
        Job(2, 1, 5, 5, (4,)),     # head at 1, promised 10: 10-15
        Job(3, 2, 20, 8, (1,)),    # backfilled at 2 (ends by 10), killed at 10
        Job(4, 3, 2, 2, (2,)),     # 15-17
    ), (4,), "base")
    s = simulate(w, EASY())
    validate(s)
    assert s.start.tolist() == [0, 10, 2, 15] and s.promises[2] == 10
    return s


def _with(s: Schedule, **arrays_) -> Schedule:
    return dataclasses.replace(s, **{k: np.array(v, dtype=getattr(s, k).dtype)
                                     for k, v in arrays_.items()})


@pytest.mark.parametrize(("change", "message"), [
    ({"start": [0, 9, 2, 15], "end": [10, 14, 10, 17]}, "resource 0: 8 in use at t=9"),
    ({"start": [0, 10, 1, 15], "end": [10, 15, 9, 17]}, "before its submit"),
    ({"end": [10, 15, 10, 18]}, "runs 3 s, expected 2 s"),
    ({"end": [10, 15, 22, 17]}, "runs 20 s, expected 8 s"),
    ({"killed": [False, False, False, False]}, "killed flag"),
    ({"start": [0, 11, 2, 16], "end": [10, 16, 10, 18]}, "later than promised 10"),
    ({"start": [0, -1, 2, 15], "end": [10, -1, 10, 17]}, "never started"),
])
def test_validator_rejects_corrupted_schedules(change, message):
    s = _base()
    with pytest.raises(ValidationError, match=message):
        validate(_with(s, **change))


def test_validator_rejects_fcfs_out_of_order():
    w = Workload((Job(1, 0, 5, 5, (2,)), Job(2, 0, 5, 5, (2,))), (4,))
    s = simulate(w, FCFS())
    validate(s)
    with pytest.raises(ValidationError, match="fcfs: job 2"):
        validate(_with(s, start=[3, 0], end=[8, 5]))
    validate(_with(s, start=[3, 0], end=[8, 5]), check_promises=False)


def test_validator_guarantee_checks_can_be_switched_off():
    s = _base()
    late = _with(s, start=[0, 11, 2, 16], end=[10, 16, 10, 18])
    validate(late, check_promises=False)
    with pytest.raises(ValidationError):
        validate(late, check_promises=True)


def naive_capacity_ok(w: Workload, start: np.ndarray, end: np.ndarray) -> bool:
    """Per-second occupation array: demand counted on [start, end)."""
    horizon = int(end.max()) + 1 if len(end) else 1
    lo = min(0, int(start.min())) if len(start) else 0
    used = np.zeros((horizon - lo, w.K), np.int64)
    for i, j in enumerate(w.jobs):
        used[start[i] - lo:end[i] - lo] += np.array(j.demand)
    return bool((used <= np.array(w.capacity)).all())


@pytest.mark.parametrize("K", [1, 2])
@SETTINGS
@given(data=st.data())
def test_validator_capacity_matches_a_per_second_array(K, data):
    # shift one job of a valid schedule; the validator's verdict must match a naive
    # per-second occupation check (and the submit rule)
    w = data.draw(workloads(max_jobs=10, max_procs=6, K=K, min_jobs=2))
    s = simulate(w, BACKFILL[data.draw(st.sampled_from(sorted(BACKFILL)))]())
    i = data.draw(st.integers(0, len(w.jobs) - 1))
    delta = data.draw(st.integers(-6, 6))
    start, end = s.start.copy(), s.end.copy()
    start[i] += delta
    end[i] += delta
    bad = _with(s, start=start, end=end)
    ok = naive_capacity_ok(w, start, end) and start[i] >= w.jobs[i].submit
    if ok:
        validate(bad, check_promises=False)
    else:
        with pytest.raises(ValidationError, match="resource|before its submit|never started"):
            validate(bad, check_promises=False)
