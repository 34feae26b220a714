"""Ready-made samplers in a student's function, read from its syntax tree and from what its names hold
(the forbidden-name scan; a note beside the draws checks of :mod:`helpers.checks.forbidden`).

Two views of one rule (:class:`helpers.checks.textreach.ModuleText` states it). In the grader the judge
has the student's text only: a stand-in (:mod:`autograder.standins`) carries the text of every
student cell, and what the graded name reaches is read from it. In-process (a student's Validate,
``test_corpus_directly``) the function's names are resolved to the objects they hold: globals,
closure cells, defaults, a wrapper's ``__wrapped__``, the student's classes (nested ones too) and
functions, followed recursively.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sysconfig
import textwrap
import types
from typing import Any, Callable

import numpy as np

from helpers.checks import passthrough, reach, textreach
from helpers.checks.core import _ALLOWED_RNG

# The type itself may be named (``isinstance(rng, np.random.Generator)``).
_ALLOWED_NUMPY_RANDOM = frozenset({"random.Generator"})
_FORBIDDEN_MODULES = textreach.FORBIDDEN_MODULES
#: Methods that draw, whatever object they belong to: a scipy.stats distribution's ``rvs`` (and the
#: ``random_state`` it draws from), statistics.NormalDist's ``samples``.
_SAMPLER_ATTRIBUTES = textreach.SAMPLER_ATTRIBUTES
_module_is_forbidden = textreach.module_is_forbidden


def _function_source(func: Callable) -> str | None:
    try:
        return textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return None


def _code_source(code: types.CodeType) -> str | None:
    """The source of ``code`` itself (a wrapper's, not the function it wraps: ``inspect.getsource`` of a
    function follows ``__wrapped__``)."""
    try:
        return textwrap.dedent(inspect.getsource(code))
    except (OSError, TypeError, IndexError):
        return None


def _rng_param_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.arg in {"rng", "generator", "gen", "random_state"}:
                    names.add(arg.arg)
    return names or {"rng"}


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


_NOTHING = object()


def _resolve(func: Callable, name: str) -> Any:
    """What ``name`` holds for ``func``: a closure cell's contents, a global, a builtin (None: nothing)."""
    code = getattr(func, "__code__", None)
    closure = getattr(func, "__closure__", None) or ()
    if code is not None and name in code.co_freevars and len(closure) == len(code.co_freevars):
        cell = closure[code.co_freevars.index(name)]
        return cell.cell_contents if reach._filled(cell) else None
    globs = getattr(func, "__globals__", {})
    if name in globs:
        return globs[name]
    return getattr(__builtins__, name, None) if not isinstance(__builtins__, dict) else __builtins__.get(name)


_resolve_global = _resolve


def _object_origin(obj: Any) -> str | None:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    if isinstance(module, str):
        return module
    cls_module = getattr(type(obj), "__module__", None)
    if isinstance(obj, np.random.Generator) or cls_module == "numpy.random._generator":
        return "numpy.random"
    return None


