"""The lecturer's roster CSV: an LMS's own export that maps its account ids to student numbers.

Read as it comes out of the LMS or out of Excel/WPS (UTF-8 with or without BOM, else GBK), with
the columns found by their header:

* Moodle's grading worksheet ("Download grading worksheet"): ``Identifier``
  (``Participant 1234567``), ``Full name``, and ``ID number`` when the site shows it;
* Canvas's gradebook export: ``Student``, ``ID`` (Canvas user id), ``SIS User ID``,
  ``SIS Login ID``, ``Section`` (its ``Points Possible`` row is skipped);
* a plain table: ``lms_id`` (or ``账号``), ``学号`` (or ``student``), ``姓名`` (or ``name``).

Headers are matched without case and spaces; Moodle sites in Chinese name ``Identifier``
``标识符`` and ``ID number`` ``学号``/``ID号``.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_ROSTER_BYTES = 16 << 20
COLUMNS = {
    "lms_id": ("identifier", "标识符", "id", "lms_id", "lmsid", "账号", "canvasid", "userid"),
    "student": ("idnumber", "id号", "学号", "sisuserid", "student_id", "studentid", "student", "学生学号"),
    "name": ("fullname", "全名", "姓名", "name", "studentname"),
    "section": ("section", "班级", "教学班"),
    "login": ("sisloginid", "email", "emailaddress", "电子邮件地址", "电子邮件"),
}


@dataclass
class Entry:
    lms_id: str | None
    student: str | None
    name: str | None = None
    section: str | None = None
    login: str | None = None
    row: dict = field(default_factory=dict)


def _key(header: str) -> str:
    return re.sub(r"[\s_\-]", "", header.strip().lower()).replace("（", "(").replace("）", ")")


def decode(data: bytes) -> str:
    """Text of a CSV saved by an LMS (UTF-8), by Excel/WPS on a Chinese Windows (GBK) or with a BOM."""
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise ValueError("the roster is neither UTF-8 nor GBK text; save it as CSV (UTF-8)")


def read_table(path: Path) -> tuple[list[str], list[dict]]:
    """Header and rows of a CSV file (size-capped, encoding detected)."""
    data = Path(path).read_bytes()
    if len(data) > MAX_ROSTER_BYTES:
        raise ValueError(f"roster {path} is larger than {MAX_ROSTER_BYTES >> 20} MiB")
    reader = csv.DictReader(io.StringIO(decode(data), newline=""))
    rows = [row for row in reader]
    return list(reader.fieldnames or []), rows


def columns(header: list[str]) -> dict[str, str]:
    """Which header holds each of ``lms_id``, ``student``, ``name``, ``section``, ``login``."""
    keys = {_key(h): h for h in header}
    found = {}
    for role, names in COLUMNS.items():
        for name in names:
            if name in keys and keys[name] not in found.values():
                found[role] = keys[name]
                break
    # Canvas: "SIS User ID" is the number (found first), and then "Student" is the name.
    if "name" not in found and "student" in keys and keys["student"] not in found.values():
        found["name"] = keys["student"]
    return found


def lms_number(text: str | None) -> str | None:
    """The account number of ``Participant 1234567`` / ``参与者 1234567`` / ``1234567``."""
    if not text:
        return None
    match = re.search(r"(\d+)\s*$", text.strip())
    return match.group(1) if match else text.strip() or None


def read_roster(path: Path) -> list[Entry]:
    """One :class:`Entry` per student row of the roster (``ValueError`` when no column fits)."""
    header, rows = read_table(path)
    cols = columns(header)
    if "lms_id" not in cols and "student" not in cols:
        raise ValueError(f"roster {path}: no column for the LMS account (Identifier, ID, lms_id) nor for the "
                         f"student number (ID number, SIS User ID, 学号); its columns are {header}")
    entries = []
    for row in rows:
        get = {role: (row.get(col) or "").strip() or None for role, col in cols.items()}
        if (get.get("name") or "").strip().lower() == "points possible":
            continue
        lms_id = lms_number(get.get("lms_id"))
        if not lms_id and not get.get("student"):
            continue
        entries.append(Entry(lms_id, get.get("student"), get.get("name"), get.get("section"), get.get("login"),
                             row))
    return entries
