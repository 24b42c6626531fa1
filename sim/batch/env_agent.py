"""A user's agent for ``SchedulingEnv``, run in a worker process that a time limit can stop.

An agent is a callable ``act(obs, info) -> action`` named ``MODULE:NAME`` (imported from
the current directory or ``PYTHONPATH``) or by an entry point of the group
``schedsearch.agents``. It sees what an agent sees in training: the observation and the
``info`` dict of the last ``reset``/``step`` (``info["action_mask"]`` marks the
selectable jobs). An optional attribute ``env_options`` (a dict) gives the keyword
arguments of ``SchedulingEnv`` it was trained with (``backfill``, ``obs_jobs``,
``reward``, ``mask_obs``); any other key is refused.

The agent is untrusted: its module is imported and its code runs only in a separate
process (``multiprocessing``, spawn), one per agent, reused across windows. The worker
imports the agent and reports its ``env_options`` first (a module that does not import or
load within ``time_limit`` seconds, or bad options, is a ValueError naming the agent); a
window that takes longer than ``time_limit`` seconds kills the process (a fresh one serves
the next window). The worker only returns the
agent's actions: the caller replays them in its own environment (``replay``), so the
metrics come from the project's code and its validator, never from the agent's process.
An action outside the mask, an exception in the agent, a crash or the time limit make a
failed window whose reason names the agent, the step and the action.
"""

from __future__ import annotations

import multiprocessing as mp
import operator
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances.job import Workload
from sim.sandbox import wait

AGENT_GROUP = "schedsearch.agents"
#: keys an agent's ``env_options`` may set
ENV_OPTIONS = ("backfill", "obs_jobs", "reward", "mask_obs")


class AgentFailure(Exception):
    """A window the agent did not finish: the message names the agent and the reason."""


@dataclass(frozen=True)
class AgentSpec:
    """A user's agent: ``ref`` (``MODULE:NAME``) shown as ``name``."""

    name: str
    ref: str


def entry_point_agents() -> dict[str, str]:
    """Agents registered by installed packages: name -> ``module:callable``."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=AGENT_GROUP)}


def _load(ref: str) -> Any:
    from sim.plugins import load_reference

    return load_reference(ref, what="agent")


def resolve_agent(name: str) -> AgentSpec:
    """``MODULE:NAME`` or an entry point's name as an ``AgentSpec``; a malformed
    reference is a ValueError. Nothing of the agent is imported here (the worker does)."""
    ref = entry_point_agents().get(name, name)
    module, sep, attr = ref.partition(":")
    if not sep or not all(p.isidentifier() for p in [*module.split("."), *attr.split(".")]):
        raise ValueError(f"agent {name!r}: expected MODULE:NAME (for example mymod:act)")
    return AgentSpec(name, ref)


def check_options(name: str, opts: Any) -> dict[str, Any]:
    """An agent's ``env_options`` as checked keyword arguments of ``SchedulingEnv``
    (ValueError naming the agent and the option)."""
    if not isinstance(opts, dict):
        raise ValueError(f"agent {name!r}: env_options must be a dict, got "
                         f"{type(opts).__name__}")
    unknown = sorted(map(str, set(opts) - set(ENV_OPTIONS)))
    if unknown:
        raise ValueError(f"agent {name!r}: env_options {unknown} not among {list(ENV_OPTIONS)}")
    from sim.batch.env import SchedulingEnv

    try:  # the options are checked by the environment itself, on a one-job machine
        SchedulingEnv(_one_job(), window=1, **opts)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"agent {name!r}: env_options: {exc}") from None
    return dict(opts)


def _one_job() -> Workload:
    from instances.job import Job

    return Workload(jobs=(Job(id=1, submit=0, runtime=1, requested=1, demand=(1,)),),
                    capacity=(1,), name="check")


def _action(a: Any) -> int:
    try:
        return operator.index(a)
    except TypeError:
        return operator.index(np.asarray(a).item())


def play(act: Any, workload: Workload, options: dict[str, Any]) -> list[int]:
    """The agent's actions on the whole of ``workload`` (one episode). Raises
    AgentFailure naming the step and the action on an invalid action or an exception."""
    from sim.batch.env import SchedulingEnv

    env = SchedulingEnv(workload, window=len(workload), check=False, **options)
    obs, info = env.reset(options={"start": 0, "length": len(workload)})
    actions: list[int] = []
    done = False
    while not done:
        step = len(actions)
        try:
            raw = act(obs, info)
        except Exception as exc:  # the agent's own bug, reported with its step
            raise AgentFailure(f"raised {type(exc).__name__} at step {step}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        try:
            a = _action(raw)
        except (TypeError, ValueError):
            raise AgentFailure(f"returned {raw!r} at step {step}, not an integer job index"
                               ) from None
        k = int(info["action_mask"].sum())
        if not 0 <= a < k:
            raise AgentFailure(f"returned invalid action {a} at step {step} "
                               f"({k} waiting job(s) selectable: 0..{k - 1})")
        actions.append(a)
        obs, _, done, _, info = env.step(a)
    return actions


def replay(actions: list[int], workload: Workload, options: dict[str, Any]
           ) -> dict[str, Any]:
    """Replay ``actions`` on ``workload`` in a fresh environment that validates the
    schedule; the episode's ``summary`` metrics. Raises AgentFailure when the actions
    do not make a full, valid episode."""
    from sim.batch.env import SchedulingEnv

    env = SchedulingEnv(workload, window=len(workload), check=True, **options)
    env.reset(options={"start": 0, "length": len(workload)})
    info: dict[str, Any] = {}
    for step, a in enumerate(actions):
        try:
            _, _, done, _, info = env.step(a)
        except (ValueError, RuntimeError) as exc:
            raise AgentFailure(f"action {a} at step {step} does not replay: {exc}") from None
        if done:
            if step != len(actions) - 1:
                break
            return info["metrics"]
    raise AgentFailure(f"{len(actions)} actions do not make the episode of "
                       f"{len(workload)} jobs")


def _serve(conn: Any, name: str, ref: str, cwd: str) -> None:
    """The worker: load the agent, report its options, then play every workload
    received until ``None``. What the agent prints goes to standard error, never into
    the command's output."""
    from sim.sandbox import stdout_to_stderr

    stdout_to_stderr()
    if cwd not in sys.path:
        sys.path.append(cwd)
    try:
        act = _load(ref)
        options = check_options(name, getattr(act, "env_options", None) or {})
    except Exception as exc:  # the user's module may raise anything while importing
        conn.send(("error", str(exc) if isinstance(exc, ValueError)
                   else f"agent {name!r}: {type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", options))
    while True:
        job = conn.recv()
        if job is None:
            return
        try:
            conn.send(("ok", play(act, job, options)))
        except AgentFailure as exc:
            conn.send(("error", str(exc)))
        except Exception as exc:  # the environment refusing what the agent set up
            conn.send(("error", f"{type(exc).__name__}: {exc}"))


