"""Ready-queue policies of Giné, Solsona, Hernández & Luque: RR, PRED, DYN and CSM.

All four are Algorithm 1's ``insert_RQ`` (spec 3.3 / 3.3.1) with parts switched off:

- **RR**: always ``RQ[∞] := h`` (plain round robin).
- **PRED**: lines 3, 4, 6-12 with SCHED_COND fixed to the predictive test
  ``RQ[i].mes < h.mes``; STARV_COND kept.
- **DYN**: lines 3, 4, then ``RQ[0] := h`` if ``h.rec != 0`` else ``RQ[∞] := h`` (no memory
  test, no starvation limit).
- **CSM**: the whole algorithm: predictive mode while ``N_k.mem <= M``; when memory is
  exhausted, dynamic mode for a task with an incoming message and otherwise CSM mode
  (SCHED_COND ``RQ[i].pg_fault > h.pg_fault``).

``RQ[k]``: ``node.rq[k]`` is the k-th waiting task (index 0 runs next). Recorded choices
(spec 3.3.3): ``preempt_on_top`` (AMB-4.1: False = RQ[0] is the head of the waiting tasks;
True = insertion at RQ[0] preempts the running task, which goes back right behind the
inserted one), ``local_by`` (AMB-4.3: "mes" = literal, a task with ``mes == 0`` is local;
"class" = the job-class flag), ``de_reset`` (AMB-4.5: "insert" or "dispatch"). ``mes`` is
updated at every ``insert_RQ`` of the task, before the tests (AMB-4.3 default), by eq. 2
``mes = P·mes + (1 - P)·c_mes``, ``c_mes = rec + send`` (eq. 1). The loop runs from the
bottom with the guard ``i >= 0`` and inserts at ``i + 1`` (AMB-4.4). ``pg_fault`` is eq. 3
as corrected (AMB-4.2) unless the cluster uses the literal formula. The quantum is
Exp(mean ``quantum_us``) microseconds of CPU time per dispatch (AMB-4.9).
"""

from __future__ import annotations

from typing import Any

from sim.timeshare.cluster import Node, Task
from sim.timeshare.policy import Policy

MODES = ("rr", "pred", "dyn", "csm")
#: the options of Algorithm 1 each mode reads: RR none (no update, no test); PRED and CSM
#: the starvation limits (lines 7-12) and eq. 2's P; DYN only P (eq. 2's ``mes`` decides
#: which task is local, line 4, and it never reaches the starvation loop)
READS: dict[str, frozenset[str]] = {"rr": frozenset(), "pred": frozenset({"mnol", "mnod", "p"}),
                                    "dyn": frozenset({"p"}),
                                    "csm": frozenset({"mnol", "mnod", "p"})}


