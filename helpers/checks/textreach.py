"""What a graded function reaches through the student's text: the forbidden-name scan's rule, read from
the text alone as the grader's judge must (:class:`ModuleText`), and its vocabulary (forbidden module
paths, dynamic code, generator attributes), shared with the in-process view (:mod:`helpers.checks.scan`).
Session 14; issue 35 and session 13's attackers (``tests/power/RESULTS.md``).
"""

from __future__ import annotations

import ast
import bisect
import functools
import inspect
import sys
import types
from typing import Any, Callable

from helpers.checks.passthrough import fallback_callees, passthrough_argument, threaded_parameters
from helpers.checks.reach import dynamic_accesses, literal_names, module_checker


#: Sources of random numbers and samplers, by module path (an OS-seeded generator comes from one of them).
#: Arithmetic is not among them (scipy.special.expit, scipy.stats.norm.ppf: issue 35).
FORBIDDEN_MODULES = ("numpy.random", "random", "helpers", "secrets", "torch", "scipy.stats.sampling",
                     "scipy.stats.qmc", "scipy.stats.bootstrap", "scipy.stats.permutation_test",
                     "scipy.stats.monte_carlo_test", "scipy.sparse.random", "scipy.sparse.rand",
                     "scipy.sparse.random_array", "os.urandom", "os.getrandom", "uuid.uuid1", "uuid.uuid4")
#: What of them may be named: the generator's type (``rng: np.random.Generator``, ``isinstance``), not called.
ALLOWED_PATHS = frozenset({"numpy.random.Generator"})
#: Methods that draw, whatever object they belong to (scipy.stats' ``rvs``, statistics.NormalDist's ``samples``).
SAMPLER_ATTRIBUTES = frozenset({"rvs", "random_state", "samples", "resample"})  # resample: gaussian_kde's draws
#: A generator's insides: reseeding one (``g.bit_generator.state = ...``, the notebook's own ``rng`` seeded
#: from coarse cells of the served draws) or making new ones needs no name of numpy.random.
#: So are numpy.random's constructors, by name, whatever object they are fetched from (a module reached
#: through a call, ``operator.attrgetter("random")(np).default_rng``, is beyond the text).
GENERATOR_ATTRIBUTES = frozenset({"bit_generator", "_bit_generator", "seed_seq", "spawn", "jumped", "default_rng",
                                  "BitGenerator", "MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64", "SeedSequence",
                                  "RandomState", "get_bit_generator", "set_bit_generator", "get_state", "set_state",
                                  "mtrand", "check_random_state", "rng_integers"})
#: Code, modules or namespaces obtained at run time: none of them is needed to draw from ``rng.random``, and
#: each can reach a generator the text does not show (session 13's attackers). Builtins, module paths, and
#: attributes.
DYNAMIC_BUILTINS = frozenset({"exec", "eval", "compile", "__import__", "globals", "locals", "breakpoint",
                              "__builtins__"})
DYNAMIC_PATHS = ("importlib", "sys.modules", "sys._getframe", "types.FunctionType", "types.CodeType",
                 "types.LambdaType", "types.ModuleType", "builtins", "ctypes", "marshal", "runpy", "pickle",
                 "inspect.currentframe", "inspect.stack", "gc")
DYNAMIC_ATTRIBUTES = frozenset({"__getattribute__", "__getattr__", "__globals__", "__code__", "__builtins__", "__closure__", "__subclasses__",
                                "__import__", "__loader__", "__spec__", "f_globals", "f_locals", "f_back",
                                "f_builtins", "gi_frame", "tb_frame"})
COMPUTED_NOTE = ("（按运行时算出的名字取模块或对象的属性 / a module's or an object's attribute fetched by a name "
                 "computed at run time）")
DYNAMIC_NOTE = ("（运行时生成或取得的代码、模块或名字空间：抽样的函数里不允许用 / code, a module or a namespace "
                "obtained at run time: not allowed in a function that draws）")


def _under(path: str, prefixes) -> bool:
    return any(path == p or path.startswith(p + ".") for p in prefixes)


