"""What the compiled batch engine runs, decided without numba.

:func:`unsupported` names what a simulation asks that the compiled engine
(:mod:`sim.batch.fast.run`) does not implement, from the policy's class and options and the
workload alone: a run is refused for that reason (or ``auto`` takes the Python engine)
whether or not numba is installed, and before any kernel is imported or compiled.
"""

from __future__ import annotations

from typing import Any

from instances.job import Workload
from sim.batch.policy import compiled_kernels
from sim.batch.schedule import OVERRUN_MODES

#: BL's resource sets are bit masks of an int64
MAX_K = 62


def _compiled_classes() -> tuple[type, ...]:
    """The policy classes of :mod:`heuristics.backfill` the compiled engine runs (exactly
    these, not their subclasses)."""
    from heuristics.backfill import EASY, FCFS, Conservative, Unconstrained

    return (FCFS, EASY, Conservative, Unconstrained)


def _slack_unsupported(policy: Any) -> str | None:
    """Why the slack scheduler ``policy`` cannot run with the compiled search, or None."""
    from heuristics.slack import ORDERS, Inserter
    from sim.batch.slack_scheduler import SlackScheduler

    if type(policy) is not SlackScheduler:  # the compiled loop runs the class's own steps
        return (f"policy {type(policy).__name__}, a subclass of SlackScheduler (the "
                "compiled engine runs SlackScheduler itself)")
    ins = policy.inserter
    if type(ins) is not Inserter:
        return (f"the slack scheduler with inserter {type(ins).__name__} (the compiled "
                "engine runs heuristics.slack.Inserter's compress orders)")
    if ins.order not in ORDERS:
        return f"the slack scheduler's order {ins.order!r} (it runs {', '.join(ORDERS)})"
    if not ins.fast:
        return "the slack scheduler's Profile-based reference search (fast=False)"
    if ins.zero_slack != "move":
        return f"the slack scheduler's zero_slack={ins.zero_slack!r} (it runs 'move')"
    return None


def unsupported(policy: Any, workload: Workload | None = None, **options: Any) -> str | None:
    """Why the compiled engine cannot run this simulation, or None when it can.

    The compiled engine implements exactly the classes ``FCFS``, ``EASY``, ``Conservative``
    and ``Unconstrained`` of :mod:`heuristics.backfill` (not their subclasses), with every
    value of their options (``select``, ``window``, ``fullness``, ``bl_fallback``,
    ``bl_fullness``, ``ties``, ``compression``; ``compiled`` changes nothing; a
    ``predictor`` other than ``"user"`` is refused: the policy then declares no
    ``compiled_kernels()``), on a
    workload with submit times >= 0 and, with BL, at most ``MAX_K`` resources. Any further
    keyword in ``options`` (an engine option added to the Python engine, such as
    ``progress``) is refused unless it is None; ``overrun`` must be one of
    ``OVERRUN_MODES``. The slack scheduler (:class:`sim.batch.slack_scheduler.SlackScheduler`)
    runs with a :class:`heuristics.slack.Inserter` of one of the compress orders
    ``heuristics.slack.ORDERS`` on its fast search with ``zero_slack="move"`` (the class
    itself, not a subclass).
    """
    from sim.batch.slack_scheduler import SlackScheduler

    if isinstance(policy, SlackScheduler):
        why = _slack_unsupported(policy)
        if why is not None:
            return why
        return _unsupported_option(options)
    if type(policy) not in _compiled_classes():
        return (f"policy {type(policy).__name__} ({getattr(policy, 'name', '?')}; the "
                "compiled engine runs FCFS, EASY, Conservative and Unconstrained of "
                "heuristics.backfill and the slack scheduler's compress orders)")
    if not compiled_kernels(policy):  # e.g. EASY planning with runtime predictions
        return (f"policy {policy.name} (it declares no compiled kernel: it plans with "
                "runtime predictions, the compiled engine with the requests)")
    if workload is not None:
        cols = workload.columns()
        if len(cols) and cols.submit[0] < 0:
            return f"negative submit times (job {cols.id[0]})"
        if policy.params["select"] == "bl" and workload.K > MAX_K:
            return f"select='bl' with K = {workload.K} > {MAX_K} resources"
    return _unsupported_option(options)


def _unsupported_option(options: dict[str, Any]) -> str | None:
    """The first simulation option the compiled engine does not run (every option but
    ``overrun`` in :data:`OVERRUN_MODES` must be None), as ``name=value``; None if none."""
    for name, value in options.items():
        if name == "overrun":
            if value not in OVERRUN_MODES:
                return f"overrun={value!r}"
        elif value is not None:
            return f"{name}={value!r}"
    return None


def refuse_unsupported(policy: Any, workload: Workload | None = None, **options: Any) -> None:
    """Raise ValueError naming what the compiled engine does not run (:func:`unsupported`)."""
    why = unsupported(policy, workload, **options)
    if why is not None:
        raise ValueError(f"the compiled engine does not support {why}; use engine='python'")
