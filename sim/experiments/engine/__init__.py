"""Benchmarks of the engine: batch simulator, sweeps, solver limits, scaling.

See ``REPORT.md`` beside this file for the protocol, results and verdicts."""
