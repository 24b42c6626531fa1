"""Problem data: job and workload types, SWF reader/writer, generators, bundled traces."""

from instances.bundled import list_traces, load_trace, trace_path
from instances.job import Job, Workload
from instances.months import split_months
from instances.swf import CleaningReport, SwfError, read_swf, write_swf
from instances.synthetic import random_workload

__all__ = [
    "CleaningReport",
    "Job",
    "SwfError",
    "Workload",
    "list_traces",
    "load_trace",
    "random_workload",
    "read_swf",
    "split_months",
    "trace_path",
    "write_swf",
]
