"""The Formgrader's Autograde grades through the trusted grader (issue 16).

The button calls ``NbGraderAPI.autograde(assignment, student)`` (nbgrader's
``/formgrader/api/submission/<a>/<s>/autograde`` handler does nothing else);
it is called here the same way, with the configuration loaded from the course
root's ``nbgrader_config.py`` as the Formgrader loads it. Two collected
submissions: a correct one and a hostile one that tries to write
``gradebook.db`` and ``source/`` and prints and displays markup. Checked:
the gradebook's per-cell scores equal ``python -m autograder grade``'s on the
same files, nothing of the hostile code reached the course root, and the
autograded notebook the Formgrader shows holds no active markup and no
hidden test.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.nbgrader.hidden_tests import StripHiddenTests
from autograder.render import feedback

HERE = Path(__file__).resolve().parent
from tests.support import corpus as build

# One worker for the module: its fixture grades twice (Formgrader API and CLI), and xdist would
# otherwise build it again on each worker that receives one of its tests.
pytestmark = [pytest.mark.nbgrader, pytest.mark.slow, pytest.mark.xdist_group("formgrader")]

ASSIGNMENT = "laplace"
ROOT_SOURCE = HERE.parents[1] / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
#: What the hostile code writes; built at run time so that the notebook's own text never holds it.
WRITTEN = "PWNED_" + "formgrader_7f3a"
HOSTILE = r'''import glob, os
mark = "PWNED_" + "formgrader_7f3a"
for path in glob.glob("/*/gradebook.db") + ["{course}/gradebook.db", os.path.expanduser("~/gradebook.db")]:
    try:
        with open(path, "ab") as handle:
            handle.write(mark.encode())
    except OSError:
        pass
for path in ["{course}/source/laplace/laplace.ipynb", "{course}/source/laplace/evil.py"]:
    try:
        with open(path, "a") as handle:
            handle.write(mark)
    except OSError:
        pass
os.system("echo " + mark + " > {course}/source/pwned.txt 2>/dev/null")
print("<script>alert('xss')</script><img src=x onerror=alert(1)>")
from IPython.display import HTML, display
display(HTML("<script>alert(2)</script>"))
'''
MARKDOWN = "<script>alert(3)</script> <img src=x onerror=alert(4)> [x](javascript:alert(5))"

API = r'''
import json, sys
from nbgrader.apps import NbGraderAPI
from nbgrader.apps.baseapp import NbGrader
app = NbGrader()
app.load_config_file()          # the course root's nbgrader_config.py, as the Formgrader loads it
api = NbGraderAPI(config=app.config)
print(json.dumps({s: api.autograde(sys.argv[1], s) for s in sys.argv[2:]}))
'''


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, generated_laplace):
    tmp = tmp_path_factory.mktemp("formgrader")
    course = shutil.copytree(generated_laplace, tmp / "course")   # after generate_assignment
    env = build.nbgrader_env(NBGRADER_EXCHANGE=str(tmp / "exchange"), HOME=str(tmp / "home"))
    correct = {f: build.snippet(ASSIGNMENT, f, v)
               for f, v in {"laplace_noise": "inverse_cdf", "laplace_mechanism": "vectorized"}.items()}
    for student in ("alice", "mallory"):
        path = build.make_submission(ASSIGNMENT, correct, course / "submitted" / student / ASSIGNMENT
                                     / f"{ASSIGNMENT}.ipynb", release_dir=course / "release")
        (path.parent / "timestamp.txt").write_text("2026-01-01 12:00:00.000000 UTC", encoding="utf-8")
    hostile = course / "submitted" / "mallory" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(hostile, as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(HOSTILE.replace("{course}", str(course))))
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(MARKDOWN))
    nbformat.write(nb, hostile)
    source_before = _tree_digest(course / "source")

    api = subprocess.run([sys.executable, "-c", API, ASSIGNMENT, "alice", "mallory"], cwd=course, env=env,
                         capture_output=True, text=True, timeout=600)
    assert api.returncode == 0, api.stderr[-3000:]
    results = json.loads(api.stdout.strip().splitlines()[-1])

    # The same files through the trusted grader's command line.
    subs = tmp / "subs"
    for student in ("alice", "mallory"):
        shutil.copytree(course / "submitted" / student, subs / student)
    out = tmp / "out"
    cli = subprocess.run([sys.executable, "-m", "autograder", "grade", "--assignment", ASSIGNMENT,
                          "--submissions", str(subs), "--out", str(out), "--jobs", "1", "--course", str(course),
                          "--quiet"], env=env, capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr[-3000:]
    return {"course": course, "results": results, "out": out, "source_before": source_before}


def _gradebook(course: Path, student: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
        return {g.name: g.score for g in nb.grades if g.cell_type == "code"}


def test_autograde_button_gives_the_trusted_scores(graded):
    for student in ("alice", "mallory"):
        assert graded["results"][student]["success"], graded["results"][student].get("error")
    report = json.loads((graded["out"] / "report.json").read_text(encoding="utf-8"))
    with open(graded["out"] / "grades.csv", newline="", encoding="utf-8") as handle:
        rows = {r["student"]: r for r in csv.DictReader(handle)}
    for row in report["submissions"]:
        trusted = {c["grade_id"]: c["score"] for c in row["cells"]}
        assert _gradebook(graded["course"], row["student"]) == trusted, row["student"]
    assert float(rows["alice"]["score"]) == float(rows["alice"]["max_score"]) == 10.0, rows["alice"]
    assert rows["mallory"]["status"] == "ok", rows["mallory"]


def test_hostile_submission_writes_nothing_outside_its_sandbox(graded):
    course = graded["course"]
    assert _tree_digest(course / "source") == graded["source_before"]
    touched = [p for p in course.rglob("*") if p.is_file() and WRITTEN.encode() in p.read_bytes()]
    assert touched == []


def test_autograded_notebook_is_sanitised(graded):
    from nbconvert import HTMLExporter

    course = graded["course"]
    for student in ("alice", "mallory"):
        path = course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        nb = nbformat.read(path, as_version=4)
        text = path.read_text(encoding="utf-8")
        assert feedback.BEGIN not in text, "hidden tests in the autograded notebook"
        source = nbformat.read(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
        hidden = [line for c in source.cells if c.cell_type == "code"
                  for line in feedback.hidden_lines(c.source)]
        assert hidden and not [line for line in hidden if line in text]
        # Rendered without any sanitizer of its own (as the Formgrader's template renders markdown
        # and outputs): no handler or script URL, no script beyond the ones the template writes.
        exporter = HTMLExporter(template_name="lab")
        template_scripts = set(feedback._Scan(exporter.from_notebook_node(nbformat.v4.new_notebook())[0]).scripts)
        scan = feedback._Scan(exporter.from_notebook_node(nb)[0])
        assert scan.active == [] and set(scan.scripts) <= template_scripts, (student, scan.active)


def test_generate_feedback_hides_hidden_outputs(tmp_path):
    """Issue 17: a notebook autograded by nbgrader's own Execute (hidden blocks in the test cells,
    one output stream per cell) loses the hidden blocks' outputs in feedback, not only their code:
    a failing hidden check shows only the trusted grader's generic message."""
    import nbclient
    from nbconvert import HTMLExporter

    from autograder.render.feedback import HIDDEN_FAILED

    source = nbformat.read(ROOT_SOURCE, as_version=4)
    # right for the visible Δ = 3, ε = 0.7; forgets Δ when ε >= 1: only the hidden Δ = 2, ε = 5 check fails
    wrong = build.snippet(ASSIGNMENT, "laplace_mechanism", "vectorized").replace(
        "b = sensitivity / epsilon", "b = sensitivity / epsilon if epsilon < 1 else 1 / epsilon")
    assert wrong != build.snippet(ASSIGNMENT, "laplace_mechanism", "vectorized")
    for cell in source.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "laplace_mechanism":
            cell.source = wrong
    nbclient.NotebookClient(source, timeout=300, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    failed = {c.metadata["nbgrader"]["grade_id"]: o for c in source.cells for o in c.get("outputs", [])
              if o.get("output_type") == "error" and c.metadata.get("nbgrader", {}).get("grade")}
    assert sorted(failed) == ["test_laplace_mechanism_distribution"], sorted(failed)
    secret_message = failed["test_laplace_mechanism_distribution"]["evalue"]
    hidden = [line for c in source.cells if c.cell_type == "code" for line in feedback.hidden_lines(c.source)]

    shown = nbformat.from_dict(json.loads(json.dumps(source)))
    strip = StripHiddenTests()
    for index, cell in enumerate(shown.cells):
        strip.preprocess_cell(cell, {}, index)
    page, _ = HTMLExporter(template_name="lab").from_notebook_node(shown)
    assert feedback.text_leaks(page, hidden) == []
    assert secret_message[:60] not in page
    assert HIDDEN_FAILED.format(grade_id="test_laplace_mechanism_distribution") in page
    # a test cell without hidden blocks keeps what it printed
    rng_cell = next(c for c in shown.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                    == "test_laplace_mechanism_rng")
    assert rng_cell.outputs == next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                                    == "test_laplace_mechanism_rng").outputs


