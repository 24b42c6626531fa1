"""The dependencies between a user's jobs that user feedback keeps: which job waits for which.

Zakay & Feitelson ("Workload resampling for performance evaluation of parallel job
schedulers", ICPE 2013; Concurrency Computat.: Pract. Exper. 26(12), 2014; and
"Preserving user behavior characteristics in trace-based simulation of parallel job
scheduling", MASCOTS 2014) simulate a log with feedback: a user who submitted a job
shortly after an earlier job of theirs ended was waiting for that job, so in a simulation
the job is submitted a think time after the earlier job ends *in the simulated schedule*,
not at its time in the log.

Reading of the method used here (times in integer seconds):

- the log's end of a job is ``submit + wait + runtime`` (``Job.wait``, SWF field 3; a job
  of unknown wait, -1, has no known end and no job depends on it);
- job ``j`` of user ``u`` depends on the earlier job of ``u`` (earlier in the workload's
  order: submit time, then file order, so that the dependencies form no cycle) with the
  latest log end at or before ``submit(j)`` (ties: the latest in that order), when the
  think time ``submit(j) - end`` is at most :data:`THINK_GAP`, Zakay & Feitelson's
  20 minutes;
- otherwise ``j`` starts a session: it is submitted at its own time, as in the log;
- a job of unknown user (-1) is a user of its own, so it never depends on another job.

Another job of the user may still be running in the log at ``submit(j)``: ``j`` still
waits for the one that ended (the reading above). The other reading, that a user with a
job still running waits for nothing (the latest log end of all the user's earlier jobs
must be at or before ``submit(j)``), makes fewer jobs dependent.

SWF fields 17 and 18 (preceding job, think time) would give the dependencies directly,
but the archive's logs leave them -1 (KTH-SP2, SDSC-SP2), so they are not read.
The table is keyed by job id and holds ``(predecessor id, think time)``: it belongs to the
workload it was computed on (a replica renumbers its jobs: compute it on the replica).
"""

from __future__ import annotations

import bisect
from typing import Any

from instances.job import Workload

#: largest think time (seconds, from the log's end of a user's job to the submit of the
#: user's next job) for which the next job depends on the earlier one: Zakay & Feitelson's
#: 20 minutes
THINK_GAP = 20 * 60


def dependencies(workload: Workload, *, gap: int = THINK_GAP) -> dict[int, tuple[int, int]]:
    """The dependent jobs of ``workload`` (module docstring): job id -> ``(id of the job it
    waits for, think time in seconds)``.

    Parameters
    ----------
    workload : Workload
        Jobs with their log wait (``Job.wait``; -1 unknown).
    gap : int
        Largest think time in seconds (default :data:`THINK_GAP`, 1200 s).

    Raises
    ------
    ValueError
        ``gap`` not an integer >= 0.
    """
    if isinstance(gap, bool) or not isinstance(gap, int) or gap < 0:
        raise ValueError(f"dependencies: gap must be an integer number of seconds >= 0, "
                         f"got {gap!r}")
    cols = workload.columns()
    ids = cols.id.tolist()
    submit = cols.submit.tolist()
    wait = cols.wait.tolist()
    end = (cols.submit + cols.wait + cols.runtime).tolist()
    ends: dict[int, list[tuple[int, int]]] = {}  # user -> sorted (log end, position)
    out: dict[int, tuple[int, int]] = {}
    for i, user in enumerate(cols.user.tolist()):
        if user < 0:
            continue
        seen = ends.setdefault(user, [])
        k = bisect.bisect_right(seen, (submit[i], len(ids))) - 1
        if k >= 0 and submit[i] - seen[k][0] <= gap:
            out[ids[i]] = (ids[seen[k][1]], submit[i] - seen[k][0])
        if wait[i] >= 0:
            bisect.insort(seen, (end[i], i))
    return out


def summary(workload: Workload, table: dict[int, tuple[int, int]]) -> dict[str, Any]:
    """How many jobs of ``workload`` depend on another (``dependent``), of ``jobs``, and the
    median think time of the dependent ones (``median_think``, seconds; None without any)."""
    thinks = sorted(t for _, t in table.values())
    n = len(thinks)
    median = None if not n else (thinks[(n - 1) // 2] + thinks[n // 2]) / 2
    return {"jobs": len(workload), "dependent": n, "median_think": median}
