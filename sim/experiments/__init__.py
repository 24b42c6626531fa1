"""Benchmark and reproduction scripts, each run as ``python -m sim.experiments.<name>``."""
