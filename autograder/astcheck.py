"""Static inspection of the student's code: a note for the instructor, never a defence.

:func:`inspect_code` lists suspicious constructs: assignments to attributes
of modules (monkeypatching numpy, scipy, ``helpers`` or the checks),
rebinding builtins or names the instructor's cells imported,
``setattr``/``exec``/``eval``/``__import__``, ``sys.modules``,
``os.kill``/``os._exit``, frame and dunder tricks, file writes, shell magics
and imports outside a small allow-list. The grader records them in
``report.json`` (``flags``) for the instructor; they never cost points and
they protect nothing: a name denylist is easy to get around (``getattr`` on
concatenated strings, a module reached through an allowed package, code in
a string run by a child process). What protects the grade is that student
code runs in the sandbox and the tests do not (see README.md).
"""

from __future__ import annotations

import ast
import builtins
import functools

#: Top-level modules a solution may import.
ALLOWED_MODULES = frozenset({
    "numpy", "scipy", "math", "cmath", "statistics", "random", "functools",
    "itertools", "collections", "typing", "dataclasses", "fractions", "decimal",
    "operator", "heapq", "bisect", "matplotlib", "helpers", "warnings", "time",
    "__future__",
})
#: Calls that have no place in a solution.
FORBIDDEN_CALLS = frozenset({
    "setattr", "delattr", "exec", "eval", "compile", "__import__", "globals",
    "locals", "vars", "open", "exit", "quit", "breakpoint", "get_ipython",
    "input",
})
#: Attribute names used to escape, patch or kill the grading process.
FORBIDDEN_ATTRS = frozenset({
    "kill", "killpg", "_exit", "abort", "system", "popen", "fork", "forkpty",
    "execv", "execve", "execl", "execlp", "execvp", "spawnv", "spawnl", "remove",
    "unlink", "rmtree", "rename", "replace", "chmod", "modules", "_getframe",
    "setrecursionlimit", "settrace", "setprofile", "f_globals", "f_locals",
    "f_back", "f_builtins", "__dict__", "__globals__", "__builtins__", "__code__",
    "__class__", "__subclasses__", "__bases__", "__mro__", "__setattr__",
    "__delattr__", "__import__", "__loader__", "__spec__", "__closure__",
    "__defaults__", "__kwdefaults__", "write_text", "write_bytes", "register",
})
BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_")) | {
    "__builtins__", "__import__", "display", "get_ipython"}
#: IPython line magics that are harmless in a solution.
ALLOWED_MAGICS = frozenset({"matplotlib", "time", "timeit", "precision", "config"})


@functools.lru_cache(maxsize=256)  # <= ~50 MB: cells are capped at 100 kB
def to_python(source: str) -> str:
    """Turn IPython syntax (``%magic``, ``!cmd``) into plain Python.

    Cached: the scorer and this module transform each cell once. The cost of
    IPython's transformer grows with (escaped lines x lines), so callers
    check :func:`autograder.scorer.cell_limits` first.
    """
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython ships with the kernel
        return source
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - left as is: it fails to compile where it runs
        return source


def _flat_targets(targets):
    """Assignment targets with tuples, lists and starred targets unpacked."""
    out = []
    stack = list(targets)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.Tuple, ast.List)):
            stack.extend(node.elts)
        elif isinstance(node, ast.Starred):
            stack.append(node.value)
        else:
            out.append(node)
    return out


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return "<call>"
    return None


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif isinstance(node, ast.Call):
        parts.append(_dotted(node.func) + "()")
    else:
        parts.append("<expr>")
    return ".".join(reversed(parts))


def imported_names(sources) -> dict[str, str]:
    """Top-level names bound by imports and ``def`` in ``sources`` (instructor code).

    Returns ``{name: what}``: the dotted import path for imports, ``"def"`` for
    functions and classes. The student may re-import the same thing under the
    same name; any other rebinding is flagged.
    """
    names: dict[str, str] = {}
    for source in sources:
        try:
            tree = ast.parse(to_python(source))
        except SyntaxError:
            continue
        for node in tree.body:
            names.update(_bindings(node))
    return names


def _bindings(node) -> dict[str, str]:
    if isinstance(node, ast.Import):
        return {(a.asname or a.name.split(".")[0]): (a.name if a.asname else a.name.split(".")[0])
                for a in node.names}
    if isinstance(node, ast.ImportFrom):
        prefix = "." * node.level + (node.module or "")
        return {(a.asname or a.name): f"{prefix}.{a.name}" for a in node.names if a.name != "*"}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name: "def"}
    return {}


def inspect_code(source: str, protected: dict[str, str] | None = None,
                 where: str = "student code") -> list[str]:
    """Reasons to flag ``source`` (empty when nothing suspicious was found).

    ``protected`` maps names the instructor's cells import or define to what
    they are bound to (see :func:`imported_names`); the student must not
    rebind them, nor any builtin.
    """
    protected = dict(protected or {})
    try:
        tree = ast.parse(to_python(source))
    except SyntaxError:
        return []
    reasons: list[str] = []

    def add(reason):
        if reason not in reasons:
            reasons.append(reason)

    modules = set(protected) | {"builtins", "sys", "os"}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules.update(_bindings(node))
    global_names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            global_names.update(node.names)
    top_level = {id(node) for node in tree.body}
    allowed_ipython = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run_line_magic" and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in ALLOWED_MAGICS):
            allowed_ipython.add(id(node))
            allowed_ipython.add(id(node.func.value))

    def rebinding(node):
        if id(node) in top_level and isinstance(node, (ast.Import, ast.ImportFrom)):
            return [n for n, what in _bindings(node).items()
                    if (n in protected and protected[n] != what) or n in BUILTIN_NAMES]
        if id(node) in top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [node.name] if node.name in protected or node.name in BUILTIN_NAMES else []
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)):
            targets = [node.target]
        found = []
        for sub in _flat_targets(targets):
            if (isinstance(sub, ast.Name) and (id(node) in top_level or sub.id in global_names)
                    and (sub.id in protected or sub.id in BUILTIN_NAMES)):
                found.append(sub.id)
        return found

    for node in ast.walk(tree):
        for name in rebinding(node):
            add(f"{where}: rebinds '{name}'")
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in ALLOWED_MODULES:
                    add(f"{where}: imports '{alias.name}'")
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            if node.level or top not in ALLOWED_MODULES:
                add(f"{where}: imports from '{'.' * node.level}{node.module or ''}'")
            if any(alias.name == "*" for alias in node.names):
                add(f"{where}: star import from '{node.module}'")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = (node.targets if isinstance(node, (ast.Assign, ast.Delete))
                       else [node.target])
            for sub in _flat_targets(targets):
                if isinstance(sub, (ast.Attribute, ast.Subscript)):
                    root = _root_name(sub)
                    if root in modules or root == "<call>" or root in BUILTIN_NAMES:
                        shown = sub.value if isinstance(sub, ast.Subscript) else sub
                        add(f"{where}: modifies '{_dotted(shown)}'")
        if isinstance(node, ast.Call) and id(node) not in allowed_ipython:
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                add(f"{where}: calls {func.id}()")
            if isinstance(func, ast.Attribute) and func.attr in (
                    "run_line_magic", "run_cell_magic", "system", "getoutput"):
                add(f"{where}: runs IPython magic or shell command")
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_ATTRS:
            add(f"{where}: uses '.{node.attr}'")
        if isinstance(node, ast.Name) and node.id in ("__builtins__", "__import__"):
            add(f"{where}: uses '{node.id}'")
    return reasons
