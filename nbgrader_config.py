"""nbgrader configuration: the repository root is the course root.

Assignments: source/{laplace,exponential,randomized_response}/ (instructor
versions, with solutions and hidden tests); release/ holds the student
versions made by ``nbgrader generate_assignment`` and is committed
(``.venv/bin/python -m tests.support.corpus release`` regenerates it; a test
fails when it is out of date). The instructor loop is in README.md and is
exercised end to end by tests/course/test_instructor_loop.py.

Copied unchanged into temporary course roots by the tests: paths are taken
relative to this file, never to the repository.
"""

import os

c = get_config()  # noqa: F821  (injected by nbgrader)

HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = "dp-course"
# Students may delete a graded cell by accident; put it back at grading time.
c.OverwriteCells.add_missing_cells = True
# Per-cell limit. Each graded cell's checks take well under a second for a
# vectorized solution and a few seconds for a pure-Python loop; an infinite
# loop is cut here and grading goes on with the next cell.
c.Execute.timeout = 60
c.ClearSolutions.code_stub = {
    "python": "# 在此处填写你的代码 / YOUR CODE HERE\nraise NotImplementedError()"
}
# Exchange folder for release/fetch/submit/collect/feedback. NBGRADER_EXCHANGE names a
# shared one (a class server, tests, CI); without it the course keeps its own, git-ignored
# ``nbgrader_exchange/`` next to this file, so that the JupyterLab menus of a single-machine
# ``make lab`` work out of the box (nbgrader's default /usr/local/share/nbgrader/exchange
# needs root to create, and its menus only say "Error fetching courses!" until it exists).
EXCHANGE = os.environ.get("NBGRADER_EXCHANGE") or os.path.join(HERE, "nbgrader_exchange")
if not os.path.isdir(EXCHANGE):
    try:
        # Everyone may write (nbgrader's inbound/feedback folders below set their own modes).
        os.makedirs(EXCHANGE, exist_ok=True)
        os.chmod(EXCHANGE, 0o777)
    except OSError as error:
        import sys

        print(f"nbgrader_config.py: cannot create the exchange folder {EXCHANGE} ({error}); "
              f"create it (mkdir -p {EXCHANGE}; chmod 777 {EXCHANGE}) or set NBGRADER_EXCHANGE "
              "to a writable folder", file=sys.stderr)
c.Exchange.root = EXCHANGE
# Fetched assignments and feedback go to <cwd>/dp-course/<assignment>/: under `make lab`
# (cwd = course root) that is one git-ignored folder, never mixed with source/ or release/.
c.Exchange.path_includes_course = True

# `nbgrader autograde` and the Formgrader's Autograde button (the same converter) grade
# through the trusted grader: TrustedAutograde takes Execute's place and runs
# `python -m autograder grade` on the collected submission (student code only in the
# bubblewrap sandbox, hidden tests only in the grader), then hands nbgrader the grader's
# sanitized executed notebook, whose test-cell outputs give SaveAutoGrades exactly the
# grader's per-cell scores. Nothing of the student runs in a kernel of this account.
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, IgnorePattern,  # noqa: E402
                                    LimitOutput, SaveAutoGrades)

from autograder.nbgrader.formgrader import TrustedAutograde  # noqa: E402

c.Autograde.autograde_preprocessors = [TrustedAutograde, IgnorePattern, ClearMetadataPreprocessor, LimitOutput,
                                       SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# What a student hands in besides her notebook (an HTML or SVG file) is served by the Formgrader
# without running a script: linked from her notebook, it ran as the instructor in the Formgrader.
from autograder.nbgrader.formgrader import confine_submission_files  # noqa: E402

confine_submission_files()

# Feedback made by `nbgrader generate_feedback` or the Formgrader's "Generate feedback"
# (the same converter) is the trusted grader's page (autograder/render/feedback.py, feedback_html):
# Chinese first, the score and each test's name with ✓/✗ on top (the gradebook's scores, after
# manual grading, late penalty and the graders' comments included), hidden tests' code and
# outputs removed (nbgrader issue #917; a hidden failure shows the grader's generic message),
# formulas as MathML (no script, no network: the page shows opened from disk or the hub).
from nbgrader.preprocessors import GetGrades  # noqa: E402

from autograder.nbgrader.formgrader import CourseFeedbackExporter  # noqa: E402
from autograder.nbgrader.hidden_tests import StripHiddenTests  # noqa: E402

c.GenerateFeedback.exporter_class = CourseFeedbackExporter
c.GenerateFeedback.preprocessors = [GetGrades, StripHiddenTests]

# Math renders offline in the Formgrader and in feedback: nbgrader's templates load MathJax
# from a CDN; nbgrader_templates/ shadows nbconvert's mathjax macro: the Formgrader's pages
# load the copy that the jupyter-server-mathjax extension (requirements.txt) serves, feedback
# pages load nothing (their math is MathML already). nbgrader's own templates stay the next
# place to look. That MathJax copy has only the STIX-Web web fonts, so the Formgrader's macro
# selects them (MathJax's default TeX fonts would be answered 404) and wraps long lines with
# the feedback pages' reading styles (nbgrader_templates/formgrade/mathjax.html.j2).
import nbgrader.server_extensions.formgrader as _formgrader  # noqa: E402

import autograder as _autograder  # noqa: E402

# This file is copied into temporary course roots (tests, autograder): the templates are
# found next to it, else next to the installed (editable) course package.
_TEMPLATES = [os.path.join(d, "nbgrader_templates")
              for d in (HERE, os.path.dirname(os.path.dirname(os.path.abspath(_autograder.__file__))))]
c.HTMLExporter.extra_template_basedirs = [next((d for d in _TEMPLATES if os.path.isdir(d)), _TEMPLATES[0]),
                                          os.path.join(os.path.dirname(_formgrader.__file__), "templates")]

# nbgrader 0.9.6 with SQLAlchemy 2.x prints "SAWarning: Object of type <SubmittedAssignment>
# not in session, add operation along ... will not proceed" several times per autograded
# submission: its gradebook code relies on an autoflush cascade SQLAlchemy 2 no longer does.
# The rows are added explicitly right after (the grades are right; tests/checks/test_assignments.py
# checks them), there is no setting to change it, so exactly this message is silenced.
import warnings  # noqa: E402

from sqlalchemy.exc import SAWarning  # noqa: E402

warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session, add operation along",
                        category=SAWarning)
