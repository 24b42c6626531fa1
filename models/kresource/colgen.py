"""Minimum epochs (vector bin packing) by column generation and price-and-branch.

The Gilmore-Gomory set-cover LP (Gilmore & Gomory 1961; for vector packing Caprara &
Toth 2001, Brandao & Pedroso 2016)::

    min sum_p lambda_p   s.t.   sum_{p containing j} lambda_p >= 1  (every job j),
                                lambda_p >= 0,

over the feasible patterns p (job sets that fit one epoch, :mod:`.pricing`), is solved on
a growing set of columns by GLOP (``ortools.linear_solver.pywraplp``); its dual values
``y_j >= 0`` price new columns, first by the greedy patterns (``greedy_rounds`` rounds
of them, each round's patterns over the jobs earlier rounds' best left), then (K <=
:data:`IMPROVE_MAX_K`) the best :data:`IMPROVE` of them improved by exchanges
(:func:`.pricing.swap_improve`), then exactly: by dynamic programming over the capacity
grid where K <= 2 and the capacities are small (:func:`.pricing.dp_pattern`), else by
the compiled branch and bound of :mod:`.knapsack` where K >= :data:`BB_MIN_K` (and
numba holds it compiled; its maximum and the improving patterns it met; at most
:data:`BB_NODES` nodes), else (or
past that budget without a column) by CP-SAT; where the branch and bound serves, CP-SAT
gets :data:`CPSAT_CAP` seconds and, when it neither proves nor finds a column in them,
the branch and bound searches again with up to :data:`DEEP_NODES` nodes (and, once that
has answered where CP-SAT did not, goes first in the generator's later pricings).

With ``swaps`` the master LP also holds the dual-optimal inequalities ``y_i >= y_j`` for
job i dominating job j (:mod:`.dominance`; Ben Amor, Desrosiers & Valerio de Carvalho
2006, for vector packing Hessler, Gschwind & Irnich 2018), as cost-0 columns that let
a pattern's place of job i cover job j: the LP's optimum is unchanged, its duals are
steered to the optimal face sooner, and the restricted master's value is still an upper
bound on it. They are held at 0 while diving, whose LP must be a cover by patterns.

Certified bound (Farley 1990): for *any* non-negative weights ``w_j``, every packing
into ``m`` epochs has ``sum_j w_j = sum_epochs w(epoch) <= m z`` with ``z`` an upper
bound on the largest weight of a pattern, so ``m >= ceil(sum_j w_j / z)``. The weights
are the LP's duals scaled and rounded down to integers (``floor(y_j SCALE)``) and ``z``
is proved on those integers by the dynamic program, the branch and bound or CP-SAT
(:func:`models.kresource.pricing.best_pattern`: the maximum, or the proof that no
pattern weighs ``z + 1`` or more; an unproved answer gives CP-SAT's or the search root's
bound), so the bound is
computed in integers (``fractions.Fraction``, then ceil) and holds however inexact the
floating LP was: the LP only chooses the weights. The LP's coefficients are 0 and 1; the
demands and capacities enter only the integer pricing, never a floating model, so no
magnitude the family accepts (:mod:`sim.problems.kresource`, sums at most 10^12) is
rounded anywhere. The volume bound ``max_k ceil(sum_j r_jk / C_k)`` is the floor of
every bound.

Exact pricing asks a decision, not the maximum: with ``W = sum_j w_j`` and the aim
``B = ceil(LP value)`` (the most these duals can certify; at most the incumbent), a
pattern of weight at least ``ceil(W / (B - 1))`` is sought. None proves ``B``; one found
is an improving column (up to :data:`ENOUGH` are added per call), followed (K <=
:data:`DISJOINT_MAX_K`) by up to :data:`DISJOINT` more over the jobs no earlier column
of the round holds (:meth:`_Generator._disjoint`: the LP moves on several jobs per
round). Column generation
stops once the bound reaches ``ceil(LP value)`` (the restricted master's value only
falls), the incumbent, or no column prices out.

:func:`solve_epochs` (price-and-branch), every stage within ``time_limit`` seconds of
wall clock:

1. the first-fit packings (:func:`ffd`: queue order, four size measures; on 500 jobs they
   beat the queue-order rules of :func:`models.kresource.common.best_packing` under a
   short limit, which overran a 0.5 s limit by itself): the incumbent and the first
   columns;
2. column generation (:class:`_Generator`) on at most :data:`LP_SHARE` of the time;
3. with ``residual``, the LP solution rounded to a packing (:func:`residual_packing`:
   its columns of value at least :data:`RESIDUAL_MIN`, the jobs left by first fit);
   with ``local_search``, the best packing improved by
   :func:`models.kresource.local_search.fewer_epochs` (aiming at the certified bound)
   on :data:`SEARCH_SHARE` of the time left; with ``lns``, once column generation
   converged (the bound is the LP's ceiling: only the packing can close the gap), the
   epoch-elimination neighbourhood search (:func:`models.kresource.lns.
   eliminate_epochs`: CP-SAT empties the least full epoch into a few others) on
   :data:`LNS_SHARE` of the time left (again in stage 4);
   when the LP value rounded up already meets the incumbent (no dive can beat it), more
   column generation on this stage's time first (:data:`MORE_SHARE` of the time left
   with ``residual``); then diving (:func:`dives`): round up the largest fractional
   column, generate columns by the greedy pricing only, until the LP solution is
   integral (a packing) or its value rounded up reaches the incumbent (with
   ``residual``, every LP of a dive rounded too); again, rounding up one of the largest
   at random, until a packing meets the bound; on at most :data:`DIVE_SHARE` of the
   time left; with ``residual``, when the packing then meets the LP value rounded up
   and the LP has not converged, more column generation on :data:`MORE_SHARE` of the
   time left (only the bound can close that gap);
4. the columns of small reduced cost (:func:`small_reduced_cost`, on at most
   :data:`ENUM_SHARE` of the time left): every pattern a packing one epoch below the
   incumbent could use, by enumeration; then the integer master over every column by
   CP-SAT with its LP relaxation (a cover; a job in two chosen patterns is kept in the
   first, which stays feasible), on at most :data:`MASTER_SHARE` of the time left;
   with ``lns`` and a converged column generation, the neighbourhood search again on
   :data:`LNS_LAST` of the time left (another seed, from the best packing);
5. when the incumbent is still above the bound, the CP-SAT epochs model
   (:func:`models.kresource.cpsat.solve_epochs`' M1 model) with the certified bound as
   a lower-bound constraint and the incumbent as its hint, on the time left.

Each stage after the first is skipped once the incumbent meets the bound. OPTIMAL only
when the incumbent's recomputed objective equals the certified bound.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from models.deadline import Deadline, TimeUp
from models.interrupt import run_cpsat
from models.kresource.common import relabel
from models.kresource.dominance import dominance_pairs
from models.kresource.knapsack import compiled_ready, knapsack_pattern
from models.kresource.lns import eliminate_epochs
from models.kresource.local_search import fewer_epochs
from models.kresource.pricing import (
    Pricing,
    best_pattern,
    complete,
    dp_pattern,
    greedy_patterns,
    job_sizes,
    patterns_above,
    swap_improve,
)
from sim.problems import checker, scorer
from sim.problems.kresource import EpochProblem
from sim.result import Result, Status, build

__all__ = ["ColgenOptions", "Bound", "lp_bound", "farley", "ffd", "solve_epochs"]

SCALE = 10**6
"""Integer weight of a dual value of 1 (weights ``floor(y_j SCALE)``): the bound loses at
most ``n / SCALE`` of an epoch's worth of weight to the rounding."""
ENOUGH = 1
"""An exact pricing call stops after this many improving columns (unless it proves)."""
FFD_SHARE = 0.1
"""Share of ``time_limit`` after which no further first-fit packing starts."""
LP_SHARE = 0.5
"""Largest share of ``time_limit`` for column generation (stage 2)."""
DIVE_SHARE = 0.5
"""Largest share of the time left after stage 2 for diving (stage 3)."""
MASTER_SHARE = 0.5
"""Largest share of the time left after stage 3 for the integer master (stage 4)."""
ENUM_SHARE = 0.3
"""Largest share of the time left after stage 3 for the columns of small reduced cost."""
ENUM_MOST = 5000
"""Most patterns enumerated by :func:`small_reduced_cost`."""
MASTER_LINEARIZATION = 2
"""CP-SAT's ``linearization_level`` in :func:`integer_master` (2: the set cover's LP
relaxation with cuts; at the default 1, ct10 60 K=2 found no packing of 20 epochs in
4 s among columns holding one, at 2 in 0.02 s)."""
MIN_STAGE = 0.05
"""Seconds below which the integer master (stage 4) is not started."""
CLOCK_EVERY = 1000
"""Columns (or jobs) between two looks at the clock while a master is built."""
DIVE_CHOICES = 3
"""A dive after the first rounds up one of this many largest fractional columns."""
RESIDUAL_MIN = 0.5
"""LP value from which :func:`residual_packing` keeps a column."""
MORE_SHARE = 0.8
"""With ``residual`` (:class:`ColgenOptions`): share of the time left for more column
generation when the LP value rounded up already meets the incumbent."""
EPS = 1e-9
"""A greedy column enters when its dual value exceeds ``1 + EPS``."""
LP_TOL = 1e-6
"""Column generation stops once the certified bound reaches ``ceil(LP value - LP_TOL)``:
the restricted master's value only falls as columns enter, so the bound cannot rise
above that ceiling (the tolerance absorbs GLOP's; stopping early never makes a bound
invalid, it can only leave it lower)."""

