"""numpy's idiom ``rng = np.random.default_rng(rng)`` in a graded function: which uses of it the scan accepts.

``default_rng`` returns a ``Generator`` it is given unchanged (numpy's documentation recommends the idiom,
and code in the style of scikit-learn or diffprivlib normalises its ``rng`` argument so), so a function
that only ever receives the generator its callers were given creates nothing: the forbidden-name scan
must not cost it points (issue 35: a correct ``laplace_noise`` opening with the idiom scored 0/10 in
grading, 7/10 in the notebook). The same call with a number creates a seeded generator, so the idiom is
accepted only where the text shows that the argument can be nothing but a generator:
:func:`threaded_parameters` follows every call of the student's module-level functions (the judge passes
its generator to the graded function; a call in the student's text must pass a parameter that is itself
threaded, or a module-level name bound only by ``default_rng(...)``, which the scan reads wherever the
call is reached). A function passed around by name (``partial``, ``map``, an alias) or called with
``*args``/``**kwargs`` threads nothing.
"""

from __future__ import annotations

import ast
import collections

#: Most uses of the student's functions followed (each pass of the fixed point visits every one).
MAX_SITES = 2000
#: Most passes (a chain of functions handing the generator on is one pass per link).
MAX_PASSES = 12


def passthrough_argument(call: ast.Call) -> str | None:
    """The name ``P`` of a call ``f(P)`` or ``f(seed=P)`` with one name and nothing else (else None)."""
    if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Name):
        return call.args[0].id
    if not call.args and len(call.keywords) == 1 and call.keywords[0].arg == "seed" \
            and isinstance(call.keywords[0].value, ast.Name):
        return call.keywords[0].value.id
    return None


def _parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = func.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


def _assigned(func: ast.AST) -> set[str]:
    """Names a function's own body rebinds, other than by ``P = default_rng(P)`` (nested scopes excluded)."""
    out: set[str] = set()
    fallback = {id(assign) for assign, _, _ in _fallbacks(func)}
    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                out.add(node.name)
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and passthrough_argument(node.value) == node.targets[0].id \
                and _ends_with_default_rng(node.value.func):
            continue
        if id(node) in fallback:
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        stack += list(ast.iter_child_nodes(node))
    return out


def _is_none(node: ast.AST, name: str, negated: bool = False) -> bool:
    """``name is None`` (``name is not None`` when ``negated``)."""
    return (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == name
            and len(node.ops) == 1 and isinstance(node.ops[0], ast.IsNot if negated else ast.Is)
            and isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None)


def _fresh(node: ast.AST) -> bool:
    """``default_rng()`` or ``default_rng(None)``: a generator seeded by the operating system."""
    return (isinstance(node, ast.Call) and _ends_with_default_rng(node.func) and not node.keywords
            and (not node.args or len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
                 and node.args[0].value is None))


def _fallbacks(func: ast.AST) -> list[tuple[ast.Assign, ast.Call, str]]:
    """``(assignment, default_rng call, P)`` of the fallbacks for a missing generator in ``func``'s own body:
    ``if P is None: P = default_rng()``, ``P = default_rng() if P is None else P``, ``P = P if P is not None
    else default_rng()``, ``P = P or default_rng()``. Dead in grading when ``P`` is threaded: the judge and
    every call of the text pass a generator, never None (session 14's reviewer: L25 lost 3 points)."""
    out = []
    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Name):
            name = node.test.left.id
            if _is_none(node.test, name):
                out += [(stmt, stmt.value, name) for stmt in node.body if isinstance(stmt, ast.Assign)
                        and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                        and stmt.targets[0].id == name and _fresh(stmt.value)]
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
            same = lambda n: isinstance(n, ast.Name) and n.id == name  # noqa: E731
            if isinstance(value, ast.IfExp) and (
                    (_is_none(value.test, name) and _fresh(value.body) and same(value.orelse))
                    or (_is_none(value.test, name, negated=True) and same(value.body) and _fresh(value.orelse))):
                out.append((node, value.body if _fresh(value.body) else value.orelse, name))
            elif isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) and len(value.values) == 2 \
                    and same(value.values[0]) and _fresh(value.values[1]):
                out.append((node, value.values[1], name))
        stack += list(ast.iter_child_nodes(node))
    return out


def fallback_callees(func: ast.AST, threaded: set[str]) -> set[int]:
    """ids of the callees (``np.random.default_rng``) of ``func``'s fallbacks for a threaded parameter."""
    return {id(call.func) for _, call, name in _fallbacks(func) if name in threaded}


