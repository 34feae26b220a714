"""Imports run one way: the layers of ``helpers`` and the rooms of ``autograder``, with no cycle;
and no module of either is longer than :data:`MAX_MODULE_LINES`.

Every ``import`` of ``helpers/`` and ``autograder/`` is read with :mod:`ast`, at module level and
inside functions alike (a function-local import is still an edge: hiding a cycle in a function
does not remove it). Nothing is imported or executed, so the test costs well under a second.

``helpers``, bottom to top (a module may import its own layer and the layers below):

0. ``helpers._validation``, ``helpers.i18n``, ``helpers.fonts``;
1. the DP library (every other module of ``helpers``, and the package itself);
2. ``helpers.checks`` (the judge's checks: may use the library);
3. ``helpers.lectures`` (figures and sliders: may use both).

``autograder``, bottom to top, named by room: the channel and plain readers, the jail, rendering
and the trusted side of a call, the scorer, the worker, reports, the batch grader, and the entry
points (nbgrader adapters, bundle, bench, CLI). ``autograder`` may use ``helpers`` up to the checks,
never the lectures; ``helpers`` never imports ``autograder``; ``autograder.sandbox`` (which runs
inside the sandbox, where the project cannot be imported) imports nothing of either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("helpers", "autograder")

HELPERS_LAYERS = (
    ("bottom", ("helpers._validation", "helpers.i18n", "helpers.fonts")),
    ("library", ("helpers",)),
    ("checks", ("helpers.checks",)),
    ("lectures", ("helpers.lectures",)),
)
AUTOGRADER_LAYERS = (
    ("channel and readers", ("autograder.sandbox", "autograder.cells", "autograder.students", "autograder.astcheck",
                             "autograder.corpus", "autograder.hostcheck")),
    ("jail", ("autograder.jail",)),
    ("render and calls", ("autograder.render", "autograder.sanitize", "autograder.served", "autograder.standins",
                          "autograder.proxy")),
    ("scorer", ("autograder.scorer",)),
    ("worker", ("autograder.worker",)),
    ("reports", ("autograder.reports",)),
    ("batch grader", ("autograder.grade",)),
    ("entry points", ("autograder.nbgrader", "autograder.bundle", "autograder.dist", "autograder.bench",
                      "autograder.lms", "autograder.__main__", "autograder")),
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(imported project module, line) for every import statement of ``path``, wherever it stands.

    ``from a.b import c`` is an edge to ``a.b.c`` when that is a module, else to ``a.b``; relative
    imports are resolved against ``name``.
    """
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] not in PACKAGES:
                continue
            while target not in known and "." in target:  # import a.b.c.name -> module a.b.c
                target = target.rsplit(".", 1)[0]
            found.append((target, node.lineno))
    return found


MODULES = _modules()
EDGES = {name: _imports(name, path, set(MODULES)) for name, path in MODULES.items()}


#: Listed names that stand for themselves only, not for the modules under them: a new module of
#: ``autograder`` must be given a room here (else it would land among the entry points unseen).
EXACT = {"autograder"}


def _layer(name: str, layers) -> tuple[int, str]:
    """Index and name of the layer holding ``name``: the longest prefix listed wins."""
    best = None
    for index, (layer, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if name == prefix or (prefix not in EXACT and name.startswith(prefix + ".")):
                if best is None or len(prefix) > best[2]:
                    best = (index, layer, len(prefix))
    assert best is not None, f"{name} is in no layer: add it to this test's table"
    return best[0], best[1]


def _upward(layers, package: str) -> list[str]:
    bad = []
    for name, edges in EDGES.items():
        if name.split(".")[0] != package:
            continue
        mine, my_layer = _layer(name, layers)
        for target, line in edges:
            if target.split(".")[0] != package:
                continue
            theirs, their_layer = _layer(target, layers)
            if theirs > mine:
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line}: {name} ({my_layer}) imports {target} "
                           f"({their_layer}, a higher layer)")
    return bad


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name, HELPERS_LAYERS if name.startswith("helpers") else AUTOGRADER_LAYERS)


@pytest.mark.parametrize("package, layers", [("helpers", HELPERS_LAYERS), ("autograder", AUTOGRADER_LAYERS)])
def test_no_upward_import(package, layers):
    assert not _upward(layers, package), "\n".join(_upward(layers, package))


