"""Seeded replicas of a log, so that a study on a trace has more than one run per cell.

A trace is one sample of a site's workload: simulating it again gives the same schedule,
so a mean over one run has no confidence interval. Each method below turns a log and a
seed into another plausible workload of the same site; the spread of a metric over seeds
is then the spread over such workloads (what the interval measures depends on the
method, and the report names it).

``resample``
    Zakay & Feitelson's workload resampling ("Workload resampling for performance
    evaluation of parallel job schedulers", ICPE 2013; Concurrency Computat.: Pract.
    Exper. 2014), week by week. The replica's submit times are the moved log's; their
    feedback (a job submitted as a reaction to the simulated end of its user's previous
    job) is the simulator's, with the dependency table of the replica
    (``instances.dependencies``; ``simulate --feedback``, a sweep workload's
    ``feedback``), which the replica's jobs make possible by keeping their log wait. The
    log is split into users (the jobs
    of one ``user`` id; each job of unknown user, -1, is a user of its own) and each
    user's jobs into sessions (:data:`SESSION_GAP`). On the log's weeks
    (:func:`instances.weeks.week_starts`: ISO weeks of the log's time zone, or weeks of
    604,800 s from the first submit without ``UnixStartTime``), a user whose sessions
    span at least ``long_term`` weeks (first to last session week, inclusive; default
    :data:`LONG_TERM` weeks) is long-term, every other user temporary. The replica:

    - keeps every long-term user as in the log, at its own times (Zakay & Feitelson
      repeat a long-term user's stream when the new log is longer than the log; a
      replica here has the log's length, so nothing repeats);
    - for each week ``w``, draws with replacement from all temporary users of the log
      as many temporary users as the log has temporary users whose first week is ``w``
      (``c_w``), times ``users`` (default 1), and moves each drawn user by whole weeks
      so that its first week is ``w``;
    - moves a session as a whole, by whole calendar weeks (weekday and local time of
      day kept), so jobs keep their user's sessions and the daily and weekly cycles;
    - keeps the log's span: jobs moved before the log's first submit or after its last
      submit are left out, as the log's own ends cut its users (so the replica has the
      log's number of weeks, and about as many active users in each week);
    - gives a temporary user drawn more than once a new ``user`` id for each further
      copy (above the log's largest), so two copies are two users (a job of unknown
      user keeps -1).

    Readings of the method: the threshold ``long_term`` is in weeks of span; long-term
    users are not moved (the log's heavy users avoid each other's busy weeks, which
    moving each of them independently would undo, raising the week-to-week spread of
    the offered work well above the log's), so replicas differ by their temporary
    users; the pool of temporary users is the whole log, the number drawn per week that
    of the log's same week (the log's weekly variation of new users is kept, not only
    its mean); submit times inside a week are the job's own (shifted by whole weeks
    only).

    The load by the number of users (Zakay & Feitelson change the load of a
    resampled log this way, not by compressing its times): ``users`` multiplies the
    number of temporary users drawn per week, ``users * c_w``, rounded by the seed's
    generator: down, plus one with probability the fraction (computed exactly from the
    decimal value of ``users``; an integer product draws nothing, so ``users = 1``
    gives the replica of the same seed without the option). The expected number drawn
    is ``users * c_w``; long-term users are kept as they are, so the offered work grows
    by less than ``users`` (by the temporary users' share of it); the offered load a
    replica gives, ``sum(procs * run) / (capacity * span of submits)``, is measured on
    it (``instances.synthetic.offered_load``; a sweep cell's ``offered_load``). A
    ``users`` above 1 with a log whose users are all long-term has nothing to act on
    and is refused. The sweep's ``load`` then compresses the replica's submit times,
    like a trace's: both act, the number of users first.
    Job ids are renumbered 1..n in submit order.
``jitter``
    Every run time multiplied by a factor drawn uniformly from ``[1 - amount, 1 +
    amount]`` (rounded to whole seconds); submit times and requested times are kept, so a
    job that now runs past its request is killed at it, as in the log.
``estimates``
    Requested times replaced by Tsafrir's model of user estimates
    (``instances.tsafrir.add_estimates``), run times kept.

Times are integer seconds. Every method keeps the machine (capacity) and returns a
workload named ``NAME+METHOD(seed)`` (``NAME+resample(seed,users=U)`` for ``users``
other than 1).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import Any

import numpy as np

from instances.job import Workload

METHODS = ("resample", "jitter", "estimates")
#: default half-width of the jitter factor's range
JITTER = 0.1
#: default span (weeks, first to last session week inclusive) from which a user is
#: long-term in ``resample``
LONG_TERM = 12
#: a user's job submitted more than this many seconds after the user's previous job
#: starts a new session (Zakay & Feitelson 2012 delimit sessions by the time between
#: submits, proven activity, rather than by the end of the previous job)
SESSION_GAP = 20 * 60
#: largest ``users`` factor of ``resample`` (a replica holds up to about this many
#: times the log's temporary users' jobs)
MAX_USERS = 100.0


def replicate(workload: Workload, method: str, seed: int, *, amount: float = JITTER,
              long_term: int = LONG_TERM, users: float = 1.0) -> Workload:
    """The replica of ``workload`` by ``method`` (module docstring) with ``seed``.

    ``amount`` is the half-width of the ``jitter`` factor's range, ``long_term`` the
    span in weeks from which a user is long-term in ``resample``, ``users`` the factor
    of the number of temporary users ``resample`` draws per week (the load by the
    number of users); each applies to its method only.

    Raises
    ------
    ValueError
        An unknown method, an ``amount`` outside [0, 1), a ``long_term`` that is not an
        integer of at least 1, a ``users`` that is not a finite number in (0,
        :data:`MAX_USERS`] or is given (other than 1) to another method than
        ``resample``, or a workload the method cannot take (naming it).
    """
    if method not in METHODS:
        raise ValueError(f"replicate: unknown method {method!r}; one of {', '.join(METHODS)}")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) \
            or not 0 <= amount < 1:
        raise ValueError(f"replicate: amount must be in [0, 1), got {amount!r}")
    if isinstance(long_term, bool) or not isinstance(long_term, int) or long_term < 1:
        raise ValueError(f"replicate: long_term must be an integer number of weeks >= 1, "
                         f"got {long_term!r}")
    if isinstance(users, bool) or not isinstance(users, (int, float)) \
            or not math.isfinite(users) or not 0 < users <= MAX_USERS:
        raise ValueError(f"replicate: users must be a finite number in (0, {MAX_USERS:g}], "
                         f"got {users!r}")
    if users != 1 and method != "resample":
        raise ValueError(f"replicate: users applies to 'resample' only, not {method!r}")
    rng = np.random.default_rng(seed)
    name = f"{workload.name}+{method}({seed})"
    if users != 1:
        name = f"{workload.name}+{method}({seed},users={users:g})"
    if method == "estimates":
        from instances.tsafrir import add_estimates

        return add_estimates(workload, seed, name=name)
    if method == "jitter":
        factor = rng.uniform(1 - amount, 1 + amount, len(workload))
        jobs = tuple(dataclasses.replace(j, runtime=int(round(j.runtime * f)))
                     for j, f in zip(workload.jobs, factor, strict=True))
        return dataclasses.replace(workload, jobs=jobs, name=name, cleaning=None)
    return _resample(workload, rng, name, long_term, users)


def _sessions(workload: Workload) -> list[list[list[int]]]:
    """Per user (in order of first job), its sessions as lists of job positions: a new
    session starts when a job is submitted more than :data:`SESSION_GAP` s after the
    user's previous job."""
    streams: dict[Any, list[int]] = {}
    for i, j in enumerate(workload.jobs):
        streams.setdefault(j.user if j.user >= 0 else ("job", i), []).append(i)
    jobs = workload.jobs
    out = []
    for idx in streams.values():
        sessions = [[idx[0]]]
        for a, b in zip(idx, idx[1:], strict=False):
            if jobs[b].submit - jobs[a].submit > SESSION_GAP:
                sessions.append([])
            sessions[-1].append(b)
        out.append(sessions)
    return out


