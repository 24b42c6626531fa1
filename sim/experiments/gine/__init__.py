"""Giné, Solsona, Hernández & Luque: CSM coscheduling on a time-sharing cluster.

See ``REPORT.md`` beside this file for the protocol, results and verdicts."""
