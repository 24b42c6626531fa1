"""Karl: synchronized scheduling servers for BSP programs.

See ``REPORT.md`` beside this file for the protocol, results and verdicts."""