def find_forbidden_calls(func: Callable, _seen: set | None = None, _threaded: set[str] | None = None) -> list[str]:
    """Ready-made samplers and forbidden modules used by ``func``.

    Reads the function's source (and the source of other functions of the
    same module it calls, such as the student's own ``laplace_noise`` called
    from ``laplace_mechanism``). Reported: any method of the rng other than
    ``random``; any attribute named ``laplace``, ``rvs``, ``random_state`` or
    ``samples`` (scipy.stats' and statistics' samplers) not defined by the student's
    own classes; anything from ``numpy.random`` (but naming its ``Generator`` type), ``random``,
    ``helpers``, ``secrets``, ``torch``, ``os.urandom`` or scipy.stats' sampling modules,
    whatever the alias (``import numpy as xp``, ``R = np.random``), imported inside the
    function or reached through a global name, a closure, a default, a wrapped function,
    or held in a global dict, list, namespace, instance or class (nested classes too);
    dynamic code (``exec``, ``eval``, ``compile``, ``__import__``, ``importlib``,
    ``sys.modules``, ``types.FunctionType``, ``globals()`` not subscripted by a literal, a
    function's ``__globals__``...); a module attribute fetched by a name computed at run time
    (``getattr(np, "ran" + "dom")``, ``vars(np)``) in the function or in the module-level
    assignment of a name it uses (:mod:`helpers.checks.reach`). A function without source
    (built by ``exec``) is a finding. In the grader, what the graded name reaches through the
    student's whole text (:class:`textreach.ModuleText`). Arithmetic is allowed
    (``scipy.special.expit``, ``scipy.stats.norm.ppf``, ``statistics.mean``).

    Returns a list of short descriptions (empty when nothing was found).
    """
    seen = set() if _seen is None else _seen
    code = getattr(func, "__code__", None)
    if code is None:
        return _without_code(func, seen)
    if code in seen:
        return []
    seen.add(code)
    found: list[str] = []
    sources = getattr(func, "__globals__", {}).get(textreach.SOURCES_KEY)
    if sources is not None and _seen is None:
        found += _whole_text(sources).findings(func.__name__)
    source = _code_source(code)
    tree = None
    if source is not None:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            tree = None
    names_used: set[str] = set()
    if tree is None:
        names_used = set(_all_co_names(code))
        generated = code.co_filename == "<string>" and func.__name__.startswith("__")  # a dataclass's __init__
        found += sorted(attr for attr in names_used if not generated and (
            attr == "laplace" or attr in textreach.GENERATOR_ATTRIBUTES | _SAMPLER_ATTRIBUTES))
        if sources is None and source is None and _seen is None:
            # the graded function itself (a lambda's line may not parse alone: that is no finding)
            found.append(f"{getattr(func, '__name__', 'function')}（源代码不可得：由 exec、eval、compile 或 "
                         f"types.FunctionType 生成？ / no source: made by exec, eval, compile or types.FunctionType?）")
    else:
        rng_names = _rng_param_names(tree)
        local_names = set(code.co_varnames) | set(code.co_cellvars)
        is_module = reach.module_checker(
            lambda n: n not in local_names and isinstance(_resolve(func, n), types.ModuleType))
        own = _own_method_names(func) | textreach.own_attribute_names(tree) | (
            _whole_text(sources).own if sources is not None else set())
        is_class = (lambda n: n not in local_names and isinstance(_resolve(func, n), type)
                    and _students(_resolve(func, n), func.__module__))
        if sources is not None:
            whole = _whole_text(sources)
            is_class = (lambda n: bool(whole.bindings.get(n)) and all(
                isinstance(whole.statements[pos], ast.ClassDef) for pos, _, _ in whole.bindings[n]))
        top = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        threaded = passthrough.own_parameters(top) if _seen is None else (_threaded or set())
        text = textreach.ModuleText([source], threaded={(top.name, p) for p in threaded} if top is not None else set())
        text.own |= own
        text.outer_class = is_class
        found += text.read_all()
        # Judge each attribute chain once, by its outermost node.
        inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        passing = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
                   and passthrough.passthrough_argument(node) in threaded}
        passing |= passthrough.fallback_callees(top, threaded) if top is not None else set()
        # a name used only as the root of an allowed path (``npr.Generator`` after ``from numpy import random
        # as npr``: a type) is not a use of the module it holds (session 14's reviewer: 3 points lost)
        typed_roots: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and id(node) in inner:
                continue
            if isinstance(node, ast.Import):
                found += [f"import {a.name}" for a in node.names if _module_is_forbidden(a.name)]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                names = [a.name for a in node.names]
                if _module_is_forbidden(module) or (module == "numpy" and "random" in names) or any(
                        _module_is_forbidden(f"{module}.{n}") for n in names):
                    found.append(f"from {module} import {', '.join(names)}")
            elif isinstance(node, ast.Attribute):
                dotted = _dotted(node)
                base = dotted.split(".")[0] if dotted else None
                origin = _object_origin(_resolve(func, base)) if dotted and base not in local_names else None
                full = origin + dotted[len(base):] if origin else None
                if id(node) in passing and full and textreach.real_path(full) == "numpy.random.default_rng":
                    continue  # rng = np.random.default_rng(rng): numpy's idiom, creates nothing
                if full and textreach.real_path(full) in textreach.ALLOWED_PATHS:
                    root = node
                    while isinstance(root, ast.Attribute):
                        root = root.value
                    typed_roots.add(id(root))
                if base in rng_names and node.attr not in _ALLOWED_RNG and isinstance(node.value, ast.Name):
                    found.append(f"{base}.{node.attr}")
                elif _sampler_attribute(dotted, node.attr, set() if is_module(node.value) else own) and not (
                        full and textreach.is_distribution(full)):
                    found.append(dotted or ast.unparse(node)[-60:])
                elif dotted and base not in local_names:
                    found += _module_chain(func, dotted, node, tree)
            elif isinstance(node, ast.Name) and id(node) not in typed_roots and not (
                    id(node) in passing and _is_default_rng(_resolve(func, node.id))):
                names_used.add(node.id)
        found += [f"{seen}{textreach.COMPUTED_NOTE}" for seen in reach.dynamic_accesses(tree, is_module, is_class)]
        # getattr(module, "name") with literal names is an attribute chain written another way.
        found += [dotted for node in ast.walk(tree) if isinstance(node, ast.Call) and reach.callee(node) == "getattr"
                  and len(node.args) > 1 and is_module(node.args[0])
                  for dotted in (f"{ast.unparse(node.args[0])}.{name}" for name in reach.literal_names(node.args[1]) or [])
                  if _sampler_attribute(dotted, dotted.rsplit(".", 1)[1], set())]
    local = set(code.co_varnames) | set(code.co_cellvars)
    for name in sorted(names_used - local):
        found += _judge_name(func, name, _resolve(func, name), seen, tree, threaded if tree is not None else set())
    found += [f"{name}={what}" for name, value in _defaults(func, code).items() if name != "rng"
              for what in _judge_name(func, name, value, seen)]
    wrapped = getattr(func, "__wrapped__", None)
    if wrapped is not None and wrapped is not func:
        found += [f"{getattr(wrapped, '__name__', 'wrapped')}: {what}" for what in find_forbidden_calls(wrapped, seen)]
    # one finding per call seen: "xp.random.default_rng" once, with what it denotes if that was resolved
    return sorted(what for what in set(found) if not any(other.startswith(what + "（") for other in found))


