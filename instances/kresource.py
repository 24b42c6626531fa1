"""K-resource workloads of Leinberger, Karypis & Kumar (1999): a reconstruction of
Feitelson's 1996 model plus the paper's K-resource extension, Poisson arrivals, and a
file format that round-trips. The paper's load calibration (the arrival rate at which
FF-EASY's queue holds a target number of jobs) runs the batch simulator, so it lives
beside it: :mod:`sim.batch.calibrate`.

Times are integer seconds. Requirements are integer units: every resource has the
capacity ``P * resolution`` units (``P = 128`` processors in Feitelson's model), so a
requirement ``r_k`` of the paper (in processors' worth, real-valued) becomes
``ceil(r_k * resolution)`` units, at least 1 (AMB-1.1: normalised fractions
``r / capacity`` are what the policies compare). Each choice the paper leaves open is a
named field of :class:`KResourceSpec` and is written into the file header.

Generator (spec section 1.4, [A] constants as named parameters):

- size ``n`` in ``1..P``: ``p(n) ~ n^-alpha``, powers of two weighted ``pow2_boost``
  times, ``n in {1, 2}`` weighted ``small_boost`` times;
- runtime: two-branch hyperexponential, ``Exp(m_short)`` or ``Exp(m_long)``, the long
  branch with probability ``p0 + (p1 - p0) (n - 1) / (P - 1)``; integer seconds, >= 1;
- K requirements (AMB-1.14, field ``scaling``): ``"G-b"`` (default) ``r_k = n u_k /
  max_i u_i`` (largest requirement = size); ``"G-a"`` ``r_k = n u_k`` with ``u ~ U(0,1]``
  or ``Exp(mean 0.5)``, clipped to ``P`` (the clips are counted in the header);
  ``u ~ U(0, 1]`` (``dist="uniform"``) or ``Exp(1)`` (``"exponential"``);
- arrivals: a Poisson process of rate ``lam`` jobs/s: unit-mean exponential gaps drawn
  once from the seed and divided by ``lam`` (so every rate sees the same jobs and the
  same gap pattern: common random numbers for the calibration), floored to seconds;
- requested time = ``ceil(estimate_factor * runtime)`` (AMB-1.8: exact by default).

File format (``.kswf``): Standard Workload Format lines (18 fields) with
``; KResource: K`` and ``; Capacities: c0 c1 ...`` header lines. Field 5 and 8
(allocated / requested processors) hold ``demand[0]``; for ``K >= 2`` fields 7 and 10
(used / requested memory) hold ``demand[1]``; for ``K > 2`` fields 19 .. 16 + K hold
``demand[2] .. demand[K-1]`` (an extension: SWF readers ignore trailing fields only if
lenient, so the header says so). ``; KResourceSpec: {json}`` records the generator.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from instances.atomic import write_atomic
from instances.job import Job, Workload
from instances.swf import FIELD_NAMES, MAX_INT, _cut

__all__ = ["KResourceSpec", "generate", "with_rate", "write_kswf", "read_kswf", "is_kswf",
           "size_distribution", "job_sizes"]

DISTS = ("uniform", "exponential")
SCALINGS = ("G-a", "G-b")


MAX_JOBS = 2_000_000
"""Most jobs generated (the generator holds every job in memory: 10^6 jobs peak at about
0.6 GB and take about 30 s to generate and write)."""
MAX_P = 1 << 20
"""Largest Feitelson machine size ``P`` (the size distribution is an array of ``P``)."""
MAX_RESOLUTION = 1 << 20
"""Most units per processor's worth of a resource."""
MAX_SPAN = 1e12
"""Longest expected span of the arrivals, ``jobs / rate`` (seconds, about 31,700 years):
submit times stay exact integers; a smaller rate writes them all as one time."""
_RANGES: dict[str, tuple[float, float]] = {
    "rate": (0.0, 1e3),          # above 1,000 jobs/s most submit times (whole seconds) coincide
    "m_short": (0.0, 1e9),       # runtimes (s) stay int64 with estimate_factor applied
    "m_long": (0.0, 1e9),
    "estimate_factor": (1.0, 1e6),
    "alpha": (-20.0, 20.0),      # n^-alpha stays a normal double for n <= MAX_P
    "pow2_boost": (0.0, 1e6),
    "small_boost": (0.0, 1e6),
    "exp_mean_ga": (0.0, 1e6),
}
"""Accepted range of each real parameter (the lower bounds of the positive ones are
checked as ``> 0`` above)."""


