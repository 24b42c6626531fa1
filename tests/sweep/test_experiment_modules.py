"""Every experiment module imports, and the Talby orders study reads its months (its
months helper once pointed at a function that had moved away)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import sim.experiments

# pyjobshop_driver runs only inside the separate PyJobShop environment (never imported here)
MODULES = sorted(m.name for m in pkgutil.walk_packages(sim.experiments.__path__,
                                                      prefix="sim.experiments.")
                 if not m.name.endswith("pyjobshop_driver"))


@pytest.mark.parametrize("name", MODULES)
def test_experiment_module_imports(name: str) -> None:
    importlib.import_module(name)


def test_talby_orders_months_keep_global_priority_positions() -> None:
    from sim.experiments.talby.orders import _months

    months, high, table = _months("fifth", ("1996-10",))
    assert [label for label, _ in months] == ["1996-10"]
    month = months[0][1]
    # fifth: positions 4, 9, ... of the whole log are high priority, by id
    flagged = {j.id for j in month.jobs if table[j.id] == (1.0, 1.0)}
    assert flagged and flagged == {j.id for j in month.jobs} & high


def test_provenance_names_the_commit_and_the_module_command() -> None:
    from sim.experiments import common as provenance

    c = provenance.commit()
    assert c and c != "unknown"
    cmd = provenance.command([str(provenance.ROOT / "sim/experiments/karl/figs.py"), "--quick"])
    assert cmd == "python -m sim.experiments.karl.figs --quick"
    assert provenance.stamp(["schedsearch", "reproduce", "karl-fig9"]).endswith(
        "command `schedsearch reproduce karl-fig9`")
