"""Small sweep specs on tiny synthetic workloads, shared by the sweep tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sim.sweep.store import Store


def tiny_spec(name: str = "tiny", n_jobs: int = 60, seeds: tuple[int, ...] = (0, 1, 2),
              **extra: Any) -> dict[str, Any]:
    spec = {
        "version": 1, "name": name, "seeds": list(seeds),
        "metrics": ["avg_wait", "avg_bounded_slowdown"],
        "procs": [16, 32],
        "workloads": [{"name": "syn", "synthetic": {"n_jobs": n_jobs, "capacity": 32,
                                                     "load": [0.7, 0.9]}}],
        "policies": [{"name": "fcfs"}, {"name": "conservative"},
                     {"name": "slack", "options": {"sf": [1.0, 3.0]}}],
    }
    spec.update(extra)
    return spec


def write_toml(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def write_json(path: Path, spec: dict[str, Any]) -> Path:
    path.write_text(json.dumps(spec))
    return path


def snapshot(path: Path) -> dict[str, tuple]:
    """Everything in a store that must not depend on who ran it or when."""
    with Store.open(path, create=False) as st:
        return {r["key"]: (r["status"], r["error"], json.dumps(r["params"], sort_keys=True),
                           json.dumps(r["metrics"], sort_keys=True),
                           json.dumps(r["policy_config"], sort_keys=True), r["seed"],
                           r["workload_sha256"], r["trace_sha256"])
                for r in st.rows(None)}
