"""One batch simulation on the compiled engine: the Python engine's schedule, on arrays.

``simulate_compiled(workload, policy, overrun=...)`` is :func:`sim.batch.machine.simulate`
for the policies of :mod:`heuristics.backfill` (FCFS, EASY, conservative with every
compression, unconstrained; the selections FF, BL and BB with all their options; jobs killed
at their request or run to completion): the same event order and the same decisions, hence
the same start array, ends, kills and promises (:mod:`tests.batch.test_compiled_engine`).
The slack scheduler of :mod:`heuristics.slack` (``SlackPolicy``, compress orders AST, AAT,
DU, DC and DP) runs whole in :mod:`sim.batch.fast.slack_loop` (event loop, scheduler and
the slot search of :mod:`heuristics.slack_kernel` in one compiled call); a run that
records its insertion problems or checks each schedule runs the Python event loop and
scheduler with the compiled slot search. Both make the same decisions, hence the same
schedule (:mod:`tests.batch.test_slack_loop`, :mod:`tests.batch.test_slack_kernel`). What
the compiled engine does not implement is refused by
:func:`sim.batch.fast.support.unsupported` (which needs no numba) with a ``ValueError``
naming it. Times are integer seconds.

Importing this module needs numba (``pip install 'schedsearch[fast]'``); the kernel is
compiled once and cached on disk (``cache=True``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from heuristics.compress_kernel import ERRORS
from instances.job import Workload
from sim.batch.fast import kernel as K
from sim.batch.fast.support import refuse_unsupported
from sim.batch.policy import MachineInfo, guarantee_terms
from sim.batch.schedule import PolicyError, Schedule

_SELECT = {"ff": K.FF, "bl": K.BL, "bb": K.BB}
_FALLBACK = {"ff": K.FB_FF, "next": K.FB_NEXT, "stop": K.FB_STOP}
_COMPRESSION = {"arrival": K.C_ARRIVAL, "start": K.C_START, "now": K.C_NOW, "none": K.C_NONE}


def _policy_code(policy: Any) -> int | None:
    from heuristics.backfill import EASY, FCFS, Conservative, Unconstrained

    return {FCFS: K.FCFS, EASY: K.EASY, Conservative: K.CONS,
            Unconstrained: K.UNC}.get(type(policy))


def arrays(workload: Workload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's job table ``JI`` (submit, runtime, requested filled), demands ``D``
    (n x K) and capacities."""
    cols = workload.columns()
    n = len(cols)
    JI = np.zeros((n, K.N_JI), np.int64)
    JI[:, 0], JI[:, 1], JI[:, 2] = cols.submit, cols.runtime, cols.requested
    JI[:, K.START:K.END + 1] = -1
    JI[:, K.RES] = -1
    D = np.array(cols.demand, np.int64, order="C")  # a writeable copy of the read-only view
    return JI, D, np.array(workload.capacity, np.int64)


def params(policy: Any, overrun: str) -> np.ndarray:
    """The kernel's parameter vector ``P`` for ``policy`` (already reset)."""
    p = policy.params
    P = np.zeros(K.N_P, np.int64)
    P[K.P_POL] = _policy_code(policy)
    P[K.P_SEL] = _SELECT[p["select"]]
    if P[K.P_POL] == K.FCFS:
        P[K.P_SEL] = K.FF  # FCFS never selects
    P[K.P_KILL] = overrun == "kill"
    P[K.P_WINDOW] = p["window"]
    P[K.P_FB] = _FALLBACK[p["bl_fallback"]]
    P[K.P_LARGEST] = p["bl_fullness"] == "largest"
    P[K.P_TIESLAST] = p["ties"] == "last"
    P[K.P_MULT] = p["fullness"] == "mult"
    P[K.P_COMPR] = _COMPRESSION[getattr(policy, "compression", "arrival")]
    return P


def simulate_compiled(workload: Workload, policy: Any, *, overrun: str = "kill",
                      progress: Callable[[int], None] | None = None) -> Schedule:
    """:func:`sim.batch.machine.simulate` on the compiled engine (module docstring).

    ``policy`` is reset (so that its option checks against the machine run, and its
    ``guarantees()`` are the Python engine's) but not driven. ``progress`` is called once,
    with the number of jobs, at the end. Raises ValueError naming what is not supported.
    """
    refuse_unsupported(policy, workload, overrun=overrun)
    from sim.batch.slack_scheduler import SlackScheduler

    if isinstance(policy, SlackScheduler):
        return _simulate_slack(workload, policy, overrun=overrun, progress=progress)
    t_wall = time.perf_counter()
    kill = overrun == "kill"
    policy.reset(MachineInfo(capacity=workload.capacity, kill_at_request=kill))
    JI, D, cap = arrays(workload)
    P = params(policy, overrun)
    ids = workload.columns().id
    err = K.run(D, JI, cap, P) if len(ids) else 0
    if err == K.STUCK:
        stuck = sorted(ids[JI[:, K.START] < 0].tolist())[:10]
        raise PolicyError(f"{policy.name}: jobs never started: {stuck}")
    if err < 0:
        raise ValueError(f"{policy.name}: compiled engine failed ({ERRORS.get(int(err), err)})")
    has = JI[:, K.HASP] == 1
    promises = dict(zip(ids[has].tolist(), JI[has, K.PROM].tolist(), strict=True))
    if progress is not None and len(ids):
        progress(len(ids))
    return Schedule(
        workload=workload,
        policy=policy.name,
        start=JI[:, K.START].copy(),
        end=JI[:, K.END].copy(),
        killed=JI[:, K.KILLED] == 1,
        overrun=overrun,
        promises=promises,
        guarantees=frozenset(policy.guarantees()),
        terms=guarantee_terms(policy),
        sim_seconds=time.perf_counter() - t_wall,
        engine="compiled",
    )


