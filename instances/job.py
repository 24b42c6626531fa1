"""Job and workload types shared by every part of schedsearch.

Times are integer seconds. A job's resource demand is a vector over the K resources of
the machine; resource 0 is always processors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np


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
    wait : int
        The log's wait time in seconds (SWF field 3: from submit to start on the logged
        machine), -1 when unknown. It is data of the log, never a simulated wait: the log's
        end of the job is ``submit + wait + runtime``, which user feedback
        (``instances.dependencies``) measures think times from.

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
    wait: int = -1

    def __post_init__(self) -> None:
        demand = self.demand
        if (type(self.id) is int and type(self.submit) is int and type(self.runtime) is int
                and self.runtime >= 0 and type(self.requested) is int and self.requested >= 1
                and type(demand) is tuple and len(demand) == 1 and type(demand[0]) is int
                and demand[0] >= 1 and type(self.wait) is int):
            return  # fast path of the checks below (readers build 10**5 jobs or more)
        _check_int("Job.id", self.id)
        _check_int(f"Job {self.id}: wait", self.wait)
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


#: the integer columns of :class:`JobColumns` besides ``demand``, in ``Job`` field order
_COLUMNS = ("id", "submit", "runtime", "requested", "user", "group", "wait")


def _frozen_int64(name: str, a: Any, ndim: int) -> np.ndarray:
    """A read-only int64 view of ``a`` (``ndim`` dimensions); ValueError otherwise."""
    arr = np.asarray(a)
    if arr.dtype != np.int64 or arr.ndim != ndim:
        raise ValueError(f"JobColumns.{name} must be a {ndim}-d int64 array, got "
                         f"{arr.ndim}-d {arr.dtype}")
    view = arr.view()
    view.flags.writeable = False
    return view


@dataclass(frozen=True, eq=False)
class JobColumns:
    """The jobs of a workload as columns: one int64 array per :class:`Job` field, row ``i``
    the ``i``-th job. Readers hand these to :class:`Workload`, which builds the ``Job``
    objects only when ``Workload.jobs`` is first asked for; the simulators, the validator
    and the metrics read the columns (``Workload.columns``).

    Parameters
    ----------
    id, submit, runtime, requested, user, group : numpy.ndarray of int64, shape (n,)
        The ``Job`` fields of the same names (times in seconds).
    demand : numpy.ndarray of int64, shape (n, K)
        Demand per resource; column 0 is processors.
    wait : numpy.ndarray of int64, shape (n,), optional
        The log's wait times in seconds (``Job.wait``); default -1 (unknown) for every job.

    The arrays are kept as read-only views. The values are checked by :class:`Workload`
    (the ``Job`` rules and the workload's), not here.
    """

    id: np.ndarray
    submit: np.ndarray
    runtime: np.ndarray
    requested: np.ndarray
    demand: np.ndarray
    user: np.ndarray
    group: np.ndarray
    wait: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.wait is None:
            object.__setattr__(self, "wait", np.full(len(np.asarray(self.id)), -1, np.int64))
        for name in _COLUMNS:
            object.__setattr__(self, name, _frozen_int64(name, getattr(self, name), 1))
        object.__setattr__(self, "demand", _frozen_int64("demand", self.demand, 2))
        n = len(self.id)
        if any(len(getattr(self, name)) != n for name in _COLUMNS + ("demand",)) \
                or self.demand.shape[1] < 1:
            shapes = {name: getattr(self, name).shape for name in _COLUMNS + ("demand",)}
            raise ValueError(f"JobColumns: columns of unequal length or no resource: {shapes}")

    def __len__(self) -> int:
        return len(self.id)

    @property
    def K(self) -> int:
        """Number of resources (columns of ``demand``)."""
        return self.demand.shape[1]

    @classmethod
    def from_jobs(cls, jobs: Iterable[Job], K: int) -> JobColumns:
        """The columns of ``jobs`` (each with a demand of length ``K``), field by field."""
        jobs = tuple(jobs)
        n = len(jobs)

        def col(field_name: str) -> np.ndarray:
            return np.fromiter((getattr(j, field_name) for j in jobs), np.int64, n)

        demand = np.array([j.demand for j in jobs], np.int64).reshape(n, K)
        return cls(col("id"), col("submit"), col("runtime"), col("requested"), demand,
                   col("user"), col("group"), col("wait"))

    def to_jobs(self) -> tuple[Job, ...]:
        """The ``Job`` objects, with Python ints in every field."""
        demand = list(map(tuple, self.demand.tolist()))
        return tuple(map(Job, self.id.tolist(), self.submit.tolist(), self.runtime.tolist(),
                         self.requested.tolist(), demand, self.user.tolist(),
                         self.group.tolist(), self.wait.tolist()))


def _first_bad_job(cols: JobColumns) -> int | None:
    """Index of the first row that ``Job`` refuses (negative runtime, request below 1 s, a
    negative demand or no processor), or None."""
    d = cols.demand
    bad = (cols.runtime < 0) | (cols.requested < 1) | (d < 0).any(axis=1) | (d[:, 0] < 1)
    first = np.flatnonzero(bad)
    return int(first[0]) if first.size else None


def strictly_increasing(a: np.ndarray) -> bool:
    """Whether ``a`` is strictly increasing (then its values are distinct)."""
    return bool((a[1:] > a[:-1]).all())


def _check_columns(cols: JobColumns, capacity: tuple[int, ...]) -> None:
    """:class:`Workload`'s checks on columns: the same first error, with the same message,
    as building every ``Job`` and then the workload from them."""
    i = _first_bad_job(cols)
    if i is not None:  # the Job constructor raises its own message
        Job(int(cols.id[i]), int(cols.submit[i]), int(cols.runtime[i]),
            int(cols.requested[i]), tuple(cols.demand[i].tolist()))
    n = len(cols)
    if n == 0:
        return
    K = len(capacity)
    if cols.K != K:
        raise ValueError(f"Job {cols.id[0]}: demand has {cols.K} resources, machine has {K}")
    over = cols.demand > np.array(capacity, np.int64)
    dup = np.zeros(n, bool)
    if not strictly_increasing(cols.id):  # else every id is new
        _, first = np.unique(cols.id, return_index=True)
        dup[:] = True
        dup[first] = False
    early = np.zeros(n, bool)
    early[1:] = cols.submit[1:] < cols.submit[:-1]
    bad = np.flatnonzero(over.any(axis=1) | dup | early)
    if not bad.size:
        return
    i = int(bad[0])
    jid = int(cols.id[i])
    if over[i].any():
        k = int(np.flatnonzero(over[i])[0])
        raise ValueError(f"Job {jid}: demand[{k}]={int(cols.demand[i, k])} exceeds capacity "
                         f"{capacity[k]}")
    if dup[i]:
        raise ValueError(f"Job {jid}: duplicate id")
    raise ValueError(f"Job {jid}: submit {int(cols.submit[i])} before previous job's "
                     f"{int(cols.submit[i - 1])}; jobs must be sorted by submit time")


@dataclass(frozen=True)
class Workload:
    """A machine and the jobs submitted to it.

    Parameters
    ----------
    jobs : tuple of Job, or JobColumns
        Sorted by submit time (ties keep their order); ids unique. Given as
        :class:`JobColumns` (as the SWF reader does), the same checks run on the arrays and
        the ``Job`` objects are built on the first access to ``jobs``; ``columns()`` gives
        the arrays without building them.
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
        if isinstance(self.jobs, JobColumns):
            _check_columns(self.jobs, self.capacity)
            object.__setattr__(self, "_columns", self.jobs)
            object.__setattr__(self, "_from_columns", True)
            object.__delattr__(self, "jobs")  # built by __getattr__ when first asked for
            return
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

    def __getattr__(self, name: str) -> Any:
        # reached only for an attribute not set: ``jobs`` of a workload given as columns
        cols = self.__dict__.get("_columns") if name == "jobs" else None
        if cols is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        jobs = cols.to_jobs()
        object.__setattr__(self, "jobs", jobs)
        return jobs

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if state.get("_from_columns"):
            state.pop("jobs", None)  # built again from the columns when asked for
        else:
            state.pop("_columns", None)  # a cache of the jobs given
        return state

    def rows(self, first: int, stop: int | None = None, *, name: str | None = None
             ) -> Workload:
        """Jobs ``first .. stop - 1`` (in submit order; to the end without ``stop``) as a
        workload on the same machine, built from slices of the columns: no ``Job`` object
        of the other jobs is made (a bundled trace holds up to 10**5). The header is kept;
        the reader's cleaning report, which counts the whole reading, is not. ``name``
        defaults to this workload's."""
        for label, v in (("first", first), ("stop", stop)):
            if v is not None and (type(v) is not int or v < 0):
                raise ValueError(f"Workload.rows: {label} must be an int >= 0, got {v!r}")
        c = self.columns()
        part = JobColumns(**{f.name: getattr(c, f.name)[first:stop] for f in fields(c)})
        if len(part) == 0:
            raise ValueError(f"Workload.rows: no job in [{first}, {stop}) of {len(c)}")
        return Workload(jobs=part, capacity=self.capacity,
                        name=self.name if name is None else name, header=self.header)

    def columns(self) -> JobColumns:
        """The jobs as int64 arrays (built once from ``jobs`` when given as Job objects)."""
        cols = self.__dict__.get("_columns")
        if cols is None:
            cols = JobColumns.from_jobs(self.jobs, self.K)
            object.__setattr__(self, "_columns", cols)
        return cols

    @property
    def K(self) -> int:
        """Number of resources."""
        return len(self.capacity)

    @property
    def procs(self) -> int:
        """Processors of the machine (``capacity[0]``)."""
        return self.capacity[0]

    def __len__(self) -> int:
        cols = self.__dict__.get("_columns")
        return len(cols) if cols is not None else len(self.jobs)
