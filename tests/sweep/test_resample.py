"""Zakay & Feitelson's workload resampling (``replicate = "resample"``): long-term users
kept, temporary users drawn per week and moved by whole weeks; on a hand-made log with
exact checks and on KTH-SP2 with tolerances."""

from __future__ import annotations

import collections
import dataclasses
import statistics

import pytest

from instances.bundled import load_trace
from instances.job import Job, Workload
from instances.replicate import replicate
from instances.swf import read_swf, write_swf
from instances.weeks import WEEK, week_of, week_starts


def _hand() -> Workload:
    """Four weeks (no UnixStartTime: weeks of 604,800 s from the first submit). User 1
    has a session of two jobs (300 s apart) in each week: span 4, long-term from 3. The
    temporary users start one a week: 10 (week 0), 11 (weeks 1 and 2), an unknown user
    (week 2), 12 (week 3, its job the log's last at 600,000 s into the week)."""
    rows = []  # (submit, user); runtime identifies the job
    for k in range(4):
        off = 0 if k == 0 else 3600
        rows += [(k * WEEK + off, 1), (k * WEEK + off + 300, 1)]
    rows += [(50_000, 10), (WEEK + 7_000, 11), (WEEK + 7_200, 11), (2 * WEEK + 9_000, 11),
             (2 * WEEK + 100, -1), (3 * WEEK + 600_000, 12)]
    rows.sort()
    jobs = tuple(Job(i + 1, s, 1000 + i, 5000, (1,), user=u)
                 for i, (s, u) in enumerate(rows))
    return Workload(jobs, (8,), "hand")


