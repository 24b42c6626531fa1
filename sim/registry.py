"""One registry of named solvers (offline problems) and policies (online simulation).

The CLI, the tests and the benchmarks iterate over these tables instead of if/elif
chains. Entries are registered lazily by dotted path so that importing the registry
never imports OR-Tools or PuLP.

Solvers are grouped by problem family: ``SOLVERS[family][name] = "module:function"``,
each function with the signature ``solve(problem, *, time_limit=None, seed=0,
<explicit keyword options>) -> Result`` (no ``**params``: a misspelt option is a
TypeError, ``tests/limits/test_options.py``). ``PROBLEM_LOADERS[family] =
"module:function"`` reads a problem from a parsed JSON dictionary; the family of a JSON
file is its ``"problem"`` field. :func:`problem_family` resolves that field (or a family's
name) once, at the edge, into a :class:`sim.problems.Family` holding the family's tables;
the functions taking a family's name (:func:`solver`, :func:`has_solver`,
:func:`default_solver`, :func:`load_problem`) are thin wrappers of it.

Policies map a name to ``"module:factory"``; the factory takes keyword options and
returns an object following ``sim.batch.policy.Policy``.

Installed packages add names through entry points (``sim.plugins``): they are read once,
when this module is imported (after the built-in names and :data:`DEFAULT_SOLVERS`, which
they never replace), so that every reader of the tables sees them. A plugin that does not
import, or names no callable, is a ValueError naming it and its entry point.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from sim.problems.family import COMBINATION, Family, is_combination  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from sim.batch.policy import PolicySpec

POLICIES: dict[str, str] = {
    "fcfs": "heuristics.backfill:FCFS",
    "easy": "heuristics.backfill:EASY",
    "conservative": "heuristics.backfill:Conservative",
    "unconstrained": "heuristics.backfill:Unconstrained",
    "sjbf": "heuristics.backfill:SJBF",
    "easy++": "heuristics.backfill:EASYPlusPlus",
    "selective": "heuristics.selective:SelectiveReservation",
}

SOLVERS: dict[str, dict[str, str]] = {}

PROBLEM_LOADERS: dict[str, str] = {}
PROBLEM_LOADERS["grouping"] = "sim.problems.grouping:from_dict"
SOLVERS["grouping"] = {
    "exact-ilp": "models.grouping:solve_ilp",
    "exact-cpsat": "models.grouping:solve_cpsat",
    "exhaustive": "models.grouping:solve_exhaustive",
    "greedy": "heuristics.grouping:greedy",
    "footprint": "heuristics.grouping:footprint_balancing",
    "knee": "heuristics.grouping:knee",
}
PROBLEM_LOADERS["slack_insertion"] = "sim.problems.insertion:from_dict"
POLICIES["slack"] = "heuristics.slack:SlackPolicy"
SOLVERS.setdefault("slack_insertion", {}).update({
    "AST": "heuristics.slack:solve_ast",
    "AAT": "heuristics.slack:solve_aat",
    "DU": "heuristics.slack:solve_du",
    "DC": "heuristics.slack:solve_dc",
    "DP": "heuristics.slack:solve_dp",
    "exhaustive": "heuristics.slack:solve_exhaustive",
})
POLICIES["slack-optimal"] = "models.slack_insertion.policy:OptimalInsertionPolicy"
SOLVERS.setdefault("slack_insertion", {}).update({
    "cpsat": "models.slack_insertion.cpsat:solve_cpsat",
    "ilp": "models.slack_insertion.ilp:solve_ilp",
    "brute": "models.slack_insertion.brute:solve_brute",
    "portfolio": "models.slack_insertion.portfolio:solve_portfolio",
    "ti": "models.slack_insertion.timeindexed:solve_ti",
    "cpsat+ti": "models.slack_insertion.tiportfolio:solve_cpsat_ti",
})

# CSM exact reference M6: memory-balanced task mapping
PROBLEM_LOADERS["task_mapping"] = "sim.problems.task_mapping:from_dict"
SOLVERS["task_mapping"] = {
    "cpsat": "models.task_mapping:solve_cpsat",
    "ilp": "models.task_mapping:solve_ilp",
    "brute": "models.task_mapping:solve_brute",
    "greedy": "heuristics.task_mapping:greedy",
}

# BSP scheduling servers (Karl): slot tables and slot placement
PROBLEM_LOADERS["slot_assignment"] = "sim.problems.slots:from_dict"
SOLVERS["slot_assignment"] = {
    "cpsat": "models.slots:solve_cpsat",
    "ilp": "models.slots:solve_ilp",
    "brute": "models.slots:solve_brute",
    "round-robin": "heuristics.slots:round_robin",
    "coloring": "heuristics.slots:coloring",
}
PROBLEM_LOADERS["slot_placement"] = "sim.problems.placement:from_dict"
SOLVERS["slot_placement"] = {"exhaustive": "models.slots:solve_placement"}

# K-resource scheduling (Leinberger, Karypis & Kumar 1999)
PROBLEM_LOADERS["kresource_epochs"] = "sim.problems.kresource:from_dict"
PROBLEM_LOADERS["kresource_selection"] = "sim.problems.kresource:from_dict"
PROBLEM_LOADERS["kresource_response"] = "sim.problems.kresource:from_dict"
SOLVERS["kresource_epochs"] = {
    "cpsat": "models.kresource.cpsat:solve_epochs",
    "colgen": "models.kresource.colgen:solve_epochs",
    "ilp": "models.kresource.ilp:solve_epochs",
    "brute": "models.kresource.brute:solve_epochs",
    "unc": "models.kresource.cpsat:solve_unc",
    **{r: f"heuristics.kresource:solve_{r.replace('-', '_')}"
       for r in ("fcfs", "fcfs-ff", "fcfs-bl", "fcfs-bb", "unc-ff", "unc-bl", "unc-bb")},
}
SOLVERS["kresource_selection"] = {
    "cpsat": "models.kresource.cpsat:solve_selection",
    "ilp": "models.kresource.ilp:solve_selection",
    "brute": "models.kresource.brute:solve_selection",
    "ff": "heuristics.kresource:solve_select_ff",
    "bl": "heuristics.kresource:solve_select_bl",
    "bb": "heuristics.kresource:solve_select_bb",
}
SOLVERS["kresource_response"] = {
    "cpsat": "models.kresource.cpsat:solve_response",
    "ilp": "models.kresource.ilp:solve_response",
    "brute": "models.kresource.brute:solve_response",
    "list": "heuristics.kresource:solve_list",
    "portfolio": "models.kresource.portfolio:solve_response",
}
POLICIES["opt-easy"] = "models.kresource.policy:OptEASY"


def _load(path: str) -> Callable[..., Any]:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _load_entry(target: str, what: str, plugin: bool) -> Callable[..., Any]:
    """Load a table's ``target``; one registered by an installed package through
    :func:`sim.plugins.load_reference` (a ValueError naming it when it does not load)."""
    if not plugin:
        return _load(target)
    from sim.plugins import load_reference

    return load_reference(target, what=what)


def policy_factory(name: str) -> Callable[..., Any]:
    """Return the factory of the policy registered as ``name``, or of a user's
    ``MODULE:FACTORY`` (``sim.plugins``)."""
    from sim.plugins import POLICY_GROUP, is_reference, load_reference

    if is_reference(name):
        return load_reference(name, what="policy")
    check_plugins("policy")
    try:
        target = POLICIES[name]
    except KeyError:
        from sim.names import did_you_mean

        raise ValueError(f"unknown policy {name!r}; {did_you_mean(name, POLICIES)}known: "
                         f"{sorted(POLICIES)} or MODULE:FACTORY") from None
    return _load_entry(target, f"policy {name!r} (entry point of group {POLICY_GROUP})",
                       ("", name) in PLUGINS)


_PLUGINS_READ = False

#: the names that installed packages added: ``("", policy)`` and ``(family, solver)``
PLUGINS: set[tuple[str, str]] = set()


#: why installed packages' entry points were refused, per kind ("solver", "policy"):
#: a name that shadows a built-in one, a solver name without ``family/``, an unknown family
PLUGIN_ERRORS: dict[str, list[str]] = {"solver": [], "policy": []}


def _plugins() -> None:
    """Add the policies and solvers that installed packages register as entry points
    (``sim.plugins``), once. An entry point that would shadow a built-in name, a solver
    name without ``family/`` or of an unknown family, or a name two entry points claim
    (neither is taken: which one an import order picks is no choice) is refused: recorded
    in :data:`PLUGIN_ERRORS` and raised by :func:`check_plugins` when a name of that kind
    is looked up."""
    global _PLUGINS_READ
    if _PLUGINS_READ:
        return
    _PLUGINS_READ = True
    from sim.plugins import POLICY_GROUP, SOLVER_GROUP, entry_point_names

    policies = entry_point_names(POLICY_GROUP)
    for name, target, dist in policies:
        where = f"plug-in {name!r} = {target!r} (package {dist}, group {POLICY_GROUP})"
        if name in POLICIES and ("", name) not in PLUGINS:
            PLUGIN_ERRORS["policy"].append(f"{where}: shadows the built-in policy {name!r}; "
                                           "rename it")
        elif _claimed_once("policy", where, (name, target, dist), policies):
            POLICIES[name] = target
            PLUGINS.add(("", name))
    solvers = entry_point_names(SOLVER_GROUP)
    for full, target, dist in solvers:
        where = f"plug-in {full!r} = {target!r} (package {dist}, group {SOLVER_GROUP})"
        family, sep, name = full.partition("/")
        if not sep or not family or not name:
            PLUGIN_ERRORS["solver"].append(f"{where}: expected the name FAMILY/NAME")
        elif family not in SOLVERS:
            PLUGIN_ERRORS["solver"].append(f"{where}: unknown problem family {family!r}; "
                                           f"known: {', '.join(sorted(SOLVERS))}")
        elif name in SOLVERS[family] and (family, name) not in PLUGINS:
            PLUGIN_ERRORS["solver"].append(f"{where}: shadows the built-in solver {name!r} "
                                           f"of {family}; rename it")
        elif _claimed_once("solver", where, (full, target, dist), solvers):
            SOLVERS[family][name] = target
            PLUGINS.add((family, name))


def _claimed_once(kind: str, where: str, entry: tuple[str, str, str],
                  entries: list[tuple[str, str, str]]) -> bool:
    """Whether the name of ``entry`` (name, target, package) is claimed by no other entry
    point of ``entries``; else record in :data:`PLUGIN_ERRORS` that ``where`` shares it,
    naming the others."""
    others = [f"{t!r} (package {d})" for n, t, d in entries if n == entry[0] and
              (n, t, d) != entry]
    if not others:
        return True
    PLUGIN_ERRORS[kind].append(f"{where}: the name is also claimed by {', '.join(others)}; "
                               "uninstall or rename one")
    return False


def plugin_error(kind: str) -> str | None:
    """Why an installed package's entry point of ``kind`` (``"solver"`` or ``"policy"``)
    was refused (one line naming the first plug-in); None when none was."""
    _plugins()
    errors = PLUGIN_ERRORS[kind]
    if not errors:
        return None
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return errors[0] + more


def check_plugins(kind: str) -> None:
    """Raise ValueError (one line naming the plug-in) when an installed package's entry
    point of ``kind`` (``"solver"`` or ``"policy"``) was refused."""
    error = plugin_error(kind)
    if error is not None:
        raise ValueError(error)


def is_foreign(family: str, name: str) -> bool:
    """Whether the solver ``name`` of ``family`` (``family`` = ``""``: the policy
    ``name``) is code the project does not control: a user's ``MODULE:NAME`` or an
    installed package's entry point."""
    from sim.plugins import is_reference

    if is_reference(name):
        return True
    check_plugins("solver" if family else "policy")
    return (family, name) in PLUGINS