class AgentRunner:
    """One worker process for an agent; ``run(window)`` returns its metrics or raises
    AgentFailure. Use as a context manager (the worker is stopped on exit)."""

    def __init__(self, spec: AgentSpec, time_limit: float | None = 60.0) -> None:
        self.spec = spec
        self.time_limit = time_limit
        self.options: dict[str, Any] | None = None
        self._proc: Any = None
        self._conn: Any = None

    def __enter__(self) -> AgentRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> dict[str, Any]:
        """Start the worker and wait for the agent to load; its ``env_options``.
        ValueError naming the agent when it does not load within the time limit, fails
        to import, or has bad options."""
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, daemon=True, args=(
            child, self.spec.name, self.spec.ref, os.getcwd()))
        self._proc.start()
        child.close()
        self._conn = parent
        name = self.spec.name
        try:
            if not wait(parent, self.time_limit):
                raise ValueError(f"agent {name!r}: did not load within the time limit of "
                                 f"{self.time_limit:g} s")
            kind, value = parent.recv()
        except (EOFError, OSError):
            self._proc.join(5.0)
            code = self._proc.exitcode
            self._kill()
            raise ValueError(f"agent {name!r}: worker process ended while loading (exit "
                             f"code {code})") from None
        except ValueError:
            self._kill()
            raise
        if kind != "ready":
            self._kill()
            raise ValueError(str(value))
        options = check_options(name, value)  # checked here too: the worker is the agent's
        if self.options is not None and options != self.options:
            self._kill()
            raise AgentFailure(f"agent {name!r}: env_options changed between workers")
        self.options = options
        return options

    def close(self) -> None:
        """Stop the worker (asked first, killed when it does not exit at once)."""
        if self._proc is None:
            return
        try:
            self._conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self._proc.join(1.0)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()
        self._conn.close()
        self._proc = self._conn = None

    def _kill(self) -> None:
        self._proc.kill()
        self._proc.join()
        self._conn.close()
        self._proc = self._conn = None

    def run(self, window: Workload) -> dict[str, Any]:
        """The agent's episode on ``window``, replayed and validated here."""
        name = self.spec.name
        if self._proc is None:
            try:
                self.start()
            except ValueError as exc:
                raise AgentFailure(str(exc)) from None
        try:
            self._conn.send(window)
            ready = wait(self._conn, self.time_limit)
        except (BrokenPipeError, OSError):
            ready = True
        if not ready:
            self._kill()
            raise AgentFailure(f"agent {name!r}: stopped at the time limit of "
                               f"{self.time_limit:g} s")
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError):
            self._proc.join(5.0)
            code = self._proc.exitcode
            self._kill()
            raise AgentFailure(f"agent {name!r}: worker process ended (exit code {code})"
                               ) from None
        if kind != "ok":
            raise AgentFailure(f"agent {name!r}: {value}")
        try:
            return replay(value, window, dict(self.options or {}))
        except AgentFailure as exc:
            raise AgentFailure(f"agent {name!r}: {exc}") from None
