"""The CSM paper's synthetic workload (spec 3.4) and its load calibration (eq. 5).

Times are integer **microseconds** in the generated arrivals; configuration fields carry
their unit in the name (``_s`` seconds, ``_ms`` milliseconds, ``_us`` microseconds).
Every ambiguity of the spec (AMB-4.x) is a named field with the spec's default.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, field
from typing import Any

from sim.timeshare.cluster import MAX_NODES, MAX_REFS_PER_DISPATCH

#: The message models of :mod:`sim.timeshare.csm` ("pairwise" is the default).
MSG_MODEL_NAMES = ("pairwise", "exchange", "ring", "async", "probe")
#: Options recorded by ``CSMConfig.to_dict`` only when not at these defaults.
OPTION_DEFAULTS = {"msg_model": "pairwise", "fault_service": "parallel",
                   "refs_per_dispatch": 1}


MIN_MFREQ_MS = 0.01
"""Shortest mean CPU burst between messages, ms (ten clock ticks of 1 us)."""

MAX_MESSAGE_ROUNDS = 1e9
"""Most message rounds a configuration may imply (``n_jobs`` x the largest mean task
time / ``mfreq_ms``): the paper's sizes at 10 ms imply 3.6e8."""

@dataclass(frozen=True)
class CSMConfig:
    """All parameters of one CSM experiment point.

    Parameters (defaults: the paper and the spec's defaults)
    ----------
    n_nodes : cluster size n (32)
    mem_pages : M, page frames per node (32768 = 128 MB of 4 KB pages)
    mest : memory estimate in pages (8192): local vir_mem U[1, mest], small
        U[mest, 2 mest], large U[2 mest, 4 mest]
    mem_load : target memory load (eq. 5), > 0
    pdt : probability of a large job among the distributed jobs (class mixes "a", "c",
        "t") or of a small job (class mix "b")
    n_jobs : arrivals per run (AMB-4.16: every arrival, local task or distributed job,
        counts as a job; ``count_locals=False`` counts distributed jobs only)
    tc_small_s, tc_large_s, tc_local_s : mean processing requirement per task in
        seconds (300, 3600, 300), hyperexponential (balanced means) with ``tc_cv``
        (AMB-4.12, 3.5)
    mfreq_ms : mean CPU burst between two messages of a distributed task, ms (AMB-4.10)
    quantum_ms : mean of the exponential quantum, ms (100; AMB-4.9)
    fault_ms : constant page-fault latency, ms (20)
    latency_us : network latency, µs (100 = 0.1 ms; AMB-4.10)
    ws_local, ws_dist : mean working-set size as a fraction of vir_mem (0.5, 0.8)
    ws_std : WS standard deviation as a fraction of vir_mem (AMB-4.11, 0.1)
    phase_frac : mean phase length as a fraction of tc (0.1)
    class_mix : "a" two streams (distributed jobs to the cluster, local tasks to every
        node, both with mean inter-arrival mit) or "b" one stream, local w.p. 1 - pdt and
        small w.p. pdt (AMB-4.7; the spec uses "b" at mem_load 0.7), or "c" one mixed
        stream: local w.p. 1/2, else a distributed job, large w.p. pdt (the
        "job-one-stream" reading of :func:`load_readings`), or "t" one stream: local
        w.p. 1/3, else a distributed job, large w.p. pdt (at pdt 0.5 the three kinds in
        equal parts)
    small_sizes, large_sizes : allowed job sizes, drawn uniformly (AMB-4.8)
    tc_scale, mem_scale : scale factors applied to every tc and to M / mest (1.0 = the
        paper). Scaling both by the same factor keeps the number of dispatches per phase
        in proportion to the WS size in pages (one reference per dispatch).
    pgfault_formula : "corrected" or "literal" eq. 3 (AMB-4.2)
    mit_s : mean inter-arrival time in seconds; None = calibrated from mem_load (eq. 5)
    msg_model : how a distributed task sends and receives (AMB-4.10):
        "pairwise" (default, the spec's [A]), "exchange", "ring", "async" or "probe"
        (:data:`sim.timeshare.csm.MSG_MODELS` defines each)
    fault_service : "parallel" (default) or "fifo" page-fault service (AMB-4.11)
    refs_per_dispatch : page references per dispatch (default 1, AMB-4.11)

    The last three are written by :meth:`to_dict` only when not the default, so the
    recorded configurations (and result caches) of default runs do not change.
    """

    n_nodes: int = 32
    mem_pages: int = 32_768
    mest: int = 8_192
    mem_load: float = 1.0
    pdt: float = 0.5
    n_jobs: int = 1000
    count_locals: bool = True
    tc_small_s: float = 300.0
    tc_large_s: float = 3600.0
    tc_local_s: float = 300.0
    tc_cv: float = 3.5
    mfreq_ms: float = 100.0
    quantum_ms: float = 100.0
    fault_ms: float = 20.0
    latency_us: int = 100
    ws_local: float = 0.5
    ws_dist: float = 0.8
    ws_std: float = 0.1
    phase_frac: float = 0.1
    class_mix: str = "a"
    small_sizes: tuple[int, ...] = (1, 2, 4)
    large_sizes: tuple[int, ...] = (8, 16, 32)
    tc_scale: float = 1.0
    mem_scale: float = 1.0
    pgfault_formula: str = "corrected"
    mit_s: float | None = None
    msg_model: str = "pairwise"
    fault_service: str = "parallel"
    refs_per_dispatch: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        def need(ok: bool, name: str, what: str) -> None:
            if not ok:
                raise ValueError(f"{name} {what}, got {getattr(self, name)!r}")

        need(isinstance(self.n_nodes, int) and 0 < self.n_nodes <= MAX_NODES, "n_nodes",
             f"must be in [1, {MAX_NODES:,}]")
        need(isinstance(self.mem_pages, int) and self.mem_pages > 0, "mem_pages",
             "must be a positive integer")
        need(isinstance(self.mest, int) and self.mest > 0, "mest", "must be > 0")
        need(0 < self.mem_load < math.inf, "mem_load", "must be a finite number > 0")
        need(0.0 <= self.pdt <= 1.0, "pdt", "must be in [0, 1]")
        need(isinstance(self.n_jobs, int) and self.n_jobs > 0, "n_jobs", "must be > 0")
        for f in ("tc_small_s", "tc_large_s", "tc_local_s", "mfreq_ms", "quantum_ms",
                  "tc_scale", "mem_scale"):
            need(0 < getattr(self, f) < math.inf, f, "must be a finite number > 0")
        need(self.tc_cv >= 1.0, "tc_cv", "must be >= 1 (hyperexponential)")
        need(self.fault_ms >= 0, "fault_ms", "must be >= 0")
        need(isinstance(self.latency_us, int) and self.latency_us >= 0, "latency_us",
             "must be an integer >= 0")
        for f in ("ws_local", "ws_dist", "phase_frac"):
            need(0 < getattr(self, f) <= 1, f, "must be in (0, 1]")
        need(self.ws_std >= 0, "ws_std", "must be >= 0")
        need(self.class_mix in ("a", "b", "c", "t"), "class_mix",
             "must be 'a', 'b', 'c' or 't'")
        need(self.pgfault_formula in ("corrected", "literal"), "pgfault_formula",
             "must be 'corrected' or 'literal'")
        for f in ("small_sizes", "large_sizes"):
            sizes = getattr(self, f)
            need(len(sizes) > 0 and all(isinstance(s, int) and s > 0 for s in sizes), f,
                 "must be positive integers")
            need(max(sizes) <= self.n_nodes, f,
                 f"holds a job wider than the cluster (n_nodes = {self.n_nodes})")
        need(self.mit_s is None or self.mit_s > 0, "mit_s", "must be > 0")
        need(self.mfreq_ms >= MIN_MFREQ_MS, "mfreq_ms",
             f"must be >= {MIN_MFREQ_MS} ms (the clock counts microseconds)")
        rounds = self.n_jobs * max(self.tc_small_s, self.tc_large_s) * self.tc_scale \
            * 1000.0 / self.mfreq_ms
        need(rounds <= MAX_MESSAGE_ROUNDS, "mfreq_ms",
             f"gives about {rounds:.3g} message rounds (n_jobs x the largest mean tc / "
             f"mfreq), over the {MAX_MESSAGE_ROUNDS:.0e} a run is allowed")
        need(self.msg_model in MSG_MODEL_NAMES, "msg_model",
             f"must be one of {', '.join(MSG_MODEL_NAMES)}")
        need(self.fault_service in ("parallel", "fifo"), "fault_service",
             "must be 'parallel' or 'fifo'")
        need(isinstance(self.refs_per_dispatch, int)
             and 1 <= self.refs_per_dispatch <= MAX_REFS_PER_DISPATCH,
             "refs_per_dispatch", f"must be an integer in [1, {MAX_REFS_PER_DISPATCH:,}]")
        need(4 * self.mest_scaled <= self.pages_scaled, "mest",
             "makes a large task (up to 4 mest pages) larger than M, which the model "
             "cannot page")

    @property
    def pages_scaled(self) -> int:
        """M after ``mem_scale`` (pages)."""
        return max(1, int(round(self.mem_pages * self.mem_scale)))

    @property
    def mest_scaled(self) -> int:
        """mest after ``mem_scale`` (pages)."""
        return max(1, int(round(self.mest * self.mem_scale)))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["small_sizes"] = list(self.small_sizes)
        d["large_sizes"] = list(self.large_sizes)
        for name, default in OPTION_DEFAULTS.items():
            if d[name] == default:
                del d[name]
        return d


