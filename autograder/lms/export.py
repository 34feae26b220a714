"""``export-grades``: a grade run's ``grades.csv`` and feedback, in the forms an LMS imports.

Written to ``OUT/lms/`` (``OUT`` is the folder of ``grade``):

``plain``
    ``成绩_<assignment>.csv``: ``学号,成绩`` in UTF-8 with a BOM (Excel and WPS on Windows read a
    CSV without BOM as GBK and show Chinese as mojibake), for 学习通, 雨课堂 and any gradebook
    that takes a two-column table.
``moodle``
    ``moodle_<assignment>.csv``, Moodle's grading worksheet ("Upload grading worksheet";
    ``mod/assign/feedback/offline/importgradeslib.php`` needs the columns ``Identifier``
    (``Participant <id>``), ``Grade`` and ``Last modified (grade)``). With ``--roster`` set to
    the worksheet downloaded from the same assignment, that file is copied with only its
    ``Grade`` column filled (its other columns, language and "last modified" times are Moodle's
    own, so Moodle's check against overwriting newer grades still works); without it, the
    participant ids come from ``import-submissions``' manifest. Also
    ``moodle_feedback_<assignment>.zip`` for "Upload multiple feedback files in a zip": one
    folder ``<name>_<participant id>_assignfeedback_file_`` per student, the form
    ``mod/assign/feedback/file/importziplib.php`` matches.
``canvas``
    ``canvas_<assignment>.csv`` for the Gradebook's "Import": ``Student, ID, SIS User ID,
    SIS Login ID, Section`` and the assignment's column (Canvas's own export puts
    ``<title> (<assignment id>)``; ``--column`` names it, else the roster's column that starts
    with the assignment's name, else the assignment's name, which Canvas offers to create), with
    the ``Points Possible`` row of Canvas's export. Canvas matches rows by ``ID`` (its user id):
    from ``--roster`` (the gradebook export) or the import's manifest.

In every form, each student's feedback page is copied to ``feedback/<学号>_<assignment>_feedback.html``
(the file the lecturer uploads as feedback). Students of ``grades.csv`` that a form cannot name
(no participant or Canvas id) are listed in the result, not dropped silently.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import zipfile
from datetime import datetime
from pathlib import Path

from autograder.lms.roster import columns, lms_number, read_roster, read_table
from autograder.reports.report import csv_field, read_grades, write_atomic

FORMATS = ("plain", "moodle", "canvas")
#: Student ids that can start a file name: no path separator, no control character, no leading dot.
FILE_SAFE = re.compile(r"^(?!\.)[^/\\\x00-\x1f\x7f]{1,100}$")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


def _table(header, rows, guard: bool = True) -> str:
    """CSV text with a BOM; ``guard`` prefixes formula-like fields with ``'`` (off for an LMS's own file
    written back verbatim: Moodle reads its ``-`` as "never modified", not ``'-``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_field(str(v)) if guard and isinstance(v, str) else v for v in row])
    return "\ufeff" + buffer.getvalue()


def _manifest(submissions: Path | None, assignment: str) -> dict[str, dict]:
    """``{student: placed row}`` of ``import-submissions``' manifest for ``assignment``, if any."""
    if submissions is None:
        return {}
    path = Path(submissions) / f"import_{assignment}.json"
    if not path.is_file():
        return {}
    return {row["student"]: row for row in json.loads(path.read_text(encoding="utf-8")).get("placed", [])}


def _feedback(out: Path, dest: Path, student: str, assignment: str) -> list[Path]:
    """Copy ``OUT/feedback/<student>/<assignment>/*.html`` to
    ``dest/feedback/<student>_<assignment>[_<nb>]_feedback.html``."""
    pages = sorted((out / "feedback" / student / assignment).glob("*.html"))
    copied = []
    for page in pages:
        name = f"{student}_{assignment}_feedback.html" if len(pages) == 1 else \
            f"{student}_{assignment}_{page.stem}_feedback.html"
        target = dest / "feedback" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target)
        copied.append(target)
    return copied


def _moodle(rows, assignment, dest, roster, imported, scale) -> tuple[Path, list[str]]:
    unmatched = []
    by_student = {r["student"]: r for r in rows}
    path = dest / f"moodle_{assignment}.csv"
    if roster:
        header, table = read_table(roster)
        cols = columns(header)
        grade_col = next((h for h in header if h.strip().lower() in ("grade", "成绩")), None)
        if "lms_id" not in cols or grade_col is None:
            raise ValueError(f"{roster} is not a Moodle grading worksheet (needs Identifier and Grade columns)")
        participant = {row.get("lms_id"): s for s, row in imported.items()}
        seen = set()
        for row in table:
            pid = lms_number(row.get(cols["lms_id"]))
            student = participant.get(pid)
            if student is None and "student" in cols:
                student = (row.get(cols["student"]) or "").strip() or None
            if student in by_student:
                row[grade_col] = _number(scale(by_student[student]))
                seen.add(student)
        unmatched = sorted(set(by_student) - seen)
        write_atomic(path, _table(header, [[row.get(h, "") for h in header] for row in table], guard=False))
    else:
        now = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
        out_rows = []
        for student, r in sorted(by_student.items()):
            pid = (imported.get(student) or {}).get("lms_id") if (imported.get(student) or {}).get("lms") == "moodle" \
                else None
            if pid is None:
                unmatched.append(student)
                continue
            name = (imported[student].get("name") or student)
            out_rows.append([f"Participant {pid}", name, _number(scale(r)), _number(scale(r, True)), now, ""])
        write_atomic(path, _table(["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)",
                                   "Feedback comments"], out_rows))
    return path, unmatched


