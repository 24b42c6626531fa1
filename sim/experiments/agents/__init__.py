"""Learned agents on the batch machine judged against EASY, FCFS and the proved offline
optimum of the same windows.

See ``REPORT.md`` beside this file for the protocol, results and reading."""
