"""Priority scenarios for the slack-based scheduler (Talby & Feitelson, IPPS'99).

The slack-based scheduler weights each job by ``p = (UP + PP + SP) / 3`` where UP (user
priority) and PP (political priority) are inputs in [0, 1] carried by the job
(``Job.user_priority``, ``Job.political_priority``) and SP is the scheduler's own
priority. The paper evaluates two scenarios on the KTH log, which this module assigns:

``equal``
    Every job gets ``UP = PP = 0``. All jobs are alike, so the cost ratios ``p_i / p_j``
    of the price are 1 up to the scheduler priority SP. We use 0 rather than 1/2 because
    the differential scenario below gives its ordinary jobs 0: ``equal`` is then exactly
    ``fifth`` without its high-priority jobs, so the two differ only in what the paper
    varies. (The paper does not state the value it used for equal priorities; with
    ``UP = PP = 0`` the initial slack is ``(1 - 1/6) * SF * AWT`` before SP is
    recomputed.) A different level can be given with ``level``.
``fifth``
    The paper's differential scenario: every fifth job in submit order (the 5th, 10th,
    ... job, i.e. positions 4, 9, 14, ... counting from 0) gets ``UP = PP = 1``; all
    others get ``UP = PP = 0``.

The returned workload is a new object; the input is never modified.
"""

from __future__ import annotations

import dataclasses

from instances.job import Job, Workload

SCHEMES = ("equal", "fifth")


def is_high_priority(position: int) -> bool:
    """Whether the job at 0-based submit ``position`` is high priority under ``fifth``."""
    return position % 5 == 4


def assign_priorities(workload: Workload, scheme: str, *, level: float = 0.0) -> Workload:
    """Return a copy of ``workload`` with UP and PP set by ``scheme``.

    Parameters
    ----------
    workload : Workload
    scheme : {"equal", "fifth"}
        See the module docstring.
    level : float
        UP = PP value of every job under ``equal`` and of the ordinary jobs under
        ``fifth``, in [0, 1]; default 0.

    Returns
    -------
    Workload
        Same jobs, capacity, name, header and cleaning report; only
        ``user_priority`` and ``political_priority`` are set.

    Raises
    ------
    ValueError
        Unknown scheme, or ``level`` outside [0, 1].
    """
    if scheme not in SCHEMES:
        raise ValueError(f"priority scheme must be one of {SCHEMES}, got {scheme!r}")
    if not (0.0 <= float(level) <= 1.0):
        raise ValueError(f"priority level must be in [0, 1], got {level!r}")
    jobs: list[Job] = []
    for pos, job in enumerate(workload.jobs):
        v = 1.0 if scheme == "fifth" and is_high_priority(pos) else float(level)
        jobs.append(dataclasses.replace(job, user_priority=v, political_priority=v))
    return dataclasses.replace(workload, jobs=tuple(jobs))


def high_priority_ids(workload: Workload) -> set[int]:
    """Ids of the jobs that ``fifth`` makes high priority (positions 4, 9, 14, ...)."""
    return {j.id for pos, j in enumerate(workload.jobs) if is_high_priority(pos)}