GREEDY_ROUNDS = 1
"""Rounds of the greedy pricing per LP (:class:`ColgenOptions`)."""
SWAPS = True
"""Whether the master LP holds the dual-optimal inequalities (:class:`ColgenOptions`)."""
IMPROVE = 3
"""Greedy patterns improved by exchanges (:func:`models.kresource.pricing.swap_improve`)
when none prices out as it is, before exact pricing; 0: none."""
IMPROVE_MAX_K = 2
"""Most resources for which the exchanges run (at K = 10 they cost more LP rounds than
they save exact pricings: ct9, 120 jobs, converged in 3.0 s without them, not in 6 s
with them)."""
DISJOINT = 8
"""Improving columns over other jobs sought after each exact pricing that found one."""
DISJOINT_TIME = 0.05
"""Seconds for each of them."""
DISJOINT_MAX_K = 2
"""Most resources for which they are sought (the full benchmark run with them at K = 10
too, 15 s, load 1.2-4.3: ct9 120 K=10 no longer proved, its CP-SAT pricings slower on
the duals they leave, 18 calls in 7.3 s against 55 in 3.8 s; no K = 10 instance proved
more, though the last LP was lower on ct4 250, ct10 250 and pan 250 K=10; at K = 2 they
proved ct1 120 in both runs, not without them)."""
DP_PRICING = True
"""Exact pricing by :func:`models.kresource.pricing.dp_pattern` where it applies (K <= 2,
small capacities), else by branch and bound or CP-SAT."""
BB_NODES = 200_000
"""Most nodes of one branch-and-bound pricing (:func:`models.kresource.knapsack.
knapsack_pattern`, compiled: about 0.1-0.2 s); past it, CP-SAT prices."""
BB_RATE = 500_000
"""Nodes per second of the time left that a branch-and-bound pricing may visit (the
compiled search visits 1-2 million a second on the benchmark's pricings; it cannot look at
a clock, so its node budget is its limit)."""
BB_MIN_K = 3
"""Fewest resources for which the branch and bound prices (at K = 2 where the dynamic
program does not apply, CP-SAT: with the branch and bound, ct1 120 K=2 converged in 0.55 s
instead of 1.9 s on fewer columns, and its integer master no longer found the optimum
within 15 s; ct9 120 and 250 K=2 stayed open either way)."""
CPSAT_CAP = 0.5
"""Seconds of a CP-SAT pricing before the deeper branch and bound takes over (K >=
:data:`BB_MIN_K`, compiled; :meth:`_Generator._cpsat_then_deep`)."""
DEEP_NODES = 5_000_000
"""Most nodes of that deeper search (ct9 250 K=10: the pricing that certified 77 against
an LP of 76.41, where CP-SAT had not answered in seconds)."""
DEEP_RATE = 1_000_000
"""Nodes per second of the time left that the deeper search may visit."""
BB_MISSES = 2
"""Branch-and-bound pricings in a row that stop at :data:`BB_NODES` with no column after
which a generator prices by CP-SAT only."""
LOCAL_SEARCH = True
"""Whether stage 3 starts with the local search (:class:`ColgenOptions`)."""
SEARCH_SHARE = 0.25
"""Share of the time left after column generation for the local search."""
RESIDUAL = True
"""Whether dives round every LP by :func:`residual_packing` (:class:`ColgenOptions`)."""
LNS = True
"""Whether stage 3 runs the epoch-elimination neighbourhood search
(:func:`models.kresource.lns.eliminate_epochs`; :class:`ColgenOptions`)."""
LNS_SHARE = 0.2
"""Share of the time left for the neighbourhood search after the local search."""
LNS_LAST = 0.6
"""Share of the time left for it again after the integer master (from the best packing
then, with another seed), before the CP-SAT epochs model."""


