"""Problem data: job and workload types, SWF reader/writer, generators, bundled traces."""

from instances.job import Job, Workload

__all__ = ["Job", "Workload"]
