"""The submissions folder: one :class:`Submission` per student folder, whatever its name.

``SUBMISSIONS/<student>/<assignment>/*.ipynb`` (nbgrader's ``submitted/``
layout). Rules, so that every student gets exactly one row and nobody is
graded on someone else's work:

* every entry of ``SUBMISSIONS`` that is a directory **or a symlink** is one
  submission, whatever its name: non-UTF-8 bytes, a leading ``.``, spaces,
  commas, quotes, newlines;
* the student id is the folder name made printable by :func:`student_id`
  (an injective backslash escaping, stable across runs and machines), so
  nbgrader, ``grades.csv``, ``report.json`` and the feedback HTML can carry
  it; names that are already printable keep their exact spelling;
* a symlinked student folder, a symlinked assignment folder and a symlinked
  notebook are refused, never followed: a link can point at a classmate's
  work, at ``source/`` or at a device;
* regular files (and FIFOs, sockets...) at the top level are not
  submissions: they are listed by :func:`ignored_entries` so the report can
  name them, and never opened;
* a notebook larger than :data:`MAX_NOTEBOOK_BYTES` or that is not a regular
  file is refused with a clear reason before anything reads it.

Refusal reasons are plain sentences; the grader shows them as
``error: <reason>`` with a score of 0.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

#: Larger notebooks are refused before they are read (a guard against a file
#: built to exhaust the grader's memory; honest notebooks are < 1 MiB once
#: their outputs are cleared).
MAX_NOTEBOOK_BYTES = 25 * 1024 * 1024


@dataclass(frozen=True)
class Submission:
    """One entry of the submissions folder.

    ``student`` is the printable id (:func:`student_id`), ``path`` the real
    folder (``None`` when refused), ``refused`` why it is not graded
    (``None`` when it is).
    """

    student: str
    path: Path | None
    refused: str | None


def student_id(name: str | bytes) -> str:
    """A printable, unique, stable id for a folder name.

    Printable characters are kept as they are (so ``张三``, ``a b`` and
    ``x,"y"`` keep their spelling); a backslash becomes ``\\\\``; a byte that
    is not UTF-8 (a surrogate escape of :func:`os.fsdecode`) becomes
    ``\\xNN``; any other non-printable character (newline, tab, C1 controls,
    bidi overrides) becomes ``\\uNNNN`` (or ``\\UNNNNNNNN``). The mapping is
    injective, so two folders never share an id.
    """
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    out = []
    for ch in name:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif ch.isprintable() and not 0xD800 <= code <= 0xDFFF:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


def _entries(folder: Path):
    """``(name, lstat)`` of every entry of ``folder``; names decoded with surrogateescape."""
    with os.scandir(os.fsencode(folder)) as it:
        for entry in it:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield os.fsdecode(entry.name), st


def list_submissions(submissions: Path) -> list[Submission]:
    """One :class:`Submission` per directory or symlink in ``submissions``, sorted by id."""
    submissions = Path(submissions)
    out = []
    for name, st in _entries(submissions):
        sid = student_id(name)
        if stat.S_ISLNK(st.st_mode):
            out.append(Submission(sid, None, "symlinked student folder refused "
                                             "(a link may point at another student's work; not followed)"))
        elif stat.S_ISDIR(st.st_mode):
            out.append(Submission(sid, submissions / name, None))
    return sorted(out, key=lambda s: s.student)


def ignored_entries(submissions: Path) -> list[str]:
    """Ids of the top-level entries that are not submissions (regular files, FIFOs...)."""
    return sorted(student_id(name) for name, st in _entries(Path(submissions))
                  if not (stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode)))


def assignment_folder(submission: Submission, assignment: str) -> tuple[Path | None, str | None]:
    """``(folder, None)`` for ``<student>/<assignment>``, or ``(None, reason)``."""
    if submission.refused:
        return None, submission.refused
    folder = Path(submission.path) / assignment
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return None, f"no submission folder ({assignment}/ missing)"
    except OSError as exc:
        return None, f"no submission folder ({assignment}/ unreadable: {type(exc).__name__})"
    if stat.S_ISLNK(st.st_mode):
        return None, ("symlinked assignment folder refused "
                      "(a link may point outside the student's folder; not followed)")
    if not stat.S_ISDIR(st.st_mode):
        return None, f"no submission folder ({assignment} is not a folder)"
    return folder, None


def pick_notebooks(folder: Path, expected: list[str], *,
                   max_bytes: int = MAX_NOTEBOOK_BYTES) -> dict:
    """Which file of ``folder`` to grade for each expected notebook name.

    Returns ``{"notebooks": {expected_name: path}, "missing": [...],
    "errors": [...], "repairs": [...]}``. A notebook is taken only when it is
    a regular file (``lstat``: a symlink is refused, never followed) of at
    most ``max_bytes``. When exactly one notebook is expected and exactly one
    other ``*.ipynb`` was submitted (``laplace (1).ipynb``), that one is
    graded in its place (a repair).
    """
    result = {"notebooks": {}, "missing": [], "errors": [], "repairs": []}
    found = {name: st for name, st in _entries(folder) if name.endswith(".ipynb")}
    renames = {}
    others = sorted(n for n in found if n not in expected)
    if len(expected) == 1 and expected[0] not in found and len(others) == 1:
        renames[expected[0]] = others[0]
        result["repairs"].append(f"notebook '{student_id(others[0])}' graded as '{expected[0]}'")
    for name in expected:
        actual = renames.get(name, name)
        st = found.get(actual)
        shown = student_id(actual)
        if st is None:
            result["missing"].append(name)
            result["errors"].append(f"missing notebook {name}")
        elif stat.S_ISLNK(st.st_mode):
            result["errors"].append(f"symlinked notebook {shown} refused (not followed)")
        elif not stat.S_ISREG(st.st_mode):
            result["errors"].append(f"notebook {shown} is not a regular file")
        elif st.st_size > max_bytes:
            result["errors"].append(
                f"notebook {shown} too large ({st.st_size / 2**20:.0f} MiB > {max_bytes >> 20} MiB; "
                "clear its outputs and submit again)")
        else:
            result["notebooks"][name] = Path(folder) / actual
    return result


def read_regular(path: Path, max_bytes: int = MAX_NOTEBOOK_BYTES) -> bytes:
    """The bytes of a regular file, refusing symlinks, FIFOs and files over ``max_bytes``.

    Opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked with ``fstat`` on
    the open descriptor, so a file swapped for a link or a FIFO after
    :func:`pick_notebooks` looked at it is still refused (``OSError`` /
    ``ValueError``), and never more than ``max_bytes + 1`` bytes are read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is not a regular file")
        if st.st_size > max_bytes:
            raise ValueError(f"too large (> {max_bytes >> 20} MiB; clear its outputs and submit again)")
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise ValueError(f"too large (> {max_bytes >> 20} MiB; clear its outputs and submit again)")
        return b"".join(chunks)
    finally:
        os.close(fd)
