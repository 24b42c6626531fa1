"""The batch (space-sharing) machine and everything that runs on it.

Follow a job from trace to metric in this order:

- ``machine``: ``simulate(workload, policy)`` returns a ``Schedule`` (``schedule``: start,
  end, killed per job) from the engine asked for or chosen (``engine``): the Python
  reference (``reference``, the discrete-event loop) or the compiled one (``fast``). Times
  are integer seconds.
- ``policy``: the protocol every online policy follows (events in, start decisions out),
  and ``PolicySpec``, a policy resolved once at the edge (``sim.registry.policy_spec``).
- ``planner``: the one planner every batch policy builds on (running jobs, estimated ends,
  overruns, the running jobs' profile) and the selection-rule protocol it takes.
- ``slack_scheduler``: Talby and Feitelson's slack-based priority scheduler as a policy.
- ``metrics``: wait, slowdown, utilization and the other figures of a ``Schedule``.
- ``validate``: the independent re-check of a ``Schedule`` (shares no code with the machine).
- ``runner``: load a workload, run a resolved policy, summarise and validate, by month.

The policies themselves (FCFS, EASY, conservative, the slack orders) live in
``heuristics/``; the exact-model policies in ``models/``.
"""

from sim.batch.machine import PolicyError, Schedule, simulate

__all__ = ["PolicyError", "Schedule", "simulate"]