@dataclass(frozen=True)
class Arrival:
    """One arrival: ``time_us``; ``kind`` "local" | "small" | "large"; one entry per task
    in ``tc_us`` (µs of CPU) and ``vir_mem`` (pages); ``node`` for a local task."""

    time_us: int
    kind: str
    tc_us: tuple[int, ...]
    vir_mem: tuple[int, ...]
    node: int | None = None


def h2(rng: random.Random, mean: float, cv: float) -> float:
    """Balanced-means two-phase hyperexponential with the given mean and CV."""
    if cv <= 1.0:
        return rng.expovariate(1.0 / mean)
    c2 = cv * cv
    p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
    if rng.random() < p1:
        return rng.expovariate(2.0 * p1 / mean)
    return rng.expovariate(2.0 * (1.0 - p1) / mean)


def _class_means(cfg: CSMConfig) -> dict[str, tuple[float, float, float]]:
    """Per class: (mean size, mean tc per task in s, mean vir_mem per task in pages)."""
    m = cfg.mest_scaled
    return {
        "local": (1.0, cfg.tc_local_s * cfg.tc_scale, (1 + m) / 2),
        "small": (sum(cfg.small_sizes) / len(cfg.small_sizes), cfg.tc_small_s * cfg.tc_scale,
                  1.5 * m),
        "large": (sum(cfg.large_sizes) / len(cfg.large_sizes), cfg.tc_large_s * cfg.tc_scale,
                  3.0 * m),
    }


