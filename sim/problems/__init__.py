"""Problem families, each defined once: data, feasibility, objective and JSON.

A family's exact models (``models/``) and its heuristics (``heuristics/``) import its one
definition from here, so their numbers are comparable by construction.

- ``insertion``: slack-constrained insertion into a backfilling profile (Talby & Feitelson).
- ``grouping``: memory-aware time-slice grouping (Suh, Rudolph & Devadas).
"""
