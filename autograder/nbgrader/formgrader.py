"""The Formgrader's *Autograde* button, graded by the trusted grader.

nbgrader's ``Autograde`` converter runs ``sanitize_preprocessors`` (no code
runs) and then ``autograde_preprocessors``, whose ``Execute`` would run the
student's notebook in a kernel of the account the Formgrader runs as, with
the hidden tests in the same process. ``nbgrader_config.py`` puts
:class:`TrustedAutograde` in ``Execute``'s place: it grades the collected
submission with ``python -m autograder grade`` (student code only in the
bubblewrap sandbox, instructor cells of ``source/`` only in the grader's own
process; see autograder/README.md) and hands on the grader's executed
notebook, so that nbgrader's own ``SaveAutoGrades`` stores exactly the
trusted per-cell scores and the Formgrader shows only what the grader's
sanitizer kept (allowlisted outputs, cleaned markup, release versions of the
test cells, a hidden failure as its generic message).

The grader is run as a command, not imported, because the Formgrader is a
threaded Jupyter server: the grader installs signal handlers and forks
workers, which is safe only in a process of its own. When bubblewrap cannot
run here the command refuses (exit status 2) and nothing of the student
runs; the button then shows that message.
"""

from __future__ import annotations

import copy
import html
import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Int, default

from autograder import scorer
from autograder.cells import source_text
from autograder.render import feedback
from autograder.students import MAX_NOTEBOOK_BYTES

#: The error a test cell shows when the grader gave it no points but left no error output.
FAILED = "未通过 / failed (trusted grader)"


class TrustedGradingError(RuntimeError):
    """The trusted grader could not grade the submission (the Formgrader shows the message)."""


def _copy_notebooks(src: Path, dest: Path) -> None:
    """The submission's regular ``*.ipynb`` files (never through a symlink) into ``dest``."""
    dest.mkdir(parents=True)
    if not src.is_dir() or src.is_symlink():
        return
    for entry in os.scandir(src):
        if not entry.name.endswith(".ipynb"):
            continue
        info = entry.stat(follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_NOTEBOOK_BYTES:
            continue  # the grader then reports the notebook as missing
        fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            (dest / entry.name).write_bytes(handle.read(MAX_NOTEBOOK_BYTES + 1))


def grade_submission(course: Path, submitted: Path, assignment: str, student: str, *,
                     timeout: int, memory_mb: int) -> dict:
    """``python -m autograder grade`` on one collected submission.

    Returns ``{"row": report.json's submission, "autograded": {notebook name: NotebookNode},
    "isolation": what the sandbox enforced here (cgroup or rlimits only, seccomp, uids)}``.
    Raises :class:`TrustedGradingError` when the command fails (e.g. no sandbox here).
    """
    with tempfile.TemporaryDirectory(prefix="autograder-formgrader-") as tmp:
        tmp = Path(tmp)
        _copy_notebooks(submitted, tmp / "submissions" / "student" / assignment)
        command = [sys.executable, "-m", "autograder", "grade", "--assignment", assignment,
                   "--submissions", str(tmp / "submissions"), "--out", str(tmp / "out"), "--jobs", "1",
                   "--timeout", str(timeout), "--memory-mb", str(memory_mb), "--course", str(course),
                   "--quiet"]
        env = dict(os.environ)
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        done = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            raise TrustedGradingError(
                f"the trusted grader did not grade {student}/{assignment}; no student code ran in the "
                f"Formgrader ({why[:600]}). Grade from a terminal: python -m autograder grade "
                f"--assignment {assignment} ... (README: the instructor's loop)")
        report = json.loads((tmp / "out" / "report.json").read_text(encoding="utf-8"))
        row = report["submissions"][0]
        autograded = {}
        for name in row.get("autograded", []):
            path = tmp / "out" / "autograded" / "student" / assignment / name
            autograded[name] = nbformat.read(path, as_version=4)
        return {"row": row, "autograded": autograded, "isolation": report["runs"][-1].get("isolation")}


def _enforce(cell, score: float, points: float, message: str | None) -> None:
    """Outputs of a test cell from which nbgrader's ``determine_grade`` gives exactly ``score``."""
    if score >= points:  # full points: nothing nbgrader would read as a failure or a partial grade
        cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"
                        and o.get("name") == "stdout"]
    elif not any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
        text = message or FAILED
        cell.outputs = list(cell.get("outputs", [])) + [
            nbformat.v4.new_output("error", ename="TestFailed", evalue=text, traceback=[text])]


