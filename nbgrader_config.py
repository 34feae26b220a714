"""nbgrader configuration: the repository root is the course root."""

import os

c = get_config()  # noqa: F821  (injected by nbgrader)

HERE = os.path.dirname(os.path.abspath(__file__))

c.CourseDirectory.root = HERE
c.CourseDirectory.course_id = "dp-course"
# Students may delete a graded cell by accident; put it back at grading time.
c.OverwriteCells.add_missing_cells = True
# Per-cell limit; statistical checks are sized to take well under a second.
c.Execute.timeout = 60
c.ClearSolutions.code_stub = {
    "python": "# 在此处填写你的代码 / YOUR CODE HERE\nraise NotImplementedError()"
}
# Tests and CI point this at a temporary folder (NBGRADER_EXCHANGE).
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/usr/local/share/nbgrader/exchange")