#: seconds a foreign policy's import and factory call may take in the sandbox worker
#: when the caller gives no limit (:func:`foreign_policy_spec`)
LOAD_SECONDS = 60.0


def policy_spec(name: str, **options: Any) -> PolicySpec:
    """Resolve the policy ``name`` (registered, or a user's ``MODULE:FACTORY``) with
    ``options`` into a :class:`sim.batch.policy.PolicySpec`, once, at the edge; every layer
    below takes the spec (or the policy it builds), never the name.

    A foreign policy (:func:`is_foreign`) is resolved by :func:`foreign_policy_spec`
    (its module imported and its factory called in the sandbox worker, within
    :data:`LOAD_SECONDS`), except inside that worker, where it is imported directly.

    Raises ValueError on an unknown name, or naming an option the policy does not take.
    """
    from sim.batch.policy import PolicySpec
    from sim.sandbox import in_worker

    if not in_worker() and is_foreign("", name):
        return foreign_policy_spec(name, options)
    factory = policy_factory(name)
    params = inspect.signature(factory).parameters
    accepted = None if any(p.kind is p.VAR_KEYWORD for p in params.values()) \
        else frozenset(params)
    defaults = tuple((p.name, p.default) for p in params.values()
                     if p.default is not p.empty and p.kind is not p.VAR_KEYWORD)
    return PolicySpec(name, factory, (), accepted, defaults).with_options(**options)


