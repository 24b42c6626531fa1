"""The CSM paper's uniform-memory-load mapping (AMB-4.14) as a batch heuristic.

Jobs are placed one after another, in the given order: job j's tasks go to the
``len(job)`` distinct nodes with the least memory so far (ties: lowest node id), the
largest task to the least-loaded node. Memory in pages.
"""

from __future__ import annotations

import time
from typing import Any

from sim.problems import checker, scorer
from sim.problems.task_mapping import TaskMapping, least_loaded
from sim.result import Result, Status, build


def greedy(problem: TaskMapping, *, time_limit: float | None = None,
           seed: int = 0) -> Result:
    """Least-loaded mapping of every job in order (the simulator's online rule), one pass;
    UNKNOWN when ``time_limit`` (seconds) runs out first; ``seed`` is recorded only."""
    params: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        sol, _ = least_loaded(problem, None if time_limit is None else t0 + time_limit)
    except TimeoutError as stop:
        return build(solver="greedy", status=Status.UNKNOWN, solution=None,
                     check=lambda s: None, objective=lambda s: 0.0,
                     runtime=time.perf_counter() - t0, seed=seed, params=params,
                     note=str(stop))
    return build(solver="greedy", status=Status.FEASIBLE, solution=sol, check=checker(problem),
                 objective=scorer(problem), runtime=time.perf_counter() - t0, seed=seed,
                 params=params)
