"""Source stand-ins: the student's functions as the checks that read source see them.

For the checks that read a function's source (``find_forbidden_calls``, ``inspect.getsource``),
:func:`standins` builds, from the student's code as text, function objects whose code object is
compiled (never run: every body starts with ``raise``) and whose globals describe the student's
imports. :class:`autograder.proxy.Proxy` wraps them (``__wrapped__``).
"""

from __future__ import annotations

import ast
import linecache
import types

from helpers.checks import reach, textreach


class _Origin:
    """What a name imported by the student stands for: only its module's name."""

    def __init__(self, module: str):
        self.__module__ = module


class StandIns(dict):
    """``{name: stand-in}`` for the student's top-level ``def``s, and :meth:`for_name` for any graded name."""

    def __init__(self, globs: dict):
        super().__init__()
        self.globs = globs

    def for_name(self, name: str) -> types.FunctionType:
        """The stand-in of ``name``: its ``def``'s, or one without a body of its own when the text binds the
        name some other way (``f = make()``, a decorator's wrapper, ``exec``), whose scan reads what the
        name reaches in the student's text (:class:`helpers.checks.textreach.ModuleText`)."""
        if name in self:
            return self[name]
        code = compile(f"def _standin(*args, **kwargs):\n    raise RuntimeError('stand-in: never run')\n",
                       f"<stand-in {name}>", "exec", dont_inherit=True)
        body = next(const for const in code.co_consts if isinstance(const, types.CodeType))
        return types.FunctionType(body.replace(co_name=name), self.globs, name)


class _RaiseFirst(ast.NodeTransformer):
    def _guard(self, node):
        self.generic_visit(node)
        guard = ast.Raise(exc=ast.Call(func=ast.Name("RuntimeError", ast.Load()),
                                       args=[ast.Constant("stand-in: never run")], keywords=[]), cause=None)
        node.body.insert(0, ast.copy_location(guard, node.body[0]))
        node.decorator_list = []
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _guard


def standins(sources: list[str], tag: str) -> tuple[StandIns, list[str]]:
    """``({name: function}, linecache keys)`` for the student's top-level ``def``s.

    Each function's code object is compiled from the student's text with a
    ``raise`` placed before its body, so calling it can never run student
    code; its ``__globals__`` maps imported names to module stand-ins and
    holds the whole text (``textreach.SOURCES_KEY``: the scan follows what the
    graded name reaches in it). The text is registered in :mod:`linecache`
    (remove the returned keys later).
    """
    globs: dict = {"__name__": "__main__", "__builtins__": {"RuntimeError": RuntimeError},
                   textreach.SOURCES_KEY: tuple(sources)}
    functions = StandIns(globs)
    keys = []
    for index, source in enumerate(sources):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        globs[alias.asname] = types.ModuleType(alias.name)
                    else:
                        top = alias.name.split(".")[0]
                        globs[top] = types.ModuleType(top)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        globs[alias.asname or alias.name] = _Origin(f"{node.module}.{alias.name}")
        imported = {name for name, value in globs.items() if isinstance(value, types.ModuleType)}
        for name, seen in reach.module_level_reached(tree, imported).items():
            globs[name] = reach.Reached(seen)
        filename = f"<student {tag} cell {index + 1}>"
        try:
            code = compile(ast.fix_missing_locations(_RaiseFirst().visit(tree)), filename, "exec",
                           dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
            continue
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        keys.append(filename)
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for const in code.co_consts:
            if isinstance(const, types.CodeType) and const.co_name.isidentifier():
                if const.co_name in defined:  # (a set, built once: 25,000 defs cost 62 s of the judge's CPU)
                    functions[const.co_name] = types.FunctionType(const, globs, const.co_name)
    for name, func in functions.items():
        globs[name] = func
    return functions, keys
