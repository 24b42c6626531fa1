"""The shared simulator core (events, availability profile, Result, registry) and one
sub-package per concern: ``batch`` (space sharing: machine, policies' protocol, planner,
metrics, validator, K-resource load calibration), ``timeshare`` (the time-sharing cluster),
``problems`` (problem families), ``memory`` (miss-rate model, LRU), ``sweep`` (sweeps,
results store, reports, ``reproduce``), ``experiments`` (paper reproductions and
benchmarks), ``cli`` (the ``schedsearch`` command, one module per command family)."""
