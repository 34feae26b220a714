"""nbgrader configuration of every student's (and instructor's own) server on the hub.

Found through JUPYTER_CONFIG_PATH, which the hub's spawner sets to the copy that
hub/provision.py puts in SRV/jupyter/student.
"""
import os

from autograder.nbgrader.exchange import configure

c = get_config()  # noqa: F821  (injected by nbgrader)

c.CourseDirectory.course_id = "dp-course"
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/dp-course/exchange")
# Fetch only what the course account released; submit without nbgrader's 0777 folder
# (hub/README.md, "The exchange"). What protects grades is the Formgrader's Collect.
configure(c)
