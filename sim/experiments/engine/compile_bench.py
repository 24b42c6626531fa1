"""What numba's first compile of the kernels costs, kernel by kernel, from a cold cache.

A fresh clone (CI, every new user) compiles every kernel at its first call. This bench
points ``NUMBA_CACHE_DIR`` to a new empty directory (before numba is imported), then, in
this one process, compiles the two groups the test run compiles first
(``tests/conftest.py``):

- ``batch``: the batch engine's, the slack scheduler's and the slack search's kernels
  (:func:`sim.batch.fast.cache.compile_kernels`);
- ``csm``: the time-sharing cluster's kernel (one small point of
  :func:`sim.timeshare.fast.run.simulate`, the test run's warm-up point).

It listens to numba's compile events (:mod:`numba.core.event`) and prints per group the
CPU seconds of the whole group (``time.process_time``), of numba's compiles, of their
LLVM work (the time numba holds its LLVM lock) and the number of kernels and of compiled
versions; then per kernel (``--top`` heaviest first) its own compile CPU (without the
kernels it compiles in turn), LLVM CPU, versions and front-end builds (how many times
numba translated its bytecode: once per version, plus once per call site it is inlined at
with ``inline="always"``); then every kernel compiled in more than one version, with the
signatures (``Literal[int](1)`` is an argument that numba specialised on a constant).
Times are CPU seconds; the load average is printed before and after (the machine may be
shared).

Run: ``python -m sim.experiments.engine.compile_bench [--group batch csm] [--top 15]``.
Writes nothing but its temporary cache directory, removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sim.argparser import Parser


@dataclass
class KernelCost:
    """Compile figures of one kernel (a numba dispatcher).

    Attributes
    ----------
    cpu : float
        CPU seconds of its own compiles (nested compiles of other kernels excluded).
    llvm : float
        CPU seconds of those spent holding numba's LLVM lock.
    versions : list of str
        The signatures compiled.
    builds : int
        Front-end builds: times numba translated its bytecode (each version, each
        ``inline="always"`` call site).
    """

    cpu: float = 0.0
    llvm: float = 0.0
    versions: list[str] = field(default_factory=list)
    builds: int = 0


class CompileListener:
    """Records numba's compile, LLVM-lock and pass events into :class:`KernelCost` rows,
    keyed by ``module.qualname``, with CPU times (``time.process_time``)."""

    def __init__(self) -> None:
        self.costs: dict[str, KernelCost] = defaultdict(KernelCost)
        #: CPU seconds per compiler pass (its own: nested passes excluded)
        self.passes: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []  # [name, start, child cpu, llvm cpu]
        self._pass_stack: list[list[Any]] = []  # [pass, start, child cpu]
        self._llvm_depth = 0
        self._llvm_start = 0.0

    # numba.core.event.Listener's interface, one listener for three event kinds
    def on_start(self, event: Any) -> None:
        kind = event.kind
        if kind == "numba:compile":
            d = event.data["dispatcher"]
            name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
            self._stack.append([name, time.process_time(), 0.0, 0.0])
        elif kind == "numba:llvm_lock":
            self._llvm_depth += 1
            if self._llvm_depth == 1:
                self._llvm_start = time.process_time()
        elif kind == "numba:run_pass":
            name = event.data["name"].split(" ", 1)[0]
            if name == "translate_bytecode":
                self.costs[f"{event.data['module']}.{event.data['qualname']}"].builds += 1
            self._pass_stack.append([name, time.process_time(), 0.0])

    def on_end(self, event: Any) -> None:
        kind = event.kind
        if kind == "numba:compile":
            name, start, child, llvm = self._stack.pop()
            spent = time.process_time() - start
            row = self.costs[name]
            row.cpu += spent - child
            row.llvm += llvm
            row.versions.append(", ".join(str(a) for a in event.data["args"]))
            if self._stack:
                self._stack[-1][2] += spent
        elif kind == "numba:llvm_lock":
            self._llvm_depth -= 1
            if self._llvm_depth == 0 and self._stack:
                self._stack[-1][3] += time.process_time() - self._llvm_start
        elif kind == "numba:run_pass":
            name, start, child = self._pass_stack.pop()
            spent = time.process_time() - start
            self.passes[name] += spent - child
            if self._pass_stack:
                self._pass_stack[-1][2] += spent

    def notify(self, event: Any) -> None:
        (self.on_start if event.is_start else self.on_end)(event)


def _batch() -> None:
    """The batch group (``tests/conftest.py``'s ``_compile_batch``)."""
    from sim.batch.fast import cache

    cache.compile_kernels()


def _csm() -> None:
    """The CSM group (``tests/conftest.py``'s ``_compile_csm``)."""
    from heuristics.coscheduling import by_name
    from sim.timeshare.fast.run import simulate
    from sim.timeshare.workload import CSMConfig

    simulate(CSMConfig(n_nodes=8, n_jobs=4, tc_scale=0.01, mem_scale=0.01,
                       large_sizes=(8,)), by_name("csm"), 1)


GROUPS: dict[str, Callable[[], None]] = {"batch": _batch, "csm": _csm}


def _loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def measure(group: str) -> tuple[float, CompileListener]:
    """CPU seconds of compiling ``group`` in this process, and the events recorded."""
    from numba.core import event

    event.Listener.register(CompileListener)  # numba accepts Listener instances only
    listener = CompileListener()
    kinds = ("numba:compile", "numba:llvm_lock", "numba:run_pass")
    for kind in kinds:
        event.register(kind, listener)
    try:
        t = time.process_time()
        GROUPS[group]()
        cpu = time.process_time() - t
    finally:
        for kind in kinds:
            event.unregister(kind, listener)
    return cpu, listener


def report(group: str, cpu: float, listener: CompileListener, top: int) -> None:
    """Print one group's figures (module docstring)."""
    costs = {k: v for k, v in listener.costs.items() if v.versions}
    builds = {k: v.builds for k, v in listener.costs.items() if v.builds}
    compile_cpu = sum(c.cpu for c in costs.values())
    llvm = sum(c.llvm for c in costs.values())
    versions = sum(len(c.versions) for c in costs.values())
    print(f"\n== {group}: {cpu:.1f} s CPU, of which numba compiling {compile_cpu:.1f} s "
          f"(LLVM {llvm:.1f} s); {len(costs)} kernels, {versions} versions", flush=True)
    print(f"{'kernel':<52} {'cpu s':>7} {'llvm s':>7} {'versions':>8} {'builds':>6}")
    for name, c in sorted(costs.items(), key=lambda kv: -kv[1].cpu)[:top]:
        print(f"{name:<52} {c.cpu:7.2f} {c.llvm:7.2f} {len(c.versions):8d} {c.builds:6d}")
    print("-- most front-end builds: " + ", ".join(
        f"{k.rsplit('.', 1)[-1]} {n}" for k, n in sorted(builds.items(), key=lambda kv: -kv[1])
        [:8]))
    print("-- CPU per compiler pass: " + ", ".join(
        f"{k} {v:.1f} s" for k, v in sorted(listener.passes.items(), key=lambda kv: -kv[1])
        [:8]))
    # numba's own library implementations (numba.*) are compiled per argument type
    again = {k: c for k, c in costs.items() if len(c.versions) > 1
             and not k.startswith("numba.")}
    extra = sum(c.cpu * (len(c.versions) - 1) / len(c.versions) for c in again.values())
    print(f"-- {len(again)} kernels compiled more than once "
          f"(~{extra:.1f} s CPU in the extra versions)")
    for name, c in sorted(again.items()):
        print(f"   {name}:")
        for v in c.versions:
            print(f"      ({v})")


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--group", nargs="+", choices=tuple(GROUPS), default=list(GROUPS))
    ap.add_argument("--top", type=int, default=15, help="kernels listed per group")
    args = ap.parse_args(argv)
    if "numba" in __import__("sys").modules:
        raise SystemExit("compile_bench: numba already imported; run it as a fresh process")
    cache = tempfile.mkdtemp(prefix="compile-bench-")
    os.environ["NUMBA_CACHE_DIR"] = cache
    try:
        import numba

        print(f"numba {numba.__version__}, cold cache {cache}; load average {_loadavg()}",
              flush=True)
        for group in args.group:
            cpu, listener = measure(group)
            report(group, cpu, listener, args.top)
        print(f"\nload average at the end {_loadavg()}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