def is_distribution(path: str) -> bool:
    """Whether a dotted path names one of scipy.stats's distribution objects (``scipy.stats.laplace``):
    its quantile and density functions are arithmetic on the served uniforms (the notebooks allow
    ``ppf``); drawing from it is ``.rvs``, a listed sampler (session 14's reviewer: a frozen
    ``scipy.stats.laplace(scale=b).ppf(u)`` lost 3 points)."""
    if not path.startswith("scipy.stats."):
        return False
    try:
        import scipy.stats

        obj: Any = scipy.stats
        for part in path.split(".")[2:]:
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return False
    return isinstance(obj, (scipy.stats.rv_continuous, scipy.stats.rv_discrete))


def module_is_forbidden(path: str) -> bool:
    return _under(path, FORBIDDEN_MODULES)


def path_is_dynamic(path: str) -> bool:
    return _under(path, DYNAMIC_PATHS)


#: Where module hops are followed (:func:`real_path`): the standard library and the course's libraries, imported
#: when a path names them, whatever the judge imported before. Following only what the judge's process happened
#: to hold made a finding depend on what it graded earlier: ``statistics.random.Random(seed)`` was seen only
#: once something had imported ``statistics`` (session 15, fixture batch rows 17/18/25 scored differently alone).
HOP_ROOTS = frozenset(sys.stdlib_module_names) | {"numpy", "scipy"}
#: Never imported to follow a hop: modules that print, open windows or a browser, or start a GUI when imported
#: (the worker's stdout is its channel to the grader). Paths through them stay as written.
_NO_IMPORT = frozenset({"this", "antigravity", "__hello__", "__phello__", "idlelib", "tkinter", "turtle",
                        "turtledemo", "pydoc_data", "ensurepip", "venv", "lib2to3", "test", "readline",
                        "rlcompleter"})


def _module(name: str) -> types.ModuleType | None:
    """The module called ``name`` when it is under :data:`HOP_ROOTS` (imported if need be, its output
    discarded), else None, whatever is in ``sys.modules``."""
    root = name.split(".")[0]
    if root not in HOP_ROOTS or root in _NO_IMPORT or not all(part.isidentifier() for part in name.split(".")):
        return None
    module = sys.modules.get(name)
    if not isinstance(module, types.ModuleType):
        import contextlib
        import importlib
        import io
        import warnings

        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
        except BaseException:  # noqa: BLE001 - not a module (``statistics.random``), or one that fails to import
            return None
    return module if isinstance(module, types.ModuleType) else None


def real_path(path: str) -> str:
    """``path`` with its module hops followed (``scipy.stats._continuous_distns.np.random`` is
    ``numpy.random``, ``statistics.random.Random`` is ``random.Random``) through the modules of
    :data:`HOP_ROOTS`, imported when named: the same answer whatever the judge's process has imported."""
    return _real_path(path)


@functools.lru_cache(maxsize=4096)
def _real_path(path: str) -> str:
    parts = path.split(".")
    for end in range(len(parts), 0, -1):
        module = _module(".".join(parts[:end]))
        if module is not None:
            break
    else:
        return path
    while end < len(parts):
        try:
            nxt = inspect.getattr_static(module, parts[end], None)
        except Exception:  # noqa: BLE001 - an odd module: the path as written
            break
        if not isinstance(nxt, types.ModuleType):
            # a submodule not imported yet is an attribute only once something imports it
            nxt = _module(f"{module.__name__}.{parts[end]}") if nxt is None else None
            if nxt is None:
                break
        module, end = nxt, end + 1
    return ".".join([module.__name__, *parts[end:]])


def judge_path(text: str, path: str, called: bool) -> str | None:
    """The finding for ``text`` (as written) that denotes module path ``path``, or None."""
    private = [part for part in path.split(".") if part.startswith("_") and not part.endswith("__")]
    path = real_path(path)
    if path in ALLOWED_PATHS and not called:
        return None
    if module_is_forbidden(path):
        written = "numpy" + text[2:] if text.startswith("np.") or text == "np" else text
        return text if written == path else f"{text}（即 / i.e. {path}）"
    if path_is_dynamic(path):
        return f"{text}{DYNAMIC_NOTE}"
    if private:  # scipy._lib._util.check_random_state, scipy.stats._continuous_distns.np: no student needs them
        return f"{text}（库的内部模块或名字 {private[0]}，抽样的函数里不允许用 / a library's private module or name, not allowed in a function that draws）"
    return None