def class_rates(cfg: CSMConfig) -> dict[str, float]:
    """Arrivals per second of each class for mit = 1 s (multiply by 1/mit)."""
    if cfg.class_mix == "a":
        return {"local": float(cfg.n_nodes), "small": 1.0 - cfg.pdt, "large": cfg.pdt}
    if cfg.class_mix == "c":
        return {"local": 0.5, "small": 0.5 * (1.0 - cfg.pdt), "large": 0.5 * cfg.pdt}
    if cfg.class_mix == "t":
        return {"local": 1.0 / 3.0, "small": 2.0 / 3.0 * (1.0 - cfg.pdt),
                "large": 2.0 / 3.0 * cfg.pdt}
    return {"local": 1.0 - cfg.pdt, "small": cfg.pdt, "large": 0.0}


def calibrate_mit(cfg: CSMConfig) -> float:
    """Mean inter-arrival time (s) that gives ``mem_load`` by eq. 5 (spec reading).

    mem_load = E[memory demand per node] / M, with the demand of a task counted for its
    service demand tc (Little's law with tc, not the response time):
    ``mem_load = sum_c rate_c · E[size_c] · E[tc_c] · E[vir_c] / (mit · n · M)``.
    """
    means = _class_means(cfg)
    rates = class_rates(cfg)
    demand = sum(rates[c] * s * tc * v for c, (s, tc, v) in means.items())
    return demand / (cfg.n_nodes * cfg.pages_scaled * cfg.mem_load)


