"""The graded assignments, through the real autograding path (issue 3).

* ``release/`` is what ``nbgrader generate_assignment`` makes of ``source/``;
* the source solutions score full marks and the release notebooks 0 (without
  crashing the grader);
* the corpus (``tests/corpus``): every differently written correct solution
  scores full marks, every realistic wrong one loses points, at least in the
  cells ``manifest.json`` names.

Each assignment is graded with ONE call of the trusted grader
(``build.grade``: student code in the bubblewrap sandbox, the source
notebook's tests in the trusted process) into a temporary folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build
from tests.support import classreport as checks_of_report

pytestmark = pytest.mark.nbgrader

#: Every released assignment. The issue-12 assignments keep their corpus tests in their own
#: files (tests/test_<assignment>.py); release, structure and headless runs are checked here.
RELEASED = build.ASSIGNMENTS + ("privacy_budget", "local_frequency")


def _comparable(path: Path) -> dict:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return nb


def test_release_is_up_to_date(tmp_path):
    release = build.generate_release(build.make_course(tmp_path, RELEASED))
    stale = []
    for assignment in RELEASED:
        fresh = build.notebook_path(release, assignment)
        committed = build.notebook_path(build.REPO / "release", assignment)
        if not committed.exists() or _comparable(fresh) != _comparable(committed):
            stale.append(assignment)
        # JupyterLab leaves .ipynb_checkpoints/ when a student opens a release notebook (git-ignored)
        extra = ({p.name for p in (build.REPO / "release" / assignment).iterdir()}
                 - {p.name for p in (release / assignment).iterdir()} - {".ipynb_checkpoints"})
        assert not extra, f"release/{assignment} holds files nbgrader does not make: {sorted(extra)}"
    assert not stale, (
        f"release/ is out of date with source/ for {stale}: run `.venv/bin/python -m tests.support.corpus release`"
    )


def test_release_has_no_solutions_or_hidden_tests():
    for assignment in RELEASED:
        text = build.notebook_path(build.REPO / "release", assignment).read_text(encoding="utf-8")
        for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "HIDDEN TESTS"):
            assert marker not in text, f"release/{assignment} still contains {marker!r}"
        assert "raise NotImplementedError()" in text


def test_points_add_up_and_cells_are_consistent():
    for assignment in RELEASED:
        nb = nbformat.read(build.notebook_path(build.REPO / "source", assignment), as_version=4)
        points = [c.metadata["nbgrader"]["points"] for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert sum(points) == 10, (assignment, points)
        assert len(points) >= 5, "partial credit needs several graded cells"
        solutions = build.solution_cell_ids(assignment, build.REPO / "source")
        assert solutions == list(build.load_manifest()[assignment]["correct"]), (assignment, solutions)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade"):
                # helpers.checks, or a checks module of its own (helpers.checks.private_mean, ...)
                assert re.search(r"^from helpers\.checks(\.\w+)? import", cell.source, re.M), \
                    f"{assignment}/{meta['grade_id']} must use helpers.checks"
        # The ε-slider cell must skip itself under nbgrader.
        assert any("NBGRADER_EXECUTION" in c.source for c in nb.cells if c.cell_type == "code")


def test_sections_are_numbered_in_order():
    """A student reads the numbered sections top to bottom: 1–2, 3, 4, 5, 6 (privacy_budget
    had its 6 before its 5)."""
    for assignment in RELEASED:
        nb = nbformat.read(build.notebook_path(build.REPO / "source", assignment), as_version=4)
        numbers = [int(m.group(1)) for c in nb.cells if c.cell_type == "markdown"
                   for m in re.finditer(r"^##\s+(\d+)", c.source, re.M)]
        assert numbers == sorted(numbers), (assignment, numbers)


def _source_solutions(assignment: str) -> dict[str, str]:
    nb = nbformat.read(build.notebook_path(build.REPO / "source", assignment), as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def _student_id(entry_id: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", entry_id.lower())


@pytest.mark.slow
@pytest.mark.parametrize("assignment", build.ASSIGNMENTS)
def test_source_release_and_corpus_through_autograde(assignment, tmp_path):
    entries = build.corpus_entries(assignment)
    manifest = build.load_manifest()[assignment]
    assert len(manifest["wrong"]) >= 10, "at least 10 realistic wrong solutions per assignment"
    for function, variants in manifest["correct"].items():
        assert len(variants) >= 3, f"at least 3 correct solutions of {function}"
    submissions = {"source_solution": _source_solutions(assignment), "release_blank": {}}
    for entry in entries:
        submissions[_student_id(entry["id"])] = entry["solutions"]
    results = build.grade(assignment, submissions, tmp_path / "course")

    problems = []
    source = results["source_solution"]
    if source["score"] is None or source["score"] != source["max_score"] or source["max_score"] != 10:
        problems.append(f"source solution scored {source['score']}/{source['max_score']}: {source['cells']}")
    blank = results["release_blank"]
    if blank["score"] is None:
        problems.append("the release notebook crashed the grader (no gradebook row)")
    elif blank["score"] != 0:
        problems.append(f"the release notebook scored {blank['score']} (expected 0): {blank['cells']}")
    autograded = tmp_path / "course" / "autograded" / "release_blank" / assignment / f"{assignment}.ipynb"
    if not autograded.exists():
        problems.append("the release notebook was not autograded")
    for entry in entries:
        got = results[_student_id(entry["id"])]
        if got["score"] is None:
            problems.append(f"{entry['id']}: crashed the grader")
        elif entry["kind"] == "correct":
            if got["score"] != got["max_score"]:
                lost = {k: v for k, v in got["cells"].items() if v == 0}
                problems.append(f"{entry['id']} ({entry['why']}) is correct but scored {got['score']}/{got['max_score']}; "
                                f"zero in {lost}: {got['status']} {got['messages']}")
        else:
            zero = [cell for cell in entry["expect_zero"] if got["cells"].get(cell) != 0]
            if got["score"] >= got["max_score"] or zero:
                problems.append(f"{entry['id']} ({entry['why']}) scored {got['score']}/{got['max_score']}; "
                                f"expected 0 in {entry['expect_zero']}, got {got['cells']}")
            # the function a message names as the mistake's place, through the sandbox's proxies too
            problems += build.naming_problems(entry, got["messages"])
            # What the student reads: a check's bilingual message (a crash of the check would not be).
            # Checked here for the corpus that test_checks.py does not also run directly (private_mean);
            # elsewhere a solution the sandbox refuses (importing helpers) leaves its function undefined.
            if assignment == "private_mean":
                problems += [f"{entry['id']}: {cell}: not a bilingual check message: {message[:200]}"
                             for cell, message in got["messages"].items()
                             if got["cells"].get(cell) == 0 and not any("\u4e00" <= ch <= "\u9fff" for ch in message)]
    # The class report `grade` wrote next to grades.csv agrees with grades.csv and report.json.
    problems += checks_of_report.report_problems(tmp_path / "course")
    assert not problems, "\n".join(problems)


@pytest.mark.notebook
@pytest.mark.parametrize("version", ["source", "release"])
def test_notebooks_run_headless_outside_nbgrader(version, monkeypatch):
    """As a student runs them: source notebooks run clean (ε-slider view included); in the
    release notebooks only the graded test cells fail (NotImplementedError), never the slider cell."""
    from tests.support.notebooks import run_notebook

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for assignment in RELEASED:
        path = build.notebook_path(build.REPO / version, assignment)
        nb = run_notebook(path, allow_errors=True).nb
        failing = [c.metadata.get("nbgrader", {}).get("grade_id", f"cell {i}") for i, c in enumerate(nb.cells)
                   if any(o.output_type == "error" for o in c.get("outputs", []))]
        graded = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert failing == ([] if version == "source" else graded), (assignment, failing)
        slider = nb.cells[-1]
        assert "NBGRADER_EXECUTION" in slider.source
        assert any(o.output_type == "display_data" for o in slider.outputs), f"{assignment}: no ε-slider view shown"