def _passes_through(written: str, origins: list[str | None], names: tuple | list = ()) -> bool:
    """Whether every module path a name (with ``names`` after it) may denote is numpy's ``default_rng``
    (no origin: one function's own text, whose imports the in-process view resolves; as written)."""
    if not origins:
        return ".".join([written, *names]) in ("np.random.default_rng", "numpy.random.default_rng")
    return all(origin and real_path(".".join([origin, *names])) == "numpy.random.default_rng" for origin in origins)


def _chain(node: ast.AST) -> tuple[ast.AST, list[str]]:
    """(root, attribute names outward) of ``a.b.c``."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    return node, names[::-1]


def _scope_names(node: ast.AST) -> dict[str, str | None]:
    """Names local to a function or lambda: ``{name: imported module path or None}`` (parameters,
    assignments, imports, nested definitions; not those declared ``global``), without entering
    nested scopes."""
    out: dict[str, str | None] = {}
    args = node.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            out[arg.arg] = None
    declared: set[str] = set()
    stack = list(node.body) if isinstance(node.body, list) else [node.body]
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[child.name] = None
            stack += child.decorator_list
            continue
        if isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(child, (ast.Global, ast.Nonlocal)):
            declared.update(child.names)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            out.update({name: origin for name, origin in _imported(child)})
        elif isinstance(child, ast.Name) and not isinstance(child.ctx, ast.Load):
            out[child.id] = None
        stack += list(ast.iter_child_nodes(child))
    return {name: origin for name, origin in out.items() if name not in declared}


def _imported(node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    if isinstance(node, ast.Import):
        return [(a.asname, a.name) if a.asname else (a.name.split(".")[0], a.name.split(".")[0]) for a in node.names]
    if node.level or not node.module:
        return []
    return [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names if a.name != "*"]


def own_attribute_names(tree: ast.AST) -> set[str]:
    """Names the student's own classes define (methods, class attributes, anywhere in ``tree``, function-local
    classes included: a reviewer's ``class Config: laplace = False``) and attributes assigned
    (``self.laplace = ...``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                for target in ast.walk(item) if isinstance(item, (ast.Assign, ast.AnnAssign)) else ():
                    if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store):
                        names.add(target.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return {name for name in names if not name.startswith("__")}


#: Most bindings a scan may look at (about a second of CPU): a text of 1 MB binding one name 50,000 times
#: and loading it as often would otherwise cost the judge hours; no honest solution comes near.
SCAN_WORK = 2_000_000


class TooComplex(Exception):
    """The text asked more of the scan than :data:`SCAN_WORK`."""


#: Where a stand-in's globals carry the student's cells as text (not an identifier: no student name).
SOURCES_KEY = "<student sources>"


class ModuleText:
    """The student's code cells read as one module, as text (nothing of it runs on the judge's side).

    :meth:`findings` is the rule. From the statements that bind the graded name, every name the
    reached code loads is followed to the module-level statements that bind it (an import, a ``def``,
    a ``class``, an assignment, a ``for``/``with``/``if``/``try``), which are read too: a function's
    body sees the last bindings (it runs when called), code that runs when its statement does (an
    assignment's value, a class body, a decorator, a default) the bindings before it. A module-level
    statement with dynamic code (:data:`DYNAMIC_BUILTINS`...), or calling a function of the text that
    has some, is always read: it can bind any name. Findings: a name or attribute chain denoting
    something of a forbidden module, whatever the alias (``R = np.random``; ``import numpy as xp``;
    ``from numpy import random as r``); ``numpy.random.Generator`` called; a draw method
    (:data:`SAMPLER_ATTRIBUTES`, ``laplace``) not defined by the student's own classes; dynamic code;
    a module attribute fetched by a computed name (:func:`dynamic_accesses`). Annotations, docstrings
    and comments are never read; a default ``rng=rng`` neither (the judged calls pass ``rng``).
    """

    def __init__(self, sources: list[str], threaded: set[tuple[str, str]] | None = None):
        self.statements: list[ast.stmt] = []
        for source in sources:
            try:
                self.statements += ast.parse(source).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
        self.bindings: dict[str, list[tuple[int, str | None, bool]]] = {}
        for pos, stmt in enumerate(self.statements):
            for name, origin, conditional in _bound(stmt):
                self.bindings.setdefault(name, []).append((pos, origin, conditional))
        self.own = own_attribute_names(ast.Module(body=self.statements, type_ignores=[]))
        self.dynamic_functions: set[str] = set()
        self._index: dict[str, tuple[list[int], list[int]]] = {}
        self.work = 0
        #: Whether a name the text does not bind is one of the student's classes (when the text is one
        #: function's source: the caller knows its module).
        self.outer_class: Callable[[str], bool] = lambda name: False
        #: (function, parameter) holding only the judge's generator; None: worked out from the text
        #: (in-process, one function's source: its caller says, :func:`helpers.checks.scan.find_forbidden_calls`)
        self._threaded: set[tuple[str, str]] | None = threaded
        self._fallbacks: dict[int, set[int]] = {}

    def threaded(self) -> set[tuple[str, str]]:
        """:func:`helpers.checks.passthrough.threaded_parameters` of the text (computed once)."""
        if self._threaded is None:
            self._threaded = threaded_parameters(self.statements)
        return self._threaded

    def fallbacks(self, pos: int) -> set[int]:
        """The callees of the module-level function at ``pos``'s fallbacks for a missing generator, where the
        parameter is threaded (:func:`helpers.checks.passthrough.fallback_callees`)."""
        if pos not in self._fallbacks:
            stmt = self.statements[pos]
            self._fallbacks[pos] = fallback_callees(stmt, {p for f, p in self.threaded() if f == stmt.name}) \
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else set()
        return self._fallbacks[pos]

    def resolve(self, name: str, before: int) -> list[tuple[int, str | None, bool]]:
        """The bindings of ``name`` that may hold at statement ``before``: the last unconditional one and
        the conditional ones after it. Their total count over a scan is bounded (:data:`SCAN_WORK`)."""
        entries = self.bindings.get(name)
        if not entries:
            return []
        if name not in self._index:
            last, lasts = 0, []
            for i, (_, _, conditional) in enumerate(entries):
                last = last if conditional else i
                lasts.append(last)
            self._index[name] = ([pos for pos, _, _ in entries], lasts)
        positions, lasts = self._index[name]
        cut = bisect.bisect_left(positions, before)
        start = lasts[cut - 1] if cut else 0
        self.work += cut - start + 1
        if self.work > SCAN_WORK:
            raise TooComplex
        return entries[start:cut]

    def findings(self, name: str) -> list[str]:
        self.work = 0
        try:
            return self._findings(name)
        except (TooComplex, RecursionError):
            return [f"{name}（代码太长太复杂，检查无法跟踪它能取到什么 / too long and tangled for the scan to follow what "
                    f"it reaches）"]

    def _findings(self, name: str) -> list[str]:
        end = len(self.statements) + 1
        queue = [(pos, False) for pos, _, _ in self.resolve(name, end)]
        own = set(queue)
        found: list[str] = [] if queue else [
            f"{name}（文中找不到它的定义：由运行时的代码生成？ / not defined in the text: made by code run at run time?）"]
        # A statement with dynamic code is read for its dynamic code only, and so are the functions of the
        # text it calls that have some (a demo cell's other names are no business of the graded function).
        queue += [(pos, True) for pos in self._always_read()]
        done: dict[int, bool] = {}
        while queue:
            pos, only = queue.pop()
            if pos in done and (not done[pos] or only):
                continue
            done[pos] = only
            reader = _Reader(self, pos)
            reader.read(self.statements[pos])
            where = "" if (pos, False) in own else self._where(pos)
            if only:
                found += [what + where for what in reader.found if DYNAMIC_NOTE in what or what.endswith(" import *")]
                queue += [(at, True) for at in reader.reached if getattr(self.statements[at], "name", None)
                          in self.dynamic_functions]
            else:
                found += [what + where for what in reader.found]
                queue += [(at, False) for at in reader.reached]
        return sorted(set(found))

    def _where(self, pos: int) -> str:
        names = list(dict.fromkeys(name for name, _, _ in _bound(self.statements[pos])))
        shown = ", ".join(names[:3]) or ast.unparse(self.statements[pos]).splitlines()[0][:40]
        return f"（在 {shown} 中 / in {shown}）"

    def read_all(self) -> list[str]:
        """Findings of every statement read in full (in-process: one function's own source)."""
        found: list[str] = []
        self.work = 0
        try:
            for pos, stmt in enumerate(self.statements):
                reader = _Reader(self, pos)
                reader.read(stmt)
                found += reader.found
        except (TooComplex, RecursionError):
            found.append("（代码太长太复杂，检查无法跟踪它能取到什么 / too long and tangled for the scan to follow what it "
                         "reaches）")
        return found

    def _always_read(self) -> list[int]:
        # functions of the text with dynamic code, or calling one (through the names their bodies load)
        defs = {stmt.name: stmt for stmt in self.statements if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
        callers: dict[str, set[str]] = {}
        for name, stmt in defs.items():
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and node.id in defs:
                    callers.setdefault(node.id, set()).add(name)
        queue = [name for name, stmt in defs.items() if _has_dynamic(stmt, set(), self.bindings, deep=True)]
        dynamic_functions: set[str] = set()
        while queue:
            name = queue.pop()
            if name not in dynamic_functions:
                dynamic_functions.add(name)
                queue += callers.get(name, ())
        self.dynamic_functions = dynamic_functions
        return [pos for pos, stmt in enumerate(self.statements)
                if _has_dynamic(stmt, dynamic_functions, self.bindings, deep=False)]


def _has_dynamic(stmt: ast.stmt, functions: set[str], bindings: dict, deep: bool) -> bool:
    """Whether ``stmt`` runs dynamic code: in the code that runs with it (``deep``: in function bodies
    too), a dynamic builtin the text does not rebind, a dynamic attribute, an import of a dynamic
    module, ``from <forbidden> import *``, or a call of one of ``functions``. ``eval("1 + 1")`` in a demo
    cell is not: a literal code string that binds no name and has no dynamic code of its own."""
    stack: list[ast.AST] = [stmt]
    harmless: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("eval", "exec", "compile") \
                and node.args and _harmless_code(node.args[0], functions, bindings):
            harmless.add(id(node.func))
        if isinstance(node, ast.Name) and id(node) not in harmless and (node.id in functions or (
                node.id in DYNAMIC_BUILTINS and node.id not in bindings)):
            return True
        if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_ATTRIBUTES | {"modules", "import_module"}:
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(path_is_dynamic(path) for _, path in _imported(node)):
                return True
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                return True
        for child in ast.iter_child_nodes(node):
            if deep or node is stmt or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.append(child)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and child in node.decorator_list:
                stack.append(child)
    return False


def _harmless_code(node: ast.AST, functions: set[str], bindings: dict) -> bool:
    """Whether a code argument is a literal string that binds no name and runs no dynamic code."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or len(node.value) > 10_000:
        return False
    try:
        tree = ast.parse(node.value)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    binds = any(isinstance(leaf, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
                                  ast.Global, ast.Nonlocal)) or (isinstance(leaf, ast.Name) and not isinstance(leaf.ctx, ast.Load))
                for leaf in ast.walk(tree))
    return not binds and not any(_has_dynamic(child, functions, bindings, deep=True) for child in tree.body)


def _bound(stmt: ast.stmt) -> list[tuple[str, str | None, bool]]:
    """``(name, imported module path or None, conditional)`` for the names a module-level statement binds."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [(name, origin, False) for name, origin in _imported(stmt)]
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(stmt.name, None, False)]
    conditional = not isinstance(stmt, (ast.Assign, ast.AnnAssign))
    out = []
    stack = [stmt]
    while stack:
        node = stack.pop()
        if node is not stmt and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.name, None, True))
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)) and node is not stmt:
            out += [(name, origin, True) for name, origin in _imported(node)]
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.append((node.id, None, conditional))
        if not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack += list(ast.iter_child_nodes(node))
    return out