@dataclass(frozen=True)
class ColgenOptions:
    """Options of :func:`solve_epochs`.

    Parameters
    ----------
    lp_share : float
        Share of the time limit for column generation, in (0, 1].
    dive_share : float
        Share of the time left after it for diving, in [0, 1].
    master_share : float
        Share of the time left after that for the integer master, in [0, 1].
    fallback : bool
        Run stage 4 (the CP-SAT epochs model with the bound) when stages 1-3 prove
        nothing.
    greedy_rounds : int
        Rounds of the greedy pricing per LP (:func:`models.kresource.pricing.
        greedy_patterns`), at least 1.
    residual : bool
        Round the LP after column generation and every LP of a dive by
        :func:`residual_packing` too, and give more time to column generation when a
        packing meets the LP value rounded up (stage 3 of the module docstring).
    swaps : bool
        Hold the dual-optimal inequalities ``y_i >= y_j`` (job i dominates job j) in the
        master LP while the bound is generated (:mod:`models.kresource.dominance`).
    local_search : bool
        Look for fewer epochs by :func:`models.kresource.local_search.fewer_epochs`
        after column generation (stage 3 of the module docstring).
    lns : bool
        Look for fewer epochs by :func:`models.kresource.lns.eliminate_epochs` after
        the local search and after the integer master, once column generation
        converged (stages 3 and 4).
    """

    lp_share: float = LP_SHARE
    dive_share: float = DIVE_SHARE
    master_share: float = MASTER_SHARE
    fallback: bool = True
    greedy_rounds: int = GREEDY_ROUNDS
    residual: bool = RESIDUAL
    swaps: bool = SWAPS
    local_search: bool = LOCAL_SEARCH
    lns: bool = LNS

    def __post_init__(self) -> None:
        if isinstance(self.greedy_rounds, bool) or not isinstance(self.greedy_rounds, int) \
                or self.greedy_rounds < 1:
            raise ValueError(f"greedy_rounds must be an integer >= 1, got "
                             f"{self.greedy_rounds!r}")
        for name in ("residual", "swaps", "local_search", "lns"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got "
                                 f"{getattr(self, name)!r}")
        if not 0 < self.lp_share <= 1:
            raise ValueError(f"lp_share must be in (0, 1], got {self.lp_share!r}")
        if not 0 <= self.dive_share <= 1:
            raise ValueError(f"dive_share must be in [0, 1], got {self.dive_share!r}")
        if not 0 <= self.master_share <= 1:
            raise ValueError(f"master_share must be in [0, 1], got {self.master_share!r}")


@dataclass
class Bound:
    """The outcome of column generation.

    Parameters
    ----------
    bound : int
        The certified lower bound on the number of epochs (at least the volume bound).
    lp : float or None
        The last restricted master LP value (floating; information only).
    converged : bool
        The exact pricing found no improving column (the LP bound is reached up to the
        rounding of the weights).
    columns : list of tuple of int
        Every pattern generated (job indices, ascending), the first ones the initial
        columns.
    lp_solution : dict
        Column index -> LP value of the last master LP (positive values only).
    certificate : tuple
        ``(weights, z)`` of the best Farley bound: integer weights per job and the upper
        bound on a pattern's weight (empty when the volume bound stands).
    rounds : int
        Master LP solves.
    exact : int
        Exact pricing calls.
    """

    bound: int
    lp: float | None = None
    converged: bool = False
    columns: list[tuple[int, ...]] = field(default_factory=list)
    lp_solution: dict[int, float] = field(default_factory=dict)
    certificate: tuple = ()
    rounds: int = 0
    exact: int = 0


def farley(weights: Sequence[int], z: int) -> int:
    """Farley's bound ``ceil(sum_j w_j / z)`` in exact arithmetic (module docstring);
    ``z`` must bound every pattern's weight from above. 0 without weight."""
    total = sum(weights)
    if total == 0:
        return 0
    if z <= 0:
        raise ValueError(f"farley: z must be positive with positive weights, got {z}")
    return math.ceil(Fraction(total, z))


def ffd(problem: EpochProblem, deadline: Deadline | None = None) -> list[list[list[int]]]:
    """First-fit packings: in queue order, then decreasing by each size measure of a job
    (the sum, the largest and the sum of squares of its normalised demands
    ``r_jk / C_k``, and the largest then the sum), each an epoch list. The measures only
    order the jobs (floating point); every fit is checked in integers. With a
    ``deadline`` (looked at every ``_FFD_CHECK`` jobs: one first-fit pass costs jobs x
    epochs), an order being packed when it expires is dropped, except the first, whose
    remaining jobs go by next fit (the last epoch or a new one: linear time), so a valid
    packing always comes back."""
    cap, dem, K = problem.capacity, problem.demands, problem.K
    norm = [[d[k] / cap[k] for k in range(K)] for d in dem]
    measures = (None, lambda v: sum(v), lambda v: max(v), lambda v: sum(x * x for x in v),
                lambda v: (max(v), sum(v)))
    out = []
    for measure in measures:
        if out and deadline is not None and deadline.expired():
            break
        order = range(problem.n) if measure is None else sorted(
            range(problem.n), key=lambda j, m=measure: m(norm[j]), reverse=True)
        epochs = _first_fit(order, cap, dem, deadline, next_fit_after=not out)
        if epochs is None:
            break
        out.append(relabel(epochs))
    return out


_FFD_CHECK = 256
"""Jobs placed between two looks at the deadline in :func:`ffd`."""


