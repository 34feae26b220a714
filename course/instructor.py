"""``make lab`` (``python3 -m course lab --instructor``): the whole course on one machine.

The instructor's and the maintainers' view: JupyterLab on the repository itself, with nbgrader's
Formgrader and Assignments panel over the course's own exchange (``nbgrader_exchange/``, or
``NBGRADER_EXCHANGE``). Not the student's path (that is :mod:`course.workspace`, which needs no
exchange): nbgrader 0.9.6's file-system exchange refuses every action on Windows, and file modes
and owners are what it is made of. A release that fails is said and skipped, never fatal:
JupyterLab still opens on the lectures.
"""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
from pathlib import Path

from course.workspace import ASSIGNMENTS

#: Written into the exchange after a release: newer than every file of source/ means up to date.
RELEASED_MARK = ".dp-course-released"

#: ``nbgrader release_assignment NAME --force`` for each name of ``sys.argv``, in one process (the
#: command's own application, a new one per assignment); a failure exits non-zero, as the command does.
RELEASE_EACH = """\
import sys
from nbgrader.apps.releaseassignmentapp import ReleaseAssignmentApp
for assignment in sys.argv[1:]:
    app = ReleaseAssignmentApp()
    app.initialize([assignment, "--force", "--log-level=WARN"])
    app.start()
"""

SAY = {
    "release": "发布作业到本地 exchange {path} / releasing the assignments into {path}",
    "release_failed": ("用 nbgrader 发布作业失败（{error}），跳过；JupyterLab 照常启动。学生在自己电脑上不需要这一步"
                       "（python -m course lab）/ releasing through nbgrader's exchange failed ({error}); skipped, "
                       "JupyterLab starts anyway. Students' laptops do not need it (python -m course lab)"),
}


def say(key: str, **values) -> None:
    print(SAY[key].format(**values), file=sys.stderr, flush=True)


def exchange_dir(root: Path) -> Path:
    """The course's exchange (``NBGRADER_EXCHANGE`` or ``nbgrader_exchange/``), created writable."""
    path = Path(os.environ.get("NBGRADER_EXCHANGE") or root / "nbgrader_exchange")
    path.mkdir(parents=True, exist_ok=True)
    try:
        path.chmod(0o777)     # nbgrader's inbound/feedback folders below set their own modes
    except OSError:
        if not os.access(path, os.W_OK):
            raise OSError(f"NBGRADER_EXCHANGE={path} is not a writable folder") from None
    return path


def _newest(paths) -> float:
    return max((p.stat().st_mtime for p in paths if p.is_file()), default=0.0)


def release_assignments(root: Path, python: Path, env: dict[str, str]) -> bool:
    """nbgrader's generate_assignment and release_assignment of the six, when ``source/`` changed.

    Returns whether the exchange holds the current release; a failure is reported, not raised.
    """
    if not (root / "nbgrader_config.py").is_file() or not (root / "source").is_dir():
        return False    # no instructor's sources here: nothing to generate
    try:
        exchange = exchange_dir(root)
        mark = exchange / RELEASED_MARK
        sources = [p for p in (root / "source").rglob("*")
                   if ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts]
        if mark.is_file() and mark.stat().st_mtime >= _newest([*sources, root / "nbgrader_config.py"]):
            return True
        say("release", path=exchange)
        nbgrader = [str(python), "-m", "nbgrader"]
        subprocess.run([*nbgrader, "generate_assignment", "*", "--force", "--log-level=ERROR"], cwd=root,
                       env=env, check=True)
        # nbgrader's release_assignment of each, in one process: six `nbgrader release_assignment`
        # processes spent most of their time importing nbgrader (2026-11-29, load 8-11 on 2 cores:
        # 71 s and 16 CPU-s for the six, 7 s and 1.7 CPU-s in one process; the same exchange).
        subprocess.run([str(python), "-c", RELEASE_EACH, *ASSIGNMENTS], cwd=root, env=env, check=True)
        mark.touch()
        return True
    except (OSError, subprocess.CalledProcessError) as error:
        say("release_failed", error=error)
        return False


def add_local_student(root: Path, python: Path, env: dict[str, str]) -> None:
    """This computer's user in the gradebook, with a name (the Formgrader lists one without as
    "None, None"); already there is fine."""
    if not (root / "nbgrader_config.py").is_file():
        return
    user = getpass.getuser()
    subprocess.run([str(python), "-m", "nbgrader", "db", "student", "add", user, f"--last-name={user}",
                    "--first-name=(this computer)"], cwd=root, env=env, capture_output=True)
