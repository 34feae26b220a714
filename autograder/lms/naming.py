"""Whose file is it: the LMSs' bulk-download names, the course's own hand-in name, a lecturer's pattern.

Formats read (each from the LMS's source, cited so a change there can be checked):

* **Moodle** (``mod/assign/locallib.php``, ``assign::download_submissions``): each student's
  files sit under the prefix ``clean_filename(str_replace('_', ' ', fullname) . '_' .
  uniqueid)`` followed by ``_assignsubmission_file_``; since Moodle 3.1 as a folder
  (``Full Name_1234567_assignsubmission_file_/laplace.ipynb``), before (or with the
  "download as folders" preference off) flat (``Full Name_1234567_assignsubmission_file_laplace.ipynb``).
  The number is the assignment's *participant id* (``get_uniqueid_for_user``, one per
  assignment, also used in blind marking as ``Participant_1234567``), not the student number;
  the grading worksheet maps it (``Identifier`` = ``Participant 1234567``).
* **Canvas** (``app/models/content_zipper.rb``, ``get_filename`` and
  ``add_upload_submission``): ``[sortable name, 'LATE' if late, user id].join('_')`` with every
  non-word character removed and the whole lower-cased (``smithbob_late_12345``), then
  ``_<attachment id>_<file name>``; a file uploaded again under the same name gets ``-1``,
  ``-2`` ... before its extension. The user id is Canvas's own; the gradebook export maps it
  (``ID`` -> ``SIS User ID``).
* **the course's hand-in name** ``<学号>_<assignment>.ipynb`` (written by the student's 提交
  button), also with an LMS's or browser's copy counter (``-1``, `` (1)``).
* **a lecturer's pattern** (学习通, 雨课堂 and others): a regular expression with a named group
  ``id`` (and optionally ``name`` and ``time``), searched in the file name, then in each folder
  name outwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

MOODLE = re.compile(r"^(?P<name>[^_]*)_(?P<id>\d+)_assignsubmission_(?P<plugin>[A-Za-z0-9]+)_(?P<rest>.*)$", re.S)
CANVAS = re.compile(r"^(?:(?P<name>[^_]*?)_)??(?:(?P<late>late)_)?(?P<id>\d+)_(?P<file_id>\d+)_(?P<rest>.+)$",
                    re.S | re.IGNORECASE)
#: A copy counter an LMS or a browser adds before the extension: ``-1`` (Canvas), `` (1)``, ``(1)``.
COUNTER = re.compile(r"(?:-(?P<a>\d{1,3})| ?\((?P<b>\d{1,3})\))$")
#: Student ids written as folder names: letters (any script), digits, ``_``, ``-`` (no dot: a folder can
#: then never be taken for a file such as ``import_laplace.json``, nor be ``.`` or ``..``).
SAFE_ID = re.compile(r"^[\w\-]{1,64}$")


@dataclass(frozen=True)
class Identity:
    """What the names say about one file: the LMS account and the hand-in name's own claims."""

    lms: str | None = None        # "moodle", "canvas", "pattern" or None
    lms_id: str | None = None     # participant id, Canvas user id, or the pattern's id
    name: str | None = None       # the name the LMS shows
    late: bool = False
    time: float | None = None     # the pattern's time group, seconds (UTC)
    original: str = ""            # the file name the student uploaded
    own_id: str | None = None     # 学号 of a ``<学号>_<assignment>.ipynb`` name
    own_assignment: str | None = None
    counter: int = 0              # copy counter of the uploaded name (a later upload has a higher one)


def split_counter(stem: str) -> tuple[str, int]:
    """``("laplace", 1)`` for ``laplace-1`` or ``laplace (1)``; ``(stem, 0)`` otherwise."""
    match = COUNTER.search(stem)
    if not match:
        return stem, 0
    return stem[:match.start()], int(match.group("a") or match.group("b"))


def own_name(original: str, assignments) -> tuple[str | None, str | None, int]:
    """``(学号, assignment, counter)`` of a ``<学号>_<assignment>.ipynb`` name, else ``(None, None, counter)``."""
    if not original.lower().endswith(".ipynb"):
        return None, None, 0
    stem, counter = split_counter(original[:-len(".ipynb")])
    for assignment in sorted(assignments, key=len, reverse=True):  # randomized_response before response
        suffix = "_" + assignment
        if stem.endswith(suffix) and len(stem) > len(suffix):
            sid = stem[:-len(suffix)]
            if SAFE_ID.match(sid):  # the student's 提交 allows [A-Za-z0-9_-] (course/workspace.py)
                return sid, assignment, counter
    return None, None, counter


def parse_time(text: str) -> float | None:
    """Seconds (UTC) of ``20261129153000``, ``2026-11-29 15:30:00``, ``202611291530`` or ``20261129``."""
    digits = re.sub(r"\D", "", text)
    for size, fmt in ((14, "%Y%m%d%H%M%S"), (12, "%Y%m%d%H%M"), (8, "%Y%m%d")):
        if len(digits) == size:
            try:
                return datetime.strptime(digits, fmt).replace(tzinfo=timezone.utc).timestamp()
            except ValueError:
                return None
    return None


def compile_pattern(pattern: str | None) -> re.Pattern | None:
    """The lecturer's ``--pattern``, checked: it must compile and have a group ``(?P<id>...)``."""
    if not pattern:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"--pattern is not a regular expression ({exc}); "
                         "example: '(?P<id>\\d{8,12})' for a file name holding the student number") from None
    if "id" not in compiled.groupindex:
        raise ValueError("--pattern needs a named group (?P<id>...) for the student id, "
                         "e.g. '(?P<id>\\d{8,12})_(?P<name>[^_]+)'")
    return compiled


def identify(path: tuple[str, ...], assignments, pattern: re.Pattern | None = None) -> Identity:
    """What the names along ``path`` (download top to file) say about whose file it is.

    The lecturer's pattern is tried on the file name, then on its folders outwards; then
    Moodle's format the same way, then Canvas's (on the file name and on zips only). The uploaded
    name is the file's name without the LMS's prefix (a Moodle flat name, a Canvas name) or the
    file's own name.
    """
    original = path[-1]
    found: dict = {}
    parts = list(enumerate(reversed(path)))  # (0, file name), (1, its folder), ...
    # One format at a time over every name, most specific first: a Moodle folder around a file
    # whose own name happens to fit Canvas's loose shape (2024_001_laplace.ipynb) stays Moodle's.
    for depth, part in parts if pattern is not None else ():
        match = pattern.search(part)
        if match and match.group("id"):
            groups = match.groupdict()
            found = {"lms": "pattern", "lms_id": groups["id"], "name": groups.get("name"),
                     "time": parse_time(groups["time"]) if groups.get("time") else None}
            break
    for depth, part in parts if not found else ():
        match = MOODLE.match(part)
        if match:
            found = {"lms": "moodle", "lms_id": match.group("id"), "name": match.group("name") or None}
            if depth == 0 and match.group("rest"):
                original = match.group("rest")
            break
    for depth, part in parts if not found else ():
        match = CANVAS.match(part) if depth == 0 or part.lower().endswith(".zip") else None
        if match:
            found = {"lms": "canvas", "lms_id": match.group("id"), "name": match.group("name") or None,
                     "late": bool(match.group("late"))}
            if depth == 0:
                original = match.group("rest")
            break
    own, own_assignment, counter = own_name(original, assignments)
    if not own_assignment and original.lower().endswith(".ipynb"):
        counter = split_counter(original[:-len(".ipynb")])[1]
    return Identity(original=original, own_id=own, own_assignment=own_assignment, counter=counter, **found)
