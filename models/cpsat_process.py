"""CP-SAT in a worker process that a kill stops at its time limit.

CP-SAT looks at its clock only now and then: on a large model some of its stages run
for seconds without a look (on a 62,159-candidate backfill selection its probing at the
start of the search ran 12.6 s of wall clock for 0.89 deterministic units at load 2.8,
and a ``StopSearch`` at the limit took 4.6 s to return). :func:`solve` runs the model
in a worker forked by the MIP fork server (:func:`models.mip.fork_worker`,
:mod:`models.mip_worker`: ``python -I``, OR-Tools' ``cp_model_helper`` imported once),
which writes each improving solution to a file as CP-SAT finds it; the worker is killed
with its process group at ``kill_at``, and the last solution it wrote is the answer
then, with the bound CP-SAT reported beside it. The model goes to the worker in
text format (OR-Tools 9.15's Python API reads no binary ``CpModelProto``): measured
0.2 s to write and 0.5 s to read 62,000 Booleans in six rows (load 2.7).

Ctrl-C (:mod:`models.interrupt`) asks the worker's CP-SAT to stop (``stop_search``),
keeping its best answer, and kills it :data:`models.interrupt.GRACE` seconds later; the
last solution it wrote stands. Times are seconds; ``kill_at`` is a ``time.monotonic()``
value.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["Answer", "solve"]


@dataclass(frozen=True)
class Answer:
    """What a worker's CP-SAT answered.

    Attributes
    ----------
    status : str or None
        CP-SAT's status name (``"OPTIMAL"``, ``"FEASIBLE"``, ``"INFEASIBLE"``,
        ``"UNKNOWN"``, ``"MODEL_INVALID"``) when it returned; None when the worker was
        killed or crashed (``values`` may then hold the last improving solution).
    values : list of int or None
        The solution's value of each variable of the model (by index), or None.
    bound : float or None
        CP-SAT's bound on the objective (the model's objective units) when it returned,
        or the one it reported with the last improving solution; None without one.
    why : str
        Why CP-SAT did not return: ``"killed"`` (at ``kill_at``), ``"interrupted"``
        (killed after a Ctrl-C), ``"memory"``, ``"crashed (...)"``; empty when it did.
    interrupted : bool
        Whether a Ctrl-C asked it to stop (its answer is the best so far, not what the
        limit allowed).
    peak_mb : float
        The worker's peak resident memory, MB.
    """

    status: str | None
    values: list[int] | None
    bound: float | None
    why: str
    interrupted: bool
    peak_mb: float


def solve(model: Any, parameters: Any, *, kill_at: float | None,
          memory_mb: float | None = None) -> Answer:
    """Solve the CP-SAT ``model`` (a ``CpModel``) with ``parameters`` (a
    ``SatParameters``, e.g. ``CpSolver().parameters``; its ``max_time_in_seconds``
    counts from this call) in a worker killed with its process group at ``kill_at``
    (``time.monotonic()`` seconds; None: never) or beyond ``memory_mb`` MB of resident
    memory (default ``models.mip.WORKER_MEMORY_MB``)."""
    import numpy as np

    from models import mip
    from models.cbc import run_dir
    from models.mip_worker import INCUMBENT

    memory_mb = mip.WORKER_MEMORY_MB if memory_mb is None else float(memory_mb)
    with run_dir("schedsearch_cpsat_") as tmp:
        with open(os.path.join(tmp, "model.txt"), "w") as fh:
            fh.write(str(model.proto))
        with open(os.path.join(tmp, "job.json"), "w") as fh:
            json.dump({"backend": "cpsat", "parameters": str(parameters),
                       "sent": time.monotonic()}, fh)
        pid = mip.fork_worker(tmp, kill_at)
        why, peak, asked = mip.wait_worker(pid, tmp, kill_at=kill_at, memory_mb=memory_mb)
        result = os.path.join(tmp, "result.json")
        if not why and os.path.exists(result):
            with open(result) as fh:
                out = json.load(fh)
            values = None
            if out["has_solution"]:
                values = [int(v) for v in np.load(os.path.join(tmp, "values.npy"))]
            return Answer(out["status"], values, out["bound"], "", asked,
                          max(peak, float(out.get("peak_mb") or 0.0)))
        why = why or mip.crash_reason(tmp)
        values, bound = _last_incumbent(os.path.join(tmp, INCUMBENT))
        return Answer(None, values, bound, why, asked, peak)


def _last_incumbent(path: str) -> tuple[list[int] | None, float | None]:
    """The values and the bound of the last improving solution the worker wrote to
    ``path`` (written whole by a rename), or ``(None, None)``."""
    import math

    import numpy as np

    try:
        with open(path, "rb") as fh:
            row = np.load(fh)
    except (OSError, ValueError, EOFError):
        return None, None
    if len(row) < 2:
        return None, None
    bound = float(row[-1])
    return [int(v) for v in row[:-2]], bound if math.isfinite(bound) else None