def _ends_with_default_rng(func: ast.AST) -> bool:
    return (isinstance(func, ast.Name) and func.id == "default_rng") or (
        isinstance(func, ast.Attribute) and func.attr == "default_rng")


def threaded_parameters(statements: list[ast.stmt]) -> set[tuple[str, str]]:
    """``(function, parameter)`` of the module-level functions whose parameter receives, in every call the
    text makes, only a threaded parameter of the caller or a module-level generator name."""
    defs = {s.name: s for s in statements if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names_bound = {n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    # counted once, not per name: a counting loop per name cost 21 s of the judge's CPU for 12,000 defs
    defined = collections.Counter(getattr(s, "name", None) for s in statements)
    twice = {name for name in defs if defined[name] > 1 or name in names_bound}
    # module-level names bound only by ``X = ...default_rng(...)``
    generators: dict[str, bool] = {}
    for stmt in statements:
        for node in _module_level(stmt):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                ok = (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is node
                      and isinstance(stmt.value, ast.Call) and _ends_with_default_rng(stmt.value.func))
                generators[node.id] = generators.get(node.id, True) and ok
    params = {name: _parameters(func) for name, func in defs.items() if name not in twice}
    assigned = {name: _assigned(func) for name, func in defs.items()}
    threaded = {(name, p) for name, ps in params.items() for p in ps if p not in assigned[name]}
    sites = list(_calls(statements, defs))
    if len(sites) > MAX_SITES:
        return set()  # a text this tangled keeps the scan's verdict
    changed, passes = True, 0
    while changed:
        changed, passes = False, passes + 1
        if passes > MAX_PASSES:
            return set()
        for callee, call, caller in sites:
            for p in params.get(callee, []):
                if (callee, p) in threaded and not _passes(call, p, params[callee], caller, threaded, generators,
                                                           assigned):
                    threaded.discard((callee, p))
                    changed = True
    return threaded


def _module_level(stmt: ast.stmt):
    """The nodes of a module-level statement that run with it (not the bodies of its functions and classes)."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack += list(ast.iter_child_nodes(node))


def _calls(statements, defs):
    """``(callee, call or None, enclosing module-level function or None)`` for every use of a function's
    name; ``call`` None: the name used otherwise than called. A function handed to the course's own code
    (``check_laplace_noise_rng(laplace_noise)``, ``laplace_explorer(laplace_mechanism)``: a name imported
    from ``helpers``, which calls it with a generator) is no use of it."""
    course = {(a.asname or a.name) for stmt in statements for s in ast.walk(stmt) if isinstance(s, ast.ImportFrom)
              and not s.level and (s.module or "").split(".")[0] == "helpers" for a in s.names}
    for stmt in statements:
        caller = stmt if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
        calls = {id(n.func): n for n in ast.walk(stmt) if isinstance(n, ast.Call)}
        handed = {id(arg) for n in calls.values() if isinstance(n.func, ast.Name) and n.func.id in course
                  for arg in n.args}
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id in defs and isinstance(node.ctx, ast.Load) \
                    and id(node) not in handed:
                yield node.id, calls.get(id(node)), caller


def _passes(call, p, params, caller, threaded, generators, assigned) -> bool:
    if call is None or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    index = params.index(p)
    given = [k.value for k in call.keywords if k.arg == p]
    if index < len(call.args):
        given.append(call.args[index])
    if not given:
        return False  # its default (None: default_rng() would seed itself from the OS)
    arg = given[0]
    if not isinstance(arg, ast.Name):
        return False
    if caller is not None and arg.id in _parameters(caller):
        return (caller.name, arg.id) in threaded
    if caller is not None and arg.id in assigned.get(caller.name, ()):
        return False
    return generators.get(arg.id, False)


def handed_on(caller: ast.AST, threaded: set[str], callee: ast.AST) -> set[str]:
    """In-process (one function's source at a time): the parameters of ``callee`` that ``caller``, whose
    parameters ``threaded`` hold only a generator, passes nothing but those in every use of its name."""
    if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(
            callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    params = _parameters(callee)
    assigned = {caller.name: _assigned(caller)}
    known = {(caller.name, p) for p in threaded if p not in assigned[caller.name]}
    sites = [(name, call, caller) for name, call, _ in _calls([caller], {callee.name: callee})]
    return {p for p in params if p not in _assigned(callee)
            and all(_passes(call, p, params, caller, known, {}, assigned) for _, call, _ in sites)}


def own_parameters(func: ast.AST) -> set[str]:
    """The graded function's parameters it never rebinds (the judge passes its generator)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    return {p for p in _parameters(func) if p not in _assigned(func)}
