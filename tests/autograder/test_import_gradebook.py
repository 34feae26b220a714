"""``python -m autograder import-gradebook``: the gradebook's scores equal grades.csv (issue 11).

A course root as the Formgrader sees it (``generate_assignment``, two collected
submissions in ``submitted/`` with nbgrader's timestamp and secret files), graded
headless with ``python -m autograder grade``, imported into ``gradebook.db``; then
nbgrader's own tools read the result: the Gradebook API (total and per-cell scores),
``nbgrader export`` (the CSV instructors download) and ``nbgrader release_feedback``.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow]

ASSIGNMENT = "laplace"
STUDENTS = {
    "alice": {"laplace_noise": "inverse_cdf", "laplace_mechanism": "vectorized"},        # 10/10
    "bob": {"laplace_noise": "inverse_cdf", "laplace_mechanism": "eps_over_delta"},      # scale ε/Δ: 8/10
}


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, env=build.nbgrader_env(),
                          capture_output=True, text=True, check=True)


def test_import_gradebook_matches_grades_csv(tmp_path, generated_laplace):
    from nbgrader.api import Gradebook

    course = shutil.copytree(generated_laplace, tmp_path / "course")   # after generate_assignment
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    env = build.nbgrader_env(NBGRADER_EXCHANGE=str(exchange))
    for number, (student, variants) in enumerate(STUDENTS.items()):
        folder = course / "submitted" / student / ASSIGNMENT
        solutions = {f: build.snippet(ASSIGNMENT, f, v) for f, v in variants.items()}
        build.make_submission(ASSIGNMENT, solutions, folder / f"{ASSIGNMENT}.ipynb")
        (folder / "timestamp.txt").write_text(f"2026-11-23 20:0{number}:00.000000 UTC")
        (folder / "submission_secret.txt").write_text(f"secret-{student}")

    out = tmp_path / "out"
    _run("grade", "--assignment", ASSIGNMENT, "--submissions", str(course / "submitted"), "--out", str(out),
         "--jobs", "2", "--course", str(course), "--quiet", cwd=course)
    result = _run("import-gradebook", "--assignment", ASSIGNMENT, "--out", str(out), "--course", str(course),
                  cwd=course)
    print(result.stdout)

    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        expected = {r["student"]: float(r["score"]) for r in csv.DictReader(handle)}
    assert expected == {"alice": 10.0, "bob": 8.0}, expected
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student, score in expected.items():
            submission = gb.find_submission(ASSIGNMENT, student)
            assert submission.score == pytest.approx(score), student
            assert submission.max_score == 10
            assert not submission.needs_manual_grade
            assert str(submission.timestamp).startswith("2026-11-23 20:0")
        # per cell: bob loses exactly the 2-point distribution cell of the mechanism
        bob = gb.find_grade("test_laplace_mechanism_distribution", ASSIGNMENT, ASSIGNMENT, "bob")
        assert bob.score == 0 and bob.max_score == 2

    exported = course / "export.csv"
    build.run_nbgrader(course, "export", f"--to={exported}", env=env)
    with open(exported, newline="", encoding="utf-8") as handle:
        rows = {r["student_id"]: float(r["score"]) for r in csv.DictReader(handle)}
    assert rows == expected

    for student in STUDENTS:
        assert (course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()
        assert (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()
    # release_feedback needs the collected submission's timestamp and secret next to the HTML
    build.run_nbgrader(course, "release_feedback", ASSIGNMENT, env=env)
    released = list(exchange.rglob("*.html"))
    assert len(released) == len(STUDENTS), released

    # a second import (re-grade) updates instead of duplicating
    _run("import-gradebook", "--assignment", ASSIGNMENT, "--out", str(out), "--course", str(course), cwd=course)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert len(gb.find_assignment(ASSIGNMENT).submissions) == 2

    # issue 19: the worker recorded the check's diagnosis id; grades_by_question.csv; the class report
    import json

    from autograder.reports.classreport import build_report

    cells = {c["grade_id"]: c for c in next(r for r in json.loads((out / "report.json").read_text())["submissions"]
                                              if r["student"] == "bob")["cells"]}
    assert cells["test_laplace_mechanism_distribution"]["diagnosis"] == "laplace.scale_inverted"
    assert all(c["diagnosis"] is None for g, c in cells.items() if c["score"] == c["points"])
    with open(out / "grades_by_question.csv", newline="", encoding="utf-8") as handle:
        by_question = {(r["student"], r["cell"]): (float(r["score"]), float(r["max"])) for r in csv.DictReader(handle)}
    assert by_question[("bob", "test_laplace_mechanism_distribution")] == (0.0, 2.0)
    assert {s: sum(v[0] for k, v in by_question.items() if k[0] == s) for s in STUDENTS} == expected
    assert (out / "class_report.html").stat().st_mode & 0o077 == 0  # instructors only
    # a manual grade in the Formgrader: the report built with --gradebook uses it and says so
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.find_grade("test_laplace_mechanism_distribution", ASSIGNMENT, ASSIGNMENT, "bob").manual_score = 1.5
        gb.db.commit()
    _run("report", str(out), "--out", str(tmp_path / "final.html"), "--gradebook", str(course / "gradebook.db"),
         cwd=course)
    page = (tmp_path / "final.html").read_text(encoding="utf-8")
    assert "after manual grading" in page and "1 manually graded cells" in page
    final = build_report([out], tmp_path / "again.html", gradebook=course / "gradebook.db")["summary"][ASSIGNMENT]
    assert dict(zip(final["students"], final["scores"])) == {"alice": 10.0, "bob": 9.5}
    auto = build_report([out], tmp_path / "auto.html")["summary"][ASSIGNMENT]
    assert dict(zip(auto["students"], auto["scores"])) == expected


def test_import_flags_and_prefers_autograded_notebooks(tmp_path, generated_laplace):
    """A hand-written grader output: a flagged row, OUT/autograded present, an unknown cell."""
    import json

    import nbformat
    from nbgrader.api import Gradebook

    course = shutil.copytree(generated_laplace, tmp_path / "course")   # after generate_assignment
    release = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    tests = [(c.metadata.nbgrader["grade_id"], c.metadata.nbgrader["points"]) for c in release.cells
             if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")]
    out = tmp_path / "out"
    (out / "autograded" / "carol" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(release, out / "autograded" / "carol" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    cells = [{"notebook": f"{ASSIGNMENT}.ipynb", "grade_id": gid, "points": pts, "score": pts if i else 0}
             for i, (gid, pts) in enumerate(tests)]
    total = sum(c["score"] for c in cells)
    status = "flagged: patches helpers.checks"
    (out / "grades.csv").write_text(f"student,assignment,score,max_score,status\ncarol,{ASSIGNMENT},{total},10,"
                                    f"{status}\n", encoding="utf-8")
    (out / "report.json").write_text(json.dumps({"runs": [], "submissions": [
        {"student": "carol", "assignment": ASSIGNMENT, "cells": cells}]}), encoding="utf-8")

    from autograder.nbgrader.gradebook import import_results

    [row] = import_results(course, out, ASSIGNMENT)
    assert row == {"student": "carol", "expected": total, "score": total, "autograded": "autograder",
                   "feedback": 0}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        [notebook] = gb.find_submission(ASSIGNMENT, "carol").notebooks
        assert notebook.flagged
        assert any(status in (c.auto_comment or "") for c in notebook.comments)
    assert (course / "autograded" / "carol" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").is_file()

    cells[0]["grade_id"] = "no_such_cell"
    (out / "report.json").write_text(json.dumps({"runs": [], "submissions": [
        {"student": "carol", "assignment": ASSIGNMENT, "cells": cells}]}), encoding="utf-8")
    with pytest.raises(ValueError, match="no_such_cell"):
        import_results(course, out, ASSIGNMENT)
    with pytest.raises(ValueError, match="no row for assignment"):
        import_results(course, out, "exponential")