@dataclass(frozen=True)
class KResourceSpec:
    """Every parameter of a generated K-resource workload (all recorded in the file).

    Parameters
    ----------
    K : int
        Number of resources, 1..8.
    dist : {"uniform", "exponential"}
        Distribution of the per-resource draws ``u_k``.
    scaling : {"G-b", "G-a"}
        How requirements scale with the job size (AMB-1.14).
    jobs : int
        Number of jobs.
    seed : int
    P : int
        Feitelson machine size (processors); capacity of every resource is
        ``P * resolution`` units.
    resolution : int
        Integer units per processor's worth of a resource.
    alpha, pow2_boost, small_boost : float
        Size distribution ``n^-alpha`` and its hand-tailoring weights.
    m_short, m_long : float
        Means of the two runtime branches, seconds.
    p0, p1 : float
        Probability of the long branch at size 1 and at size ``P``.
    estimate_factor : float
        Requested time = ceil(factor * runtime), >= 1 (AMB-1.8; 1 = exact).
    exp_mean_ga : float
        Mean of ``u`` for ``dist="exponential"`` under G-a.
    rate : float
        Poisson arrival rate, jobs per second.
    """

    K: int = 2
    dist: str = "uniform"
    scaling: str = "G-b"
    jobs: int = 10000
    seed: int = 1
    P: int = 128
    resolution: int = 8
    alpha: float = 1.5
    pow2_boost: float = 4.0
    small_boost: float = 2.0
    m_short: float = 60.0
    m_long: float = 3600.0
    p0: float = 0.1
    p1: float = 0.9
    estimate_factor: float = 1.0
    exp_mean_ga: float = 0.5
    rate: float = 0.01

    def __post_init__(self) -> None:
        def bad(field: str, msg: str, value: Any) -> ValueError:
            return ValueError(f"KResourceSpec: field '{field}' {msg}, got {value!r}")

        for name in ("K", "jobs", "seed", "P", "resolution"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise bad(name, "must be an integer", v)
        if not 1 <= self.K <= 8:
            raise bad("K", "must be in 1..8", self.K)
        if not 1 <= self.jobs <= MAX_JOBS:
            raise bad("jobs", f"must be in 1..{MAX_JOBS:,}", self.jobs)
        if not 0 <= self.seed <= 2**63 - 1:
            raise bad("seed", "must be in 0..2**63 - 1", self.seed)
        if not 2 <= self.P <= MAX_P:
            raise bad("P", f"must be in 2..{MAX_P:,}", self.P)
        if not 1 <= self.resolution <= MAX_RESOLUTION:
            raise bad("resolution", f"must be in 1..{MAX_RESOLUTION:,}", self.resolution)
        if self.dist not in DISTS:
            raise bad("dist", f"must be one of {DISTS}", self.dist)
        if self.scaling not in SCALINGS:
            raise bad("scaling", f"must be one of {SCALINGS}", self.scaling)
        for name in ("alpha", "pow2_boost", "small_boost", "m_short", "m_long", "p0", "p1",
                     "estimate_factor", "exp_mean_ga", "rate"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise bad(name, "must be a finite number", v)
        for name in ("pow2_boost", "small_boost", "m_short", "m_long", "exp_mean_ga", "rate"):
            if getattr(self, name) <= 0:
                raise bad(name, "must be > 0", getattr(self, name))
        for name in ("p0", "p1"):
            if not 0 <= getattr(self, name) <= 1:
                raise bad(name, "must be in [0, 1]", getattr(self, name))
        if self.estimate_factor < 1:
            raise bad("estimate_factor", "must be >= 1", self.estimate_factor)
        for name, (lo, hi) in _RANGES.items():
            v = getattr(self, name)
            if not lo <= v <= hi:
                raise bad(name, f"must be in [{lo:g}, {hi:g}]", v)
        if self.jobs / self.rate > MAX_SPAN:
            raise bad("rate", f"gives {self.jobs:,} jobs an expected span of "
                      f"{self.jobs / self.rate:.3g} s, over the {MAX_SPAN:.0e} s accepted; "
                      f"the rate must be at least {self.jobs / MAX_SPAN:.3g} jobs/s", self.rate)

    @property
    def capacity(self) -> tuple[int, ...]:
        """Capacity of each resource in units (``P * resolution``)."""
        return (self.P * self.resolution,) * self.K


def size_distribution(spec: KResourceSpec) -> np.ndarray:
    """Probabilities of sizes ``1..P`` (index 0 is size 1)."""
    n = np.arange(1, spec.P + 1, dtype=float)
    w = n ** -spec.alpha
    pow2 = (n.astype(int) & (n.astype(int) - 1)) == 0
    w[pow2] *= spec.pow2_boost
    w[n <= 2] *= spec.small_boost
    return w / w.sum()


def _jobs_and_gaps(spec: KResourceSpec) -> tuple[list[tuple[int, int, tuple[int, ...]]],
                                                 np.ndarray, int, np.ndarray]:
    """Runtimes and requirement vectors (rows), unit-mean gaps, the number of clipped
    jobs and the Feitelson sizes (all independent of the rate)."""
    rng = np.random.default_rng([spec.seed, spec.K, DISTS.index(spec.dist),
                                 SCALINGS.index(spec.scaling)])
    N, P, K = spec.jobs, spec.P, spec.K
    sizes = rng.choice(np.arange(1, P + 1), size=N, p=size_distribution(spec))
    p_long = spec.p0 + (spec.p1 - spec.p0) * (sizes - 1) / (P - 1)
    long_ = rng.random(N) < p_long
    runtime = rng.exponential(1.0, N) * np.where(long_, spec.m_long, spec.m_short)
    runtime = np.maximum(1, np.ceil(runtime)).astype(np.int64)
    if spec.dist == "uniform":
        u = 1.0 - rng.random((N, K))  # U(0, 1]
    else:
        u = rng.exponential(1.0, (N, K))
        u = np.maximum(u, 1e-12)
    clipped = 0
    if spec.scaling == "G-b":
        r = sizes[:, None] * u / u.max(axis=1, keepdims=True)
    else:
        if spec.dist == "exponential":
            u = u * spec.exp_mean_ga
        r = sizes[:, None] * u
        over = r > P
        clipped = int(over.any(axis=1).sum())
        r = np.minimum(r, P)
    cap = P * spec.resolution
    units = np.clip(np.ceil(r * spec.resolution - 1e-9), 1, cap).astype(np.int64)
    gaps = rng.exponential(1.0, N)
    rows = [(int(runtime[i]), int(math.ceil(spec.estimate_factor * runtime[i] - 1e-9)),
             tuple(int(x) for x in units[i])) for i in range(N)]
    sizes.setflags(write=False)
    return rows, gaps, clipped, sizes


_CACHE: dict[tuple, tuple] = {}


def _drawn(spec: KResourceSpec) -> tuple:
    """:func:`_jobs_and_gaps` of ``spec``, cached (the rate does not enter it)."""
    key = tuple(asdict(replace(spec, rate=1.0)).values())
    if key not in _CACHE:
        if len(_CACHE) > 8:
            _CACHE.clear()
        _CACHE[key] = _jobs_and_gaps(spec)
    return _CACHE[key]


def job_sizes(spec: KResourceSpec) -> np.ndarray:
    """Feitelson size ``n`` (processors, 1..P) of every job of ``spec``'s workload, in
    job order (read-only int array). The ``.kswf`` file does not hold it: under G-b it
    equals the largest requirement (``max_k demand / resolution``), under G-a it is lost
    in the draws."""
    return _drawn(spec)[3]


def generate(spec: KResourceSpec) -> Workload:
    """The workload of ``spec`` (deterministic: same spec, same workload)."""
    rows, gaps, clipped, _ = _drawn(spec)
    submit = np.floor(np.cumsum(gaps) / spec.rate).astype(np.int64)
    submit -= submit[0]
    jobs = tuple(Job(id=i + 1, submit=int(submit[i]), runtime=rt, requested=rq, demand=d)
                 for i, (rt, rq, d) in enumerate(rows))
    header = {"KResource": spec.K, "Capacities": list(spec.capacity),
              "KResourceSpec": asdict(spec), "ClippedJobs": clipped}
    name = (f"kresource-K{spec.K}-{spec.dist}-{spec.scaling}-n{spec.jobs}-s{spec.seed}")
    return Workload(jobs=jobs, capacity=spec.capacity, name=name, header=header)


def with_rate(spec: KResourceSpec, rate: float) -> KResourceSpec:
    """``spec`` with another arrival rate (jobs/s)."""
    return replace(spec, rate=float(rate))


# ---------------------------------------------------------------------------- file format
def write_kswf(path: str | Path, workload: Workload, *,
               start: Any = None, end: Any = None, killed: Any = None) -> None:
    """Write a K-resource workload in the ``.kswf`` format (module docstring).

    Parameters
    ----------
    path : str or path-like
    workload : Workload
    start, end : sequence of int, optional
        A simulated schedule (seconds, aligned with ``workload.jobs``); give both or
        neither. With them, as SWF's ``--out``: field 3 (wait) is ``start - submit``,
        field 4 (run time) ``end - start`` and field 11 (status) 0 for a killed job,
        else 1; without them fields 3 and 11 are -1 and field 4 is the run time.
    killed : sequence of bool, optional
        Which jobs were killed; default ``end - start < runtime``.
    """
    K = workload.K
    n = len(workload.jobs)
    if (start is None) != (end is None):
        raise ValueError("write_kswf: give both start and end, or neither")
    lines = ["; Version: 2.2", f"; MaxProcs: {workload.capacity[0]}",
             f"; KResource: {K}",
             "; Capacities: " + " ".join(str(c) for c in workload.capacity),
             "; Note: field 5/8 = demand[0]; K>=2: field 7/10 = demand[1]; "
             "K>2: fields 19.. = demand[2..K-1]"]
    if start is not None:
        lines.append("; Note: fields 3 (wait), 4 (run time) and 11 (status: 1 done, "
                     "0 killed) are the simulated schedule")
        s_, e_ = np.asarray(start, np.int64), np.asarray(end, np.int64)
        if len(s_) != n or len(e_) != n or (killed is not None and len(killed) != n):
            raise ValueError(f"write_kswf: the schedule does not have {n} jobs")
    for key in ("KResourceSpec", "ClippedJobs", "Calibration"):
        if key in workload.header:
            lines.append(f"; {key}: {json.dumps(workload.header[key], sort_keys=True)}")
    for i, j in enumerate(workload.jobs):
        d = j.demand
        mem = d[1] if K >= 2 else -1
        wait, run, status = -1, j.runtime, -1
        if start is not None:
            if s_[i] < j.submit or e_[i] < s_[i]:
                raise ValueError(f"write_kswf: job {j.id} runs [{s_[i]}, {e_[i]}), before its "
                                 f"submit {j.submit} or backwards")
            wait, run = int(s_[i] - j.submit), int(e_[i] - s_[i])
            was_killed = bool(killed[i]) if killed is not None else run < j.runtime
            status = 0 if was_killed else 1
        f = [j.id, j.submit, wait, run, d[0], -1, mem, d[0], j.requested, mem, status,
             j.user, j.group, -1, -1, -1, -1, -1, *d[2:]]
        lines.append(" ".join(str(x) for x in f))
    write_atomic(path, "\n".join(lines) + "\n", encoding="ascii")


def is_kswf(path: str | Path) -> bool:
    """True when ``path`` (plain or gzip, whatever its suffix) is a K-resource workload:
    a ``; KResource:`` header line before its first job line. False for anything that
    cannot be read (the SWF reader then says why)."""
    import gzip
    import zlib

    from instances.files import is_gzip

    try:
        if not Path(path).is_file():
            return False
        opener = gzip.open if is_gzip(path) else open
        with opener(path, "rb") as fh:
            head = fh.read(1 << 16)
    except (OSError, EOFError, zlib.error):
        return False
    for line in head.split(b"\n"):
        s = line.strip()
        if not s:
            continue
        if not s.startswith(b";"):
            return False
        if s[1:].lstrip().startswith(b"KResource:"):
            return True
    return False


def read_kswf(path: str | Path) -> Workload:
    """Read a ``.kswf`` file (plain or gzip, detected by its magic bytes); every error
    names the file and line. A device, a pipe or a file (unpacked) over
    ``instances.files.MAX_BYTES`` is refused before it is read."""
    from instances.files import read_bytes

    p = Path(path)
    K: int | None = None
    cap: tuple[int, ...] | None = None
    header: dict[str, Any] = {}
    jobs: list[Job] = []
    try:
        text = read_bytes(p, what="K-resource workload").decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not an ASCII text file") from None
    for ln, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s:
            continue
        if s.startswith(";"):
            key, _, val = s[1:].partition(":")
            key, val = key.strip(), val.strip()
            if key == "KResource":
                K = _integer(val, "KResource", f"{p}:{ln}")
                if not 1 <= K <= 8:
                    raise ValueError(f"{p}:{ln}: KResource must be in 1..8, got {K}")
            elif key == "Capacities":
                cap = tuple(_integer(x, "Capacities", f"{p}:{ln}") for x in val.split())
                if any(c < 1 for c in cap):
                    raise ValueError(f"{p}:{ln}: every capacity must be >= 1, got {val!r}")
            elif key in ("KResourceSpec", "ClippedJobs", "Calibration"):
                try:
                    header[key] = json.loads(val)
                except (ValueError, RecursionError):  # bad, 5000-digit or too deep JSON
                    raise ValueError(f"{p}:{ln}: {key} is not valid JSON") from None
            continue
        if K is None or cap is None:
            raise ValueError(f"{p}:{ln}: job line before the '; KResource:' and "
                             f"'; Capacities:' header lines")
        if len(cap) != K:
            raise ValueError(f"{p}: Capacities has {len(cap)} values, KResource is {K}")
        f = s.split()
        want = 18 + max(0, K - 2)
        if len(f) != want:
            raise ValueError(f"{p}:{ln}: {len(f)} fields, expected {want} for K={K}")
        v = [_integer(x, _field_name(i), f"{p}:{ln}") for i, x in enumerate(f, 1)]
        demand = (v[7],) + ((v[9],) if K >= 2 else ()) + tuple(v[18:])
        for k, d in enumerate(demand):
            if d < 1 if k == 0 else d < 0:
                raise ValueError(f"{p}:{ln}: requirement of resource {k} must be "
                                 f"{'>= 1' if k == 0 else '>= 0'}, got {d}")
            if d > cap[k]:
                raise ValueError(f"{p}:{ln}: requirement of resource {k} = {d} exceeds the "
                                 f"capacity {cap[k]}")
        try:
            jobs.append(Job(id=v[0], submit=v[1], runtime=v[3], requested=v[8], demand=demand,
                            user=v[11], group=v[12]))
        except ValueError as exc:
            raise ValueError(f"{p}:{ln}: {exc}") from None
    if K is None or cap is None:
        raise ValueError(f"{p}: missing '; KResource:' or '; Capacities:' header line")
    header.update({"KResource": K, "Capacities": list(cap)})
    try:
        name = (p.with_suffix("") if p.suffix == ".gz" else p).stem
        return Workload(jobs=tuple(jobs), capacity=cap, name=name, header=header)
    except ValueError as exc:
        raise ValueError(f"{p}: {exc}") from None


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")


def _field_name(i: int) -> str:
    """Field ``i`` (1-based) of a ``.kswf`` job line, named: SWF's 18, then demands."""
    return f"field {i} ({FIELD_NAMES[i - 1] if i <= 18 else f'demand[{i - 17}]'})"


def _integer(token: str, what: str, where: str) -> int:
    """A ``.kswf`` integer: plain ASCII decimal digits with an optional sign, at most
    ``2**53`` in absolute value (as SWF, ``instances.swf.MAX_INT``). Python's ``int()``
    would also take ``1_000``, non-ASCII digits and any size: a ValueError naming
    ``where`` (file and line) and ``what`` instead."""
    if not _INTEGER.match(token):
        raise ValueError(f"{where}: {what} must be an integer, got {_cut(token)}")
    if len(token.lstrip("+-").lstrip("0")) > 16 or abs(int(token)) > MAX_INT:
        raise ValueError(f"{where}: {what} is out of range (above 2**53 in absolute "
                         f"value): {_cut(token)}")
    return int(token)
