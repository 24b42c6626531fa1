"""Compiled engine of the batch machine (numba): :func:`sim.batch.fast.run.simulate_compiled`."""