@dataclass(frozen=True)
class ForeignFactory:
    """The factory of a foreign policy ``name`` as the process that resolved it holds it:
    it never imported the module. Calling it imports the module here and builds the
    policy (what a Python caller that runs the policy in its own process asks for); the
    command line never calls it, it runs the policy in the sandbox worker by name."""

    name: str

    def __call__(self, **options: Any) -> Any:
        return policy_factory(self.name)(**options)


def is_foreign_spec(spec: PolicySpec) -> bool:
    """Whether ``spec`` was resolved by :func:`foreign_policy_spec` (its code was never
    imported in this process)."""
    return isinstance(spec.factory, ForeignFactory)


def _module_of(name: str) -> str:
    """The module a foreign policy ``name`` lives in (its reference's or its entry
    point's), for messages."""
    target = name if ":" in name else POLICIES.get(name, name)
    return target.partition(":")[0]


def foreign_policy_spec(name: str, options: dict[str, Any] | None = None, *,
                        seconds: float | None = LOAD_SECONDS) -> PolicySpec:
    """The :class:`sim.batch.policy.PolicySpec` of a foreign policy ``name`` (a user's
    ``MODULE:FACTORY`` or an installed package's entry point) with ``options``, learnt
    from the sandbox worker (:mod:`sim.sandbox`): it imports the module, calls the factory
    with ``options`` (so a bad option value is refused here) and answers with the options
    the factory takes and their defaults. Nothing of the policy's code runs in this
    process, and its factory is a :class:`ForeignFactory`.

    Parameters
    ----------
    seconds : float, optional
        Wall-clock seconds the import and the factory call may take before the worker is
        killed (None: no limit).

    Raises
    ------
    ValueError
        One line naming the policy and its module: it does not import, names no callable,
        takes no such option, builds no policy, or its worker raised, crashed, exited,
        ran out of memory or ran past ``seconds``.
    """
    from sim import sandbox
    from sim.batch.policy import PolicySpec

    what = f"policy {name!r} (module {_module_of(name)!r}, import and factory)"
    info = sandbox.call("sim.registry:describe_policy", (name, dict(options or {})),
                        seconds=seconds, what=what)
    if not isinstance(info, dict) or "error" in info:
        raise ValueError(str(info.get("error") if isinstance(info, dict) else info))
    accepted = info["accepted"]
    spec = PolicySpec(name, ForeignFactory(name), (),
                      None if accepted is None else frozenset(accepted),
                      tuple((k, v) for k, v in info["defaults"]))
    return spec.with_options(**dict(options or {}))


