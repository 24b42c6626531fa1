"""Which batch engine runs a simulation: the Python reference or the compiled one.

Both give the same schedule, so the choice changes only the time a run takes. The
compiled engine (numba, :mod:`sim.batch.fast.run`) is 10-45x faster per job, but a process
pays, at its first compiled run, for importing numba and loading the kernels from numba's
on-disk cache, and a kernel's very first use on a machine compiles it (30-90 s of CPU).
``engine="auto"`` (:func:`engine_choice`) therefore runs the compiled engine only when

- the policy declares the kernels it runs on (``compiled_kernels()``,
  :func:`sim.batch.policy.compiled_kernels`),
- the work in front of it pays for the load: the jobs are at least the policy's
  crossover (:data:`CROSSOVER`, measured by ``python -m
  sim.experiments.engine.crossover``, times :data:`MARGIN`), or this process has loaded
  the kernels already,
- the kernels are compiled and cached on this machine (:mod:`sim.batch.fast.cache`):
  ``auto`` never starts a compile (``schedsearch compile`` does, once),
- and the compiled engine runs this policy with these options
  (:func:`sim.batch.fast.support.unsupported`);

else the Python engine. The choice and its reason go into the schedule
(``Schedule.engine``, ``Schedule.engine_reason``) and a run's output.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from instances.job import Workload
from sim.batch.policy import Policy, compiled_kernels

#: ``simulate(engine=...)``: the Python engine (the reference) or the compiled one
ENGINES = ("python", "compiled")
#: ``engine=`` values: an engine, or ``"auto"`` (:func:`engine_choice`)
ENGINE_CHOICES = ("auto", *ENGINES)

#: jobs from which the compiled engine's per-process load (numba and the cached kernels)
#: is paid back by its saving per job, per policy name (``Policy.name``; the slack
#: scheduler's names ``slack-AST``... under ``slack``): the larger of two runs of ``python -m
#: sim.experiments.engine.crossover`` (load / saving per job; the first 10,000 jobs of
#: lublin_256 and KTH-SP2, 2,000 for the slack scheduler; all of KTH-SP2), at load average
#: 9-12 on 2 cores (the engine REPORT gives both runs)
CROSSOVER: dict[str, int] = {
    "fcfs": 55_742,
    "easy": 26_017,
    "conservative": 17_738,
    "unconstrained": 33_032,
    "slack": 420,
}
#: ``auto`` runs the compiled engine from MARGIN times the measured crossover: the figures
#: come from a loaded machine, and below it the Python reference costs at most a fraction
#: of a second more than the compiled run
MARGIN = 1.5
#: a policy the table does not name (a compiled policy added later): the largest crossover
DEFAULT_CROSSOVER = max(CROSSOVER.values())


@dataclass(frozen=True)
class EngineChoice:
    """The engine ``auto`` runs, and why (one line, for the run's output)."""

    engine: str
    reason: str


def crossover(policy: Policy) -> int:
    """The jobs from which the compiled engine pays for its load on ``policy``."""
    name = str(getattr(policy, "name", ""))
    key = "slack" if name.startswith("slack-") else name
    return math.ceil(MARGIN * CROSSOVER.get(key, DEFAULT_CROSSOVER))


def _loaded(kernels: tuple[tuple[str, str], ...]) -> bool:
    """Whether this process has imported every kernel's module (numba loaded with it)."""
    return all(module in sys.modules for module, _ in kernels)


def engine_choice(workload: Workload, policy: Policy, *, overrun: str = "kill") -> EngineChoice:
    """The engine ``engine="auto"`` runs ``policy`` on ``workload`` with, and why
    (module docstring)."""
    kernels = compiled_kernels(policy)
    if not kernels:
        return EngineChoice("python", f"auto: the compiled engine does not run {policy.name}")
    n, need = len(workload), crossover(policy)
    loaded = _loaded(kernels)
    if n < need and not loaded:
        return EngineChoice("python", f"auto: {n} jobs, below the {need} from which the "
                                      f"compiled engine pays for its load on {policy.name}")
    from sim.batch.fast import cache

    if not cache.kernels_cached(kernels):  # imports numba only if an index file exists
        return EngineChoice("python", "auto: the compiled kernels are not compiled on this "
                                      "machine (schedsearch compile)")
    from sim.batch.fast.support import unsupported

    why = unsupported(policy, workload, overrun=overrun)
    if why is not None:
        return EngineChoice("python", f"auto: the compiled engine does not support {why}")
    what = "kernels already loaded" if loaded and n < need else f"{n} jobs >= {need}"
    return EngineChoice("compiled", f"auto: {what}")


def choose_engine(workload: Workload, policy: Policy, *, overrun: str = "kill") -> str:
    """The name of the engine :func:`engine_choice` picks."""
    return engine_choice(workload, policy, overrun=overrun).engine
