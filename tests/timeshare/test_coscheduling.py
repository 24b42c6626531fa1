"""Spec 3.3.1 worked queue-insertion vectors and the rules of RR / PRED / DYN / CSM."""

from __future__ import annotations

import pytest

from heuristics.coscheduling import Coscheduling
from sim.timeshare.cluster import Node, Task
from sim.timeshare.memory import PagedMemory
from sim.timeshare.ops import Message


class _Stub:
    """Stands in for the cluster: pg_fault read from task.data."""

    seed = 0

    @staticmethod
    def pg_fault(t):
        return t.data.get("pg", 0.0)


def _task(tid, name, mes, pg=0.0, de=0, local=False, rec=0):
    t = Task(tid, 0, None if local else 1, 0, 0)
    t.mes, t.de = mes, de
    t.data.update(pg=pg, name=name)
    t.rmq = [Message(i, 99, tid, 0, None, 0, 0) for i in range(rec)]
    return t


def _setup(mode, exhausted, c_de=2, **kw):
    pol = Coscheduling(mode, mnol=2, mnod=2, **kw)
    pol.cluster = _Stub()
    node = Node(0, PagedMemory(10, 20_000))
    node.mem_demand = 11 if exhausted else 10
    node.running = _task(50, "R", 0.0, local=True)
    a = _task(0, "A", 0.0, local=True)
    b = _task(1, "B", 2.0, pg=0.5)
    c = _task(2, "C", 0.0, de=c_de, local=True)
    d = _task(3, "D", 1.0, pg=0.2, de=1)
    node.rq = [a, b, c, d]
    h = _task(4, "h", 1.5, pg=0.1)
    return pol, node, h


def names(node):
    return [t.data["name"] for t in node.rq]


@pytest.mark.parametrize("exhausted", [True, False], ids=["csm-mode", "pred-mode"])
def test_spec_vector_c_blocks(exhausted):
    pol, node, h = _setup("csm", exhausted)
    pol.place(node, h)
    assert names(node) == ["A", "B", "C", "h", "D"]
    assert [t.de for t in node.rq] == [0, 0, 2, 0, 2]


def test_spec_vector_c_de0_csm_mode():
    pol, node, h = _setup("csm", True, c_de=0)
    pol.place(node, h)
    assert names(node) == ["A", "B", "C", "h", "D"]
    assert node.rq[2].de == 0 and node.rq[4].de == 2


def test_spec_vector_c_de0_predictive_mode():
    pol, node, h = _setup("csm", False, c_de=0)
    pol.place(node, h)
    assert names(node) == ["A", "B", "h", "C", "D"]
    assert [t.de for t in node.rq] == [0, 0, 0, 1, 2]


def test_pred_never_uses_memory_mode():
    # PRED under exhausted memory still orders by mes: same as the predictive vector
    pol, node, h = _setup("pred", True, c_de=0)
    pol.place(node, h)
    assert names(node) == ["A", "B", "h", "C", "D"]


def test_dynamic_mode_needs_exhausted_memory_and_a_message():
    pol, node, h = _setup("csm", True)
    h.rmq = [Message(0, 9, 4, 0, None, 0, 0)]
    assert pol.place(node, h) is True
    assert names(node)[0] == "h"
    pol, node, h = _setup("csm", False)
    h.rmq = [Message(0, 9, 4, 0, None, 0, 0)]
    pol.place(node, h)
    assert names(node)[0] != "h"


def test_dyn_boosts_any_receiver_without_starvation_limit():
    pol, node, h = _setup("dyn", False)
    h.rmq = [Message(0, 9, 4, 0, None, 0, 0)]
    pol.place(node, h)
    assert names(node) == ["h", "A", "B", "C", "D"]
    pol, node, h = _setup("dyn", False)
    pol.place(node, h)
    assert names(node) == ["A", "B", "C", "D", "h"]


def test_rr_and_local_go_to_the_bottom():
    pol, node, h = _setup("rr", True)
    pol.place(node, h)
    assert names(node)[-1] == "h"
    pol, node, _ = _setup("csm", True)
    loc = _task(9, "L", 0.0, local=True)
    pol.place(node, loc)
    assert names(node)[-1] == "L"


def test_eq2_mes_update_and_de_reset():
    pol, node, _ = _setup("csm", False)
    t = _task(7, "x", 1.0, de=3, rec=2)
    t.smq = 1
    pol.update(t)
    assert t.mes == pytest.approx(0.3 * 1.0 + 0.7 * 3)
    assert t.de == 0


def test_preempt_on_top_puts_the_running_task_behind():
    pol, node, h = _setup("dyn", False, preempt_on_top=True)
    h.rmq = [Message(0, 9, 4, 0, None, 0, 0)]
    assert pol.insert(node, h, 0, "wake_recv") is True
    running = node.running
    pol.insert(node, running, 0, "preempted")
    assert names(node)[:2] == ["h", "R"]


@pytest.mark.parametrize("field,value", [("mnol", -1), ("mnod", 1.5), ("p", 1.2),
                                         ("p", -0.1), ("mode", "xx")])
def test_bad_parameters(field, value):
    kw = {"mode": "csm", field: value}
    with pytest.raises(ValueError, match=field):
        Coscheduling(**kw)
