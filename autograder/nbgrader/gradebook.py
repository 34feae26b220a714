"""Import the headless autograder's results into a course's nbgrader gradebook.

    python -m autograder import-gradebook --assignment laplace --out OUT --course COURSE

``OUT`` is the output of ``python -m autograder grade`` (``grades.csv``,
``report.json``, ``feedback/``, and ``autograded/`` where the grader writes it);
``COURSE`` is the nbgrader course root the Formgrader serves (its
``gradebook.db``, ``submitted/`` from ``nbgrader collect``). Per graded student:

- the submission is created or updated in the gradebook (nbgrader's
  ``Gradebook.update_or_create_submission`` mirrors the assignment's notebooks and
  grade cells), with the timestamp of the collected submission;
- every test cell's ``auto_score`` is the autograder's final per-cell score from
  ``report.json`` (so the gradebook total equals ``grades.csv``), marked as not
  needing a manual grade unless a grader already entered one (nbgrader's own rule in
  ``SaveAutoGrades``); manual grading continues in the Formgrader, whose scores
  override;
- a submission whose status is ``flagged: ...`` or ``error: ...`` is flagged in the
  gradebook (the Formgrader shows the flag), the reason goes into the comment of the
  first solution cell (nbgrader keeps comments on solution cells only);
- ``OUT/autograded/<student>/<assignment>/*.ipynb`` becomes
  ``COURSE/autograded/<student>/<assignment>/`` (what the Formgrader opens for
  manual grading). When ``OUT`` has no ``autograded/`` (autograder versions before the
  trusted grader), the collected notebook from ``COURSE/submitted/`` is copied
  instead: the Formgrader then shows the student's code without test outputs;
- ``OUT/feedback/<student>/<assignment>/*.html`` (hidden tests removed) becomes
  ``COURSE/feedback/...`` next to the ``timestamp.txt`` and ``submission_secret.txt``
  of the collected submission, so ``nbgrader release_feedback`` works as usual.

Run it as the course account (the owner of ``gradebook.db``).
"""

from __future__ import annotations

import csv
import json
import shutil
import warnings
from datetime import datetime
from pathlib import Path

SIDE_FILES = ("timestamp.txt", "submission_secret.txt")


def _read_rows(out: Path, assignment: str) -> tuple[list[dict], dict]:
    grades, report = out / "grades.csv", out / "report.json"
    if not grades.is_file() or not report.is_file():
        raise FileNotFoundError(f"{out}: no grades.csv/report.json (run `python -m autograder grade` first)")
    with open(grades, newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["assignment"] == assignment]
    cells = {(s["student"], s["assignment"]): s.get("cells", [])
             for s in json.loads(report.read_text(encoding="utf-8"))["submissions"]}
    if not rows:
        raise ValueError(f"{grades} has no row for assignment {assignment!r}")
    return rows, cells


def _timestamp(folder: Path) -> datetime | None:
    from nbgrader.utils import parse_utc

    path = folder / "timestamp.txt"
    return parse_utc(path.read_text(encoding="utf-8").strip()) if path.is_file() else None


def _copy_side_files(src: Path, dest: Path) -> None:
    for name in SIDE_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, dest / name)


def import_results(course, out, assignment: str, course_id: str | None = None) -> list[dict]:
    """Write ``out``'s grades for ``assignment`` into ``course``'s gradebook.

    Returns one dict per student: ``student``, ``score`` (gradebook total after the
    import), ``expected`` (``grades.csv``), ``autograded`` (``"autograder"`` or
    ``"submitted copy"``), ``feedback`` (number of HTML files put in place).

    Raises ``FileNotFoundError`` when ``out`` is not an autograder output or the
    course has no gradebook, ``ValueError`` when the assignment is not in the
    gradebook (run ``nbgrader generate_assignment`` first) or a cell of the report
    is unknown to it.
    """
    from nbgrader.api import Gradebook, MissingEntry
    from sqlalchemy.exc import SAWarning

    course, out = Path(course), Path(out)
    db = course / "gradebook.db"
    if not db.is_file():
        raise FileNotFoundError(f"{db} not found: is {course} an nbgrader course root?")
    rows, cells_of = _read_rows(out, assignment)
    summary = []
    # nbgrader 0.9.6's add_submission triggers SQLAlchemy 2.x autoflush warnings (harmless)
    warnings.filterwarnings("ignore", category=SAWarning, module="nbgrader")
    with Gradebook(f"sqlite:///{db}", **({"course_id": course_id} if course_id else {})) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise ValueError(f"assignment {assignment!r} is not in {db}: run `nbgrader generate_assignment "
                             f"{assignment}` in {course} first") from None
        for row in rows:
            student = row["student"]
            submitted = course / "submitted" / student / assignment
            try:
                gb.find_student(student)
            except MissingEntry:
                gb.add_student(student)
            stamp = _timestamp(submitted)
            gb.update_or_create_submission(assignment, student, **({"timestamp": stamp} if stamp else {}))
            status = row["status"]
            problem = status if not status.startswith("ok") else None
            for cell in cells_of.get((student, assignment), []):
                notebook = Path(cell["notebook"]).stem
                try:
                    grade = gb.find_grade(cell["grade_id"], notebook, assignment, student)
                except MissingEntry:
                    raise ValueError(f"{student}: cell {cell['grade_id']!r} of {notebook} is not in the "
                                     f"gradebook's {assignment!r} (regenerate the assignment?)") from None
                grade.auto_score = float(cell["score"])
                grade.needs_manual_grade = grade.manual_score is not None
            for nb in gb.find_submission(assignment, student).notebooks:
                nb.flagged = problem is not None
                if problem and nb.comments:      # nbgrader keeps comments on solution cells
                    nb.comments[0].auto_comment = f"autograder: {problem}"
            gb.db.commit()

            dest = course / "autograded" / student / assignment
            source = out / "autograded" / student / assignment
            origin = "autograder" if source.is_dir() else "submitted copy"
            if not source.is_dir():
                source = submitted
            if source.is_dir():
                shutil.rmtree(dest, ignore_errors=True)
                dest.mkdir(parents=True)
                for nb in source.glob("*.ipynb"):
                    shutil.copy2(nb, dest / nb.name)
                _copy_side_files(submitted, dest)

            feedback_src = out / "feedback" / student / assignment
            feedback_dest = course / "feedback" / student / assignment
            html = sorted(feedback_src.glob("*.html")) if feedback_src.is_dir() else []
            if html:
                shutil.rmtree(feedback_dest, ignore_errors=True)
                feedback_dest.mkdir(parents=True)
                for path in html:
                    shutil.copy2(path, feedback_dest / path.name)
                _copy_side_files(submitted, feedback_dest)
            summary.append({"student": student, "expected": float(row["score"]),
                            "score": float(gb.find_submission(assignment, student).score),
                            "autograded": origin, "feedback": len(html)})
    return summary