def _first_fit(order: Sequence[int], cap: Sequence[int], dem: Sequence[Sequence[int]],
               deadline: Deadline | None, next_fit_after: bool) -> list[list[int]] | None:
    """Epochs of first fit over ``order``. When ``deadline`` expires part way: None, or
    (``next_fit_after``) the rest placed by next fit."""
    K = len(cap)
    free: list[list[int]] = []
    epochs: list[list[int]] = []
    for i, j in enumerate(order):
        if deadline is not None and i % _FFD_CHECK == 0 and i and deadline.expired():
            if not next_fit_after:
                return None
            for j2 in order[i:]:
                d = dem[j2]
                if free and all(d[k] <= free[-1][k] for k in range(K)):
                    for k in range(K):
                        free[-1][k] -= d[k]
                    epochs[-1].append(j2)
                else:
                    free.append([cap[k] - d[k] for k in range(K)])
                    epochs.append([j2])
            return epochs
        d = dem[j]
        for f, ep in zip(free, epochs, strict=True):
            if all(d[k] <= f[k] for k in range(K)):
                for k in range(K):
                    f[k] -= d[k]
                ep.append(j)
                break
        else:
            free.append([cap[k] - d[k] for k in range(K)])
            epochs.append([j])
    return epochs


class _Master:
    """The restricted master LP in GLOP, grown one column at a time."""

    def __init__(self, n: int, deadline: Deadline | None = None) -> None:
        from ortools.linear_solver import pywraplp

        self.solver = pywraplp.Solver.CreateSolver("GLOP")
        if self.solver is None:
            raise RuntimeError("GLOP is not available in this OR-Tools build")
        inf = self.solver.infinity()
        self.rows = []
        for j in range(n):
            if j % CLOCK_EVERY == 0 and deadline is not None:
                deadline.check()
            self.rows.append(self.solver.Constraint(1.0, inf))
        self.vars: list = []
        self.swaps: list = []
        self.objective = self.solver.Objective()
        self.objective.SetMinimization()

    def add_swap(self, big: int, small: int) -> None:
        """The dual-optimal inequality ``y_big >= y_small`` as a primal column of cost 0
        (a pattern's place of job ``big`` covers job ``small``: +1 in the row of
        ``small``, -1 in the row of ``big``)."""
        v = self.solver.NumVar(0.0, self.solver.infinity(), "")
        self.rows[small].SetCoefficient(v, 1.0)
        self.rows[big].SetCoefficient(v, -1.0)
        self.swaps.append(v)

    def use_swaps(self, on: bool) -> None:
        """Let the swap columns (:meth:`add_swap`) enter the LP, or hold them at 0."""
        for v in self.swaps:
            v.SetUb(self.solver.infinity() if on else 0.0)

    def add(self, pattern: Sequence[int]) -> None:
        v = self.solver.NumVar(0.0, self.solver.infinity(), "")
        self.objective.SetCoefficient(v, 1.0)
        for j in pattern:
            self.rows[j].SetCoefficient(v, 1.0)
        self.vars.append(v)

    def fix(self, i: int, lower: float = 1.0) -> None:
        """Round column ``i`` up (its value at least 1), or release it (``lower=0``)."""
        self.vars[i].SetLb(lower)

    def solve(self, time_limit: float | None) -> tuple[float, list[float], dict[int, float]]:
        """LP value, duals per job and the positive column values; raises TimeUp
        when GLOP does not finish optimal."""
        from ortools.linear_solver import pywraplp

        if time_limit is not None:
            self.solver.SetTimeLimit(max(1, int(time_limit * 1000)))
        st = self.solver.Solve()
        if st != pywraplp.Solver.OPTIMAL:
            raise TimeUp
        duals = [r.dual_value() for r in self.rows]
        sol = {i: v.solution_value() for i, v in enumerate(self.vars)
               if v.solution_value() > 1e-9}
        return self.objective.Value(), duals, sol


def _compiled_pricing(problem: EpochProblem) -> bool:
    """Whether the compiled branch and bound prices ``problem``: K >= :data:`BB_MIN_K` and
    numba holds it compiled. Below that K it never runs, and numba is not imported (about
    0.25 s a process)."""
    return problem.K >= BB_MIN_K and compiled_ready()


def _nodes(deadline: Deadline, most: int, rate: int) -> int:
    """A branch-and-bound pricing's node budget: ``most``, and ``rate`` nodes per second
    of the time left."""
    left = deadline.left()
    return most if left is None else min(most, int(max(left, 0.0) * rate))