def test_hand_log_long_term_kept_temporary_drawn_per_week_and_moved_whole():
    w = _hand()
    orig = {j.runtime: j for j in w.jobs}  # runtime -> original job
    first_of = {}
    for j in w.jobs:
        first_of.setdefault(j.user if j.user >= 0 else ("job", j.id), j)
    for seed in range(12):
        r = replicate(w, "resample", seed, long_term=3)
        assert [j.id for j in r.jobs] == list(range(1, len(r) + 1))
        assert all(a.submit <= b.submit for a, b in zip(r.jobs, r.jobs[1:], strict=False))
        assert w.jobs[0].submit <= r.jobs[0].submit and r.jobs[-1].submit <= w.jobs[-1].submit
        shift = {}
        for j in r.jobs:
            o = orig[j.runtime]
            d = j.submit - o.submit
            assert d % WEEK == 0 and (j.requested, j.demand) == (o.requested, o.demand)
            shift.setdefault((j.user, o.user), []).append((o, d))
        # the long-term user: kept, all 8 jobs at their own times
        assert sorted(d for _, d in shift[(1, 1)]) == [0] * 8
        # temporary users: one starts each week, as in the log
        starts = collections.Counter()
        for (uid, ou), moved in shift.items():
            if ou == 1:
                continue
            for o, d in moved:
                key = ou if ou >= 0 else ("job", o.id)
                if o is first_of[key]:
                    starts[(o.submit + d) // WEEK] += 1
                assert uid == ou or (ou >= 0 and uid > 12) or (ou < 0 and uid == -1)
            if ou >= 0:  # one copy of a user: moved as a whole
                assert len({d for _, d in moved}) == 1
        assert starts == {0: 1, 1: 1, 2: 1, 3: 1}
    a, b = (replicate(w, "resample", s, long_term=3) for s in (0, 1))
    assert a.jobs == replicate(w, "resample", 0, long_term=3).jobs
    assert any(x.jobs != a.jobs for x in (b, *(replicate(w, "resample", s, long_term=3)
                                              for s in range(2, 6))))


def test_a_user_drawn_twice_is_two_users_and_a_multi_week_user_is_cut_at_the_log_end():
    w = _hand()
    seen_twice = seen_cut = False
    for seed in range(60):
        r = replicate(w, "resample", seed, long_term=3)
        runtimes = {j0.runtime for j0 in w.jobs if j0.user == 11}
        ids = collections.Counter(j.user for j in r.jobs if j.runtime in runtimes)
        for n in ids.values():
            assert n in (2, 3)  # whole, or cut after its first session (drawn for week 3)
            seen_cut |= n == 2
        seen_twice |= len(ids) >= 2 and min(ids) == 11 and max(ids) > 12
    assert seen_twice and seen_cut


@pytest.fixture(scope="module")
def kth():
    return load_trace("KTH-SP2")


def _users_per_week(w: Workload) -> list[int]:
    starts = week_starts(w)
    users = collections.defaultdict(set)
    for j in w.jobs:
        users[week_of(j.submit, starts)].add(j.user)
    return [len(users[k]) for k in range(len(starts) - 1)]


def test_kth_replicas_keep_the_weeks_and_about_the_users_per_week(kth, tmp_path):
    """Tolerance: the mean number of active users per week within 10% of the log's, and
    the median over weeks of the relative difference at most 15% (measured on seeds
    0-11: 5% and 5% at worst). A replica is a valid SWF file (read back unchanged)."""
    base = _users_per_week(kth)
    for seed in range(4):
        r = replicate(kth, "resample", seed)
        got = _users_per_week(r)
        assert len(got) == len(base)  # the same weeks
        assert abs(statistics.mean(got) / statistics.mean(base) - 1) <= 0.10
        assert statistics.median(abs(g - b) / b for g, b in zip(got, base, strict=True)) \
            <= 0.15
    a = replicate(kth, "resample", 7)
    assert a.jobs == replicate(kth, "resample", 7).jobs
    assert a.jobs != replicate(kth, "resample", 8).jobs
    assert a.capacity == kth.capacity and a.name.endswith("+resample(7)")
    write_swf(tmp_path / "r.swf", r)
    back = read_swf(tmp_path / "r.swf")
    assert back.cleaning.jobs_kept == len(r)  # nothing dropped by the reader's rules
    counts = dict(back.cleaning.counts)
    assert counts.pop("zero_runtime") == sum(j.runtime == 0 for j in r.jobs)  # a note
    assert not any(counts.values())  # nothing altered
    assert [dataclasses.astuple(j) for j in back.jobs] == [dataclasses.astuple(j)
                                                           for j in r.jobs]
    assert back.header["UnixStartTime"] == kth.header["UnixStartTime"]


def test_resample_options_are_checked(kth):
    with pytest.raises(ValueError, match="long_term must be an integer"):
        replicate(kth, "resample", 0, long_term=0)
    short = dataclasses.replace(kth, jobs=kth.jobs[:500], cleaning=None)
    kept = replicate(short, "resample", 0, long_term=1)  # every user long-term: the log
    assert [dataclasses.replace(j, id=0) for j in kept.jobs] == [
        dataclasses.replace(j, id=0) for j in short.jobs]


def _first_weeks(w: Workload, r: Workload) -> collections.Counter:
    """Week (of 604,800 s from the log's first submit) in which each temporary user copy
    of the replica ``r`` of the hand log starts; the long-term user 1 left out."""
    first: dict[int, int] = {}
    for j in r.jobs:
        if j.user != 1:
            key = j.user if j.user >= 0 else ("job", j.id)
            first.setdefault(key, (j.submit - w.jobs[0].submit) // WEEK)
    return collections.Counter(first.values())


def test_users_multiplies_the_temporary_users_drawn_per_week():
    """The hand log starts one temporary user a week. users = 2: exactly two a week
    (every copy a user of its own, the unknown user's job included); users = 1.5: one,
    plus one with probability 1/2 (about 1.5 a week over seeds); users = 1: the replica
    without the option; the long-term user is kept either way."""
    w = _hand()
    uniq = dataclasses.replace(w, jobs=tuple(dataclasses.replace(j, user=100 + j.id)
                                             if j.user == -1 else j for j in w.jobs))
    for seed in range(8):
        r = replicate(uniq, "resample", seed, long_term=3, users=2)
        assert _first_weeks(uniq, r) == {0: 2, 1: 2, 2: 2, 3: 2}
        assert sum(j.user == 1 for j in r.jobs) == 8
        assert r.name == f"hand+resample({seed},users=2)"
        assert replicate(w, "resample", seed, long_term=3, users=1.0).jobs == \
            replicate(w, "resample", seed, long_term=3).jobs
    counts = [n for seed in range(200) for n in
              _first_weeks(uniq, replicate(uniq, "resample", seed, long_term=3,
                                           users=1.5)).values()]
    assert set(counts) == {1, 2}
    assert abs(statistics.mean(counts) - 1.5) < 0.06  # 800 weeks: sd of the mean 0.018
    a = replicate(uniq, "resample", 3, long_term=3, users=1.5)
    assert a.jobs == replicate(uniq, "resample", 3, long_term=3, users=1.5).jobs


def test_users_raises_the_offered_load_of_a_log_of_temporary_users():
    """lublin_256: every job of unknown user is a temporary user of its own, so the
    offered load follows users (measured: 1.00 / 1.52 / 2.05 over seeds 0-1, the log
    1.06; tolerance 10%)."""
    from instances.synthetic import offered_load

    w = load_trace("lublin_256")
    base = statistics.mean(offered_load(replicate(w, "resample", s)) for s in range(2))
    for users in (1.5, 2.0):
        got = statistics.mean(offered_load(replicate(w, "resample", s, users=users))
                              for s in range(2))
        assert abs(got / base / users - 1) <= 0.10, (users, got, base)


@pytest.mark.parametrize("kwargs,match", [
    ({"users": 0}, r"users must be a finite number in \(0, 100\]"),
    ({"users": -1.0}, "users must be"),
    ({"users": float("nan")}, "users must be"),
    ({"users": float("inf")}, "users must be"),
    ({"users": 101}, "users must be"),
    ({"users": True}, "users must be"),
    ({"users": "2"}, "users must be"),
])
def test_bad_users_are_refused_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        replicate(_hand(), "resample", 0, **kwargs)


def test_users_acts_or_is_refused():
    with pytest.raises(ValueError, match="users applies to 'resample' only, not 'jitter'"):
        replicate(_hand(), "jitter", 0, users=1.2)
    with pytest.raises(ValueError, match="users=1.2 has nothing to act on: every user"):
        replicate(_hand(), "resample", 0, long_term=1, users=1.2)