def expected_tasks_per_node(cfg: CSMConfig, mit_s: float | None = None) -> float:
    """Mean tasks per node by Little's law with the service demand (eq. 5's reading)."""
    mit = mit_s if mit_s is not None else (cfg.mit_s or calibrate_mit(cfg))
    means = _class_means(cfg)
    rates = class_rates(cfg)
    return sum(rates[c] * s * tc for c, (s, tc, _) in means.items()) / (mit * cfg.n_nodes)


def generate(cfg: CSMConfig, seed: int) -> list[Arrival]:
    """The arrivals of one run, in time order (µs), drawn from ``random.Random(seed)``."""
    rng = random.Random(seed * 1_000_003 + 11)
    mit = cfg.mit_s if cfg.mit_s is not None else calibrate_mit(cfg)
    rates = class_rates(cfg)
    total = sum(rates.values())
    m = cfg.mest_scaled
    out: list[Arrival] = []
    t = 0.0
    n_counted = 0
    classes = [c for c in ("local", "small", "large") if rates[c] > 0]
    weights = [rates[c] for c in classes]
    while n_counted < cfg.n_jobs:
        t += rng.expovariate(total / mit)
        kind = rng.choices(classes, weights)[0]
        if kind == "local":
            size, mean_tc, lo, hi = 1, cfg.tc_local_s, 1, m
        elif kind == "small":
            size, mean_tc, lo, hi = rng.choice(cfg.small_sizes), cfg.tc_small_s, m, 2 * m
        else:
            size, mean_tc, lo, hi = rng.choice(cfg.large_sizes), cfg.tc_large_s, 2 * m, 4 * m
        mean_tc *= cfg.tc_scale
        # AMB-4.13: tc is per task; one draw per job, every task of the job needs it
        tcs = (max(1, int(round(h2(rng, mean_tc, cfg.tc_cv) * 1e6))),) * size
        vms = tuple(rng.randint(lo, hi) for _ in range(size))
        node = rng.randrange(cfg.n_nodes) if kind == "local" else None
        out.append(Arrival(int(round(t * 1e6)), kind, tcs, vms, node))
        if kind != "local" or cfg.count_locals:
            n_counted += 1
    return out


#: Readings of the paper's "average load per node" (spec 3.4, target 3.7.1) compared by
#: :func:`load_readings`; "demand" is the spec's reading used by :func:`calibrate_mit`.
LOAD_READINGS = ("demand", "task", "job", "job-one-stream")


def load_readings(cfg: CSMConfig) -> dict[str, float]:
    """Tasks per node implied by ``mem_load`` under each reading of eq. 5's memory term.

    Every reading is ``mem_load · M / m``, with ``m`` the mean vir_mem (pages) per unit
    counted as one "task":

    - ``"demand"``: per task, weighted by its service demand tc (Little's law; the
      spec's reading, equal to :func:`expected_tasks_per_node` at the eq. 5 mit);
    - ``"task"``: per task, every task counted once (no tc weight);
    - ``"job"``: per job arrival of the configured class mix, one vir_mem draw per job
      whatever its size;
    - ``"job-one-stream"``: per job arrival of a single stream in which an arrival is a
      local task w.p. 1/2 and otherwise a distributed job (large w.p. ``pdt``); with
      class mix "b" (no large jobs) it is the "job" reading.

    No simulation: these are the closed forms of the workload's class means
    (local (1 + mest)/2, small 1.5 mest, large 3 mest pages after ``mem_scale``).
    """
    means = _class_means(cfg)
    rates = class_rates(cfg)
    target = cfg.mem_load * cfg.pages_scaled

    def ratio(weights: dict[str, float]) -> float:
        tot = sum(weights.values())
        return target * tot / sum(w * means[c][2] for c, w in weights.items())

    out = {
        "demand": ratio({c: rates[c] * s * tc for c, (s, tc, _) in means.items()}),
        "task": ratio({c: rates[c] * s for c, (s, _, _) in means.items()}),
        "job": ratio(dict(rates)),
    }
    if cfg.class_mix in ("b", "c"):
        out["job-one-stream"] = out["job"]
    else:
        out["job-one-stream"] = ratio({"local": 0.5, "small": 0.5 * (1 - cfg.pdt),
                                       "large": 0.5 * cfg.pdt})
    return out
