"""Priority scenarios for the slack-based scheduler (Talby & Feitelson, IPPS'99).

The slack-based scheduler weights each job by ``p = (UP + PP + SP) / 3`` where UP (user
priority) and PP (political priority) are inputs in [0, 1] and SP is the scheduler's own
priority. UP and PP belong to the scenario, not to the job: :func:`priorities_of` returns a
table ``{job id: (UP, PP)}`` that is given to the slack policies (``priorities=``) and to
the sweep's metrics (high- and low-priority groups); ``instances.job.Job`` carries none.
The paper evaluates two scenarios on the KTH log:

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
    ... job, i.e. positions 4, 9, 14, ... counting from 0) gets ``UP = PP = high``
    (1 in the paper); all others get ``UP = PP = level``.

Positions count over the workload given, so a scenario over a whole log is computed
before the log is split into months (the table is keyed by job id and serves every month).
"""

from __future__ import annotations

from instances.job import Workload

SCHEMES = ("equal", "fifth")


def is_high_priority(position: int) -> bool:
    """Whether the job at 0-based submit ``position`` is high priority under ``fifth``."""
    return position % 5 == 4


def priorities_of(workload: Workload, scheme: str, *, level: float = 0.0,
                  high: float = 1.0) -> dict[int, tuple[float, float]]:
    """The table ``{job id: (UP, PP)}`` of ``scheme`` over ``workload``.

    Parameters
    ----------
    workload : Workload
        Jobs in submit order; positions count from its first job.
    scheme : {"equal", "fifth"}
        See the module docstring.
    level : float
        UP = PP of every job under ``equal`` and of the ordinary jobs under ``fifth``,
        in [0, 1]; default 0.
    high : float
        UP = PP of the high-priority jobs under ``fifth`` (positions 4, 9, 14, ...), in
        [0, 1]; default 1 (the paper's). Ignored under ``equal``.

    Returns
    -------
    dict of int to (float, float)
        One entry per job of ``workload``; the workload is not modified.

    Raises
    ------
    ValueError
        Unknown scheme, or ``level`` or ``high`` outside [0, 1].
    """
    if scheme not in SCHEMES:
        raise ValueError(f"priority scheme must be one of {SCHEMES}, got {scheme!r}")
    for name, v in (("level", level), ("high", high)):
        if not (0.0 <= float(v) <= 1.0):
            raise ValueError(f"priority {name} must be in [0, 1], got {v!r}")
    lo, hi = float(level), float(high)
    if scheme == "equal":
        return {j.id: (lo, lo) for j in workload.jobs}
    return {j.id: (hi, hi) if is_high_priority(pos) else (lo, lo)
            for pos, j in enumerate(workload.jobs)}


def high_priority_ids(workload: Workload) -> set[int]:
    """Ids of the jobs that ``fifth`` makes high priority (positions 4, 9, 14, ...)."""
    return {j.id for pos, j in enumerate(workload.jobs) if is_high_priority(pos)}