class Coscheduling(Policy):
    """Algorithm 1 in one of the four modes.

    Parameters
    ----------
    mode : {"rr", "pred", "dyn", "csm"}
    mnol, mnod : int
        Maximum number of overtakes of a local / distributed task (>= 0; paper 2 and 2).
    p : float
        Weight of the history in eq. 2, in [0, 1] (paper 0.3).
    quantum_us : int
        Mean quantum in microseconds (paper 100 ms).
    quantum_dist : {"exp", "fixed"}
    preempt_on_top : bool
        AMB-4.1 reading (b).
    local_by : {"mes", "class"}
        AMB-4.3 reading of "local task" in lines 4 and 24.
    de_reset : {"insert", "dispatch"}
        AMB-4.5: when ``de`` returns to 0.
    """

    def __init__(self, mode: str = "csm", *, mnol: int = 2, mnod: int = 2, p: float = 0.3,
                 quantum_us: int = 100_000, quantum_dist: str = "exp",
                 preempt_on_top: bool = False, local_by: str = "mes",
                 de_reset: str = "insert"):
        super().__init__(quantum_us=quantum_us, quantum_dist=quantum_dist)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        for name, v in (("mnol", mnol), ("mnod", mnod)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p!r}")
        if local_by not in ("mes", "class"):
            raise ValueError(f"local_by must be 'mes' or 'class', got {local_by!r}")
        if de_reset not in ("insert", "dispatch"):
            raise ValueError(f"de_reset must be 'insert' or 'dispatch', got {de_reset!r}")
        self.mode = mode
        self.name = mode if not (preempt_on_top and mode in ("dyn", "csm")) else mode + "-top"
        self.mnol, self.mnod, self.p = mnol, mnod, float(p)
        self.preempt_on_top = bool(preempt_on_top)
        self.local_by = local_by
        self.de_reset = de_reset
        self._boosted: dict[int, Task] = {}
        self.overtakes = 0

    def params(self) -> dict[str, Any]:
        return {**super().params(), "mode": self.mode, "mnol": self.mnol, "mnod": self.mnod,
                "P": self.p, "preempt_on_top": self.preempt_on_top,
                "local_by": self.local_by, "de_reset": self.de_reset}

    # --- Algorithm 1 ----------------------------------------------------------------
    def _is_local(self, t: Task) -> bool:
        return t.mes == 0 if self.local_by == "mes" else t.local

    def starv_cond(self, x: Task) -> bool:
        """STARV_COND: ``x.de < MNOL`` for a local task, ``< MNOD`` for a distributed one."""
        return x.de < (self.mnol if self._is_local(x) else self.mnod)

    def memory_exhausted(self, node: Node) -> bool:
        """``N_k.mem > M`` (eq. 4, AMB-4.6); False without paged memory."""
        return node.memory is not None and node.mem_demand > node.memory.pages

    def update(self, h: Task) -> None:
        """INITIALIZATION of insert_RQ: eqs. 1-2 and the de reset (AMB-4.3, AMB-4.5)."""
        c_mes = len(h.rmq) + h.smq
        h.mes = self.p * h.mes + (1.0 - self.p) * c_mes
        if self.de_reset == "insert":
            h.de = 0

    def place(self, node: Node, h: Task) -> bool:
        """Lines 3-13 on ``node.rq``; return True when h was put at RQ[0] by the dynamic
        rule (the caller may preempt)."""
        rq = node.rq
        mode = self.mode
        if mode == "rr" or not rq and node.running is None:   # line 3 (and RR)
            rq.append(h)
            return False
        if self._is_local(h):                                 # line 4
            rq.append(h)
            return False
        exhausted = self.memory_exhausted(node)
        if mode == "dyn" or (mode == "csm" and exhausted):    # line 5
            if h.rmq:
                rq.insert(0, h)
                return True
            if mode == "dyn":
                rq.append(h)
                return False
        if not rq:
            rq.append(h)
            return False
        i = len(rq) - 1                                       # lines 7-12
        if mode == "csm" and exhausted:                       # CSM mode
            pg = self.cluster.pg_fault
            hp = pg(h)
            while i >= 0 and self.starv_cond(rq[i]) and pg(rq[i]) > hp:
                rq[i].de += 1
                i -= 1
        else:                                                 # predictive mode
            hm = h.mes
            while i >= 0 and self.starv_cond(rq[i]) and rq[i].mes < hm:
                rq[i].de += 1
                i -= 1
        self.overtakes += len(rq) - 1 - i
        rq.insert(i + 1, h)
        return False

    # --- the node protocol -------------------------------------------------------------
    def insert(self, node: Node, task: Task, now: int, reason: str) -> bool:
        if reason == "preempted":
            # AMB-4.1 (b): the preempted task goes back right behind the boosted one
            b = self._boosted.pop(node.id, None)
            pos = 1 if node.rq and node.rq[0] is b else 0
            node.rq.insert(pos, task)
            return False
        if self.mode != "rr":
            self.update(task)
        top = self.place(node, task)
        if top and self.preempt_on_top and node.running is not None:
            self._boosted[node.id] = task
            return True
        return False

    def select(self, node: Node, now: int) -> Task | None:
        if not node.rq:
            return None
        t = node.rq.pop(0)
        if self.de_reset == "dispatch":
            t.de = 0
        return t


def rr(**kw: Any) -> Coscheduling:
    """Plain round robin with the paper's Exp(100 ms) quantum."""
    return Coscheduling("rr", **kw)


def pred(**kw: Any) -> Coscheduling:
    """Predictive coscheduling (Algorithm 1, predictive mode only)."""
    return Coscheduling("pred", **kw)


def dyn(**kw: Any) -> Coscheduling:
    """Dynamic coscheduling (line 5 without the memory test); ``preempt_on_top`` selects
    the reading of "on top" (AMB-4.1)."""
    return Coscheduling("dyn", **kw)


def csm(**kw: Any) -> Coscheduling:
    """CSM: the complete Algorithm 1."""
    return Coscheduling("csm", **kw)


POLICY_NAMES = ("rr", "pred", "dyn", "dyn-top", "csm", "csm-top")


def reads(name: str) -> frozenset[str]:
    """The options of Algorithm 1 (:data:`READS`) the policy ``name`` reads."""
    if name not in POLICY_NAMES:
        raise ValueError(f"policy must be one of {POLICY_NAMES}, got {name!r}")
    return READS[name.removesuffix("-top")]


def by_name(name: str, *, quantum_us: int = 100_000, **options: Any) -> Coscheduling:
    """A policy by name: rr, pred, dyn, csm; ``-top`` selects AMB-4.1 reading (b)."""
    if name not in POLICY_NAMES:
        raise ValueError(f"policy must be one of {POLICY_NAMES}, got {name!r}")
    top = name.endswith("-top")
    return Coscheduling(name[:-4] if top else name, quantum_us=quantum_us,
                        quantum_dist=options.pop("quantum_dist", "exp"),
                        preempt_on_top=top, **options)
