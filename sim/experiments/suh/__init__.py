"""Suh, Rudolph & Devadas: memory-aware time-slice grouping.

See ``REPORT.md`` beside this file for the protocol, results and verdicts."""
