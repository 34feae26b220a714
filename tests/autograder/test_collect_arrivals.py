"""Collect dates a submission by what the OS says, and a backup and restore changes no date (issue 38).

Restoring the exchange from a tar gives every inode a new ctime, which Collect reads as the
submission time: before the ledger of arrivals, the first Collect after a restore re-took every
submission with the restore's time (a student 482 s late on the class server). These tests run
the course's ExchangeCollect on a temporary course root; the student's files belong to a uid
that no account has (``uid_base``, as on Kubernetes), which needs root to chown.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import tarfile
import time
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")
from nbgrader.api import Gradebook  # noqa: E402
from nbgrader.coursedir import CourseDirectory  # noqa: E402
from traitlets.config import Config  # noqa: E402

from autograder.nbgrader import exchange  # noqa: E402

COURSE, ASSIGNMENT, STUDENT, BASE = "dp-course", "laplace", "alice", 3_000_000_000
UID = exchange.uid_for(STUDENT, BASE)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chowns the student's files to another uid: needs root")


def _chown(path: Path) -> None:
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.chown(name, UID, UID)


def _collect(root: Path, ex: Path) -> exchange.ExchangeCollect:
    c = Config()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = COURSE
    c.CourseDirectory.assignment_id = ASSIGNMENT
    c.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    c.Exchange.root = str(ex)
    c.ExchangeCollect.uid_base = BASE
    c.ExchangeCollect.update = True
    collect = exchange.ExchangeCollect(coursedir=CourseDirectory(config=c), config=c)
    collect.start()
    return collect


def _stamp(root: Path) -> str:
    return (root / "submitted" / STUDENT / ASSIGNMENT / "timestamp.txt").read_text()


@pytest.fixture()
def course(tmp_path):
    root, ex = tmp_path / "course", tmp_path / "exchange"
    inbound = ex / COURSE / "inbound"
    inbound.mkdir(parents=True)
    root.mkdir()
    folder = inbound / f"{STUDENT}+{ASSIGNMENT}+2020-01-01 00:00:00.000000 UTC"
    folder.mkdir()
    (folder / f"{ASSIGNMENT}.ipynb").write_text(json.dumps({"cells": [], "answer": 42}))
    _chown(folder)
    os.chmod(folder, 0o755)
    return root, ex, folder


def _restore(ex: Path, tmp: Path) -> None:
    """What hub/backup.py does to the exchange: tar it, lose it, extract it (new ctimes, same content)."""
    archive = tmp / "exchange.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(ex, arcname=".")
    shutil.rmtree(ex)
    ex.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(ex, numeric_owner=True, filter="fully_trusted")


def test_a_restore_changes_no_submission_time_and_retakes_nothing(course, tmp_path):
    root, ex, folder = course
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT)
    _collect(root, ex)
    first = _stamp(root)
    copied = root / "submitted" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    marker = copied.stat().st_ino
    assert (root / exchange.ARRIVALS).is_file()

    time.sleep(1.1)                     # the restore happens later than the submission, by whole seconds
    _restore(ex, tmp_path)
    restored = next((ex / COURSE / "inbound").iterdir())
    assert restored.stat().st_ctime > datetime.datetime.now().timestamp() - 1   # the OS dates it now
    # A due date between the real submission and the restore: the student must not become late.
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=datetime.datetime.utcnow() - datetime.timedelta(seconds=0.5))
    collect = _collect(root, ex)
    assert _stamp(root) == first, "Collect after a restore changed the submission's time"
    assert copied.stat().st_ino == marker, "Collect after a restore re-took an unchanged submission"
    assert collect.src_records[0]["timestamp"] <= collect.duedate


def test_a_changed_submission_is_dated_anew(course, tmp_path):
    root, ex, folder = course
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT)
    _collect(root, ex)
    first = _stamp(root)
    time.sleep(1.1)
    notebook = folder / f"{ASSIGNMENT}.ipynb"
    notebook.write_text(notebook.read_text() + " ")         # the student (or anyone) changes it
    os.chown(notebook, UID, UID)
    _collect(root, ex)
    assert _stamp(root) > first, "a changed submission kept the time of the old content"


def test_an_unreadable_ledger_stops_collect_with_a_clear_error(course):
    root, ex, _ = course
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(ASSIGNMENT)
    (root / exchange.ARRIVALS).write_text("{not json")
    with pytest.raises(Exception, match="restore it from the backup"):
        _collect(root, ex)
    assert not (root / "submitted").exists()