class _Generator:
    """Column generation on the restricted master: the columns, the LP, the pricing."""

    def __init__(self, problem: EpochProblem, columns: Sequence[Sequence[int]], seed: int,
                 deadline: Deadline | None = None, greedy_rounds: int = 1,
                 swaps: bool = SWAPS, compiled: bool = False) -> None:
        """Raises :class:`TimeUp` when ``deadline`` passes while the first master LP
        (a row per job, a column per pattern of ``columns``) is built. With ``swaps``,
        the dual-optimal inequalities of :func:`models.kresource.dominance.
        dominance_pairs` enter the master LP while the bound is generated. With
        ``compiled`` (:func:`models.kresource.knapsack.compiled_ready`, asked before a
        solver's clock starts) and K >= :data:`BB_MIN_K`, exact pricing tries the
        compiled branch and bound before CP-SAT."""
        self.problem, self.seed, self.greedy_rounds = problem, seed, greedy_rounds
        self.master = _Master(problem.n, deadline)
        for big, small in dominance_pairs(problem, deadline) if swaps else ():
            self.master.add_swap(big, small)
        self.swapping = bool(self.master.swaps)
        self.improve = IMPROVE > 0 and problem.K <= IMPROVE_MAX_K
        self.disjoint = DISJOINT > 0 and problem.K <= DISJOINT_MAX_K
        self.dp = DP_PRICING
        self.bb = compiled and problem.K >= BB_MIN_K
        self.deep = compiled and problem.K >= BB_MIN_K  # stays when bb turns off
        self.deep_first = False
        self.misses = 0
        self.columns: list[tuple[int, ...]] = []
        self.index: dict[tuple[int, ...], int] = {}
        self.sizes = job_sizes(problem)
        self.by_size = sorted(range(problem.n), key=lambda j: -self.sizes[0][j])
        self.out = Bound(bound=problem.lower_bound(), columns=self.columns)
        for i, p in enumerate(columns):
            if i % CLOCK_EVERY == 0 and deadline is not None:
                deadline.check()
            self.add(p)

    def add(self, p: Sequence[int]) -> bool:
        """Add pattern ``p`` as a column; False when it is there already."""
        key = tuple(sorted(p))
        if key in self.index:
            return False
        self.index[key] = len(self.columns)
        self.columns.append(key)
        self.master.add(key)
        return True

    def run(self, deadline: Deadline, *, target: int | None = None, certify: bool = True
            ) -> bool:
        """Generate columns until the LP is optimal over every pattern (True), the
        certified bound reaches ``target`` or its ceiling, or time runs out (False).
        ``certify`` updates the certified bound from every exact pricing."""
        out, problem = self.out, self.problem
        if self.master.swaps and self.swapping != certify:
            self.master.use_swaps(certify)  # a dive's LP is the plain set cover
            self.swapping = certify
        while not deadline.expired():
            try:
                out.lp, duals, out.lp_solution = self.master.solve(deadline.left())
            except TimeUp:
                return False
            out.rounds += 1
            if certify and out.bound >= math.ceil(out.lp - LP_TOL):
                out.converged = True  # the LP value only falls: its ceiling is reached
                return True
            added = 0
            for p in greedy_patterns(problem, duals, sizes=self.sizes,
                                      rounds=self.greedy_rounds):
                if sum(duals[j] for j in p) > 1 + EPS:
                    added += self.add(p)
            if not added and self.improve:
                for p in greedy_patterns(problem, duals, sizes=self.sizes)[:IMPROVE]:
                    q = swap_improve(problem, p, duals, self.by_size)
                    if sum(duals[j] for j in q) > 1 + EPS:
                        added += self.add(q)
            if added:
                continue
            if not certify:
                return False  # greedy pricing only (diving)
            weights = [math.floor(y * SCALE) if math.isfinite(y) and y > 0 else 0
                       for y in duals]
            aim = math.ceil(out.lp - LP_TOL)  # the best bound these duals can certify
            if target is not None:
                aim = min(aim, target)
            # no pattern of weight >= at_least proves ceil(W / (at_least - 1)) >= aim
            total = sum(weights)
            at_least = SCALE + 1 if aim < 2 else max(SCALE + 1, -(-total // (aim - 1)))
            hint = max(self.columns, key=lambda p: sum(weights[j] for j in p))
            price = dp_pattern(problem, weights, above=SCALE) if self.dp else None
            if price is None:
                price = self._branch_and_bound(weights, at_least, deadline)
            if price is None:
                price = self._cpsat_then_deep(weights, at_least, hint, deadline)
            out.exact += 1
            if price.upper > 0:
                b = farley(weights, price.upper)
                if b > out.bound:
                    out.bound, out.certificate = b, (tuple(weights), price.upper)
            if price.proved and price.upper <= SCALE or out.bound >= aim:
                out.converged = True  # no column prices above 1, or the aim is proved
                return True
            for p in price.found:
                added += self.add(complete(problem, p, self.by_size))
            if added and price.found and self.disjoint:
                added += self._disjoint(weights, price.found[-1], deadline)
            if not added:
                return False  # nothing new to add: the LP cannot move
        return False

    def _cpsat_then_deep(self, weights: list[int], at_least: int, hint: Sequence[int],
                         deadline: Deadline) -> Pricing:
        """Exact pricing by CP-SAT; where the compiled branch and bound serves (K >=
        :data:`BB_MIN_K`), CP-SAT gets at most :data:`CPSAT_CAP` seconds and, when it
        neither proves nor finds a column in them, the branch and bound searches again
        with up to :data:`DEEP_NODES` nodes (:data:`DEEP_RATE` a second of the time
        left); its answer when it proves or finds, else the one whose upper bound on a
        pattern's weight is lower (both are valid bounds)."""
        deep = self.deep
        if deep and self.deep_first:
            first = self._deep(weights, at_least, deadline)
            if first is not None and (first.proved or first.found):
                return first
        limit = deadline.left()
        if deep:
            limit = CPSAT_CAP if limit is None else min(limit, CPSAT_CAP)
        price = best_pattern(self.problem, weights, time_limit=limit, seed=self.seed,
                             hint=hint, above=SCALE, enough=ENOUGH, at_least=at_least)
        if not deep or price.proved or price.found or deadline.expired() \
                or self.deep_first:
            return price
        again = self._deep(weights, at_least, deadline)
        if again is not None and (again.proved or again.found):
            self.deep_first = True  # CP-SAT failed where the search did not: search first
            return again
        if again is not None and again.upper < price.upper:
            return again
        return price

    def _deep(self, weights: list[int], at_least: int, deadline: Deadline
              ) -> Pricing | None:
        """The branch and bound with up to :data:`DEEP_NODES` nodes
        (:data:`DEEP_RATE` a second of the time left)."""
        nodes = max(_nodes(deadline, DEEP_NODES, DEEP_RATE), 1)
        return knapsack_pattern(self.problem, weights, at_least=at_least, above=SCALE,
                                nodes=nodes, compiled=True)

    def _branch_and_bound(self, weights: list[int], at_least: int, deadline: Deadline
                          ) -> Pricing | None:
        """Exact pricing by the compiled branch and bound
        (:func:`models.kresource.knapsack.knapsack_pattern`, at most :data:`BB_NODES`
        nodes, and :data:`BB_RATE` a second of the time left): its answer when it
        proves one or finds a column, else None (CP-SAT then prices; after
        :data:`BB_MISSES` such calls in a row, always)."""
        if not self.bb:
            return None
        price = knapsack_pattern(self.problem, weights, at_least=at_least, above=SCALE,
                                 nodes=_nodes(deadline, BB_NODES, BB_RATE), compiled=True)
        if price is not None and (price.proved or price.found):
            self.misses = 0
            return price
        self.misses += 1
        self.bb = self.misses < BB_MISSES
        return None

    def _disjoint(self, weights: list[int], first: Sequence[int], deadline: Deadline) -> int:
        """Up to :data:`DISJOINT` more improving columns (weight above ``SCALE``), each
        over jobs no earlier one of this round holds (``first`` the exact pricing's),
        by :func:`models.kresource.pricing.patterns_above` for at most
        :data:`DISJOINT_TIME` seconds each; the columns added."""
        w = list(weights)
        taken = list(first)
        added = 0
        for _ in range(DISJOINT):
            for j in taken:
                w[j] = 0
            left = deadline.left()
            stop = Deadline(DISJOINT_TIME if left is None else min(DISJOINT_TIME, left))
            found, _ = patterns_above(self.problem, w, SCALE + 1, deadline=stop, most=1)
            if not found:
                break
            added += self.add(complete(self.problem, found[0], self.by_size))
            taken = list(found[0])
        return added


def lp_bound(problem: EpochProblem, columns: Sequence[Sequence[int]], *,
             time_limit: float | None, seed: int = 0, target: int | None = None,
             greedy_rounds: int = GREEDY_ROUNDS) -> Bound:
    """Column generation from ``columns`` (which must cover every job) within
    ``time_limit`` seconds; stops early once the certified bound reaches ``target``
    (the incumbent's number of epochs); ``greedy_rounds`` as in :class:`ColgenOptions`.
    See the module docstring. The volume bound alone (``rounds == 0``) when the time
    runs out while the first master is built."""
    rounds = ColgenOptions(greedy_rounds=greedy_rounds).greedy_rounds
    compiled = _compiled_pricing(problem)  # before the clock, as in :func:`solve_epochs`
    deadline = Deadline(time_limit)
    try:
        gen = _Generator(problem, columns, seed, deadline, greedy_rounds=rounds,
                         compiled=compiled)
    except TimeUp:
        return Bound(bound=problem.lower_bound(), columns=[tuple(sorted(p)) for p in columns])
    gen.run(deadline, target=target)
    return gen.out


def dive(gen: _Generator, *, upper: int, time_limit: float | None,
         rng: random.Random | None = None, residual: bool = False
         ) -> list[list[int]] | None:
    """One dive from the current LP of ``gen``: fix (round up) the column of largest
    fractional LP value (with ``rng``, one of the :data:`DIVE_CHOICES` largest, at
    random), and every column at 1, generate columns again (greedy pricing), until the
    LP solution is integral (an epoch list, returned; the swap columns of ``gen`` held
    at 0 first) or its value rounded up reaches
    ``upper`` (None: this dive cannot beat the incumbent) or time runs out (None). The
    columns fixed are released at the end. With ``residual``, every LP of the dive is
    also rounded by :func:`residual_packing`; the dive stops at the first such packing
    of ``ceil(LP value)`` epochs (none deeper can do better) and returns the smallest
    below ``upper`` when it ends without an integral LP."""
    deadline = Deadline(time_limit)
    fixed: set[int] = set()
    found: list[list[int]] | None = None
    if gen.swapping:  # the LP with swap columns is no cover by patterns
        gen.run(deadline, certify=False)
    try:
        while not deadline.expired():
            lp, sol = gen.out.lp, gen.out.lp_solution
            if lp is None or math.ceil(lp - LP_TOL) >= upper:
                return found
            if residual:
                packing = residual_packing(gen.problem, gen.columns, sol, gen.by_size,
                                           deadline)
                if len(packing) < upper:
                    found, upper = packing, len(packing)
                    if upper <= math.ceil(lp - LP_TOL):
                        return found
            ones = [i for i, v in sol.items() if v > 1 - 1e-6]
            frac = sorted(((v, i) for i, v in sol.items()
                           if v <= 1 - 1e-6 and i not in fixed), reverse=True)
            if not frac:
                return _cover_to_partition(gen.problem, [gen.columns[i] for i in ones])
            _, pick = frac[0] if rng is None else rng.choice(frac[:DIVE_CHOICES])
            for i in ones + [pick]:
                if i not in fixed:
                    fixed.add(i)
                    gen.master.fix(i)
            gen.run(deadline, certify=False)
        return found
    finally:
        for i in fixed:
            gen.master.fix(i, 0.0)


def dives(gen: _Generator, *, upper: int, lower: int, time_limit: float | None,
          seed: int = 0, residual: bool = False) -> tuple[list[list[int]] | None, int]:
    """Dives (:func:`dive`) until one meets ``lower`` or the time is spent (at most one
    without a limit): the first takes the largest column, the others choose at random
    (``random.Random(seed)``) and start from the LP over every column generated so far.
    Returns the best packing found below ``upper`` (or None) and the number of dives;
    ``residual`` as in :func:`dive`."""
    deadline = Deadline(time_limit)
    rng = random.Random(seed)
    best, count = None, 0
    while not deadline.expired():
        if count:
            gen.run(deadline, certify=False)  # the LP again, nothing fixed
        lp = gen.out.lp
        if lp is None or math.ceil(lp - LP_TOL) >= (upper if best is None else len(best)):
            break  # no dive from this LP can beat the incumbent
        sol = dive(gen, upper=upper if best is None else len(best),
                   time_limit=deadline.left(), rng=rng if count else None,
                   residual=residual)
        count += 1
        if sol is not None and (best is None or len(sol) < len(best)):
            best = sol
        if best is not None and len(best) <= lower or time_limit is None:
            break
    return best, count


def residual_packing(problem: EpochProblem, columns: Sequence[Sequence[int]],
                     lp_solution: dict[int, float], order: Sequence[int],
                     deadline: Deadline | None = None) -> list[list[int]]:
    """Epochs from an LP solution: its columns of value at least :data:`RESIDUAL_MIN`,
    largest value first, each keeping the jobs no earlier one took; the jobs left
    packed by first fit in ``order`` (every fit checked in integers; by next fit once
    ``deadline`` expires, as in :func:`ffd`)."""
    taken = sorted(((v, i) for i, v in lp_solution.items() if v >= RESIDUAL_MIN),
                   reverse=True)
    seen: set[int] = set()
    epochs = []
    for _, i in taken:
        ep = [j for j in columns[i] if j not in seen]
        if ep:
            seen.update(ep)
            epochs.append(ep)
    rest = [j for j in order if j not in seen]
    epochs += _first_fit(rest, problem.capacity, problem.demands, deadline, True) or []
    return relabel(epochs)


def _cover_to_partition(problem: EpochProblem, patterns: Sequence[Sequence[int]]
                        ) -> list[list[int]]:
    """Epochs from chosen patterns that cover every job: each job kept in its first."""
    seen: set[int] = set()
    out = []
    for p in patterns:
        ep = [j for j in p if j not in seen]
        seen.update(ep)
        if ep:
            out.append(ep)
    return relabel(out)


def integer_master(problem: EpochProblem, columns: Sequence[Sequence[int]], *,
                   lower: int, incumbent: Sequence[Sequence[int]], time_limit: float | None,
                   seed: int = 0) -> list[list[int]] | None:
    """The fewest columns covering every job (CP-SAT, one worker), between ``lower``
    and ``len(incumbent)`` of them, hinted with the incumbent's epochs (when they are
    columns). Returns the epochs found, or None (also when ``time_limit`` seconds pass
    while the model is built: the clock is checked every :data:`CLOCK_EVERY` columns
    and jobs)."""
    from ortools.sat.python import cp_model

    deadline = Deadline(time_limit)
    m = cp_model.CpModel()
    z = []
    cover: list[list[int]] = [[] for _ in range(problem.n)]
    for i, p in enumerate(columns):
        if i % CLOCK_EVERY == 0 and deadline.expired():
            return None
        z.append(m.new_bool_var(f"z{i}"))
        for j in p:
            cover[j].append(i)
    for j, cs in enumerate(cover):
        if not cs or j % CLOCK_EVERY == 0 and deadline.expired():
            return None
        m.add_bool_or(z[i] for i in cs)
    m.add(sum(z) >= lower)
    m.add(sum(z) <= len(incumbent))
    index = {p: i for i, p in enumerate(columns)}
    for ep in incumbent:
        i = index.get(tuple(sorted(ep)))
        if i is not None:
            m.add_hint(z[i], 1)
    m.minimize(sum(z))
    s = cp_model.CpSolver()
    s.parameters.num_workers = 1
    s.parameters.random_seed = int(seed)
    s.parameters.linearization_level = MASTER_LINEARIZATION
    left = deadline.solver_time()  # the time left less a reserve for reading the answer
    if left is not None:
        if left <= 0:
            return None
        s.parameters.max_time_in_seconds = left
    st = run_cpsat(s, m)
    if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return _cover_to_partition(problem, [columns[i] for i in range(len(columns))
                                         if s.value(z[i])])


def small_reduced_cost(gen: _Generator, epochs: int, deadline: Deadline) -> tuple[int, bool]:
    """Add to ``gen`` the patterns a packing into ``epochs`` epochs can use, given the
    master LP's duals ``y >= 0`` (over every column generated, dominance columns in):
    when no pattern weighs more than 1 (the LP converged), the epochs ``q`` of such a
    packing weigh ``sum_q y(q) >= sum_j y_j = W``, so each has
    ``y(q) >= W - (epochs - 1)``: its reduced cost is at most the gap ``epochs - W``
    (reduced-cost column enumeration, as price-and-branch uses it). In integers, with
    ``w_j = floor(y_j SCALE)``: ``w(q) >= sum_j w_j - (epochs - 1) SCALE``. The
    maximal patterns over the jobs of positive weight are enumerated
    (:func:`models.kresource.pricing.patterns_above`, at most :data:`ENUM_MOST`, until
    ``deadline``), completed by the jobs of weight 0 that fit, and added. A heuristic
    for the integer master: nothing here touches the certified bound. Returns the
    columns added and whether the enumeration was complete."""
    if gen.master.swaps and not gen.swapping:
        gen.master.use_swaps(True)
        gen.swapping = True
    try:
        _, duals, _ = gen.master.solve(deadline.left())
    except TimeUp:
        return 0, False
    weights = [math.floor(y * SCALE) if math.isfinite(y) and y > 0 else 0 for y in duals]
    at_least = max(1, sum(weights) - (epochs - 1) * SCALE)
    pats, whole = patterns_above(gen.problem, weights, at_least, deadline=deadline,
                                 most=ENUM_MOST)
    added = 0
    for i, p in enumerate(pats):
        if i % CLOCK_EVERY == 0 and i and deadline.expired():
            return added, False
        added += gen.add(complete(gen.problem, p, gen.by_size))
    return added, whole


def _more_columns(gen: _Generator, deadline: Deadline, share: float, target: int,
                  bound: int, notes: list[str]) -> int:
    """More column generation on ``share`` of the time left, aiming at ``target`` epochs;
    the bound after it (never lower than ``bound``), said in ``notes``."""
    gen.run(_share(deadline, share), target=target)
    bound = max(bound, gen.out.bound)
    lp = "" if gen.out.lp is None else f"LP {round(gen.out.lp, 4)}, "
    notes.append(f"more columns: bound {bound} ({lp}{gen.out.exact} exact pricings"
                 f"{', converged' if gen.out.converged else ''}, {deadline.elapsed():.2f} s)")
    return bound


def solve_epochs(problem: EpochProblem, *, time_limit: float | None = None, seed: int = 0,
                 lp_share: float = LP_SHARE, dive_share: float = DIVE_SHARE,
                 master_share: float = MASTER_SHARE, fallback: bool = True,
                 greedy_rounds: int = GREEDY_ROUNDS, residual: bool = RESIDUAL,
                 swaps: bool = SWAPS, local_search: bool = LOCAL_SEARCH,
                 lns: bool = LNS) -> Result:
    """Minimum epochs by price-and-branch (module docstring); ``time_limit`` in seconds
    of wall clock covers every stage. The one-time imports of OR-Tools happen before
    the clock starts, and so does the loading of the compiled branch-and-bound pricing
    (where numba holds it compiled: :func:`models.kresource.knapsack.compiled_ready`)."""
    from ortools.linear_solver import pywraplp  # noqa: F401  (imported before the clock)
    from ortools.sat.python import cp_model  # noqa: F401

    compiled = _compiled_pricing(problem)  # numba and its kernel loaded before the clock
    opts = ColgenOptions(lp_share, dive_share, master_share, fallback, greedy_rounds,
                         residual, swaps, local_search, lns)
    deadline = Deadline(time_limit)
    params = {"time_limit": time_limit, "lp_share": lp_share, "dive_share": dive_share,
              "master_share": master_share, "fallback": fallback,
              "greedy_rounds": greedy_rounds, "residual": residual, "swaps": swaps,
              "local_search": local_search, "lns": lns}
    packings = ffd(problem, _share(deadline, FFD_SHARE))
    best = min(packings, key=len)
    notes = [f"greedy {len(best)}"]
    volume = problem.lower_bound()

    def done(sol: list[list[int]], bound: int) -> Result:
        status = Status.OPTIMAL if len(sol) == bound else Status.FEASIBLE
        return build(solver="colgen", status=status, solution=sol, bound=bound,
                     check=checker(problem), objective=scorer(problem), seed=seed,
                     runtime=deadline.elapsed(), params=params, note="; ".join(notes))

    if len(best) == volume:
        notes.append("meets the volume bound")
        return done(best, volume)
    columns = [tuple(sorted(ep)) for sol in packings for ep in sol]
    stage = _share(deadline, opts.lp_share)
    try:
        gen = _Generator(problem, columns, seed, stage, greedy_rounds=opts.greedy_rounds,
                         swaps=opts.swaps, compiled=compiled)
    except TimeUp:  # the master LP alone outlasts the stage: no LP bound in time
        notes.append(f"no time to build the master LP ({len(columns)} columns, "
                     f"{deadline.elapsed():.2f} s)")
        return done(best, volume)
    gen.run(stage, target=len(best))
    lb = gen.out
    bound = max(volume, lb.bound)
    notes.append(f"certified bound {bound} (LP {lb.lp if lb.lp is None else round(lb.lp, 4)}, "
                 f"{len(lb.columns)} columns, {lb.rounds} LP solves, {lb.exact} exact "
                 f"pricings{', converged' if lb.converged else ''}, "
                 f"{deadline.elapsed():.2f} s)")
    if problem.K >= BB_MIN_K and not compiled and lb.exact:
        notes.append("exact pricing by CP-SAT only: the compiled branch and bound is not "
                     "in numba's cache (`schedsearch compile` caches it)")
    if len(best) <= bound or deadline.expired():
        return done(best, bound)
    if opts.residual and lb.lp_solution:
        packing = residual_packing(problem, gen.columns, lb.lp_solution, gen.by_size,
                                   deadline)
        if len(packing) < len(best):
            best = packing
            notes.append(f"residual packing {len(best)}")
            if len(best) <= bound:
                return done(best, bound)
    if opts.local_search:
        packing = fewer_epochs(problem, best, lower=bound, seed=seed,
                               time_limit=_share(deadline, SEARCH_SHARE).limit)
        if len(packing) < len(best):
            best = packing
            notes.append(f"local search {len(best)} ({deadline.elapsed():.2f} s)")
            if len(best) <= bound:
                return done(best, bound)
    if opts.lns and gen.out.converged:
        best = _eliminate(problem, best, bound, _share(deadline, LNS_SHARE), seed, notes)
        if len(best) <= bound:
            return done(best, bound)
    if not lb.converged and lb.lp is not None and math.ceil(lb.lp - LP_TOL) >= len(best):
        # no dive can beat the incumbent from this LP: the dives' time goes to the bound
        bound = _more_columns(gen, deadline, MORE_SHARE if opts.residual else
                              opts.dive_share, len(best), bound, notes)
        if len(best) <= bound or deadline.expired():
            return done(best, bound)
    lp_top = gen.out.lp
    sol, count = dives(gen, upper=len(best), lower=bound, seed=seed,
                       time_limit=_share(deadline, opts.dive_share).limit,
                       residual=opts.residual)
    if sol is not None and len(sol) < len(best):
        best = sol
    notes.append(f"{count} dive(s) {'-' if sol is None else len(sol)} ({len(gen.columns)} "
                 f"columns, {deadline.elapsed():.2f} s)")
    if len(best) <= bound or deadline.expired():
        return done(best, bound)
    if (opts.residual and not gen.out.converged and lp_top is not None
            and math.ceil(lp_top - LP_TOL) >= len(best)):
        # the packing meets the LP's ceiling: only the bound can close the gap
        bound = _more_columns(gen, deadline, MORE_SHARE, len(best), bound, notes)
        if len(best) <= bound or deadline.expired():
            return done(best, bound)
    added, whole = small_reduced_cost(gen, len(best) - 1, _share(deadline, ENUM_SHARE))
    notes.append(f"{added} columns of small reduced cost{' (all)' if whole else ''} "
                 f"({deadline.elapsed():.2f} s)")
    left = deadline.solver_time()
    sol = None if left is not None and opts.master_share * left < MIN_STAGE else \
        integer_master(problem, gen.columns, lower=bound, incumbent=best, seed=seed,
                       time_limit=None if left is None else opts.master_share * left)
    if sol is not None and len(sol) < len(best):
        best = sol
    notes.append(f"integer master {len(best)} ({deadline.elapsed():.2f} s)")
    if len(best) <= bound or deadline.expired():
        return done(best, bound)
    if opts.lns and gen.out.converged:
        best = _eliminate(problem, best, bound, _share(deadline, LNS_LAST), seed + 1, notes)
        if len(best) <= bound or deadline.expired():
            return done(best, bound)
    if not opts.fallback:
        return done(best, bound)
    best, bound = _fallback(problem, best, bound, deadline, seed, notes)
    return done(best, bound)


def _eliminate(problem: EpochProblem, best: list[list[int]], bound: int,
               stage: Deadline, seed: int, notes: list[str]) -> list[list[int]]:
    """The neighbourhood search (:func:`models.kresource.lns.eliminate_epochs`) from
    ``best`` towards ``bound`` within ``stage``; the smaller packing, said in
    ``notes``."""
    packing, solves = eliminate_epochs(problem, best, lower=bound, seed=seed,
                                       time_limit=stage.limit)
    notes.append(f"neighbourhood search {min(len(packing), len(best))} ({solves} solves, "
                 f"{stage.elapsed():.2f} s)")
    return packing if len(packing) < len(best) else best


def _share(deadline: Deadline, share: float) -> Deadline:
    """A deadline for a stage: ``share`` of the time left of ``deadline`` (less its
    reserve), from now."""
    left = deadline.solver_time()
    return Deadline(None if left is None else share * left)


def _fallback(problem: EpochProblem, best: list[list[int]], bound: int, deadline: Deadline,
              seed: int, notes: list[str]) -> tuple[list[list[int]], int]:
    """Stage 4: the CP-SAT epochs model with ``sum y >= bound``, hinted with ``best``."""
    from models.kresource.cpsat import _epochs_model, _solver, _status, too_large

    if too_large(problem.n, len(best), deadline.left(0.0)):
        notes.append("no time for cpsat (its model too large for the time left)")
        return best, bound
    try:
        m, x, _ = _epochs_model(problem, best, bound, deadline)
    except TimeUp:
        notes.append("no time for cpsat")
        return best, bound
    left = deadline.solver_time()
    if left is not None and left <= 0:
        return best, bound
    s = _solver(left, seed)
    status = _status(run_cpsat(s, m))
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        sol = relabel([[j for j in range(problem.n) if (j, e) in x and s.value(x[j, e])]
                       for e in range(len(best))])
        if len(sol) < len(best):
            best = sol
        bound = max(bound, math.ceil(s.best_objective_bound - 1e-9))
    notes.append(f"cpsat {status.value} {len(best)}")
    return best, bound
