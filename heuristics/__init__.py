"""The papers' heuristics and the classic baselines, one family per module."""
