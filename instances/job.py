"""Job and workload types shared by every part of schedsearch.

Times are integer seconds. A job's resource demand is a vector over the K resources of
the machine; resource 0 is always processors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _check_int(name: str, value: Any, minimum: int | None = None) -> None:
    if type(value) is int and (minimum is None or value >= minimum):
        return  # fast path: readers build hundreds of thousands of jobs
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")


@dataclass(frozen=True, slots=True)
class Job:
    """One parallel job of a batch workload.

    Parameters
    ----------
    id : int
        Job number (unique within a workload).
    submit : int
        Submit time, seconds from the start of the log.
    runtime : int
        Actual runtime in seconds (>= 0), as the job would run if never killed.
    requested : int
        Requested (estimated) runtime in seconds (>= 1). Schedulers see only this.
    demand : tuple of int
        Demand per resource, length K; ``demand[0]`` is processors (>= 1).
    user, group : int
        User and group ids, -1 when unknown.

    Scheduler-specific inputs (such as the slack scheduler's UP and PP) are not job
    fields: they are tables owned by the scenario (``instances.priorities``).
    """

    id: int
    submit: int
    runtime: int
    requested: int
    demand: tuple[int, ...]
    user: int = -1
    group: int = -1

    def __post_init__(self) -> None:
        demand = self.demand
        if (type(self.id) is int and type(self.submit) is int and type(self.runtime) is int
                and self.runtime >= 0 and type(self.requested) is int and self.requested >= 1
                and type(demand) is tuple and len(demand) == 1 and type(demand[0]) is int
                and demand[0] >= 1):
            return  # fast path of the checks below (readers build 10**5 jobs or more)
        _check_int("Job.id", self.id)
        _check_int(f"Job {self.id}: submit", self.submit)
        _check_int(f"Job {self.id}: runtime", self.runtime, 0)
        _check_int(f"Job {self.id}: requested", self.requested, 1)
        if not isinstance(self.demand, tuple) or len(self.demand) == 0:
            raise ValueError(
                f"Job {self.id}: demand must be a non-empty tuple, got {self.demand!r}")
        for k, d in enumerate(self.demand):
            _check_int(f"Job {self.id}: demand[{k}]", d, 0)
        if self.demand[0] < 1:
            raise ValueError(
                f"Job {self.id}: demand[0] (processors) must be >= 1, got {self.demand[0]}")

    @property
    def procs(self) -> int:
        """Processors requested (``demand[0]``)."""
        return self.demand[0]

    def run_length(self, kill_at_request: bool = True) -> int:
        """Seconds the job occupies the machine once started."""
        if kill_at_request:
            return min(self.runtime, self.requested)
        return self.runtime


@dataclass(frozen=True)
class Workload:
    """A machine and the jobs submitted to it.

    Parameters
    ----------
    jobs : tuple of Job
        Sorted by submit time (ties keep their order); ids unique.
    capacity : tuple of int
        Capacity per resource, length K; ``capacity[0]`` is processors.
    name : str
        Label used in reports.
    header : dict
        Parsed SWF header fields (for example ``MaxProcs``, ``UnixStartTime``,
        ``TimeZone``, ``TimeZoneString``); empty for synthetic workloads.
    cleaning : object or None
        The cleaning report of the reader that produced the workload.
    """

    jobs: tuple[Job, ...]
    capacity: tuple[int, ...]
    name: str = ""
    header: dict[str, Any] = field(default_factory=dict)
    cleaning: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.capacity, tuple) or not self.capacity:
            raise ValueError(
                f"Workload.capacity must be a non-empty tuple, got {self.capacity!r}")
        for k, c in enumerate(self.capacity):
            _check_int(f"Workload.capacity[{k}]", c, 1)
        K = len(self.capacity)
        seen: set[int] = set()
        last = None
        for j in self.jobs:
            if len(j.demand) != K:
                raise ValueError(
                    f"Job {j.id}: demand has {len(j.demand)} resources, machine has {K}")
            for k in range(K):
                if j.demand[k] > self.capacity[k]:
                    raise ValueError(
                        f"Job {j.id}: demand[{k}]={j.demand[k]} exceeds capacity "
                        f"{self.capacity[k]}")
            if j.id in seen:
                raise ValueError(f"Job {j.id}: duplicate id")
            seen.add(j.id)
            if last is not None and j.submit < last:
                raise ValueError(f"Job {j.id}: submit {j.submit} before previous job's {last}; "
                                 "jobs must be sorted by submit time")
            last = j.submit

    @property
    def K(self) -> int:
        """Number of resources."""
        return len(self.capacity)

    @property
    def procs(self) -> int:
        """Processors of the machine (``capacity[0]``)."""
        return self.capacity[0]

    def __len__(self) -> int:
        return len(self.jobs)
