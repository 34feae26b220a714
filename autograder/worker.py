"""A trusted grading worker: many students, one warm process, no student code.

``python -m autograder.worker`` reads one JSON line on stdin describing the
assignment (source and release notebooks, release data files, limits), then
one JSON task per line; it answers ``{"ready": true}`` and one
``{"index": i, "result": {...}}`` line per task on its original stdout
(everything else it or a library prints goes to stderr). For each task it
reads and sanitizes the notebooks, scores them with
:func:`autograder.scorer.score_submission` (the student's cells run in a
sandbox, the tests here), builds the executed notebook (student outputs from
the sandbox, test outputs from the trusted run, hidden tests absent) and the
feedback page. The parent validates every line before it becomes a row.
"""

from __future__ import annotations

import ast
import base64
import json
import os
import sys
import time
import traceback
from pathlib import Path

from autograder import scorer

#: Seconds a worker may take per submission beyond the notebooks' own limits.
SLACK = 60


def expected_cells(sources: dict) -> list[dict]:
    """``[{notebook, grade_id, points}]`` of every test cell, in order."""
    return [{"notebook": name, "grade_id": scorer.nbgrader_meta(c)["grade_id"],
             "points": float(scorer.nbgrader_meta(c).get("points") or 0)}
            for name, nb in sorted(sources.items()) for c in nb.cells if scorer.is_test(c)]


def _read(path: Path):
    from autograder import sanitize

    try:
        from autograder.students import read_regular
    except ImportError:  # TEMPORARY until trustio's students.py is merged (lead: remove)
        read_regular = None
    if read_regular is None:
        return sanitize.read_notebook(path)
    try:
        data = read_regular(path)
    except (OSError, ValueError) as exc:
        return None, f"notebook {path.name}: {exc}"
    import tempfile

    # sanitize.read_notebook takes a path: hand it the bytes we read, never the student's file again.
    with tempfile.NamedTemporaryFile(suffix=".ipynb") as handle:
        handle.write(data)
        handle.flush()
        nb, reason = sanitize.read_notebook(Path(handle.name))
    return nb, (reason.replace(Path(handle.name).name, path.name) if reason else None)


def _pick(folder: Path, expected: list[str]) -> dict:
    try:
        from autograder.students import pick_notebooks
    except ImportError:  # TEMPORARY until trustio's students.py is merged (lead: remove)
        found = sorted(p.name for p in folder.glob("*.ipynb"))
        out = {"notebooks": {}, "missing": [], "errors": [], "repairs": []}
        renames = {}
        if len(expected) == 1 and expected[0] not in found and len(found) == 1:
            renames[expected[0]] = found[0]
            out["repairs"].append(f"notebook '{found[0]}' graded as '{expected[0]}'")
        for name in expected:
            path = folder / renames.get(name, name)
            if path.is_symlink():
                out["errors"].append(f"symlinked notebook {name} refused (not followed)")
            elif not path.is_file():
                out["missing"].append(name)
                out["errors"].append(f"missing notebook {name}")
            else:
                out["notebooks"][name] = path
        return out
    return pick_notebooks(folder, expected)


def static_notes(name: str, student_nb, source_nb, release_nb) -> list[str]:
    """The static scan of the student's code: a note for the instructor, never points."""
    from autograder import astcheck
    from autograder.sanitize import normalize_source

    instructor = [scorer._text(c.source) for c in source_nb.cells  # noqa: SLF001
                  if c.cell_type == "code" and scorer.nbgrader_meta(c) and not scorer.nbgrader_meta(c).get("solution")]
    protected = astcheck.imported_names(instructor)
    shipped = {normalize_source(c.source) for c in release_nb.cells
               if c.cell_type == "code" and not scorer.nbgrader_meta(c)}
    flags = []
    for index, cell in enumerate(student_nb.cells):
        meta = scorer.nbgrader_meta(cell)
        if cell.cell_type != "code" or (meta and not meta.get("solution")):
            continue
        if not meta and normalize_source(cell.source) in shipped:
            continue
        try:
            flags += astcheck.inspect_code(cell.source, protected, where=f"{Path(name).stem} cell {index + 1}")
        except (RecursionError, MemoryError, ValueError):
            flags.append(f"{Path(name).stem} cell {index + 1}: could not be parsed")
    return flags


def similarity(student_nb) -> list[dict]:
    """Similarity of each solution function to :mod:`helpers.mechanisms` (a note, never points)."""
    functions = {}
    for cell in student_nb.cells:
        if cell.cell_type != "code" or not scorer.nbgrader_meta(cell).get("solution"):
            continue
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                functions[node.name] = ast.get_source_segment(cell.source, node) or ""
    try:
        from helpers.checks import copy_report

        return [row for row in copy_report(functions) if row.get("similarity") is not None]
    except Exception:  # noqa: BLE001 - a note only
        return []


