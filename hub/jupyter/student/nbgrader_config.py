"""nbgrader configuration of every student's (and instructor's own) server on the hub.

Found through JUPYTER_CONFIG_PATH, which the hub's spawner sets to this folder.
"""
import os

c = get_config()  # noqa: F821  (injected by nbgrader)

c.CourseDirectory.course_id = "dp-course"
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/srv/dp-course/exchange")