def _is_default_rng(obj: Any) -> bool:
    """numpy's ``default_rng`` (in the grader, the stand-in of ``from numpy.random import default_rng``)."""
    origin = _object_origin(obj)
    return obj is np.random.default_rng or bool(origin) and textreach.real_path(origin) == "numpy.random.default_rng"


@functools.lru_cache(maxsize=8)
def _whole_text(sources: tuple[str, ...]) -> textreach.ModuleText:
    """The student's cells read once per submission (every graded function's scan reads the same text)."""
    return textreach.ModuleText(list(sources))


def _defaults(func: Callable, code: types.CodeType) -> dict[str, Any]:
    """``{parameter: default value}`` (the default of ``rng`` is never used: the judged calls pass it)."""
    defaults = getattr(func, "__defaults__", None) or ()
    positional = code.co_varnames[:code.co_argcount]
    out = dict(zip(positional[len(positional) - len(defaults):], defaults))
    out.update(getattr(func, "__kwdefaults__", None) or {})
    return out


def _judge_name(func: Callable, name: str, obj: Any, seen: set, tree: ast.AST | None = None,
                threaded: set[str] | frozenset = frozenset()) -> list[str]:
    """Findings for a name ``func`` uses that is not its own local: what the object it holds is or holds
    (``tree``: ``func``'s source, whose ``threaded`` parameters hold only the judge's generator)."""
    if obj is None:
        return []
    origin = _object_origin(obj)
    module = getattr(func, "__module__", None)
    if isinstance(obj, reach.Reached):
        return [f"{name} = …{obj.seen}…{textreach.COMPUTED_NOTE}"]
    if origin in textreach.ALLOWED_PATHS:  # a stand-in for ``from numpy.random import Generator`` (its call is read)
        return []
    if origin and _module_is_forbidden(origin) and not (isinstance(obj, type) and obj is np.random.Generator):
        return [f"{name} (from {origin})"]
    if isinstance(obj, types.ModuleType) and textreach.path_is_dynamic(obj.__name__):
        return [f"{name}{textreach.DYNAMIC_NOTE}"]
    if getattr(obj, "__name__", None) in _SAMPLER_ATTRIBUTES | textreach.GENERATOR_ATTRIBUTES and callable(obj) \
            and not _students(obj, module):
        return [f"{name} ({obj.__name__} of {origin or 'an object'})"]
    if isinstance(obj, types.FunctionType) and _students(obj, module):
        handed = set()
        if tree is not None and threaded and (source := _code_source(obj.__code__)) is not None:
            try:
                callee = ast.parse(source).body[0]
                handed = passthrough.handed_on(tree.body[0], set(threaded), callee) if tree.body else set()
            except (SyntaxError, IndexError, RecursionError):
                handed = set()
        return [f"{obj.__name__}: {what}" for what in find_forbidden_calls(obj, seen, handed)]
    if not isinstance(obj, (types.ModuleType, types.FunctionType)) and (not isinstance(obj, type) or _students(obj, module)):
        # a class of the student's own module, or an object: what it holds
        what = reach.held(dict(vars(obj)) if isinstance(obj, type) else obj, _judge_held(module, seen),
                          into=lambda cls: _students(cls, module))
        if what:
            return [f"{name}（其中有 / holds {what}）"]
    return []


