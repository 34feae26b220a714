"""Release feedback releases each notebook's page only: what a student hands in beside it stops no one (session 15).

A folder ``plots.html/`` handed in next to the notebook went through Autograde and Generate feedback into
``feedback/alice/<assignment>/``; nbgrader's release took every ``*.html`` there and stopped with
IsADirectoryError, for every student after her, at every later release (red team, session 15).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from traitlets.config import Config  # noqa: E402

from autograder.nbgrader import exchange  # noqa: E402

COURSE, ASSIGNMENT = "dp-course", "laplace"


def test_release_feedback_skips_what_is_not_a_notebooks_page(tmp_path, caplog):
    root, ex = tmp_path / "course", tmp_path / "exchange"
    root.mkdir()
    (root / "release" / ASSIGNMENT).mkdir(parents=True)
    (root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{}")
    for student in ("alice", "bob", "carol"):      # alice sorts first: before, no one after her got theirs
        folder = root / "feedback" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.html").write_text(f"<p>{student}'s feedback</p>")
        (folder / "timestamp.txt").write_text("2026-11-29 12:00:00 UTC")
        (folder / "submission_secret.txt").write_text(f"secret-{student}")
    handed_in = root / "feedback" / "alice" / ASSIGNMENT
    (handed_in / "plots.html").mkdir()
    (handed_in / "plots.html" / "index.txt").write_text("<p>my plot</p>")
    (handed_in / "notes.html").write_text("hers, not a notebook's page")
    os.symlink("/etc/hostname", handed_in / "link.html")

    c = Config()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = COURSE
    c.CourseDirectory.assignment_id = ASSIGNMENT
    c.Exchange.root = str(ex)
    exchange.ExchangeReleaseFeedback(coursedir=CourseDirectory(config=c), config=c).start()

    released = sorted(p.read_text() for p in (ex / COURSE / "feedback").iterdir())
    assert released == [f"<p>{s}'s feedback</p>" for s in ("alice", "bob", "carol")]
    skipped = " ".join(r.getMessage() for r in caplog.records if "Not releasing" in r.getMessage())
    assert all(name in skipped for name in ("plots.html", "notes.html", "link.html")), skipped
