"""Scripted batch evaluation: sweep specs, the results store, local-pool and Dask
execution, reports and plots, and the ``reproduce`` registry of paper tables.

``run_sweep(spec, out, jobs=2)`` runs a spec into a store; ``sim.sweep.report`` turns a
store into tables and plots. See ``sim.sweep.spec`` for the spec format.
"""

from sim.sweep.execute import SweepSummary, run_sweep
from sim.sweep.spec import SpecError
from sim.sweep.store import Store, StoreError

__all__ = ["SpecError", "Store", "StoreError", "SweepSummary", "run_sweep"]
