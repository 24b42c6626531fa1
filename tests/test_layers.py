"""The layers of the code base, read from the source with ``ast`` (nothing is imported).

Dependencies run one way: ``instances`` (data and generators) -> ``sim`` core and its
simulators -> ``heuristics`` -> ``models`` -> sweeps, experiments and the CLI. Checked here:
``instances`` imports nothing of ``sim``, ``heuristics`` or ``models``, and ``heuristics``
nothing of ``models``, counting every import (module level and inside functions); and no
two modules import each other in a circle, neither through their module-level imports nor
through any import at all (one inside a function, or under ``if TYPE_CHECKING:``, still
ties the two modules together).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("instances", "sim", "heuristics", "models")


@dataclass(frozen=True)
class Import:
    """One import statement: the importing module, the module it names, its line, and
    whether it runs when the importing module is imported (module level, not inside a
    function or an ``if TYPE_CHECKING:`` block)."""

    source: str
    target: str
    line: int
    top_level: bool


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            out[_module_name(path)] = path
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports_of(name: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def add(target: str, node: ast.stmt, top: bool) -> None:
        found.append(Import(name, target, node.lineno, top))

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, top)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:  # relative: from the package, up level - 1
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    add(sub if sub in MODULES else base, child, top)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                visit(child, False)  # never runs; still an import for the layer rules
            else:
                visit(child, top)

    visit(tree, True)
    return found


@functools.cache
def _all_imports() -> tuple[Import, ...]:
    """Every import of every module (parsed at the first test that asks, not at collection:
    each xdist worker collects this file)."""
    return tuple(imp for name, path in MODULES.items() for imp in _imports_of(name, path))


def _top(module: str) -> str:
    return module.partition(".")[0]


def _violations(layer: str, forbidden: tuple[str, ...]) -> list[str]:
    return [f"{imp.source} (line {imp.line}) imports {imp.target}"
            + ("" if imp.top_level else " inside a function") for imp in _all_imports()
            if _top(imp.source) == layer and _top(imp.target) in forbidden]


def test_every_package_is_parsed() -> None:
    for pkg in PACKAGES:
        assert pkg in MODULES
    assert "sim.batch.machine" in MODULES and "heuristics.backfill" in MODULES
    # the walk sees function-local imports as such (the CLI imports its commands' code late)
    assert any(i.source == "sim.cli.simulate" and not i.top_level for i in _all_imports())
    assert any(i.source == "sim.cli" and i.top_level for i in _all_imports())


def test_instances_import_no_simulator_heuristic_or_model() -> None:
    assert _violations("instances", ("sim", "heuristics", "models")) == []


def test_heuristics_never_import_models() -> None:
    assert _violations("heuristics", ("models",)) == []


def _graph(every_import: bool = False) -> nx.DiGraph:
    """The import graph: module-level imports, or ``every_import`` (inside functions and
    ``if TYPE_CHECKING:`` blocks too, leaving out a module's import of its own package,
    which Python has run before the module: a package's ``__init__`` may import its
    modules inside a function); each edge with the line of its first import."""
    g = nx.DiGraph()
    g.add_nodes_from(MODULES)
    for imp in _all_imports():
        if every_import and imp.source.startswith(imp.target + "."):
            continue
        if (imp.top_level or every_import) and imp.target in MODULES \
                and imp.target != imp.source and not g.has_edge(imp.source, imp.target):
            g.add_edge(imp.source, imp.target, line=imp.line)
    return g


def _circles(g: nx.DiGraph) -> list[str]:
    """One circle per strongly connected component of more than one module, each step
    with the line of its import."""
    out = []
    for scc in nx.strongly_connected_components(g):
        if len(scc) > 1:
            cycle = nx.find_cycle(g.subgraph(scc))
            out.append(" -> ".join(f"{a} (line {g.edges[a, b]['line']})" for a, b in cycle)
                       + f" -> {cycle[0][0]}")
    return sorted(out)


def test_no_import_circle_among_module_level_imports() -> None:
    circles = _circles(_graph())
    assert circles == [], "import circles:\n" + "\n".join(circles)


def test_no_import_circle_through_any_import() -> None:
    circles = _circles(_graph(every_import=True))
    assert circles == [], "import circles (counting imports inside functions):\n" + \
        "\n".join(circles)


def test_a_planted_function_level_circle_is_reported() -> None:
    g = _graph(every_import=True)
    assert g.has_edge("sim.batch.machine", "sim.batch.fast.run")  # imported in simulate()
    g.add_edge("sim.batch.fast.run", "sim.batch.machine", line=9)
    circles = _circles(g)
    assert len(circles) == 1 and "sim.batch.fast.run (line 9) -> sim.batch.machine" in circles[0]


def test_a_planted_circle_is_reported() -> None:
    g = _graph()
    assert g.has_edge("heuristics.backfill", "sim.batch.planner")
    g.add_edge("sim.batch.planner", "heuristics.backfill", line=7)
    circles = _circles(g)
    assert len(circles) == 1 and "sim.batch.planner (line 7) -> heuristics.backfill" in circles[0]


#: modules below the edge: they receive a resolved policy (``sim.batch.policy.PolicySpec``)
#: or a built policy, never a policy's name (the edge: ``sim.cli``, ``sim.sweep.spec``,
#: ``sim.registry``, the studies under ``sim.experiments``)
BELOW_THE_EDGE = ("instances", "heuristics", "models", "sim.batch", "sim.sweep.cell",
                  "sim.sweep.execute")
#: parameter names that can only hold a policy's name
NAME_PARAMETERS = ("policy_name", "registry_name", "policy_factory_name")
#: Python entry points below the edge's packages that are themselves an edge: each
#: resolves the names it is given once, at its top
EDGE_FUNCTIONS = {
    "sim.batch.env_eval.evaluate": "the Gym evaluation's Python call: its own built-in "
                                   "names resolved once by _resolve",
}


def _below_the_edge(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in BELOW_THE_EDGE)


def _annotation_names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def policy_name_parameters(source: str, module: str = "<module>") -> list[str]:
    """Each function parameter (and dataclass field) of ``source`` that carries a policy
    by name: named like one (:data:`NAME_PARAMETERS`), or named ``policy``/``*_policy``
    and annotated ``str``."""
    found = []

    def named_like_a_policy(arg: str, annotation: ast.expr | None) -> bool:
        policy_like = arg == "policy" or arg.endswith("_policy") or arg == "policies"
        return arg in NAME_PARAMETERS or (policy_like and "str" in _annotation_names(annotation))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if f"{module}.{node.name}" in EDGE_FUNCTIONS:
                continue
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if named_like_a_policy(arg.arg, arg.annotation):
                    found.append(f"{module}.{node.name} (line {node.lineno}): {arg.arg}")
        elif isinstance(node, ast.ClassDef):  # a field holding a name to look up
            for stmt in node.body:  # (``Schedule.policy``, a label for the records, is not)
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                        and stmt.target.id in NAME_PARAMETERS:
                    found.append(f"{module}.{node.name} (line {stmt.lineno}): "
                                 f"{stmt.target.id}")
    return found


def test_no_policy_name_below_the_edge() -> None:
    found = [hit for name, path in MODULES.items() if _below_the_edge(name)
             for hit in policy_name_parameters(path.read_text(encoding="utf-8"), name)]
    assert found == [], "a policy passed by name below the edge:\n" + "\n".join(found)


def test_a_policy_name_in_a_signature_is_found() -> None:
    src = ("def run(workload, policy: str, *, engine='python'): ...\n"
           "def simulate_months(w, policy: 'str | None' = None): ...\n"
           "def build(policy_name): ...\n"
           "class Cell:\n    registry_name: str\n"
           "def fine(policy: PolicySpec, name: str): ...\n")
    assert [h.split(": ")[1] for h in policy_name_parameters(src)] == \
        ["policy", "policy", "policy_name", "registry_name"]


#: modules below the edge for problem families: they receive a resolved family
#: (``sim.problems.Family``, made by ``sim.registry.problem_family`` from a file's
#: ``"problem"`` field), never a family's name (the edge: ``sim.cli``, ``sim.registry``,
#: ``sim.problems``' name-keyed tables and functions, ``sim.sweep.library``, the studies)
FAMILY_BELOW_THE_EDGE = (*BELOW_THE_EDGE, "sim.result", "sim.sweep.bench",
                         "sim.problems.family")
#: parameter names that can only hold a family's name
FAMILY_NAME_PARAMETERS = ("family_name", "problem_name")
#: Python entry points below the edge's packages that are themselves an edge: each
#: resolves the family name it is given once, at its top
FAMILY_EDGE_FUNCTIONS = {
    f"sim.sweep.bench.{f}": "the --library FAMILY option's entry points: the name checked "
                            "against the registry at their top"
    for f in ("library_dir", "library_paths", "write_library_table")
}


def _below(module: str, below: tuple[str, ...]) -> bool:
    return any(module == m or module.startswith(m + ".") for m in below)


def family_name_parameters(source: str, module: str = "<module>") -> list[str]:
    """Each function parameter (and dataclass field) of ``source`` that carries a problem
    family by name: named like one (:data:`FAMILY_NAME_PARAMETERS`), or named
    ``family``/``fam``/``*_family``/``families`` and annotated with ``str`` (a
    ``str | None``, a ``list[str]``, an ``Iterable[str]`` alike)."""
    found = []

    def named_like_a_family(arg: str, annotation: ast.expr | None) -> bool:
        family_like = arg in ("family", "fam", "families") or arg.endswith("_family")
        return arg in FAMILY_NAME_PARAMETERS or (
            family_like and "str" in _annotation_names(annotation))

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if f"{module}.{node.name}" in FAMILY_EDGE_FUNCTIONS:
                continue
            a = node.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if named_like_a_family(arg.arg, arg.annotation):
                    found.append(f"{module}.{node.name} (line {node.lineno}): {arg.arg}")
        elif isinstance(node, ast.ClassDef):  # a field holding a family to look up
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                        and named_like_a_family(stmt.target.id, stmt.annotation):
                    found.append(f"{module}.{node.name} (line {stmt.lineno}): "
                                 f"{stmt.target.id}")
    return found


def test_no_family_name_below_the_edge() -> None:
    found = [hit for name, path in MODULES.items() if _below(name, FAMILY_BELOW_THE_EDGE)
             for hit in family_name_parameters(path.read_text(encoding="utf-8"), name)]
    assert found == [], "a problem family passed by name below the edge:\n" + "\n".join(found)


def test_a_family_name_in_a_signature_is_found() -> None:
    src = ("def run_solver(family: str, name: str, problem): ...\n"
           "def check(families: 'Iterable[str]'): ...\n"
           "def label(family_name): ...\n"
           "class Planned:\n    family: str | None\n"
           "def fine(family: Family, name: str, problem_family: 'Family'): ...\n")
    assert [h.split(": ")[1] for h in family_name_parameters(src)] == \
        ["family", "families", "family_name", "family"]
