"""What each registered solver and policy is, in one line (``schedsearch solvers``).

``SOLVER_NOTES[family][name]`` and ``POLICY_NOTES[name]`` say what a name of
``sim.registry`` runs: ``exact`` (proves optimality, or reports FEASIBLE with a bound at
its limit) or ``heuristic``, and the method, with the paper where it comes from. A name
registered by an installed package, or missing here, is described by the first line of
its function's or factory's docstring. ``tests/test_catalog.py`` checks that every
built-in name has a line here and that no line names something unregistered.
"""

from __future__ import annotations

import inspect
from typing import Any

_TALBY = "Talby & Feitelson's priority scheduler"
_ORDER = {"AST": "ascending scheduled start", "AAT": "ascending arrival time",
          "DU": "descending processor-seconds", "DC": "descending cost of a 1 s delay",
          "DP": "descending priority"}
_EPOCH = {"fcfs": "FCFS, no backfilling", "fcfs-ff": "FCFS then first-fit backfilling",
          "fcfs-bl": "FCFS then backfill-lowest", "fcfs-bb": "FCFS then backfill-balanced",
          "unc-ff": "unconstrained first fit", "unc-bl": "unconstrained backfill-lowest",
          "unc-bb": "unconstrained backfill-balanced (fullness modifier)"}

SOLVER_NOTES: dict[str, dict[str, str]] = {
    "grouping": {
        "exact-ilp": "exact: set partitioning over the enumerated feasible groups as an ILP "
                     "(CBC; --backend highs|scip), cost from the miss-rate model (Suh et al.)",
        "exact-cpsat": "exact: the same set-partitioning model on CP-SAT",
        "exhaustive": "exact: every partition of the jobs enumerated (tiny cases)",
        "greedy": "heuristic: greedy gain grouping (Suh et al. 4.1.1)",
        "footprint": "heuristic: footprint balancing (Suh et al. section 2)",
        "knee": "heuristic: miss-rate-curve knee grouping (Suh et al. 4.1.2)",
    },
    "slack_insertion": {
        **{o: f"heuristic: {_TALBY}, compress order {o} ({d})" for o, d in _ORDER.items()},
        "exhaustive": f"heuristic: {_TALBY} with the paper's search over all compress "
                      "orders (best of them; not an optimum over start times)",
        "cpsat": "exact: slack-constrained insertion over all feasible start times, CP-SAT",
        "ilp": "exact: the insertion model as an ILP (CBC; --backend highs|scip)",
        "brute": "exact: every integer start time enumerated (tiny instances)",
        "portfolio": "exact: CP-SAT, a certified LP bound, then CP-SAT on the domains the "
                     "bound's reduced costs leave",
        "ti": "exact: one 0/1 variable per (job, candidate start) on HiGHS (or SCIP), "
              "presolve on, bound made safe against the backend's tolerances",
        "cpsat+ti": "exact: CP-SAT's price stages on half the limit (its fewest-moved "
                    "stage on the rest once the price is proved), else the time-indexed "
                    "MIP (ti) on domains its incumbent tightens",
    },
    "task_mapping": {
        "cpsat": "exact: memory-balanced task mapping (CSM reference), CP-SAT",
        "ilp": "exact: the task-mapping model as an ILP (CBC; --backend highs|scip)",
        "brute": "exact: every mapping enumerated (tiny cases)",
        "greedy": "heuristic: least-loaded node for each job in order (the simulator's "
                  "online rule)",
    },
    "slot_assignment": {
        "cpsat": "exact: slot table of Karl's scheduling servers, CP-SAT",
        "ilp": "exact: the slot-table model as an ILP (CBC; --backend highs|scip)",
        "brute": "exact: every slot table enumerated (tiny cases)",
        "round-robin": "heuristic: round-robin slot filling",
        "coloring": "heuristic: greedy colouring of the copy-conflict graph",
    },
    "slot_placement": {
        "exhaustive": "exact: every slot placement of one BSP program enumerated",
    },
    "kresource_epochs": {
        "cpsat": "exact: minimum epochs (vector bin packing, Leinberger et al.), CP-SAT "
                 "after a greedy packing",
        "ilp": "exact: the minimum-epochs model as an ILP (CBC; --backend highs|scip)",
        "brute": "exact: every packing enumerated (at most 14 jobs)",
        "colgen": "exact: Gilmore-Gomory set-cover LP by column generation (GLOP, exact "
                  "pricing by dynamic programming or CP-SAT), Farley's bound in integers, "
                  "then a local search and CP-SAT with that bound",
        "unc": "exact: alias of cpsat: the unconstrained optimum (any job order) that "
               "Leinberger et al.'s UNC rules approach; its results say solver 'unc'",
        **{r: f"heuristic: epoch packing, {d} (Leinberger et al.)" for r, d in _EPOCH.items()},
    },
    "kresource_selection": {
        "cpsat": "exact: optimal backfill selection at one decision point, CP-SAT",
        "ilp": "exact: the selection model as an ILP (CBC; --backend highs|scip)",
        "brute": "exact: every subset of the candidates enumerated",
        "ff": "heuristic: first-fit selection (Leinberger et al.)",
        "bl": "heuristic: backfill-lowest selection (Leinberger et al.)",
        "bb": "heuristic: backfill-balanced selection with the fullness modifier "
              "(Leinberger et al.)",
    },
    "kresource_response": {
        "cpsat": "exact: offline minimum total response time with release times, CP-SAT",
        "ilp": "exact: the time-indexed response model as an ILP (CBC; --backend "
               "highs|scip)",
        "brute": "exact: every schedule enumerated (tiny cases)",
        "list": "heuristic: serial schedule in release order (an upper bound)",
        "portfolio": "exact: CP-SAT, the time-indexed CBC model or a certified LP bound "
                     "with reduced-cost fixing, sharing the limit",
    },
    "gang_schedule": {
        "cpsat": "exact: memory-feasible gang schedule (the exact grouping model's rows), CP-SAT",
        "ilp": "exact: the gang-schedule model as an ILP (CBC; --backend highs|scip)",
        "brute": "exact: every gang schedule enumerated (tiny cases)",
        "coloring": "heuristic: greedy colouring with memory-aware first-fit repair",
    },
}