def _resample(workload: Workload, rng: np.random.Generator, name: str,
              long_term: int, users: float = 1.0) -> Workload:
    """Zakay & Feitelson's workload resampling (module docstring)."""
    from instances.weeks import week_of, week_starts

    if not workload.jobs:
        raise ValueError(f"replicate: {workload.name} has no jobs to resample")
    factor = Fraction(repr(float(users)))  # the decimal value, exactly
    jobs = workload.jobs
    starts = week_starts(workload)
    n_weeks = len(starts) - 1
    streams = []  # (sessions with their week, first week, span)
    for sessions in _sessions(workload):
        weeks = [week_of(jobs[s[0]].submit, starts) for s in sessions]
        streams.append((list(zip(weeks, sessions, strict=True)), weeks[0],
                        weeks[-1] - weeks[0] + 1))
    temporary = [u for u in streams if u[2] < long_term]
    placed: list[tuple[int, int, int, int]] = []  # (submit, job position, copy, user id)
    next_id = max((j.user for j in jobs), default=-1) + 1
    copy = 0
    for sessions, _, _ in (u for u in streams if u[2] >= long_term):
        for w, sess in sessions:
            placed += _moved(jobs, sess, starts, w, w, copy, None)
        copy += 1
    if factor != 1 and not temporary:
        raise ValueError(f"replicate: users={users:g} has nothing to act on: every user of "
                         f"{workload.name} is long-term (long_term={long_term} weeks)")
    arrivals = np.bincount([u[1] for u in temporary], minlength=n_weeks)
    seen: set[int] = set()
    for week, count in enumerate(arrivals.tolist()):
        count = drawn(count, factor, rng)
        for k in rng.integers(0, len(temporary), count).tolist():
            sessions, first, _ = temporary[k]
            uid = None
            if k in seen and jobs[sessions[0][1][0]].user >= 0:
                uid, next_id = next_id, next_id + 1
            seen.add(k)
            for w, sess in sessions:
                if w + week - first < n_weeks:
                    placed += _moved(jobs, sess, starts, w, w + week - first, copy, uid)
            copy += 1
    lo, hi = jobs[0].submit, jobs[-1].submit
    placed = sorted(p for p in placed if lo <= p[0] <= hi)
    out = []
    for n, (submit, i, _, uid) in enumerate(placed, 1):
        j = jobs[i]
        out.append(dataclasses.replace(j, id=n, submit=submit,
                                       user=j.user if uid < 0 else uid))
    if not out:
        raise ValueError(f"replicate: the resample of {workload.name} holds no jobs")
    return dataclasses.replace(workload, jobs=tuple(out), name=name, cleaning=None)


def drawn(count: int, users: Fraction, rng: np.random.Generator) -> int:
    """How many temporary users a week draws: ``users * count`` rounded down, plus one
    with probability the fraction (one uniform draw of ``rng``, made only when there is
    a fraction), so that the expectation is exactly ``users * count``."""
    x = users * count
    whole = math.floor(x)
    frac = x - whole
    return int(whole) + int(frac > 0 and rng.random() < float(frac))


def _moved(jobs: tuple, session: list[int], starts: list[int], w: int, to: int, copy: int,
           uid: int | None) -> list[tuple[int, int, int, int]]:
    """The jobs of ``session`` (in week ``w``) moved to week ``to``: ``(submit, position,
    copy, user id or -1 to keep it)``."""
    shift = starts[to] - starts[w]
    return [(jobs[i].submit + shift, i, copy, -1 if uid is None else uid) for i in session]