def test_packages_import_each_other_one_way():
    bad = []
    for name, edges in EDGES.items():
        for target, line in edges:
            where = f"{MODULES[name].relative_to(ROOT)}:{line}: {name} imports {target}"
            if name.startswith("helpers") and target.startswith("autograder"):
                bad.append(where + " (the course's library never depends on the grader)")
            if name.startswith("autograder") and target.startswith("helpers.lectures"):
                bad.append(where + " (the grader uses the library and the checks, not the lectures)")
            if name.startswith("autograder.sandbox"):
                bad.append(where + " (the sandbox runs where the project cannot be imported)")
    assert not bad, "\n".join(bad)


def _test_suite_imports(path: Path) -> list[int]:
    """Lines of ``path`` that import the test suite (``tests`` or ``tests.*``), wherever they stand."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        if any(n == "tests" or n.startswith("tests.") for n in names):
            lines.append(node.lineno)
    return lines


def test_the_product_never_imports_the_test_suite(tmp_path):
    """helpers/, autograder/, course/, hub/, slides/, docs/ run where tests/ may not exist (issue 36)."""
    bad = [f"{p.relative_to(ROOT)}:{line}" for folder in ("helpers", "autograder", "course", "hub", "slides", "docs")
           for p in sorted((ROOT / folder).rglob("*.py")) for line in _test_suite_imports(p)]
    assert not bad, "imports of the test suite: " + ", ".join(bad)
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tests.support import corpus\n", encoding="utf-8")
    assert _test_suite_imports(probe) == [2]


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module, or a module importing itself (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _ in EDGES.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or any(t == v for t, _ in EDGES.get(v, [])):
                found.append(sorted(component))

    for v in sorted(EDGES):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    cycles = _cycles()
    detail = []
    for component in cycles:
        members = set(component)
        detail.append(" <-> ".join(component) + ": " + "; ".join(
            f"{MODULES[a].relative_to(ROOT)}:{line} imports {b}"
            for a in component for b, line in EDGES[a] if b in members))
    assert not cycles, "\n".join(detail)


def test_the_test_sees_function_level_imports_and_cycles(tmp_path, monkeypatch):
    """The checks above can fail: a function-local import that closes a cycle, and an upward one."""
    fake = {"helpers.mechanisms": "def f():\n    from helpers.lectures.plots import label\n",
            "helpers.lectures.plots": "from helpers import mechanisms\n"}
    edges = {}
    for name, text in fake.items():
        path = tmp_path / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    known = set(MODULES) | set(fake)
    for name in fake:
        edges[name] = _imports(name, tmp_path / (name.replace(".", "/") + ".py"), known)
    assert edges["helpers.mechanisms"] == [("helpers.lectures.plots", 2)]
    assert edges["helpers.lectures.plots"] == [("helpers.mechanisms", 1)]
    monkeypatch.setitem(EDGES, "helpers.mechanisms", edges["helpers.mechanisms"])
    monkeypatch.setitem(EDGES, "helpers.lectures.plots", edges["helpers.lectures.plots"])
    assert ["helpers.lectures.plots", "helpers.mechanisms"] in _cycles()
    assert any("helpers.mechanisms (library) imports helpers.lectures.plots" in b for b in _upward(HELPERS_LAYERS, "helpers"))


#: The longest a module of ``helpers`` or ``autograder`` may grow (issue 27): past it, split it by job,
#: as helpers/checks/private_mean/ and helpers/checks/privacy_budget/ are.
MAX_MODULE_LINES = 700


#: Every folder of the product whose Python modules the size rule covers (issue 34: the builds too).
SIZED_FOLDERS = ("helpers", "autograder", "course", "slides", "docs", "hub")


def test_no_module_is_longer_than_the_limit():
    long = {str(path.relative_to(ROOT)): n for folder in SIZED_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
            if "node_modules" not in path.parts
            and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by what they hold): {long}"


#: The course build (course/builder/), each module importing only those before it.
BUILDER_LAYERS = ("teaching_plan", "source", "typography", "generated", "notebooks")


def test_the_course_build_imports_one_way():
    bad = []
    for index, name in enumerate(BUILDER_LAYERS):
        path = ROOT / "course" / "builder" / f"{name}.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
                bad += [f"{name} imports {t}" for t in targets
                        if t not in BUILDER_LAYERS or BUILDER_LAYERS.index(t) >= index]
    assert not bad, "course/builder/ imports up or sideways: " + "; ".join(bad)
    assert sorted(p.stem for p in (ROOT / "course" / "builder").glob("*.py")) == sorted([*BUILDER_LAYERS, "__init__"])