def _fallback(nb):
    """nbgrader's sanitized notebook, fit to show: hidden blocks out, no outputs, markup cleaned."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.source = feedback.strip_hidden(source_text(cell.source))[0]
            cell.outputs = []
            cell.execution_count = None
    return feedback.gradebook_notebook(nb)


class TrustedAutograde(NbGraderPreprocessor):
    """``Execute``'s replacement in ``Autograde.autograde_preprocessors`` (see the module's doc)."""

    timeout = Int(120, help="--timeout of python -m autograder grade (per cell and per call)").tag(config=True)
    memory_mb = Int(2048, help="--memory-mb of python -m autograder grade").tag(config=True)

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        coursedir = CourseDirectory(parent=self)
        coursedir.assignment_id, coursedir.student_id = info["assignment"], info["student"]
        course = Path(coursedir.root)
        submitted = Path(coursedir.format_path(coursedir.submitted_directory, info["student"],
                                               info["assignment"]))
        name = info["notebook"] + ".ipynb"
        graded = grade_submission(course, submitted, info["assignment"], info["student"],
                                  timeout=self.timeout, memory_mb=self.memory_mb)
        row = graded["row"]
        self.log.info("trusted grader: %s/%s %s/%s, %s; sandbox isolation: %s", info["student"],
                      info["assignment"], row["score"], row["max_score"], row["status"], graded["isolation"])
        out = graded["autograded"].get(name)
        out = _fallback(nb) if out is None else out
        cells = {c["grade_id"]: c for c in row["cells"] if c["notebook"] == name}
        reason = None if row["status"] == "ok" else row["status"][:500]
        for cell in out.cells:
            if cell.cell_type == "code" and scorer.is_test(cell):
                grade = cells.get(scorer.nbgrader_meta(cell).get("grade_id"))
                if grade is not None:
                    _enforce(cell, grade["score"], grade["points"], reason)
        # nbgrader's kernelspec (OverwriteKernelspec), nothing else of the student's metadata
        out.metadata = {"kernelspec": nb.metadata.get("kernelspec", out.metadata.get("kernelspec", {})),
                        "language_info": {"name": "python"}}
        return out, resources


def _grader_comments(nb) -> None:
    """Each grader's comment (GetGrades wrote it into the cell's metadata) as a cell after its
    cell: the course's page drops cell metadata, nbgrader's own page showed them there."""
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        comment = (cell.get("metadata", {}).get("nbgrader") or {}).get("comment")
        if isinstance(comment, str) and comment.strip():
            cells.append(nbformat.v4.new_markdown_cell(
                '<div class="dp-comment"><strong>老师批注 / Comment:</strong> '
                + html.escape(comment.strip()).replace("\n", "<br>") + "</div>"))
    nb.cells = cells


#: The Content-Security-Policy of a submission's own files as nbgrader's Formgrader serves them
#: (``SubmissionFilesHandler``, ``/formgrader/submissions/<id>/<path>``: the images a notebook shows, and
#: every other file the student handed in, which Autograde copies into ``autograded/``): the page gets an
#: origin of its own and runs no script. Without it a student's ``fig.html``, linked from a markdown cell
#: of her notebook, ran in the Formgrader's origin when the instructor clicked the link while grading:
#: it read ``source/`` (the hidden tests) and opened a terminal as the course account (red team,
#: docs/redteam-hub-2026-11.md, session 13). An ``<img>`` ignores its image's policy: figures still show.
SUBMISSION_FILES_CSP = ("sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; "
                        "frame-ancestors 'none'")


def confine_submission_files() -> None:
    """Serve a submission's files (nbgrader's ``SubmissionFilesHandler``) under :data:`SUBMISSION_FILES_CSP`.

    Called from the course's ``nbgrader_config.py`` (and the class server's grader config), which the
    Formgrader loads in its own process before it serves anything; Jupyter's own ``/files/`` handler
    does the same with ``sandbox allow-scripts``, this one allows no script at all.
    """
    from nbgrader.server_extensions.formgrader.handlers import SubmissionFilesHandler

    SubmissionFilesHandler.content_security_policy = property(lambda self: SUBMISSION_FILES_CSP)


class CourseFeedbackExporter(HTMLExporter):
    """nbgrader's ``GenerateFeedback`` (the command and the Formgrader's button) through the
    trusted grader's renderer, :func:`autograder.render.feedback.feedback_html`: one page whichever way
    the instructor graded (Chinese first, the score and each test's name with ✓/✗ on top, no
    script, the same sanitizing and hidden-test safety net).

    The converter's preprocessors run first (``GetGrades`` puts the gradebook's scores, after any
    manual grading, and the graders' comments into the cells; ``StripHiddenTests`` takes the
    hidden blocks and their outputs out); the scores shown are the gradebook's.
    """

    export_from_notebook = None  # not offered in JupyterLab's "Save and export as" menu

    @default("file_extension")
    def _file_extension_default(self):
        return ".html"

    def from_notebook_node(self, nb, resources=None, **kw):
        nb = copy.deepcopy(nb)
        resources = self._init_resources(resources)
        nb, resources = self._preprocess(nb, resources)
        info = resources.get("nbgrader") or {}
        scores = [(scorer.nbgrader_meta(c).get("grade_id"), scorer.nbgrader_meta(c).get("score"),
                   scorer.nbgrader_meta(c).get("points", 0))
                  for c in nb.cells if scorer.nbgrader_meta(c).get("grade") and "points" in scorer.nbgrader_meta(c)]
        _grader_comments(nb)
        page = feedback.feedback_html(nb, self._hidden_lines(info), scores=scores,
                                      late_penalty=float(info.get("late_penalty") or 0))
        resources["output_extension"] = ".html"
        return page, resources

    def _hidden_lines(self, info) -> list[str]:
        """The hidden-test lines of the source notebook (the page's safety net), if it is there."""
        coursedir = getattr(self.parent, "coursedir", None)
        if coursedir is None or not info.get("assignment") or not info.get("notebook"):
            return []
        path = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"])) / (
            info["notebook"] + ".ipynb")
        if not path.is_file():
            return []
        source = nbformat.read(path, as_version=4)
        return [line for c in source.cells if c.cell_type == "code"
                for line in feedback.hidden_lines(source_text(c.source))]
