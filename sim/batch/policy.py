"""The protocol through which a scheduler plugs into the batch simulator.

The simulator owns the machine state. A policy receives events (arrival, end,
overrun notice) and, once all events of an instant have been delivered, is asked which
waiting jobs to start now. It never touches the simulator's state; the simulator
checks every decision (the job is waiting, it fits now) and raises on a violation.

Times are integer seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from instances.job import Job

#: Guarantee kinds a policy may declare (``Policy.guarantees``); the validator checks each.
HEAD_RESERVATION = "head-reservation"
"""A job never starts later than the reservation it got when it first became the head of
the queue (EASY); the reservations are ``promises()``."""
ARRIVAL_RESERVATION = "arrival-reservation"
"""Every job gets a reservation at its arrival and never starts later (conservative); the
reservations are ``promises()``, one per job."""
SLACK_BOUND = "slack-bound"
"""A job never starts later than its first scheduled start plus its slack (the
slack-based scheduler); the bounds are ``promises()`` (jobs with infinite slack have
none). Its terms (``guarantee_terms()``): ``max_slack``, the largest finite slack a job
can get (s), ``unbounded``, the ids of the jobs whose slack is infinite, and optionally
``placement: "breakpoint"`` when a new job is first placed no later than the end of the
current schedule (else within the insertion problem's horizon)."""
RESERVATION = "reservation"
"""A job that got a reservation never starts later than the first one it got (selective
reservation: a waiting job gets one at the first instant its expansion factor
``(t - submit + requested) / requested`` reaches the threshold); the reservations are
``promises()``. Its terms (``guarantee_terms()``): ``threshold``, the expansion factor
(>= 1), or ``adaptive: true`` when the threshold changes with the schedule."""
FCFS_ORDER = "fcfs-order"
"""Jobs start in submit order (ties in workload order): no job starts before one
submitted earlier."""
GUARANTEES = (HEAD_RESERVATION, ARRIVAL_RESERVATION, SLACK_BOUND, RESERVATION, FCFS_ORDER)
#: the kinds whose bounds are ``promises()``
PROMISE_KINDS = (HEAD_RESERVATION, ARRIVAL_RESERVATION, SLACK_BOUND, RESERVATION)

#: The compiled engine's kernels a policy may declare (``compiled_kernels()``), as
#: (module, function) of the numba entry points: the batch engine's event loop...
BATCH_KERNELS = (("sim.batch.fast.kernel", "run"),)
#: ...the slack scheduler's whole loop...
SLACK_KERNELS = (("sim.batch.fast.slack_loop", "run"),)
#: ...and, for a slack scheduler recording or checking its problems, the compiled slot
#: search under the Python loop
SLACK_SEARCH_KERNELS = (("heuristics.slack_kernel", "_decide"),)


@dataclass(frozen=True)
class MachineInfo:
    """What a policy may know about the machine.

    Parameters
    ----------
    capacity : tuple of int
        Capacity per resource; ``capacity[0]`` is processors.
    kill_at_request : bool
        True when jobs are killed at their requested time (the papers' setting), so a
        running job never outlives ``start + requested``.
    """

    capacity: tuple[int, ...]
    kill_at_request: bool = True


@runtime_checkable
class Policy(Protocol):
    """Online scheduler protocol (events in, start decisions out)."""

    name: str

    def reset(self, machine: MachineInfo) -> None:
        """Forget all state; called once before a simulation."""

    def on_arrival(self, job: Job, now: int) -> None:
        """``job`` was submitted at ``now``."""

    def on_end(self, job: Job, now: int) -> None:
        """``job`` ended at ``now`` (completed, or killed at its requested time)."""

    def on_overrun(self, job: Job, now: int) -> None:
        """``job`` is still running at ``start + requested`` (only when jobs are not
        killed at their request)."""

    def schedule(self, now: int) -> Sequence[Job]:
        """Jobs to start at ``now``; called once after all events of ``now``."""

    def next_wakeup(self, now: int) -> int | None:
        """A time > ``now`` at which ``schedule`` must be called even if no event
        happens, or None."""

    def promises(self) -> dict[int, int]:
        """Job id -> latest start time the policy guaranteed (its own guarantee, checked
        by the validator); empty when the policy promises nothing."""

    def guarantees(self) -> frozenset[str]:
        """The guarantee kinds (``GUARANTEES``) this policy keeps on the machine it was
        last reset for; the simulator records them in the schedule and the validator
        checks each. Called after the simulation."""


def guarantee_terms(policy: Policy) -> dict[str, dict[str, Any]]:
    """The terms under which ``policy`` declares its parametrised guarantees
    (:data:`SLACK_BOUND`, :data:`RESERVATION`), as the policy declares them (an optional
    method ``guarantee_terms()``: kind -> {term: value}); empty when it declares none.
    The validator recomputes each such guarantee from the schedule under its terms, and a
    parametrised kind declared without them is an error."""
    declared = getattr(policy, "guarantee_terms", None)
    if not callable(declared):
        return {}
    terms = declared()
    return {str(k): dict(v) for k, v in dict(terms).items()}


def compiled_kernels(policy: Policy) -> tuple[tuple[str, str], ...]:
    """The (module, function) numba kernels the compiled engine runs ``policy`` with, as
    the policy declares them (an optional method ``compiled_kernels()``); empty when the
    compiled engine does not run it."""
    declared = getattr(policy, "compiled_kernels", None)
    return tuple(declared()) if callable(declared) else ()


class BasePolicy:
    """Convenience base with no-op defaults for the optional parts of ``Policy``."""

    name = "base"

    def reset(self, machine: MachineInfo) -> None:
        self.machine = machine

    def on_overrun(self, job: Job, now: int) -> None:
        return None

    def next_wakeup(self, now: int) -> int | None:
        return None

    def promises(self) -> dict[int, int]:
        return {}

    def guarantees(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True)
class PolicySpec:
    """A policy resolved once, at the edge (CLI, sweep spec, Python call): everything a run
    needs to build it and record it, so no layer below asks the registry again.

    Made by :func:`sim.registry.policy_spec` from a registered name or a user's
    ``MODULE:FACTORY``; a misspelt option is refused there.

    Parameters
    ----------
    name : str
        The name it was resolved from (for the run's records).
    factory : callable
        Builds the policy from keyword options.
    options : tuple of (str, object)
        The validated options, sorted by name (a priority table is never among them: it
        is given to :meth:`build`).
    accepted : frozenset of str, optional
        The options the factory takes; None when it takes any keyword.
    defaults : tuple of (str, object)
        Every factory parameter with a default, and that default.
    """

    name: str
    factory: Callable[..., Any]
    options: tuple[tuple[str, Any], ...] = ()
    accepted: frozenset[str] | None = None
    defaults: tuple[tuple[str, Any], ...] = ()

    @property
    def takes_priorities(self) -> bool:
        """Whether the policy takes a priority table (its factory names ``priorities``,
        like the slack policies)."""
        return self.accepted is not None and "priorities" in self.accepted

    def with_options(self, **options: Any) -> PolicySpec:
        """This spec with ``options`` set; ValueError naming an option the factory does
        not take, or one whose default is a bool given anything but a bool (a flag either
        acts or is refused: a string such as ``"abc"`` would read as true)."""
        given = dict(options)
        unknown = sorted(set(given) - self.accepted) if self.accepted is not None else []
        if unknown:
            raise ValueError(f"policy {self.name!r} does not take option(s) {unknown}; "
                             f"it takes {sorted(self.accepted or ())}")
        flags = {k for k, v in self.defaults if isinstance(v, bool)}
        for k in sorted(flags & set(given)):
            if not isinstance(given[k], bool):
                raise ValueError(f"policy {self.name!r}: option {k!r} must be true or false "
                                 f"(its default is {dict(self.defaults)[k]}), "
                                 f"got {given[k]!r}")
        merged = {**dict(self.options), **given}
        return replace(self, options=tuple(sorted(merged.items())))

    def config(self, priorities: str | None = None) -> dict[str, Any]:
        """The full configuration for a run's records: ``policy`` (the name), every factory
        parameter with its default, the options applied; a policy taking priorities
        records the scheme name ``priorities`` (never the table)."""
        out = {"policy": self.name, **dict(self.defaults), **dict(self.options)}
        if self.takes_priorities:
            out["priorities"] = priorities
        return out

    def build(self, priorities: Mapping[int, tuple[float, float]] | None = None) -> Policy:
        """A fresh policy; ``priorities`` (job id -> priority pair) goes to a policy that
        takes a table and is ignored by one that does not. ValueError when the factory's
        object does not follow :class:`Policy`."""
        options = dict(self.options)
        if priorities is not None and self.takes_priorities:
            options["priorities"] = priorities
        policy = self.factory(**options)
        if not isinstance(policy, Policy):
            missing = [m for m in ("name", "reset", "on_arrival", "on_end", "on_overrun",
                                   "schedule", "next_wakeup", "promises", "guarantees")
                       if not hasattr(policy, m)]
            raise ValueError(f"policy {self.name!r}: {type(policy).__name__} is not a policy "
                             f"(sim.batch.policy.Policy); it lacks {', '.join(missing)}")
        return policy