def _students(obj: Any, module: str | None) -> bool:
    """Whether ``obj`` belongs to the student's module (not a method a library generated for the student's
    class: a dataclass's ``__init__`` made by ``exec``, its ``__repr__`` wrapped in dataclasses.py)."""
    code = getattr(obj, "__code__", None)
    if isinstance(code, types.CodeType) and (code.co_filename.startswith(_LIBRARY_PATHS) or (
            code.co_filename == "<string>" and code.co_name.startswith("__"))):
        return False
    return getattr(obj, "__module__", None) in (module, "__main__")


_LIBRARY_PATHS = tuple({path for key in ("stdlib", "platstdlib", "purelib", "platlib")
                        if (path := sysconfig.get_paths().get(key))})


def _judge_held(module: str | None, seen: set) -> Callable[[Any], str | None]:
    """The judge of :func:`reach.held`: a forbidden object, or a function of the student's that uses one."""

    def judge(obj: Any) -> str | None:
        what = _forbidden_object(obj)
        if what is None and isinstance(obj, types.FunctionType) and _students(obj, module):
            found = find_forbidden_calls(obj, seen)
            what = f"{obj.__name__}: {found[0]}" if found else None
        return what

    return judge


def _without_code(func: Any, seen: set) -> list[str]:
    """A graded name bound to a callable without code of its own: a partial, a bound method, an instance of
    the student's class (its ``__call__``), ``np.vectorize``: what it holds."""
    if isinstance(func, np.vectorize):
        func = func.pyfunc
        return find_forbidden_calls(func, seen) if hasattr(func, "__code__") else []
    module = getattr(func.func if isinstance(func, functools.partial) else type(func), "__module__", None)
    what = _forbidden_object(func) or reach.held(func, _judge_held(module, seen), into=lambda cls: _students(cls, module))
    if what is None and _students(type(func), module) and not isinstance(func, type):
        what = reach.held(dict(vars(type(func))), _judge_held(module, seen), into=lambda cls: _students(cls, module))
    return [f"{getattr(func, '__name__', type(func).__name__)}（其中有 / holds {what}）"] if what else []


def _module_chain(func: Callable, dotted: str, node: ast.Attribute, tree: ast.AST) -> list[str]:
    """An attribute chain whose root holds a module, judged by the module path it denotes (``xp.random``
    with ``import numpy as xp``; ``r.default_rng`` with ``from numpy import random as r``; ``sys.modules``)."""
    parts = dotted.split(".")
    obj = _resolve(func, parts[0])
    if not isinstance(obj, types.ModuleType) or _module_is_forbidden(obj.__name__):
        return []  # a forbidden module's name is a finding itself (_judge_name)
    path, depth = obj.__name__, 1
    while depth < len(parts):
        nxt = getattr(obj, parts[depth], None)
        if not isinstance(nxt, types.ModuleType):
            break
        obj, path, depth = nxt, nxt.__name__, depth + 1
    called = any(isinstance(call, ast.Call) and call.func is node for call in ast.walk(tree))
    what = textreach.judge_path(dotted, ".".join([path, *parts[depth:]]), called)
    return [what] if what else []


def _sampler_attribute(dotted: str | None, attr: str, own: set[str]) -> bool:
    """Whether an attribute chain names a sampler: ``laplace`` or another sampler's name (unless it is
    fetched from no module and the student's own class defines it: a reviewer's ``Noise(rng).laplace(b)``
    built from rng.random), or anything of numpy.random but the allowed names."""
    if (attr == "laplace" or attr in _SAMPLER_ATTRIBUTES) and attr not in own:
        return True
    return bool(dotted and ".random." in dotted + "." and dotted.split(".")[0] in {"np", "numpy"}
                and dotted.split(".", 1)[1] not in _ALLOWED_NUMPY_RANDOM)


def _own_method_names(func: Any) -> set[str]:
    """Names defined in the classes of the student's own module (the function's globals)."""
    module = getattr(func, "__module__", None)
    names: set[str] = set()
    for obj in list(getattr(func, "__globals__", {}).values()):
        if isinstance(obj, type) and obj.__module__ in (module, "__main__"):
            names.update(name for name in vars(obj) if not name.startswith("__"))
    return names


def _forbidden_object(obj: Any) -> str | None:
    """What ``obj`` is when it is a forbidden source or sampler (for :func:`reach.held`), else None."""
    origin = _object_origin(obj)
    if origin and _module_is_forbidden(origin) and not (isinstance(obj, type) and obj is np.random.Generator):
        return f"{getattr(obj, '__name__', type(obj).__name__)} of {origin}"
    if getattr(obj, "__name__", None) in _SAMPLER_ATTRIBUTES and callable(obj):
        return f"{obj.__name__} of {origin or 'an object'}"
    return None


def _all_co_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += _all_co_names(const)
    return names