def executed_notebook(student_nb, scored: dict):
    """The sanitized notebook with the sandbox's outputs (student cells) and the trusted ones (tests)."""
    import copy

    import nbformat

    nb = copy.deepcopy(student_nb)
    tests = {t["grade_id"]: t for t in scored["tests"]}
    count = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        outputs = []
        if scorer.is_test(cell):
            test = tests.get(scorer.nbgrader_meta(cell).get("grade_id"))
            if test is None:
                continue
            for block in test["outputs"]:
                if block["text"] and not block["hidden"]:
                    outputs.append(nbformat.v4.new_output("stream", name="stdout", text=block["text"]))
            error = test["error"]
            if error:
                where = " (in a hidden test / 隐藏测试)" if test["hidden_failed"] else ""
                outputs.append(nbformat.v4.new_output("error", ename=error["ename"], evalue=error["evalue"],
                                                      traceback=[f"{error['ename']}{where}: {error['evalue']}"]))
            cell.metadata.setdefault("autograder", {}).update(score=test["score"], points=test["points"])
        else:
            report = scored["student_cells"].get(index)
            if report is None:
                continue
            for stream in ("stdout", "stderr"):
                if report[stream]:
                    outputs.append(nbformat.v4.new_output("stream", name=stream, text=report[stream]))
            if report["error"]:
                e = report["error"]
                outputs.append(nbformat.v4.new_output("error", ename=e["ename"], evalue=e["evalue"],
                                                      traceback=[e["traceback"] or f"{e['ename']}: {e['evalue']}"]))
        count += 1
        cell.execution_count = count
        cell.outputs = outputs
    return nb


_EXPORTER = None


def feedback_page(nb, hidden: list[str]) -> tuple[str | None, str | None]:
    """``(html, None)`` or ``(None, why it is withheld)``."""
    from autograder import feedback

    if hasattr(feedback, "feedback_html"):
        try:
            return feedback.feedback_html(nb, hidden), None
        except ValueError as exc:  # feedback.FeedbackWithheld
            return None, f"feedback withheld: {str(exc)[:200]}"
    # TEMPORARY until trustio's feedback.py is merged (lead: remove): nbconvert's sanitizer.
    import html
    import re

    from nbconvert import HTMLExporter

    global _EXPORTER
    if _EXPORTER is None:
        _EXPORTER = HTMLExporter(sanitize_html=True)
    page, _ = _EXPORTER.from_notebook_node(nb)
    text = re.sub(r"\s+", "", html.unescape(re.sub(r"<[^>]+>", "", page)))
    if any(re.sub(r"\s+", "", line) in text for line in hidden):
        return None, "feedback withheld: a hidden test would be visible"
    return page, None


def grade_one(task: dict, spec: dict) -> dict:
    """Grade one submission; always returns a JSON-able result."""
    import nbformat

    from autograder import feedback, sanitize

    started = time.monotonic()
    result = {"cells": [], "errors": [], "flags": [], "repairs": [], "notes": [], "similarity": [],
              "timings": {}, "feedback": {}, "autograded": {}}
    scores = {}
    try:
        folder = Path(task["path"])
        picked = _pick(folder, sorted(spec["sources"]))
        for key in ("errors", "repairs"):
            result[key] += picked[key]
        for name, path in sorted(picked["notebooks"].items()):
            student, reason = _read(path)
            if student is None:
                result["errors"].append(reason)
                continue
            source, release = spec["sources"][name], spec["releases"][name]
            try:
                nb, issues = sanitize.sanitize_notebook(student, release, name=Path(name).stem)
            except Exception as exc:  # noqa: BLE001 - nbformat accepted it, we cannot rebuild it
                result["errors"].append(f"malformed notebook {name} ({type(exc).__name__})")
                continue
            result["flags"] += issues.flags
            result["repairs"] += issues.repairs
            result["errors"] += issues.errors
            result["flags"] += static_notes(name, nb, source, release)
            result["similarity"] += similarity(nb)
            scored = scorer.score_submission(
                nb, source, seed=task["seed"], timeout=spec["timeout"], memory_mb=spec["memory_mb"],
                sandboxed=spec["sandboxed"], files=spec["files"], submission_seconds=spec["submission_seconds"])
            result["errors"] += scored["problems"]
            result["notes"] += scored["notes"]
            result["timings"][name] = scored["timings"]
            for test in scored["tests"]:
                scores[(name, test["grade_id"])] = (test["score"], test["error"])
            executed = executed_notebook(nb, scored)
            result["autograded"][name] = nbformat.writes(executed)
            hidden = [line for c in source.cells if c.cell_type == "code"
                      for line in feedback.hidden_lines(scorer._text(c.source))]  # noqa: SLF001
            page, why = feedback_page(executed, hidden)
            if page is None:
                result["errors"].append(why)
            else:
                result["feedback"][name] = page
    except Exception:  # noqa: BLE001 - one broken submission must not stop the batch
        result["errors"].append("autograder: " + traceback.format_exc().strip().splitlines()[-1][:200])
    for cell in expected_cells(spec["sources"]):
        score, error = scores.get((cell["notebook"], cell["grade_id"]), (0.0, None))
        cell.update(score=score, message=(f"{error['ename']}: {error['evalue']}"[:2000] if error else None))
        result["cells"].append(cell)
    for row in result["similarity"]:
        if row.get("flagged"):
            result["notes"].append(f"{row['function']} looks copied from helpers.mechanisms "
                                   f"(similarity {row['similarity']})")
    result["seconds"] = round(time.monotonic() - started, 3)
    return result


def load_spec(line: str) -> dict:
    import nbformat

    spec = json.loads(line)
    spec["sources"] = {k: nbformat.reads(v, as_version=4) for k, v in spec["sources"].items()}
    spec["releases"] = {k: nbformat.reads(v, as_version=4) for k, v in spec["releases"].items()}
    spec["files"] = {k: base64.b64decode(v) for k, v in spec["files"].items()}
    return spec


def main() -> None:
    # Results go to the original stdout; anything else printed goes to stderr.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import helpers.checks  # noqa: F401  (warm the imports before the first task)
    import IPython.core.inputtransformer2  # noqa: F401

    spec = load_spec(sys.stdin.readline())
    protocol.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        task = json.loads(line)
        result = grade_one(task, spec)
        protocol.write(json.dumps({"index": task["index"], "result": result}, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()
