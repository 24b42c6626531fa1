"""The batch (space-sharing) machine and everything that runs on it.

Follow a job from trace to metric in this order:

- ``machine``: the discrete-event batch machine; ``simulate(workload, policy)`` returns a
  ``Schedule`` (start, end, killed per job). Times are integer seconds.
- ``policy``: the protocol every online policy follows (events in, start decisions out).
- ``planner``: the one planner every batch policy builds on (running jobs, estimated ends,
  overruns, the running jobs' profile) and the selection-rule protocol it takes.
- ``slack_scheduler``: Talby and Feitelson's slack-based priority scheduler as a policy.
- ``metrics``: wait, slowdown, utilization and the other figures of a ``Schedule``.
- ``validate``: the independent re-check of a ``Schedule`` (shares no code with the machine).
- ``runner``: load a workload, run a named policy, summarise and validate, by month.

The policies themselves (FCFS, EASY, conservative, the slack orders) live in
``heuristics/``; the exact-model policies in ``models/``.
"""

from sim.batch.machine import PolicyError, Schedule, simulate

__all__ = ["PolicyError", "Schedule", "simulate"]
