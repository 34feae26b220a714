"""Copied solutions: normalized syntax trees compared with the reference in
:mod:`helpers.mechanisms` and with each other (a note for the instructor, never points).
"""

from __future__ import annotations

import ast
import difflib
import textwrap
from typing import Callable

from helpers.checks.forbidden import _function_source
import helpers.mechanisms as mechanisms

# --- copied solutions ----------------------------------------------------------


def _is_validation(stmt: ast.stmt) -> bool:
    """``if ...: raise``, ``raise``, a call of a ``check_*`` validator, or ``func = "name"``."""
    if isinstance(stmt, ast.Raise):
        return True
    if isinstance(stmt, ast.If) and all(isinstance(s, ast.Raise) for s in stmt.body) and not stmt.orelse:
        return True
    if isinstance(stmt, ast.For) and all(_is_validation(s) for s in stmt.body):
        return True
    value = getattr(stmt, "value", None)
    if isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(value, ast.Call):
        callee = value.func.id if isinstance(value.func, ast.Name) else getattr(value.func, "attr", "")
        return callee.startswith(("check_", "_check"))
    if isinstance(stmt, ast.Assign) and isinstance(value, ast.Constant) and isinstance(value.value, str):
        return True
    return False


class _Normalizer(ast.NodeTransformer):
    """Rename identifiers by order of appearance and drop docstrings."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _rename(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node):
        node.name = "f"
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        # Parameter validation is written differently by everyone (and the
        # reference's uses helpers' own validators): compare the rest.
        body = [stmt for stmt in body if not _is_validation(stmt)]
        node.body = body or [ast.Pass()]
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_arg(self, node):
        node.arg = self._rename(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node):
        node.id = self._rename(node.id)
        return node

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            node.value = "s"
        return node


def _normalized_tokens(func_or_source: Callable | str) -> list[str] | None:
    source = func_or_source if isinstance(func_or_source, str) else _function_source(func_or_source)
    if source is None:
        return None
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    tree = _Normalizer().visit(tree)
    tokens = []
    for node in ast.walk(tree):
        token = type(node).__name__
        if isinstance(node, ast.Name):
            token += ":" + node.id
        elif isinstance(node, ast.Attribute):
            token += ":" + node.attr
        elif isinstance(node, ast.Constant):
            token += ":" + repr(node.value)
        elif isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp)):
            token += ":" + type(getattr(node, "op", getattr(node, "ops", [None])[0] if hasattr(node, "ops") else None)).__name__
        tokens.append(token)
    return tokens


def similarity_to_reference(func: Callable | str, reference: Callable | str | None = None, name: str | None = None) -> float | None:
    """Similarity in [0, 1] between ``func`` and the reference solution.

    Both syntax trees are normalized (identifiers renamed by order of first
    appearance, docstrings, annotations and string constants dropped) and
    their node sequences compared with :class:`difflib.SequenceMatcher`.
    ``reference`` defaults to the function of the same name in
    :mod:`helpers.mechanisms`; ``func`` may be source text, then ``name``
    says which reference to use. Returns ``None`` when a source is
    unavailable. Scores of 0.9 and above on functions of more than ~40
    nodes mean "very probably copied"; short functions (a one-line formula)
    look alike whoever writes them, so their score proves nothing.
    """
    if reference is None:
        ref_name = name or getattr(func, "__name__", None)
        reference = getattr(mechanisms, ref_name, None) if ref_name else None
        if reference is None:
            return None
    a = _normalized_tokens(func)
    b = _normalized_tokens(reference)
    if a is None or b is None:
        return None
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def copy_report(functions: dict[str, Callable | str], threshold: float = 0.9, min_nodes: int = 40) -> list[dict]:
    """One row per function: similarity to :mod:`helpers.mechanisms` and whether to flag it.

    ``functions`` maps a graded function name to the student's function or
    its source. A row is flagged when the similarity is at least
    ``threshold`` and the function has at least ``min_nodes`` syntax-tree
    nodes. ``fingerprint`` is a digest of the normalized syntax tree: two students' functions
    with the same fingerprint differ only in names, comments, docstrings and strings (the class
    report groups them). Meant for the instructor's report, never to deduct points.
    """
    import hashlib

    rows = []
    for name, func in functions.items():
        score = similarity_to_reference(func, name=name)
        tokens = _normalized_tokens(func) or []
        rows.append({
            "function": name,
            "similarity": None if score is None else round(score, 3),
            "nodes": len(tokens),
            "flagged": bool(score is not None and score >= threshold and len(tokens) >= min_nodes),
            "fingerprint": hashlib.sha256("\n".join(tokens).encode("utf-8", "surrogatepass")).hexdigest()[:16],
        })
    return rows