def test_feedback_summary_shows_the_gradebooks_scores():
    """Issue 28: nbgrader's feedback (CourseFeedbackExporter) heads the page with the gradebook's
    scores (after manual grading), not what a cell's metadata claims; a late penalty is taken off;
    a cell not graded yet says so."""
    cell = nbformat.v4.new_code_cell("x = 1", metadata={
        "nbgrader": {"grade": True, "grade_id": "test_a", "points": 2},
        "autograder": {"score": 0, "points": 2}})
    nb = nbformat.v4.new_notebook(cells=[cell])
    summary = feedback.score_summary(nb, [("test_a", 2.0, 2.0), ("test_b", 0.0, 3.0), ("essay", None, 1.0)],
                                     late_penalty=0.5).source
    assert "得分 / Score: 1.5 / 6" in summary and "迟交扣分 / late penalty: −0.5" in summary
    assert summary.count("✓") == 1 and summary.count("✗") == 1 and "待批改 / not graded yet" in summary
    assert "得分 / Score: 0 / 2" in feedback.score_summary(nb).source     # the trusted grader's own page


def test_grader_comments_are_shown_as_text():
    from autograder.nbgrader.formgrader import _grader_comments

    cell = nbformat.v4.new_code_cell("x = 1", metadata={
        "nbgrader": {"solution": True, "grade_id": "answer", "comment": "好 <script>alert(1)</script>\nline 2"}})
    nb = nbformat.v4.new_notebook(cells=[cell])
    _grader_comments(nb)
    assert len(nb.cells) == 2
    page = feedback.feedback_html(nb, [])
    assert "老师批注 / Comment:" in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert feedback.active_content(page) == []


def test_feedback_exporter_reads_the_hidden_lines_of_the_source():
    """Generate feedback in the Formgrader failed for every submission ("module 'autograder.scorer'
    has no attribute '_text'", seen in the browser walk of 2026-11-28) once the cell-text helper
    moved to autograder.cells: the exporter reads the source notebook's hidden-test lines (the
    page's safety net) as soon as a course directory is there, which only the slow browser and
    instructor-loop tests gave it."""
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Configurable

    from autograder.nbgrader.formgrader import CourseFeedbackExporter

    coursedir = CourseDirectory(root=str(ROOT_SOURCE.parents[2]))
    parent = Configurable()
    parent.coursedir = coursedir     # as nbgrader's GenerateFeedbackApp holds it
    exporter = CourseFeedbackExporter(parent=parent)
    lines = exporter._hidden_lines({"assignment": ASSIGNMENT, "notebook": ASSIGNMENT})  # noqa: SLF001
    source = nbformat.read(ROOT_SOURCE, as_version=4)
    expected = [line for c in source.cells if c.cell_type == "code" for line in feedback.hidden_lines(c.source)]
    assert expected and lines == expected
