"""The shared simulator core (events, availability profile, Result, registry, CLI) and one
sub-package per concern: ``batch`` (space sharing), ``problems`` (problem families),
``memory`` (miss-rate model, LRU), ``experiments`` (paper reproductions and benchmarks)."""