class _Reader(ast.NodeVisitor):
    """Reads one reached module-level statement: its findings, and the statements its names reach."""

    def __init__(self, text: ModuleText, pos: int):
        self.text, self.pos = text, pos
        self.scopes: list[dict[str, str | None]] = []
        self.deferred = False
        self.found: list[str] = []
        self.reached: list[int] = []
        self.called: set[int] = set()
        self.exempt: set[int] = set()
        self.bare_vars: set[int] = set()
        self.class_scopes: set[int] = set()
        self.functions: list[str | None] = []
        self.passthrough: set[int] = set()

    def read(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.found += [f"from {stmt.module} import *" for a in stmt.names if a.name == "*"
                           and isinstance(stmt, ast.ImportFrom) and module_is_forbidden(stmt.module or "")]
            self.found += [f"import {path}{DYNAMIC_NOTE}" for _, path in _imported(stmt) if path_is_dynamic(path)]
            return
        self.visit(stmt)
        bindings, statements = self.text.bindings, self.text.statements
        is_module = module_checker(lambda n: any(origin for _, origin, _ in bindings.get(n, ())))
        is_class = (lambda n: self.text.outer_class(n) or bool(bindings.get(n)) and all(
            isinstance(statements[pos], ast.ClassDef) for pos, _, _ in bindings[n]))
        self.found += [f"{seen}{COMPUTED_NOTE}" for seen in dynamic_accesses(stmt, is_module, is_class)]

    def _origins(self, name: str) -> list[str | None]:
        """What ``name`` may denote here: imported module paths (None: something else); its module-level
        bindings are reached."""
        for depth in range(len(self.scopes) - 1, -1, -1):
            scope = self.scopes[depth]
            if depth in self.class_scopes and depth != len(self.scopes) - 1:
                continue  # a class body's names are not seen by the functions inside it
            if name in scope:
                # a forbidden import in the reached code is a finding itself (:meth:`_imports`)
                return [None if scope[name] and module_is_forbidden(scope[name]) else scope[name]]
        bindings = self.text.resolve(name, len(self.text.statements) + 1 if self.deferred else self.pos)
        self.reached += [pos for pos, _, _ in bindings]
        return [origin for _, origin, _ in bindings]

    def _builtin(self, node: ast.Name) -> None:
        """A dynamic builtin the text does not rebind: ``vars()`` without an argument (``vars(module)`` is
        :func:`dynamic_accesses`'), ``globals()``/``locals()`` unless subscripted by a literal name."""
        name = node.id
        if name not in DYNAMIC_BUILTINS | {"vars"} or name in self.text.bindings or id(node) in self.exempt \
                or any(name in scope for scope in self.scopes):
            return
        if name != "vars" or id(node) in self.bare_vars:
            self.found.append(f"{name}{DYNAMIC_NOTE}")

    def visit_Call(self, node: ast.Call) -> None:
        self.called.add(id(node.func))
        param = passthrough_argument(node)
        if param and len(self.functions) == 1 and self.functions[0] and (self.functions[0], param) in self.text.threaded():
            self.passthrough.add(id(node.func))  # numpy's idiom rng = np.random.default_rng(rng): creates nothing
        elif len(self.functions) == 1 and self.functions[0] and id(node.func) in self.text.fallbacks(self.pos):
            self.passthrough.add(id(node.func))  # if rng is None: rng = np.random.default_rng(): never runs
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and "getattr" not in self.text.bindings \
                and len(node.args) > 1:  # getattr(np, "random"): an attribute chain written another way
            root, names = _chain(node.args[0])
            for name in literal_names(node.args[1]) or []:
                if isinstance(root, ast.Name):
                    self.visit_Attribute(ast.Attribute(value=node.args[0], attr=name, ctx=ast.Load()))
        if isinstance(node.func, ast.Name) and node.func.id == "vars" and not node.args:
            self.bare_vars.add(id(node.func))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("globals", "locals") \
                and not value.args and literal_names(node.slice) is not None and isinstance(node.ctx, ast.Load):
            self.exempt.add(id(value.func))  # globals()["name"]: a name written in the text, read as one
            for name in literal_names(node.slice):
                self.visit_Name(ast.Name(id=name, ctx=ast.Load()))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        self._builtin(node)
        origins = self._origins(node.id)
        if id(node) in self.passthrough and _passes_through(node.id, origins):
            return
        for origin in origins:
            what = origin and judge_path(node.id, origin, id(node) in self.called)
            if what:
                self.found.append(what)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        root, names = _chain(node)
        # the attribute's text only for a finding: unparsing every attribute whose root is a nested
        # call cost depth x size (7.7 s for one 40 kB cell; session 14's attacker)
        text = lambda: ast.unparse(node)[:80]  # noqa: E731
        found = [f"{text()}{DYNAMIC_NOTE}" for attr in names if attr in DYNAMIC_ATTRIBUTES]
        if isinstance(root, ast.Name):
            self._builtin(root)
            origins = self._origins(root.id)
            if id(node) in self.passthrough and not found and _passes_through(root.id, origins, names):
                return
            for origin in origins:
                for depth in range(len(names), -1, -1):
                    # the longest prefix judged: np.random.Generator(...) as called, np.random.x.y as np.random.x
                    path = ".".join([origin or "", *names[:depth]])
                    what = origin and judge_path(".".join([root.id, *names[:depth]]), path,
                                                 id(node) in self.called and depth == len(names))
                    if what:
                        found.append(what)
                    if what or not origin or real_path(path) in ALLOWED_PATHS:
                        break
        else:
            self.visit(root)
        # (a function's own text, read without its cell's imports, knows no origin: the name as written)
        distribution = isinstance(root, ast.Name) and any(
            is_distribution(".".join([origin, *names]))
            for origin in [o for o in self._origins(root.id) if o] or [root.id])
        if not found and not distribution and (
                ((names[-1] == "laplace" or names[-1] in SAMPLER_ATTRIBUTES) and names[-1] not in self.text.own)
                          or any(attr in GENERATOR_ATTRIBUTES and attr not in self.text.own for attr in names)):
            found.append(text())
        self.found += found

    def _function(self, node) -> None:
        for decorator in getattr(node, "decorator_list", []):
            self.visit(decorator)
        args = node.args
        params = [*args.posonlyargs, *args.args]
        for arg, default in zip(params[len(params) - len(args.defaults):], args.defaults):
            if not (isinstance(default, ast.Name) and default.id == arg.arg):  # rng=rng: the judged calls pass rng
                self.visit(default)
        for default in args.kw_defaults:
            if default is not None:
                self.visit(default)
        self.scopes.append(_scope_names(node))
        self.functions.append(getattr(node, "name", None))
        deferred, self.deferred = self.deferred, True
        for child in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(child)
        self.deferred = deferred
        self.scopes.pop()
        self.functions.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for child in [*node.decorator_list, *node.bases, *node.keywords]:
            self.visit(child)
        own: dict[str, str | None] = {}
        for child in node.body:  # the class body's own names (its methods' bodies do not see them)
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own[child.name] = None
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                own.update(dict(_imported(child)))
            elif isinstance(child, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in child.targets if isinstance(child, ast.Assign) else [child.target]:
                    own.update({leaf.id: None for leaf in ast.walk(target) if isinstance(leaf, ast.Name)})
        self.class_scopes.add(len(self.scopes))
        self.scopes.append(own)
        for child in node.body:
            self.visit(child)
        self.scopes.pop()
        self.class_scopes.discard(len(self.scopes))

    def _comprehension(self, node) -> None:
        targets = {leaf.id: None for g in node.generators for leaf in ast.walk(g.target) if isinstance(leaf, ast.Name)}
        self.scopes.append(targets)
        self.generic_visit(node)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_arg(self, node: ast.arg) -> None:  # annotations are not read
        return

    def visit_Import(self, node: ast.Import) -> None:
        self._imports(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._imports(node)

    def _imports(self, node) -> None:
        paths = [path for _, path in _imported(node)] + [node.module or "" for a in node.names if a.name == "*"]
        if any(module_is_forbidden(path) for path in paths):
            self.found.append(ast.unparse(node) if isinstance(node, ast.Import) else
                              f"from {node.module} import {', '.join(a.name for a in node.names)}")
        elif any(path_is_dynamic(path) for path in paths):
            self.found.append(ast.unparse(node) + DYNAMIC_NOTE)
