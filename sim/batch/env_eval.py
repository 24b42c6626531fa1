"""Policies of ``SchedulingEnv`` measured against the proved offline optimum of each window.

``evaluate(policies, windows)`` runs every policy on every window of a trace and solves,
for each window, the offline problem of minimum total response time with release times
on one resource (the K-resource response model, ``sim.problems.kresource.ResponseProblem``
with K = 1, solved by ``sim.registry.SOLVERS["kresource_response"]``, CP-SAT by default).
The optimum is offline and clairvoyant: it knows every job's arrival and its actual run
length ``min(runtime, requested)`` (jobs are killed at their request), and starts from
the same empty machine. Every online schedule of the window is a feasible solution of
that problem, so a policy's average wait is never below the proved optimum's; the gap is
what the online policy loses, on the same jobs.

Since total response = total wait + the fixed sum of run lengths, the optimum minimises
the average wait exactly; the average bounded slowdown reported for the optimum is that
of the wait-optimal schedule (not a bounded-slowdown optimum). Jobs of zero run length
hold no processor: they are left out of the model and start at their arrival. When the
solver stops at its time limit without a proof the row says ``FEASIBLE`` and gives the
lower bound on the average wait; gaps are then measured to the best schedule known on
the window (the solver's or any policy's, each a feasible solution of the same problem:
gaps are never negative), and ``gap_bound_s`` to the bound.

Built-in policies (``BUILTINS``): ``fcfs`` (always action 0), ``sjf`` (shortest requested
time first, the oldest on ties), ``easy`` (action 0 with ``backfill="easy"``),
``sjf-easy`` (SJF picks with EASY backfilling), and ``slack`` (Talby & Feitelson's
slack-based scheduler, registry name ``slack`` with its defaults: its reservations and
slack are not a pick-the-next-job rule, so it runs through ``simulate`` on the same
window, not as an environment policy).

A user's agent (``sim.batch.env_agent``: ``act(obs, info) -> action`` named
``MODULE:NAME`` or by an entry point of ``schedsearch.agents``) runs beside them in a
worker process stopped at ``agent_time_limit`` seconds per window; its actions are
replayed and validated here. A window it does not finish (an invalid action, an
exception, a crash, the limit) is a failed row: ``status`` ``"failed"``, the reason in
``error``, no metrics; the summary counts failed windows and averages the others.

Command line: ``main(argv)`` (``python -m sim.batch.env_eval --trace lublin_256 --windows
20 --length 32``) prints the table and the wall time; it returns 0, or 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from instances.job import Workload
from sim.argparser import Parser
from sim.batch.env import SchedulingEnv, _window_workload
from sim.batch.env_agent import AgentFailure, AgentRunner, AgentSpec, resolve_agent
from sim.batch.machine import Schedule, simulate
from sim.batch.metrics import summary
from sim.batch.policy import PolicySpec
from sim.batch.validate import validate
from sim.registry import policy_spec

#: metrics kept per row (from ``sim.batch.metrics.summary``)
METRICS = ("avg_wait", "avg_bounded_slowdown", "utilization", "makespan")


@dataclass(frozen=True)
class EnvPolicy:
    """A policy of ``SchedulingEnv``: ``act(env) -> action`` for the env's current state
    (``env.last_obs``, ``env.last_info``, ``env.waiting()``), run with ``backfill``."""

    name: str
    act: Callable[[SchedulingEnv], int]
    backfill: str | None = None


@dataclass(frozen=True)
class SimPolicy:
    """A simulator policy, resolved (``sim.registry.policy_spec``), run by ``simulate``
    on the same window."""

    name: str
    spec: PolicySpec


def first(env: SchedulingEnv) -> int:
    """The oldest waiting job (FCFS order)."""
    return 0


def shortest(env: SchedulingEnv) -> int:
    """The waiting job with the shortest requested time, the oldest on ties."""
    return int(np.argmin(env.waiting()["requested"]))


BUILTINS: dict[str, EnvPolicy | SimPolicy] = {
    "fcfs": EnvPolicy("fcfs", first),
    "sjf": EnvPolicy("sjf", shortest),
    "easy": EnvPolicy("easy", first, "easy"),
    "sjf-easy": EnvPolicy("sjf-easy", shortest, "easy"),
    "slack": SimPolicy("slack", policy_spec("slack")),
}


def run_policy(policy: EnvPolicy, env: SchedulingEnv, start: int, length: int
               ) -> dict[str, Any]:
    """One episode of ``policy`` on jobs ``start .. start+length-1``; the episode's
    ``summary`` metrics (validated when ``env.check``)."""
    env.reset(options={"start": start, "length": length})
    done = False
    info: dict[str, Any] = {}
    while not done:
        _, _, done, _, info = env.step(policy.act(env))
    return info["metrics"]


def optimum(workload, *, solver: str = "cpsat", time_limit: float | None = 10.0,
            seed: int = 0) -> dict[str, Any]:
    """The offline minimum total response time of ``workload`` (one resource, from an
    empty machine at its first submit), as ``summary`` metrics of the optimal schedule
    plus ``status``, ``avg_wait_bound`` (s, a proved lower bound on the average wait)
    and ``solve_seconds``. The schedule passes the validator."""
    from sim.problems.kresource import ResponseProblem
    from sim.registry import solver as get_solver

    jobs = workload.jobs
    n = len(jobs)
    t0 = jobs[0].submit
    run = np.array([min(j.runtime, j.requested) for j in jobs], dtype=np.int64)
    sub = np.array([j.submit for j in jobs], dtype=np.int64)
    busy = np.flatnonzero(run > 0)
    start = sub.copy()  # zero-length jobs start at their arrival
    status, bound = "OPTIMAL", 0.0
    t = time.perf_counter()
    if len(busy):
        prob = ResponseProblem(capacity=workload.capacity,
                               release=tuple(int(sub[i] - t0) for i in busy),
                               duration=tuple(int(run[i]) for i in busy),
                               demands=tuple(jobs[i].demand for i in busy),
                               name=f"{workload.name} offline")
        res = get_solver("kresource_response", solver)(prob, time_limit=time_limit, seed=seed)
        if res.solution is None:
            raise ValueError(f"{workload.name}: {solver} found no schedule within the time "
                             f"limit of {time_limit} s (status {res.status.value}): give a "
                             "longer time limit, or no optimum (solver 'none')")
        start[busy] = np.asarray(res.solution, dtype=np.int64) + t0
        status = res.status.value
        # objective = sum(start - release + run): the wait is the objective less the runs
        lb = res.bound if res.bound is not None else float(run[busy].sum())
        bound = max(0.0, (float(lb) - float(run[busy].sum())) / n)
    sched = Schedule(workload=workload, policy=f"optimum-{solver}", start=start,
                     end=start + run,
                     killed=np.array([j.runtime > j.requested for j in jobs], dtype=bool))
    validate(sched)
    out = summary(sched)
    out["status"] = status
    out["avg_wait_bound"] = out["avg_wait"] if status == "OPTIMAL" else bound
    out["solve_seconds"] = time.perf_counter() - t
    return out


Policy = EnvPolicy | SimPolicy | AgentSpec


def _resolve(p: str | Policy) -> Policy:
    """A built-in name, an agent (``MODULE:NAME`` or an entry point) or a policy object."""
    if isinstance(p, (EnvPolicy, SimPolicy, AgentSpec)):
        return p
    if p in BUILTINS:
        return BUILTINS[p]
    from sim.batch.env_agent import entry_point_agents

    if ":" in p or p in entry_point_agents():
        return resolve_agent(p)
    from sim.names import did_you_mean

    raise ValueError(f"policies: unknown policy {p!r}; {did_you_mean(p, BUILTINS)}built-in: "
                     f"{sorted(BUILTINS)}; an agent is MODULE:NAME")


def evaluate(policies: Sequence[str | Policy] = tuple(BUILTINS),
             windows: Sequence[tuple[int, int]] = (), *, trace: Any = "lublin_256",
             procs: int | None = None, solver: str | None = "cpsat",
             time_limit: float | None = 10.0, obs_jobs: int = 64,
             agent_time_limit: float | None = 60.0) -> list[dict[str, Any]]:
    """Every policy's metrics on every window, and its gap to the offline optimum.

    Parameters
    ----------
    policies : sequence of str, EnvPolicy, SimPolicy or AgentSpec
        Built-in names (``BUILTINS``), agents (``MODULE:NAME``, entry points) or policy
        objects.
    windows : sequence of (start, length)
        Jobs ``start .. start+length-1`` of the cleaned workload.
    trace, procs
        As for ``SchedulingEnv``.
    solver : str or None
        Solver of ``kresource_response`` for the optimum (None: no optimum).
    time_limit : float or None
        Seconds per optimum.
    obs_jobs : int
        Selectable waiting jobs of the environment policies.
    agent_time_limit : float or None
        Seconds per window of an agent's episode (its worker is killed beyond).

    Returns
    -------
    list of dict
        One row per (window, policy), the optimum's row named ``"optimum"`` first:
        ``start, length, policy, status`` (the optimum's solver status, else ``""``),
        the ``METRICS``, and ``gap_s`` (average wait minus the reference's, s: the
        proved optimum's, or without a proof the least of the block's, see
        :func:`_gaps`), ``gap`` (that over the reference's average wait; None when 0) and
        ``gap_bound_s`` (average wait minus the proved lower bound, s). A failed
        agent window has ``status`` ``"failed"``, ``error`` and None for the figures.
    """
    pols = [_resolve(p) for p in policies]
    if not windows:
        raise ValueError("windows: give at least one (start, length)")
    runners = {p.name: AgentRunner(p, agent_time_limit) for p in pols
               if isinstance(p, AgentSpec)}
    try:
        for r in runners.values():  # an agent that does not load is bad input
            r.start()
        return _evaluate(pols, windows, trace, procs, solver, time_limit, obs_jobs, runners)
    finally:
        for r in runners.values():
            r.close()


def _evaluate(pols: list[Policy], windows: Sequence[tuple[int, int]], trace: Any,
              procs: int | None, solver: str | None, time_limit: float | None,
              obs_jobs: int, runners: dict[str, AgentRunner]) -> list[dict[str, Any]]:
    envs: dict[str | None, SchedulingEnv] = {}
    workload = None
    rows: list[dict[str, Any]] = []
    for start, length in windows:
        for p in pols:
            if isinstance(p, EnvPolicy) and p.backfill not in envs:
                envs[p.backfill] = SchedulingEnv(
                    trace if workload is None else workload, procs=procs, window=length,
                    obs_jobs=obs_jobs, backfill=p.backfill)
                workload = envs[p.backfill].workload
        if workload is None:
            workload = SchedulingEnv(trace, procs=procs, window=length).workload
        part = _window_workload(workload, start, length) if 0 <= start and \
            start + length <= len(workload) else None
        if part is None:
            raise ValueError(f"windows: ({start}, {length}) is outside the trace's "
                             f"{len(workload)} jobs")
        block: list[dict[str, Any]] = []
        opt = None
        if solver is not None:
            opt = optimum(part, solver=solver, time_limit=time_limit)
            block.append(_row(start, length, "optimum", opt, opt["status"], opt))
        for p in pols:
            if isinstance(p, AgentSpec):
                try:
                    m = runners[p.name].run(part)
                except AgentFailure as exc:
                    block.append(_failed(start, length, p.name, str(exc), opt))
                    continue
            elif isinstance(p, EnvPolicy):
                m = run_policy(p, envs[p.backfill], start, length)
            else:
                sched = simulate(part, p.spec.build())
                validate(sched)
                m = summary(sched)
            block.append(_row(start, length, p.name, m, "", opt))
        rows.extend(_gaps(block, opt))
    return rows


def _gaps(block: list[dict[str, Any]], opt: dict[str, Any] | None) -> list[dict[str, Any]]:
    """``block``'s gaps to the window's reference: the proved optimum, or without a proof
    the least average wait of any schedule in the block (the solver's included)."""
    if opt is None:
        return block
    waits = [r["avg_wait"] for r in block if r["status"] != "failed"]
    ref = opt["avg_wait"] if opt["status"] == "OPTIMAL" else min(waits)
    for r in block:
        if r["status"] != "failed":
            r["gap_s"] = r["avg_wait"] - ref
            r["gap"] = r["gap_s"] / ref if ref > 0 else None
    return block


def _row(start: int, length: int, name: str, m: dict[str, Any], status: str,
         opt: dict[str, Any] | None) -> dict[str, Any]:
    row: dict[str, Any] = {"start": start, "length": length, "policy": name,
                           "status": status}
    row.update({k: m[k] for k in METRICS})
    if opt is not None:  # gap_s and gap: set by _gaps once the block is complete
        row["gap_bound_s"] = m["avg_wait"] - opt["avg_wait_bound"]
    return row


def _failed(start: int, length: int, name: str, error: str, opt: dict[str, Any] | None
            ) -> dict[str, Any]:
    row: dict[str, Any] = {"start": start, "length": length, "policy": name,
                           "status": "failed", "error": error}
    row.update(dict.fromkeys(METRICS))
    if opt is not None:
        row.update(gap_s=None, gap=None, gap_bound_s=None)
    return row


def window_table(rows: Sequence[dict[str, Any]]) -> str:
    """Per window (its first job and length): the optimum's status and each policy's
    gap to the optimum's average wait (s; to the window's best schedule where the optimum
    is not proved), ``failed`` where the policy did not finish."""
    names = [n for n in dict.fromkeys(r["policy"] for r in rows) if n != "optimum"]
    if not any("gap_s" in r for r in rows):
        return ""
    width = max([10, *(len(n) for n in names)])
    lines = [f"{'window':>13} {'optimum':>9} " + " ".join(f"{n:>{width}}" for n in names)
             + "   (gap to the optimum's average wait, s; to the window's best where the "
             "optimum is not proved)"]
    by_window: dict[tuple[int, int], dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_window.setdefault((r["start"], r["length"]), {})[r["policy"]] = r
    for (start, length), block in by_window.items():
        cells = []
        for n in names:
            r = block.get(n)
            cells.append("failed" if r is None or r["gap_s"] is None
                         else f"{r['gap_s']:.1f}")
        status = block["optimum"]["status"] if "optimum" in block else "-"
        lines.append(f"{f'{start}+{length}':>13} {status:>9} "
                     + " ".join(f"{c:>{width}}" for c in cells))
    return "\n".join(lines)


def table(rows: Sequence[dict[str, Any]]) -> str:
    """Per policy over all windows: mean average wait (s) and bounded slowdown, mean gap
    to the reference's average wait (s; the proved optimum, else the best schedule of the
    window), the windows where the policy matched the reference (``=ref``),
    for the optimum how many windows were proved, and the failed windows (averages are
    over the others)."""
    names = list(dict.fromkeys(r["policy"] for r in rows))
    width = max([10, *(len(n) for n in names)])
    lines = [f"{'policy':<{width}} {'windows':>7} {'avg_wait_s':>11} {'avg_bsld':>9} "
             f"{'gap_s':>9} {'=ref':>5} {'proved':>7} {'failed':>6}"]
    for nm in names:
        every = [r for r in rows if r["policy"] == nm]
        rs = [r for r in every if r["status"] != "failed"]
        failed = len(every) - len(rs)
        if not rs:
            lines.append(f"{nm:<{width}} {len(every):>7} {'-':>11} {'-':>9} {'-':>9} "
                         f"{'-':>5} {'':>7} {failed:>6}")
            continue
        wait = np.mean([r["avg_wait"] for r in rs])
        bsld = np.mean([r["avg_bounded_slowdown"] for r in rs])
        if "gap_s" in rs[0]:
            gap = f"{np.mean([r['gap_s'] for r in rs]):9.1f}"
            same = f"{sum(abs(r['gap_s']) < 0.005 for r in rs):5d}"
        else:
            gap, same = f"{'-':>9}", f"{'-':>5}"
        proved = (f"{sum(r['status'] == 'OPTIMAL' for r in rs):7d}" if nm == "optimum"
                  else f"{'':>7}")
        lines.append(f"{nm:<{width}} {len(every):>7} {wait:11.1f} {bsld:9.3f} {gap} {same} "
                     f"{proved} {failed:>6}")
    return "\n".join(lines)


def random_windows(n_jobs: int, count: int, length: int, seed: int = 0
                   ) -> list[tuple[int, int]]:
    """``count`` windows of ``length`` jobs at seeded random starts in a trace of
    ``n_jobs`` jobs."""
    if length > n_jobs:
        raise ValueError(f"length must be at most the trace's {n_jobs} jobs, got {length}")
    rng = np.random.default_rng(seed)
    return [(int(s), length) for s in rng.integers(0, n_jobs - length + 1, size=count)]


def held_out(workload: Workload, windows: Sequence[tuple[int, int]], length: int
             ) -> Workload:
    """``workload`` less every job of ``windows`` (``(start, length)`` pairs): a training
    set that shares no job with the windows an evaluation runs on. The remaining jobs keep
    their order, ids and submit times. ValueError when fewer than ``length`` jobs (one
    training window) remain."""
    gone = np.zeros(len(workload), dtype=bool)
    for start, n in windows:
        gone[start:start + n] = True
    jobs = tuple(j for j, g in zip(workload.jobs, gone, strict=True) if not g)
    if len(jobs) < length:
        raise ValueError(f"windows: {len(jobs)} jobs of {workload.name} are left outside "
                         f"the {len(windows)} evaluation windows, fewer than one training "
                         f"window of {length}")
    return Workload(jobs, workload.capacity,
                    f"{workload.name} less {len(windows)} windows ({int(gone.sum())} jobs)",
                    workload.header)


#: most windows ``gym-eval`` takes (each is a simulation per policy and an optimum)
MAX_WINDOWS = 100_000


def _at_least(lo: int, hi: int = 2**63 - 1, top: str = "2**63 - 1"
              ) -> Callable[[str], int]:
    """An argparse type: a decimal integer in ``[lo, hi]`` (``top`` names ``hi``)."""
    def parse(text: str) -> int:
        t = text.strip()
        if t.isascii() and t.lstrip("-").isdigit() and len(t) <= 20 and lo <= int(t) <= hi:
            return int(t)
        raise argparse.ArgumentTypeError(
            f"must be an integer in [{lo}, {top}], got {text[:40]!r}")
    return parse


def _positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not text.isascii() or not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number of seconds > 0, got {text[:40]!r}")
    return value


#: seconds per window's optimum unless ``--time-limit`` says otherwise
OPTIMUM_SECONDS = 10.0

#: seconds per window of an agent's episode unless ``--agent-time-limit`` says otherwise
AGENT_SECONDS = 60.0


def main(argv: Sequence[str] | None = None, prog: str = "python -m sim.batch.env_eval") -> int:
    """``gym-eval``: the built-in policies and the optimum on random windows; prints the
    table and the wall time. Returns 0, or 2 with a one-line error naming ``prog`` on bad
    input."""
    ap = Parser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--trace", default="lublin_256")
    ap.add_argument("--procs", type=_at_least(1), default=None)
    ap.add_argument("--windows", type=_at_least(1, MAX_WINDOWS, f"{MAX_WINDOWS}"), default=20,
                    help=f"random windows, at most {MAX_WINDOWS}")
    ap.add_argument("--length", type=_at_least(1), default=32)
    ap.add_argument("--seed", type=_at_least(0), default=0)
    ap.add_argument("--policies", default=",".join(BUILTINS),
                    help=f"comma-separated, of {sorted(BUILTINS)}, or agents MODULE:NAME "
                         f"(act(obs, info) -> action) and entry points of schedsearch.agents")
    ap.add_argument("--solver", default="cpsat", help="'none' for no optimum")
    ap.add_argument("--time-limit", type=_positive_seconds, default=None,
                    help=f"s per optimum (> 0, default {OPTIMUM_SECONDS:g}); refused with "
                         f"--solver none")
    ap.add_argument("--agent-time-limit", type=_positive_seconds, default=None,
                    help=f"s per window of an agent's episode (> 0, default "
                         f"{AGENT_SECONDS:g}); refused when --policies names no agent")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    # an option that cannot act is refused, not ignored
    if args.solver == "none" and args.time_limit is not None:
        ap.error("--time-limit: no optimum is solved with --solver none")
    if args.agent_time_limit is not None and all(
            p.strip() in BUILTINS for p in args.policies.split(",")):
        ap.error("--agent-time-limit: --policies names no agent (MODULE:NAME)")
    args.time_limit = OPTIMUM_SECONDS if args.time_limit is None else args.time_limit
    if args.agent_time_limit is None:
        args.agent_time_limit = AGENT_SECONDS
    t = time.perf_counter()
    try:
        env = SchedulingEnv(args.trace, procs=args.procs, window=1)
        wins = random_windows(len(env.workload), args.windows, args.length, args.seed)
        rows = evaluate(args.policies.split(","), wins, trace=env.workload,
                        solver=None if args.solver == "none" else args.solver,
                        time_limit=args.time_limit, agent_time_limit=args.agent_time_limit)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    wall = time.perf_counter() - t
    if args.json:
        import json

        print(json.dumps({"rows": rows, "wall_seconds": wall}, indent=1))
        return 0
    optimum = "none" if args.solver == "none" else \
        f"{args.solver} (minimum total wait, limit {args.time_limit} s)"
    print(f"{env.workload.name}: {args.windows} windows of {args.length} jobs (seed "
          f"{args.seed}), {env.P} processors; optimum: {optimum}")
    if args.solver != "none":
        print(window_table(rows))
    print(table(rows))
    for r in rows:
        if r["status"] == "failed":
            print(f"failed window {r['start']}+{r['length']}: {r['error']}")
    print(f"wall time {wall:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
