"""Talby & Feitelson (IPPS 1999): slack-based priority backfilling.

See ``REPORT.md`` beside this file for the protocol, results and verdicts."""
