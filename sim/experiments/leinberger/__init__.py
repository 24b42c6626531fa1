"""Leinberger, Karypis & Kumar (1999): K-resource job scheduling.

See ``REPORT.md`` beside this file for the protocol, results and verdicts."""
