"""Exact models of the three K-resource problems (``sim.problems.kresource``), split by
backend: :mod:`.cpsat` (OR-Tools CP-SAT), :mod:`.ilp` (PuLP with its bundled CBC),
:mod:`.brute` (enumeration for tiny cases, the cross-check). The optimal-selection
policy OPT-EASY is in :mod:`.policy`.

Importing this package imports no solver: each backend imports its own on first use
(never ortools and highspy in one process).
"""
