"""The batch (space-shared) machine: K resources, jobs arrive, start, end or are killed.

One simulation takes a workload and a policy and returns a ``Schedule``: the start and
end time of every job, whether it was killed at its requested time, and the policy's
promises for the validator. :func:`simulate` runs it on the engine asked for: the Python
reference (:mod:`sim.batch.reference`), the compiled one (:mod:`sim.batch.fast.run`), or
the one :mod:`sim.batch.engine` chooses for the work at hand. Times are integer seconds.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping

from instances.job import Workload
from sim.batch.engine import ENGINE_CHOICES, ENGINES, choose_engine, engine_choice
from sim.batch.policy import Policy, compiled_kernels
from sim.batch.reference import simulate_python
from sim.batch.schedule import OVERRUN_MODES, PolicyError, Schedule

__all__ = ["ENGINES", "ENGINE_CHOICES", "OVERRUN_MODES", "PolicyError", "Schedule",
           "choose_engine", "simulate"]


def simulate(
    workload: Workload,
    policy: Policy,
    *,
    overrun: str = "kill",
    progress: Callable[[int], None] | None = None,
    engine: str = "python",
    dependencies: Mapping[int, tuple[int, int]] | None = None,
) -> Schedule:
    """Run ``policy`` on ``workload`` from an empty machine, on the engine chosen.

    Parameters
    ----------
    workload, policy, overrun, progress
        As in :func:`sim.batch.reference.simulate_python`.
    engine : {"python", "compiled", "auto"}
        ``"python"``: :func:`sim.batch.reference.simulate_python`, the reference.
        ``"compiled"`` runs :func:`sim.batch.fast.run.simulate_compiled` (numba): the same
        schedule for the policies it implements, a ValueError naming anything else
        (``sim.batch.fast.support.unsupported``). ``"auto"`` runs whichever
        :func:`sim.batch.engine.engine_choice` picks for this workload and policy (the
        schedule is the same either way) and records why in ``Schedule.engine_reason``.
    dependencies : mapping, optional
        User feedback (as in :func:`sim.batch.reference.simulate_python`): the Python
        engine only. ``"compiled"`` is refused with it (the compiled engine replays the
        workload's submit times), and ``"auto"`` takes the Python engine and says so.

    Returns
    -------
    Schedule

    Notes
    -----
    Simultaneous events are processed in the order of ``sim.events``: every end at
    time t, then overrun notices, then every arrival at t (in workload order), and
    then the policy is asked once which jobs start at t. Jobs that start at t with a
    zero run length end at t and trigger another decision at t.
    """
    if overrun not in OVERRUN_MODES:
        raise ValueError(f"overrun must be one of {OVERRUN_MODES}, got {overrun!r}")
    reason = ""
    if dependencies:
        if engine == "compiled":
            raise ValueError(FEEDBACK_COMPILED)
        if engine == "auto":
            engine, reason = "python", FEEDBACK_AUTO
    if engine == "auto":
        choice = engine_choice(workload, policy, overrun=overrun)
        engine, reason = choice.engine, choice.reason
    if engine == "python":
        schedule = simulate_python(workload, policy, overrun=overrun, progress=progress,
                                   dependencies=dependencies)
    elif engine == "compiled":
        from sim.batch.fast.support import refuse_unsupported

        refuse_unsupported(policy, workload, overrun=overrun)  # before numba is imported
        from sim.batch.fast.run import simulate_compiled

        _say_if_compiling(policy)
        schedule = simulate_compiled(workload, policy, overrun=overrun, progress=progress)
    else:
        raise ValueError(f"engine must be one of {ENGINE_CHOICES}, got {engine!r}")
    return dataclasses.replace(schedule, engine_reason=reason) if reason else schedule


#: why a run with user feedback is refused on the compiled engine, and why ``auto`` takes
#: the Python one
FEEDBACK_COMPILED = ("--engine compiled: the compiled engine replays the log's submit times; "
                     "--feedback runs on the Python engine (--engine python or auto)")
FEEDBACK_AUTO = "user feedback (--feedback) runs on the Python engine only"


def _say_if_compiling(policy: Policy) -> None:
    """Say on stderr that this run compiles the kernels (a first use on this machine
    takes 30-90 s of CPU), so that the wait never surprises."""
    from sim.batch.fast import cache

    kernels = compiled_kernels(policy)
    if kernels and not cache.kernels_cached(kernels):
        print("schedsearch: compiling the compiled engine's kernels (first use on this "
              "machine, 30-90 s; `schedsearch compile` does it once, at install)...",
              file=sys.stderr, flush=True)