def describe_policy(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """Run in the sandbox worker for :func:`foreign_policy_spec`: resolve the policy
    ``name``, build it once with ``options``, and answer in plain data: ``accepted``
    (sorted option names, or None for any) and ``defaults`` (name, value pairs, a value
    that is not JSON data as its ``repr``), or ``error`` (one line) when it does not
    resolve or build."""
    import json

    try:
        spec = policy_spec(name, **options)
    except (ValueError, TypeError) as exc:
        return {"error": " ".join(str(exc).split())[:500] or type(exc).__name__}
    try:
        spec.build()
    except (ValueError, TypeError) as exc:
        text = " ".join(str(exc).split())[:500] or type(exc).__name__
        return {"error": text if repr(name) in text else f"policy {name!r}: {text}"}

    def plain(v: Any) -> Any:
        try:
            return json.loads(json.dumps(v))
        except (TypeError, ValueError, RecursionError):
            return repr(v)[:200]

    return {"accepted": None if spec.accepted is None else sorted(spec.accepted),
            "defaults": [(str(k), plain(v)) for k, v in spec.defaults]}


def check_policy(spec: PolicySpec, *, seconds: float | None = LOAD_SECONDS) -> None:
    """Build ``spec`` once to check its option values before a run: here for the
    project's own policy, in the sandbox worker (within ``seconds``) for a foreign one.
    ValueError naming the policy otherwise."""
    if is_foreign_spec(spec):
        foreign_policy_spec(spec.name, dict(spec.options), seconds=seconds)
    else:
        spec.build()


def policy_options(name: str) -> set[str] | None:
    """Keyword options the policy ``name`` takes (None: any)."""
    accepted = policy_spec(name).accepted
    return None if accepted is None else set(accepted)


def make_policy(name: str, **options: Any) -> Any:
    """Instantiate the policy registered as ``name`` with ``options``
    (``policy_spec(name, **options).build()``).

    Raises ValueError naming the option when the policy does not take it.
    """
    return policy_spec(name, **options).build()


#: each family's :class:`sim.problems.Family`, built on first use (:func:`problem_family`)
_FAMILIES: dict[str, Family] = {}


def problem_family(what: Any, source: str | None = None) -> Family:
    """Resolve a problem family once, at the edge: ``what`` is a parsed problem file (its
    ``"problem"`` field names the family; ``source`` names the file in messages) or, with
    ``source`` None, a family's name. Every layer below takes the returned
    :class:`sim.problems.Family`, never the name.

    Raises ValueError in one line: for a file, naming ``source`` and the field
    ``'problem'`` (missing, or unknown with the closest names, or the family whose fields
    the file has); for a name, naming the known families.
    """
    from sim.names import did_you_mean

    if source is None:
        if not isinstance(what, str) or what not in SOLVERS:
            raise ValueError(f"unknown problem family {what!r}; "
                             f"{did_you_mean(what, SOLVERS)}known: {sorted(SOLVERS)}")
        return _family(what)
    from sim.problems.fields import short

    if not isinstance(what, dict):
        raise ValueError(f"{source}: the problem must be a JSON object, got "
                         f"{type(what).__name__}")
    if "problem" not in what:
        like = family_like(what) if source != "<guess>" else None
        raise ValueError(f"{source}: missing field 'problem' (one of {sorted(PROBLEM_LOADERS)})"
                         + (f"; the fields are those of a {like!r} problem" if like else ""))
    name = what["problem"]
    if not isinstance(name, str) or name not in PROBLEM_LOADERS:
        raise ValueError(f"{source}: field 'problem' = {short(name)} is unknown; "
                         f"{did_you_mean(name, PROBLEM_LOADERS)}known: "
                         f"{sorted(PROBLEM_LOADERS)}")
    return _family(name)


def _family(name: str) -> Family:
    """The one :class:`sim.problems.Family` of the known family ``name`` (built once)."""
    found = _FAMILIES.get(name)
    if found is None:
        from models.mip import ILP_SOLVERS
        from sim import problems

        found = _FAMILIES[name] = Family(
            name, problems.MODULES[name], PROBLEM_LOADERS[name], problems.sense(name),
            nonnegative=name in problems.NONNEGATIVE, integral=name in problems.INTEGRAL,
            solvers=MappingProxyType(SOLVERS[name]), default_solver=DEFAULT_SOLVERS.get(name),
            ilp=ILP_SOLVERS.get(name), plugins=frozenset(n for f, n in PLUGINS if f == name),
            refused=plugin_error("solver"))
    return found


def load(data: Any, source: str = "<json>") -> tuple[Family, Any]:
    """``(family, problem)`` of a parsed problem file: its family resolved once
    (:func:`problem_family`) and its problem built. Raises ValueError naming ``source``
    and the field; a file whose fields are those of another family than its
    ``"problem"`` field names says which."""
    family = problem_family(data, source)
    try:
        return family, family.load(data, source=source)
    except ValueError as exc:
        like = family_like(data, exclude=family.name) if source != "<guess>" else None
        if like is None:
            raise
        raise ValueError(f"{exc}; the fields are those of a {like!r} problem, not of the "
                         f"{family.name!r} its field 'problem' names") from None


def has_solver(family: str, name: str) -> bool:
    """Whether ``name`` is a registered solver of ``family`` or a valid combination of
    its solvers (:meth:`sim.problems.Family.has_solver`)."""
    check_plugins("solver")
    return family in SOLVERS and problem_family(family).has_solver(name)


def solver(family: str, name: str) -> Callable[..., Any]:
    """Return the ``solve`` function registered as ``name`` for problem ``family``, a
    combination of its solvers (``A+B``, :data:`COMBINATION`), or a user's
    ``MODULE:FUNCTION`` (:meth:`sim.problems.Family.solver`)."""
    from sim.plugins import is_reference, load_reference

    if not isinstance(name, str):
        raise ValueError(f"solver must be a solver's name (a string), got {name!r}")
    if is_reference(name):
        return load_reference(name, what="solver")
    check_plugins("solver")
    if family not in SOLVERS:
        raise ValueError(f"unknown problem family {family!r}; known: {sorted(SOLVERS)}")
    return problem_family(family).solver(name)


def load_problem(data: dict[str, Any], source: str = "<json>") -> tuple[str, Any]:
    """Build a problem object from a parsed JSON dictionary (:func:`load`).

    Returns ``(family name, problem)``. Raises ValueError naming ``source`` and the field
    when the ``"problem"`` field is missing or unknown.
    """
    family, problem = load(data, source)
    return family.name, problem


def family_like(data: dict[str, Any], exclude: str | None = None) -> str | None:
    """The problem family (other than ``exclude``) whose loader accepts ``data`` once
    its ``"problem"`` field names that family; None when no other family does."""
    for family in sorted(PROBLEM_LOADERS):
        if family == exclude:
            continue
        try:
            load({**data, "problem": family}, source="<guess>")
        except (ValueError, TypeError, KeyError, RecursionError):
            continue
        return family
    return None


def policy_config(name: str, **options: Any) -> dict[str, Any]:
    """The full configuration of the policy ``name`` built with ``options``: every
    parameter of its factory with its default, ``options`` applied (for the records
    of a run: SF, AWT, order, alphas, time limits...). Raises ValueError like
    :func:`make_policy` on an unknown option."""
    spec = policy_spec(name, **options)
    config = {"policy": name, **dict(spec.defaults), **options}
    return config

# memory-feasible gang schedule (spec 3.8 M7)
PROBLEM_LOADERS["gang_schedule"] = "sim.problems.gang_schedule:from_dict"
SOLVERS["gang_schedule"] = {
    "cpsat": "models.gang_schedule:solve_cpsat",
    "ilp": "models.gang_schedule:solve_ilp",
    "brute": "models.gang_schedule:solve_brute",
    "coloring": "heuristics.gang_schedule:coloring",
}


#: the exact solver ``schedsearch solve FILE`` runs when no solver is named, chosen per
#: family by ``python -m sim.experiments.engine.mip_bench`` (CP-SAT against the ILP on
#: CBC, HiGHS and SCIP; the engine report gives the figures and the reasons): the grouping
#: ILP on CBC (it proves what CP-SAT proves, about 10x faster); CP-SAT where it proves
#: the most at the largest sizes (insertion, gang, slots, task mapping) or ties there
#: (selection); column generation for epochs (``colgen``, at 8b995c3: 94 of 110 of the
#: published vector-packing classes proved in 15 s against CP-SAT's 45, 20-250 jobs,
#: ``python -m sim.experiments.engine.vbp_bench``); the portfolio for offline response;
#: exhaustive placement
DEFAULT_SOLVERS: dict[str, str] = {
    "slack_insertion": "cpsat",
    "grouping": "exact-ilp",
    "kresource_epochs": "colgen",
    "kresource_selection": "cpsat",
    "kresource_response": "portfolio",
    "task_mapping": "cpsat",
    "gang_schedule": "cpsat",
    "slot_assignment": "cpsat",
    "slot_placement": "exhaustive",
}


def default_solver(family: str) -> str:
    """The name of ``family``'s default exact solver (:data:`DEFAULT_SOLVERS`,
    :attr:`sim.problems.Family.default_solver`)."""
    if family not in DEFAULT_SOLVERS:
        raise ValueError(f"unknown problem family {family!r}; known: {sorted(SOLVERS)}")
    return problem_family(family).default_solver


_plugins()  # after DEFAULT_SOLVERS: an installed package never changes a default