POLICY_NOTES: dict[str, str] = {
    "fcfs": "first come first served, no backfilling",
    "easy": "EASY backfilling (Lifka 1995): a reservation for the queue's head only",
    "conservative": "conservative backfilling: a reservation for every waiting job",
    "unconstrained": "UNC (Leinberger et al.): no FCFS phase, no reservation; the "
                     "selection rule picks among every job that fits",
    "slack": f"{_TALBY}: slack-based backfilling with a compress order (Talby & Feitelson "
             "1999)",
    "slack-optimal": "exact: optimal slack-constrained insertion (CP-SAT) at every arrival",
    "opt-easy": "exact: EASY with the optimal backfill selection (CP-SAT) at each decision",
    "sjbf": "EASY whose backfill candidates are tried shortest (estimated) job first "
            "(Srinivasan et al. 2002; Tsafrir et al. 2007)",
    "easy++": "EASY++ (Tsafrir, Etsion & Feitelson 2007): SJBF planned with the mean of the "
              "user's last two run lengths, corrected when a job outlives it",
    "selective": "selective reservation (Srinivasan et al. 2002): a waiting job gets a "
                 "reservation once its expansion factor reaches a threshold",
}


def _docline(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ") or "(no description)"


def solver_line(family: str, name: str) -> str:
    """One line saying what solver ``name`` of ``family`` is."""
    note = SOLVER_NOTES.get(family, {}).get(name)
    if note is not None:
        return note
    from sim import registry

    return "plug-in: " + _docline(registry.solver(family, name))


def policy_line(name: str) -> str:
    """One line saying what policy ``name`` is."""
    note = POLICY_NOTES.get(name)
    if note is not None:
        return note
    from sim import registry

    return "plug-in: " + _docline(registry.policy_factory(name))

