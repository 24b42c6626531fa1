"""The optimal-insertion policy (registered as ``slack-optimal``).

It is ``sim.batch.slack_scheduler.SlackScheduler`` (the slack-based priority scheduler's
state machine) with the exact :class:`models.slack_insertion.inserter.CpsatInserter`. It
lives here, beside its inserter, because the dependency rule allows no other place:
``sim`` sits below ``models`` (so ``sim.batch`` may not import an exact model), and
``heuristics`` and ``models`` never import each other (so it cannot sit beside
``heuristics.slack.SlackPolicy``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from models.slack_insertion.inserter import CpsatInserter

__all__ = ["OptimalInsertionPolicy"]


def OptimalInsertionPolicy(  # noqa: N802 (a factory named like the policy it builds)
    *,
    sf: float = 3.0,
    awt: float = 2401.0,
    alpha_u: float = 1.0,
    alpha_t: float = 1.0,
    alpha_p: float = 1.0,
    alpha_f: float = 1.0,
    time_limit: float | None = 10.0,
    seed: int = 0,
    reset_slack: bool = True,
    priorities: Mapping[int, tuple[float, float]] | None = None,
    default_priority: float = 0.0,
    record: bool = False,
    check: bool = False,
    order: str | None = None,
    solver: str = "cpsat",
    dtime: float | None = None,
) -> Any:
    """The slack-based priority scheduler with the optimal inserter (CP-SAT by default).

    The state machine is ``sim.batch.slack_scheduler.SlackScheduler``; at every insert and
    remove it calls :class:`CpsatInserter` (with ``solver``), so it differs from
    ``SlackPolicy`` only in how each insertion problem is solved.

    Parameters
    ----------
    sf : float
        Slack factor SF.
    awt : float
        Average wait time AWT, seconds.
    alpha_u, alpha_t, alpha_p, alpha_f : float
        Price exponents; ``alpha_t`` must be 1 (the CP-SAT model is linear in delays).
    time_limit : float, optional
        Solver seconds per insertion (default 10); with ``dtime``, the wall-clock guard.
    dtime : float, optional
        CP-SAT's deterministic time limit per stage (``--set dtime=...``; CP-SAT only):
        the same inputs then give the same schedule on any machine while the guard does
        not fire (``inserter.stats["guard"]`` counts the calls that reached it).
    seed : int
        Solver seed.
    reset_slack, priorities, default_priority, record, check
        See ``sim.batch.slack_scheduler.SlackScheduler``; ``priorities`` is the table
        job id -> (UP, PP) of ``instances.priorities.priorities_of``.
    order : None
        Accepted so the CLI's ``--order`` can be passed through; any value other than
        None or ``"optimal"`` raises ValueError (this policy has no compress order).
    solver : str
        The exact solver of each insertion (``--set solver=...``): ``"cpsat"`` (default),
        ``"ilp"``, ``"portfolio"`` (CP-SAT, the certified LP bound, CP-SAT on the domains
        it fixes; :mod:`models.slack_insertion.portfolio`), or a combination such as
        ``"cpsat+scip"`` (members in turn within ``time_limit``, best schedule of all kept;
        :mod:`models.portfolio`).

    Returns
    -------
    SlackScheduler
        Named ``"slack-optimal"``; its ``inserter.stats`` counts proved and stopped calls.
    """
    from sim.batch.slack_scheduler import SlackScheduler

    if order not in (None, "optimal"):
        raise ValueError(f"slack-optimal has no compress order; got order={order!r}")
    if isinstance(alpha_t, bool) or alpha_t != 1.0:
        raise ValueError(f"slack-optimal needs alpha_t = 1 (CP-SAT model), got {alpha_t!r}")
    return SlackScheduler(
        CpsatInserter(time_limit=time_limit, seed=seed, solver=solver, dtime=dtime),
        sf=sf, awt=awt,
        alpha_u=alpha_u, alpha_t=alpha_t, alpha_p=alpha_p, alpha_f=alpha_f, reset_slack=reset_slack,
        priorities=priorities, default_priority=default_priority, record=record, check=check,
        name="slack-optimal")
