"""Samplers reached by a name computed at run time, a part of the forbidden-call scan
(:func:`helpers.checks.forbidden.find_forbidden_calls`).

The scan reads attribute chains (``np.random.laplace``) and resolves global names. A module's attribute
fetched through a name built at run time hides from both: ``_T = {"g": getattr(getattr(np, "ran" +
"dom"), "default" + "_rng")}`` at module level, then ``_T["g"](seed)`` in the function (attacker,
session 12). Closed as a class: any ``getattr``, ``vars``, ``__dict__``, ``__getattribute__``,
``importlib.import_module`` or ``__import__`` whose object is a module (or whose module name is not
a literal) and whose name is not a literal string is a finding, in the function and in the
module-level assignments of the names it uses; and a global value that *holds* a forbidden object
(a dict, list, tuple, namespace, partial or instance) is reported with what it holds.
"""

from __future__ import annotations

import ast
import functools
import types
from typing import Any, Callable

#: Calls that fetch an attribute or a module by a name: (callee's last name, index of the name argument).
_BY_NAME = {"getattr": 1, "vars": None, "__getattribute__": 0, "import_module": 0, "__import__": 0,
            "attrgetter": 0}


def literal_names(node: ast.AST | None) -> list[str] | None:
    """The names a literal name expression can take: ``"log"``, or ``"log1p" if precise else "log"``
    (a reviewer's correct sampler, session 13); None when some branch is computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = literal_names(node.body), literal_names(node.orelse)
        return None if body is None or orelse is None else body + orelse
    return None


def _literal(node: ast.AST | None) -> bool:
    return literal_names(node) is not None


def callee(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dynamic_accesses(tree: ast.AST, is_module: Callable[[ast.AST], bool],
                     is_class: Callable[[str], bool] = lambda name: False) -> list[str]:
    """Descriptions of the attribute or module fetches by a computed name in ``tree``.

    ``is_module(node)``: whether an expression stands for a module (a name bound by ``import``, an
    attribute of one, or such a fetch itself); ``is_class(name)``: whether a name is one of the
    student's classes. ``getattr(obj, name)``, ``vars(obj)``, ``obj.__dict__`` and
    ``obj.__getattribute__(name)`` with a name that is not a literal string are allowed on ``self``,
    ``cls`` and the student's own classes only (``getattr(Keep, field)``); on anything else, which may
    hold a module (``getattr((lambda: np)(), "ran" + "dom")``, a local ``m = np``), they are findings,
    as is any ``import_module``/``__import__``/``attrgetter`` whose argument is not a literal.
    """
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}

    def own(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and not is_module(node) and (
            node.id in ("self", "cls") or node.id in classes or is_class(node.id))

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "__dict__" and not own(node.value):
            found.append(ast.unparse(node)[:80])
        if not isinstance(node, ast.Call):
            continue
        name = callee(node)
        if name not in _BY_NAME:
            continue
        index = _BY_NAME[name]
        if name in ("import_module", "__import__", "attrgetter"):
            if not (node.args and _literal(node.args[0])):
                found.append(ast.unparse(node)[:80])
        elif name == "vars":
            if node.args and not own(node.args[0]):
                found.append(ast.unparse(node)[:80])
        elif name == "__getattribute__":
            if isinstance(node.func, ast.Attribute) and not own(node.func.value) and not (
                    node.args and _literal(node.args[0])):
                found.append(ast.unparse(node)[:80])
        elif len(node.args) > index and not own(node.args[0]) and not _literal(node.args[index]):
            found.append(ast.unparse(node)[:80])
    return found


def module_checker(modules: Callable[[str], bool]) -> Callable[[ast.AST], bool]:
    """``is_module`` for :func:`dynamic_accesses`, given whether a bare name stands for a module."""

    def is_module(node: ast.AST) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            return modules(node.id)
        if isinstance(node, ast.Call) and callee(node) in ("getattr", "import_module", "__import__"):
            return not node.args or is_module(node.args[0]) or callee(node) != "getattr"
        return False

    return is_module


class Reached:
    """A module-level name bound by a fetch through a computed name (what a source stand-in holds for it)."""

    def __init__(self, seen: str):
        self.seen = seen


def module_level_reached(tree: ast.Module, modules: set[str]) -> dict[str, str]:
    """``{name: what was seen}`` for the names bound by module-level statements that fetch a module's
    attribute through a computed name (:func:`dynamic_accesses`): assignments, and any other statement
    but a function definition (a class body, an ``if``, a ``for``, a ``with``: every name it binds);
    ``modules``: the names bound by the module's imports. A function is scanned when it is called."""
    is_module = module_checker(modules.__contains__)
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        seen = dynamic_accesses(node, is_module)
        if not seen:
            continue
        for leaf in ast.walk(node):
            if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Store):
                out[leaf.id] = seen[0]
            elif isinstance(leaf, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                out[leaf.name] = seen[0]
    return out


def held(obj: Any, judge: Callable[[Any], str | None], depth: int = 3, _budget: list | None = None,
         into: Callable[[type], bool] | None = None) -> str | None:
    """What forbidden object ``obj`` holds (``judge(x)`` names a forbidden ``x``, else None), looking
    through dicts, lists, tuples, sets, namespaces, partials, bound methods, static and class methods,
    properties, instances' attributes and the classes ``into`` accepts (the student's: a class nested
    in a class hid numpy's generator, session 13), ``depth`` levels and at most 2,000 objects deep;
    never into modules."""
    budget = _budget if _budget is not None else [2000]
    if depth < 0 or budget[0] <= 0 or isinstance(obj, (types.ModuleType, str, bytes, int, float, bool)) or (
            isinstance(obj, type) and not (into and into(obj))):
        return None
    budget[0] -= 1
    what = judge(obj)
    if what:
        return what
    if isinstance(obj, type):
        items = [value for key, value in list(vars(obj).items())[:500] if key not in ("__dict__", "__weakref__")]
    elif isinstance(obj, dict):
        items = list(obj.values())[:500]
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = list(obj)[:500]
    elif isinstance(obj, functools.partial):
        items = [obj.func, *obj.args, *obj.keywords.values()]
    elif isinstance(obj, types.MethodType):
        items = [obj.__func__, obj.__self__]
    elif isinstance(obj, (staticmethod, classmethod)):
        items = [obj.__func__]
    elif isinstance(obj, property):
        items = [obj.fget, obj.fset]
    elif isinstance(obj, types.FunctionType):
        items = [*(obj.__defaults__ or ()), *(c.cell_contents for c in (obj.__closure__ or ()) if _filled(c))]
    else:
        attributes = getattr(obj, "__dict__", None)
        items = list(attributes.values())[:500] if isinstance(attributes, dict) else []
    for item in items:
        what = held(item, judge, depth - 1, budget, into)
        if what:
            return what
    return None


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
