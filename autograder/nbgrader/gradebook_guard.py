"""Refuse to work on a course whose gradebook is lost while its graded work is still there.

nbgrader creates an empty ``gradebook.db`` wherever it finds none: with the old one deleted or
unreadable, the Formgrader showed every student's score as 0 and said nothing (issue 38). The
class server's grader config (``hub/jupyter/grader/nbgrader_config.py``) calls
:func:`require_gradebook` before any nbgrader command or the Formgrader starts, so the loss is
an error naming the restore, not a silent new gradebook.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: Folders of the course root whose content means that grades once existed.
GRADED_WORK = ("submitted", "autograded", "feedback")

RESTORE = ("从备份恢复 gradebook.db（sudo .venv/bin/python hub/backup.py restore 备份目录，见 hub/README.md）；"
           "若确实要从空成绩册重新开始，先把上述文件夹移走。 / Restore gradebook.db from the backup "
           "(sudo .venv/bin/python hub/backup.py restore BACKUP, hub/README.md); to start again from an "
           "empty gradebook on purpose, move those folders away first.")


class GradebookLost(RuntimeError):
    """The gradebook is missing or unreadable while the course root holds graded work."""


def _graded_work(root: Path) -> list[str]:
    found = []
    for name in GRADED_WORK:
        folder = root / name
        if folder.is_dir() and any(folder.iterdir()):
            found.append(f"{name}/")
    return found


def require_gradebook(root: Path | str, name: str = "gradebook.db") -> None:
    """Raise :class:`GradebookLost` when ``root/name`` is missing or unreadable but graded work exists.

    A course root without graded work (a new class) may get its gradebook created as usual.
    """
    root = Path(root)
    work = _graded_work(root)
    if not work:
        return
    db = root / name
    if not db.is_file():
        raise GradebookLost(f"成绩册 {db} 不存在，但 {', '.join(work)} 里已有学生的作业：nbgrader 会新建一个空成绩册，"
                            f"所有成绩将显示为 0。/ The gradebook {db} is missing while {', '.join(work)} hold "
                            f"students' work: nbgrader would make an empty one and show every score as 0. {RESTORE}")
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            con.execute("SELECT count(*) FROM assignment").fetchone()
    except sqlite3.Error as error:
        raise GradebookLost(f"成绩册 {db} 无法读取（{error}）。/ The gradebook {db} cannot be read ({error}). "
                            f"{RESTORE}") from None