def _moodle_feedback_zip(dest, assignment, rows, imported, roster) -> Path | None:
    ids = {s: r["lms_id"] for s, r in imported.items() if r.get("lms") == "moodle"}
    if roster:
        for entry in read_roster(roster):
            if entry.student and entry.lms_id:
                ids.setdefault(entry.student, entry.lms_id)
    entries = []
    for r in rows:
        page = dest / "feedback" / f"{r['student']}_{assignment}_feedback.html"
        if r["student"] in ids and page.is_file():
            name = re.sub(r"[_/\\]", " ", str((imported.get(r["student"]) or {}).get("name") or r["student"]))
            entries.append((f"{name}_{ids[r['student']]}_assignfeedback_file_/{page.name}", page))
    if not entries:
        return None
    path = dest / f"moodle_feedback_{assignment}.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, page in entries:
            archive.write(page, arcname)
    return path


def _canvas(rows, assignment, dest, roster, imported, scale, column) -> tuple[Path, list[str]]:
    by_student = {r["student"]: r for r in rows}
    entries = read_roster(roster) if roster else []
    by_canvas = {e.lms_id: e for e in entries if e.lms_id}
    by_sis = {e.student: e for e in entries if e.student}
    if column is None and roster:
        header, _ = read_table(roster)
        column = next((h for h in header if h.startswith(assignment + " (") or h == assignment), None)
    column = column or assignment
    out_rows, unmatched = [], []
    maximum = max((scale(r, True) for r in rows), default=0)
    for student, r in sorted(by_student.items()):
        placed = imported.get(student) or {}
        canvas_id = placed.get("lms_id") if placed.get("lms") == "canvas" else None
        entry = by_canvas.get(canvas_id) if canvas_id else None
        entry = entry or by_sis.get(student)
        if entry is None and canvas_id is None:
            unmatched.append(student)
            continue
        out_rows.append([entry.name if entry else (placed.get("name") or student),
                         entry.lms_id if entry else canvas_id,
                         entry.student if entry and entry.student else ("" if student == canvas_id else student),
                         entry.login if entry and entry.login else "",
                         entry.section if entry and entry.section else "",
                         _number(scale(r))])
    text = _table(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column],
                  [["Points Possible", "", "", "", "", _number(maximum)]] + out_rows)
    path = dest / f"canvas_{assignment}.csv"
    write_atomic(path, text)
    return path, unmatched


def export_grades(out, fmt: str, *, roster=None, submissions=None, column: str | None = None,
                  points: float | None = None, dest=None) -> list[dict]:
    """Write ``fmt`` (``plain``, ``moodle``, ``canvas``) for each assignment of ``out/grades.csv``.

    ``points`` rescales scores to an LMS assignment worth that many points (``score / max_score
    × points``); ``submissions`` is the folder of ``import-submissions`` (its manifest maps
    students to LMS accounts). Returns one summary per assignment: ``grades`` file, ``feedback``
    pages, ``unmatched`` students (not written: no LMS account known), ``errors`` (rows whose
    status is an ``error:``, written with the score their tests earned).
    """
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {FORMATS}; got {fmt!r}")
    out = Path(out)
    if not (out / "grades.csv").is_file():
        raise FileNotFoundError(f"no grades.csv in {out}: give the --out folder of `python -m autograder grade`")
    dest = Path(dest) if dest else out / "lms"
    dest.mkdir(parents=True, exist_ok=True)
    rows = [r for r in read_grades(out / "grades.csv")]
    for r in rows:
        r["score"], r["max_score"] = float(r["score"]), float(r["max_score"])

    def scale(r, maximum=False):
        value = r["max_score"] if maximum else r["score"]
        if points is None or not r["max_score"]:
            return value
        return round(value / r["max_score"] * points, 4)

    summaries = []
    for assignment in sorted({r["assignment"] for r in rows}):
        mine = [r for r in rows if r["assignment"] == assignment]
        imported = _manifest(submissions, assignment)
        unsafe = [r["student"] for r in mine if not FILE_SAFE.match(r["student"])]
        feedback = []
        for r in mine:
            if r["student"] not in unsafe:
                feedback += _feedback(out, dest, r["student"], assignment)
        summary = {"assignment": assignment, "feedback": [str(p) for p in feedback], "unmatched": [],
                   "errors": sorted(r["student"] for r in mine if r["status"].startswith("error")),
                   "no_feedback_file_name": unsafe}
        if fmt == "plain":
            path = dest / f"成绩_{assignment}.csv"
            write_atomic(path, _table(["学号", "成绩"], [[r["student"], _number(scale(r))]
                                                         for r in sorted(mine, key=lambda r: r["student"])]))
        elif fmt == "moodle":
            path, summary["unmatched"] = _moodle(mine, assignment, dest, roster, imported, scale)
            zipped = _moodle_feedback_zip(dest, assignment, mine, imported, roster)
            summary["feedback_zip"] = str(zipped) if zipped else None
        else:
            path, summary["unmatched"] = _canvas(mine, assignment, dest, roster, imported, scale, column)
        summary["grades"] = str(path)
        summaries.append(summary)
    return summaries
