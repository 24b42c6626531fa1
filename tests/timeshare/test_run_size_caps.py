"""Options that would make a time-sharing run hang or run out of memory are refused before
the run, in one line naming the field (``schedsearch csm`` and ``schedsearch bsp``): a
cluster of 2^63 nodes, unbounded page references per dispatch, 2^63 supersteps, a message
latency of 2^63 µs, 2^63 measurements. Values at the caps are accepted."""

from __future__ import annotations

import pytest

from sim.cli import main
from sim.timeshare.bsp import MAX_I, MAX_LATENCY_US, MAX_N, BSPParams, NetParams
from sim.timeshare.cluster import MAX_NODES, MAX_REFS_PER_DISPATCH
from sim.timeshare.workload import CSMConfig

HUGE = str(2**63)
CSM = ["csm", "--policies", "rr", "--jobs", "30"]
BSP = ["bsp", "--g-us", "1000", "--n", "5", "--i", "2"]


@pytest.mark.parametrize("argv,field", [
    (CSM + ["--nodes", HUGE], "n_nodes"),
    (CSM + ["--nodes", str(MAX_NODES + 1)], "n_nodes"),
    (CSM + ["--refs-per-dispatch", HUGE], "refs_per_dispatch"),
    (CSM + ["--refs-per-dispatch", str(MAX_REFS_PER_DISPATCH + 1)], "refs_per_dispatch"),
    (BSP[:3] + ["--n", HUGE, "--i", "2"], "'n'"),
    (BSP + ["--latency-us", HUGE], "latency_us"),
    (BSP[:5] + ["--i", str(MAX_I + 1)], "'i' (measurements)"),
    (BSP[:5] + ["--i", str(2**63)], "'i' (measurements)"),
    (BSP + ["--latency-us", str(MAX_LATENCY_US + 1)], "latency_us"),
])
def test_a_run_too_large_to_finish_is_refused_naming_the_field(argv, field, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and field in err[0] and "internal error" not in err[0], err


def test_the_caps_themselves_are_accepted():
    cfg = CSMConfig(n_nodes=MAX_NODES, refs_per_dispatch=MAX_REFS_PER_DISPATCH)
    assert (cfg.n_nodes, cfg.refs_per_dispatch) == (MAX_NODES, MAX_REFS_PER_DISPATCH)
    assert BSPParams(g_us=10, n=MAX_N).n == MAX_N
    assert NetParams(latency_us=MAX_LATENCY_US).latency_us == MAX_LATENCY_US
    with pytest.raises(ValueError, match="supersteps"):
        BSPParams(g_us=10, n=MAX_N + 1)


@pytest.mark.parametrize("kwargs,field", [
    ({"n_nodes": MAX_NODES + 1}, "n_nodes"), ({"n_nodes": 2**63}, "n_nodes"),
    ({"n_nodes": 2, "refs_per_dispatch": MAX_REFS_PER_DISPATCH + 1}, "refs_per_dispatch"),
])
def test_the_core_cluster_keeps_the_same_caps(kwargs, field):
    """A script that builds the core :class:`~sim.timeshare.cluster.Cluster` itself (not
    through ``CSMConfig``) meets the same caps, before any node is built."""
    from heuristics.coscheduling import by_name
    from sim.timeshare.cluster import Cluster

    with pytest.raises(ValueError, match=field):
        Cluster(kwargs.pop("n_nodes"), by_name("rr"), **kwargs)


@pytest.mark.parametrize("extra, named", [
    (["--slot-us", "500"], "--slot-us"),
    (["--share", "0.5", "--wakeup", "tick"], "--share, --wakeup"),
    (["--placement", "spread"], "--placement"),
])
def test_a_server_option_without_servers_is_refused(extra, named, capsys):
    """``--regime none`` runs no scheduling server: the slot table's and the servers'
    options cannot act, so they are refused instead of being echoed in the output."""
    assert main(BSP + ["--regime", "none", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{named}: the scheduling servers' option(s)" in err[0], err
    assert main(BSP + ["--regime", "none"]) == 0
