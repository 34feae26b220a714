"""The student's **提交** endpoint: a Jupyter server extension (``course/student_config/``).

``POST <base_url>dp-course/submit`` with ``{"path": "<notebook path>", "student_id": "<学号>"?}``:
the course extension's 提交 button (``course/labextensions/dp-course-submit/``) saves the notebook
on screen, then calls this, which writes ``提交/<学号>_<assignment>.ipynb`` in the student's folder
(the server's root, :func:`course.workspace.submit`). Answers ``200 {"file", "notice", "short", "folder"}``; ``409
{"need_student_id", "message"}`` before the student id is known (the button asks, once); ``400
{"message"}`` for anything else the student can fix. Standard library and the Jupyter server only.
"""

from __future__ import annotations

import json
from pathlib import Path

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from course import workspace as ws

ASK = "请输入你的学号（只需输入一次）/ Your student id (asked once)"


def submit_answer(root: Path, body: dict) -> tuple[int, dict]:
    """What the endpoint answers for ``body`` in the workspace ``root``: (status, JSON)."""
    path = str(body.get("path") or "")
    given = body.get("student_id")
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    try:
        if len(parts) < 2 or parts[0] != ws.ASSIGNMENTS_DIR or ".." in parts or not path.endswith(".ipynb"):
            raise ValueError(ws.say("no_assignment", name=path, known="、".join(ws.ASSIGNMENTS))
                             + f"（{ws.ASSIGNMENTS_DIR}/…）")
        assignment = ws.resolve_assignment(parts[1])
        if isinstance(given, str) and given.strip():
            student = ws.remember_student_id(root, given)
        else:
            student = ws.student_id(root)
        if student is None:
            return 409, {"need_student_id": True, "message": ASK}
        source = root.joinpath(*parts)
        target, notice = ws.submit(root, assignment, student, source=source)
    except ValueError as error:
        return 400, {"message": str(error)}
    return 200, {"file": str(target), "notice": notice, "student_id": student, "folder": ws.UPLOAD_DIR,
                 "short": ws.short_notice(target, assignment, source.stat().st_mtime)}


class SubmitHandler(APIHandler):
    @web.authenticated
    def post(self):
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError:
            body = {}
        # the contents manager's root: settings["server_root_dir"] writes the home folder as "~"
        root = Path(self.contents_manager.root_dir)
        status, answer = submit_answer(root, body if isinstance(body, dict) else {})
        self.set_status(status)
        self.finish(json.dumps(answer, ensure_ascii=False))


def _jupyter_server_extension_points():
    return [{"module": "course.labserver"}]


def _load_jupyter_server_extension(serverapp) -> None:
    route = url_path_join(serverapp.web_app.settings["base_url"], "dp-course", "submit")
    serverapp.web_app.add_handlers(".*$", [(route, SubmitHandler)])
