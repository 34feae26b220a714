"""A lost gradebook is an error naming the restore, never a silent empty one (issue 38)."""

from __future__ import annotations

import runpy
import sqlite3
from pathlib import Path

import pytest

from autograder.nbgrader.gradebook_guard import GradebookLost, require_gradebook

REPO = Path(__file__).resolve().parents[2]


def _graded(root: Path) -> None:
    (root / "submitted" / "alice" / "laplace").mkdir(parents=True)


def test_a_new_class_may_create_its_gradebook(tmp_path):
    require_gradebook(tmp_path)                         # nothing graded yet: nbgrader creates it as usual
    (tmp_path / "submitted").mkdir()
    require_gradebook(tmp_path)                         # an empty folder is no graded work


def test_a_missing_gradebook_with_graded_work_is_refused(tmp_path):
    _graded(tmp_path)
    with pytest.raises(GradebookLost, match="成绩册.*不存在.*submitted/.*backup.py restore"):
        require_gradebook(tmp_path)


def test_an_unreadable_gradebook_is_refused_and_a_good_one_passes(tmp_path):
    _graded(tmp_path)
    (tmp_path / "gradebook.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(GradebookLost, match="无法读取"):
        require_gradebook(tmp_path)
    (tmp_path / "gradebook.db").unlink()
    with sqlite3.connect(tmp_path / "gradebook.db") as con:
        con.execute("CREATE TABLE assignment (id TEXT)")
    require_gradebook(tmp_path)


def test_the_class_servers_grader_config_refuses_a_lost_gradebook(tmp_path, monkeypatch):
    """hub/jupyter/grader/nbgrader_config.py, loaded by every nbgrader command of the course account."""
    from traitlets.config import Config

    _graded(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GradebookLost):
        runpy.run_path(str(REPO / "hub" / "jupyter" / "grader" / "nbgrader_config.py"),
                       init_globals={"get_config": Config})
