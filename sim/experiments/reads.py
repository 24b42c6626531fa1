"""Which options a study's figure reads, derived from the figure's code.

A study's command line takes options (``--seeds``, ``--mfreq``, ...) that only some of
its figures read; an option the chosen figure does not read would otherwise be accepted,
recorded in the results and ignored. :func:`reads` lists, from the source of the
function that runs a figure, the names it reads of one parameter (the study's
configuration object or option dict), following that parameter into every function it
is passed to; the study's ``main`` refuses the options outside that list
(:meth:`sim.argparser.Parser.refuse_unread`) before anything is written.

The analysis is static and conservative in one direction only: a name read on some path
(inside an ``if``) counts as read, and a parameter recorded whole (a value of a dict,
list or tuple display, a key computed at run time, ``**param``) reads
:data:`EVERYTHING`. A parameter used in a way it cannot follow (assigned to another
name, returned, passed to a builtin or to code without source) is a :class:`ReadsError`,
so a figure whose reads cannot be listed fails its study's tests instead of refusing
options it reads.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import textwrap
from collections.abc import Callable
from typing import Any

#: what :func:`reads` returns among the names when the parameter is read whole
EVERYTHING = "*"


class ReadsError(ValueError):
    """The code uses the parameter in a way :func:`reads` cannot follow."""


def reads(fn: Callable[..., Any], param: str, owner: type | None = None) -> frozenset[str]:
    """The names ``fn`` reads of its parameter ``param``.

    Parameters
    ----------
    fn
        A Python function (not a lambda) whose source is available.
    param
        The name of the parameter followed.
    owner
        The class of the parameter's value: ``param.method(...)`` and properties of
        ``owner`` are followed into their code (as ``self``) instead of counted.

    Returns
    -------
    frozenset of str
        The attributes (``param.x``) and constant keys (``param["x"]``,
        ``param.get("x")``) read, by ``fn`` and by every function it passes ``param`` to.

    Raises
    ------
    ReadsError
        ``param`` is used in a way that cannot be followed.
    """
    return _reads(fn, param, owner, frozenset())


def _reads(fn: Callable[..., Any], param: str, owner: type | None,
           active: frozenset[tuple[Any, str]]) -> frozenset[str]:
    if (fn, param) in active:  # recursion: what it reads is counted on the way in
        return frozenset()
    return _cached(fn, param, owner, active | {(fn, param)})


@functools.cache
def _cached(fn: Callable[..., Any], param: str, owner: type | None,
            active: frozenset[tuple[Any, str]]) -> frozenset[str]:
    node = _function_node(fn)
    parents = {child: parent for parent in ast.walk(node)
               for child in ast.iter_child_nodes(parent)}
    found: set[str] = set()
    for name in ast.walk(node):
        if isinstance(name, ast.Name) and name.id == param and isinstance(name.ctx, ast.Load):
            found |= _use(fn, node, name, parents, owner, active)
    return frozenset(found)


def _use(fn: Callable[..., Any], tree: ast.AST, name: ast.Name, parents: dict,
         owner: type | None, active: frozenset[tuple[Any, str]]) -> frozenset[str]:
    """What one use of the parameter (``name``) reads."""
    parent = parents.get(name)
    where = f"{fn.__module__}.{fn.__qualname__}"
    if isinstance(parent, ast.Attribute):
        call = parents.get(parent)
        member = inspect.getattr_static(owner, parent.attr, None) if owner else None
        if isinstance(member, property):
            return _reads(member.fget, "self", owner, active)
        if inspect.isfunction(member) and isinstance(call, ast.Call) and call.func is parent:
            return _reads(member, "self", owner, active)
        if parent.attr == "get" and isinstance(call, ast.Call) and call.args \
                and isinstance(call.args[0], ast.Constant):
            return frozenset({call.args[0].value})
        return frozenset({parent.attr})
    if isinstance(parent, ast.Subscript) and parent.value is name:
        key = parent.slice
        return frozenset({key.value if isinstance(key, ast.Constant) else EVERYTHING})
    if isinstance(parent, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Starred)) or (
            isinstance(parent, ast.keyword) and parent.arg is None):
        return frozenset({EVERYTHING})
    if isinstance(parent, ast.Call) and name in parent.args:
        callee = _callee(fn, tree, parent.func, where)
        try:
            bound = inspect.signature(callee).bind_partial(*parent.args)
        except TypeError as exc:
            raise ReadsError(f"{where}: cannot match a call's arguments ({exc})") from None
        inner = next(k for k, v in bound.arguments.items() if v is name)
        return _reads(callee, inner, owner, active)
    if isinstance(parent, ast.keyword) and isinstance(parents.get(parent), ast.Call):
        callee = _callee(fn, tree, parents[parent].func, where)
        return _reads(callee, parent.arg, owner, active)
    raise ReadsError(f"{where}: uses {name.id!r} in a way its reads cannot be followed "
                     f"(line {name.lineno} of its source)")


def _callee(fn: Callable[..., Any], tree: ast.AST, func: ast.expr,
            where: str) -> Callable[..., Any]:
    """The Python function a call's ``func`` expression names (a module global, a name
    imported inside ``fn``, or ``module.name``)."""
    target: Any = None
    if isinstance(func, ast.Name):
        target = _bound(fn, tree, func.id)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        base = _bound(fn, tree, func.value.id)
        target = getattr(base, func.attr, None) if inspect.ismodule(base) else None
    if not inspect.isfunction(target):
        raise ReadsError(f"{where}: passes its parameter to {ast.unparse(func)}, whose "
                         "reads cannot be followed")
    return target


def _bound(fn: Callable[..., Any], tree: ast.AST, name: str) -> Any:
    """What ``name`` is in ``fn`` (whose ``def`` is ``tree``): the object a ``from M
    import N`` inside it binds, else its module's global. Only the module of that one
    name is imported: importing every module a figure may import would load packages
    that must not share a process (ortools and highspy)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return getattr(importlib.import_module(node.module), alias.name, None)
    return fn.__globals__.get(name)


def _function_node(fn: Callable[..., Any]) -> ast.FunctionDef:
    """The ``def`` of ``fn`` in its source."""
    if not inspect.isfunction(fn) or fn.__name__ == "<lambda>":
        raise ReadsError(f"{fn!r}: not a named Python function")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise ReadsError(f"{fn.__qualname__}: no source ({exc})") from None
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name == fn.__name__:
            return node
    raise ReadsError(f"{fn.__qualname__}: no def in its source")
