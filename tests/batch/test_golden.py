"""Golden scenarios: hand-made workloads with the expected start of every job beside it.

Each file in ``tests/golden/`` holds one scenario (pyss style)::

    capacity 10 [10 ...]          # one capacity per resource
    overrun kill|run
    jobs
      id submit runtime requested demand [user]  # demand "6" or "8,2" (one per resource)
    expect POLICY [POLICY ...]       # a registry name, options as name:key=value,key=value
      id start end [promise]  # why it starts then (required)

Every ``expect`` block must list every job. The optional ``promise`` column is the
latest start the policy guaranteed (``-`` for none). Each scenario is simulated with
every policy named, every job's start and end compared, and the schedule re-checked by
the independent validator. Times are integer seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from instances.job import Job, Workload
from sim import registry
from sim.batch.machine import simulate
from sim.batch.validate import validate

GOLDEN = Path(__file__).parent / "golden"
FILES = sorted(GOLDEN.glob("*.txt"))


@dataclass
class Expect:
    policies: list[str]
    rows: dict[int, tuple[int, int, int | None | str]] = field(default_factory=dict)
    # job id -> (start, end, promise); promise "" when the column is absent


@dataclass
class Scenario:
    path: Path
    capacity: tuple[int, ...] = ()
    overrun: str = ""
    jobs: list[Job] = field(default_factory=list)
    expects: list[Expect] = field(default_factory=list)


def parse(path: Path) -> Scenario:
    """Read one golden file; ValueError names the file and line."""
    sc = Scenario(path)
    section = None
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        code, _, comment = raw.partition("#")
        fields = code.split()
        if not fields:
            continue
        where = f"{path.name}:{lineno}"
        key = fields[0]
        if key == "capacity":
            sc.capacity = tuple(int(x) for x in fields[1:])
        elif key == "overrun":
            sc.overrun = fields[1]
        elif key == "jobs":
            section = "jobs"
        elif key == "expect":
            section = "expect"
            sc.expects.append(Expect(fields[1:]))
        elif section == "jobs":
            if len(fields) not in (5, 6):
                raise ValueError(f"{where}: job row needs 5 or 6 fields, got {len(fields)}")
            jid, submit, runtime, requested = (int(x) for x in fields[:4])
            demand = tuple(int(x) for x in fields[4].split(","))
            user = int(fields[5]) if len(fields) == 6 else -1
            sc.jobs.append(Job(jid, submit, runtime, requested, demand, user))
        elif section == "expect":
            if len(fields) not in (3, 4):
                raise ValueError(f"{where}: expect row needs 3 or 4 fields, got {len(fields)}")
            if not comment.strip():
                raise ValueError(f"{where}: expect row without a comment saying why")
            jid, start, end = (int(x) for x in fields[:3])
            promise: int | None | str = ""
            if len(fields) == 4:
                promise = None if fields[3] == "-" else int(fields[3])
            sc.expects[-1].rows[jid] = (start, end, promise)
        else:
            raise ValueError(f"{where}: unexpected line {raw!r}")
    if not sc.capacity or sc.overrun not in ("kill", "run") or not sc.jobs or not sc.expects:
        raise ValueError(f"{path.name}: needs capacity, overrun, jobs and expect sections")
    ids = {j.id for j in sc.jobs}
    for ex in sc.expects:
        if set(ex.rows) != ids:
            raise ValueError(f"{path.name}: expect {ex.policies} does not list every job")
    return sc


def make(spec: str):
    """Policy from ``name`` or ``name:key=value,key=value`` (ints stay ints)."""
    name, _, opts = spec.partition(":")
    options = {}
    for kv in filter(None, opts.split(",")):
        key, _, value = kv.partition("=")
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    return registry.make_policy(name, **options)


CASES = [(f, pol) for f in FILES for ex in parse(f).expects for pol in ex.policies]


def test_golden_files_cover_the_policies_and_modes():
    scenarios = [parse(f) for f in FILES]
    policies = {p for sc in scenarios for ex in sc.expects for p in ex.policies}
    assert {"fcfs", "easy", "conservative"} <= policies
    assert {sc.overrun for sc in scenarios} == {"kill", "run"}
    assert any(len(sc.capacity) == 2 for sc in scenarios)
    # the K-resource selection rules, under EASY and conservative, at K = 2 and K = 4
    for K in (2, 4):
        covered = {p for sc in scenarios if len(sc.capacity) == K for ex in sc.expects
                   for p in ex.policies}
        assert {f"{pol}:select={sel}" for pol in ("easy", "conservative")
                for sel in ("bl", "bb")} <= covered
        assert {"easy:select=ff", "conservative:select=ff"} <= covered


@pytest.mark.parametrize(("path", "policy"), CASES,
                         ids=[f"{p.stem}-{pol}" for p, pol in CASES])
def test_golden(path: Path, policy: str):
    sc = parse(path)
    ex = next(e for e in sc.expects if policy in e.policies)
    w = Workload(tuple(sc.jobs), sc.capacity, path.stem)
    s = simulate(w, make(policy), overrun=sc.overrun)
    validate(s)
    got = {j.id: (int(s.start[i]), int(s.end[i])) for i, j in enumerate(w.jobs)}
    want = {jid: (st, en) for jid, (st, en, _) in ex.rows.items()}
    assert got == want
    for jid, (_, _, promise) in ex.rows.items():
        if promise != "":
            assert s.promises.get(jid) == promise, f"job {jid}: promise"
