"""The shared simulator core (events, availability profile, Result, registry) and one
sub-package per concern: ``batch`` (space sharing: machine, policies' protocol, planner,
metrics, validator, K-resource load calibration), ``timeshare`` (the time-sharing cluster),
``problems`` (problem families), ``memory`` (miss-rate model, LRU), ``sweep`` (sweeps,
results store, reports, ``reproduce``), ``experiments`` (paper reproductions and
benchmarks), ``cli`` (the ``schedsearch`` command, one module per command family)."""

import sys as _sys

try:
    import resource as _resource
except ImportError:  # not POSIX: no file-size limit to meet
    _resource = None


def _no_bytecode_under_a_file_size_limit() -> None:
    """Write no bytecode cache under a finite file-size limit (``ulimit -f``).

    CPython writes a ``.pyc`` file with one unchecked write: under the limit it keeps a
    truncated file, and every later import of that module, in any process, fails
    (``EOFError: marshal data too short``) until the file is deleted. A run under the limit
    so reads bytecode but writes none; its imports compile from source.
    """
    if _resource is not None:
        soft, _ = _resource.getrlimit(_resource.RLIMIT_FSIZE)
        if soft != _resource.RLIM_INFINITY:
            _sys.dont_write_bytecode = True


_no_bytecode_under_a_file_size_limit()
