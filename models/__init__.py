"""Exact formulations (CP-SAT and ILP), one problem family per module."""