def _simulate_slack(workload: Workload, policy: Any, *, overrun: str,
                    progress: Callable[[int], None] | None) -> Schedule:
    """The slack scheduler on the compiled loop (:mod:`sim.batch.fast.slack_loop`); a run
    that records its insertion problems or checks each schedule (``record``, ``check``)
    needs the problems built in Python: it runs the Python engine with the compiled slot
    search (the policy's inserter swapped for the compiled one for the run and restored
    after it). Both give the Python engine's schedule."""
    if policy.record or policy.check:
        from sim.batch.reference import simulate_python

        inserter = policy.inserter
        policy.inserter = inserter.with_compiled()
        try:
            schedule = simulate_python(workload, policy, overrun=overrun, progress=progress)
        finally:
            policy.inserter = inserter
        return dataclasses.replace(schedule, engine="compiled")
    return _slack_loop(workload, policy, overrun=overrun, progress=progress)


def _slack_loop(workload: Workload, policy: Any, *, overrun: str,
                progress: Callable[[int], None] | None) -> Schedule:
    """The whole slack simulation in one compiled call; the policy is reset and left with
    the Python engine's counters ``n_insert``, ``n_remove`` and promises."""
    from heuristics import slack_kernel
    from sim.batch.fast import slack_loop as SL

    t_wall = time.perf_counter()
    kill = overrun == "kill"
    policy.reset(MachineInfo(capacity=workload.capacity, kill_at_request=kill))
    cap = policy.capacity
    cols = workload.columns()
    n = len(cols)
    JT = np.zeros((n, SL.N_JT), np.int64)
    JT[:, SL.ID], JT[:, SL.SUB], JT[:, SL.RUN] = cols.id, cols.submit, cols.runtime
    JT[:, SL.REQ], JT[:, SL.N] = cols.requested, cols.demand[:, 0]
    PF = np.full((n, 2), policy.default_priority, np.float64)
    if policy.priorities:
        row = {jid: i for i, jid in enumerate(cols.id.tolist())}
        for jid, pair in policy.priorities.items():
            i = row.get(jid)
            if i is not None:
                PF[i] = pair
    ins = policy.inserter
    P = np.zeros(SL.N_P, np.int64)
    P[SL.P_CAP] = cap
    P[SL.P_ORDER] = slack_kernel.ORDER_CODE[ins.order]
    P[SL.P_HOLD] = ins.compress == "hold"
    P[SL.P_FROM_START] = ins.delay_from == "start"
    P[SL.P_NEUMAIER] = slack_kernel._NEUMAIER
    P[SL.P_KILL] = kill
    P[SL.P_PRIO_IN] = {"both": SL.PRIO_BOTH, "price": SL.PRIO_PRICE,
                       "slack": SL.PRIO_SLACK}[policy.priority_in]
    P[SL.P_RESET] = policy.reset_slack
    Q = np.zeros(SL.N_Q, np.float64)
    Q[SL.Q_SF], Q[SL.Q_AWT] = policy.sf, policy.awt
    Q[SL.Q_AU], Q[SL.Q_AT], Q[SL.Q_AP], Q[SL.Q_AF] = policy.alphas
    Q[SL.Q_PFLOOR], Q[SL.Q_SFLOOR] = policy.p_floor, policy.slack_floor
    R = np.zeros(SL.N_R, np.int64)
    err = SL.run(JT, PF, P, Q, R) if n else SL.OK
    if err != SL.OK:
        _slack_error(policy.name, int(err), JT, R, SL)
    policy.n_insert, policy.n_remove = int(R[SL.R_INSERT]), int(R[SL.R_REMOVE])
    has = JT[:, SL.HASP] == 1
    policy._promises = dict(zip(cols.id[has].tolist(), JT[has, SL.PROM].tolist(),
                                strict=True))
    if progress is not None and n:
        progress(n)
    return Schedule(
        workload=workload,
        policy=policy.name,
        start=JT[:, SL.START].copy(),
        end=JT[:, SL.END].copy(),
        killed=JT[:, SL.KILLED] == 1,
        overrun=overrun,
        promises=dict(policy._promises),
        guarantees=frozenset(policy.guarantees()),
        terms=guarantee_terms(policy),
        sim_seconds=time.perf_counter() - t_wall,
        engine="compiled",
    )


def _slack_error(name: str, err: int, JT: np.ndarray, R: np.ndarray, SL: Any) -> None:
    """Raise the Python engine's error for the compiled slack loop's code ``err``."""
    jid = int(JT[R[SL.R_JOB], SL.ID])
    if err == SL.STUCK:
        stuck = sorted(JT[JT[:, SL.START] < 0, SL.ID].tolist())[:10]
        raise PolicyError(f"{name}: jobs never started: {stuck}")
    if err == SL.LATE:
        raise RuntimeError(f"{name}: job {jid} was scheduled before the simulator called "
                           "back")
    if err == SL.NO_ROOM:
        raise RuntimeError(f"{name}: job {jid} is due to start but does not fit in the "
                           "free processors")
    raise RuntimeError(f"{name}: no feasible insertion found (compiled loop, code {err})")
