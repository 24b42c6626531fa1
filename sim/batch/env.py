"""A Gymnasium environment on the batch machine: an agent picks which waiting job starts next.

``SchedulingEnv`` replays a window of a workload (a bundled trace, an SWF file or a
``Workload``) on an empty machine of ``P`` processors. Jobs are killed at their requested
time (the papers' setting), so a started job holds its processors for ``min(runtime,
requested)`` seconds. Times are integer seconds.

The decision protocol (RLScheduler's)
-------------------------------------
The agent is asked whenever at least one job is waiting, after every event of the current
instant (ends, then arrivals) has been processed. The action is the index of a waiting
job in submit order (0 = the oldest waiting job); only the first ``obs_jobs`` waiting jobs
are selectable, and ``info["action_mask"]`` (int8, length ``obs_jobs``) marks them;
``action_masks()`` returns the same mask as booleans (the method sb3-contrib's
``MaskablePPO`` calls). What an action outside the mask does is ``invalid_action``:

``"raise"`` (default)
    ``ValueError`` naming the action; the environment never substitutes one.
``"oldest"``
    The action is replaced by 0, the oldest waiting job (always valid), and the step
    goes on; ``info["invalid_action"]`` says whether this step's action was replaced and
    ``info["invalid_actions"]`` counts the replacements of the episode.

- The picked job fits now: it starts now, and the agent is asked again (same instant).
- It does not fit: the environment advances time, event by event (ends, arrivals), until
  the picked job fits, and starts it then. With ``backfill="easy"`` the picked job is the
  head of EASY backfilling (Lifka 1995) for that wait: at the pick and at every later
  event instant it is reserved at its shadow time (the earliest time it fits by the
  running jobs' estimated ends, ``start + requested``), and every other waiting job that
  fits now and does not delay that reservation starts at once (first fit, in submit
  order). The shadow time at the pick is recorded as the job's promise. When every pick
  was the oldest waiting job the schedule is EASY's and declares ``head-reservation``,
  which the validator recomputes from the schedule alone (``sim.batch.evidence``);
  otherwise which job was the head is the agent's choice, which the schedule does not
  show, and it declares no guarantee (the promises are kept, unchecked). Without
  backfilling, oldest-only picks declare FCFS's ``fcfs-order``.
- When the queue is empty the environment advances to the next arrival; the episode
  ends (``terminated``) once every job of the window has started. There is no
  truncation.

Always choosing action 0 is therefore FCFS, and with ``backfill="easy"`` EASY, exactly:
the same start times as ``simulate(window, FCFS())`` / ``simulate(window, EASY())``
(``tests/batch/test_env.py`` checks it on windows of lublin_256, KTH-SP2 and SDSC-SP2).

Observation
-----------
A float32 vector of length ``4 * obs_jobs + 4``, every entry in [0, 1]. Row ``i`` (entries
``4i .. 4i+3``) describes the ``i``-th oldest waiting job, for ``i < obs_jobs``:

====  ======================================  =======================================
col   feature                                 scaling
====  ======================================  =======================================
0     wait so far ``w = now - submit`` (s)    ``w / (w + 3600)`` (0.5 at one hour)
1     requested processors ``p``              ``p / P``
2     estimate (requested time) ``r`` (s)     ``r / (r + 3600)``
3     fits now                                1.0 when ``p <=`` free processors, else 0.0
====  ======================================  =======================================

Rows past the queue are zero (a real row has ``p / P > 0``). The last four entries are
the machine's state: free processors / ``P``; queue length ``q`` (all waiting jobs) as
``q / (q + obs_jobs)``; time to the earliest estimated end of a running job ``d`` (s) as
``d / (d + 3600)`` (0 when nothing runs); the fraction of the window's jobs not yet
submitted.

With ``mask_obs=True`` the observation is a ``Dict`` of that vector (key
``"observation"``) and the mask (key ``"action_mask"``, ``MultiBinary(obs_jobs)``,
int8), the layout of masked-action agents that read the mask from the observation.

Registration
------------
Importing this module registers ``"schedsearch/Batch-v0"`` (entry point
``SchedulingEnv``, default ``trace="lublin_256"``): ``gymnasium.make(
"sim.batch.env:schedsearch/Batch-v0", window=32, backfill="easy")`` imports and makes
it in one call, with a spec (``check_env`` on it raises no warning). There is one
variant: the environment has one resource (processors) and is space-sharing; the
K-resource and time-sharing machines have no environment.

Rewards (``reward=``)
---------------------
``"bsld"``
    0 at every step; at the last step minus the window's average bounded slowdown
    (``sim.batch.metrics``, tau = 10 s).
``"wait"``
    0 at every step; at the last step minus the average wait, in hours.
``"bsld-step"``, ``"wait-step"``
    Shaped: at every step minus the sum, over the jobs started during the step (the
    picked job and any backfilled ones), of their bounded slowdown (their wait in
    hours), divided by the window's job count. A job's value is known when it starts,
    so the undiscounted return equals the terminal variant's reward.

At the last step ``info["metrics"]`` is ``sim.batch.metrics.summary`` of the episode's
schedule (the figures ``schedsearch simulate --json`` prints) and ``info["schedule"]`` the
``Schedule``; with ``check=True`` (default) the schedule has passed
``sim.batch.validate.validate``.
"""

