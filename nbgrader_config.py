"""nbgrader configuration: the repository root is the course root.

Assignments: source/{laplace,exponential,randomized_response}/ (instructor
versions, with solutions and hidden tests); release/ holds the student
versions made by ``nbgrader generate_assignment`` and is committed
(``.venv/bin/python tests/corpus/build.py release`` regenerates it; a test
fails when it is out of date). The instructor loop is in README.md and is
exercised end to end by tests/test_instructor_loop.py.

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
# Shared exchange folder for release/fetch/submit/collect/feedback. Tests and CI
# point it at a temporary folder through NBGRADER_EXCHANGE.
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/usr/local/share/nbgrader/exchange")
