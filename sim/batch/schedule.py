"""What one batch simulation produces: the :class:`Schedule`, and the error a policy's
impossible decision raises. Both engines (the Python reference,
:mod:`sim.batch.reference`, and the compiled one, :mod:`sim.batch.fast.run`) build these;
neither imports the other's module for them. Times are integer seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from instances.job import Workload

OVERRUN_MODES = ("kill", "run")


class PolicyError(RuntimeError):
    """A policy returned an impossible decision (job not waiting, or not fitting now)."""


@dataclass(frozen=True)
class Schedule:
    """Outcome of one simulation.

    Parameters
    ----------
    workload : Workload
    policy : str
        Name of the policy that produced it.
    start, end : numpy.ndarray of int64
        Start and end time of each job (seconds), aligned with ``workload.jobs``.
    killed : numpy.ndarray of bool
        True where the job was killed at its requested time.
    overrun : str
        ``"kill"`` (jobs killed at their request) or ``"run"`` (run to completion).
    promises : dict
        Job id -> latest start the policy guaranteed.
    guarantees : frozenset of str
        The guarantee kinds the policy declared (``sim.batch.policy.GUARANTEES``); the
        validator checks each of them.
    terms : dict
        Kind -> {term: value}: the terms of the parametrised guarantees the policy
        declared (``sim.batch.policy.guarantee_terms``).
    sim_seconds : float
        Wall-clock seconds the simulation took.
    engine : {"python", "compiled"}
        The engine that ran it.
    engine_reason : str
        Why ``engine="auto"`` chose it (empty when the engine was named).
    """

    workload: Workload
    policy: str
    start: np.ndarray
    end: np.ndarray
    killed: np.ndarray
    overrun: str = "kill"
    promises: dict[int, int] = field(default_factory=dict)
    sim_seconds: float = 0.0
    guarantees: frozenset[str] = frozenset()
    engine: str = "python"
    engine_reason: str = ""
    terms: dict[str, dict[str, Any]] = field(default_factory=dict)