from __future__ import annotations

import dataclasses
import heapq
import operator
import os
import time as _time
from bisect import bisect_left, insort
from typing import Any

import numpy as np

from instances.job import Workload
from sim.batch.machine import Schedule
from sim.batch.metrics import BSLD_TAU, summary
from sim.batch.policy import FCFS_ORDER, HEAD_RESERVATION
from sim.batch.validate import validate
from sim.extras import require

gym = require("gymnasium", "the Gymnasium environment (sim.batch.env)")
spaces = require("gymnasium.spaces", "the Gymnasium environment (sim.batch.env)")

REWARDS = ("bsld", "wait", "bsld-step", "wait-step")
BACKFILLS = (None, "easy")
INVALID_ACTIONS = ("raise", "oldest")
ENV_ID = "schedsearch/Batch-v0"
JOB_FEATURES = 4
MACHINE_FEATURES = 4
TIME_SCALE = 3600.0  # s: the half-saturation time of the wait and estimate features


class MaskedDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose ``sample()`` without a mask draws among the actions valid in
    the environment's current state (its ``action_mask``), so that the usual random-agent
    loop ``env.step(env.action_space.sample())`` only makes valid moves. Membership
    (``a in space``) is that of ``Discrete(n)``."""

    def __init__(self, n: int, seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self.current_mask = np.zeros(n, dtype=np.int8)
        self.current_mask[0] = 1

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None
               ) -> np.int64:
        if mask is None and probability is None:
            mask = self.current_mask
        return super().sample(mask=mask, probability=probability)


def _window_workload(w: Workload, start: int, length: int) -> Workload:
    """Jobs ``start .. start+length-1`` of ``w`` as a workload of their own (named
    ``"NAME[start:end]"``). A slice of a workload already checked by its constructor
    satisfies every rule of ``Workload`` (sorted submits, unique ids, demands within the
    capacity), so the per-job checks are not run again."""
    part = object.__new__(Workload)
    for name, value in (("jobs", w.jobs[start:start + length]), ("capacity", w.capacity),
                        ("name", f"{w.name}[{start}:{start + length}]"),
                        ("header", w.header), ("cleaning", None)):
        object.__setattr__(part, name, value)
    return part


class SchedulingEnv(gym.Env):
    """Pick the next job to start on a batch machine (see the module docstring).

    Parameters
    ----------
    trace : str, path or Workload
        A bundled trace name (``"lublin_256"``, ``"KTH-SP2"``, ...), an SWF path or a
        workload with one resource (processors).
    procs : int, optional
        Machine size (processors), overriding the log header (ignored for a Workload).
    window : int
        Jobs per episode when ``reset`` gets no ``options`` (>= 1, at most the trace).
    obs_jobs : int
        Waiting jobs shown and selectable (>= 1).
    backfill : {None, "easy"}
        EASY backfilling around each picked job while it waits.
    reward : {"bsld", "wait", "bsld-step", "wait-step"}
    seed : int, optional
        Seed of the first ``reset`` that is given none (random windows).
    check : bool
        Validate every episode's schedule with the independent validator.
    mask_obs : bool
        Observations as ``{"observation": vector, "action_mask": mask}``.
    invalid_action : {"raise", "oldest"}
        An action outside the mask raises, or is replaced by 0 (the oldest waiting job)
        and counted in ``info["invalid_actions"]``.
    """

    metadata = {"render_modes": []}

    def __init__(self, trace: str | os.PathLike[str] | Workload, *, procs: int | None = None,
                 window: int = 256, obs_jobs: int = 64, backfill: str | None = None,
                 reward: str = "bsld", seed: int | None = None, check: bool = True,
                 mask_obs: bool = False, invalid_action: str = "raise") -> None:
        super().__init__()
        if isinstance(trace, Workload):
            w = trace
        else:
            from sim.batch.runner import load_workload

            w = load_workload(trace, procs=procs)
        if w.K != 1:
            raise ValueError(f"trace: the environment has one resource (processors); "
                             f"{w.name or 'the workload'} has K = {w.K}")
        if len(w) == 0:
            raise ValueError("trace: the workload has no jobs")
        _check_count("window", window, 1, len(w), f"the trace has {len(w)} jobs")
        _check_count("obs_jobs", obs_jobs, 1)
        if backfill not in BACKFILLS:
            raise ValueError(f"backfill must be one of {BACKFILLS}, got {backfill!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if invalid_action not in INVALID_ACTIONS:
            raise ValueError(f"invalid_action must be one of {INVALID_ACTIONS}, "
                             f"got {invalid_action!r}")
        if not isinstance(mask_obs, bool):
            raise ValueError(f"mask_obs must be True or False, got {mask_obs!r}")
        self.workload = w
        self.P = w.procs
        self.window = window
        self.obs_jobs = obs_jobs
        self.backfill = backfill
        self.reward_kind = reward
        self.check = check
        self.mask_obs = mask_obs
        self.invalid_action = invalid_action
        self._invalid = 0
        self._init_seed = seed
        jobs = w.jobs
        self._sub_all = np.fromiter((j.submit for j in jobs), np.int64, len(jobs))
        self._procs_all = np.fromiter((j.demand[0] for j in jobs), np.int64, len(jobs))
        self._req_all = np.fromiter((j.requested for j in jobs), np.int64, len(jobs))
        runtime = np.fromiter((j.runtime for j in jobs), np.int64, len(jobs))
        self._run_all = np.minimum(runtime, self._req_all)
        self._killed_all = runtime > self._req_all
        vector = spaces.Box(0.0, 1.0, (JOB_FEATURES * obs_jobs + MACHINE_FEATURES,),
                            np.float32)
        self.observation_space = (spaces.Dict({"observation": vector,
                                               "action_mask": spaces.MultiBinary(obs_jobs)})
                                  if mask_obs else vector)
        self.action_space = MaskedDiscrete(obs_jobs)
        self.name = "env" + ("+easy" if backfill == "easy" else "")
        # the spec gymnasium.make would give (make replaces it by its own)
        self.spec = dataclasses.replace(gym.spec(ENV_ID), kwargs={
            "trace": trace, "procs": procs, "window": window, "obs_jobs": obs_jobs,
            "backfill": backfill, "reward": reward, "seed": seed, "check": check,
            "mask_obs": mask_obs, "invalid_action": invalid_action})
        self._done = True
        self.last_obs: np.ndarray | None = None
        self.last_info: dict[str, Any] = {}

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Start an episode on jobs ``start .. start+length-1`` of the workload
        (``options={"start": i, "length": n}``; ``length`` defaults to ``window``), or
        on a random window of ``window`` jobs drawn with the environment's generator."""
        if seed is None and self._np_random is None:
            seed = self._init_seed
        super().reset(seed=seed)
        options = options or {}
        unknown = sorted(set(options) - {"start", "length"})
        if unknown:
            raise ValueError(f"options: unknown key(s) {unknown}; known: ['length', 'start']")
        total = len(self.workload)
        length = options.get("length", self.window)
        _check_count("length", length, 1, total, f"the trace has {total} jobs")
        if "start" in options:
            start = options["start"]
            _check_count("start", start, 0, total - length,
                         f"a window of {length} jobs in a trace of {total}")
        else:
            start = int(self.np_random.integers(0, total - length + 1))
        self._begin(start, length)
        info = self._info()
        return self._view(), info

    def _begin(self, start: int, n: int) -> None:
        sl = slice(start, start + n)
        self._start, self._n = start, n
        sub = self._sub_all[sl]
        self._sub = sub.tolist()
        self._procs = self._procs_all[sl].tolist()
        self._req = self._req_all[sl].tolist()
        self._run = self._run_all[sl].tolist()
        # per-window arrays for the observation (the scaled constant features)
        # per-job rows of the observation: col 0 holds t0 - submit (s), col 3 the
        # processors; both are completed in _observe (wait scaling, fits now)
        req = self._req_all[sl].astype(np.float64)
        feat = np.empty((n, JOB_FEATURES), dtype=np.float32)
        feat[:, 0] = sub[0] - sub
        feat[:, 1] = self._procs_all[sl] / self.P
        feat[:, 2] = req / (req + TIME_SCALE)
        feat[:, 3] = self._procs_all[sl]
        self._feat = feat
        self._t0 = int(sub[0])
        self._now = self._sub[0]
        self._free = self.P
        self._queue: list[int] = []
        self._next = 0
        self._ends: list[tuple[int, int]] = []  # heap of (actual end, job)
        self._est: list[tuple[int, int]] = []  # sorted (estimated end, job) of running jobs
        self._startt = [-1] * n
        self._promises: dict[int, int] = {}
        self._oldest_only = True  # every pick so far was the oldest waiting job
        self._acc = 0.0  # shaped reward of the current step
        self._done = False
        self._steps = 0
        self._invalid = 0
        self._t_wall = _time.perf_counter()
        self._arrive()

    def _arrive(self) -> None:
        """Append the jobs submitted at ``now`` to the queue."""
        sub, n, q, now = self._sub, self._n, self._queue, self._now
        i = self._next
        while i < n and sub[i] == now:
            q.append(i)
            i += 1
        self._next = i

    def _advance(self) -> bool:
        """Move to the next event instant: process every end there, then every arrival.
        Returns whether a job ended."""
        ends = self._ends
        t = ends[0][0] if ends else None
        if self._next < self._n:
            ta = self._sub[self._next]
            if t is None or ta < t:
                t = ta
        self._now = t
        procs = self._procs
        est = self._est
        ended = False
        while ends and ends[0][0] == t:
            _, i = heapq.heappop(ends)
            self._free += procs[i]
            del est[bisect_left(est, (self._startt[i] + self._req[i], i))]
            ended = True
        self._arrive()
        return ended

    def _start_job(self, i: int) -> None:
        now = self._now
        self._startt[i] = now
        run = self._run[i]
        heapq.heappush(self._ends, (now + run, i))
        self._free -= self._procs[i]
        insort(self._est, (now + self._req[i], i))
        kind = self.reward_kind
        if kind == "bsld-step":
            wait = now - self._sub[i]
            self._acc += max(1.0, (wait + run) / max(run, BSLD_TAU))
        elif kind == "wait-step":
            self._acc += (now - self._sub[i]) / TIME_SCALE

    def _shadow(self, j: int) -> tuple[int, int]:
        """EASY's shadow time of job ``j`` (s) and the processors left beside it then."""
        need = self._procs[j]
        avail = self._free
        est = self._est
        procs = self._procs
        k, m = 0, len(est)
        while k < m:
            t = est[k][0]
            while k < m and est[k][0] == t:
                avail += procs[est[k][1]]
                k += 1
            if avail >= need:
                return t, avail - need
        raise RuntimeError(f"job {j} never fits")  # unreachable: demand <= P

    def _backfill(self, j: int, shadow: int = -1, extra: int = 0, first: int = 0) -> None:
        """Start every other waiting job that fits now and does not delay ``j``'s shadow
        time (EASY, first fit in submit order); ``shadow`` (s) and ``extra`` (processors
        free beside ``j`` then) when already known, else ``shadow=-1``. Only the jobs
        from queue position ``first`` on are candidates (the caller knows the others
        cannot start: see ``step``)."""
        q = self._queue
        if len(q) < 2 or self._free <= 0 or first >= len(q):
            return
        now = self._now
        procs, req = self._procs, self._req
        started = []
        for c in (q if first == 0 else q[first:]):
            pc = procs[c]
            if pc <= self._free and c != j:
                if shadow < 0:
                    shadow, extra = self._shadow(j)
                late = now + req[c] > shadow
                if not late or pc <= extra:
                    self._start_job(c)
                    started.append(c)
                    if late:
                        extra -= pc
                    if self._free <= 0:
                        break
        if started:
            gone = set(started)
            self._queue = [c for c in q if c not in gone]

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Start the waiting job ``action`` (index in submit order) as soon as it fits;
        see the module docstring for the protocol."""
        if self._done:
            raise RuntimeError("step() on a finished episode; call reset()")
        try:
            a = operator.index(action)
        except TypeError:
            try:
                a = operator.index(np.asarray(action).item())
            except (TypeError, ValueError):
                raise ValueError(f"action must be an integer job index, got {action!r}"
                                 ) from None
        q = self._queue
        k = min(len(q), self.obs_jobs)
        replaced = not 0 <= a < k
        if replaced:
            if self.invalid_action == "raise":
                raise ValueError(f"action {a} is outside the mask: {k} waiting job(s) "
                                 f"selectable (indices 0..{k - 1}, info['action_mask'])")
            a = 0
            self._invalid += 1
        j = q[a]
        self._oldest_only = self._oldest_only and a == 0
        self._acc = 0.0
        self._steps += 1
        if self._procs[j] <= self._free:
            del q[a]
            self._start_job(j)
        else:
            easy = self.backfill == "easy"
            if easy:
                shadow, extra = self._shadow(j)
                self._promises[j] = shadow
                self._backfill(j, shadow, extra)
            while True:
                before = len(self._queue)
                ended = self._advance()
                if self._procs[j] <= self._free:
                    break
                if easy:
                    # With no end since the last pass, free processors, the shadow time
                    # and the processors beside j are unchanged, and a job that did not
                    # start then cannot now (its end only moves past the shadow time):
                    # only the jobs that just arrived are candidates.
                    self._backfill(j, first=0 if ended else before)
            q = self._queue
            q.remove(j)
            self._start_job(j)
        while not self._queue:
            if self._next >= self._n:
                self._done = True
                break
            self._advance()
        kind = self.reward_kind
        reward = -self._acc / self._n if kind.endswith("-step") else 0.0
        info = self._info()
        info["invalid_action"] = replaced
        if self._done:
            info.update(self._finish())
            if kind == "bsld":
                reward = -info["metrics"]["avg_bounded_slowdown"]
            elif kind == "wait":
                reward = -info["metrics"]["avg_wait"] / TIME_SCALE
        return self._view(), float(reward), self._done, False, info

    def _finish(self) -> dict[str, Any]:
        n, s = self._n, self._start
        start = np.array(self._startt, dtype=np.int64)
        end = start + self._run_all[s:s + n]
        killed = self._killed_all[s:s + n].copy()
        jobs = self.workload.jobs
        promises = {jobs[s + i].id: t for i, t in self._promises.items()}
        sched = Schedule(
            workload=_window_workload(self.workload, s, n), policy=self.name, start=start,
            end=end, killed=killed, overrun="kill", promises=promises,
            guarantees=self._guarantees(), sim_seconds=_time.perf_counter() - self._t_wall)
        if self.check:
            validate(sched)
        return {"metrics": summary(sched), "schedule": sched}

    def _guarantees(self) -> frozenset[str]:
        """What the episode's schedule keeps: with every pick the oldest waiting job it is
        FCFS's (``fcfs-order``) or EASY's (``head-reservation``) schedule; with other
        picks the queue order was the agent's, and nothing is declared."""
        if not self._oldest_only:
            return frozenset()
        return frozenset({HEAD_RESERVATION if self.backfill == "easy" else FCFS_ORDER})

    # ------------------------------------------------------------------ views
    def _view(self) -> Any:
        """The observation: the vector, or with ``mask_obs`` the vector and the mask
        (call after ``_info``, which sets the mask)."""
        obs = self._observe()
        if self.mask_obs:
            return {"observation": obs, "action_mask": self.last_info["action_mask"].copy()}
        return obs

    def action_masks(self) -> np.ndarray:
        """The selectable actions of the current state (bool, length ``obs_jobs``): the
        first ``min(waiting, obs_jobs)`` are True. sb3-contrib's ``MaskablePPO`` calls
        this method."""
        return self.action_space.current_mask.astype(bool)

    def _observe(self) -> np.ndarray:
        m = self.obs_jobs
        obs = np.zeros(JOB_FEATURES * m + MACHINE_FEATURES, dtype=np.float32)
        q = self._queue
        nq = len(q)
        k = nq if nq < m else m
        now, free = self._now, self._free
        if k:
            rows = obs[:JOB_FEATURES * k].reshape(k, JOB_FEATURES)
            rows[:] = self._feat.take(q[:k], axis=0)
            w = rows[:, 0]  # holds -submit + offset: the wait once now is added
            w += np.float32(now - self._t0)
            w /= w + np.float32(TIME_SCALE)
            f = rows[:, 3]  # holds the processors: 1.0 where they fit
            np.less_equal(f, np.float32(free), out=f)
        tail = obs[JOB_FEATURES * m:]
        est = self._est
        d = est[0][0] - now if est else 0
        tail[:] = (free / self.P, nq / (nq + m), d / (d + TIME_SCALE),
                   (self._n - self._next) / self._n)
        self.last_obs = obs
        return obs

    def _info(self) -> dict[str, Any]:
        mask = np.zeros(self.obs_jobs, dtype=np.int8)
        mask[:min(len(self._queue), self.obs_jobs)] = 1
        self.action_space.current_mask = mask
        info = {"action_mask": mask, "now": self._now, "waiting": len(self._queue),
                "invalid_actions": self._invalid}
        self.last_info = info
        return info

    def waiting(self) -> dict[str, np.ndarray]:
        """The selectable waiting jobs (the first ``obs_jobs``, in submit order), unscaled:
        ``submit``, ``wait``, ``requested`` (s) and ``procs`` (int64 arrays)."""
        idx = np.array(self._queue[:self.obs_jobs], dtype=np.intp)
        s = self._start
        sub = self._sub_all[s + idx] if len(idx) else np.zeros(0, np.int64)
        return {"submit": sub, "wait": self._now - sub,
                "requested": self._req_all[s + idx] if len(idx) else np.zeros(0, np.int64),
                "procs": self._procs_all[s + idx] if len(idx) else np.zeros(0, np.int64)}

    @property
    def now(self) -> int:
        """The current time (s)."""
        return self._now


def _check_count(name: str, value: Any, lo: int, hi: int | None = None,
                 why: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < lo or (hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        extra = f" ({why})" if why else ""
        raise ValueError(f"{name} must be {rng}{extra}, got {value}")


def _register() -> None:
    """Register ``ENV_ID`` once (a second import of this module keeps the first)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="sim.batch.env:SchedulingEnv",
                     kwargs={"trace": "lublin_256"})


_register()
