"""Compiled (numba) engine for the CSM experiment point; see :mod:`sim.timeshare.fast.run`."""
