"""Exact models of the slack-constrained insertion problem (Talby & Feitelson).

The problem, its feasibility check and its price live in :mod:`sim.problems.insertion`;
this package only searches. Unlike the paper's exhaustive search, which tries every
compress order of the delayed jobs for every time slot, these models range over *all*
feasible start times. One module per backend, the way PyJobShop splits its solvers:

``domains``   start-time domains and the dominance proofs every solver relies on
``cpsat``     :func:`solve_cpsat` (registered as ``cpsat``): CP-SAT, ``alpha_t = 1``
``ilp``       :func:`solve_ilp` (registered as ``ilp``): time-indexed PuLP/CBC, any alphas
``brute``     :func:`solve_brute` (registered as ``brute``): enumeration, tiny instances
``timeindexed`` :func:`solve_ti` (registered as ``ti``): per-(job, start) MIP on HiGHS/SCIP
``tiportfolio`` :func:`solve_cpsat_ti` (registered as ``cpsat+ti``): CP-SAT, then ``ti``
``common``    :func:`finish`, the checked :class:`sim.result.Result` every solver ends with
``inserter``  :func:`insert` and :class:`CpsatInserter` for the slack scheduler
``policy``    :func:`OptimalInsertionPolicy` (registered as ``slack-optimal``)

Each solver is ``solve(problem, *, time_limit=None, seed=0, <options>) -> Result``.
"""

from __future__ import annotations

from models.slack_insertion.brute import solve_brute
from models.slack_insertion.cpsat import solve_cpsat
from models.slack_insertion.domains import dominant_times
from models.slack_insertion.ilp import solve_ilp
from models.slack_insertion.inserter import CpsatInserter, insert
from models.slack_insertion.policy import OptimalInsertionPolicy

__all__ = [
    "solve_cpsat",
    "solve_ilp",
    "solve_brute",
    "insert",
    "dominant_times",
    "CpsatInserter",
    "OptimalInsertionPolicy",
]
